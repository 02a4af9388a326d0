//! The Kerberos lab (scripts/krb5-lab) for tests: started under a name of the test's
//! own, stopped however the test ends, skipped with a note where it cannot run.

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts")
}

pub fn require_peers() -> bool {
    std::env::var("DBIO_REQUIRE_PEERS").is_ok_and(|v| v == "1")
}

/// Why the lab cannot run here, if it cannot.
fn missing() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root (the lab needs a network namespace)".into());
    }
    for tool in ["ip", "krb5kdc", "kadmin.local", "kinit", "ganesha.nfsd"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            return Some(format!(
                "{tool} is missing (scripts/install-deps installs it)"
            ));
        }
    }
    let gssapi = Command::new("/usr/bin/python3")
        .args(["-c", "import gssapi"])
        .output()
        .is_ok_and(|o| o.status.success());
    (!gssapi).then(|| "python3-gssapi is missing (scripts/install-deps installs it)".into())
}

/// Stops the lab however the test ends.
pub struct Lab(String);

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = Command::new(scripts().join("krb5-lab"))
            .args(["stop", "--name", &self.0])
            .output();
    }
}

/// A started lab and its env file, or `None` (with a note) where it cannot run.
pub fn start_lab(tag: &str) -> Option<(Lab, String)> {
    if let Some(why) = missing() {
        assert!(
            !require_peers(),
            "DBIO_REQUIRE_PEERS=1 but the Kerberos lab cannot run: {why}"
        );
        eprintln!("note: skipping the Kerberos lab test: {why}");
        return None;
    }
    let lab = Lab(format!("{tag}{}", std::process::id()));
    let start = Command::new(scripts().join("krb5-lab"))
        .args(["start", "--name", &lab.0])
        .output()
        .unwrap();
    assert!(
        start.status.success(),
        "krb5-lab start: {}{}",
        String::from_utf8_lossy(&start.stdout),
        String::from_utf8_lossy(&start.stderr)
    );
    let env = Command::new(scripts().join("krb5-lab"))
        .args(["env", "--name", &lab.0])
        .output()
        .unwrap();
    Some((lab, String::from_utf8(env.stdout).unwrap()))
}

pub fn var(env: &str, k: &str) -> String {
    env.lines()
        .find_map(|l| l.strip_prefix(&format!("{k}=")))
        .unwrap_or_else(|| panic!("{k} missing from the lab's env:\n{env}"))
        .to_string()
}

/// `program` run in the lab's network namespace with its Kerberos settings, as a user
/// inside it would run it.
pub fn in_lab(env: &str, program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", &var(env, "KRB5_NETNS")])
        .arg(program)
        .env("KRB5_CONFIG", var(env, "KRB5_CONFIG"))
        .env("KRB5CCNAME", var(env, "KRB5CCNAME"));
    c
}
