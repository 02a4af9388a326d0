//! `dbio sweep`, `dbio compare` and `dbio awr` end to end, against local files.

#[path = "../../sources/src/shared_data.rs"]
mod shared_data;
mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;
use shared_data::awr_real;
use support::{dbio, json, pair, s, scratch, signal, spawn};

/// The tests of this file run real I/O; one at a time, so that each measures its own
/// runs, not its neighbours' (the machine has few cores).
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A 64 MiB data set used by every configuration of a sweep (created once, reused).
fn options(ds: &Path) -> String {
    format!(
        "--target {} --size 64MiB --workload single-block-read",
        s(ds)
    )
}

#[test]
fn a_sweep_finds_a_real_difference_and_calls_identical_configurations_noise() {
    let _one_at_a_time = serial();
    let dir = scratch();
    let out = dir.path().join("sweep");
    let opts = options(&dir.path().join("ds"));
    // Two identical configurations and one with eight times the outstanding I/Os,
    // interleaved: drift falls on all alike. Twelve repeats, so that at the 0.5% level
    // below the signed-rank test can still call the difference when a burst of other work
    // reverses one pair (eight pairs cannot: one reversed pair of eight gives p 0.016).
    let o = dbio(&[
        "sweep",
        "--out",
        s(&out),
        "--users",
        "1",
        "--repeats",
        "12",
        "--time",
        "300ms",
        "--warmup",
        "100ms",
        "--options",
        &opts,
        "--config",
        "q1=--outstanding 1",
        "--config",
        "same=--outstanding 1",
        "--config",
        "q8=--outstanding 8",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("run 36/36"),
        "progress names every run: {}",
        stderr(&o)
    );
    let manifest = json(&out.join("sweep.json"));
    let runs = manifest["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 36);
    assert!(runs.iter().all(|r| r["status"] == "done"));
    // Interleaved, every second repeat backwards: repeat 1 is q1, same, q8; repeat 2,
    // q8, same, q1 (so that q1 does not always come after q8).
    let order: Vec<&str> = runs
        .iter()
        .take(6)
        .map(|r| r["config"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["q1", "same", "q8", "q8", "same", "q1"]);
    let r = json(&out.join("runs/q8/u1-r2.json"));
    assert_eq!(r["labels"]["config"], "q8");
    assert_eq!(r["labels"]["repeat"], "2");
    assert_eq!(r["config"]["outstanding"], 8);

    let cmp_json = dir.path().join("cmp.json");
    let html = dir.path().join("cmp.html");
    let o = dbio(&[
        "compare",
        s(&out),
        "--baseline",
        "q1",
        "--alpha",
        "0.005",
        "--json",
        s(&cmp_json),
        "--html",
        s(&html),
        "--csv",
        s(&dir.path().join("cmp.csv")),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("Verdict against q1"), "{text}");
    // The verdict lines, for whoever runs this beside other work.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for config in ["same", "q8"] {
        let from = flat.find(&format!("{config} against q1:")).unwrap();
        let to = from + flat[from..].find(" metric ").unwrap();
        println!("{}", &flat[from..to]);
    }
    let cmp = json(&cmp_json);
    assert_eq!(cmp["observations"], 36);
    // The sweep interleaved its repeats: they are tested as pairs, so that other work on
    // the machine, which slows both runs of a repeat alike, is not taken for noise.
    let q8 = pair(&cmp, "q8", "iops");
    assert_eq!(q8["verdict"], "better", "{q8}");
    assert_eq!(q8["paired"], true, "{q8}");
    let paired_tests = ["paired-t", "wilcoxon-signed-rank"];
    assert!(paired_tests.contains(&q8["test"].as_str().unwrap()), "{q8}");
    assert!(q8["ratio"]["mean"].as_f64().unwrap() > 1.5, "{q8}");
    assert!(
        flat.contains("q8 against q1: IOPS") && flat.contains(", paired"),
        "the verdict names the paired test: {text}"
    );
    // The chance of calling identical configurations different here is the level, 0.5%.
    let same = pair(&cmp, "same", "iops");
    assert_eq!(same["verdict"], "within-noise", "{same}");
    assert_eq!(same["paired"], true, "{same}");

    // The same results copied elsewhere, without the manifest, are sets given by hand:
    // independent samples.
    for config in ["q1", "q8"] {
        let to = dir.path().join("hand").join(config);
        std::fs::create_dir_all(&to).unwrap();
        for r in 1..=12 {
            let name = format!("u1-r{r}.json");
            std::fs::copy(out.join("runs").join(config).join(&name), to.join(&name)).unwrap();
        }
    }
    let hand = dir.path().join("hand");
    let o = dbio(&[
        "compare",
        s(&hand.join("q1")),
        "--",
        s(&hand.join("q8")),
        "--json",
        s(&cmp_json),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let from = flat.find("q8 against q1:").unwrap();
    let to = from + flat[from..].find(" metric ").unwrap();
    println!("by hand: {}", &flat[from..to]);
    let by_hand = json(&cmp_json);
    let q8 = pair(&by_hand, "q8", "iops");
    assert_eq!(q8["paired"], false, "{q8}");
    assert!(
        ["welch", "mann-whitney"].contains(&q8["test"].as_str().unwrap()),
        "{q8}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.matches("<svg").count() >= 3,
        "curves, impacts and histograms"
    );
}

#[test]
fn a_stopped_sweep_resumes_and_runs_every_run_exactly_once() {
    let _one_at_a_time = serial();
    let dir = scratch();
    let out = dir.path().join("sweep");
    let opts = options(&dir.path().join("ds"));
    let args = [
        "sweep",
        "--out",
        s(&out),
        "--users",
        "1,2",
        "--repeats",
        "2",
        "--time",
        "400ms",
        "--options",
        &opts,
        "--config",
        "a=--outstanding 1",
        "--config",
        "b=--outstanding 4",
    ];
    // The data set first, so that the stops below fall on runs.
    assert!(dbio(
        &["run", "--time", "100ms", "--loops", "10"]
            .iter()
            .copied()
            .chain(opts.split(' '))
            .collect::<Vec<_>>()
    )
    .status
    .success());
    let done_runs = |m: &Value| -> Vec<(String, f64)> {
        m["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["status"] == "done")
            .map(|r| {
                (
                    r["file"].as_str().unwrap().to_string(),
                    r["started_unix"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    // Stopped with SIGINT (passed on to the run in flight), then killed outright.
    for sig in [libc::SIGINT, libc::SIGKILL] {
        let resume = ["sweep", "--resume", "--out", s(&out)];
        let mut child = spawn(if sig == libc::SIGINT {
            &args[..]
        } else {
            &resume[..]
        });
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(100));
            let m = std::fs::read(out.join("sweep.json"))
                .ok()
                .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
            if m.is_some_and(|m| done_runs(&m).len() >= if sig == libc::SIGINT { 1 } else { 3 }) {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(150));
        assert_eq!(signal(&child, sig), 0);
        let status = child.wait().unwrap();
        if sig == libc::SIGINT {
            assert_eq!(status.code(), Some(130));
        }
    }
    let before = done_runs(&json(&out.join("sweep.json")));
    assert!(
        before.len() >= 3 && before.len() < 8,
        "stopped mid-sweep: {before:?}"
    );
    let o = dbio(&["sweep", "--resume", "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let after = done_runs(&json(&out.join("sweep.json")));
    assert_eq!(after.len(), 8);
    for (file, started) in &before {
        let again = after.iter().find(|(f, _)| f == file).unwrap();
        assert_eq!(again.1, *started, "{file} ran again");
    }
    for (file, _) in &after {
        let r = json(&out.join(file));
        assert_eq!(r["interrupted"], false, "{file}");
    }
    // Nothing half-written is left behind.
    let partial = support_files(&out)
        .into_iter()
        .filter(|p| p.ends_with(".partial"))
        .count();
    assert_eq!(partial, 0);
    let o = dbio(&["sweep", "--out", s(&out), "--config", "a=--outstanding 1"]);
    assert!(stderr(&o).contains("--resume"), "{}", stderr(&o));
}

fn support_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(support_files(&p));
        } else {
            out.push(p.display().to_string());
        }
    }
    out
}

#[test]
fn compare_takes_sets_and_names_bad_input() {
    let _one_at_a_time = serial();
    let dir = scratch();
    let opts = options(&dir.path().join("ds"));
    for set in ["one", "four"] {
        std::fs::create_dir(dir.path().join(set)).unwrap();
        for r in 0..2 {
            let file = dir.path().join(format!("{set}/r{r}.json"));
            let q = if set == "one" { "1" } else { "4" };
            let mut args = vec![
                "run",
                "--time",
                "200ms",
                "--outstanding",
                q,
                "--json",
                s(&file),
            ];
            args.extend(opts.split(' '));
            assert!(dbio(&args).status.success());
        }
    }
    let a = dir.path().join("one");
    let b = dir.path().join("four");
    let (a0, a1) = (a.join("r0.json"), a.join("r1.json"));
    let (b0, b1) = (b.join("r0.json"), b.join("r1.json"));
    let o = dbio(&["compare", s(&a0), s(&a1), "--", s(&b0), s(&b1)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    // Two repeats a side: the rank test cannot reach 5%, so Welch's test decides and the
    // report says what it assumes.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("baseline one")
            && flat.contains("Welch*")
            && flat.contains("with 2 and 2 repeats the rank test cannot reach 5%"),
        "{text}"
    );
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"kind\": \"run\"").unwrap();
    for (args, needle) in [
        (vec!["compare", s(&a0), "--", s(&bad)], "bad.json: not JSON"),
        (vec!["compare", s(&a0), "--"], "empty set"),
        (vec!["compare", s(&a0), s(&a1)], "only one configuration"),
        (
            vec!["compare", s(&a0), "--", s(&b0), "--baseline", "two"],
            "baseline \"two\" is not among",
        ),
        (
            vec!["compare", s(&a0), "--", s(&b0), "--alpha", "2"],
            "significance level",
        ),
    ] {
        let o = dbio(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    }
}

#[test]
fn awr_reports_become_a_comparison() {
    let _one_at_a_time = serial();
    let dir = scratch();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sources/testdata/awr");
    let reports = dir.path().join("reports");
    for (config, fixture) in [("NFS", "11g.txt"), ("DNFS", "19c.txt")] {
        std::fs::create_dir_all(reports.join(config)).unwrap();
        for users in [1, 8] {
            for repeat in 1..=2 {
                std::fs::copy(
                    fixtures.join(fixture),
                    reports.join(format!("{config}/awr_{users}_{repeat}.txt")),
                )
                .unwrap();
            }
        }
    }
    std::fs::copy(
        fixtures.join("truncated.txt"),
        reports.join("NFS/awr_16_1.txt"),
    )
    .unwrap();
    let obs = dir.path().join("awr.json");
    let group = r"(?P<config>[A-Z]+)/awr_(?P<users>\d+)_(?P<repeat>\d+)\.txt";
    let o = dbio(&["awr", s(&reports), "--group", group, "--json", s(&obs)]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "one report is unreadable: {}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("awr_16_1.txt: line 19:"),
        "{}",
        stderr(&o)
    );
    let o = dbio(&[
        "compare",
        s(&obs),
        "--baseline",
        "NFS",
        "--md",
        s(&dir.path().join("awr.md")),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("DNFS") && text.contains("db file sequential read latency"),
        "{text}"
    );
    let o = dbio(&["awr", s(&reports), "--group", "(unclosed"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--group: not a regular expression"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn awr_reads_html_reports_and_shows_their_sections() {
    let what = "`dbio awr` of a real 11.2.0.4 HTML report: its sections and model";
    let Some(real) = awr_real(what) else {
        return;
    };
    let html = "11.2.0.4-pcambell-awrrptanalyzor-awrrpt_1_36006_36007.html";
    let text = std::fs::read_to_string(real.join(html))
        .unwrap_or_else(|e| panic!("{}: {e} (the real AWR reports)", real.display()));
    // 40.7 s over 1,938,901 waits, where the report's Avg column says 0 ms.
    awr_html(&text, "21.0 us", 40.7 / 1_938_901.0 * 1e6);
}

#[test]
fn awr_reads_the_19c_html_fixture_and_shows_its_sections() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sources/testdata/awr/19c.html");
    let text = std::fs::read_to_string(&fixture).unwrap();
    // 2,469 s over 2,000,000 waits, where the Avg column says 1.23 ms.
    awr_html(&text, "1.23 ms", 2469.0 / 2e6 * 1e6);
}

/// `dbio awr --model` of one HTML report, then of it cut before its snapshot table:
/// the sections are shown, and db file sequential read's mean (`shown` as printed,
/// `mean_us` in the model) comes from time over waits in the Top events.
fn awr_html(text: &str, shown: &str, mean_us: f64) {
    let _one_at_a_time = serial();
    let dir = scratch();
    let reports = dir.path().join("reports/OLTP");
    std::fs::create_dir_all(&reports).unwrap();
    std::fs::write(reports.join("awr_1_1.html"), text).unwrap();
    let model = dir.path().join("model.json");
    let group = r"(?P<config>[A-Z]+)/awr_(?P<users>\d+)_(?P<repeat>\d+)\.html";
    let reports_dir = dir.path().join("reports");
    let o = dbio(&[
        "awr",
        s(&reports_dir),
        "--group",
        group,
        "--model",
        s(&model),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    // One report: its sections are shown.
    assert!(
        out.contains("IOStat by Function") && out.contains("Tablespace IO"),
        "{out}"
    );
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("db file sequential read "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains(shown) && line.contains("time/waits (Top events)"),
        "{line}"
    );
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    let events = m[0]["report"]["events"].as_array().unwrap();
    let seq = events
        .iter()
        .find(|e| e["event"] == "db file sequential read")
        .unwrap();
    let mean = seq["mean_wait_us"].as_f64().unwrap();
    assert!((mean - mean_us).abs() < 1e-6, "{mean}");
    assert_eq!(m[0]["report"]["layout"], "html");
    // Cut before its snapshot table, the report is named with its line, as HTML.
    let cut = &text[..text.find("summary=\"This table displays snapshot").unwrap()];
    std::fs::write(reports.join("awr_2_1.html"), cut).unwrap();
    let o = dbio(&["awr", s(&reports_dir), "--group", group]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let at = format!(
        "awr_2_1.html: line {} (HTML): no \"Elapsed:\" row",
        cut.lines().count()
    );
    assert!(stderr(&o).contains(&at), "{}", stderr(&o));
}

#[test]
fn a_plan_file_runs_its_hooks_on_each_change_of_configuration() {
    let _one_at_a_time = serial();
    let dir = scratch();
    let hooks = dir.path().join("hooks.txt");
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            r#"
users = "1,2"
repeats = 1
time = "150ms"
[options]
target = "{}"
size = "64MiB"
workload = "single-block-read"
[[config]]
name = "a"
before = "echo $DBIO_SWEEP_CONFIG-$DBIO_SWEEP_USERS >> {}"
[[config]]
name = "b"
outstanding = 4
before = "echo $DBIO_SWEEP_CONFIG-$DBIO_SWEEP_USERS >> {}"
"#,
            s(&dir.path().join("ds")),
            s(&hooks),
            s(&hooks)
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = dbio(&["sweep", "--plan", s(&plan), "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&hooks).unwrap(),
        "a-1\nb-1\na-2\nb-2\n"
    );
    assert_eq!(
        json(&out.join("runs/b/u2-r1.json"))["config"]["outstanding"],
        4
    );
    // A mistake in the plan shows before anything runs, with its line.
    std::fs::write(&plan, "users = \"1..2\"\nrepeat = 3\n").unwrap();
    let o = dbio(&[
        "sweep",
        "--plan",
        s(&plan),
        "--out",
        s(&dir.path().join("out2")),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("plan.toml line 2: unknown field `repeat`"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path().join("out2").exists());
}

/// Options of a sweep on the null engine with the OLTP mix (every class, no files).
const NULL_OLTP: &str = "--engine null --profile oltp";

#[test]
fn three_repeats_warn_at_plan_time_and_still_call_a_large_difference() {
    let _one_at_a_time = serial();
    let dir = scratch();
    let out = dir.path().join("sweep");
    // One configuration paced by a think time before every I/O, one free: a difference
    // of orders of magnitude, measured, not assumed.
    let o = dbio(&[
        "sweep",
        "--out",
        s(&out),
        "--repeats",
        "3",
        "--time",
        "300ms",
        "--options",
        NULL_OLTP,
        "--config",
        "paced=--outstanding 1 --think-frequency 1 --think-min 1ms --think-max 1ms",
        "--config",
        "free=--outstanding 8",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let warning = err.lines().next().unwrap();
    assert!(
        warning.starts_with(
            "sweep: warning: 3 repeats: the signed-rank test can never reach the 5% level with \
             fewer than 6 pairs"
        ) && warning.contains("--repeats 7"),
        "the warning comes before the first run: {err}"
    );
    let cmp_json = dir.path().join("cmp.json");
    let html = dir.path().join("cmp.html");
    let o = dbio(&[
        "compare",
        s(&out),
        "--baseline",
        "paced",
        "--json",
        s(&cmp_json),
        "--html",
        s(&html),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cmp = json(&cmp_json);
    let runs = |config: &str| -> Vec<f64> {
        (1..=3)
            .map(|r| {
                json(&out.join(format!("runs/{config}/u1-r{r}.json")))["iops"]
                    .as_f64()
                    .unwrap()
            })
            .collect()
    };
    let (paced, free) = (runs("paced"), runs("free"));
    assert!(
        free.iter().fold(f64::INFINITY, |a, b| a.min(*b))
            > 5.0 * paced.iter().fold(0.0f64, |a, b| a.max(*b)),
        "the setup gives a large difference: {paced:?} {free:?}"
    );
    let iops = pair(&cmp, "free", "iops");
    assert_eq!(iops["verdict"], "better", "{iops}");
    // Three pairs: the signed-rank test cannot reach 5%, so the paired t-test decides,
    // saying what it assumes.
    assert_eq!(iops["test"], "paired-t", "{iops}");
    assert!(iops["test_note"]
        .as_str()
        .unwrap()
        .starts_with("assumes normally distributed per-repeat log ratios"));
    // The size is the geometric mean of the per-repeat ratios.
    let e = &iops["effect"];
    let logs: f64 = free.iter().zip(&paced).map(|(f, p)| (f / p).ln()).sum();
    assert!(
        (e["factor"].as_f64().unwrap() / (logs / 3.0).exp() - 1.0).abs() < 1e-9,
        "{e}"
    );
    assert!(
        e["change_ci95"][0].as_f64().unwrap() > 0.0,
        "the interval excludes no change: {e}"
    );
    let text = String::from_utf8_lossy(&o.stdout);
    let said = format!(
        "free against paced: IOPS {:.1}x better (p ",
        e["factor"].as_f64().unwrap()
    );
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains(&said), "{said}\n{text}");
    // The OLTP mix charts single-block reads, not the class first in name order (DBWR).
    assert_eq!(cmp["class"], "single-block-read");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("single-block-read latency (mean, us) against IOPS"));
    assert!(!page.contains("dbwr-write latency (mean, us)"));
    assert!(page.find("Verdict against paced").unwrap() < page.find("<svg").unwrap());
    // --class chooses another; a class the runs do not have is named.
    let o = dbio(&[
        "compare",
        s(&out),
        "--baseline",
        "paced",
        "--class",
        "redo-write",
        "--json",
        s(&cmp_json),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json(&cmp_json)["class"], "redo-write");
    let o = dbio(&["compare", s(&out), "--class", "redo"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--class \"redo\": no such I/O class"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    // Runs whose builds differ are warned about, and refused with --strict.
    let moved = out.join("runs/free/u1-r2.json");
    let mut r = json(&moved);
    r["provenance"]["dbio_version"] = "0.0.1".into();
    std::fs::write(&moved, serde_json::to_vec(&r).unwrap()).unwrap();
    let o = dbio(&["compare", s(&out)]);
    assert!(o.status.success());
    assert!(
        stderr(&o).contains("warning: the runs differ in dbio version: 0.0.1 (1 run: free)"),
        "{}",
        stderr(&o)
    );
    let o = dbio(&["compare", s(&out), "--strict"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--strict"), "{}", stderr(&o));
}

#[test]
fn a_typo_in_a_configuration_stops_the_sweep_before_any_run() {
    let _one_at_a_time = serial();
    let dir = scratch();
    let out = dir.path().join("sweep");
    let o = dbio(&[
        "sweep",
        "--out",
        s(&out),
        "--time",
        "100ms",
        "--options",
        NULL_OLTP,
        "--config",
        "a=--outstanding 1",
        "--config",
        "b=--outstandin 8",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).trim(),
        "dbio: plan: config \"b\": option --outstandin: `dbio run` has no such option"
    );
    assert!(!out.exists(), "no --out left behind");
}

#[test]
fn a_failed_configuration_resumes_with_a_corrected_plan() {
    let _one_at_a_time = serial();
    let dir = scratch();
    let out = dir.path().join("sweep");
    let file = dir.path().join("plain");
    std::fs::write(&file, "not a directory").unwrap();
    let ds = dir.path().join("ds");
    let sweep = |b: &str, resume: bool| {
        let mut args = vec![
            "sweep",
            "--out",
            s(&out),
            "--repeats",
            "2",
            "--time",
            "100ms",
        ];
        if resume {
            args.push("--resume");
        }
        let a = format!("a=--target {} --size 64MiB", s(&ds));
        let b = format!("b={b}");
        let mut owned: Vec<String> = args.iter().map(|x| x.to_string()).collect();
        owned.extend(["--options".into(), "--workload single-block-read".into()]);
        owned.extend(["--config".into(), a, "--config".into(), b]);
        let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
        dbio(&refs)
    };
    // b's target parses but cannot hold a data set: b's first run fails.
    let wrong = format!("--target {}/ds --size 64MiB", s(&file));
    let o = sweep(&wrong, false);
    assert_ne!(o.status.code(), Some(0));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("dbio sweep --resume --out {}", s(&out)))
            && err.contains("corrected --config"),
        "{err}"
    );
    // The corrected plan replaces b's options; a's results stay.
    let right = format!("--target {} --size 64MiB --outstanding 4", s(&ds));
    let o = sweep(&right, true);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("sweep: corrected plan for b"),
        "{}",
        stderr(&o)
    );
    let m = json(&out.join("sweep.json"));
    assert!(m["runs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["status"] == "done"));
    assert_eq!(
        json(&out.join("runs/b/u1-r1.json"))["config"]["outstanding"],
        4
    );
    // Options of a configuration with results cannot change under its name.
    let o = sweep(
        &format!("--target {} --size 64MiB --outstanding 2", s(&ds)),
        true,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("config \"b\" has 2 results already"),
        "{}",
        stderr(&o)
    );
}
