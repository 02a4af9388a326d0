//! Reports with every section dbio reads, written for these tests in each layout: an
//! 11g text report (`11g-io.txt`), a 12.2 RAC PDB report in HTML (`12c.html`), a 19c
//! HTML report (`19c.html`) and a 19c PDB text report spooled by SQL*Plus
//! (`19c-pdb.txt`). They check what `tests_real.rs` checks on Oracle's own reports,
//! which a clone without `../shared` lacks. Each figure is worked out from the line
//! quoted beside it.

use super::super::*;
use super::{close, event, report};

#[test]
fn an_11g_text_report_read_section_by_section() {
    let r = parse(&report("11g-io.txt")).unwrap();
    assert_eq!(
        (r.db_name.as_str(), r.instance.as_str()),
        ("DBIO11", "dbio11")
    );
    assert_eq!(r.layout, Layout::Text);
    assert_eq!(r.release.as_deref(), Some("11.2.0.3.0"));
    assert_eq!(r.elapsed_s, 600.0);
    // "db file sequential read  1,200,000  6,180  5": 6,180 s / 1,200,000, not 5 ms.
    let e = event(&r, "db file sequential read");
    assert!(close(e.mean_wait_us.unwrap(), 6180.0 / 1.2e6 * 1e6, 1e-9));
    assert_eq!(e.mean_source, Some(MeanSource::TopTimeOverWaits));
    // "direct path read" ends the Top 5; "Host CPU" follows with no blank line.
    assert_eq!(
        r.events[..5].iter().filter(|e| e.waits.is_some()).count(),
        4
    );
    // "control file sequential re  300  0  0  1" (Foreground Wait Events only): the
    // name made whole, its class known, 0 s too coarse beside the 1 ms column.
    let c = event(&r, "control file sequential read");
    assert_eq!(
        (c.wait_class.as_str(), c.mean_wait_us),
        ("System I/O", Some(1000.0))
    );
    // "log file parallel write  16,000  0  120  8": 120 s / 16,000.
    let lgwr = &r.background_events[0];
    assert_eq!(lgwr.event, "log file parallel write");
    assert!(close(lgwr.mean_wait_us.unwrap(), 7500.0, 1e-9));
    // "physical read IO requests ... 2,145.0", "physical write IO requests ... 21.5";
    // the Load Profile's blocks ("Physical reads: 2,500.0") are more.
    let lp = &r.load_profile;
    assert_eq!((lp.read_iops, lp.write_iops), (Some(2145.0), Some(21.5)));
    assert_eq!(lp.requests_from.as_deref(), Some("Instance Activity Stats"));
    assert_eq!(lp.physical_read_blocks, Some(2500.0));
    assert!(close(r.metrics()["iops"], 2145.0 + 21.5, 1e-9));
    // "Logical reads: 18,250.0" over "Physical reads: 2,500.0".
    assert!(close(lp.logical_to_physical.unwrap(), 7.3, 1e-9));
    // "db file sequential read  1.2M  10.0  8.0 ...", then the Detail from 32 ms:
    // "<32ms 97.0 <64ms 2.0 <1/8s .5": 2.0% from 32 to 64 ms.
    let h = &r.histograms["db file sequential read"];
    assert_eq!(h.total_waits, Some(1.2e6));
    assert_eq!((h.buckets[0].upper_us, h.buckets[0].pct), (1024, 10.0));
    let b = h.buckets.iter().find(|b| b.lower_us == 32 * 1024).unwrap();
    assert_eq!((b.upper_us, b.pct), (64 * 1024, 2.0));
    let sum: f64 = h.buckets.iter().map(|b| b.pct).sum();
    assert!(close(sum, 100.0, 1e-9), "{sum}");
    // "Buffer Cache Re  10.3G  2103.5 17.6563 ... 1.3M  5.1": the name made whole.
    let f = &r.io_by_function[0];
    assert_eq!(f.name, "Buffer Cache Reads");
    assert_eq!(
        (f.read_reqs_s, f.read_mib_s, f.waits, f.avg_wait_us),
        (Some(2103.5), Some(17.6563), Some(1.3e6), Some(5100.0))
    );
    // "DBWR  0M  0.0  0M  2.8G  16.0  4.84375  9600  10.0".
    let dbwr = r.io_by_function.iter().find(|f| f.name == "DBWR").unwrap();
    assert_eq!(
        (dbwr.write_reqs_s, dbwr.write_mib_s, dbwr.avg_wait_us),
        (Some(16.0), Some(4.84375), Some(10_000.0))
    );
    assert_eq!(r.io_by_function.len(), 6, "TOTAL is left out");
    // "Data File  11.4G ... 5.1  9.0"; "Log File ... N/A  N/A".
    let d = &r.io_by_filetype[0];
    assert_eq!(
        (d.name.as_str(), d.small_read_us, d.large_read_us),
        ("Data File", Some(5100.0), Some(9000.0))
    );
    assert_eq!(r.io_by_filetype[1].small_read_us, None);
    // The name on one line, the figures on the next.
    let ts = &r.tablespaces[0];
    assert_eq!(
        (ts.tablespace.as_str(), ts.reads, ts.blocks_per_read),
        ("APPDATA", Some(1_150_000.0), Some(1.2))
    );
    let file = &r.files[1];
    assert_eq!(
        file.file.as_deref(),
        Some("/u02/oradata/DBIO11/appdata02.dbf")
    );
    assert_eq!(
        (file.reads, file.reads_s, file.avg_read_us),
        (Some(550_000.0), Some(917.0), Some(5500.0))
    );
    assert_eq!((file.writes, file.writes_s), (Some(160_000.0), Some(267.0)));
    assert_eq!((r.tablespaces.len(), r.files.len()), (5, 6));
}

#[test]
fn a_12c_html_report_of_a_pdb_on_rac() {
    let r = parse(&report("12c.html")).unwrap();
    assert_eq!(r.layout, Layout::Html);
    // The instance in a table of its own, after the database's.
    assert_eq!(
        (r.db_name.as_str(), r.instance.as_str()),
        ("CDB12", "cdb122")
    );
    assert_eq!((r.begin_snap, r.end_snap), (Some(5010), Some(5011)));
    assert_eq!(r.elapsed_s, 3600.0);
    // Top 10 prints "96.5K" s, Foreground Wait Events "96,504" s for the same
    // 2,400,000 waits: the finer one wins over both and over "40.21ms".
    let e = event(&r, "gc buffer busy acquire");
    assert!(close(e.mean_wait_us.unwrap(), 96_504.0 / 2.4e6 * 1e6, 1e-9));
    assert_eq!(e.mean_source, Some(MeanSource::EventsTimeOverWaits));
    assert_eq!(e.total_wait_s, 96_504.0);
    // "read by other session | 800,000 | 1620.4 | 2.03ms": 1620.4 s / 800,000.
    let e = event(&r, "read by other session");
    assert!(close(e.mean_wait_us.unwrap(), 2025.5, 1e-9));
    assert_eq!(e.mean_source, Some(MeanSource::TopTimeOverWaits));
    // "db file sequential read | 1,800,000 | 1440 | 800.00us": the column is finer.
    let e = event(&r, "db file sequential read");
    assert_eq!(
        (e.mean_wait_us, e.mean_source),
        (Some(800.0), Some(MeanSource::TopAvgColumn))
    );
    // Only in Foreground Wait Events: "direct path write | 36,000 | | 72 | 2.00ms".
    assert_eq!(event(&r, "direct path write").mean_wait_us, Some(2000.0));
    assert!(
        r.histograms.is_empty(),
        "the report has no Wait Event Histogram"
    );
    assert!(r.background_events.is_empty() && r.io_by_function.is_empty());
    // "Read IO requests: 541.7", "Write IO requests: 23.3".
    assert!(close(r.metrics()["iops"], 541.7 + 23.3, 1e-9));
    assert_eq!(r.activity_total("redo synch writes"), Some(36_000.0));
    // "SALES_HIST | 135,000 | 38 | 5.33 | 32.00 | ... | 144,000 | 40 | ... | SALES".
    let ts = &r.tablespaces[1];
    assert_eq!(
        (ts.tablespace.as_str(), ts.reads, ts.reads_s, ts.avg_read_us),
        ("SALES_HIST", Some(135_000.0), Some(38.0), Some(5330.0))
    );
    assert_eq!(
        (ts.blocks_per_read, ts.writes, ts.writes_s),
        (Some(32.0), Some(144_000.0), Some(40.0))
    );
    let f = &r.files[0];
    assert_eq!(
        f.file.as_deref(),
        Some("+DATA/CDB12/SALES/DATAFILE/sales_data.301.1190000001")
    );
    assert_eq!((f.reads, f.avg_read_us), (Some(1_600_000.0), Some(800.0)));
    assert_eq!((r.tablespaces.len(), r.files.len()), (4, 4));
}

#[test]
fn a_19c_html_report_with_every_io_section() {
    let r = parse(&report("19c.html")).unwrap();
    assert_eq!(r.layout, Layout::Html);
    assert_eq!(
        (r.db_name.as_str(), r.instance.as_str()),
        ("OLTP19", "oltp19")
    );
    assert_eq!(r.release.as_deref(), Some("19.0.0.0.0"));
    assert_eq!(r.begin_time.as_deref(), Some("02-Sep-25 10:00:00"));
    // "db file sequential read | 2,000,000 | 2469 | 1.23ms": the Avg column is +-5 us,
    // 2,469 s / 2,000,000 waits +-0.25 us.
    let e = event(&r, "db file sequential read");
    assert!(close(e.mean_wait_us.unwrap(), 1234.5, 1e-9));
    assert_eq!(e.mean_source, Some(MeanSource::TopTimeOverWaits));
    // "log file sync | 1,600 | 7.9 | 4.94ms": 7.9 s / 1,600 is +-31 us, the column
    // +-5 us.
    let e = event(&r, "log file sync");
    assert_eq!(
        (e.mean_wait_us, e.mean_source),
        (Some(4940.0), Some(MeanSource::TopAvgColumn))
    );
    // "Read IO requests: 701.1", "Write IO requests: 66.7".
    let lp = &r.load_profile;
    assert_eq!(lp.requests_from.as_deref(), Some("Load Profile"));
    assert!(close(r.metrics()["iops"], 701.1 + 66.7, 1e-9));
    // "log file parallel write | 24,000 | 0 | 48 | 2.00ms".
    let lgwr = &r.background_events[1];
    assert_eq!(
        (lgwr.event.as_str(), lgwr.mean_wait_us),
        ("log file parallel write", Some(2000.0))
    );
    assert!(r
        .metrics()
        .contains_key("log file parallel write (background) mean_us"));
    // log file sync: ">=512us 100.0"; up to 32 ms: "<4ms 40.0, <8ms 50.0, <16ms 6.0,
    // <32ms 3.0, >=32ms .9"; up to 2 s: "<32ms 99.1, <64ms .7, <1/8s .2". Below 32 ms,
    // 99.1 read once beats 40.0 + 50.0 + 6.0 + 3.0 summed (99.0): 16 to 32 ms is 3.1.
    let h = &r.histograms["log file sync"];
    let at = |upper: u64| {
        h.buckets
            .iter()
            .find(|b| b.upper_us == upper)
            .map(|b| b.pct)
    };
    assert_eq!(at(512), Some(0.0));
    assert_eq!((at(4096), at(8192)), (Some(40.0), Some(50.0)));
    assert!(close(at(32_768).unwrap(), 3.1, 1e-9));
    assert!(close(at(65_536).unwrap(), 0.7, 1e-9));
    let sum: f64 = h.buckets.iter().map(|b| b.pct).sum();
    assert!(close(sum, 100.0, 1e-9), "{sum}");
    // "db file sequential read | 2004K | ... <128us 1.0 ..." then "<1ms 30.0".
    let h = &r.histograms["db file sequential read"];
    assert_eq!(h.total_waits, Some(2_004_000.0));
    let b = h.buckets.iter().find(|b| b.upper_us == 1024).unwrap();
    assert_eq!((b.lower_us, b.pct), (512, 30.0));
    // IOStat by Function with 19c's units: "DBWR ... 1.6G | 20.00 | .469M | 72K |
    // 5.00ms", "Others ... 200.00us".
    let f = |name: &str| r.io_by_function.iter().find(|f| f.name == name).unwrap();
    assert_eq!(
        (f("DBWR").write_reqs_s, f("DBWR").avg_wait_us),
        (Some(20.0), Some(5000.0))
    );
    assert_eq!(f("DBWR").write_mib, Some(1.6 * 1024.0));
    assert_eq!(f("LGWR").write_reqs_s, Some(6.67));
    assert_eq!(f("Others").avg_wait_us, Some(200.0));
    assert_eq!(r.io_by_function.len(), 6, "TOTAL is left out");
    assert_eq!(
        r.activity_total("physical writes direct temporary tablespace"),
        Some(32_000.0)
    );
    let ts = &r.tablespaces[1];
    assert_eq!(
        (ts.tablespace.as_str(), ts.blocks_per_read, ts.writes_s),
        ("HISTORY", Some(14.15), Some(44.0))
    );
    assert_eq!((r.tablespaces.len(), r.files.len()), (5, 6));
}

#[test]
fn a_19c_pdb_text_report_spooled_by_sql_plus() {
    let r = parse(&report("19c-pdb.txt")).unwrap();
    assert_eq!(
        (r.db_name.as_str(), r.instance.as_str()),
        ("LABCDB", "labcdb2")
    );
    assert_eq!(r.elapsed_s, 1800.0);
    // After two page breaks inside the Load Profile.
    assert!(r.load_profile.per_second.contains_key("Transactions"));
    assert_eq!(r.load_profile.read_iops, Some(0.2));
    // The Top 10 table, a page break inside its titles: "10.40 s", "3.33ms",
    // "222.22us" with the class cut to "System I".
    let e = event(&r, "enq: TX - row lock contention");
    assert!(close(e.mean_wait_us.unwrap(), 10.4e6, 1e-6));
    assert_eq!(e.wait_class, "Application");
    assert_eq!(
        event(&r, "db file sequential read").mean_wait_us,
        Some(3330.0)
    );
    let c = event(&r, "control file sequential read");
    assert_eq!(
        (c.wait_class.as_str(), c.mean_wait_us),
        ("System I/O", Some(222.22))
    );
    assert!(r
        .metrics()
        .contains_key("control file sequential read mean_us"));
    // A page break between the rows of Foreground Wait Events: "direct path read  12".
    assert_eq!(event(&r, "direct path read").waits, Some(12.0));
    // ... and of Instance Activity Stats.
    assert_eq!(r.activity_total("redo synch writes"), Some(40.0));
    assert!(r.histograms.is_empty() && r.background_events.is_empty());
    assert!(r.io_by_function.is_empty() && r.tablespaces.is_empty());
    assert_eq!(r.io_by_filetype[0].small_read_us, Some(3300.0));
}

#[test]
fn parameters_of_every_layout() {
    // "db_block_size  8192": init.ora Parameters (11g text, 12c HTML with a PDB Name
    // column), Modified Parameters (19c HTML), the container's parameters (19c PDB).
    for name in ["11g-io.txt", "12c.html", "19c.html", "19c-pdb.txt"] {
        let p = parameters(&report(name));
        let get = |k: &str| p.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("db_block_size"), Some("8192"), "{name}");
        assert!(p.iter().all(|(n, _)| !n.contains(' ')), "{name}: {p:?}");
    }
    let p = parameters(&report("12c.html"));
    assert!(p.contains(&("open_cursors".into(), "500".into())), "{p:?}");
}

#[test]
fn reports_cut_anywhere_give_an_error_not_a_panic() {
    for name in ["11g-io.txt", "12c.html", "19c.html", "19c-pdb.txt"] {
        let text = report(name);
        for cut in (0..text.len()).step_by(text.len() / 499 + 1) {
            if text.is_char_boundary(cut) {
                let _ = parse(&text[..cut]);
            }
        }
    }
    // An HTML report cut before its snapshot table says it is HTML and where.
    for name in ["12c.html", "19c.html"] {
        let text = report(name);
        let cut = &text[..text.find("summary=\"This table displays snapshot").unwrap()];
        let e = parse(cut).unwrap_err();
        assert!(e.to_string().contains("(HTML)"), "{e}");
        assert!(e.what.contains("Elapsed"), "{e}");
        assert_eq!(e.line, cut.lines().count());
    }
}
