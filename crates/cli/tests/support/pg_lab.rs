//! PostgreSQL servers of `scripts/pg-lab` for the tests: started on a free port in a
//! scratch directory, stopped when dropped.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{dbio, s};

pub fn lab() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg-lab")
}

/// A lab server, stopped when dropped.
pub struct Server {
    pub dir: PathBuf,
    pub port: u16,
    pub version: &'static str,
    sets: Vec<String>,
    /// More arguments of `pg-lab start` (--memory-limit, --shared-buffers).
    start_args: Vec<String>,
    _keep: tempfile::TempDir,
}

impl Server {
    /// Starts `version` with autovacuum off and `sets`; None (after one line saying
    /// why) when it cannot, unless DBIO_REQUIRE_PEERS=1.
    pub fn start(version: &'static str, sets: &[&str]) -> Option<Server> {
        Self::start_with(version, sets, &[])
    }

    /// As [`Server::start`], with more arguments of `pg-lab start` (given last, so
    /// they win).
    pub fn start_with(version: &'static str, sets: &[&str], start_args: &[&str]) -> Option<Server> {
        let keep = tempfile::Builder::new()
            .prefix("dbio-pg-test-")
            .tempdir_in("/var/tmp")
            .expect("scratch");
        // The server runs as postgres: the directory must be open to it.
        std::fs::set_permissions(
            keep.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let mut sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        sets.push("autovacuum=off".into());
        let srv = Server {
            dir: keep.path().join("data"),
            port: free_port(),
            version,
            sets,
            start_args: start_args.iter().map(|a| a.to_string()).collect(),
            _keep: keep,
        };
        match srv.up() {
            Ok(()) => Some(srv),
            Err(why) => {
                if std::env::var("DBIO_REQUIRE_PEERS").is_ok_and(|v| v == "1") {
                    panic!("DBIO_REQUIRE_PEERS=1 but PostgreSQL {version} did not start: {why}");
                }
                eprintln!("skipped: PostgreSQL {version} did not start: {why}");
                None
            }
        }
    }

    pub fn up(&self) -> Result<(), String> {
        let mut c = Command::new(lab());
        c.args(["start", "--version", self.version, "--dir", s(&self.dir)])
            .args(["--port", &self.port.to_string(), "--shared-buffers", "16MB"]);
        for set in &self.sets {
            c.args(["--set", set]);
        }
        c.args(&self.start_args);
        let out = c.output().map_err(|e| e.to_string())?;
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

    /// Stopped and started again: shared buffers empty, statistics kept.
    pub fn restart(&self) {
        self.down();
        self.up().expect("restart");
    }

    pub fn conninfo(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user=postgres dbname=postgres",
            self.port
        )
    }

    /// Runs each statement in one psql session, in order; the last one's output.
    pub fn sql(&self, statements: &[&str]) -> String {
        let mut c = Command::new(lab());
        c.args(["psql", "--dir", s(&self.dir), "--", "-At"]);
        for st in statements {
            c.args(["-c", st]);
        }
        let out = c.output().expect("psql");
        assert!(
            out.status.success(),
            "psql {statements:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    pub fn snapshot(&self, out: &Path) {
        let o = dbio(&["pg", "snapshot", &self.conninfo(), "--out", s(out)]);
        assert!(
            o.status.success(),
            "dbio pg snapshot: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.down();
    }
}

pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}
