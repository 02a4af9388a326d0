use super::*;
use crate::sample;
use dbio_stats::{CalibrateResult, RunResult, FORMAT_VERSION};
use std::path::Path;

fn run() -> AnyResult {
    AnyResult::Run(sample::run())
}

fn cal() -> AnyResult {
    AnyResult::Calibrate(sample::calibrate())
}

#[test]
fn terminal_run_has_every_class_and_totals() {
    let t = terminal(&run());
    for col in [
        "ios", "IOPS", "MB/s", "mean us", "p50 us", "p99 us", "p99.9 us", "max us",
    ] {
        assert!(t.contains(col), "missing column {col}:\n{t}");
    }
    assert!(t.contains("single-block-read") && t.contains("db file parallel write"));
    assert!(t.contains("1,446,300"), "{t}");
    assert!(t.lines().any(|l| l.trim_start().starts_with("total")));
    assert!(t.contains("cpu_us_per_io"));
    assert!(!t.contains("INTERRUPTED"));
    // Right-aligned numbers: the header and rows of the class table end at
    // the same column.
    let table: Vec<&str> = t
        .lines()
        .skip_while(|l| !l.contains("wait event"))
        .take(5)
        .collect();
    let width = table[0].len();
    assert!(table.iter().all(|l| l.len() == width), "{table:#?}");
}

#[test]
fn terminal_marks_interrupted_run() {
    let mut r = sample::run();
    r.interrupted = true;
    r.stop_reason = Some("SIGINT".into());
    let t = terminal(&AnyResult::Run(r));
    assert!(t.contains("INTERRUPTED (SIGINT)"), "{t}");
}

#[test]
fn redo_flush_is_said_only_when_not_the_default() {
    let said = |r: &dbio_stats::RunResult| {
        let r = AnyResult::Run(r.clone());
        (terminal(&r), markdown(&r))
    };
    let mut r = sample::run();
    let (text, md) = said(&r);
    assert!(!text.contains("redo writes") && !md.contains("Redo writes"));
    r.config.redo_flush = Some("fdatasync".into());
    r.config.redo_buffered = true;
    let (text, md) = said(&r);
    let how = "each written, then the log fdatasync'ed, through the page cache";
    assert!(text.contains(&format!("redo writes: {how}\n")), "{text}");
    assert!(md.contains("Redo writes") && md.contains(how), "{md}");
}

#[test]
fn terminal_calibrate_headline_and_curves() {
    let t = terminal(&cal());
    assert!(t.contains("max_iops") && t.contains("114,100"), "{t}");
    assert!(t.contains("max_mbps") && t.contains("1,447.0"), "{t}");
    assert!(t.contains("latency_us") && t.contains("548.0"), "{t}");
    assert!(t.contains("IOPS ramp), stopped: knee"), "{t}");
    assert!(t.contains(" 64 *  "), "max point marked:\n{t}");
    // 7 IOPS points say whether they are within the cap; the 4 MB/s points,
    // whose ramp has no cap, do not.
    let points = t
        .lines()
        .filter(|l| l.ends_with("yes") || l.ends_with("no"))
        .count();
    assert_eq!(points, 7, "{t}");
    let mbps = t.split("MB/s ramp").nth(1).unwrap();
    assert!(!mbps.contains("within cap"), "{t}");
}

#[test]
fn empty_run_renders_without_nan() {
    let r = AnyResult::Run(RunResult::default());
    for text in [terminal(&r), markdown(&r), html(&r), csv(&r)] {
        assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
    }
    assert!(terminal(&r).contains("no I/O completed"));
    let c = AnyResult::Calibrate(CalibrateResult::default());
    for text in [terminal(&c), markdown(&c), html(&c), csv(&c)] {
        assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
    }
}

#[test]
fn csv_run_one_row_per_class() {
    let text = csv(&run());
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("class,wait_event,ios,bytes,iops,mbps,mean_us,p50_us"));
    assert_eq!(lines.len(), 1 + 3);
    let cols = lines[0].split(',').count();
    assert!(lines.iter().all(|l| l.split(',').count() == cols));
    assert!(lines[1].starts_with("single-block-read,db file sequential read,1446300,"));
}

#[test]
fn csv_calibrate_one_row_per_point() {
    let text = csv(&cal());
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("ramp,io_size,outstanding"));
    assert_eq!(lines.len(), 1 + 7 + 4);
    assert!(lines[1].starts_with("iops,8192,1,"));
    assert!(lines[8].starts_with("mbps,1048576,1,"));
}

#[test]
fn csv_quotes_awkward_names() {
    let mut r = sample::run();
    r.classes[0].class = "odd,\"name\"".into();
    let text = csv(&AnyResult::Run(r));
    assert!(text
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("\"odd,\"\"name\"\"\","));
}

#[test]
fn markdown_has_awr_sections() {
    let md = markdown(&run());
    for s in [
        "## Summary",
        "## Top wait events by time",
        "## Wait event histogram",
        "## File I/O stats",
        "## Time series",
    ] {
        assert!(md.contains(s), "missing {s}");
    }
    // Top events sorted by total wait time: sequential reads waited
    // 1,446,300 x 82.9 us = 119.9 s, more than DBWR's 38.6 s.
    let top = md.split("## Top wait events").nth(1).unwrap();
    let seq = top.find("| db file sequential read").unwrap();
    let dbwr = top.find("| db file parallel write").unwrap();
    assert!(seq < dbwr);
    assert!(md.contains("| [64, 128) us |"));
    assert!(md.contains("/data/dbio/redo01.log"));
    // 30 seconds: one row each, plus header and rule.
    let series = md.split("## Time series").nth(1).unwrap();
    assert_eq!(series.lines().filter(|l| l.starts_with('|')).count(), 32);
}

#[test]
fn markdown_calibrate_sections() {
    let md = markdown(&cal());
    assert!(md.contains("## IOPS ramp (8 KiB random reads), stopped: knee"));
    assert!(md.contains("## MB/s ramp (1 MiB reads), stopped: knee"));
    assert!(md.contains("## Latency histogram at max IOPS"));
}

#[test]
fn long_series_is_coarsened_keeping_totals() {
    let series: Vec<SecondSampleAlias> = (1..=1000)
        .map(|t| SecondSampleAlias {
            t_s: f64::from(t),
            iops: if t % 2 == 0 { 100.0 } else { 300.0 },
            mbps: 1.0,
            mean_us: if t % 2 == 0 { 10.0 } else { 50.0 },
            max_us: f64::from(t),
        })
        .collect();
    let c = markdown::coarsen(&series, 100);
    assert_eq!(c.len(), 100);
    assert_eq!(c[0].t_s, 10.0);
    assert!((c[0].iops - 200.0).abs() < 1e-9);
    // I/O-weighted: (100*10 + 300*50) / 400 = 40.
    assert!((c[0].mean_us - 40.0).abs() < 1e-9);
    assert_eq!(c[99].max_us, 1000.0);
}

type SecondSampleAlias = dbio_stats::SecondSample;

#[test]
fn html_is_self_contained_with_charts() {
    for r in [run(), cal()] {
        let h = html(&r);
        assert!(h.starts_with("<!DOCTYPE html>"));
        assert!(h.contains("<svg"));
        assert!(!h.contains("http"), "no external references");
        assert!(!h.contains("<script"));
        assert!(!h.contains("src="));
        assert!(!h.contains("NaN"));
        assert_eq!(h.matches("<svg").count(), h.matches("</svg>").count());
    }
    let h = html(&run());
    // A histogram per class and two time-series charts.
    assert_eq!(h.matches("<svg").count(), 3 + 2);
    let h = html(&cal());
    // Mean and p99 latency against IOPS each on a scale of its own,
    // MB/s/outstanding, latency/MB/s and the histogram.
    assert_eq!(h.matches("<svg").count(), 5);
    assert!(h.contains("max IOPS 114,100"));
    // Cards say what they hold, not the JSON keys.
    assert!(h.contains(">Max IOPS<") && h.contains(">Max MB/s<"));
    assert!(!h.contains("class=\"k\">max_iops"));
}

#[test]
fn html_escapes_every_string() {
    let mut r = sample::run();
    r.config.target = "<script>alert(1)</script>".into();
    r.classes[0].wait_event = "a&b<i>".into();
    r.files[0].name = "\"><img onerror=x>".into();
    r.interrupted = true;
    r.stop_reason = Some("<b>".into());
    let h = html(&AnyResult::Run(r));
    assert!(
        !h.contains("<script>") && !h.contains("<i>") && !h.contains("<img") && !h.contains("<b>")
    );
    assert!(h.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(h.contains("a&amp;b&lt;i&gt;"));
    assert!(h.contains("INTERRUPTED (&lt;b&gt;)"));
}

#[test]
fn json_round_trips_through_load() {
    let dir = tempfile::tempdir().unwrap();
    for r in [run(), cal()] {
        let p = dir.path().join("r.json");
        write_outputs(
            &r,
            &Outputs {
                json: Some(p.clone()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(load(&p).unwrap(), r);
    }
}

#[test]
fn write_outputs_writes_each_format_and_no_temp_files() {
    let dir = tempfile::tempdir().unwrap();
    let o = Outputs {
        json: Some(dir.path().join("a.json")),
        csv: Some(dir.path().join("a.csv")),
        md: Some(dir.path().join("a.md")),
        html: Some(dir.path().join("a.html")),
    };
    write_outputs(&run(), &o).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["a.csv", "a.html", "a.json", "a.md"]);
    let md = std::fs::read_to_string(dir.path().join("a.md")).unwrap();
    assert_eq!(md, markdown(&run()));
}

#[test]
fn write_error_names_the_path_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir").join("out.html");
    let err = write_outputs(
        &run(),
        &Outputs {
            html: Some(missing.clone()),
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains(&missing.display().to_string()), "{err}");
    assert!(!err.contains('\n'));
    // Renaming onto a directory fails after the temp file was written: the
    // temp file must be gone.
    let target = dir.path().join("is-a-dir");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("x"), b"keep").unwrap();
    let err = write_outputs(
        &run(),
        &Outputs {
            csv: Some(target.clone()),
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("is-a-dir"), "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "only the directory remains");
}

fn load_err(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("in.json");
    std::fs::write(&p, text).unwrap();
    let e = load(&p).unwrap_err().to_string();
    assert!(e.contains("in.json"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    e
}

#[test]
fn load_errors_are_one_line_and_specific() {
    let e = load(Path::new("/nonexistent/dbio/run.json"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("cannot read /nonexistent/dbio/run.json"),
        "{e}"
    );
    assert!(load_err("<html>").contains("not JSON"));
    assert!(load_err("{\"a\": 1}").contains("no \"kind\""));
    assert!(load_err("{\"kind\": \"sweep\", \"format_version\": 1}")
        .contains("unknown result kind \"sweep\""));
    let newer = format!(
        "{{\"kind\": \"run\", \"format_version\": {}}}",
        FORMAT_VERSION + 1
    );
    assert!(load_err(&newer).contains("newer"));
    assert!(load_err("{\"kind\": \"run\", \"format_version\": 1}")
        .contains("not a valid dbio run result"));
}

/// A run as dbio 0.1 wrote it (format 1), with its dNFS views at the top
/// level and the server of each file in `files`.
const FORMAT_1_NFS_RUN: &str = r#"{
  "kind": "run", "format_version": 1, "dbio_version": "0.1.0",
  "started_unix": 1767225600.0, "elapsed_s": 2.0, "interrupted": false,
  "config": { "target": "nfs://10.0.0.2/export/dbio", "engine": "nfs", "profile": "oltp",
    "workloads": ["single-block-read"], "users": 1, "outstanding": 4, "block_size": 8192,
    "direct": true, "time_s": 2.0, "update_pct": 0, "scan_pct": 0, "redo_stress": "lite",
    "dataset_bytes": 67108864 },
  "ios": 2000, "iops": 1000.0, "mbps": 8.192, "failed_ios": 0,
  "cpu": { "user_s": 0.1, "system_s": 0.2 }, "cpu_us_per_io": 150.0,
  "classes": [{ "class": "single-block-read", "wait_event": "db file sequential read",
    "ios": 2000, "bytes": 16384000, "iops": 1000.0, "mbps": 8.192, "mean_us": 400.0,
    "p50_us": 380.0, "p90_us": 500.0, "p99_us": 900.0, "p999_us": 1500.0, "min_us": 120.0,
    "max_us": 1800.0, "histogram": [{ "lower_us": 256, "upper_us": 512, "count": 2000 }] }],
  "files": [{ "name": "dbio-data-01.dbf", "size": 67108864, "reads": 2000, "writes": 0,
    "read_bytes": 16384000, "write_bytes": 0, "read_mean_us": 400.0, "write_mean_us": 0.0,
    "server": "filer1" }],
  "series": [{ "t_s": 1.0, "iops": 1000.0, "mbps": 8.192, "mean_us": 400.0, "max_us": 1800.0 },
    { "t_s": 2.0, "iops": 1000.0, "mbps": 8.192, "mean_us": 400.0, "max_us": 900.0 }],
  "servers": [{ "name": "filer1", "export": "/export", "nfs_version": "3", "nfs_port": 2049,
    "mount_port": 20048, "rtmax": 1048576, "wtmax": 1048576, "rsize": 1048576,
    "wsize": 1048576, "paths": ["10.0.0.2"] }],
  "channels": [{ "path": 0, "local_addr": "10.0.0.1:901", "server_addr": "10.0.0.2:2049",
    "sends": 2010, "receives": 2010, "retransmits": 0, "reconnects": 1,
    "bytes_sent": 300000, "bytes_received": 16700000 }],
  "nfs_stats": { "calls": [{ "procedure": "READ", "calls": 2000 },
    { "procedure": "LOOKUP", "calls": 10 }], "read_bytes": 16384000, "write_bytes": 0 },
  "events": [{ "t_s": 1.2, "path": "10.0.0.2", "what": "down: connection reset",
    "requests_moved": 3 }]
}"#;

#[test]
fn format_1_results_still_read_with_their_nfs_views() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("v1.json");
    std::fs::write(&p, FORMAT_1_NFS_RUN).unwrap();
    let AnyResult::Run(r) = load(&p).unwrap() else {
        panic!("a run")
    };
    assert_eq!(r.format_version, FORMAT_VERSION);
    assert_eq!(r.ios, 2000);
    let nfs = r.nfs.as_deref().expect("the NFS section");
    assert_eq!(nfs.servers[0].name, "filer1");
    assert_eq!(nfs.servers[0].mount_port, Some(20048));
    assert_eq!(nfs.channels[0].local_addr, "10.0.0.1:901");
    assert_eq!(nfs.channels[0].reconnects, 1);
    assert_eq!(nfs.files.len(), 1);
    assert_eq!(nfs.files[0].name, "dbio-data-01.dbf");
    assert_eq!(nfs.files[0].server, "filer1");
    assert_eq!(nfs.files[0].size, 67108864);
    assert_eq!(nfs.stats.calls[1].procedure, "LOOKUP");
    assert_eq!(nfs.stats.read_bytes, 16384000);
    assert_eq!(nfs.events[0].requests_moved, 3);
    assert_eq!(nfs.events[0].recovered_after_s, None);
    let text = terminal(&AnyResult::Run(r.clone()));
    for needle in [
        "NFS servers",
        "NFS channels",
        "NFS files",
        "LOOKUP",
        "connection reset",
    ] {
        assert!(text.contains(needle), "{needle} missing");
    }
    // Written again, it is a current result and reads back the same.
    let again = dir.path().join("v2.json");
    write_outputs(
        &AnyResult::Run(r.clone()),
        &Outputs {
            json: Some(again.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    let text = std::fs::read_to_string(&again).unwrap();
    assert!(!text.contains("\"nfs_stats\""));
    assert_eq!(load(&again).unwrap(), AnyResult::Run(r));
}

#[test]
fn labels_show_in_the_summaries() {
    let AnyResult::Run(mut r) = run() else {
        unreachable!()
    };
    r.labels.insert("rank".into(), "3".into());
    r.labels.insert("config".into(), "a".into());
    let any = AnyResult::Run(r);
    for text in [terminal(&any), markdown(&any), html(&any)] {
        assert!(text.contains("config=a, rank=3"), "{text}");
    }
    assert!(json(&any).unwrap().contains("\"labels\""));
    assert!(
        !json(&run()).unwrap().contains("\"labels\""),
        "left out when empty"
    );
}

#[test]
fn point_labels_that_would_overlap_are_left_out() {
    // Six points, four crowded at the knee: labels 1, 2, 4 and 32 fit.
    let pts = [
        (100.0, 50.0),
        (2000.0, 60.0),
        (4000.0, 80.0),
        (4010.0, 81.0),
    ];
    let svg = crate::svg::line_chart(&crate::svg::LineChart {
        title: "t".into(),
        x_label: "x".into(),
        y_label: "y".into(),
        lines: vec![crate::svg::Line {
            name: "mean".into(),
            color: crate::svg::PALETTE[0],
            points: pts
                .iter()
                .copied()
                .chain([(4020.0, 82.0), (8000.0, 90.0)])
                .collect(),
            labels: ["1", "2", "4", "8", "16", "32"].map(String::from).to_vec(),
            markers: true,
            dashed: false,
        }],
        reference: None,
        highlight: None,
    });
    let shown: Vec<&str> = svg
        .split("class=\"pl\" text-anchor=\"middle\">")
        .skip(1)
        .map(|s| s.split('<').next().unwrap())
        .collect();
    assert_eq!(shown, ["1", "2", "4", "32"]);
    assert_eq!(
        svg.matches("<circle").count(),
        6,
        "every point keeps its marker"
    );
}
