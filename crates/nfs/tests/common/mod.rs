//! A throw-away nfs-ganesha for one test binary, started and stopped with
//! scripts/nfs-server. Without root or ganesha the tests print a note and
//! skip, unless DBIO_REQUIRE_PEERS=1 (CI), where they fail.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Server {
    pub name: String,
    /// Address reachable from the test process (over the veth pair).
    pub addr: String,
    pub netns: String,
    /// Host side of the veth pair.
    pub host_dev: String,
    pub export_dir: PathBuf,
    /// ganesha's process id (to stop and continue it).
    pub ganesha_pid: i32,
    _dir: tempfile::TempDir,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/nfs-server")
}

pub fn require_peers() -> bool {
    std::env::var("DBIO_REQUIRE_PEERS").is_ok_and(|v| v == "1")
}

impl Server {
    /// Starts an instance named after `tag` and this process; `None` (with
    /// a note) when it cannot run here and peers are not required.
    pub fn start(tag: &str) -> Option<Server> {
        Self::start_with(tag, &[])
    }

    /// [`Server::start`] with more options of `scripts/nfs-server start` (e.g.
    /// `--grace 15`, `--lease 2`).
    pub fn start_with(tag: &str, options: &[&str]) -> Option<Server> {
        let name = format!("{tag}-{}", std::process::id());
        let dir = tempfile::Builder::new()
            .prefix("dbio-export-")
            .tempdir()
            .unwrap();
        let export_dir = dir.path().to_path_buf();
        // Readable by other users, for the permission tests.
        std::fs::set_permissions(
            &export_dir,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let out = Command::new(script())
            .args(["start", "--name", &name, "--dir"])
            .arg(&export_dir)
            .args(options)
            .output();
        let ok = matches!(&out, Ok(o) if o.status.success());
        if !ok {
            let why = match &out {
                Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
                Err(e) => e.to_string(),
            };
            if require_peers() {
                panic!("DBIO_REQUIRE_PEERS=1 but nfs-ganesha could not start: {why}");
            }
            eprintln!("note: skipping NFS tests, nfs-ganesha could not start: {why}");
            return None;
        }
        let env = Self::env(&name);
        let get = |k: &str| env.get(k).cloned().unwrap_or_default();
        Some(Server {
            addr: get("NFS_ADDR"),
            netns: get("NFS_NETNS"),
            host_dev: format!("dbnfs-{}", get("NFS_INDEX")),
            ganesha_pid: get("GANESHA_PID").parse().unwrap_or(0),
            name,
            export_dir,
            _dir: dir,
        })
    }

    fn env(name: &str) -> HashMap<String, String> {
        let out = Command::new(script())
            .args(["env", "--name", name])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// `nfs://ADDR{path}?version=3&mountport=20048&nfsport=2049`.
    pub fn url(&self, path: &str) -> String {
        format!(
            "nfs://{}{path}?version=3&mountport=20048&nfsport=2049",
            self.addr
        )
    }

    /// Kills ganesha, waits `down` seconds, starts it again (same address).
    pub fn restart(&self, down: f64) {
        let st = Command::new(script())
            .args(["restart", "--name", &self.name, "--down", &down.to_string()])
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "restart: {}",
            String::from_utf8_lossy(&st.stderr)
        );
    }

    /// Runs a shell command line, asserting it succeeds.
    pub fn sh(&self, cmd: &str) {
        let st = Command::new("sh").args(["-c", cmd]).status().unwrap();
        assert!(st.success(), "{cmd}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new(script())
            .args(["stop", "--name", &self.name])
            .output();
    }
}
