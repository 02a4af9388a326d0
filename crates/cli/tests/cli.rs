//! Tests that run the `dbio` binary: options, errors, exit codes, the JSON
//! schema, interruption, and calibrate's consistency.

mod support;

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use support::{dbio, json, s, scratch, signal, spawn};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A user error: exit code 2 and one `dbio: ...` line holding `needle`.
fn assert_user_error(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("dbio:")).collect();
    assert_eq!(lines.len(), 1, "one error line expected: {err}");
    assert!(lines[0].contains(needle), "{needle:?} not in {err:?}");
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
}

#[test]
fn help_teaches_options_with_defaults_and_oracle_names() {
    let o = dbio(&["run", "--help"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "--update-pct",
        "UPDATE_PCT",
        "--redo-stress",
        "db file sequential read",
        "log file parallel write",
        "--hotspot-mb",
        "THINK_TM_FREQUENCY",
        "[default: io_uring]",
        "[default: 8k]",
        "--force-overwrite",
    ] {
        assert!(out.contains(needle), "run --help lacks {needle}");
    }
    let o = dbio(&["calibrate", "--help"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("--max-latency") && out.contains("[default: 20ms]"));
    assert!(out.contains("CALIBRATE_IO"));
}

#[test]
fn bad_size_duration_workload_and_option_are_one_line_errors() {
    assert_user_error(&dbio(&["run", "--size", "12q"]), "bad size \"12q\"");
    assert_user_error(&dbio(&["run", "--time", "10x"]), "bad duration \"10x\"");
    assert_user_error(
        &dbio(&["run", "--workload", "single-block-read,nope"]),
        "unknown workload \"nope\"",
    );
    assert_user_error(&dbio(&["run", "--engine", "aio"]), "unknown engine");
    assert_user_error(&dbio(&["run", "--time", "0s"]), "--time");
    assert_user_error(&dbio(&["run", "--loops", "0"]), "--loops");
    assert_user_error(&dbio(&["run", "--no-such-option"]), "--no-such-option");
    assert_user_error(&dbio(&["calibrate", "--max-latency", "0"]), "bad latency");
    assert_user_error(
        &dbio(&["run", "--size", "1M", "--engine", "null"]),
        "below the minimum",
    );
}

#[test]
fn missing_parent_directory_is_named() {
    let tmp = scratch();
    let target = tmp.path().join("no/such/dir");
    let o = dbio(&[
        "run",
        "--target",
        s(&target),
        "--size",
        "4M",
        "--time",
        "1s",
    ]);
    assert_user_error(&o, "does not exist");
    assert!(stderr(&o).contains("no/such"));
}

#[test]
fn missing_target_is_created_when_its_parent_exists() {
    let tmp = scratch();
    let target = tmp.path().join("ds");
    let out = tmp.path().join("r.json");
    let o = dbio(&[
        "run",
        "--target",
        s(&target),
        "--size",
        "4M",
        "--workload",
        "single-block-read",
        "--time",
        "500ms",
        "--json",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(target.join("dbio-dataset.json").is_file());
}

#[test]
fn o_direct_on_tmpfs_is_refused_clearly_or_works() {
    // tmpfs refuses O_DIRECT before Linux 6.6 and accepts it since: where
    // it is refused, the error must be one clear line pointing at --buffered.
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        eprintln!("note: no /dev/shm here; skipped");
        return;
    }
    let tmp = tempfile::tempdir_in(shm).unwrap();
    let target = tmp.path().join("ds");
    let t = s(&target);
    let o = dbio(&["run", "--target", t, "--size", "4M", "--time", "300ms"]);
    if o.status.success() {
        eprintln!("note: this kernel's tmpfs accepts O_DIRECT");
    } else {
        assert_user_error(&o, "O_DIRECT");
        assert!(stderr(&o).contains("--buffered"));
        // Nothing was written before the refusal.
        assert!(!target.join("dbio-data-01.dbf").exists());
    }
    let o = dbio(&[
        "run",
        "--target",
        t,
        "--size",
        "4M",
        "--time",
        "300ms",
        "--buffered",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn writes_refuse_a_file_dbio_did_not_create() {
    let tmp = scratch();
    let foreign = tmp.path().join("dbio-data-01.dbf");
    std::fs::write(&foreign, b"somebody's data").unwrap();
    let t = s(tmp.path());
    let o = dbio(&[
        "run",
        "--target",
        t,
        "--size",
        "4M",
        "--workload",
        "dbwr-write",
        "--time",
        "300ms",
    ]);
    assert_user_error(&o, "dbio-data-01.dbf");
    assert!(stderr(&o).contains("--force-overwrite"));
    assert_eq!(std::fs::read(&foreign).unwrap(), b"somebody's data");
    let o = dbio(&[
        "run",
        "--target",
        t,
        "--size",
        "4M",
        "--workload",
        "dbwr-write",
        "--time",
        "300ms",
        "--force-overwrite",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(std::fs::read(&foreign).unwrap(), b"somebody's data");
}

#[test]
fn run_json_has_the_documented_fields() {
    let tmp = scratch();
    let out = tmp.path().join("run.json");
    let t = tmp.path().join("ds");
    let o = dbio(&[
        "run",
        "--target",
        s(&t),
        "--size",
        "8M",
        "--profile",
        "mixed",
        "--users",
        "2",
        "--outstanding",
        "4",
        "--time",
        "1s",
        "--json",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("db file sequential read"),
        "table on stdout: {stdout}"
    );
    // Where the file went, one line on stderr; one user or more said right.
    let err = stderr(&o);
    assert_eq!(
        err.matches(&format!("wrote {}\n", out.display())).count(),
        1,
        "{err}"
    );
    assert!(stdout.contains(" 2 users x 4 outstanding"), "{stdout}");
    let v = json(&out);
    assert_eq!(v["kind"], "run");
    // Whether reads could come from memory: O_DIRECT bypasses the page cache.
    assert_eq!(v["cache"]["verdict"], "bypassed", "{}", v["cache"]);
    assert!(stdout.contains("cache: O_DIRECT bypasses"), "{stdout}");
    assert_eq!(v["interrupted"], false);
    assert!(v["format_version"].as_u64().unwrap() >= 1);
    assert!(v["cpu_us_per_io"].as_f64().unwrap() > 0.0);
    assert_eq!(v["config"]["users"], 2);
    let classes = v["classes"].as_array().unwrap();
    assert!(classes.len() >= 3, "mixed runs several classes");
    for c in classes {
        for f in [
            "ios", "iops", "mbps", "mean_us", "p50_us", "p99_us", "max_us",
        ] {
            assert!(c[f].is_number(), "class field {f} missing: {c}");
        }
        assert!(c["ios"].as_u64().unwrap() > 0);
        assert!(c["p50_us"].as_f64() <= c["p99_us"].as_f64());
        assert!(c["p99_us"].as_f64() <= c["max_us"].as_f64());
        let hist = c["histogram"].as_array().unwrap();
        let counted: u64 = hist.iter().map(|b| b["count"].as_u64().unwrap()).sum();
        assert_eq!(counted, c["ios"].as_u64().unwrap());
        assert!(
            c["wait_event"].as_str().unwrap().starts_with("db file")
                || c["wait_event"].as_str().unwrap().contains("path")
                || c["wait_event"].as_str().unwrap().starts_with("log file")
        );
    }
    // 8 MiB: one data file and the redo log.
    assert_eq!(v["files"].as_array().unwrap().len(), 2);
    assert!(v.get("nfs").is_none(), "a local run has no NFS section");
    // The raw recorder, by default: the exact histograms of every class.
    let raw = v["raw"]["classes"].as_array().unwrap();
    let raw_ios: u64 = raw.iter().map(|c| c["ios"].as_u64().unwrap()).sum();
    assert_eq!(raw_ios, v["ios"].as_u64().unwrap());
}

#[test]
fn null_engine_counts_exactly_the_loops() {
    let tmp = scratch();
    let out = tmp.path().join("null.json");
    let o = dbio(&[
        "run",
        "--target",
        s(&tmp.path().join("x")),
        "--engine",
        "null",
        "--users",
        "2",
        "--outstanding",
        "32",
        "--loops",
        "5000",
        "--json",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&out);
    assert_eq!(v["ios"], 10_000);
    assert_eq!(v["config"]["engine"], "null");
    // The null engine needs no files.
    assert!(!tmp.path().join("x").exists());
}

#[test]
fn no_raw_leaves_the_raw_recorder_out() {
    let tmp = scratch();
    let out = tmp.path().join("null.json");
    let o = dbio(&[
        "run",
        "--target",
        s(&tmp.path().join("x")),
        "--engine",
        "null",
        "--loops",
        "100",
        "--no-raw",
        "--json",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&out);
    assert_eq!(v["ios"], 100);
    assert!(v.get("raw").is_none());
}

#[test]
fn sigint_stops_a_run_and_still_writes_json_marked_interrupted() {
    let tmp = scratch();
    let out = tmp.path().join("int.json");
    let child = spawn(&[
        "run",
        "--target",
        s(&tmp.path().join("x")),
        "--engine",
        "null",
        "--time",
        "60s",
        "--json",
        s(&out),
    ]);
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(signal(&child, libc::SIGINT), 0);
    let t = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "stopped within a second"
    );
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let v = json(&out);
    assert_eq!(v["interrupted"], true);
    assert!(v["ios"].as_u64().unwrap() > 0);
    assert!(v["elapsed_s"].as_f64().unwrap() < 10.0);
}

#[test]
fn calibrate_reports_a_max_measured_within_the_cap() {
    let tmp = scratch();
    let out = tmp.path().join("cal.json");
    let html = tmp.path().join("cal.html");
    let t = Instant::now();
    let o = dbio(&[
        "calibrate",
        "--target",
        s(&tmp.path().join("ds")),
        "--size",
        "8M",
        "--time",
        "4s",
        "--max-outstanding",
        "16",
        "--max-latency",
        "20000us",
        "--json",
        s(&out),
        "--html",
        s(&html),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(t.elapsed() < Duration::from_secs(10));
    assert!(stderr(&o).contains(&format!("wrote {}", html.display())));
    let v = json(&out);
    assert_eq!(v["kind"], "calibrate");
    let cap = v["max_latency_us"].as_f64().unwrap();
    assert_eq!(cap, 20_000.0);
    assert!(v["cache"]["verdict"].is_string(), "{v}");
    let max_iops = v["max_iops"].as_f64().unwrap();
    assert!(max_iops > 0.0 && v["max_mbps"].as_f64().unwrap() > 0.0);
    let curve = v["iops_curve"].as_array().unwrap();
    assert!(!curve.is_empty());
    // Points are recorded in load order, each with its figures.
    let loads: Vec<u64> = curve
        .iter()
        .map(|p| p["outstanding"].as_u64().unwrap())
        .collect();
    assert!(loads.windows(2).all(|w| w[0] < w[1]), "{loads:?}");
    assert_eq!(loads[0], 1);
    let at = curve
        .iter()
        .find(|p| p["iops"].as_f64() == Some(max_iops))
        .expect("max_iops is one of the points");
    assert!(at["mean_us"].as_f64().unwrap() <= cap && at["within_cap"] == true);
    assert_eq!(at["mean_us"], v["latency_us"]);
    assert_eq!(at["outstanding"], v["max_iops_outstanding"]);
    // No point within the cap beats it.
    for p in curve.iter().filter(|p| p["within_cap"] == true) {
        assert!(p["iops"].as_f64().unwrap() <= max_iops);
    }
    assert!(!v["mbps_curve"].as_array().unwrap().is_empty());
    assert!(std::fs::read_to_string(&html).unwrap().contains("<svg"));
}

#[test]
fn report_renders_a_saved_result_and_names_a_bad_file() {
    let tmp = scratch();
    let out = tmp.path().join("run.json");
    let o = dbio(&[
        "run",
        "--target",
        s(&tmp.path().join("x")),
        "--engine",
        "null",
        "--loops",
        "1000",
        "--json",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = tmp.path().join("run.html");
    let md = tmp.path().join("run.md");
    let o = dbio(&["report", s(&out), "--html", s(&html), "--md", s(&md)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("single-block-read"));
    assert!(std::fs::read_to_string(&html).unwrap().contains("<svg"));
    assert!(std::fs::read_to_string(&md).unwrap().contains("|"));
    let missing = tmp.path().join("nope.json");
    assert_user_error(&dbio(&["report", s(&missing)]), "nope.json");
    std::fs::write(&missing, b"not json").unwrap();
    assert_user_error(&dbio(&["report", s(&missing)]), "not JSON");
}

#[test]
fn output_into_a_missing_directory_fails_before_the_run() {
    let tmp = scratch();
    let out = tmp.path().join("no/dir/r.json");
    let t = Instant::now();
    let o = dbio(&[
        "run",
        "--engine",
        "null",
        "--time",
        "30s",
        "--json",
        s(&out),
    ]);
    assert_user_error(&o, "does not exist");
    assert!(t.elapsed() < Duration::from_secs(5));
}
