//! Reports written to each version's layout (testdata/awr); the real reports Oracle
//! printed are read in `tests_real.rs`, and reports with every section in
//! `tests_full.rs`.

use super::*;

fn report(name: &str) -> String {
    let path = format!("{}/testdata/awr/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub(super) fn event<'a>(r: &'a AwrReport, name: &str) -> &'a WaitEvent {
    r.events
        .iter()
        .find(|e| e.event == name)
        .unwrap_or_else(|| panic!("no event {name:?}"))
}

pub(super) fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn the_mean_comes_from_time_over_waits_when_the_column_is_rounded() {
    let r = parse(&report("11g.txt")).unwrap();
    assert_eq!((r.db_name.as_str(), r.instance.as_str()), ("SLOB", "SLOB"));
    assert_eq!((r.begin_snap, r.end_snap), (Some(410), Some(411)));
    assert_eq!(r.begin_time.as_deref(), Some("02-Mar-15 10:00:03"));
    assert_eq!(r.release.as_deref(), Some("11.2.0.4.0"));
    assert!(close(r.elapsed_s, 301.2, 1e-9));
    assert_eq!(r.load_profile.per_second["Physical reads"], 21_406.2);
    // "db file sequential read  6,302,118  4,470  1": the Avg column says 1 ms, but
    // 4,470 s over 6,302,118 waits is 709 us.
    let e = event(&r, "db file sequential read");
    assert_eq!(e.waits, Some(6_302_118.0));
    assert_eq!((e.total_wait_s, e.db_time_pct), (4470.0, Some(92.9)));
    assert!(close(
        e.mean_wait_us.unwrap(),
        4470.0 / 6_302_118.0 * 1e6,
        1e-9
    ));
    assert_eq!(e.mean_source, Some(MeanSource::TopTimeOverWaits));
    assert!(e.mean_error_us.unwrap() < 0.1, "{e:?}");
    assert_eq!(e.wait_class, "User I/O");
    // "log file sync  937  3  3": 3 s over 937 waits is less precise (+-534 us) than
    // the column's whole milliseconds (+-500 us).
    let sync = event(&r, "log file sync");
    assert_eq!(
        (sync.mean_wait_us, sync.mean_source),
        (Some(3000.0), Some(MeanSource::TopAvgColumn))
    );
    let cpu = event(&r, "DB CPU");
    assert_eq!(
        (cpu.waits, cpu.mean_wait_us, cpu.db_time_pct),
        (None, None, Some(7.5))
    );
    // I/O requests from the Instance Activity Stats ("physical read IO requests ...
    // 20,933.6"), not the blocks of the Load Profile (21,406.2 + 812.5).
    let lp = &r.load_profile;
    assert_eq!((lp.read_iops, lp.write_iops), (Some(20_933.6), Some(647.8)));
    assert_eq!(lp.requests_from.as_deref(), Some("Instance Activity Stats"));
    assert!(close(
        lp.read_mib_s.unwrap(),
        175_361_043.9 / 1_048_576.0,
        1e-9
    ));
    assert!(close(
        lp.logical_to_physical.unwrap(),
        24_551.3 / 21_406.2,
        1e-9
    ));
    let m = r.metrics();
    assert!(close(m["iops"], 20_933.6 + 647.8, 1e-9));
    assert!(close(m["log file sync mean_us"], 3000.0, 1e-9));
    assert!(
        !m.contains_key("latch: cache buffers chains mean_us"),
        "not an I/O wait"
    );
}

#[test]
fn reads_a_12_1_report() {
    let r = parse(&report("12c.txt")).unwrap();
    assert_eq!(
        (r.db_name.as_str(), r.instance.as_str()),
        ("PDBSLOB", "slob1")
    );
    assert_eq!(r.elapsed_s, 600.0);
    let e = event(&r, "db file sequential read");
    assert_eq!((e.waits, e.total_wait_s), (Some(16_239_600.0), 5768.0));
    // 5768 s / 16,239,600 waits = 355.18 us; the "0.36" ms column is +-5 us.
    assert!(close(
        e.mean_wait_us.unwrap(),
        5768.0 / 16_239_600.0 * 1e6,
        1e-9
    ));
    // "log file sync  1,502  1  0.67": 1 s / 1,502 is +-333 us, the column +-5 us.
    assert_eq!(event(&r, "log file sync").mean_wait_us, Some(670.0));
    let m = r.metrics();
    assert!(close(m["iops"], 27_001.7 + 998.0, 1e-9));
    assert!(close(m["mbps"], (211.5 + 9.4) * 1.048_576, 1e-9));
    assert!(close(
        m["db file sequential read iops"],
        16_239_600.0 / 600.0,
        1e-9
    ));
    // Only in Foreground Wait Events: "direct path read  3,110  0  1.2  0": 1.2 s over
    // 3,110 waits (+-16 us) beats the whole-millisecond column's 0 (+-500 us).
    let d = event(&r, "direct path read");
    assert!(close(d.mean_wait_us.unwrap(), 1.2 / 3110.0 * 1e6, 1e-9));
    assert_eq!(
        (d.mean_source, d.wait_class.as_str()),
        (Some(MeanSource::EventsTimeOverWaits), "User I/O")
    );
    // Histogram: "<1ms 40.2 <2ms 35.1 ... <32ms 1.1 <=1s 1.1", then the Detail from
    // 32 ms: "<32ms 98.9 <64ms .4 <1/8s .3 <1/4s .3 <1/2s .1".
    let h = &r.histograms["db file parallel read"];
    let b: Vec<(u64, f64)> = h.buckets.iter().map(|b| (b.upper_us, b.pct)).collect();
    assert_eq!(b[..2], [(1024, 40.2), (2048, 35.1)]);
    assert_eq!(
        b[6..10],
        [
            (65_536, 0.4),
            (131_072, 0.3),
            (262_144, 0.3),
            (524_288, 0.1)
        ]
    );
    assert!(close(b[5].1, 98.9 - (40.2 + 35.1 + 14.0 + 6.3 + 2.2), 1e-9));
    // "Buffer Cache Re  124G 27001.5 211.46 ... 16.3M 0.36"; "DBWR ... N/A".
    let f = &r.io_by_function;
    assert_eq!(
        (f[0].name.as_str(), f[0].read_mib, f[0].avg_wait_us),
        ("Buffer Cache Reads", Some(124.0 * 1024.0), Some(360.0))
    );
    assert_eq!((f[1].write_reqs_s, f[1].avg_wait_us), (Some(998.0), None));
    let file = &r.files[0];
    assert_eq!(
        file.file.as_deref(),
        Some("+DATA/PDBSLOB/DATAFILE/iops.271.945621007")
    );
    assert_eq!(
        (file.reads_s, file.avg_read_us, file.writes_s),
        (Some(27_002.0), Some(400.0), Some(998.0))
    );
}

#[test]
fn reads_an_18c_report_with_units_and_microsecond_histograms() {
    let r = parse(&report("18c.txt")).unwrap();
    assert_eq!(
        (r.db_name.as_str(), r.instance.as_str()),
        ("ORA18", "ora18")
    );
    // "control file sequential read  14,402  2.9  201.36us  .0 System I": the class
    // is cut to 8 characters, and the 10 us step of 2.9 s over 14,402 loses to the
    // column's 0.01 us.
    let c = event(&r, "control file sequential read");
    assert_eq!(c.wait_class, "System I/O");
    assert_eq!(c.mean_wait_us, Some(201.36));
    assert!(r
        .metrics()
        .contains_key("control file sequential read mean_us"));
    // Only in Foreground Wait Events: "direct path read  2,004 ... 498.50us".
    let d = event(&r, "direct path read");
    assert_eq!(
        (d.mean_wait_us, d.mean_source),
        (Some(498.5), Some(MeanSource::EventsAvgColumn))
    );
    assert_eq!(d.wait_class, "User I/O");
    let lgwr = &r.background_events[0];
    assert_eq!(
        (lgwr.event.as_str(), lgwr.mean_wait_us),
        ("log file parallel write", Some(802.47))
    );
    // Histogram: the us table up to 512 us, then "(up to 32 ms)" from 512 us on.
    let h = &r.histograms["db file sequential read"];
    let bucket = |upper: u64| h.buckets.iter().find(|b| b.upper_us == upper).unwrap();
    assert!(close(bucket(256).pct, 10.2, 1e-9));
    assert!(close(bucket(512).pct, 50.1, 1e-9));
    assert_eq!((bucket(1024).lower_us, bucket(1024).pct), (512, 29.4));
    assert!(close(bucket(2048).pct, 7.6, 1e-9));
    assert_eq!(h.total_waits, Some(14.4e6));
    let f = &r.io_by_function;
    assert_eq!(f[0].name, "Buffer Cache Reads");
    assert_eq!(
        (f[0].read_reqs_s, f[0].avg_wait_us),
        (Some(12_380.2), Some(479.2))
    );
    assert_eq!(f[2].avg_wait_us, Some(1120.0));
    assert_eq!(f.len(), 3, "TOTAL is left out");
    let ts = &r.tablespaces[0];
    assert_eq!(
        (ts.tablespace.as_str(), ts.reads, ts.avg_read_us),
        ("SOE", Some(14_860_020.0), Some(500.0))
    );
    assert_eq!(
        (ts.blocks_per_read, ts.writes, ts.writes_s),
        (Some(1.2), Some(132_011.0), Some(110.0))
    );
}

#[test]
fn reads_a_19c_report_with_units_and_histograms() {
    let r = parse(&report("19c.txt")).unwrap();
    // 19c puts the instance in a table of its own.
    assert_eq!(
        (r.db_name.as_str(), r.instance.as_str()),
        ("ORCL19", "orcl19")
    );
    assert_eq!(r.elapsed_s, 900.0);
    let e = event(&r, "db file sequential read");
    assert!(close(
        e.mean_wait_us.unwrap(),
        8144.1 / 22_941_270.0 * 1e6,
        1e-9
    ));
    assert_eq!(e.total_wait_s, 8144.1);
    let h = &r.histograms["log file sync"];
    // A blank bucket is a share of 0 and keeps its bounds: "<32ms" is blank.
    let b: Vec<(u64, u64)> = h.buckets.iter().map(|b| (b.lower_us, b.upper_us)).collect();
    assert_eq!(
        b[..6],
        [
            (0, 1024),
            (1024, 2048),
            (2048, 4096),
            (4096, 8192),
            (8192, 16384),
            (16384, 32768)
        ]
    );
    assert_eq!(h.buckets[5].pct, 0.0);
    assert_eq!(h.buckets[0].pct, 70.4);
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
        "line 1: not an AWR text report (no \"WORKLOAD REPOSITORY ... report\" title)"
    );
    let e = parse("<html><body><table><tr><td>1</td></tr></table></body></html>").unwrap_err();
    assert!(
        e.html
            && e.to_string()
                .starts_with("line 1 (HTML): not an AWR HTML report"),
        "{e}"
    );
    let no_elapsed = report("11g.txt").replace("Elapsed:", "Lapsed:");
    assert!(parse(&no_elapsed).unwrap_err().what.contains("Elapsed"));
    // Nothing in a report can make the reader panic: cut it anywhere.
    for name in ["19c.txt", "18c.txt"] {
        let text = report(name);
        for cut in (0..text.len()).step_by(7) {
            if text.is_char_boundary(cut) {
                let _ = parse(&text[..cut]);
            }
        }
    }
}

#[test]
fn crlf_and_a_byte_order_mark_read_alike() {
    for name in ["18c.txt", "12c.txt"] {
        let text = report(name);
        let dos = format!("\u{feff}{}", text.replace('\n', "\r\n"));
        assert_eq!(parse(&dos).unwrap(), parse(&text).unwrap(), "{name}");
    }
    let html = "\u{feff}<html><body><table><tr><td>1</td></tr></table></body></html>";
    assert!(parse(html).unwrap_err().html);
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

#[path = "tests_real.rs"]
mod real;

#[path = "tests_full.rs"]
mod full;

#[test]
fn hostile_reports_are_read_quickly() {
    // A "ruler" of 40,000 columns under 40,000 words, and a Top table of 20,000 rows
    // matched against a Wait Events table of as many: bounded, not quadratic.
    let wide = report("18c.txt").replace(
        "Top 10 Foreground Events by Total Wait Time\n",
        &format!(
            "Top 10 Foreground Events by Total Wait Time\n{}\n{}\n",
            "x ".repeat(40_000),
            "- ".repeat(40_000)
        ),
    );
    let started = std::time::Instant::now();
    let _ = parse(&wide);
    let text = report("18c.txt");
    let row = "db file sequential read         14,400,120     6911.6  479.97us   38.4 User I/O\n";
    let long = text.replacen(row, &row.repeat(20_000), 1);
    let fg = "db file sequential read     14,400,120     0    6,912  479.97us  9,703.6   38.4\n";
    let long = long.replacen(fg, &fg.repeat(20_000), 1);
    let r = parse(&long).unwrap();
    assert!(r.events.len() > 1000);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}
