//! MariaDB servers of `scripts/mariadb-lab` for the tests: started on a free port in a
//! scratch directory, stopped when dropped.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::pg_lab::free_port;
use super::s;

fn lab() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/mariadb-lab")
}

/// A lab server, stopped when dropped.
pub struct Server {
    pub dir: PathBuf,
    pub port: u16,
    start_args: Vec<String>,
    _keep: tempfile::TempDir,
}

impl Server {
    /// Starts a server with an 8 MiB buffer pool and `start_args` (given last); None
    /// (after one line saying why) when it cannot, unless DBIO_REQUIRE_PEERS=1.
    pub fn start(start_args: &[&str]) -> Option<Server> {
        let keep = tempfile::Builder::new()
            .prefix("dbio-mariadb-test-")
            .tempdir_in("/var/tmp")
            .expect("scratch");
        let srv = Server {
            dir: keep.path().join("data"),
            port: free_port(),
            start_args: start_args.iter().map(|a| a.to_string()).collect(),
            _keep: keep,
        };
        match srv.up() {
            Ok(()) => Some(srv),
            Err(why) => {
                if std::env::var("DBIO_REQUIRE_PEERS").is_ok_and(|v| v == "1") {
                    panic!("DBIO_REQUIRE_PEERS=1 but MariaDB did not start: {why}");
                }
                eprintln!("skipped: MariaDB did not start: {why}");
                None
            }
        }
    }

    pub fn up(&self) -> Result<(), String> {
        let out = Command::new(lab())
            .args(["start", "--dir", s(&self.dir)])
            .args(["--port", &self.port.to_string(), "--buffer-pool", "8M"])
            .args(&self.start_args)
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
                .to_string());
        }
        Ok(())
    }

    pub fn down(&self) {
        let _ = Command::new(lab())
            .args(["stop", "--dir", s(&self.dir)])
            .output();
    }

    /// Stopped and started again: the buffer pool empty, the counters from zero.
    pub fn restart(&self) {
        self.down();
        self.up().expect("restart");
    }

    /// The monitoring account's URL.
    pub fn url(&self) -> String {
        format!("mysql://dbio:dbio@127.0.0.1:{}/", self.port)
    }

    /// Runs the statements as root in database sbtest, in one session; its output.
    pub fn sql(&self, statements: &str) -> String {
        let out = Command::new(lab())
            .args([
                "sql",
                "--dir",
                s(&self.dir),
                "--db",
                "sbtest",
                "--",
                statements,
            ])
            .output()
            .expect("mariadb-lab sql");
        assert!(
            out.status.success(),
            "sql {statements:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.down();
    }
}
