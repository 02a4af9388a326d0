//! Models of the real reports of `../shared/awr-real/` (see its SOURCES.md), each
//! figure worked out from the report's own lines. Without `../shared` the tests of
//! real reports say they are skipped (`crate::shared_data`); the same checks run on the
//! reports the project wrote (`testdata/awr`, `tests_full.rs`).

use super::super::{parse, AwrReport};
use super::model_of;
use crate::model::CLASSES;
use crate::shared_data::awr_real;

fn real(name: &str) -> AwrReport {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/awr-real/").to_string() + name;
    let bytes = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{path}: {e} (the real AWR reports are test data)"));
    parse(&String::from_utf8_lossy(&bytes)).unwrap()
}

/// Whether the real reports are missing; the test then says it is skipped.
fn missing(what: &str) -> bool {
    awr_real(what).is_none()
}

/// A report of `testdata/awr`, written for the tests.
fn written(name: &str) -> AwrReport {
    let path = format!("{}/testdata/awr/{name}", env!("CARGO_MANIFEST_DIR"));
    parse(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).unwrap()
}

const R11204: &str = "11.2.0.4-pcambell-awrrptanalyzor-awrrpt_1_36006_36007.html";

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn a_busy_11_2_0_4_report_every_class_from_its_most_direct_figures() {
    if missing("an 11.2.0.4 HTML report's model, every class from direct figures") {
        return;
    }
    let r = real(R11204);
    let m = model_of(&r, "r.html", None);
    let t = r.elapsed_s;
    let c = |n: &str| m.class(n).unwrap_or_else(|| panic!("no {n}"));
    // Foreground 1,938,901 and background 1,255 waits of db file sequential read.
    let s = c("single-block-read");
    assert!(close(s.rate, (1_938_901.0 + 1_255.0) / t));
    assert!(s.source.contains("1938901 + 1255 background waits"));
    assert!(close(s.production_mean_us.unwrap(), 40.7e6 / 1_938_901.0));
    // Direct path read: 257,634,718 direct blocks over 2,144,793 waits = 120.1 blocks.
    let d = c("direct-read");
    assert_eq!(d.size, 120 * 8192);
    assert!(d.source.contains("physical reads direct"));
    // IOStat by Function: DBWR 21.17 writes/s, LGWR 30.61.
    assert!(close(c("dbwr-write").rate, 21.17));
    let redo = c("redo-write");
    assert!(close(redo.rate, 30.61));
    // 18,805,022,864 B of redo in 92,371 redo writes: 203,583 B, 398 sectors.
    assert_eq!(redo.size, 398 * 512);
    assert!(redo.source.contains("LGWR") && redo.source.contains("redo writes 92371"));
    assert_eq!(redo.production_mean_us, Some(168.0e6 / 92_374.0));
    // Direct path write: 854,468 waits; 1,922,692 direct blocks written (none to
    // temporary tablespaces) over them = 2.25 blocks, 2 of 8 KiB.
    let w = c("direct-write");
    assert!(close(w.rate, 854_468.0 / t));
    assert_eq!(w.size, 2 * 8192);
    assert!(
        w.source
            .ends_with("physical writes direct 1922692 blocks / 854468 waits"),
        "{}",
        w.source
    );
    assert_eq!(w.event, "direct path write");
    assert!(!m
        .not_replayed
        .iter()
        .any(|n| n.starts_with("direct path write")));
    // The classes in dbio's order, direct-write last.
    let names: Vec<&str> = m.classes.iter().map(|c| c.class.as_str()).collect();
    assert_eq!(names, CLASSES);
    // Control file I/O is named, not dropped.
    assert!(m
        .not_replayed
        .iter()
        .any(|n| n.starts_with("control file parallel write")));
    assert_eq!(m.check(), Ok(()));
}

#[test]
fn a_19c_text_report_without_iostat_or_background_events_falls_back() {
    if missing("a 19c PDB text report's model, without IOStat or background events") {
        return;
    }
    let r = real("19.0-tandat8896-oracle-rac-data-guard-lab.txt");
    assert!(r.io_by_function.is_empty() && r.background_events.is_empty());
    let m = model_of(&r, "r.txt", None);
    // 13 waits of db file sequential read in the hour; 3.23ms printed in 19c units.
    let s = m.class("single-block-read").unwrap();
    assert!(close(s.rate, 13.0 / r.elapsed_s));
    assert_eq!(s.production_mean_us, Some(3230.0));
    // No LGWR figures: redo from Instance Activity, 2 redo synch writes of 8,544 B of
    // redo (4,272 B each: 8 sectors).
    let redo = m.class("redo-write").unwrap();
    assert!(close(redo.rate, 2.0 / r.elapsed_s));
    assert!(redo
        .source
        .starts_with("Instance Activity Stats: redo synch writes"));
    assert_eq!(redo.size, 4096);
    // Nothing says how often DBWR wrote: no class made up.
    assert!(m.class("dbwr-write").is_none());
    assert!(m.classes.iter().all(|c| !c.source.is_empty()));
}

#[test]
fn a_12_2_report_without_iostat_by_function_takes_instance_activity() {
    if missing("a 12.2 HTML report's model, without IOStat by Function") {
        return;
    }
    let r = real("12.2.0.1-pcambell-awrrptanalyzor-awrrpt_1_56288_56289.html");
    let m = model_of(&r, "r.html", None);
    // Instance Activity: 30 write requests less 18 direct path writes.
    let w = m.class("dbwr-write").unwrap();
    assert!(close(w.rate, 12.0 / r.elapsed_s));
    assert!(w.source.starts_with("Instance Activity Stats"));
    // No redo writes counted: redo synch writes (6,024), redo size 491,922,416 B.
    let redo = m.class("redo-write").unwrap();
    assert!(close(redo.rate, 6024.0 / r.elapsed_s));
    assert!(redo.source.contains("redo synch writes"));
    assert_eq!(
        redo.size,
        (491_922_416.0f64 / 6024.0 / 512.0).round() as u32 * 512
    );
    // 41,483,368 direct blocks in 231,136 reads: 179.5 blocks.
    assert_eq!(m.class("direct-read").unwrap().size, 179 * 8192);
}

#[test]
fn every_class_of_the_19c_html_fixture_from_its_most_direct_figures() {
    let r = written("19c.html");
    let m = model_of(&r, "19c.html", None);
    let t = r.elapsed_s;
    let c = |n: &str| m.class(n).unwrap_or_else(|| panic!("no {n}"));
    // Foreground 2,000,000 and background 4,000 waits of db file sequential read.
    let s = c("single-block-read");
    assert!(close(s.rate, 2_004_000.0 / t));
    assert!(s.source.contains("2000000 + 4000 background waits"));
    assert!(close(s.production_mean_us.unwrap(), 1234.5));
    // Tablespace IO Stats: HISTORY 14.15 and SYSAUX 2.00 blocks per read, weighted by
    // their 520,000 and 4,000 reads: 14.06, 14 blocks.
    assert_eq!(c("multiblock-read").size, 14 * 8192);
    // 6,400,000 direct blocks over 400,000 waits: 16 blocks.
    let d = c("direct-read");
    assert_eq!(d.size, 16 * 8192);
    assert!(
        d.source
            .ends_with("physical reads direct 6400000 blocks / 400000 waits"),
        "{}",
        d.source
    );
    // IOStat by Function: DBWR 20.00 writes/s of .469 MiB/s (24 KiB each), LGWR 6.67.
    let w = c("dbwr-write");
    assert!(close(w.rate, 20.0));
    assert!(
        w.source.contains("(24 KiB each in production"),
        "{}",
        w.source
    );
    // 491,520,000 B of redo in 24,000 redo writes: 20,480 B, 40 sectors; the mean of
    // the background's "log file parallel write ... 2.00ms".
    let redo = c("redo-write");
    assert!(close(redo.rate, 6.67));
    assert_eq!(redo.size, 40 * 512);
    assert!(redo.source.contains("LGWR") && redo.source.contains("redo writes 24000"));
    assert_eq!(
        (redo.production_mean_us, redo.mean_source.as_deref()),
        (Some(2000.0), Some("Avg column (Wait Events), background"))
    );
    // 320,000 direct blocks written, 32,000 of them to temporary tablespaces (another
    // event's), over 160,000 waits: 1.8 blocks, 2 of 8 KiB.
    let dw = c("direct-write");
    assert!(close(dw.rate, 160_000.0 / t));
    assert_eq!(dw.size, 2 * 8192);
    assert!(
        dw.source.ends_with(
            "physical writes direct 320000 blocks less 32000 to temporary tablespaces / \
             160000 waits"
        ),
        "{}",
        dw.source
    );
    let names: Vec<&str> = m.classes.iter().map(|c| c.class.as_str()).collect();
    assert_eq!(names, CLASSES);
    // Control-file I/O and writes to temporary files are named, not dropped.
    for event in [
        "control file sequential read",
        "control file parallel write",
        "direct path write temp",
    ] {
        assert!(
            m.not_replayed.iter().any(|n| n.starts_with(event)),
            "{event}: {:?}",
            m.not_replayed
        );
    }
    assert_eq!(m.check(), Ok(()));
}

#[test]
fn the_19c_pdb_text_fixture_without_iostat_or_background_events_falls_back() {
    let r = written("19c-pdb.txt");
    assert!(r.io_by_function.is_empty() && r.background_events.is_empty());
    let m = model_of(&r, "19c-pdb.txt", None);
    // 360 waits of db file sequential read in 30 minutes; "3.33ms" in 19c units.
    let s = m.class("single-block-read").unwrap();
    assert!(close(s.rate, 360.0 / 1800.0));
    assert_eq!(s.production_mean_us, Some(3330.0));
    // No LGWR figures: redo from Instance Activity, 40 redo synch writes of 1,228,800
    // B of redo (30,720 B each: 60 sectors).
    let redo = m.class("redo-write").unwrap();
    assert!(close(redo.rate, 40.0 / 1800.0));
    assert!(redo
        .source
        .starts_with("Instance Activity Stats: redo synch writes"));
    assert_eq!(redo.size, 60 * 512);
    // 192 direct blocks over 12 waits: 16 blocks.
    assert_eq!(m.class("direct-read").unwrap().size, 16 * 8192);
    // Nothing says how often DBWR wrote: no class made up.
    assert!(m.class("dbwr-write").is_none());
    assert!(m.classes.iter().all(|c| !c.source.is_empty()));
}

#[test]
fn the_12c_html_fixture_without_iostat_by_function_takes_instance_activity() {
    let r = written("12c.html");
    let m = model_of(&r, "12c.html", None);
    // Instance Activity: 84,000 write requests less 36,000 direct path writes.
    let w = m.class("dbwr-write").unwrap();
    assert!(close(w.rate, 48_000.0 / 3600.0));
    assert!(w.source.starts_with("Instance Activity Stats"));
    // No redo writes counted: redo synch writes (36,000), redo size 1,105,920,000 B:
    // 30,720 B, 60 sectors.
    let redo = m.class("redo-write").unwrap();
    assert!(close(redo.rate, 10.0));
    assert!(redo.source.contains("redo synch writes"));
    assert_eq!(redo.size, 60 * 512);
    // 2,880,000 direct blocks in 45,000 reads: 64 blocks; SALES_HIST, the only
    // tablespace read more than a block at a time, 32.
    assert_eq!(m.class("direct-read").unwrap().size, 64 * 8192);
    assert_eq!(m.class("multiblock-read").unwrap().size, 32 * 8192);
    let names: Vec<&str> = m.classes.iter().map(|c| c.class.as_str()).collect();
    assert_eq!(names, CLASSES);
}
