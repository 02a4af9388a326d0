//! `mpirun -n 2 dbio run`: two ranks on this machine, each on its own part
//! of the data set, one merged result. Needs Open MPI (`openmpi-bin`,
//! `libopenmpi3`; scripts/install-deps); skipped without it, unless
//! DBIO_REQUIRE_PEERS=1, where it fails.

#[path = "../../nfs/tests/common/mod.rs"]
mod nfs_server;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use dbio_stats::{Recorder, RunResult};

mod support;
use support::{s, scratch};

fn mpirun_present() -> bool {
    let found = Command::new("mpirun")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|st| st.success());
    if !found {
        if std::env::var("DBIO_REQUIRE_PEERS").is_ok_and(|v| v == "1") {
            panic!("DBIO_REQUIRE_PEERS=1 but mpirun (Open MPI) is missing");
        }
        eprintln!("note: skipping MPI tests, mpirun (Open MPI) is missing");
    }
    found
}

/// `mpirun -n RANKS dbio run ARGS`.
fn mpirun(ranks: u32, args: &[&str]) -> Command {
    mpirun_dbio(ranks, "run", args)
}

fn mpirun_dbio(ranks: u32, command: &str, args: &[&str]) -> Command {
    let mut c = Command::new("mpirun");
    c.args(["--allow-run-as-root", "--oversubscribe", "-n"])
        .arg(ranks.to_string())
        .arg(env!("CARGO_BIN_EXE_dbio"))
        .arg(command)
        .args(args);
    c
}

fn result(path: &Path) -> RunResult {
    serde_json::from_slice(&std::fs::read(path).expect("merged result")).expect("a run result")
}

fn show(out: &Output) -> String {
    format!(
        "exit {:?}\n{}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn two_ranks_merge_into_one_result() {
    ranks_merge_into_one_result(2, "64MiB");
}

#[test]
fn four_ranks_merge_into_one_result() {
    ranks_merge_into_one_result(4, "16MiB");
}

fn ranks_merge_into_one_result(ranks: u32, size: &str) {
    if !mpirun_present() {
        return;
    }
    let dir = scratch();
    let target = dir.path().join("data");
    let json = dir.path().join("all.json");
    let out = mpirun(
        ranks,
        &[
            "--target",
            s(&target),
            "--workload",
            "single-block-read",
            "--size",
            size,
            "--users",
            "2",
            "--time",
            "1s",
            "--json",
            s(&json),
        ],
    )
    .output()
    .expect("run mpirun");
    assert!(out.status.success(), "{}", show(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Only rank 0 prints the report.
    assert_eq!(stdout.matches("dbio run:").count(), 1, "{stdout}");

    let r = result(&json);
    assert!(!r.interrupted);
    assert_eq!(r.ranks.len(), ranks as usize, "every rank listed");
    assert_eq!(
        r.ranks.iter().map(|k| k.rank).collect::<Vec<_>>(),
        (0..ranks).collect::<Vec<_>>()
    );
    assert!(r.ranks.iter().all(|k| k.ios > 0 && k.users == 2));
    assert_eq!(r.config.users, 2 * ranks, "--users is per rank");
    assert_eq!(r.labels.get("ranks"), Some(&ranks.to_string()));
    // The merged count is the sum of the ranks' counts.
    assert_eq!(r.ios, r.ranks.iter().map(|k| k.ios).sum::<u64>());
    // The merged percentiles are those of the merged histogram.
    let raw = r.raw.as_deref().expect("merged raw recorder");
    assert_eq!(raw.ios(), r.ios);
    let rec = Recorder::from_raw(raw).unwrap();
    let (classes, _, _) = rec.finish(Duration::from_secs_f64(r.elapsed_s));
    assert_eq!(classes.len(), r.classes.len());
    for (want, got) in classes.iter().zip(&r.classes) {
        assert_eq!(want.ios, got.ios);
        for (a, b) in [
            (want.p50_us, got.p50_us),
            (want.p90_us, got.p90_us),
            (want.p99_us, got.p99_us),
            (want.p999_us, got.p999_us),
            (want.max_us, got.max_us),
        ] {
            assert_eq!(a, b, "{}", got.class);
        }
    }
    // Each rank has its own data set.
    for rank in 0..ranks as usize {
        let part = target.join(format!("rank-{rank}"));
        assert!(part.join("dbio-dataset.json").is_file(), "{part:?}");
        assert!(part.join("dbio-data-01.dbf").is_file(), "{part:?}");
        assert_eq!(r.ranks[rank].target, part.display().to_string());
    }
    assert_eq!(r.config.target, target.display().to_string());
}

#[test]
fn a_stopped_launcher_still_writes_the_merged_result() {
    if !mpirun_present() {
        return;
    }
    let dir = scratch();
    let target = dir.path().join("data");
    let json = dir.path().join("all.json");
    let child = mpirun(
        2,
        &[
            "--target",
            s(&target),
            "--workload",
            "single-block-read",
            "--size",
            "16MiB",
            "--time",
            "20s",
            "--json",
            s(&json),
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("start mpirun");
    std::thread::sleep(Duration::from_millis(2500));
    let t0 = Instant::now();
    // SAFETY: kill(2) of our own child, the launcher; it passes the signal on.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().expect("mpirun ends");
    assert!(t0.elapsed() < Duration::from_secs(10), "{}", show(&out));
    let r = result(&json);
    assert!(r.interrupted, "{}", show(&out));
    assert_eq!(r.ranks.len(), 2, "{}", show(&out));
    assert!(r.elapsed_s < 15.0);
    assert_eq!(r.ios, r.ranks.iter().map(|k| k.ios).sum::<u64>());
}

#[test]
fn two_ranks_over_nfs_merge_their_views() {
    if !mpirun_present() {
        return;
    }
    let Some(server) = nfs_server::Server::start("mpi") else {
        return;
    };
    let dir = scratch();
    let json = dir.path().join("nfs.json");
    // The ranks create the missing parent directory at the same time.
    let url = server.url("/export/dbio");
    let out = mpirun(
        2,
        &[
            "--target",
            &url,
            "--workload",
            "single-block-read",
            "--size",
            "8MiB",
            "--conns",
            "1",
            "--time",
            "1s",
            "--json",
            s(&json),
        ],
    )
    .output()
    .expect("run mpirun");
    assert!(out.status.success(), "{}", show(&out));
    let r = result(&json);
    assert_eq!(r.config.engine, "nfs");
    assert_eq!(r.ranks.len(), 2);
    assert_eq!(r.ios, r.ranks.iter().map(|k| k.ios).sum::<u64>());
    let nfs = r.nfs.as_deref().expect("dNFS views");
    assert_eq!(nfs.channels.len(), 2, "one channel per rank");
    let reads: u64 = nfs
        .stats
        .calls
        .iter()
        .filter(|c| c.procedure == "READ")
        .map(|c| c.calls)
        .sum();
    assert!(reads >= r.ios, "{reads} READs for {} I/Os", r.ios);
    for rank in 0..2 {
        let part = server.export_dir.join("dbio").join(format!("rank-{rank}"));
        assert!(part.join("dbio-dataset.json").is_file(), "{part:?}");
    }
}

#[test]
fn two_ranks_calibrate_in_step() {
    if !mpirun_present() {
        return;
    }
    let dir = scratch();
    let target = dir.path().join("data");
    let json = dir.path().join("cal.json");
    let out = mpirun_dbio(
        2,
        "calibrate",
        &[
            "--target",
            s(&target),
            "--size",
            "16MiB",
            "--max-outstanding",
            "4",
            "--time",
            "4s",
            "--json",
            s(&json),
        ],
    )
    .output()
    .expect("run mpirun");
    assert!(out.status.success(), "{}", show(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.matches("dbio calibrate:").count(), 1, "{stdout}");
    let r: serde_json::Value = support::json(&json);
    assert_eq!(r["labels"]["ranks"], "2");
    assert_eq!(r["target"], target.display().to_string());
    // The outstanding counts of the curve are the two ranks' summed: each
    // ramps 1, 2, 4.
    let levels: Vec<u64> = r["iops_curve"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["outstanding"].as_u64().unwrap())
        .collect();
    assert!(!levels.is_empty());
    assert_eq!(levels, [2, 4, 8][..levels.len()].to_vec(), "{r}");
    assert!(r["max_iops"].as_f64().unwrap() > 0.0);
    for rank in 0..2 {
        assert!(target
            .join(format!("rank-{rank}/dbio-dataset.json"))
            .is_file());
    }
}

/// Two "hosts" (network namespaces with host names of their own, joined by
/// a veth pair; scripts/mpi-hosts); taken down on drop.
struct Hosts {
    prefix: String,
    net: u32,
}

impl Hosts {
    fn script() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/mpi-hosts")
    }

    fn up() -> Option<Hosts> {
        let pid = std::process::id();
        let hosts = Hosts {
            prefix: format!("dbmh{}", pid % 100_000),
            net: 20 + pid % 200,
        };
        let out = Command::new(Self::script())
            .args(["up", "--prefix", &hosts.prefix, "--net"])
            .arg(hosts.net.to_string())
            .output();
        match out {
            Ok(o) if o.status.success() => Some(hosts),
            other => {
                let why = match other {
                    Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
                    Err(e) => e.to_string(),
                };
                if std::env::var("DBIO_REQUIRE_PEERS").is_ok_and(|v| v == "1") {
                    panic!("DBIO_REQUIRE_PEERS=1 but the two MPI hosts could not be made: {why}");
                }
                eprintln!("note: skipping the two-host MPI test: {why}");
                None
            }
        }
    }

    /// `mpirun ARGS` started on hosta.
    fn mpirun(&self, args: &[&str]) -> Output {
        Command::new(Self::script())
            .args(["run", "--prefix", &self.prefix, "--net"])
            .arg(self.net.to_string())
            .arg("--")
            .args(args)
            .output()
            .expect("run mpirun on hosta")
    }

    fn addr(&self, host: u32) -> String {
        format!("10.250.{}.{host}", self.net)
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        let _ = Command::new(Self::script())
            .args(["down", "--prefix", &self.prefix])
            .output();
    }
}

#[test]
fn ranks_on_two_hosts_merge_into_one_result() {
    if !mpirun_present() {
        return;
    }
    let Some(hosts) = Hosts::up() else {
        return;
    };
    let dir = scratch();
    let target = dir.path().join("data");
    let json = dir.path().join("hosts.json");
    let host_list = format!("{}:2,{}:2", hosts.addr(1), hosts.addr(2));
    let out = hosts.mpirun(&[
        "-n",
        "4",
        "--host",
        &host_list,
        env!("CARGO_BIN_EXE_dbio"),
        "run",
        "--target",
        s(&target),
        "--workload",
        "single-block-read",
        "--size",
        "16MiB",
        "--time",
        "1s",
        "--json",
        s(&json),
    ]);
    assert!(out.status.success(), "{}", show(&out));
    let r = result(&json);
    let on: Vec<&str> = r.ranks.iter().map(|k| k.host.as_str()).collect();
    assert_eq!(on, ["hosta", "hosta", "hostb", "hostb"]);
    assert_eq!(r.ios, r.ranks.iter().map(|k| k.ios).sum::<u64>());
    assert!(r.ranks.iter().all(|k| k.ios > 0));
    // The hosts differ, so the merged result carries no host label.
    assert!(!r.labels.contains_key("host"));
}

#[test]
fn a_sweep_runs_each_run_through_mpirun() {
    if !mpirun_present() {
        return;
    }
    let dir = scratch();
    let out = dir.path().join("sweep");
    let opts = format!(
        "--target {} --size 64MiB --workload single-block-read",
        s(&dir.path().join("ds"))
    );
    let o = Command::new(env!("CARGO_BIN_EXE_dbio"))
        .args([
            "sweep",
            "--out",
            s(&out),
            "--users",
            "1",
            "--repeats",
            "1",
            "--time",
            "300ms",
        ])
        .args([
            "--launcher",
            "mpirun --allow-run-as-root --oversubscribe -n 2",
        ])
        .args([
            "--options",
            &opts,
            "--config",
            "q1=--outstanding 1",
            "--config",
            "q4=--outstanding 4",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    for config in ["q1", "q4"] {
        let r = result(&out.join(format!("runs/{config}/u1-r1.json")));
        // One merged result of two ranks, labelled by the sweep.
        assert_eq!(r.ranks.len(), 2, "{config}");
        assert_eq!(r.ios, r.ranks.iter().map(|k| k.ios).sum::<u64>());
        assert_eq!(r.labels.get("config").map(String::as_str), Some(config));
    }
    // Under mpirun itself, a sweep says how to do it instead.
    let o = mpirun_dbio(
        1,
        "sweep",
        &[
            "--out",
            s(&dir.path().join("x")),
            "--config",
            "a=--outstanding 1",
        ],
    )
    .output()
    .unwrap();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--launcher"),
        "{}",
        show(&o)
    );
}
