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
