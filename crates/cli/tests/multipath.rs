//! Multipath and failover against two nfs-ganesha instances exporting the
//! same directory, each over its own network path (scripts/nfs-multipath):
//! two rate-limited paths carry more than one, a path cut or a server
//! killed during a run costs no I/O and comes back, the data written
//! meanwhile verifies, and an oranfstab with both paths drives them both.
//! Without root or ganesha the tests print a note and skip, unless
//! DBIO_REQUIRE_PEERS=1, where they fail.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

mod support;
use support::run_ok;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/nfs-multipath")
}

fn require_peers() -> bool {
    std::env::var("DBIO_REQUIRE_PEERS").is_ok_and(|v| v == "1")
}

/// Two servers over two paths; taken down on drop.
struct Topology {
    prefix: String,
    env: HashMap<String, String>,
    _dir: tempfile::TempDir,
}

impl Topology {
    fn up(tag: &str) -> Option<Topology> {
        Topology::up_with(tag, false)
    }

    /// With `one_server`, one ganesha reachable over both paths (NFSv4.1 sessions
    /// and state reach it over either).
    fn up_with(tag: &str, one_server: bool) -> Option<Topology> {
        let prefix = format!("mp{tag}-{}", std::process::id());
        let dir = tempfile::Builder::new()
            .prefix("dbio-mp-")
            .tempdir()
            .unwrap();
        let out = Command::new(script())
            .args(["up", "--prefix", &prefix, "--dir"])
            .arg(dir.path())
            .args(one_server.then_some("--one-server"))
            .output();
        let ok = matches!(&out, Ok(o) if o.status.success());
        let mut topo = Topology {
            prefix,
            env: HashMap::new(),
            _dir: dir,
        };
        if !ok {
            let why = match &out {
                Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
                Err(e) => e.to_string(),
            };
            if require_peers() {
                panic!("DBIO_REQUIRE_PEERS=1 but the multipath servers could not start: {why}");
            }
            eprintln!("note: skipping multipath tests, servers could not start: {why}");
            return None;
        }
        let env = topo.sh_out(&["env"]);
        topo.env = env
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.trim_matches('\'').to_string()))
            .collect();
        Some(topo)
    }

    fn sh_out(&self, args: &[&str]) -> String {
        let out = Command::new(script())
            .args(args)
            .args(["--prefix", &self.prefix])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "nfs-multipath {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs `nfs-multipath ARGS` for this topology after `delay`, on another thread.
    fn later(&self, delay: Duration, args: &[&str]) -> std::thread::JoinHandle<()> {
        let (s, p) = (script(), self.prefix.clone());
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        std::thread::spawn(move || {
            std::thread::sleep(delay);
            let st = Command::new(&s)
                .args(&args)
                .args(["--prefix", &p])
                .output()
                .unwrap();
            assert!(st.status.success(), "nfs-multipath {args:?}");
        })
    }

    fn var(&self, name: &str) -> &str {
        &self.env[name]
    }

    /// Both paths (the URL names server 1 and adds server 2 with path=).
    fn url(&self) -> String {
        self.var("MP_URL").to_string()
    }

    /// Server 1 only.
    fn url_one(&self) -> String {
        format!(
            "nfs://{}/export/dbio?version=3&mountport=20048&nfsport=2049",
            self.var("MP_ADDR1")
        )
    }

    /// NFSv4.1 over both paths to the one server.
    fn url_v41(&self) -> String {
        format!(
            "nfs://{}/export/dbio?version=4.1&path={}",
            self.var("MP_ADDR1"),
            self.var("MP_ADDR2")
        )
    }

    fn data_dir(&self) -> PathBuf {
        Path::new(self.var("MP_DIR")).join("dbio")
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        let _ = Command::new(script())
            .args(["down", "--prefix", &self.prefix])
            .output();
    }
}

/// Sends per path from the channels view.
fn sends_on(r: &Value, path: u64) -> u64 {
    r["nfs"]["channels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["path"] == path)
        .map(|c| c["sends"].as_u64().unwrap())
        .sum()
}

/// Creates the data set (unshaped, so it is quick).
fn prepare(t: &Topology, json: &str) {
    run_ok(&[
        "--target",
        &t.url(),
        "--size",
        "32MiB",
        "--workload",
        "single-block-read",
        "--time",
        "1s",
        "--json",
        json,
    ]);
}

#[test]
fn two_paths_carry_nearly_twice_one() {
    let Some(t) = Topology::up("bw") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = |n: &str| tmp.path().join(n).display().to_string();
    prepare(&t, &out("prep.json"));
    // Each path limited to the same rate: the paths, not the CPUs, are the
    // bottleneck.
    t.sh_out(&["rate", "--rate", "80mbit"]);
    let read = |url: &str, json: &str| {
        run_ok(&[
            "--target",
            url,
            "--size",
            "32MiB",
            "--workload",
            "direct-read",
            "--users",
            "1",
            "--outstanding",
            "8",
            "--conns",
            "2",
            "--time",
            "6s",
            "--json",
            json,
        ])
    };
    let one = read(&t.url_one(), &out("one.json"));
    let two = read(&t.url(), &out("two.json"));
    let (m1, m2) = (one["mbps"].as_f64().unwrap(), two["mbps"].as_f64().unwrap());
    eprintln!(
        "1 path {m1:.2} MB/s, 2 paths {m2:.2} MB/s, ratio {:.2}",
        m2 / m1
    );
    assert_eq!(two["failed_ios"], 0);
    assert!(sends_on(&two, 0) > 0 && sends_on(&two, 1) > 0);
    assert!(
        m2 >= 1.8 * m1,
        "2 paths {m2:.2} MB/s vs 1 path {m1:.2} MB/s"
    );
}

/// An OLTP mix, half updates, 2 users of 8 outstanding I/Os on 2 connections per path,
/// with --verify, over `url` for `time`: its result.
fn oltp_verified(url: &str, time: &str, json: &str) -> Value {
    run_ok(&[
        "--target",
        url,
        "--size",
        "32MiB",
        "--profile",
        "oltp",
        "--update-pct",
        "50",
        "--users",
        "2",
        "--outstanding",
        "8",
        "--conns",
        "2",
        "--time",
        time,
        "--verify",
        "--json",
        json,
    ])
}

/// Runs an OLTP mix with --verify over both paths while `disrupt` runs on
/// another thread; checks no I/O failed, the path went down with requests
/// moved and came back, and every block verifies (in the run's final pass
/// and afterwards in a read-only run through the other server).
fn survives(t: &Topology, tmp: &Path, disrupt: impl FnOnce() + Send + 'static) {
    let out = |n: &str| tmp.join(n).display().to_string();
    prepare(t, &out("prep.json"));
    let d = std::thread::spawn(disrupt);
    let r = oltp_verified(&t.url(), "12s", &out("run.json"));
    d.join().unwrap();
    assert_eq!(r["failed_ios"], 0, "{}", r["nfs"]["events"]);
    let events = r["nfs"]["events"].as_array().unwrap();
    let down = events
        .iter()
        .find(|e| e["path"] == t.var("MP_ADDR2") && e["what"].as_str().unwrap().starts_with("down"))
        .unwrap_or_else(|| panic!("no down event: {events:?}"));
    assert!(down["requests_moved"].as_u64().unwrap() > 0, "{down}");
    let up = events
        .iter()
        .find(|e| e["path"] == t.var("MP_ADDR2") && e["what"] == "up")
        .unwrap_or_else(|| panic!("no up event: {events:?}"));
    let recovered = up["recovered_after_s"].as_f64().unwrap();
    assert!(recovered > 1.0 && recovered < 8.0, "{up}");
    eprintln!("events: {events:?}");
    let v = &r["verify"];
    assert!(v["final_pass_complete"].as_bool().unwrap(), "{v}");
    for k in ["lost", "torn", "misdirected", "checksum"] {
        assert_eq!(v[k], 0, "{k}: {v}");
    }
    assert!(r["classes"].to_string().contains("write"));
    // Read back afterwards through server 1 alone: a read-only run whose
    // final pass checks every block against what the failover run wrote.
    let again = run_ok(&[
        "--target",
        &t.url_one(),
        "--size",
        "32MiB",
        "--workload",
        "single-block-read",
        "--time",
        "1s",
        "--verify",
        "--json",
        &out("again.json"),
    ]);
    let v = &again["verify"];
    assert!(v["final_pass_complete"].as_bool().unwrap(), "{v}");
    assert!(v["final_pass_blocks"].as_u64().unwrap() > 0, "{v}");
    for k in ["lost", "torn", "misdirected", "checksum"] {
        assert_eq!(v[k], 0, "{k}: {v}");
    }
}

#[test]
fn path_cut_during_a_run_fails_over_and_rejoins() {
    let Some(t) = Topology::up("cut") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (s, p) = (script(), t.prefix.clone());
    survives(&t, tmp.path(), move || {
        std::thread::sleep(Duration::from_secs(3));
        let sh = |what: &str| {
            let st = Command::new(&s)
                .args([what, "2", "--prefix", &p])
                .output()
                .unwrap();
            assert!(st.status.success());
        };
        sh("cut");
        std::thread::sleep(Duration::from_secs(4));
        sh("restore");
    });
}

#[test]
fn server_killed_during_a_run_fails_over_and_rejoins() {
    let Some(t) = Topology::up("kill") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (s, p) = (script(), t.prefix.clone());
    survives(&t, tmp.path(), move || {
        std::thread::sleep(Duration::from_secs(3));
        // Killed like a crash, started again 3 s later.
        let st = Command::new(&s)
            .args(["kill", "2", "3", "--prefix", &p])
            .output()
            .unwrap();
        assert!(st.status.success());
    });
}

#[test]
fn oranfstab_with_two_paths_uses_both() {
    let Some(t) = Topology::up("ora") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let tab = tmp.path().join("oranfstab");
    std::fs::write(
        &tab,
        format!(
            "server: node\nlocal: {} path: {}\nlocal: {} path: {}\ndontroute\n\
             export: /export mount: /u02/oradata\nmanagement: 10.0.0.9\n",
            t.var("MP_LOCAL1"),
            t.var("MP_ADDR1"),
            t.var("MP_LOCAL2"),
            t.var("MP_ADDR2"),
        ),
    )
    .unwrap();
    let json = tmp.path().join("ora.json").display().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_dbio"))
        .current_dir(tmp.path())
        .args([
            "run",
            "--oranfstab",
            "./oranfstab",
            "--target",
            "/u02/oradata/dbio",
            "--size",
            "16MiB",
            "--profile",
            "oltp",
            "--time",
            "2s",
            "--json",
            &json,
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("note: ./oranfstab:6: management"),
        "{stderr}"
    );
    let r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(r["nfs"]["servers"][0]["name"], "node");
    for (path, local) in [(0, "MP_LOCAL1"), (1, "MP_LOCAL2")] {
        assert!(sends_on(&r, path) > 0, "path {path} carried no calls");
        // `local:` is bound: every channel of the path leaves from it.
        for c in r["nfs"]["channels"].as_array().unwrap() {
            if c["path"] == path {
                let addr = c["local_addr"].as_str().unwrap();
                assert!(addr.starts_with(&format!("{}:", t.var(local))), "{c}");
            }
        }
    }
    assert!(t.data_dir().join("dbio-dataset.json").is_file());
}

#[test]
fn path_down_at_the_start_joins_later() {
    let Some(t) = Topology::up("late") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("late.json").display().to_string();
    // Path 1 (the URL's host) is cut before the run: the export is mounted
    // over path 2 and path 1 starts down.
    t.sh_out(&["cut", "1"]);
    let restore = t.later(Duration::from_secs(3), &["restore", "1"]);
    let r = run_ok(&[
        "--target",
        &t.url(),
        "--size",
        "16MiB",
        "--profile",
        "oltp",
        "--outstanding",
        "8",
        "--conns",
        "2",
        "--time",
        "8s",
        "--json",
        &json,
    ]);
    restore.join().unwrap();
    assert_eq!(r["failed_ios"], 0);
    let events = r["nfs"]["events"].as_array().unwrap();
    let on_1 = |what: &str| {
        events.iter().any(|e| {
            e["path"] == t.var("MP_ADDR1") && e["what"].as_str().unwrap().starts_with(what)
        })
    };
    assert!(on_1("down") && on_1("up"), "{events:?}");
    assert!(sends_on(&r, 0) > 0 && sends_on(&r, 1) > 0);
}

/// Creates a data set over `url` on slow paths, so that it takes several seconds, with
/// path 1 cut in the middle and left cut: the metadata calls after the cut (NFSv3:
/// COMMITs, the manifest and its RENAME; NFSv4.1: OPENs, SETATTRs, COMMITs, the
/// manifest) must go over path 2. Returns the run's result.
fn path_1_cut_while_creating(t: &Topology, url: &str, json: &str) -> Value {
    t.sh_out(&["rate", "--rate", "40mbit"]);
    let cut = t.later(Duration::from_millis(1500), &["cut", "1"]);
    let r = run_ok(&[
        "--target",
        url,
        "--size",
        "48MiB",
        "--workload",
        "single-block-read",
        "--time",
        "1s",
        "--json",
        json,
    ]);
    cut.join().unwrap();
    assert_eq!(r["failed_ios"], 0);
    assert!(
        down_and_up(&r, t.var("MP_ADDR1")).0,
        "{}",
        r["nfs"]["events"]
    );
    assert!(r["ios"].as_u64().unwrap() > 0);
    t.sh_out(&["restore", "1"]);
    r
}

#[test]
fn mount_path_cut_while_creating_moves_metadata_calls() {
    let Some(t) = Topology::up("meta") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("meta.json").display().to_string();
    path_1_cut_while_creating(&t, &t.url(), &json);
}

/// Bytes the machine has received over a host-side link.
fn rx_bytes(dev: &str) -> u64 {
    std::fs::read_to_string(format!("/sys/class/net/{dev}/statistics/rx_bytes"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// The down and up events of `addr` in a result.
fn down_and_up(r: &Value, addr: &str) -> (bool, bool) {
    let events = r["nfs"]["events"].as_array().unwrap();
    let on = |what: &str| {
        events
            .iter()
            .any(|e| e["path"] == addr && e["what"].as_str().unwrap().starts_with(what))
    };
    (on("down"), on("up"))
}

#[test]
fn v41_each_path_cut_in_turn_fails_over_and_rejoins() {
    let Some(t) = Topology::up_with("v41cut", true) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = |n: &str| tmp.path().join(n).display().to_string();
    run_ok(&[
        "--target",
        &t.url_v41(),
        "--size",
        "32MiB",
        "--workload",
        "single-block-read",
        "--time",
        "1s",
        "--json",
        &out("prep.json"),
    ]);
    // Path 1 carries the session's first connection: cut it first, then path 2.
    let (s, p) = (script(), t.prefix.clone());
    let dev1 = t.var("MP_DEV1").to_string();
    let cuts = std::thread::spawn(move || {
        // The cuts start once the run's I/O flows on path 1 (its set-up moves a few
        // KiB), whenever that is: a path cut and restored before the run's I/O uses it
        // is never seen down, and with this file's other tests beside it the set-up
        // (session, opens, the data set's check) has taken from under 1 s to beyond a
        // first cut made 8-12 s in.
        let from = rx_bytes(&dev1);
        let until = std::time::Instant::now() + Duration::from_secs(30);
        while rx_bytes(&dev1).saturating_sub(from) < 8 << 20 && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(100));
        }
        let sh = |what: &str, n: &str| {
            let st = Command::new(&s)
                .args([what, n, "--prefix", &p])
                .output()
                .unwrap();
            assert!(st.status.success(), "nfs-multipath {what} {n}");
        };
        // Each cut lasts 4 s: twice the 2 s without a reply that takes a path down, so
        // a loaded machine still sees it before the path comes back.
        std::thread::sleep(Duration::from_secs(1));
        sh("cut", "1");
        std::thread::sleep(Duration::from_secs(4));
        sh("restore", "1");
        std::thread::sleep(Duration::from_secs(3));
        sh("cut", "2");
        std::thread::sleep(Duration::from_secs(4));
        sh("restore", "2");
    });
    let r = oltp_verified(&t.url_v41(), "26s", &out("run.json"));
    cuts.join().unwrap();
    assert_eq!(r["failed_ios"], 0, "{}", r["nfs"]["events"]);
    for addr in [t.var("MP_ADDR1"), t.var("MP_ADDR2")] {
        assert_eq!(
            down_and_up(&r, addr),
            (true, true),
            "{addr}: {}",
            r["nfs"]["events"]
        );
    }
    assert!(sends_on(&r, 0) > 0 && sends_on(&r, 1) > 0);
    let v = &r["verify"];
    assert!(v["final_pass_complete"].as_bool().unwrap(), "{v}");
    for k in ["lost", "torn", "misdirected", "checksum"] {
        assert_eq!(v[k], 0, "{k}: {v}");
    }
}

#[test]
fn v41_session_path_cut_while_creating_moves_metadata_calls() {
    let Some(t) = Topology::up_with("v41meta", true) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("meta.json").display().to_string();
    // Path 1 is where the session began.
    path_1_cut_while_creating(&t, &t.url_v41(), &json);
    // The data set is complete: a read-only run over path 2 alone reuses it.
    let again = run_ok(&[
        "--target",
        &format!("nfs://{}/export/dbio?version=4.1", t.var("MP_ADDR2")),
        "--size",
        "48MiB",
        "--workload",
        "single-block-read",
        "--time",
        "1s",
        "--verify",
        "--json",
        &tmp.path().join("again.json").display().to_string(),
    ]);
    assert_eq!(again["failed_ios"], 0);
    assert!(again["verify"]["final_pass_complete"].as_bool().unwrap());
}
