//! `dbio run --verify` over NFSv4.1 while nfs-ganesha is killed (SIGKILL) and started
//! again 3 s later: the client recovers its state (new client id and session, the
//! run's opens reclaimed in the server's grace period, or opened again without one),
//! no I/O fails, the run's events show the recovery with the time I/O waited, and
//! every block verifies, in the run's final pass and in `dbio verify` afterwards. The
//! UNSTABLE writes made before the restart are named as at risk (the write verifier
//! changed).
//! Skips without ganesha unless DBIO_REQUIRE_PEERS=1.

#[path = "../../nfs/tests/common/mod.rs"]
mod common;
mod support;

use std::time::Duration;

use serde_json::Value;
use support::run_ok;

/// Seconds the server is away.
const DOWN_S: f64 = 3.0;

/// A verified OLTP run over NFSv4.1 on `s` with the server restarted 2 s in; checks
/// it and returns the recovery event's text.
fn survives_a_restart(s: &common::Server) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let out = |n: &str| tmp.path().join(n).display().to_string();
    let url = format!("nfs://{}/export/dbio?version=4.1", s.addr);
    let run = |time: &str, json: &str, more: &[&str]| {
        let mut args = vec![
            "--target", &url, "--size", "16MiB", "--users", "2", "--time", time, "--json", json,
        ];
        args.extend_from_slice(more);
        run_ok(&args)
    };
    // The data set first, so that the restart falls in the verified run.
    run(
        "1s",
        &out("prep.json"),
        &["--workload", "single-block-read"],
    );
    let restart = std::thread::scope(|scope| {
        let killer = scope.spawn(|| {
            std::thread::sleep(Duration::from_secs(2));
            s.restart(DOWN_S);
        });
        let r = run(
            "8s",
            &out("run.json"),
            &[
                "--profile",
                "oltp",
                "--update-pct",
                "50",
                "--outstanding",
                "8",
                "--verify",
            ],
        );
        killer.join().unwrap();
        r
    });
    check(&restart);
    let events = restart["nfs"]["events"].as_array().unwrap();
    // The restart changed the server's write verifier: the run's UNSTABLE writes from
    // before it, never committed, are named as at risk (ganesha's VFS backend left them
    // in the kernel's page cache, so the verification below still finds them).
    let risk = &restart["nfs"]["unstable_at_risk"];
    assert!(risk["writes"].as_u64().unwrap_or(0) > 0, "{risk}");
    assert!(
        events.iter().any(|e| e["what"]
            .as_str()
            .unwrap_or("")
            .starts_with("write verifier changed")),
        "{events:?}"
    );
    let recovered = events
        .iter()
        .find(|e| e["what"].as_str().unwrap().starts_with("state recovered"))
        .unwrap_or_else(|| panic!("no recovery event: {events:?}"));
    // I/O waited for the server (away 3 s) and the recovery, not much longer.
    let waited = recovered["recovered_after_s"].as_f64().unwrap();
    assert!((DOWN_S * 0.9..30.0).contains(&waited), "{recovered}");
    // `dbio verify` afterwards, through a client of its own: every block consistent.
    let o = support::dbio(&["verify", &url]);
    let text =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{text}");
    recovered["what"].as_str().unwrap().to_string()
}

/// No failed I/O and a clean, complete verification.
fn check(r: &Value) {
    assert_eq!(r["failed_ios"], 0, "{}", r["nfs"]["events"]);
    let v = &r["verify"];
    assert_eq!(v["final_pass_complete"], true, "{v}");
    assert!(v["final_pass_blocks"].as_u64().unwrap() > 0, "{v}");
    for k in ["lost", "torn", "misdirected", "checksum"] {
        assert_eq!(v[k], 0, "{k}: {v}");
    }
    assert!(r["classes"].to_string().contains("write"));
}

#[test]
fn v41_run_survives_a_restart_without_grace_period() {
    let Some(s) = common::Server::start("rst41") else {
        return;
    };
    let what = survives_a_restart(&s);
    // Graceless: reclaims are refused (NFS4ERR_NO_GRACE), the opens are had again.
    assert!(
        what.contains("new client id") && what.contains("0 open(s) reclaimed"),
        "{what}"
    );
}

#[test]
fn v41_run_survives_a_restart_in_a_grace_period() {
    // A 6 s grace period after the restart (lease as long: ganesha keeps the grace at
    // least one lease).
    let Some(s) = common::Server::start_with("rstg41", &["--grace", "6", "--lease", "6"]) else {
        return;
    };
    let what = survives_a_restart(&s);
    // The run's opens (data file, redo log) were reclaimed with CLAIM_PREVIOUS.
    assert!(
        what.contains("new client id") && what.contains("2 open(s) reclaimed"),
        "{what}"
    );
}
