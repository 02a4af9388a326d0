//! An AWR report's I/O as a workload model: per dbio class, the rate and size from the
//! most direct figures the report prints, falling back to Instance Activity Stats and
//! wait counts where a section is missing (19c text reports have no IOStat by Function
//! and no Background Wait Events), and naming the source of every figure.

use super::model::{AwrReport, IoStat, WaitEvent};
use crate::model::{ModelClass, WorkloadModel};

/// Oracle's default multiblock read (db_file_multiblock_read_count 128 of 8 KiB).
const DEFAULT_EXTENT: u32 = 1 << 20;

/// I/O wait events with no dbio class: shown in the model as not replayed.
const UNREPLAYED: [(&str, &str); 5] = [
    ("control file sequential read", "no control-file class"),
    ("control file parallel write", "no control-file class"),
    (
        "direct path write temp",
        "writes to temporary files, which the data set has none of",
    ),
    (
        "db file parallel read",
        "batched single-block reads, not modelled",
    ),
    (
        "log file sequential read",
        "archiver reads of the redo log, not modelled",
    ),
];

/// The model of `r`, read from `file`; `block_size` is the report's db_block_size
/// where it gives one.
pub fn model_of(r: &AwrReport, file: &str, block_size: Option<u32>) -> WorkloadModel {
    let bs = block_size
        .filter(|b| b.is_power_of_two() && (2048..=32768).contains(b))
        .unwrap_or(8192);
    let t = r.elapsed_s.max(1e-9);
    let w = Waits { r };
    let mut classes = Vec::new();
    let push = |classes: &mut Vec<ModelClass>, c: Option<ModelClass>| {
        classes.extend(c.filter(|c| c.rate > 0.0))
    };

    let single = w.event_class(
        "single-block-read",
        "db file sequential read",
        bs,
        String::new(),
    );
    let found = single.is_some();
    push(&mut classes, single);
    if !found {
        // No such event printed: read requests less multiblock ones.
        let reqs = r.activity_total("physical read IO requests");
        let multi = r.activity_total("physical read total multi block requests");
        if let Some(n) = reqs.map(|q| q - multi.unwrap_or(0.0)).filter(|n| *n > 0.0) {
            push(
                &mut classes,
                Some(ModelClass {
                    class: "single-block-read".into(),
                    event: "db file sequential read".into(),
                    rate: n / t,
                    size: bs,
                    source: format!(
                        "Instance Activity Stats: physical read IO requests less multi block \
                     requests, {n:.0} in {t:.0} s"
                    ),
                    production_ios: Some(n),
                    production_mean_us: None,
                    mean_source: None,
                    ..ModelClass::default()
                }),
            );
        }
    }

    let (blocks, size_from) = multiblock_blocks(r);
    let mb = (blocks * f64::from(bs)) as u32;
    push(
        &mut classes,
        w.event_class(
            "multiblock-read",
            "db file scattered read",
            round_to(mb, bs),
            size_from,
        ),
    );

    let (direct, direct_from) = direct_size(r, &w, bs, false);
    push(
        &mut classes,
        w.event_class("direct-read", "direct path read", direct, direct_from),
    );

    push(&mut classes, dbwr(r, &w, bs, t));
    push(&mut classes, redo(r, &w, t));
    // Last, as dbio orders its classes.
    let (direct, direct_from) = direct_size(r, &w, bs, true);
    push(
        &mut classes,
        w.event_class("direct-write", "direct path write", direct, direct_from),
    );

    let mut not_replayed = Vec::new();
    for (event, why) in UNREPLAYED {
        let n = w.count(event);
        if n > 0.0 {
            not_replayed.push(format!("{event}: {:.2}/s ({why})", n / t));
        }
    }
    WorkloadModel {
        source: format!(
            "{file}: {} ({}), snapshots {}-{}, {t:.0} s",
            r.db_name,
            r.instance,
            r.begin_snap.map_or("?".into(), |s| s.to_string()),
            r.end_snap.map_or("?".into(), |s| s.to_string()),
        ),
        block_size: bs,
        dataset_bytes: None,
        dataset_source: None,
        classes,
        not_replayed,
        ..WorkloadModel::default()
    }
}

/// Wait counts and means of one report, foreground and background together.
struct Waits<'a> {
    r: &'a AwrReport,
}

impl Waits<'_> {
    fn find<'e>(list: &'e [WaitEvent], name: &str) -> Option<&'e WaitEvent> {
        list.iter().find(|e| e.event == name)
    }

    /// Waits of `event`, foreground and background.
    fn count(&self, event: &str) -> f64 {
        let fg = Self::find(&self.r.events, event).and_then(|e| e.waits);
        let bg = Self::find(&self.r.background_events, event).and_then(|e| e.waits);
        fg.unwrap_or(0.0) + bg.unwrap_or(0.0)
    }

    /// The mean wait of `event` and where it came from: the foreground's (or, for
    /// background events, the background's) most precise figure.
    fn mean(&self, event: &str) -> Option<(f64, String)> {
        let fg = Self::find(&self.r.events, event);
        let bg = Self::find(&self.r.background_events, event);
        let e = [fg, bg]
            .into_iter()
            .flatten()
            .filter(|e| e.mean_wait_us.is_some())
            .max_by(|a, b| a.waits.unwrap_or(0.0).total_cmp(&b.waits.unwrap_or(0.0)))?;
        let from = e.mean_source.map_or("report", |s| s.label());
        let side = if bg.is_some_and(|b| std::ptr::eq(e, b)) {
            "background"
        } else {
            "foreground"
        };
        Some((e.mean_wait_us?, format!("{from}, {side}")))
    }

    /// A class at the rate of `event`'s waits.
    fn event_class(
        &self,
        class: &str,
        event: &str,
        size: u32,
        size_from: String,
    ) -> Option<ModelClass> {
        let fg = Self::find(&self.r.events, event).and_then(|e| e.waits);
        let bg = Self::find(&self.r.background_events, event).and_then(|e| e.waits);
        let n = fg.unwrap_or(0.0) + bg.unwrap_or(0.0);
        if n <= 0.0 {
            return None;
        }
        let t = self.r.elapsed_s.max(1e-9);
        let parts = match (fg, bg) {
            (Some(f), Some(b)) if b > 0.0 => format!("{f:.0} + {b:.0} background waits"),
            _ => format!("{n:.0} waits"),
        };
        let mut source = format!("Wait Events: {event}, {parts} in {t:.0} s");
        if !size_from.is_empty() {
            source += &format!("; size: {size_from}");
        }
        let mean = self.mean(event);
        Some(ModelClass {
            class: class.into(),
            event: event.into(),
            rate: n / t,
            size,
            source,
            production_ios: Some(n),
            production_mean_us: mean.as_ref().map(|m| m.0),
            mean_source: mean.map(|m| m.1),
            ..ModelClass::default()
        })
    }
}

/// `bytes` rounded to whole blocks, at least one.
fn round_to(bytes: u32, block: u32) -> u32 {
    let n = (f64::from(bytes) / f64::from(block)).round().max(1.0) as u32;
    n.saturating_mul(block)
}

/// Blocks per multiblock read: the mean of Av Blks/Rd over the tablespaces read more
/// than one block at a time, weighted by their reads.
fn multiblock_blocks(r: &AwrReport) -> (f64, String) {
    let rows: Vec<(f64, f64)> = r
        .tablespaces
        .iter()
        .filter_map(|f| Some((f.reads?, f.blocks_per_read?)))
        .filter(|(n, b)| *n > 0.0 && *b > 1.0)
        .collect();
    let reads: f64 = rows.iter().map(|(n, _)| n).sum();
    if reads <= 0.0 {
        return (
            f64::from(DEFAULT_EXTENT) / 8192.0,
            "1 MiB (the report gives no blocks per read; Oracle's default)".into(),
        );
    }
    let blocks = rows.iter().map(|(n, b)| n * b).sum::<f64>() / reads;
    let blocks = blocks.clamp(2.0, 128.0).round();
    (
        blocks,
        format!(
            "Tablespace IO Stats, {blocks:.0} blocks per read (mean of the {} tablespaces \
             read more than a block at a time)",
            rows.len()
        ),
    )
}

fn function<'a>(r: &'a AwrReport, name: &str) -> Option<&'a IoStat> {
    r.io_by_function.iter().find(|s| s.name == name)
}

fn filetype<'a>(r: &'a AwrReport, name: &str) -> Option<&'a IoStat> {
    r.io_by_filetype.iter().find(|s| s.name == name)
}

/// Bytes per direct path read (or write): Instance Activity's direct blocks over the
/// event's waits (for writes, less those to temporary tablespaces, whose waits are
/// another event), else IOStat by Function's Direct Reads (Writes) MiB over requests,
/// else 1 MiB.
fn direct_size(r: &AwrReport, w: &Waits, bs: u32, write: bool) -> (u32, String) {
    let (event, stat, func, noun) = if write {
        (
            "direct path write",
            "physical writes direct",
            "Direct Writes",
            "write",
        )
    } else {
        (
            "direct path read",
            "physical reads direct",
            "Direct Reads",
            "read",
        )
    };
    let waits = w.count(event);
    let temp = if write {
        r.activity_total("physical writes direct temporary tablespace")
            .filter(|t| *t > 0.0)
    } else {
        None
    };
    if let Some(all) = r.activity_total(stat).filter(|b| *b > 0.0 && waits > 0.0) {
        let blocks = all - temp.unwrap_or(0.0);
        if blocks > 0.0 {
            let bytes = round_to((blocks / waits * f64::from(bs)) as u32, bs);
            let less = temp.map_or(String::new(), |t| {
                format!(" less {t:.0} to temporary tablespaces")
            });
            return (
                bytes,
                format!("Instance Activity Stats, {stat} {all:.0} blocks{less} / {waits:.0} waits"),
            );
        }
    }
    if let Some(s) = function(r, func) {
        let (mib, reqs) = if write {
            (s.write_mib_s, s.write_reqs_s)
        } else {
            (s.read_mib_s, s.read_reqs_s)
        };
        if let (Some(mib), Some(reqs)) = (mib, reqs.filter(|q| *q > 0.0)) {
            let bytes = round_to((mib * 1_048_576.0 / reqs) as u32, bs);
            return (
                bytes,
                format!("IOStat by Function, {func} {mib:.3} MiB/s in {reqs:.2} {noun}s/s"),
            );
        }
    }
    (
        DEFAULT_EXTENT,
        format!("1 MiB (the report gives no direct {noun} size)"),
    )
}

/// DBWR writes: IOStat by Function's DBWR row, else Instance Activity's write
/// requests less direct path writes (the instance's own count), else IOStat by
/// Filetype's Data File writes less direct path writes.
fn dbwr(r: &AwrReport, w: &Waits, bs: u32, t: f64) -> Option<ModelClass> {
    let mean = w.mean("db file parallel write");
    let (rate, source) = if let Some(s) = function(r, "DBWR").filter(|s| s.write_reqs_s > Some(0.0))
    {
        let reqs = s.write_reqs_s?;
        let each = s
            .write_mib_s
            .map(|m| {
                format!(
                    " ({:.0} KiB each in production; dbio writes one block per I/O)",
                    m * 1024.0 / reqs
                )
            })
            .unwrap_or_default();
        (
            reqs,
            format!("IOStat by Function: DBWR {reqs:.2} writes/s{each}"),
        )
    } else if let Some(reqs) = r.activity_total("physical write IO requests") {
        let direct = w.count("direct path write") + w.count("direct path write temp");
        let n = reqs - direct;
        if n <= 0.0 {
            return None;
        }
        (
            n / t,
            format!(
                "Instance Activity Stats: physical write IO requests {reqs:.0} less {direct:.0} \
                 direct path writes, in {t:.0} s (no IOStat by Function)"
            ),
        )
    } else if let Some(q) = filetype(r, "Data File")
        .and_then(|s| s.write_reqs_s)
        .filter(|q| *q > 0.0)
    {
        let direct = (w.count("direct path write") + w.count("direct path write temp")) / t;
        let n = q - direct;
        if n <= 0.0 {
            return None;
        }
        (
            n,
            format!(
                "IOStat by Filetype: Data File {q:.2} writes/s less {direct:.2}/s direct path \
                 writes (no IOStat by Function)"
            ),
        )
    } else {
        return None;
    };
    Some(ModelClass {
        class: "dbwr-write".into(),
        event: "db file parallel write".into(),
        rate,
        size: bs,
        source,
        production_ios: Some(rate * t),
        production_mean_us: mean.as_ref().map(|m| m.0),
        mean_source: mean.map(|m| m.1),
        ..ModelClass::default()
    })
}

/// Redo writes at LGWR's rate, each the mean redo write (redo size over redo writes).
fn redo(r: &AwrReport, w: &Waits, t: f64) -> Option<ModelClass> {
    let lgwr = function(r, "LGWR")
        .and_then(|s| s.write_reqs_s)
        .filter(|q| *q > 0.0);
    let lfpw = w.count("log file parallel write");
    let writes = r.activity_total("redo writes").filter(|n| *n > 0.0);
    let (rate, rate_from) = if let Some(q) = lgwr {
        (q, format!("IOStat by Function: LGWR {q:.2} writes/s"))
    } else if lfpw > 0.0 {
        (
            lfpw / t,
            format!("Wait Events: log file parallel write, {lfpw:.0} waits in {t:.0} s"),
        )
    } else if let Some(q) = filetype(r, "Log File")
        .and_then(|s| s.write_reqs_s)
        .filter(|q| *q > 0.0)
    {
        (q, format!("IOStat by Filetype: Log File {q:.2} writes/s"))
    } else if let Some(n) = writes {
        (
            n / t,
            format!("Instance Activity Stats: redo writes, {n:.0} in {t:.0} s"),
        )
    } else if let Some(n) = r.activity_total("redo synch writes").filter(|n| *n > 0.0) {
        (
            n / t,
            format!(
                "Instance Activity Stats: redo synch writes, {n:.0} in {t:.0} s (commits that \
                 waited for a redo write: at most the redo writes)"
            ),
        )
    } else {
        return None;
    };
    let redo_bytes = r
        .activity_total("redo size")
        .or_else(|| r.load_profile.redo_bytes.map(|b| b * t));
    let (size, size_from) = match (redo_bytes, writes) {
        (Some(b), Some(n)) => (b / n, format!("redo size {b:.0} B / redo writes {n:.0}")),
        (Some(b), None) => (
            b / (rate * t),
            format!("redo size {b:.0} B / the writes above"),
        ),
        _ => (4096.0, "4 KiB (the report gives no redo size)".into()),
    };
    // Whole 512-byte sectors, as redo is written.
    let size = ((size / 512.0).round().max(1.0) as u32).min(2048) * 512;
    let mean = w.mean("log file parallel write");
    Some(ModelClass {
        class: "redo-write".into(),
        event: "log file parallel write".into(),
        rate,
        size,
        source: format!("{rate_from}; size: {size_from}"),
        production_ios: Some(rate * t),
        production_mean_us: mean.as_ref().map(|m| m.0),
        mean_source: mean.map(|m| m.1),
        ..ModelClass::default()
    })
}

#[cfg(test)]
#[path = "workload_tests.rs"]
mod tests;
