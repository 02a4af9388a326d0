//! Open loop against a storage that stalls: nfs-ganesha stopped (SIGSTOP) for one
//! second in the middle of a run and continued. A closed loop stops asking during
//! the stall, so only its few I/Os in flight see it and its p99 stays near the
//! unstalled value; an open loop (`--rate`) keeps its arrivals coming, they wait in
//! the backlog and their latency, counted from the intended start, shows the stall
//! in p99. No I/O is lost: every arrival due is issued and completes.

#[path = "../../nfs/tests/common/mod.rs"]
mod common;
mod support;

use std::path::Path;
use std::time::Duration;

use support::{json, run_ok, s};

/// ganesha stopped; continued when dropped, whatever happens to the test.
struct Stopped(i32);

impl Stopped {
    fn new(pid: i32) -> Stopped {
        assert!(pid > 0, "no ganesha pid in the server's env file");
        // SAFETY: kill(2) of the test's own ganesha.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
        Stopped(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe { libc::kill(self.0, libc::SIGCONT) };
    }
}

const STALL: Duration = Duration::from_secs(1);

/// Runs `dbio run ARGS --json OUT` while ganesha stalls for [`STALL`] from
/// `after` into the run; the result.
fn stalled_run(pid: i32, after: Duration, args: &[&str], out: &Path) -> serde_json::Value {
    let mut args: Vec<&str> = args.to_vec();
    args.extend(["--json", s(out)]);
    std::thread::scope(|sc| {
        let run = sc.spawn(|| run_ok(&args));
        std::thread::sleep(after);
        {
            let _stopped = Stopped::new(pid);
            std::thread::sleep(STALL);
        }
        run.join().expect("the run's thread")
    })
}

fn p99_ms(r: &serde_json::Value) -> f64 {
    r["classes"][0]["p99_us"].as_f64().unwrap() / 1e3
}

#[test]
fn an_open_loop_shows_a_stall_that_a_closed_loop_hides() {
    let Some(server) = common::Server::start("openloop") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = |n: &str| tmp.path().join(n);
    let url = server.url("/export/ds");
    let base = [
        "--target",
        &url,
        "--size",
        "16MiB",
        "--workload",
        "single-block-read",
        "--time",
        "3s",
        "--seed",
        "5",
    ];
    // The data set first, so that the stall falls in the measured I/O.
    run_ok(&[&base[..], &["--loops", "1", "--json", s(&out("made.json"))]].concat());

    let closed = stalled_run(
        server.ganesha_pid,
        Duration::from_millis(1200),
        &base,
        &out("c.json"),
    );
    let c = &closed["classes"][0];
    let ios = c["ios"].as_u64().unwrap();
    assert!(
        c["max_us"].as_f64().unwrap() >= 0.8e6,
        "the closed loop's I/O in flight saw the stall: {c}"
    );
    // Outstanding 1: one I/O of thousands waited out the stall.
    assert!(ios > 500, "{ios} I/Os");
    assert!(
        p99_ms(&closed) < 50.0,
        "closed loop p99 {} ms",
        p99_ms(&closed)
    );
    assert!(closed.get("open_loop").is_none());

    // 400 I/Os per second: the one-second stall holds back about a third of them.
    let rate = [
        &base[..],
        &[
            "--rate",
            "400",
            "--arrivals",
            "fixed",
            "--outstanding",
            "16",
        ],
    ]
    .concat();
    let open = stalled_run(
        server.ganesha_pid,
        Duration::from_millis(1200),
        &rate,
        &out("o.json"),
    );
    let o = &open["open_loop"];
    let due = o["due"].as_u64().unwrap();
    assert!(p99_ms(&open) >= 100.0, "open loop p99 {} ms", p99_ms(&open));
    assert_eq!(open["failed_ios"], 0);
    assert_eq!(o["left"], 0, "{o}");
    assert_eq!(
        open["ios"].as_u64().unwrap(),
        due,
        "every arrival due completed: {o}"
    );
    // 3 s at 400/s, fixed arrivals: exactly 1200 due.
    assert_eq!(due, 1200);
    assert!(o["late"].as_u64().unwrap() > due / 100, "{o}");
    assert!(o["max_late_us"].as_f64().unwrap() >= 0.5e6, "{o}");
    assert_eq!(o["asked_iops"], 400.0);
    assert_eq!(open["config"]["rate"], "400");
    assert!(
        o["verdict"].as_str().unwrap().starts_with("storage "),
        "{o}"
    );
    let held = open["classes"][0]["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["lower_us"].as_u64().unwrap() >= 100_000)
        .map(|b| b["count"].as_u64().unwrap())
        .sum::<u64>();
    assert!(held > due / 100, "{held} of {due} I/Os took 100 ms or more");
}

/// The null engine keeps up with a modest rate: asked and achieved agree, per
/// class too, and the result says the storage kept pace.
#[test]
fn a_rate_the_engine_keeps_up_with_is_achieved() {
    let dir = support::scratch();
    let out = dir.path().join("r.json");
    let target = dir.path().join("ds");
    let r = run_ok(&[
        "--target",
        s(&target),
        "--engine",
        "null",
        "--rate",
        "single-block-read=3000,redo-write=1000",
        "--time",
        "2s",
        "--seed",
        "9",
        "--json",
        s(&out),
    ]);
    let o = &r["open_loop"];
    assert_eq!(o["arrivals"], "poisson");
    assert_eq!(o["asked_iops"], 4000.0);
    assert_eq!(o["behind"], false, "{o}");
    assert!(o["verdict"]
        .as_str()
        .unwrap()
        .starts_with("storage kept pace"));
    let classes: Vec<&str> = r["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["class"].as_str().unwrap())
        .collect();
    assert_eq!(classes, ["single-block-read", "redo-write"]);
    for (c, asked) in o["classes"]
        .as_array()
        .unwrap()
        .iter()
        .zip([3000.0, 1000.0])
    {
        assert_eq!(c["asked_iops"], asked);
        let achieved = c["achieved_iops"].as_f64().unwrap();
        // Poisson counts over 2 s: within 5 standard deviations.
        let sd = (asked * 2.0f64).sqrt() / 2.0;
        assert!((achieved - asked).abs() < 5.0 * sd + asked * 0.01, "{c}");
        assert_eq!(c["left"], 0);
    }
    assert_eq!(r["ios"], o["due"]);
    assert_eq!(
        json(&out)["config"]["outstanding"],
        32,
        "the open loop's default cap"
    );
}

/// A bad rate fails before anything is opened, in one line naming the bad part.
#[test]
fn bad_rates_fail_in_one_line() {
    for (args, want) in [
        (
            &["--rate", "sbr=800,bogus=3"][..],
            r#""bogus=3": unknown class"#,
        ),
        (&["--rate", "lots"][..], r#""lots": "lots" is not a number"#),
        (&["--arrivals", "fixed"][..], "--rate"),
        (
            &["--rate", "100", "--think-frequency", "2"][..],
            "think times pace a closed loop",
        ),
        (
            &["--rate", "redo=10", "--workload", "single-block-read"][..],
            "--rate gives redo-write a rate, but --workload leaves it out",
        ),
    ] {
        let out = support::dbio(&[&["run", "--engine", "null", "--time", "1s"][..], args].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
