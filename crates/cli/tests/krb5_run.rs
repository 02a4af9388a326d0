//! `dbio run` against a Kerberos export (scripts/krb5-lab: an MIT KDC and ganesha in a
//! network namespace): a verified run under krb5 and krb5i over NFSv3 and krb5p over
//! NFSv4.1, each connection with its own context; an export that refuses the flavour
//! asked (MOUNT's list over NFSv3, SECINFO over NFSv4.1), a server principal the KDC
//! does not know, an expired ticket and a user without one each get one line saying
//! what to do; a client keytab renews the expired ticket; Ctrl-C while the KDC is
//! silent ends the run at once. Skips with a note where the lab cannot run, unless
//! DBIO_REQUIRE_PEERS=1.

#[path = "../../rpc/tests/krb5/lab.rs"]
mod lab;

use lab::{in_lab, start_lab, var};
use serde_json::Value;

fn run(
    env: &str,
    target: &str,
    extra: &[(&str, &str)],
    args: &[&str],
) -> (Option<i32>, String, String) {
    let o = in_lab(env, env!("CARGO_BIN_EXE_dbio"))
        .args(["run", "--target", target])
        .args(["--profile", "oltp", "--size", "16MiB", "--loops", "400"])
        .args(["--outstanding", "8", "--conns", "2"])
        .args(args)
        .envs(extra.iter().copied())
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A run that must fail with one line holding each of `needles`.
fn refused(env: &str, target: &str, extra: &[(&str, &str)], needles: &[&str]) {
    let (code, out, err) = run(env, target, extra, &[]);
    assert_ne!(code, Some(0), "{out}");
    for n in needles {
        assert!(err.contains(n), "{err}");
    }
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn runs_under_each_kerberos_flavour_and_says_what_an_export_accepts() {
    let Some((_lab, env)) = start_lab("r") else {
        return;
    };
    let addr = var(&env, "NFS_ADDR");
    let tmp = tempfile::tempdir().unwrap();
    for (sec, version) in [("krb5", "3"), ("krb5i", "3"), ("krb5p", "4.1")] {
        let json = tmp.path().join(format!("{sec}.json")).display().to_string();
        let target = format!("nfs://{addr}/all/{sec}?sec={sec}&version={version}");
        let (code, out, err) = run(&env, &target, &[], &["--verify", "--json", &json]);
        assert_eq!(code, Some(0), "{sec}: {out}{err}");
        let r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(r["failed_ios"], 0, "{sec}");
        for k in ["lost", "torn", "misdirected", "checksum"] {
            assert_eq!(r["verify"][k], 0, "{sec} {k}: {}", r["verify"]);
        }
        assert!(r["ios"].as_u64() > Some(0), "{sec}");
        assert_eq!(r["nfs"]["servers"][0]["sec"], sec, "{sec}");
        let channels = r["nfs"]["channels"].as_array().unwrap();
        assert!(!channels.is_empty());
        for ch in channels {
            // Its own: at least one, more only past a context's share of the window.
            let n = ch["gss_contexts"].as_u64().unwrap();
            assert!((1..=16).contains(&n), "{sec}: {ch}");
        }
        assert!(out.contains("GSS contexts"), "{sec}: {out}");
        // Each context set up is an event of its path.
        let events = r["nfs"]["events"].as_array().unwrap();
        let set_up = events
            .iter()
            .filter(|e| {
                e["what"]
                    .as_str()
                    .is_some_and(|w| w.starts_with("RPCSEC_GSS context set up, with nfs@"))
            })
            .count();
        assert!(set_up >= channels.len(), "{sec}: {events:?}");
    }

    // /krb5 accepts krb5 alone: MOUNT's list says so before any NFS call.
    refused(
        &env,
        &format!("nfs://{addr}/krb5/x?sec=krb5i"),
        &[],
        &[
            "export /krb5 of ",
            "does not accept sec=krb5i: it accepts krb5",
        ],
    );

    // The same over NFSv4.1: NFS4ERR_WRONGSEC, then SECINFO names what /krb5 accepts.
    refused(
        &env,
        &format!("nfs://{addr}/krb5/x?version=4.1"),
        &[],
        &[
            "export /krb5 of ",
            "does not accept sec=sys: it accepts krb5 ",
        ],
    );

    // A server whose principal the KDC does not know (127.0.0.2 has no name, so its
    // principal is nfs/127.0.0.2).
    refused(
        &env,
        "nfs://127.0.0.2/all/x?sec=krb5",
        &[],
        &["krb5 context with nfs@127.0.0.2: the KDC does not know this server's principal"],
    );

    // An expired ticket: one line saying so; with a client keytab the library fetches
    // a new one and the run goes on.
    let cc = tmp.path().join("short.cc").display().to_string();
    let keytab = format!("{}/user.keytab", var(&env, "KRB5_STATE"));
    let realm = var(&env, "KRB5_REALM");
    let kinit = in_lab(&env, "kinit")
        .args(["-l", "1s", "-k", "-t", &keytab, "-c", &format!("FILE:{cc}")])
        .arg(format!("dbio@{realm}"))
        .output()
        .unwrap();
    assert!(kinit.status.success(), "{kinit:?}");
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let expired = [("KRB5CCNAME", format!("FILE:{cc}"))];
    let expired: Vec<(&str, &str)> = expired.iter().map(|(k, v)| (*k, v.as_str())).collect();
    refused(
        &env,
        &format!("nfs://{addr}/all/exp?sec=krb5"),
        &expired,
        &["the Kerberos ticket has expired: run kinit again"],
    );
    let mut renewed = expired.clone();
    renewed.push(("KRB5_CLIENT_KTNAME", &keytab));
    let (code, out, err) = run(
        &env,
        &format!("nfs://{addr}/all/exp?sec=krb5"),
        &renewed,
        &[],
    );
    assert_eq!(code, Some(0), "{out}{err}");

    // No ticket: what to do, in one line.
    refused(
        &env,
        &format!("nfs://{addr}/all/none?sec=krb5"),
        &[("KRB5CCNAME", "FILE:/nonexistent/dbio-cc")],
        &["no Kerberos ticket: run kinit"],
    );

    // A KDC that does not answer (stopped) while dbio needs a service ticket: Ctrl-C
    // ends the run within the usual allowance, not after the library's KDC timeouts.
    let tgt = tmp.path().join("tgt.cc").display().to_string();
    let kinit = in_lab(&env, "kinit")
        .args(["-k", "-t", &keytab, "-c", &format!("FILE:{tgt}")])
        .arg(format!("dbio@{realm}"))
        .output()
        .unwrap();
    assert!(kinit.status.success(), "{kinit:?}");
    let kdc: i32 = var(&env, "KDC_PID").parse().unwrap();
    let _resume = Resume(kdc);
    // SAFETY: signalling a process of the lab by its pid.
    assert_eq!(unsafe { libc::kill(kdc, libc::SIGSTOP) }, 0);
    let child = in_lab(&env, env!("CARGO_BIN_EXE_dbio"))
        .args([
            "run",
            "--target",
            &format!("nfs://{addr}/all/stop?sec=krb5"),
        ])
        .args(["--size", "16MiB", "--time", "5s"])
        .env("KRB5CCNAME", format!("FILE:{tgt}"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let t0 = std::time::Instant::now();
    // SAFETY: `ip netns exec` execs dbio, so the child's pid is dbio's.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    let took = t0.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(took.as_secs_f64() < 3.0, "{took:?} after the signal: {err}");
    assert!(err.contains("interrupted"), "{err}");
}

/// Lets a stopped process go on however the test ends.
struct Resume(i32);

impl Drop for Resume {
    fn drop(&mut self) {
        // SAFETY: signalling a process of the lab by its pid.
        unsafe { libc::kill(self.0, libc::SIGCONT) };
    }
}
