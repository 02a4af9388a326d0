//! dbio on the Linux kernel's NFS client, in the VM of scripts/knfs-lab
//! (Debian's kernel under QEMU, ganesha inside): NFSv3 with nconnect=1 and 4
//! (rsize and wsize 64 KiB) and NFSv4.1 (actimeo=0), one boot. Each `dbio run --warmup 0s` of 8 KiB O_DIRECT
//! reads records the kernel's views of its mount, whose READ count between
//! the window's edges is the run's reads exactly (one READ per read), with
//! one connection per nconnect; `--views` shows the kernel's last second
//! under the progress line; `doctor` warns about the single connection of
//! nconnect=1 and not of nconnect=4, about every option of a mount against
//! Oracle's (soft, rsize 16 KiB, timeo=100, actimeo=0 for a single instance)
//! and a small sunrpc slot table, and not on the good mount, where it asks
//! actimeo=0 only of RAC. A sweep of the kernel's NFSv4.1 mount against dbio's
//! NFSv4.1 client gives the verdict table and both kinds of NFS views. The
//! guest runs a copy of dbio in the lab's directory: it may not see the
//! checkout (virtme-ng hides /var/tmp). Skips where `knfs-lab check`, given
//! the run's arguments, says the lab cannot run (not x86_64, not root, ...)
//! unless DBIO_REQUIRE_PEERS=1.

mod support;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

fn script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/knfs-lab")
}

fn require_peers() -> bool {
    std::env::var("DBIO_REQUIRE_PEERS").is_ok_and(|v| v == "1")
}

/// (mount name, its options, connections expected)
const MOUNTS: [(&str, &str, usize); 3] = [
    ("k1", "vers=3,nconnect=1", 1),
    ("k4", "vers=3,nconnect=4,rsize=65536,wsize=65536", 4),
    ("v41", "vers=4.1,actimeo=0", 1),
];

/// A mount against Oracle's options for data files, for doctor only.
const BAD: &str = "bad:vers=3,soft,rsize=16384,wsize=16384,timeo=100,actimeo=0";

#[test]
fn kernel_views_count_every_read_of_the_run_on_each_mount() {
    let dir = support::scratch();
    let d = dir.path();
    let mut args = vec!["--dir".to_string(), d.display().to_string()];
    args.extend(["--budget".into(), "400".into()]);
    for (m, opts, _) in MOUNTS {
        args.extend(["--mount".into(), format!("{m}:{opts}")]);
    }
    args.extend(["--mount".into(), BAD.into()]);
    args.extend([
        "--".into(),
        "sh".into(),
        format!("{}/guest.sh", d.display()),
    ]);
    let check = Command::new(script())
        .arg("check")
        .args(&args)
        .output()
        .unwrap();
    if !check.status.success() {
        let why = String::from_utf8_lossy(&check.stdout);
        assert!(
            !require_peers(),
            "DBIO_REQUIRE_PEERS=1 but the kernel NFS lab cannot run: {why}"
        );
        eprintln!("note: skipping the kernel NFS lab test: {why}");
        return;
    }
    let dbio = d.join("dbio");
    std::fs::copy(env!("CARGO_BIN_EXE_dbio"), &dbio).unwrap();
    let dbio = dbio.display();
    // In the guest: one data set (every mount shows the same export), then per
    // mount the measured run with --views, then doctor; each step's time in
    // steps.log, for a run that goes over its budget.
    let mut guest = format!(
        "set -u\n\
         step() {{ echo \"$(date +%s) $1\" >>$KNFS_DIR/steps.log; }}\n\
         step start\n\
         {dbio} run --target $KNFS_MNT_k1/dbio --workload single-block-read --size 8MiB \
           --loops 1 >$KNFS_DIR/prep.out 2>&1 || exit 10\n\
         step prepared\n"
    );
    for (m, _, _) in MOUNTS {
        guest.push_str(&format!(
            "p=$KNFS_MNT_{m}/dbio\n\
             {dbio} run --target $p --workload single-block-read --size 8MiB --time 2s \
               --warmup 0s --users 2 --views --json $KNFS_DIR/run-{m}.json \
               >$KNFS_DIR/run-{m}.out 2>$KNFS_DIR/run-{m}.err || exit 11\n\
             step run-{m}\n\
             {dbio} doctor --target $p >$KNFS_DIR/doctor-{m}.out 2>&1\n\
             [ $? -le 1 ] || exit 12\n\
             step doctor-{m}\n"
        ));
    }
    // doctor with a parameter file (single instance, then RAC) on the good
    // mount, and on the bad one with a small slot table (set back after).
    guest.push_str(&format!(
        "printf '*.db_name=LAB\\n*.filesystemio_options=SETALL\\n' >$KNFS_DIR/single.ora\n\
         printf '*.cluster_database=true\\n*.filesystemio_options=SETALL\\n' >$KNFS_DIR/rac.ora\n\
         doc() {{ {dbio} doctor --json --target $1/dbio --init-ora $KNFS_DIR/$2.ora >$KNFS_DIR/$3.json 2>$KNFS_DIR/$3.err; [ $? -le 1 ] || exit 13; }}\n\
         doc $KNFS_MNT_k4 single doctor-good\n\
         doc $KNFS_MNT_k4 rac doctor-rac\n\
         slots=$(cat /proc/sys/sunrpc/tcp_max_slot_table_entries)\n\
         echo 16 >/proc/sys/sunrpc/tcp_max_slot_table_entries\n\
         doc $KNFS_MNT_bad single doctor-bad\n\
         echo $slots >/proc/sys/sunrpc/tcp_max_slot_table_entries\n\
         step doctor-options\n\
         {dbio} sweep --out $KNFS_DIR/sweep --users 1 --repeats 2 --time 1s --warmup 0s \
           --options '--workload single-block-read --size 8MiB' \
           --config 'knfs41=--target '$KNFS_MNT_v41/dbio \
           --config 'dnfs41=--target nfs://127.0.0.4/export/dbio?version=4.1 --conns 1' \
           >$KNFS_DIR/sweep.out 2>&1 || exit 14\n\
         step sweep\n\
         {dbio} compare $KNFS_DIR/sweep --baseline knfs41 --json $KNFS_DIR/cmp.json \
           --html $KNFS_DIR/cmp.html >$KNFS_DIR/cmp.out 2>&1 || exit 15\n\
         step compare\n\
         exit 0\n"
    ));
    std::fs::write(d.join("guest.sh"), guest).unwrap();
    let lab = || {
        Command::new(script())
            .arg("run")
            .args(&args)
            .output()
            .unwrap()
    };
    let t = Instant::now();
    let mut out = lab();
    // 124: the VM went over its budget. Under emulation on a loaded machine a boot
    // can stall; one more boot tells a stalled emulator from a run that hangs.
    if out.status.code() == Some(124) {
        let steps = std::fs::read_to_string(d.join("steps.log")).unwrap_or_default();
        eprintln!(
            "knfs-lab: over its budget after {:.0} s, booting once more; steps:\n{steps}{}",
            t.elapsed().as_secs_f64(),
            String::from_utf8_lossy(&out.stderr)
        );
        let _ = std::fs::remove_file(d.join("steps.log"));
        out = lab();
    }
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let steps = std::fs::read_to_string(d.join("steps.log")).unwrap_or_default();
    assert!(
        out.status.success(),
        "knfs-lab run failed: {log}\nsteps:\n{steps}"
    );
    eprintln!(
        "knfs-lab run: {:.0} s; steps (unix s):\n{steps}",
        t.elapsed().as_secs_f64()
    );
    for (m, opts, conns) in MOUNTS {
        let r: Value = support::json(&d.join(format!("run-{m}.json")));
        let k = &r["kernel_nfs"];
        assert!(k.is_object(), "{m}: no kernel views: {log}");
        let reads = r["ios"].as_u64().unwrap();
        // An emulated guest starved by other work on the host may read little in
        // 2 s; the count that matters is the kernel's against the run's, below.
        assert!(reads > 20, "{m}: only {reads} reads");
        let calls = |p: &str| {
            k["ops"]
                .as_array()
                .unwrap()
                .iter()
                .find(|o| o["procedure"] == p)
                .map_or(0, |o| o["calls"].as_u64().unwrap())
        };
        assert_eq!(
            calls("READ"),
            reads,
            "{m} ({opts}): kernel READs vs the run's reads"
        );
        assert_eq!(calls("WRITE"), 0, "{m}: a read-only run");
        assert_eq!(k["read_bytes"].as_u64().unwrap(), reads * 8192, "{m}");
        let xprts = k["connections"].as_array().unwrap();
        assert_eq!(xprts.len(), conns, "{m}: connections");
        let sends: u64 = xprts.iter().map(|x| x["sends"].as_u64().unwrap()).sum();
        assert!(sends >= reads, "{m}: {sends} sends for {reads} READs");
        if conns > 1 {
            assert!(
                xprts.iter().all(|x| x["sends"].as_u64().unwrap() > 0),
                "{m}: every connection carries READs: {xprts:?}"
            );
        }
        // The options asked are the mount's (actimeo=0 shows as its four parts).
        let got = k["options"].as_str().unwrap();
        for o in opts.split(',') {
            let o = o.replace("actimeo=0", "acregmax=0");
            assert!(got.split(',').any(|g| g == o), "{m}: {o} not in {got}");
        }
        // The machine's CPU over the window holds dbio's own (and the kernel
        // client's and ganesha's, in the same VM).
        let machine = &r["machine_cpu"];
        let busy = machine["user_s"].as_f64().unwrap() + machine["system_s"].as_f64().unwrap();
        let own = r["cpu"]["user_s"].as_f64().unwrap() + r["cpu"]["system_s"].as_f64().unwrap();
        assert!(
            busy > 0.0 && busy >= 0.9 * own,
            "{m}: machine {machine} against dbio's {own} s"
        );
        let per_io = machine["us_per_io"].as_f64().unwrap();
        assert!(
            (per_io - busy * 1e6 / reads as f64).abs() < 1e-6 * per_io.max(1.0),
            "{m}"
        );
        let err = std::fs::read_to_string(d.join(format!("run-{m}.err"))).unwrap();
        assert!(
            err.contains("kernel NFS 127.0.0."),
            "{m}: no live view: {err}"
        );
        assert!(!err.contains("views: none"), "{m}: {err}");
    }
    let doctor = |m: &str| std::fs::read_to_string(d.join(format!("doctor-{m}.out"))).unwrap();
    assert!(doctor("k1").contains("nfs-nconnect"), "{}", doctor("k1"));
    assert!(!doctor("k4").contains("nfs-nconnect"), "{}", doctor("k4"));
    // actimeo=0 shows as acregmax=0 and more in the kernel's options; without a
    // parameter file doctor cannot tell RAC, so it says so as info.
    assert!(
        doctor("v41")
            .contains("info[nfs-attribute-cache]: the NFS mount caches no attributes (acregmax=0)"),
        "{}",
        doctor("v41")
    );
    doctor_on_real_mounts(d);
    the_nfsv41_sweep(d);
}

/// The NFS findings of a `doctor --json` in the lab: (check, severity, found).
fn nfs_findings(d: &Path, name: &str) -> Vec<(String, String, String)> {
    let v: Value = support::json(&d.join(format!("{name}.json")));
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap().to_string();
            (s("check"), s("severity"), s("found"))
        })
        .filter(|(c, _, _)| c.starts_with("nfs-") || c.starts_with("sunrpc-"))
        .collect()
}

fn doctor_on_real_mounts(d: &Path) {
    let bad = nfs_findings(d, "doctor-bad");
    let has = |check: &str, severity: &str, found: &str| {
        bad.iter()
            .any(|(c, s, f)| c == check && s == severity && f.contains(found))
    };
    for (check, severity, found) in [
        ("nfs-hard", "error", "is soft, not hard"),
        ("nfs-timeo", "warning", "timeo=100"),
        ("nfs-transfer-size", "warning", "rsize=16384"),
        ("nfs-transfer-size", "warning", "wsize=16384"),
        ("nfs-attribute-cache", "warning", "single instance"),
        ("nfs-nconnect", "warning", "one TCP connection"),
        ("sunrpc-slots", "warning", "is 16"),
    ] {
        assert!(has(check, severity, found), "{check} {found}: {bad:?}");
    }
    // The good mount (hard, tcp, timeo=600, nconnect=4, rsize 64 KiB) of a
    // single instance: no warning; 64 KiB is over Oracle's floor, under dbio's 1 MiB.
    let good = nfs_findings(d, "doctor-good");
    assert!(
        good.iter().all(|(_, s, _)| s == "info"),
        "the good mount: {good:?}"
    );
    assert!(
        good.iter()
            .any(|(c, _, f)| c == "nfs-transfer-size" && f.contains("rsize=65536")),
        "{good:?}"
    );
    // RAC wants actimeo=0, which the good mount has not.
    let rac = nfs_findings(d, "doctor-rac");
    let warned: Vec<&str> = rac
        .iter()
        .filter(|(_, s, _)| s != "info")
        .map(|(c, _, _)| c.as_str())
        .collect();
    assert_eq!(warned, ["nfs-attribute-cache"], "{rac:?}");
}

fn the_nfsv41_sweep(d: &Path) {
    let out = std::fs::read_to_string(d.join("cmp.out")).unwrap();
    assert!(out.contains("Verdict against knfs41"), "{out}");
    let cmp: Value = support::json(&d.join("cmp.json"));
    assert_eq!(cmp["observations"], 4, "{out}");
    let iops = support::pair(&cmp, "dnfs41", "iops");
    assert!(iops["verdict"].is_string(), "{iops}");
    // Both kinds of views, each counting every READ of its two runs.
    let views = cmp["nfs_views"].as_array().unwrap();
    let view = |config: &str| {
        views
            .iter()
            .find(|v| v["config"] == config)
            .unwrap_or_else(|| panic!("no NFS views of {config}: {views:?}"))
    };
    let ios = |config: &str| -> u64 {
        (1..=2)
            .map(|r| {
                let p = d.join(format!("sweep/runs/{config}/u1-r{r}.json"));
                support::json(&p)["ios"].as_u64().unwrap()
            })
            .sum()
    };
    for (config, client, conns) in [("knfs41", "kernel mount", 1), ("dnfs41", "dbio client", 1)] {
        let t = &view(config)["traffic"];
        assert_eq!(t["client"], client, "{config}");
        assert_eq!(t["connections"], conns, "{config}");
        assert_eq!(
            t["read_calls"].as_u64().unwrap(),
            ios(config),
            "{config}: READs"
        );
    }
    let html = std::fs::read_to_string(d.join("cmp.html")).unwrap();
    assert!(html.contains("kernel mount") && html.contains("dbio client"));
}

#[test]
fn a_run_off_nfs_says_why_it_has_no_kernel_views() {
    let dir = support::scratch();
    let out = support::dbio(&[
        "run",
        "--target",
        support::s(dir.path()),
        "--workload",
        "single-block-read",
        "--size",
        "4MiB",
        "--loops",
        "10",
    ]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("kernel NFS views"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("not an NFS mount"), "{err}");
}
