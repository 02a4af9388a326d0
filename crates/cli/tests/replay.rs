//! `dbio replay` of AWR reports against a local target, and `--slo` on `dbio run` and
//! `dbio replay`. Each replay runs on a report written for the tests
//! (`../sources/testdata/awr`) and on a real report of `../shared/awr-real/` (see its
//! SOURCES.md); without `../shared` the latter say they are skipped.

#[path = "../../sources/src/shared_data.rs"]
mod shared_data;
mod support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use shared_data::awr_real;
use support::{dbio, json, s, scratch};

/// The real report `name`, or None where `../shared/awr-real` is missing (the test,
/// `what` it checks, is then said to be skipped).
fn real(name: &str, what: &str) -> Option<PathBuf> {
    let p = awr_real(what)?.join(name);
    assert!(
        p.is_file(),
        "{}: missing (the real AWR reports are test data)",
        p.display()
    );
    Some(p)
}

/// A report of `../sources/testdata/awr`, written for the tests.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../sources/testdata/awr")
        .join(name)
}

const R12201: &str = "12.2.0.1-pcambell-awrrptanalyzor-awrrpt_1_56288_56289.html";
const R11201: &str = "11.2.0.1-fabioprado-blogcopy.txt";
const R11204: &str = "11.2.0.4-pcambell-awrrptanalyzor-awrrpt_1_36006_36007.html";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `dbio replay ARGS`; (exit code, stdout, stderr).
fn replay(args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["replay"];
    all.extend_from_slice(args);
    let out = dbio(&all);
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

#[test]
fn a_real_report_at_1x_reaches_the_model_rates() {
    let what = "`dbio replay` of an 11.2.0.4 report at 1x: each class at its model's rate";
    let Some(report) = real(R11204, what) else {
        return;
    };
    at_1x_reaches_the_model_rates(
        &report,
        "Wait Events: db file sequential read, 1938901 + 1255 background waits in 3605 s",
        "db file sequential read: production 21 µs, here ",
    );
}

#[test]
fn the_19c_html_fixture_at_1x_reaches_the_model_rates() {
    at_1x_reaches_the_model_rates(
        &fixture("19c.html"),
        "Wait Events: db file sequential read, 2000000 + 4000 background waits in 3600 s",
        "db file sequential read: production 1.2 ms, here ",
    );
}

/// A report's single-block reads (11.2.0.4: 538/s, the fixture's 557/s) would need
/// 19 s to do 10,000 of them, so its model is saved and that one rate raised to
/// 4000/s (24,000 I/Os in 6 s; its other classes as the report gives them), then run
/// at 1x on a page-cache target (buffered: a target that keeps up whatever disk the
/// build is on). Each class reaches its model rate: within 2% when it did 10,000
/// I/Os or more (at least one class does), else within its Poisson spread (four
/// standard deviations of the count asked, plus one). The model shows `source` for
/// single-block reads, the run `production` beside this storage.
fn at_1x_reaches_the_model_rates(report: &Path, source: &str, production: &str) {
    // One at a time: each run's rates are its own, not shared with the other's.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch();
    let out = dir.path().join("r.json");
    let saved = dir.path().join("m.toml");
    let (code, stdout, stderr) = replay(&[s(report), "--save-model", s(&saved), "--dry-run"]);
    assert_eq!(code, 0, "{stderr}");
    // The model comes first, each rate with its source.
    assert!(stdout.starts_with("workload model of "), "{stdout}");
    assert!(stdout.contains(source), "{stdout}");
    let toml = std::fs::read_to_string(&saved).unwrap();
    let first = toml.find("\nrate = ").unwrap();
    assert!(
        toml[..first]
            .ends_with("class = \"single-block-read\"\nevent = \"db file sequential read\""),
        "{toml}"
    );
    let edited = dir.path().join("m4000.toml");
    std::fs::write(
        &edited,
        toml.replacen("\nrate = ", "\nrate = 4000 # was ", 1),
    )
    .unwrap();
    let (code, stdout, stderr) = replay(&[
        "--model",
        s(&edited),
        "--target",
        s(&dir.path().join("ds")),
        "--size",
        "64MiB",
        "--buffered",
        "--time",
        "6s",
        "--seed",
        "7",
        "--json",
        s(&out),
        "--md",
        s(&dir.path().join("r.md")),
        "--html",
        s(&dir.path().join("r.html")),
    ]);
    assert!(code == 0 || code == 3, "exit {code}: {stderr}");
    assert!(stdout.contains(production), "{stdout}");
    // The answer first, and the exit code is its: 3 for a no.
    let r = json(&out);
    assert_eq!(first_report_line(&stdout), r["verdict"].as_str().unwrap());
    assert_eq!(
        code == 3,
        r["answer"] == "no",
        "exit {code}: {}",
        r["verdict"]
    );
    for f in ["r.json", "r.md", "r.html"] {
        assert!(
            stderr.contains(&format!("wrote {}", s(&dir.path().join(f)))),
            "{stderr}"
        );
    }
    // The model's long source column wraps instead of widening the page.
    let page = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(page.contains("table.wrap-last td:last-child{white-space:normal;"));
    let model_table = &page[page.find("<h2>Workload model</h2>").unwrap()..];
    assert!(
        model_table.starts_with("<h2>Workload model</h2>\n<table class=\"wrap-last\">"),
        "{model_table}"
    );
    assert_eq!(r["kind"], "replay");
    let model = r["model"]["classes"].as_array().unwrap();
    let step = &r["steps"][0];
    let elapsed = step["elapsed_s"].as_f64().unwrap();
    // Direct path writes are replayed too (direct-write; 11.2.0.4: 237/s).
    assert!(model.iter().any(|m| m["class"] == "direct-write"), "{r}");
    let mut within_2pct = 0;
    for (m, c) in model.iter().zip(step["classes"].as_array().unwrap()) {
        let asked = c["asked_iops"].as_f64().unwrap();
        assert!((asked - m["rate"].as_f64().unwrap()).abs() < 1e-9, "{c}");
        let achieved = c["achieved_iops"].as_f64().unwrap();
        let expected = asked * elapsed;
        let got = achieved * elapsed;
        if expected >= 10_000.0 {
            assert!((achieved / asked - 1.0).abs() <= 0.02, "{c}");
            within_2pct += 1;
        } else {
            assert!(
                (got - expected).abs() <= 4.0 * expected.sqrt() + 1.0,
                "{c}: {got} I/Os of {expected}"
            );
        }
    }
    assert!(within_2pct >= 1, "no class did 10,000 I/Os: {step}");
    assert_eq!(r["headroom"], 1.0, "{}", r["load"]);
    assert_eq!(
        r["load"],
        "the load holds at 1.0x production's (every rate kept)"
    );
    // An objective per event with a production mean and I/Os enough to judge, here and
    // in production: production's own; the others say they are too few.
    let events = r["events"].as_array().unwrap();
    let judged = events
        .iter()
        .filter(|e| e["production_mean_us"].is_number() && e["too_few"].is_null())
        .count();
    assert!(judged >= 3, "{step}");
    assert_eq!(r["slo"].as_array().unwrap().len(), judged);
    for (e, c) in events.iter().zip(step["classes"].as_array().unwrap()) {
        let ios = c["ios"].as_u64().unwrap();
        assert_eq!(
            e["too_few"].is_string(),
            ios < dbio_compare::replay::MIN_IOS_JUDGED,
            "{e} {c}"
        );
    }
}

/// The first line of the replay's report proper (after the model and a blank line).
fn first_report_line(stdout: &str) -> &str {
    let at = stdout
        .find("\n\n")
        .unwrap_or_else(|| panic!("no report: {stdout}"));
    stdout[at..].trim_start().lines().next().unwrap()
}

#[test]
fn a_scale_the_target_cannot_serve_falls_behind_and_the_ramp_gives_the_headroom() {
    let what = "a ramp of a 12.2 report's model to a scale this storage cannot serve";
    if let Some(report) = real(R12201, what) {
        ramp_falls_behind(
            &report,
            "single-block-read=10s,multiblock-read=10s,direct-read=10s",
        );
    }
}

#[test]
fn a_ramp_of_the_12c_html_fixture_falls_behind_and_gives_the_headroom() {
    // Direct path writes, 10/s, have a production mean too (2 ms).
    ramp_falls_behind(
        &fixture("12c.html"),
        "single-block-read=10s,multiblock-read=10s,direct-read=10s,direct-write=10s",
    );
}

/// A ramp to a scale no target here can serve (20000x: millions of I/Os per second
/// from one user with one I/O in flight): that step falls behind, the ramp's
/// headroom is the step before it. `slo` sets objectives no step misses for the
/// classes with a production mean, whose 1x step must pass (the verdict is judged).
fn ramp_falls_behind(report: &Path, slo: &str) {
    let dir = scratch();
    let out = dir.path().join("r.json");
    let (code, stdout, stderr) = replay(&[
        s(report),
        "--target",
        s(&dir.path().join("ds")),
        "--size",
        "64MiB",
        "--buffered",
        "--engine",
        "psync",
        "--users",
        "1",
        "--outstanding",
        "1",
        "--time",
        "2s",
        "--scale",
        "1,20000",
        "--slo",
        slo,
        "--json",
        s(&out),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("at 20000.00x: storage fell behind"),
        "{stdout}"
    );
    let r = json(&out);
    assert_eq!(r["steps"][1]["behind"], true);
    assert_eq!(r["steps"][1]["kept"], false);
    assert_eq!(r["headroom"], 1.0);
    let load = r["load"].as_str().unwrap();
    assert!(
        load.starts_with("the load holds up to 1.0x production's (20000.0x did not: "),
        "{load}"
    );
    assert!(stdout.contains(&format!("  {load}\n")), "{stdout}");
    // The answer first: production's load served at 1x (its objectives met, exit 0),
    // not at 20000x.
    let verdict = r["verdict"].as_str().unwrap();
    assert_eq!(first_report_line(&stdout), verdict);
    assert!(
        verdict.starts_with("Yes: serves production's load up to 1.0x with every event within its objective (20000.0x did not: "),
        "{verdict}"
    );
}

/// One line on stderr, exit 2.
fn refused(args: &[&str]) -> String {
    let (code, _, stderr) = replay(args);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    stderr
}

#[test]
fn malformed_and_truncated_reports_are_named_with_their_line() {
    let what = "a real 11.2.0.1 text report cut inside its Load Profile, named with its line";
    if let Some(report) = real(R11201, what) {
        malformed_and_truncated(&report, 45);
    }
}

#[test]
fn the_11g_fixture_malformed_and_truncated_is_named_with_its_line() {
    malformed_and_truncated(&fixture("11g-io.txt"), 30);
}

/// `report` cut after `lines` lines, inside its Load Profile (the Top events are
/// never reached), and a file that is no report: each one line naming the file.
fn malformed_and_truncated(report: &Path, lines: usize) {
    let dir = scratch();
    let whole = std::fs::read_to_string(report).unwrap();
    let cut: String = whole
        .lines()
        .take(lines)
        .map(|l| format!("{l}\n"))
        .collect();
    let truncated = dir.path().join("cut.txt");
    std::fs::write(&truncated, cut).unwrap();
    let e = refused(&[s(&truncated), "--dry-run"]);
    assert!(
        e.starts_with(&format!("dbio: {}: line ", s(&truncated))),
        "{e}"
    );
    let garbage = dir.path().join("notes.txt");
    std::fs::write(&garbage, "some notes\nnot a report\n").unwrap();
    let e = refused(&[s(&garbage), "--dry-run"]);
    assert_eq!(
        e.trim_end(),
        format!(
            "dbio: {}: line 1: not an AWR text report (no \"WORKLOAD REPOSITORY ... report\" title)",
            s(&garbage)
        )
    );
}

#[test]
fn the_model_round_trips_through_toml_and_a_bad_line_is_named() {
    let what = "a real 11.2.0.1 report's model saved, read back and edited";
    if let Some(report) = real(R11201, what) {
        round_trip(&report);
    }
}

#[test]
fn the_11g_fixture_model_round_trips_through_toml() {
    round_trip(&fixture("11g-io.txt"));
}

/// `report`'s model saved, read back and saved the same; a bad value is named.
fn round_trip(report: &Path) {
    let dir = scratch();
    let m1 = dir.path().join("m1.toml");
    let m2 = dir.path().join("m2.toml");
    let (code, _, stderr) = replay(&[s(report), "--save-model", s(&m1), "--dry-run"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains(&format!("wrote {}", s(&m1))));
    let (code, stdout, stderr) = replay(&["--model", s(&m1), "--save-model", s(&m2), "--dry-run"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("single-block-read"));
    let saved = std::fs::read_to_string(&m1).unwrap();
    assert_eq!(saved, std::fs::read_to_string(&m2).unwrap());
    // An edit runs as edited; a bad value is named by file and line.
    let line = saved
        .lines()
        .position(|l| l.starts_with("rate = "))
        .unwrap()
        + 1;
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, saved.replacen("\nrate = ", "\nrate = \"fast\" #", 1)).unwrap();
    let e = refused(&["--model", s(&bad), "--dry-run"]);
    assert!(
        e.starts_with(&format!("dbio: {} line {line}: ", s(&bad))),
        "{e}"
    );
}

fn run_slo(dir: &Path, slo: &str) -> (i32, Value, String) {
    let out = dir.join(format!("{}.json", slo.len()));
    let o = dbio(&[
        "run",
        "--engine",
        "null",
        "--target",
        s(&dir.join("ds")),
        "--size",
        "16MiB",
        "--workload",
        "single-block-read",
        "--time",
        "300ms",
        "--slo",
        slo,
        "--json",
        s(&out),
    ]);
    (o.status.code().unwrap_or(-1), json(&out), text(&o.stdout))
}

#[test]
fn objectives_pass_with_exit_0_and_fail_with_exit_3() {
    let dir = scratch();
    let (code, r, stdout) = run_slo(dir.path(), "single-block-read=10s@p99");
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(r["slo"][0]["pass"], true);
    assert!(stdout.contains("objectives: all pass"), "{stdout}");
    // 1 ns: no I/O, not even the null engine's, is that fast.
    let (code, r, stdout) = run_slo(dir.path(), "single-block-read=1ns");
    assert_eq!(code, 3, "{stdout}");
    assert_eq!(r["slo"][0]["pass"], false);
    assert!(
        stdout.contains("single-block-read mean ") && stdout.contains(": FAIL"),
        "{stdout}"
    );
    let what = "production's objectives on a replay of a real 11.2.0.1 report";
    if let Some(report) = real(R11201, what) {
        replay_objectives(dir.path(), &report);
    }
}

#[test]
fn objectives_on_a_replay_of_the_11g_fixture() {
    let dir = scratch();
    replay_objectives(dir.path(), &fixture("11g-io.txt"));
}

/// Production's objectives on a replay of `report`, one made impossible: exit 3,
/// and one line saying how many were met and which not.
fn replay_objectives(dir: &Path, report: &Path) {
    let m = dir.join("m.toml");
    let (code, _, e) = replay(&[s(report), "--save-model", s(&m), "--dry-run"]);
    assert_eq!(code, 0, "{e}");
    let (code, stdout, e) = replay(&[
        "--model",
        s(&m),
        "--engine",
        "null",
        "--target",
        s(&dir.join("ds")),
        "--size",
        "16MiB",
        "--time",
        "300ms",
        "--slo",
        "redo-write=1ns",
    ]);
    assert_eq!(code, 3, "{e}");
    assert!(
        stdout.contains("redo-write mean ") && stdout.contains(": FAIL"),
        "{stdout}"
    );
    // Beside the verdict, one line says how many objectives were met and which not.
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("objectives at ") && l.contains(" met"))
        .unwrap_or_else(|| panic!("no objectives summary: {stdout}"));
    assert!(summary.contains("missed: redo-write"), "{summary}");
}

#[test]
fn a_slob_conf_sets_sessions_time_and_size_and_the_model_keeps_the_mix() {
    let what = "`dbio replay --slob-conf` of a real 12.2 report";
    if let Some(report) = real(R12201, what) {
        slob_conf(&report);
    }
}

#[test]
fn a_slob_conf_on_a_replay_of_the_12c_html_fixture() {
    slob_conf(&fixture("12c.html"));
}

/// `dbio replay --slob-conf` of `report` (8 KiB blocks, all six classes): SLOB's
/// sessions, RUN_TIME, SCALE and hot spot apply; the mix and pace settings are the
/// model's, named in one notice line; options given on the command line win, but
/// replay's --scale (a load multiplier) is not SLOB's SCALE.
fn slob_conf(report: &Path) {
    let dir = scratch();
    let conf = dir.path().join("slob.conf");
    std::fs::write(
        &conf,
        "UPDATE_PCT=40\nSCAN_PCT=10\nRUN_TIME=1\nWORK_LOOP=0\nSCALE=2048\n\
         THREADS_PER_SCHEMA=2\nREDO_STRESS=LITE\nDO_HOTSPOT=TRUE\nHOTSPOT_MB=4\n\
         HOTSPOT_OFFSET_MB=0\nHOTSPOT_FREQUENCY=3\nTHINK_TM_FREQUENCY=5\n\
         THINK_TM_MIN=.1\nTHINK_TM_MAX=.5\nFOO=1\n",
    )
    .unwrap();
    let out = dir.path().join("r.json");
    let (code, stdout, stderr) = replay(&[
        s(report),
        "--slob-conf",
        s(&conf),
        "--users",
        "2",
        "--engine",
        "null",
        "--target",
        s(&dir.path().join("ds")),
        "--json",
        s(&out),
    ]);
    assert!(code == 0 || code == 3, "exit {code}: {stderr}");
    // 2048 blocks of the report's 8 KiB per schema, 2 schemas.
    assert!(
        stdout.contains("  data set: 32.0 MiB (SCALE of --slob-conf)"),
        "{stdout}"
    );
    assert!(stderr.contains("--users 4 (2 schemas x 2)"), "{stderr}");
    assert!(stderr.contains("--hotspot-mb 4 "), "{stderr}");
    assert!(
        stderr.contains("step 1/1: 1x production for 1s"),
        "{stderr}"
    );
    let notice: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("not taken: "))
        .collect();
    assert_eq!(notice.len(), 1, "{stderr}");
    assert!(
        notice[0].ends_with(
            "the workload model's rates and sizes decide the mix and pace the arrivals; \
             not taken: UPDATE_PCT=40, SCAN_PCT=10, REDO_STRESS=LITE, THINK_TM_FREQUENCY=5 \
             THINK_TM_MIN=.1 THINK_TM_MAX=.5"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("not used by dbio: FOO (line 15"),
        "{stderr}"
    );
    // The classes run are the model's, at its rates, for RUN_TIME.
    let r = json(&out);
    let step = &r["steps"][0];
    let classes: Vec<&str> = step["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["class"].as_str().unwrap())
        .collect();
    assert_eq!(
        classes,
        [
            "single-block-read",
            "multiblock-read",
            "direct-read",
            "dbwr-write",
            "redo-write",
            "direct-write"
        ]
    );
    let elapsed = step["elapsed_s"].as_f64().unwrap();
    assert!((0.9..5.0).contains(&elapsed), "{elapsed}");
    // --size and --time win over SCALE and RUN_TIME; --scale is replay's own.
    let (code, stdout, stderr) = replay(&[
        s(report),
        "--slob-conf",
        s(&conf),
        "--size",
        "16MiB",
        "--time",
        "3s",
        "--scale",
        "1,2",
        "--dry-run",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("  data set: 16.0 MiB (--size)"), "{stdout}");
    assert!(
        stderr.contains("not taken, the command line's --size wins"),
        "{stderr}"
    );
    assert!(
        stderr.contains("not taken, the command line's --time wins"),
        "{stderr}"
    );
}
