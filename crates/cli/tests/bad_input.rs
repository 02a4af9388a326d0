//! The catalogue of bad input: command lines, config files and URLs that
//! dbio must refuse with one clear line (what and where) and exit code 2,
//! without writing anything. `{S}` in a case stands for the scratch
//! directory the case runs in.

use std::fs;
use std::path::Path;
use std::process::Command;

/// (arguments, the exact error line; a trailing `*` matches any rest).
const CASES: &[(&[&str], &str)] = &[
    // Options.
    (&["run", "--target", "{S}/ds", "--no-such-option"],
     "dbio: unexpected argument '--no-such-option' found (see dbio run --help)"),
    (&["nosuchcommand"], "dbio: unrecognized subcommand 'nosuchcommand' (see dbio --help)"),
    (&["run", "--target", "{S}/ds", "--size", "8MiB", "--scale", "1MiB"],
     "dbio: the argument '--size <SIZE>' cannot be used with '--scale <SIZE>' (see dbio run --help)"),
    (&["verify"],
     "dbio: the following required arguments were not provided: <DATASET> (see dbio verify --help)"),
    // Sizes and counts.
    (&["run", "--target", "{S}/ds", "--size", "-1G"], "dbio: --size -1G: must not be negative"),
    (&["run", "--target", "{S}/ds", "--size", "12q"],
     "dbio: invalid value '12q' for '--size <SIZE>': bad size \"12q\": expected a number with an optional unit (512, 8k, 512M, 1GiB, 2T) (see dbio run --help)"),
    (&["run", "--target", "{S}/ds", "--size", "1MiB"],
     "dbio: --size: bad data set: size 1048576 bytes is below the minimum of 4 MiB"),
    (&["run", "--target", "{S}/ds", "--users", "0"],
     "dbio: invalid value '0' for '--users <N>': 0 is not in 1..=4096 (see dbio run --help)"),
    (&["run", "--target", "{S}/ds", "--users", "-3"], "dbio: --users -3: must not be negative"),
    (&["run", "--target", "{S}/ds", "--outstanding", "0"],
     "dbio: invalid value '0' for '--outstanding <N>': 0 is not in 1..=65536 (see dbio run --help)"),
    (&["run", "--target", "{S}/ds", "--loops", "0"],
     "dbio: invalid value '0' for '--loops <N>': must be 1 or more (see dbio run --help)"),
    (&["run", "--target", "{S}/ds", "--hotspot-frequency", "0"],
     "dbio: invalid value '0' for '--hotspot-frequency <N>': must be 1 or more (see dbio run --help)"),
    (&["run", "--target", "{S}/ds", "--think-frequency", "-1"],
     "dbio: --think-frequency -1: must not be negative"),
    (&["run", "--target", "{S}/ds", "--seed", "abc"],
     "dbio: invalid value 'abc' for '--seed <N>': invalid digit found in string (see dbio run --help)"),
    (&["run", "--target", "{S}/ds", "--conns", "0"],
     "dbio: invalid value '0' for '--conns <N>': 0 is not in 1..=64 (see dbio run --help)"),
    // Block size: O_DIRECT needs whole sectors; Oracle's sizes are 2k..32k.
    (&["run", "--target", "{S}/ds", "--block-size", "1000"],
     "dbio: --block-size 1000: must be a power of two from 2k to 32k"),
    (&["run", "--target", "{S}/ds", "--block-size", "3k"],
     "dbio: --block-size 3072: must be a power of two from 2k to 32k"),
    (&["run", "--target", "{S}/ds", "--block-size", "64k"],
     "dbio: --block-size 65536: must be a power of two from 2k to 32k"),
    // Durations.
    (&["run", "--target", "{S}/ds", "--time", "10x"],
     "dbio: invalid value '10x' for '--time <DURATION>': bad duration \"10x\": expected a number with a unit (500ms, 30s, 2m, 1h) (see dbio run --help)"),
    (&["run", "--target", "{S}/ds", "--time", "0s"], "dbio: --time must be longer than zero"),
    (&["run", "--target", "{S}/ds", "--time", "-5s"], "dbio: --time -5s: must not be negative"),
    (&["calibrate", "--target", "{S}/ds", "--time", "0s"], "dbio: --time must be longer than zero"),
    (&["run", "--target", "{S}/ds", "--think-min", "1s", "--think-max", "10ms", "--think-frequency", "2"],
     "dbio: --think-min 1s is above --think-max 10ms"),
    // Workload knobs.
    (&["run", "--target", "{S}/ds", "--update-pct", "150"],
     "dbio: invalid value '150' for '--update-pct <PCT>': 150 is not in 0..=100 (see dbio run --help)"),
    (&["run", "--target", "{S}/ds", "--scan-pct", "101"],
     "dbio: invalid value '101' for '--scan-pct <PCT>': 101 is not in 0..=100 (see dbio run --help)"),
    (&["run", "--target", "{S}/ds", "--redo-stress", "extreme"],
     "dbio: invalid value 'extreme' for '--redo-stress <LEVEL>': unknown redo stress \"extreme\" (lite or heavy) (see dbio run --help)"),
    (&["run", "--target", "{S}/ds", "--profile", "nosuch"],
     "dbio: invalid value 'nosuch' for '--profile <NAME>': unknown profile \"nosuch\" (one of oltp, olap, redo, mixed) (see dbio run --help)"),
    (&["run", "--target", "{S}/ds", "--workload", "nope"],
     "dbio: invalid value 'nope' for '--workload <CLASS>': unknown workload \"nope\" (one of single-block-read, multiblock-read, direct-read, dbwr-write, redo-write, direct-write) (see dbio run --help)"),
    (&["run", "--target", "{S}/ds", "--engine", "aio"],
     "dbio: invalid value 'aio' for '--engine <ENGINE>': unknown engine \"aio\" (one of psync, io_uring, null) (see dbio run --help)"),
    (&["run", "--target", "{S}/ds", "--size", "8MiB", "--hotspot-mb", "100"],
     "dbio: --hotspot-mb 100 at --hotspot-offset-mb 0 lies outside the 8.0 MiB of data"),
    (&["run", "--target", "{S}/ds", "--engine", "null", "--verify"],
     "dbio: --verify: the null engine moves no data; use io_uring or psync"),
    // Targets and outputs.
    (&["run", "--target", "{S}/no/parent/ds"],
     "dbio: {S}/no/parent/ds: cannot create the target directory: parent {S}/no/parent does not exist"),
    (&["run", "--target", "{S}/afile"], "dbio: {S}/afile: not a directory"),
    (&["run", "--target", "{S}/ds", "--json", "{S}/no/x.json"],
     "dbio: {S}/no/x.json: directory {S}/no does not exist"),
    (&["verify", "{S}/ds"], "dbio: {S}/ds: cannot open the data set: No such file or directory (os error 2)"),
    (&["verify", "{S}"], "dbio: bad data set: {S}: not a dbio data set (no dbio-dataset.json)"),
    (&["verify", "--engine", "null", "{S}"],
     "dbio: --engine null: verify needs an engine that reads data (io_uring or psync)"),
    (&["report", "{S}/missing.json"], "dbio: cannot read {S}/missing.json: No such file or directory (os error 2)"),
    (&["report", "{S}/afile"], "dbio: {S}/afile: not JSON: expected ident at line 1 column 2"),
    // NFS URLs.
    (&["run", "--target", "nfs://127.0.0.1:99999/export"],
     "dbio: --target nfs://127.0.0.1:99999/export: NFS URL port 99999 out of range (1-65535) in host:port"),
    (&["run", "--target", "nfs://127.0.0.1/export?nfsport=0"],
     "dbio: --target nfs://127.0.0.1/export?nfsport=0: NFS URL port 0 out of range (1-65535) in nfsport"),
    (&["run", "--target", "nfs://127.0.0.1/export?bogus=1"],
     "dbio: --target nfs://127.0.0.1/export?bogus=1: unknown NFS URL parameter 'bogus' (known: version, mountport, nfsport, *"),
    (&["run", "--target", "nfs:///export"],
     "dbio: --target nfs:///export: NFS URL has no host: nfs:///export"),
    (&["run", "--target", "nfs://127.0.0.1/export?version=5"],
     "dbio: --target nfs://127.0.0.1/export?version=5: NFS version 5 is not supported (version=3, 4, 4.1 or pnfs)"),
    (
        &["verify", "nfs://127.0.0.1:99999/export/ds"],
        "dbio: --target nfs://127.0.0.1:99999/export/ds: NFS URL port 99999 out of range (1-65535) in host:port",
    ),
    // Config files (oranfstab and its TOML form).
    (&["run", "--target", "{S}/ds", "--oranfstab", "{S}/missing.ora"],
     "dbio: {S}/missing.ora: No such file or directory (os error 2)"),
    (&["run", "--target", "{S}/ds", "--oranfstab", "{S}/nosrv.ora"], "dbio: {S}/nosrv.ora:1: path: without a preceding server: line"),
    (&["run", "--target", "{S}/ds", "--oranfstab", "{S}/badver.ora"], "dbio: {S}/badver.ora:4: nfs_version: 'nfsv9' is not one of nfsv3, nfsv4, nfsv4.1, pnfs"),
    (&["run", "--target", "{S}/ds", "--oranfstab", "{S}/badtmo.ora"], "dbio: {S}/badtmo.ora:4: mnt_timeout: 'soon' is not a number of seconds"),
    (&["run", "--target", "{S}/ds", "--oranfstab", "{S}/badkey.ora"], "dbio: {S}/badkey.ora:3: unknown keyword 'bogus_key'"),
    (&["run", "--target", "{S}/ds", "--oranfstab", "{S}/bad.toml"], "dbio: {S}/bad.toml:2: invalid type: integer `3`, expected a string"),
];

/// The config files the cases name.
fn fixtures(dir: &Path) {
    let files: &[(&str, &str)] = &[
        ("afile", "not a result\n"),
        (
            "nosrv.ora",
            "path: 10.0.0.1\nexport: /export mount: /mnt/x\n",
        ),
        (
            "badver.ora",
            "server: s1\npath: 10.0.0.1\nexport: /export mount: /mnt/x\nnfs_version: nfsv9\n",
        ),
        (
            "badtmo.ora",
            "server: s1\npath: 10.0.0.1\nexport: /export mount: /mnt/x\nmnt_timeout: soon\n",
        ),
        (
            "badkey.ora",
            "server: s1\npath: 10.0.0.1\nbogus_key: 1\nexport: /export mount: /mnt/x\n",
        ),
        ("bad.toml", "[[server]]\nname = 3\n"),
    ];
    for (name, text) in files {
        fs::write(dir.join(name), text).unwrap();
    }
}

/// Every file under `dir` with its size and modification time.
fn snapshot(dir: &Path) -> Vec<(String, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let m = e.metadata().unwrap();
            if m.is_dir() {
                stack.push(e.path());
            }
            out.push((
                e.path().display().to_string(),
                m.len(),
                m.modified().unwrap(),
            ));
        }
    }
    out.sort();
    out
}

fn run_case(dir: &Path, args: &[&str], want: &str) -> Result<(), String> {
    let s = dir.display().to_string();
    let args: Vec<String> = args.iter().map(|a| a.replace("{S}", &s)).collect();
    let want = want.replace("{S}", &s);
    let before = snapshot(dir);
    let o = Command::new(env!("CARGO_BIN_EXE_dbio"))
        .args(&args)
        .output()
        .expect("run dbio");
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err.lines().collect();
    let mut problems = Vec::new();
    if o.status.code() != Some(2) {
        problems.push(format!("exit code {:?}", o.status.code()));
    }
    // A trailing `*`: the line starts so (lists that grow with the code).
    let matches = match want.strip_suffix('*') {
        Some(prefix) => lines.len() == 1 && lines[0].starts_with(prefix),
        None => lines == [want.as_str()],
    };
    if !matches {
        problems.push(format!("stderr {err:?}\n     want {want:?}"));
    }
    if snapshot(dir) != before {
        problems.push("wrote to the scratch directory".into());
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("dbio {}: {}", args.join(" "), problems.join("; ")))
    }
}

#[test]
fn every_bad_input_is_one_line_exit_2_and_writes_nothing() {
    assert!(
        CASES.len() >= 30,
        "the catalogue holds {} cases",
        CASES.len()
    );
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    fixtures(tmp.path());
    let failures: Vec<String> = CASES
        .iter()
        .filter_map(|(args, want)| run_case(tmp.path(), args, want).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

/// A read-only file system: a small ext4 image mounted read-only.
struct RoMount {
    dir: std::path::PathBuf,
}

impl Drop for RoMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
    }
}

fn ro_mount(base: &Path) -> Result<RoMount, String> {
    let img = base.join("ro.img");
    let dir = base.join("ro");
    fs::create_dir(&dir).map_err(|e| e.to_string())?;
    fs::File::create(&img)
        .and_then(|f| f.set_len(8 << 20))
        .map_err(|e| e.to_string())?;
    let ok = |c: &mut Command| c.output().map(|o| o.status.success()).unwrap_or(false);
    if !ok(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&img)) {
        return Err("mkfs.ext4 failed".into());
    }
    if !ok(Command::new("mount")
        .args(["-o", "loop,ro"])
        .arg(&img)
        .arg(&dir))
    {
        return Err("mount -o loop,ro failed".into());
    }
    Ok(RoMount { dir })
}

#[test]
fn target_on_a_read_only_file_system() {
    // SAFETY: getuid cannot fail.
    let root = unsafe { libc::getuid() } == 0;
    let required = std::env::var("DBIO_REQUIRE_PEERS").is_ok_and(|v| v == "1");
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mount = match (root, ro_mount(tmp.path())) {
        (true, Ok(m)) => m,
        (_, Err(e)) if required => panic!("read-only mount needed: {e}"),
        (false, _) if required => panic!("read-only mount needs root"),
        (_, r) => {
            eprintln!(
                "note: read-only file system case skipped (root: {root}, {:?})",
                r.err()
            );
            return;
        }
    };
    let d = mount.dir.display().to_string();
    run_case(
        tmp.path(),
        &["run", "--target", &format!("{d}/ds"), "--time", "1s"],
        &format!(
            "dbio: {d}/ds: cannot create the target directory: Read-only file system (os error 30)"
        ),
    )
    .unwrap();
    run_case(
        tmp.path(),
        &["run", "--target", &d, "--time", "1s"],
        &format!("dbio: {d}: cannot create a file: Read-only file system (os error 30)"),
    )
    .unwrap();
}
