use super::*;

fn report(name: &str) -> String {
    let path = format!("{}/testdata/awr/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn event<'a>(r: &'a AwrReport, name: &str) -> &'a AwrEvent {
    r.events.iter().find(|e| e.event == name).unwrap()
}

#[test]
fn reads_an_11g_report() {
    let r = parse(&report("11g.txt")).unwrap();
    assert_eq!((r.db_name.as_str(), r.instance.as_str()), ("SLOB", "SLOB"));
    assert_eq!((r.begin_snap, r.end_snap), (Some(410), Some(411)));
    assert_eq!(r.begin_time.as_deref(), Some("02-Mar-15 10:00:03"));
    assert!((r.elapsed_s - 301.2).abs() < 1e-9);
    assert_eq!(r.load_profile["Physical reads"], 21_406.2);
    assert_eq!(r.events.len(), 5);
    let e = event(&r, "db file sequential read");
    assert_eq!(e.waits, Some(6_302_118.0));
    assert_eq!(
        (e.total_wait_s, e.avg_wait_us, e.db_time_pct),
        (4470.0, Some(1000.0), Some(92.9))
    );
    assert_eq!(e.wait_class, "User I/O");
    let cpu = event(&r, "DB CPU");
    assert_eq!(
        (cpu.waits, cpu.avg_wait_us, cpu.db_time_pct),
        (None, None, Some(7.5))
    );
    let m = r.metrics();
    assert!((m["iops"] - (21_406.2 + 812.5)).abs() < 1e-9);
    assert!(!m.contains_key("mbps"), "11g has no MB per second");
    assert_eq!(m["log file sync mean_us"], 3000.0);
    assert!(
        !m.contains_key("latch: cache buffers chains mean_us"),
        "not an I/O wait"
    );
}

#[test]
fn reads_a_12c_report() {
    let r = parse(&report("12c.txt")).unwrap();
    assert_eq!(
        (r.db_name.as_str(), r.instance.as_str()),
        ("PDBSLOB", "slob1")
    );
    assert_eq!(r.elapsed_s, 600.0);
    let e = event(&r, "db file sequential read");
    assert_eq!((e.waits, e.total_wait_s), (Some(16_239_600.0), 5768.0));
    assert!((e.avg_wait_us.unwrap() - 360.0).abs() < 1e-9);
    let m = r.metrics();
    assert!((m["iops"] - (27_001.7 + 998.0)).abs() < 1e-9);
    assert!((m["mbps"] - (211.5 + 9.4) * 1.048_576).abs() < 1e-9);
    assert!((m["db file sequential read iops"] - 16_239_600.0 / 600.0).abs() < 1e-9);
}

#[test]
fn reads_a_19c_report_with_units_and_histograms() {
    let r = parse(&report("19c.txt")).unwrap();
    // 19c puts the instance in a table of its own; the DB Name line's third field is the
    // unique name, which is what identifies the database there.
    assert_eq!(r.db_name, "ORCL19");
    assert_eq!(r.elapsed_s, 900.0);
    let e = event(&r, "db file sequential read");
    assert_eq!((e.avg_wait_us, e.total_wait_s), (Some(355.0), 8144.1));
    assert_eq!(event(&r, "log file sync").avg_wait_us, Some(1220.0));
    let h = &r.histograms["db file sequential read"];
    assert_eq!(h[..3], [(1000, 96.1), (2000, 2.9), (4000, 0.6)]);
    assert_eq!(h.last(), Some(&(1_000_000, 0.0)));
    assert_eq!(r.histograms["log file sync"].len(), 5);
}

#[test]
fn a_report_it_cannot_read_names_the_line() {
    let e = parse(&report("truncated.txt")).unwrap_err();
    assert_eq!(e.line, 19);
    assert!(
        e.what
            .contains("total wait time of \"db file sequential read\""),
        "{e}"
    );
    let e = parse("hello\nworld\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 1: not an AWR text report (no \"WORKLOAD REPOSITORY report\" title)"
    );
    let no_elapsed = report("11g.txt").replace("Elapsed:", "Lapsed:");
    assert!(parse(&no_elapsed).unwrap_err().what.contains("Elapsed"));
    // Nothing in a report can make the reader panic: cut it anywhere.
    let text = report("19c.txt");
    for cut in (0..text.len()).step_by(7) {
        if text.is_char_boundary(cut) {
            let _ = parse(&text[..cut]);
        }
    }
}

#[test]
fn a_directory_of_reports_becomes_observations() {
    let dir = tempfile::tempdir().unwrap();
    for (config, text) in [("NFS", "11g.txt"), ("DNFS", "12c.txt")] {
        std::fs::create_dir_all(dir.path().join(config)).unwrap();
        for (users, repeat) in [(1, 1), (1, 2), (4, 1)] {
            std::fs::write(
                dir.path()
                    .join(format!("{config}/awr_{users}_{repeat}.txt")),
                report(text),
            )
            .unwrap();
        }
    }
    std::fs::write(dir.path().join("NFS/awr_8_1.txt"), report("truncated.txt")).unwrap();
    std::fs::write(dir.path().join("notes.md"), "not a report").unwrap();
    let group = Regex::new(r"(?P<config>[A-Z]+)/awr_(?P<users>\d+)_(?P<repeat>\d+)\.txt").unwrap();
    let got = import(dir.path(), &group).unwrap();
    assert_eq!(got.observations.len(), 6);
    assert_eq!(got.unmatched, ["notes.md"]);
    assert_eq!(got.problems.len(), 1);
    assert!(
        got.problems[0].contains("awr_8_1.txt: line 19:"),
        "{:?}",
        got.problems
    );
    let o = got
        .observations
        .iter()
        .find(|o| o.config == "DNFS" && o.load == 4)
        .unwrap();
    assert_eq!(o.repeat, Some(1));
    assert!((o.metrics["iops"] - 27_999.7).abs() < 1e-6);
    let e = import(dir.path(), &Regex::new("(?P<users>\\d+)").unwrap()).unwrap_err();
    assert!(e.to_string().contains("(?P<config>"), "{e}");
}

#[test]
fn parameters_of_a_report() {
    let p = parameters(&report("19c.txt"));
    let get = |k: &str| p.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("filesystemio_options"), Some("asynch"));
    assert_eq!(get("parallel_max_servers"), Some("80"));
    assert_eq!(p.len(), 4);
    assert!(parameters(&report("11g.txt")).is_empty());
}
