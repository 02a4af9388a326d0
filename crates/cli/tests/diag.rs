//! Diagnostics on real file systems made on loop devices by the tests:
//! device statistics of a run agree with the run's own I/O counts.

mod loopfs;
mod support;

use loopfs::{can_make, LoopFs};
use support::{run_ok, s};

/// A random-read run on ext4 on a loop device: the loop device's read
/// requests over the run agree with the run's I/O count. Each 8 KiB
/// O_DIRECT read is one request to the device; what the file system adds
/// (metadata reads, none expected with the extent tree cached) stays within
/// 1% + 16 requests.
#[test]
fn device_reads_of_a_run_agree_with_its_io_count() {
    if !can_make("ext4") {
        return;
    }
    let fs = LoopFs::new("ext4", 256);
    let target = fs.mnt().join("ds");
    let out = fs.mnt().join("run.json");
    let r = run_ok(&[
        "--target",
        s(&target),
        "--size",
        "64MiB",
        "--workload",
        "single-block-read",
        "--users",
        "2",
        "--outstanding",
        "4",
        "--time",
        "3s",
        "--json",
        s(&out),
    ]);
    let ios = r["ios"].as_u64().unwrap();
    assert!(ios > 100, "too few I/Os to compare: {ios}");
    let devices = r["devices"]["devices"].as_array().expect("devices section");
    let dev = devices
        .iter()
        .find(|d| d["name"] == fs.name().as_str())
        .unwrap_or_else(|| panic!("{} not among {devices:?}", fs.name()));
    assert_eq!(dev["role"], "file system");
    let reads = dev["total"]["reads"].as_u64().unwrap();
    let bytes = dev["total"]["read_bytes"].as_u64().unwrap();
    let slack = ios / 100 + 16;
    eprintln!(
        "run: {ios} I/Os; {}: {reads} read requests, {bytes} bytes",
        fs.name()
    );
    assert!(
        reads >= ios && reads <= ios + slack,
        "device reads {reads} vs run I/Os {ios}"
    );
    assert!(bytes >= ios * 8192 && bytes <= (ios + slack) * 8192);
    // Sizes as issued: every read in the 8 KiB bucket; as the device saw
    // them: 8 KiB per request on average.
    let sizes = r["classes"][0]["sizes"].as_array().expect("sizes");
    assert_eq!(sizes.len(), 1, "{sizes:?}");
    assert_eq!(sizes[0]["lower_bytes"], 8192);
    assert_eq!(sizes[0]["count"].as_u64(), Some(ios));
    let rareq = dev["total"]["rareq_kib"].as_f64().unwrap();
    assert!((rareq - 8.0).abs() < 0.5, "rareq-sz {rareq} KiB");
    let samples = dev["samples"].as_array().unwrap();
    assert!(
        (2..=5).contains(&samples.len()),
        "{} samples",
        samples.len()
    );
    let cpu = r["devices"]["cpu"].as_array().unwrap();
    assert!(!cpu.is_empty());
    // The loop device's backing file lives on another device, listed after it.
    assert!(devices.iter().any(|d| d["role"] == "loop backing file"));
}

/// `--page-cache`: buffered reads through a page cache of 16 MiB over a data set of
/// 384 MiB go to the device as the run issued them (misses, not hits of the pages the
/// data set was written through), the cache check judges against that page cache,
/// and the memory cgroup dbio made is gone after the run.
#[test]
fn a_run_through_a_small_page_cache_reads_from_the_device() {
    let memcg = std::path::Path::new("/sys/fs/cgroup/memory");
    if !can_make("ext4") || !memcg.join("cgroup.procs").exists() {
        eprintln!("skipped: needs loop devices and cgroup v1's memory hierarchy");
        return;
    }
    let fs = LoopFs::new("ext4", 512);
    let target = fs.mnt().join("ds");
    let out = fs.mnt().join("run.json");
    let r = run_ok(&[
        "--target",
        s(&target),
        "--size",
        "384MiB",
        "--page-cache",
        "16MiB",
        "--workload",
        "single-block-read",
        "--engine",
        "psync",
        "--users",
        "2",
        "--time",
        "3s",
        "--json",
        s(&out),
    ]);
    let ios = r["ios"].as_u64().unwrap();
    assert!(ios > 100, "too few I/Os to compare: {ios}");
    assert_eq!(r["config"]["direct"], false, "buffered: {}", r["config"]);
    assert_eq!(r["cache"]["memory_bytes"], 16 << 20, "{}", r["cache"]);
    assert_eq!(r["cache"]["verdict"], "unlikely", "{}", r["cache"]);
    let dev = r["devices"]["devices"]
        .as_array()
        .expect("devices section")
        .iter()
        .find(|d| d["name"] == fs.name().as_str())
        .expect("the loop device")
        .clone();
    let reads = dev["total"]["reads"].as_u64().unwrap();
    let rareq = dev["total"]["rareq_kib"].as_f64().unwrap();
    eprintln!(
        "run: {ios} reads; {}: {reads} read requests of {rareq:.1} KiB",
        fs.name()
    );
    // A 16 MiB cache over 384 MiB serves about 4% of random reads; without the
    // limit the data set, written through the cache a moment before, serves them all.
    assert!(
        reads * 100 >= ios * 85,
        "device reads {reads} vs run reads {ios}"
    );
    assert!(
        reads <= ios + ios / 100 + 16,
        "device reads {reads} vs run reads {ios}"
    );
    assert!(
        (rareq - 8.0).abs() < 1.0,
        "rareq-sz {rareq} KiB: no read-ahead"
    );
    let left: Vec<_> = std::fs::read_dir(memcg)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("dbio-page-cache-"))
        .collect();
    assert!(left.is_empty(), "cgroups left behind: {left:?}");
}

/// A small PRNG (xorshift) for offsets.
fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Writes `mib` MiB sequentially, then `overwrites` random 8 KiB blocks,
/// syncing every 64 writes; the file is made empty first with `nocow`
/// (chattr +C must be set while the file is empty).
fn write_file(path: &std::path::Path, mib: u64, overwrites: u32, nocow: bool, seed: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::create(path).unwrap();
    if nocow {
        let o = std::process::Command::new("chattr")
            .arg("+C")
            .arg(path)
            .output()
            .expect("chattr");
        assert!(o.status.success(), "chattr +C: {o:?}");
    }
    let chunk = vec![0x5au8; 1 << 20];
    for i in 0..mib {
        f.write_all_at(&chunk, i << 20).unwrap();
    }
    f.sync_all().unwrap();
    let blocks = (mib << 20) / 8192;
    let mut x = seed | 1;
    let block = vec![0xa5u8; 8192];
    for i in 0..overwrites {
        let b = next(&mut x) % blocks;
        f.write_all_at(&block, b * 8192).unwrap();
        if i % 64 == 63 {
            f.sync_data().unwrap();
        }
    }
    f.sync_all().unwrap();
}

/// `filefrag -v FILE`: (extent lines, "N extents found").
fn filefrag(path: &std::path::Path) -> (u64, u64) {
    let o = std::process::Command::new("filefrag")
        .arg("-v")
        .arg(path)
        .output()
        .expect("filefrag");
    assert!(o.status.success(), "filefrag: {o:?}");
    let text = String::from_utf8_lossy(&o.stdout);
    let lines = text
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            l.split(':')
                .next()
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        })
        .count() as u64;
    let found = text
        .lines()
        .find_map(|l| {
            l.strip_suffix(" extents found")
                .or(l.strip_suffix(" extent found"))
        })
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("N extents found");
    (lines, found)
}

fn frag_json(paths: &[&std::path::Path]) -> serde_json::Value {
    let mut args = vec!["frag", "--json"];
    args.extend(paths.iter().map(|p| s(p)));
    let o = support::dbio(&args);
    assert!(o.status.success(), "dbio frag: {o:?}");
    serde_json::from_slice(&o.stdout).expect("frag JSON")
}

/// `dbio frag` counts what `filefrag -v` counts on the same files: one
/// written in one go, one with random 8 KiB overwrites, one with holes.
fn frag_agrees_with_filefrag(fs_type: &str, size_mib: u64) {
    if !can_make(fs_type) {
        return;
    }
    let fs = LoopFs::new(fs_type, size_mib);
    let dir = fs.mnt().join("files");
    std::fs::create_dir(&dir).unwrap();
    write_file(&dir.join("a-sequential"), 16, 0, false, 1);
    write_file(&dir.join("b-overwritten"), 16, 1500, false, 2);
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::File::create(dir.join("c-holes")).unwrap();
        for i in 0..40u64 {
            f.write_all_at(&[1u8; 4096], i * 65536).unwrap();
        }
        f.sync_all().unwrap();
    }
    let r = frag_json(&[&dir]);
    let files = r["files"].as_array().unwrap();
    assert_eq!(files.len(), 3);
    for f in files {
        let path = std::path::PathBuf::from(f["path"].as_str().unwrap());
        let (lines, found) = filefrag(&path);
        let (ext, frags) = (
            f["extents"].as_u64().unwrap(),
            f["fragments"].as_u64().unwrap(),
        );
        eprintln!(
            "{fs_type} {}: dbio extents {ext} fragments {frags}; filefrag -v lines {lines} found {found}",
            path.file_name().unwrap().to_string_lossy()
        );
        assert_eq!(ext, lines, "{}", path.display());
        assert_eq!(frags, found, "{}", path.display());
    }
    let fsys = &r["filesystems"][0];
    assert_eq!(fsys["fs_type"], fs_type);
    assert_eq!(fsys["files"], 3);
    let fill = fsys["fill_pct"].as_f64().unwrap();
    assert!(fill > 0.0 && fill < 100.0, "{fill}");
}

#[test]
fn frag_agrees_with_filefrag_on_ext4() {
    frag_agrees_with_filefrag("ext4", 128);
}

#[test]
fn frag_agrees_with_filefrag_on_xfs() {
    frag_agrees_with_filefrag("xfs", 320);
}

#[test]
fn frag_agrees_with_filefrag_on_btrfs() {
    frag_agrees_with_filefrag("btrfs", 256);
}

/// On btrfs, random 8 KiB overwrites make many extents of a file that
/// copies on write, few of one with chattr +C.
#[test]
fn btrfs_overwrites_fragment_without_nocow() {
    if !can_make("btrfs") {
        return;
    }
    let fs = LoopFs::new("btrfs", 256);
    let cow = fs.mnt().join("cow.dbf");
    let nocow = fs.mnt().join("nocow.dbf");
    write_file(&cow, 32, 3000, false, 3);
    write_file(&nocow, 32, 3000, true, 3);
    let r = frag_json(&[&cow, &nocow]);
    let a = r["files"][0]["fragments"].as_u64().unwrap();
    let b = r["files"][1]["fragments"].as_u64().unwrap();
    eprintln!(
        "btrfs after 3,000 random 8 KiB overwrites of 32 MiB: copy on write {a} fragments, +C {b}"
    );
    assert!(a >= 1000, "copy-on-write file: {a} fragments");
    assert!(b <= 10, "+C file: {b} fragments");
    assert_eq!(r["fragmented"], serde_json::json!([s(&cow)]));
    let o = support::dbio(&["frag", s(&fs.mnt())]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("copy on write"), "{text}");
    assert!(text.contains("verdict: fragmented: 1 of 2 files"), "{text}");
}

/// `dbio frag` of a data set dbio made: its manifest and verify map are left
/// out, files under 1 GiB get no per-GiB figure (a 64 MiB file in one piece
/// is not "16 per GiB"), and a fresh data set on ext4 is ok.
#[test]
fn frag_of_a_data_set_leaves_out_its_side_files_and_gives_a_verdict() {
    if !can_make("ext4") {
        return;
    }
    let fs = LoopFs::new("ext4", 160);
    let ds = fs.mnt().join("ds");
    run_ok(&[
        "--target",
        s(&ds),
        "--size",
        "64MiB",
        "--time",
        "200ms",
        "--verify",
        "--json",
        s(&fs.mnt().join("run.json")),
    ]);
    let r = frag_json(&[&ds]);
    let left: Vec<&str> = r["left_out"]
        .as_array()
        .expect("left_out")
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left.iter().any(|p| p.ends_with("/dbio-dataset.json")));
    assert!(left.iter().any(|p| p.ends_with("/dbio-verify.map")));
    let files = r["files"].as_array().unwrap();
    assert!(!files.is_empty());
    for f in files {
        let path = f["path"].as_str().unwrap();
        assert!(path.ends_with(".dbf") || path.ends_with(".log"), "{path}");
        assert!(f.get("fragments_per_gib").is_none(), "{f}");
        assert_eq!(f["fragmented"], false, "{f}");
    }
    assert_eq!(r["fragmented"], serde_json::json!([]));
    let o = support::dbio(&["frag", s(&ds)]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("verdict: ok: none of"), "{text}");
    assert!(
        text.contains("left out (a data set's manifest or verify map"),
        "{text}"
    );
    assert!(
        !text.contains("1810694") && !text.contains("16.0"),
        "{text}"
    );
}

/// `dbio doctor` with its exit code and JSON findings' checks.
fn doctor(args: &[&str]) -> (i32, Vec<String>, String) {
    let mut a = vec!["doctor", "--json"];
    a.extend_from_slice(args);
    let o = support::dbio(&a);
    let code = o.status.code().unwrap_or(-1);
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("doctor JSON: {e}: {o:?}"));
    let checks = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["check"].as_str().unwrap().to_string())
        .collect();
    (
        code,
        checks,
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// A data set on btrfs without +C is flagged, and the file system filled
/// above 80% is flagged too; the lines name the fix.
#[test]
fn doctor_flags_btrfs_data_files_without_nocow_and_a_full_file_system() {
    if !can_make("btrfs") {
        return;
    }
    let fs = LoopFs::new("btrfs", 256);
    let dir = fs.mnt().join("ds");
    std::fs::create_dir(&dir).unwrap();
    write_file(&dir.join("dbio-data-01.dbf"), 16, 0, false, 4);
    write_file(&dir.join("dbio-redo-01.log"), 4, 0, false, 5);
    let (code, checks, text) = doctor(&["--target", s(&dir)]);
    assert_eq!(code, 1, "{text}");
    assert!(checks.contains(&"cow-data-files".to_string()), "{text}");
    assert!(checks.contains(&"data-redo-same-fs".to_string()), "{text}");
    assert!(!checks.contains(&"cow-fill".to_string()), "{text}");
    // Fill it past 80% with a filler file (bounded: at most 256 MiB).
    {
        use std::io::Write;
        let mut f = std::fs::File::create(fs.mnt().join("filler")).unwrap();
        let chunk = vec![0x11u8; 1 << 20];
        for _ in 0..256 {
            if f.write_all(&chunk).is_err() {
                break;
            }
            if df_fill(&fs.mnt()).unwrap_or(0.0) > 85.0 {
                break;
            }
        }
        let _ = f.sync_all();
    }
    let (code, checks, text) = doctor(&["--target", s(&dir)]);
    assert_eq!(code, 1);
    assert!(checks.contains(&"cow-fill".to_string()), "{text}");
    let o = support::dbio(&["doctor", "--target", s(&dir)]);
    let lines = String::from_utf8_lossy(&o.stdout);
    assert!(lines.contains("warning[cow-data-files]"), "{lines}");
    assert!(lines.contains("Fix: chattr +C"), "{lines}");
}

/// Fill level of the file system at `p` as `df` gives it.
fn df_fill(p: &std::path::Path) -> Option<f64> {
    let o = std::process::Command::new("df")
        .args(["--output=pcent"])
        .arg(p)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&o.stdout);
    text.lines()
        .nth(1)?
        .trim()
        .trim_end_matches('%')
        .parse()
        .ok()
}

/// A clean ext4 data set with a good parameter file: exit 0; the same with
/// parallel_max_servers=80 on 2 cores and filesystemio_options unset: exit 1.
#[test]
fn doctor_is_clean_where_nothing_is_wrong_and_reads_init_ora() {
    if !can_make("ext4") {
        return;
    }
    let fs = LoopFs::new("ext4", 128);
    let dir = fs.mnt().join("ds");
    std::fs::create_dir(&dir).unwrap();
    write_file(&dir.join("dbio-data-01.dbf"), 16, 0, false, 6);
    let good = fs.mnt().join("good.ora");
    std::fs::write(
        &good,
        "*.filesystemio_options='SETALL'\n*.parallel_max_servers=4\n",
    )
    .unwrap();
    let (code, checks, text) =
        doctor(&["--target", s(&dir), "--init-ora", s(&good), "--cores", "2"]);
    assert_eq!(code, 0, "{text}");
    assert!(checks.is_empty(), "{text}");
    let o = support::dbio(&["doctor", "--target", s(&dir)]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("no problems found"), "{text}");
    // Which checks ran: a count, and with --verbose one line each.
    let v: serde_json::Value =
        serde_json::from_slice(&support::dbio(&["doctor", "--json", "--target", s(&dir)]).stdout)
            .unwrap();
    let ran = v["checks"].as_array().unwrap().len();
    assert_eq!(v["passed"].as_array().unwrap().len(), ran, "{v}");
    assert!(ran >= 3, "{v}");
    assert!(
        text.contains(&format!("{ran} of {ran} checks passed")),
        "{text}"
    );
    let o = support::dbio(&["doctor", "--verbose", "--target", s(&dir)]);
    let verbose = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        verbose.lines().filter(|l| l.starts_with("ok[")).count(),
        ran
    );
    assert!(verbose.contains("ok[odirect-refused]"), "{verbose}");
    assert!(verbose.contains("ok[fragmented-data-files]"), "{verbose}");
    let bad = fs.mnt().join("initORCL.ora");
    std::fs::write(&bad, "# from a 19c pfile\nORCL.parallel_max_servers=80\n").unwrap();
    let (code, checks, text) =
        doctor(&["--target", s(&dir), "--init-ora", s(&bad), "--cores", "2"]);
    assert_eq!(code, 1, "{text}");
    assert_eq!(
        checks,
        ["filesystemio_options", "parallel_max_servers"],
        "{text}"
    );
    assert!(text.contains("80 on 2 cores"), "{text}");
    // The same parameters read from an AWR report's "init.ora Parameters" section.
    let awr =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../sources/testdata/awr/19c.txt");
    let (code, checks, text) =
        doctor(&["--target", s(&dir), "--init-ora", s(&awr), "--cores", "2"]);
    assert_eq!(code, 1, "{text}");
    assert_eq!(
        checks,
        ["filesystemio_options", "parallel_max_servers"],
        "{text}"
    );
}

/// The guard undoes everything even when the test panics: the loop
/// device is detached and the mount gone.
#[test]
fn a_panicking_test_leaves_no_loop_device_or_mount_behind() {
    if !can_make("ext4") {
        return;
    }
    let seen = std::sync::Mutex::new(None);
    let r = std::panic::catch_unwind(|| {
        let fs = LoopFs::new("ext4", 64);
        *seen.lock().unwrap() = Some((fs.image(), fs.mnt()));
        panic!("on purpose");
    });
    assert!(r.is_err());
    let (img, mnt) = seen.into_inner().unwrap().expect("made");
    let o = std::process::Command::new("losetup")
        .arg("-j")
        .arg(&img)
        .output()
        .unwrap();
    assert!(o.stdout.is_empty(), "still attached: {o:?}");
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(s(&mnt)), "still mounted");
    assert!(!img.exists(), "image left behind");
}

/// A calibration on a loop device carries the device's statistics too: at
/// least as many read requests as the measured I/Os of its ramps (the
/// warm-ups of each level are read too but not recorded).
#[test]
fn a_calibration_records_its_devices() {
    if !can_make("ext4") {
        return;
    }
    let fs = LoopFs::new("ext4", 128);
    let out = fs.mnt().join("cal.json");
    let o = support::dbio(&[
        "calibrate",
        "--target",
        s(&fs.mnt().join("ds")),
        "--size",
        "16MiB",
        "--time",
        "3s",
        "--max-outstanding",
        "8",
        "--json",
        s(&out),
    ]);
    assert!(o.status.success(), "{o:?}");
    let v = support::json(&out);
    let measured: u64 = ["iops_curve", "mbps_curve"]
        .iter()
        .flat_map(|c| v[c].as_array().unwrap().iter())
        .map(|p| p["ios"].as_u64().unwrap())
        .sum();
    let dev = v["devices"]["devices"]
        .as_array()
        .expect("devices section")
        .iter()
        .find(|d| d["name"] == fs.name().as_str())
        .expect("the loop device")
        .clone();
    let reads = dev["total"]["reads"].as_u64().unwrap();
    eprintln!(
        "calibrate: {measured} measured I/Os; {}: {reads} read requests",
        fs.name()
    );
    assert!(measured > 0 && reads >= measured, "{reads} < {measured}");
}
