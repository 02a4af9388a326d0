//! The pNFS lab of scripts/pnfs-lab for a test: started with the test process as its
//! owner, stopped when dropped.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use super::common;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pnfs-lab")
}

/// The lab, stopped when dropped (also when the test fails; a lab left by a test
/// that crashed is stopped by the next `start`, its owner being gone).
pub struct Lab {
    pub name: String,
    /// The hosts' addresses; host 1 is the metadata server.
    pub hosts: Vec<String>,
}

impl Lab {
    pub fn start() -> Option<Lab> {
        Lab::start_with(&[])
    }

    /// A lab started with `env` set for the script (e.g. DBIO_PNFS_DELEGATIONS=1).
    pub fn start_with(env: &[(&str, &str)]) -> Option<Lab> {
        // One lab per test: tests of one process run side by side.
        static LABS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let pid = std::process::id().to_string();
        let n = LABS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("t{pid}n{n}");
        let out = Command::new(script())
            .args(["start", "--name", &name, "--owner", &pid])
            .envs(env.iter().copied())
            .output();
        let mut lab = Lab {
            name,
            hosts: Vec::new(),
        };
        match out {
            Ok(o) if o.status.success() => {
                let env = lab.run(&["env"]);
                let hosts = env
                    .lines()
                    .find_map(|l| l.strip_prefix("PNFS_HOSTS="))
                    .expect("PNFS_HOSTS in the lab's env");
                lab.hosts = hosts
                    .trim_matches('"')
                    .split(' ')
                    .map(String::from)
                    .collect();
                assert_eq!(lab.hosts.len(), 2, "{env}");
                Some(lab)
            }
            other => {
                let why = match other {
                    Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
                    Err(e) => e.to_string(),
                };
                if common::require_peers() {
                    panic!("DBIO_REQUIRE_PEERS=1 but the pNFS lab could not start: {why}");
                }
                eprintln!("note: skipping pNFS lab tests, the lab could not start: {why}");
                None
            }
        }
    }

    /// Runs a subcommand of scripts/pnfs-lab; its standard output.
    pub fn run(&self, args: &[&str]) -> String {
        let out = Command::new(script())
            .arg(args[0])
            .args(["--name", &self.name])
            .args(&args[1..])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pnfs-lab {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The address of host `n` (1 or 2, as the script prints them).
    pub fn host(&self, n: &str) -> String {
        let i: usize = n.parse().expect("a host number");
        self.hosts[i - 1].clone()
    }

    /// The address of the host whose brick holds `file`.
    pub fn holder(&self, file: &str) -> String {
        self.host(&self.run(&["where", file]))
    }

    /// Moves `file`'s data to host `addr` unless it is there (with two hosts, a move
    /// takes it to the other one).
    pub fn place(&self, file: &str, addr: &str) {
        if self.holder(file) != addr {
            self.run(&["move", file]);
        }
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = Command::new(script())
            .args(["stop", "--name", &self.name])
            .output();
    }
}
