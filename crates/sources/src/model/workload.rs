//! The workload model a replay runs: per I/O class, the rate and size production asked
//! of its storage, where each figure came from, and the latency production saw. Built
//! from an AWR report ([`crate::awr::model_of`]) or read from a TOML profile a user edited.

use serde::{Deserialize, Serialize};

/// Classes a model may name (dbio's I/O classes).
pub const CLASSES: [&str; 6] = [
    "single-block-read",
    "multiblock-read",
    "direct-read",
    "dbwr-write",
    "redo-write",
    "direct-write",
];

/// The I/O a database did, as rates per class.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadModel {
    /// What it was built from: "awrrpt_1_36006_36007.html: XYDB (xydb), snapshots
    /// 36006-36007, 3605 s".
    pub source: String,
    /// Database block size, bytes (single-block reads and DBWR writes are one block).
    #[serde(default = "default_block")]
    pub block_size: u32,
    /// Data-set size in bytes, where known; else `--size` or dbio's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset_bytes: Option<u64>,
    /// Where `dataset_bytes` came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset_source: Option<String>,
    /// The classes replayed, in dbio's class order.
    pub classes: Vec<ModelClass>,
    /// I/O the report shows that dbio does not replay, and why (control file I/O,
    /// direct path writes, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_replayed: Vec<String>,
    /// Sessions production ran (the replay's users unless `--users` says otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub users: Option<u32>,
    /// I/Os each session had in flight (1: each waits for its own I/O, as a
    /// PostgreSQL backend does); the replay's `--outstanding` unless given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outstanding: Option<u32>,
    /// The engine that issues I/O as production did ("psync": one system call per
    /// I/O, waited for); the replay's `--engine` unless given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// Reads handed to this many I/O workers, each session waiting for its read's
    /// completion (PostgreSQL 18's `io_method=worker`, `io_workers`); none: each
    /// session reads itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_workers: Option<u32>,
    /// Production's times count each I/O from its call to its return, not the wait
    /// for a free session before it: compared with this storage's service time (the
    /// latency less the time an arrival waited to be issued).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub service_time: bool,
    /// Production read and wrote its data files through the OS page cache
    /// (PostgreSQL without `debug_io_direct`): each read it counted is a page-cache
    /// lookup, and a miss costs more than the device's time. The replay reads the same
    /// way when told the size of the server's page cache (`--page-cache`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub data_buffered: bool,
    /// The page cache between production and its storage: its size, the share of
    /// reads it served, and the skew fitted to that share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_cache: Option<PageCacheShape>,
    /// The relations production's reads spread over, laid out in the data set in
    /// proportion to their sizes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relations: Vec<RelationShare>,
    /// What a reader of the figures must know: where production's times mix in other
    /// things, what the source could not say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn default_block() -> u32 {
    8192
}

/// One class of the model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelClass {
    /// dbio class: single-block-read, multiblock-read, direct-read, dbwr-write,
    /// redo-write.
    pub class: String,
    /// The Oracle wait event production's latency is compared with.
    pub event: String,
    /// I/Os per second at 1x.
    pub rate: f64,
    /// Bytes per I/O.
    pub size: u32,
    /// Where the rate and size came from (section and figures).
    pub source: String,
    /// I/Os of this class over the report's interval (for the expected spread of a
    /// short run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub production_ios: Option<f64>,
    /// Production's mean wait of `event`, microseconds (the default objective).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub production_mean_us: Option<f64>,
    /// Where `production_mean_us` came from, or why there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_source: Option<String>,
    /// redo-write only: how each write is made durable: "dsync" (the write itself,
    /// O_DSYNC; the default) or "fdatasync" (written, then the file fdatasync'd).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<String>,
    /// redo-write only: the log goes through the page cache (PostgreSQL's WAL
    /// without direct I/O); the data files stay as the run opens them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffered: Option<bool>,
    /// Microseconds production's processes waited for a CPU per wake-up (a PostgreSQL
    /// capture's /proc/PID/schedstat): in production's times, not in the storage's, so
    /// the replay adds it, less its own I/O threads' wait and times the share of its
    /// calls that slept, to this storage's mean to predict production's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wait_us: Option<f64>,
    /// Where `cpu_wait_us` came from, or why it is not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wait_source: Option<String>,
    /// Reads only: the share (0 to 1) of each read's buffer pages that production's
    /// processes had not mapped when the read began (a PostgreSQL backend reading
    /// into a shared buffer it never touched), so the kernel faulted them in inside
    /// the read call. The replay unmaps that share of its own buffers' pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmapped_pages: Option<f64>,
    /// Where `unmapped_pages` came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmapped_source: Option<String>,
    /// Reads only: production's reads came in bursts, a transaction's one after
    /// another: this many per burst on average (at least 1), ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_reads: Option<f64>,
    /// ... this many microseconds apart (the transaction's statement time over its
    /// reads). The replay issues them so; a storage path serves a read that follows
    /// another sooner than one alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_gap_us: Option<f64>,
    /// ... and this share of the reads (0 to below 1) came alone instead, outside any
    /// transaction (a database's background threads: purge, change buffer merges).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_alone: Option<f64>,
    /// Where the bursts' figures came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_source: Option<String>,
    /// single-block-read and dbwr-write only: the share (0 to 1) of the class's I/Os
    /// production submitted asynchronously and waited for no one of (InnoDB's
    /// io_uring or libaio), whose time its performance_schema counts to the
    /// submission only. The replay submits that share through one shared ring and
    /// times it so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub async_share: Option<f64>,
    /// Where `async_share` came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub async_source: Option<String>,
}

/// A model that cannot be used: the file, the line where known, and what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}{}: {what}", line.map_or(String::new(), |l| format!(" line {l}")))]
pub struct ModelError {
    pub file: String,
    pub line: Option<usize>,
    pub what: String,
}

/// How a redo-write class's writes are made durable.
pub const FLUSHES: [&str; 2] = ["dsync", "fdatasync"];

/// The most reads a burst may have on average (as the replay's arrivals take it).
const MAX_BURST: f64 = 10_000.0;

/// Largest single I/O a model may ask (dbio's largest multiblock read).
const MAX_SIZE: u32 = 64 << 20;

impl WorkloadModel {
    /// The model as an editable TOML profile, with a header saying what each field is.
    pub fn to_toml(&self) -> String {
        let body = toml::to_string(self).unwrap_or_default();
        format!(
            "# dbio workload model: edit and run with `dbio replay --model FILE`.\n\
             # Per class: rate = I/Os per second at 1x, size = bytes per I/O, event = the\n\
             # Oracle wait event it is compared with, production_mean_us = the latency\n\
             # production saw (the default objective), source = where the figures came from,\n\
             # cpu_wait_us = time production waited for a CPU per I/O, added to this storage's;\n\
             # unmapped_pages = share of a read's buffer pages production had to fault in;\n\
             # burst_reads, burst_gap_us = reads per transaction and the time between them,\n\
             # burst_alone = the share of reads that came alone (background threads);\n\
             # async_share = the share submitted and not waited for, timed to submission.\n\
             {body}"
        )
    }

    /// Reads a TOML profile; `file` names it in errors.
    pub fn from_toml(text: &str, file: &str) -> Result<WorkloadModel, ModelError> {
        let m: WorkloadModel = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            ModelError {
                file: file.to_string(),
                line,
                what: e.message().lines().next().unwrap_or("").trim().to_string(),
            }
        })?;
        m.check().map_err(|(i, what)| ModelError {
            file: file.to_string(),
            // The line of the class's `[[classes]]` header.
            line: i.and_then(|i| {
                text.lines()
                    .enumerate()
                    .filter(|(_, l)| l.trim() == "[[classes]]")
                    .nth(i)
                    .map(|(n, _)| n + 1)
            }),
            what,
        })?;
        Ok(m)
    }

    /// What a run cannot do with this model: (index of the class, what is wrong).
    pub fn check(&self) -> Result<(), (Option<usize>, String)> {
        if !self.block_size.is_power_of_two() || !(2048..=32768).contains(&self.block_size) {
            return Err((
                None,
                format!(
                    "block_size {}: a power of two from 2048 to 32768",
                    self.block_size
                ),
            ));
        }
        if matches!(self.io_workers, Some(n) if !(1..=32).contains(&n)) {
            return Err((None, "io_workers: from 1 to 32".into()));
        }
        if self.users == Some(0) || self.outstanding == Some(0) {
            return Err((None, "users and outstanding must be at least 1".into()));
        }
        if self.classes.is_empty() {
            return Err((None, "no [[classes]]: nothing to replay".into()));
        }
        for r in &self.relations {
            if !(r.share.is_finite() && (0.0..=1.0).contains(&r.share)) {
                return Err((
                    None,
                    format!(
                        "relation {:?}: share {} must be from 0 to 1",
                        r.name, r.share
                    ),
                ));
            }
        }
        if let Some(p) = &self.page_cache {
            if let Some(s) = p
                .skew
                .filter(|s| !(s.is_finite() && (0.0..=MAX_SKEW).contains(s)))
            {
                return Err((None, format!("page_cache.skew {s}: from 0 to {}", MAX_SKEW)));
            }
            if let Some(h) = p
                .hit_share
                .filter(|h| !(h.is_finite() && (0.0..=1.0).contains(h)))
            {
                return Err((None, format!("page_cache.hit_share {h}: from 0 to 1")));
            }
        }
        for (i, c) in self.classes.iter().enumerate() {
            let at = |what: String| Err((Some(i), format!("class {:?}: {what}", c.class)));
            if !CLASSES.contains(&c.class.as_str()) {
                return at(format!("unknown class (one of {})", CLASSES.join(", ")));
            }
            if self.classes[..i].iter().any(|o| o.class == c.class) {
                return at("given twice".into());
            }
            if !(c.rate.is_finite() && c.rate > 0.0) {
                return at(format!("rate {} must be above 0 I/Os per second", c.rate));
            }
            let block = matches!(c.class.as_str(), "single-block-read" | "dbwr-write");
            if block && c.size != self.block_size {
                return at(format!(
                    "size {} must be the block size ({}): dbio issues these one block at a time",
                    c.size, self.block_size
                ));
            }
            if c.class != "redo-write" && (c.flush.is_some() || c.buffered.is_some()) {
                return at("flush and buffered apply to redo-write only".into());
            }
            if let Some(w) = c.cpu_wait_us.filter(|w| !(w.is_finite() && *w >= 0.0)) {
                return at(format!(
                    "cpu_wait_us {w}: a time in microseconds, 0 or more"
                ));
            }
            if let Some(u) = c.unmapped_pages {
                if !c.class.ends_with("-read") {
                    return at("unmapped_pages applies to reads only".into());
                }
                if !(0.0..=1.0).contains(&u) {
                    return at(format!("unmapped_pages {u}: a share from 0 to 1"));
                }
            }
            match (c.burst_reads, c.burst_gap_us) {
                (None, None) => {}
                (Some(n), Some(g)) => {
                    if !c.class.ends_with("-read") {
                        return at("burst_reads and burst_gap_us apply to reads only".into());
                    }
                    if !(1.0..=MAX_BURST).contains(&n) {
                        return at(format!("burst_reads {n}: from 1 to {MAX_BURST}"));
                    }
                    if !(g.is_finite() && g >= 0.0) {
                        return at(format!(
                            "burst_gap_us {g}: a time in microseconds, 0 or more"
                        ));
                    }
                }
                _ => return at("burst_reads and burst_gap_us go together".into()),
            }
            if let Some(a) = c.burst_alone {
                if c.burst_reads.is_none() {
                    return at("burst_alone goes with burst_reads".into());
                }
                if !(0.0..1.0).contains(&a) {
                    return at(format!("burst_alone {a}: a share from 0 to below 1"));
                }
            }
            if let Some(a) = c.async_share {
                if !matches!(c.class.as_str(), "single-block-read" | "dbwr-write") {
                    return at(
                        "async_share applies to single-block-read and dbwr-write only".into(),
                    );
                }
                if !(0.0..=1.0).contains(&a) {
                    return at(format!("async_share {a}: a share from 0 to 1"));
                }
            }
            if let Some(f) = c.flush.as_deref().filter(|f| !FLUSHES.contains(f)) {
                return at(format!("flush {f:?}: one of {}", FLUSHES.join(", ")));
            }
            if c.class == "redo-write" && (c.size < 512 || c.size % 512 != 0 || c.size > MAX_SIZE) {
                return at(format!(
                    "size {} must be a multiple of 512 up to {MAX_SIZE}",
                    c.size
                ));
            }
            let extent = matches!(
                c.class.as_str(),
                "multiblock-read" | "direct-read" | "direct-write"
            );
            if extent
                && (c.size < self.block_size || c.size % self.block_size != 0 || c.size > MAX_SIZE)
            {
                return at(format!(
                    "size {} must be a whole number of {}-byte blocks up to {MAX_SIZE}",
                    c.size, self.block_size
                ));
            }
        }
        Ok(())
    }

    /// The class named `name`.
    pub fn class(&self, name: &str) -> Option<&ModelClass> {
        self.classes.iter().find(|c| c.class == name)
    }

    /// Whether production's page writes came from a writer of their own, submitted
    /// and waited for by no session (InnoDB's page cleaners with native AIO): the
    /// replay then runs them, and the doublewrite batches, on a user of their own.
    pub fn page_writer(&self) -> bool {
        self.class("dbwr-write")
            .and_then(|c| c.async_share)
            .is_some_and(|a| a >= 0.5)
    }
}

/// One relation (a table's heap, or its indexes) and its share of the reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelationShare {
    /// "public.pgbench_accounts", "public.pgbench_accounts (indexes)", or "the rest".
    pub name: String,
    /// Its size in production, bytes.
    pub bytes: u64,
    /// Its share of the accesses the replay draws, 0 to 1: of every access (buffer
    /// pool hits and reads) when the model has a buffer pool, else of the reads.
    pub share: f64,
    /// The share of its accesses the buffer pool served, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_share: Option<f64>,
    /// Its own Zipf exponent, fitted to `hit_share`; none: the model's `skew`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skew: Option<f64>,
}

/// The page cache between production's database and its storage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageCacheShape {
    /// Bytes of page cache the server had, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Where `bytes` came from, or why it is not known.
    pub bytes_source: String,
    /// The share of the database's reads the page cache served (none reached the
    /// device), 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_share: Option<f64>,
    /// Mean size of a device read under the database, bytes (read-ahead makes it
    /// larger than a block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_read_bytes: Option<u64>,
    /// Bytes the device delivered per byte the database read, 0 to 1 and beyond (0:
    /// the page cache served all; 1: every byte came from the device; above 1: the
    /// read-ahead fetched more than was read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetched_share: Option<f64>,
    /// Where `hit_share` and `device_read_bytes` came from, or why not known.
    pub hit_source: String,
    /// The database's own buffer pool in front of its reads (PostgreSQL's
    /// shared_buffers), bytes: the replay simulates one of this size and reads what
    /// it misses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_pool_bytes: Option<u64>,
    /// The share of accesses that buffer pool served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_pool_hit_share: Option<f64>,
    /// The read-ahead of the data's device, KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_ahead_kb: Option<u32>,
    /// Zipf exponent of the reads within each relation, fitted to `hit_share` at
    /// `bytes` (0: uniform).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skew: Option<f64>,
    /// The share of each relation's blocks read at all in the window, its hottest,
    /// fitted with the skew to the page cache's hit share (none: every block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<f64>,
    /// The hot blocks of a relation are next to each other (device reads larger
    /// than two blocks: the read-ahead found hot neighbours).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub clustered: bool,
    /// How `skew` was found, or why there is none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub skew_source: String,
}

/// Steepest skew fitted.
pub const MAX_SKEW: f64 = 3.0;

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> WorkloadModel {
        WorkloadModel {
            source: "r.txt: DB (db), snapshots 1-2, 3600 s".into(),
            block_size: 8192,
            dataset_bytes: None,
            dataset_source: None,
            classes: vec![
                ModelClass {
                    class: "single-block-read".into(),
                    event: "db file sequential read".into(),
                    rate: 538.25,
                    size: 8192,
                    source: "Wait Events: 1938901 waits / 3605 s".into(),
                    production_ios: Some(1_938_901.0),
                    production_mean_us: Some(21.0),
                    mean_source: Some("time/waits (Top events)".into()),
                    ..ModelClass::default()
                },
                ModelClass {
                    class: "redo-write".into(),
                    event: "log file parallel write".into(),
                    rate: 30.61,
                    size: 169_984,
                    source: "IOStat by Function: LGWR".into(),
                    production_ios: None,
                    production_mean_us: None,
                    mean_source: None,
                    flush: Some("fdatasync".into()),
                    buffered: Some(true),
                    cpu_wait_us: Some(18.5),
                    cpu_wait_source: Some("/proc/PID/schedstat".into()),
                    ..ModelClass::default()
                },
            ],
            not_replayed: vec!["control file parallel write: 0.7/s".into()],
            users: Some(4),
            outstanding: Some(1),
            engine: Some("psync".into()),
            io_workers: Some(3),
            service_time: true,
            data_buffered: true,
            page_cache: Some(crate::model::PageCacheShape {
                bytes: Some(512 << 20),
                bytes_source: "memory cgroup".into(),
                hit_share: Some(0.95),
                device_read_bytes: Some(141_824),
                fetched_share: Some(0.9),
                buffer_pool_bytes: Some(128 << 20),
                buffer_pool_hit_share: Some(0.99),
                hit_source: "/proc/PID/io".into(),
                read_ahead_kb: Some(128),
                skew: Some(1.05),
                clustered: true,
                span: None,
                skew_source: "fitted".into(),
            }),
            relations: vec![crate::model::RelationShare {
                name: "public.pgbench_accounts".into(),
                bytes: 1 << 30,
                share: 0.6,
                hit_share: Some(0.98),
                skew: Some(0.7),
            }],
            notes: vec!["a note".into()],
        }
    }

    #[test]
    fn toml_round_trip() {
        let m = model();
        let text = m.to_toml();
        assert!(text.starts_with("# dbio workload model"));
        assert_eq!(WorkloadModel::from_toml(&text, "m.toml").unwrap(), m);
        // An edit reads back as edited.
        let edited = text.replace("rate = 538.25", "rate = 1000.0");
        let e = WorkloadModel::from_toml(&edited, "m.toml").unwrap();
        assert_eq!(e.classes[0].rate, 1000.0);
    }

    #[test]
    fn bad_lines_are_named() {
        let text = model().to_toml();
        let line_of = |needle: &str| text.lines().position(|l| l.starts_with(needle)).unwrap() + 1;
        let bad = text.replace("rate = 538.25", "rate = fast");
        let e = WorkloadModel::from_toml(&bad, "m.toml").unwrap_err();
        assert_eq!(e.line, Some(line_of("rate = 538.25")));
        assert!(e.to_string().starts_with("m.toml line "), "{e}");
        let bad = text.replace("size = 169984", "size = 1000");
        let e = WorkloadModel::from_toml(&bad, "m.toml").unwrap_err();
        let second = text
            .lines()
            .enumerate()
            .filter(|(_, l)| *l == "[[classes]]")
            .nth(1)
            .unwrap()
            .0
            + 1;
        assert_eq!(e.line, Some(second));
        assert!(e.what.contains("multiple of 512"), "{e}");
        let bad = text.replace("rate = 30.61", "rate = 30.61\nspeed = 3");
        let e = WorkloadModel::from_toml(&bad, "m.toml").unwrap_err();
        assert!(e.what.contains("unknown field `speed`"), "{e}");
        let bad = text.replace("\"single-block-read\"", "\"sbr\"");
        assert!(WorkloadModel::from_toml(&bad, "m.toml")
            .unwrap_err()
            .what
            .contains("unknown class"));
    }
}
