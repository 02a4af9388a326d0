//! `dbio run` against a Kerberos export (scripts/krb5-lab: an MIT KDC and ganesha in a
//! network namespace): a verified run under krb5 and krb5i over NFSv3 and krb5p over
//! NFSv4.1, each connection with its own context; an export that refuses the flavour
//! asked, and a user without a ticket, each get one line saying what to do. Skips with
//! a note where the lab cannot run, unless DBIO_REQUIRE_PEERS=1.

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
    let (code, out, err) = run(&env, &format!("nfs://{addr}/krb5/x?sec=krb5i"), &[], &[]);
    assert_ne!(code, Some(0), "{out}");
    assert!(
        err.contains("export /krb5 of ")
            && err.contains("does not accept sec=krb5i: it accepts krb5"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");

    // The same over NFSv4.1: NFS4ERR_WRONGSEC, then SECINFO names what /krb5 accepts.
    let (code, out, err) = run(&env, &format!("nfs://{addr}/krb5/x?version=4.1"), &[], &[]);
    assert_ne!(code, Some(0), "{out}");
    assert!(
        err.contains("export /krb5 of ")
            && err.contains("does not accept sec=sys: it accepts krb5 "),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");

    // No ticket: what to do, in one line.
    let (code, out, err) = run(
        &env,
        &format!("nfs://{addr}/all/none?sec=krb5"),
        &[("KRB5CCNAME", "FILE:/nonexistent/dbio-cc")],
        &[],
    );
    assert_ne!(code, Some(0), "{out}");
    assert!(err.contains("no Kerberos ticket: run kinit"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}
