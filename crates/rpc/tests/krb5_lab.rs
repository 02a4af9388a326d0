//! The Kerberos lab (scripts/krb5-lab: an MIT KDC and ganesha with krb5, krb5i and
//! krb5p in a network namespace) proven by an independent RPCSEC_GSS client on
//! Python's gssapi (scripts/krb5-null-client): a context per service, a NULL call
//! under each, every reply verifier checked. Skips with a note where the lab cannot
//! run (not root, tools missing) unless DBIO_REQUIRE_PEERS=1.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts")
}

fn require_peers() -> bool {
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
struct Lab(String);

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = Command::new(scripts().join("krb5-lab"))
            .args(["stop", "--name", &self.0])
            .output();
    }
}

#[test]
fn independent_client_is_accepted_under_krb5_krb5i_and_krb5p() {
    if let Some(why) = missing() {
        assert!(
            !require_peers(),
            "DBIO_REQUIRE_PEERS=1 but the Kerberos lab cannot run: {why}"
        );
        eprintln!("note: skipping the Kerberos lab test: {why}");
        return;
    }
    let t0 = Instant::now();
    let lab = Lab(format!("t{}", std::process::id()));
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
    let env = String::from_utf8(env.stdout).unwrap();
    let var = |k: &str| {
        env.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .unwrap_or_else(|| panic!("{k} missing from the lab's env:\n{env}"))
            .to_string()
    };
    let client = Command::new("ip")
        .args(["netns", "exec", &var("KRB5_NETNS")])
        .arg(scripts().join("krb5-null-client"))
        .args([&var("NFS_ADDR"), &var("NFS_PORT"), &var("NFS_SERVICE")])
        .env("KRB5_CONFIG", var("KRB5_CONFIG"))
        .env("KRB5CCNAME", var("KRB5CCNAME"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&client.stdout);
    assert!(
        client.status.success(),
        "client failed:\n{out}{}",
        String::from_utf8_lossy(&client.stderr)
    );
    for svc in ["krb5", "krb5i", "krb5p"] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("{svc}: ")))
            .unwrap_or_else(|| panic!("no line for {svc}:\n{out}"));
        assert!(
            line.contains("accepted, window 32") && line.contains("reply verifier ok"),
            "{line}"
        );
        if svc != "krb5" {
            assert!(line.contains("reply body ok"), "{line}");
        }
    }
    eprintln!("krb5 lab: {} s\n{out}", t0.elapsed().as_secs_f32());
}
