//! The real reports of `../shared/awr-real/` (see its SOURCES.md), as Oracle printed
//! them. Every expected figure is worked out by hand from the line named beside it.
//! Without `../shared` each test says it is skipped (`crate::shared_data`); the
//! reports the project wrote (`tests_full.rs`) check the same sections.

use super::super::*;
use super::{close, event};
use crate::shared_data::awr_real;

/// Whether the real reports are missing; the test then says it is skipped.
fn missing(what: &str) -> bool {
    awr_real(what).is_none()
}

fn real(name: &str) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/awr-real/").to_string() + name;
    let bytes = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{path}: {e} (the real AWR reports are test data)"));
    String::from_utf8_lossy(&bytes).into_owned()
}

const R11201: &str = "11.2.0.1-fabioprado-blogcopy.txt";
const R11204: &str = "11.2.0.4-pcambell-awrrptanalyzor-awrrpt_1_36006_36007.html";
const R12201: &str = "12.2.0.1-pcambell-awrrptanalyzor-awrrpt_1_56288_56289.html";
const R19_HTML: &str = "19.0-pcambell-awrrptanalyzor-awrrpt_1_17676_17677.html";
const R19_PDB: &str = "19.0-tandat8896-oracle-rac-data-guard-lab.txt";

#[test]
fn an_11_2_0_1_text_report_whose_host_cpu_follows_the_top_5_table() {
    if missing("every section of an 11.2.0.1 text report whose Top 5 ends at Host CPU") {
        return;
    }
    let r = parse(&real(R11201)).unwrap();
    assert_eq!((r.db_name.as_str(), r.instance.as_str()), ("ORCL", "orcl"));
    assert_eq!(r.layout, Layout::Text);
    // Line 66: "db file sequential read  35,732  6,575  184": 6,575 s / 35,732.
    let e = event(&r, "db file sequential read");
    assert!(close(
        e.mean_wait_us.unwrap(),
        6575.0 / 35_732.0 * 1e6,
        1e-6
    ));
    assert_eq!(e.mean_source, Some(MeanSource::TopTimeOverWaits));
    // Line 67 ("log file sync  3,825  1,495  391") was the last read; Host CPU (line
    // 71) ends the table.
    assert_eq!(
        r.events[..5].iter().filter(|e| e.waits.is_some()).count(),
        5
    );
    // Line 192: "control file sequential re  97 ... 2" (Foreground Wait Events only).
    let c = event(&r, "control file sequential read");
    assert_eq!(
        (c.wait_class.as_str(), c.mean_wait_us),
        ("System I/O", Some(2000.0))
    );
    // Line 215: "log file parallel write  6,962  0  258  37": 258 s / 6,962.
    let lgwr = r
        .background_events
        .iter()
        .find(|e| e.event == "log file parallel write")
        .unwrap();
    assert!(close(
        lgwr.mean_wait_us.unwrap(),
        258.0 / 6962.0 * 1e6,
        1e-6
    ));
    // Lines 1407 and 1418: "physical read IO requests ... 105.1", "physical write
    // IO requests ... 26.3"; the Load Profile's blocks (lines 35-36: 130.9 + 40.7)
    // are 31% more.
    let lp = &r.load_profile;
    assert_eq!((lp.read_iops, lp.write_iops), (Some(105.1), Some(26.3)));
    assert_eq!(
        (lp.physical_read_blocks, lp.physical_write_blocks),
        (Some(130.9), Some(40.7))
    );
    assert!(close(r.metrics()["iops"], 131.4, 1e-9));
    // Lines 33 and 35: 2,021.9 logical reads per 130.9 physical.
    assert!(close(lp.logical_to_physical.unwrap(), 2021.9 / 130.9, 1e-9));
    // Line 270: "db file sequential read 35.9K 7.0 .0 .0 .3 2.9 12.2 75.9 1.6", then
    // line 334 (64 ms to 2 s): "27.9K 22.5 15.1 18.9 ...": 15.1% from 32 to 64 ms.
    let h = &r.histograms["db file sequential read"];
    assert_eq!(h.total_waits, Some(35_900.0));
    assert_eq!((h.buckets[0].upper_us, h.buckets[0].pct), (1024, 7.0));
    let b = h.buckets.iter().find(|b| b.lower_us == 32 * 1024).unwrap();
    assert_eq!((b.upper_us, b.pct), (64 * 1024, 15.1));
    // Line 1516: "Buffer Cache Re  370M  105.3 1.02309 ... 37.5K  187.4".
    let f = &r.io_by_function[0];
    assert_eq!(f.name, "Buffer Cache Reads");
    assert_eq!(
        (f.read_mib, f.read_reqs_s, f.read_mib_s),
        (Some(370.0), Some(105.3), Some(1.02309))
    );
    assert_eq!((f.waits, f.avg_wait_us), (Some(37_500.0), Some(187_400.0)));
    // Line 1518: "LGWR  0M  0.0  0M  21M  9.8 .058067  3482  73.6".
    let lgwr = r.io_by_function.iter().find(|f| f.name == "LGWR").unwrap();
    assert_eq!(
        (lgwr.write_reqs_s, lgwr.avg_wait_us),
        (Some(9.8), Some(73_600.0))
    );
    // Line 1533: "Data File  369M  105.3 ... 184.5  202.9".
    let d = &r.io_by_filetype[0];
    assert_eq!(
        (d.name.as_str(), d.small_read_us, d.large_read_us),
        ("Data File", Some(184_500.0), Some(202_900.0))
    );
    // Lines 1602-1603: the SOE file, "37,134  103  177.6  1.2  9,009  25 ...".
    let soe = &r.files[0];
    assert_eq!(
        soe.file.as_deref(),
        Some("/home/oracle/app/oracle/product/11.2.0/dbs/soe.dbf")
    );
    assert_eq!(
        (soe.reads, soe.reads_s, soe.avg_read_us),
        (Some(37_134.0), Some(103.0), Some(177_600.0))
    );
    assert_eq!(
        (soe.blocks_per_read, soe.writes, soe.writes_s),
        (Some(1.2), Some(9009.0), Some(25.0))
    );
    assert_eq!((r.tablespaces.len(), r.files.len()), (5, 5));
}

#[test]
fn an_11_2_0_4_html_report_with_sub_millisecond_reads() {
    if missing("an 11.2.0.4 HTML report whose Avg column says 0 ms") {
        return;
    }
    let r = parse(&real(R11204)).unwrap();
    assert_eq!(r.layout, Layout::Html);
    assert_eq!((r.db_name.as_str(), r.instance.as_str()), ("XYDB", "xydb"));
    assert_eq!(r.release.as_deref(), Some("11.2.0.4.0"));
    // Line 103: "db file sequential read | 1,938,901 | 40.7 | 0 | .6 | User I/O": the Avg
    // column says 0 ms; 40.7 s / 1,938,901 waits = 21 us.
    let e = event(&r, "db file sequential read");
    let mean = e.mean_wait_us.unwrap();
    assert!(close(mean, 40.7 / 1_938_901.0 * 1e6, 1e-9));
    assert!(close(mean, 21.0, 0.05), "{mean}");
    assert_eq!(e.mean_source, Some(MeanSource::TopTimeOverWaits));
    // Lines 67-70: requests 1,132.7 + 258.2, where the blocks are 71,457.6 + 595.5.
    let m = r.metrics();
    assert!(close(m["iops"], 1132.7 + 258.2, 1e-9));
    assert!(close(m["read iops"], 1132.7, 1e-9));
    // Line 438: "db file sequential read | 1940.1K | 99.9 | .1 | .0 ...".
    let h = &r.histograms["db file sequential read"];
    assert_eq!((h.buckets[0].pct, h.buckets[1].pct), (99.9, 0.1));
    assert_eq!(h.total_waits, Some(1_940_100.0));
}

#[test]
fn a_12_2_html_report_of_a_pdb_on_rac() {
    if missing("a 12.2 RAC PDB HTML report: instance table, finer of two totals") {
        return;
    }
    let r = parse(&real(R12201)).unwrap();
    // Line 52: the instance, in a table of its own.
    assert_eq!(
        (r.db_name.as_str(), r.instance.as_str()),
        ("IDCDB", "idcdb1")
    );
    // Line 108: Top 10 prints "938.9K" s; line 240 (Foreground Wait Events) prints
    // "938,935" s for the same 6,990,874 waits: the finer one wins.
    let e = event(&r, "gc buffer busy acquire");
    assert!(close(
        e.mean_wait_us.unwrap(),
        938_935.0 / 6_990_874.0 * 1e6,
        1e-6
    ));
    assert_eq!(e.mean_source, Some(MeanSource::EventsTimeOverWaits));
    // Line 112: "read by other session | 2,210,801 | 5447.7 | 2.46ms".
    let e = event(&r, "read by other session");
    assert!(close(
        e.mean_wait_us.unwrap(),
        5447.7 / 2_210_801.0 * 1e6,
        1e-6
    ));
    assert!(
        r.histograms.is_empty(),
        "the report has no Wait Event Histogram"
    );
    assert!(!r.files.is_empty() && !r.tablespaces.is_empty());
}

#[test]
fn a_19c_html_report_with_microsecond_histograms() {
    if missing("a 19c HTML report: units, histograms from 8 us to 2 s in one") {
        return;
    }
    let r = parse(&real(R19_HTML)).unwrap();
    // Line 115: "log file sync | 1,595 | 7.9 | 4.96ms": 7.9 s / 1,595 is +-31 us, the
    // column +-5 us.
    let e = event(&r, "log file sync");
    assert_eq!(
        (e.mean_wait_us, e.mean_source),
        (Some(4960.0), Some(MeanSource::TopAvgColumn))
    );
    // Line 495: "log file sync | 1603 | ... | 100.0": every wait >= 512 us; line 616
    // (up to 32 ms): "<512us" blank, "<1ms" blank, "<2ms" blank, "<4ms 49.3", "<8ms
    // 45.4", "<16ms 3.2", "<32ms 1.6", ">=32ms .6".
    let h = &r.histograms["log file sync"];
    let at = |upper: u64| {
        h.buckets
            .iter()
            .find(|b| b.upper_us == upper)
            .map(|b| b.pct)
    };
    assert_eq!(at(512), Some(0.0));
    assert_eq!(at(4096), Some(49.3));
    assert_eq!(at(8192), Some(45.4));
    // Line 645 (up to 2 s): "<32ms 99.4, <64ms .5, <1/8s .1". Below 32 ms, 99.4% read
    // once beats 49.3 + 45.4 + 3.2 + 1.6 summed (99.5): 16 to 32 ms is 99.4 - 97.9.
    assert!(close(at(32_768).unwrap(), 1.5, 1e-9));
    assert!(close(at(65_536).unwrap(), 0.5, 1e-9));
    let sum: f64 = h.buckets.iter().map(|b| b.pct).sum();
    assert!(close(sum, 100.0, 1e-9), "{sum}");
}

#[test]
fn a_19c_pdb_text_report_spooled_by_sql_plus() {
    if missing("a 19c PDB text report with SQL*Plus page breaks in its tables") {
        return;
    }
    let r = parse(&real(R19_PDB)).unwrap();
    assert_eq!(
        (r.db_name.as_str(), r.instance.as_str()),
        ("RACDB", "racdb1")
    );
    assert_eq!(r.elapsed_s, 3600.0);
    // Line 58, after two page breaks inside the Load Profile.
    assert!(r.load_profile.per_second.contains_key("Transactions"));
    assert_eq!(r.load_profile.read_iops, Some(0.0));
    // Lines 67-71: the Top 10 table, a page break inside its titles.
    assert_eq!(
        event(&r, "enq: TX - row lock contention").mean_wait_us,
        Some(52.86e6)
    );
    let c = event(&r, "control file sequential read");
    assert_eq!(
        (c.wait_class.as_str(), c.mean_wait_us),
        ("System I/O", Some(268.69))
    );
    assert!(r
        .metrics()
        .contains_key("control file sequential read mean_us"));
}

#[test]
fn parameters_of_real_reports() {
    if missing("db_block_size of 4 real reports, text and HTML") {
        return;
    }
    // 11.2.0.1 line 2645, 19c PDB line 1948: "db_block_size  8192"; the HTML reports'
    // init.ora Parameters tables say the same.
    for name in [R11201, R19_PDB, R11204, R19_HTML] {
        let p = parameters(&real(name));
        let size = p
            .iter()
            .find(|(n, _)| n == "db_block_size")
            .map(|(_, v)| v.as_str());
        assert_eq!(size, Some("8192"), "{name}");
    }
}

#[test]
fn real_reports_cut_anywhere_give_an_error_not_a_panic() {
    if missing("3 real reports cut at 97 places: an error, never a panic") {
        return;
    }
    for name in [R11201, R11204, R19_PDB] {
        let text = real(name);
        for cut in (0..text.len()).step_by(text.len() / 97 + 1) {
            let mut at = cut;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let _ = parse(&text[..at]);
        }
    }
    // An HTML report cut before its snapshot table says it is HTML and where.
    let text = real(R11204);
    let cut = &text[..text.find("summary=\"This table displays snapshot").unwrap()];
    let e = parse(cut).unwrap_err();
    assert!(e.to_string().contains("(HTML)"), "{e}");
    assert!(e.what.contains("Elapsed"), "{e}");
}
