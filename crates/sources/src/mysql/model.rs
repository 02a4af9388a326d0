//! A MySQL or MariaDB capture's InnoDB I/O as a workload model: page reads, redo log
//! flushes, page writes and the doublewrite buffer, each figure with the status
//! counter or `performance_schema` table and column it came from.

use super::capture::{CaptureError, FileIo, MyCapture};
use crate::model::{ModelClass, WorkloadModel};

/// `performance_schema` events of InnoDB's files: the wait events a class is judged by.
pub const DATA_FILE: &str = "wait/io/file/innodb/innodb_data_file";
pub const LOG_FILE: &str = "wait/io/file/innodb/innodb_log_file";
/// MySQL 8.0.20 and later keep the doublewrite buffer in files of their own.
pub const DBLWR_FILE: &str = "wait/io/file/innodb/innodb_dblwr_file";

/// `performance_schema` timers are picoseconds.
const PS_PER_US: f64 = 1e6;

/// The model of `c`, named `file` in its source.
pub fn model_of(c: &MyCapture, file: &str) -> Result<WorkloadModel, CaptureError> {
    c.check()?;
    let s = &c.server;
    let t = c.elapsed_s();
    let page = s
        .setting_u64("innodb_page_size")
        .and_then(|p| u32::try_from(p).ok())
        .filter(|p| p.is_power_of_two() && (4096..=65536).contains(p))
        .unwrap_or(16384);
    let method = s.setting("innodb_flush_method").unwrap_or("fsync");
    let mut m = WorkloadModel {
        source: format!("{file}: {} at {}, {t:.0} s", s.name(), s.target),
        block_size: page,
        users: Some(c.sessions.max.max(1)),
        outstanding: Some(1),
        engine: Some("psync".into()),
        service_time: true,
        // Data files go through the page cache unless InnoDB opens them O_DIRECT.
        data_buffered: !method.starts_with("O_DIRECT"),
        ..WorkloadModel::default()
    };
    let total: u64 = s.schema_bytes.values().sum();
    if total > 0 {
        m.dataset_bytes = Some(total);
        m.dataset_source = Some(format!(
            "InnoDB's tablespaces' file sizes (or information_schema.tables) of {} schemas",
            s.schema_bytes.len()
        ));
    }
    m.notes.push(format!(
        "users: {} client sessions at most in the processlist ({} samples, mean {:.1}, at \
         most {} running a statement at once)",
        c.sessions.max, c.sessions.samples, c.sessions.mean, c.sessions.max_active
    ));
    if !c.has_file_io() {
        let why = c
            .end
            .performance_schema_missing
            .clone()
            .unwrap_or_else(|| "performance_schema was off".into());
        m.notes.push(format!(
            "latency: {why}, so the capture gives rates and sizes from SHOW GLOBAL STATUS \
             but no latencies to judge (performance_schema = ON in my.cnf, then a restart)"
        ));
    }
    reads(c, t, page, &mut m);
    super::shape::shape(c, page, &mut m);
    redo(c, t, &mut m);
    writes(c, t, page, &mut m);
    if m.data_buffered {
        m.notes.push(format!(
            "reads: innodb_flush_method {method}: InnoDB read its data files through the OS \
             page cache, and what share of its reads the cache served is not in its \
             counters; --page-cache SIZE replays the reads through a cache that size"
        ));
    }
    m.classes.retain(|k| k.rate > 0.0);
    Ok(m)
}

/// The model's single-block reads, to complete (the classes alone, so that its notes
/// stay free to add to).
fn single_reads(classes: &mut [ModelClass]) -> Option<&mut ModelClass> {
    classes.iter_mut().find(|k| k.class == "single-block-read")
}

fn mean_us(time_ps: u64, n: f64) -> Option<f64> {
    (time_ps > 0 && n > 0.0).then(|| time_ps as f64 / PS_PER_US / n)
}

/// Page reads: buffer pool misses read one page each, waited for by the session;
/// read-ahead, where the counters show it, as multiblock reads of an extent.
fn reads(c: &MyCapture, t: f64, page: u32, m: &mut WorkloadModel) {
    let ev = c.file_delta(DATA_FILE);
    let (n, bytes, from) = match &ev {
        Some(e) if e.count_read > 0 => (
            e.count_read as f64,
            e.bytes_read as f64,
            format!(
                "performance_schema.file_summary_by_event_name {DATA_FILE}: COUNT_READ {}, \
                 SUM_NUMBER_OF_BYTES_READ {}",
                e.count_read, e.bytes_read
            ),
        ),
        _ => {
            let n = c.status_delta("Innodb_data_reads").unwrap_or(0.0);
            let b = c.status_delta("Innodb_data_read").unwrap_or(0.0);
            (
                n,
                b,
                format!("SHOW GLOBAL STATUS: Innodb_data_reads {n:.0}, Innodb_data_read {b:.0}"),
            )
        }
    };
    if n <= 0.0 {
        return;
    }
    // Read-ahead pages are read by InnoDB's I/O threads, no session waits for them.
    let ahead = c
        .status_delta("Innodb_buffer_pool_read_ahead")
        .unwrap_or(0.0);
    let single = (n - ahead).max(0.0);
    let size = if bytes > 0.0 {
        (bytes / n / f64::from(page)).round().max(1.0) as u32 * page
    } else {
        page
    };
    let (mean, mean_source) = match &ev {
        Some(e) => match mean_us(e.sum_timer_read, n) {
            Some(mean) if ahead <= 0.05 * n => (
                Some(mean),
                format!("performance_schema {DATA_FILE}: SUM_TIMER_READ/COUNT_READ"),
            ),
            Some(_) => (
                None,
                format!(
                    "not judged: {ahead:.0} of the {n:.0} data-file reads were read-ahead, \
                     whose time no session waited for, and performance_schema times them \
                     together"
                ),
            ),
            None => (
                None,
                format!("missing: {DATA_FILE} SUM_TIMER_READ did not grow"),
            ),
        },
        None => (
            None,
            "missing: performance_schema was off, InnoDB's reads were not timed".into(),
        ),
    };
    m.classes.push(ModelClass {
        class: "single-block-read".into(),
        event: DATA_FILE.into(),
        rate: single / t,
        size,
        source: format!(
            "{from} in {t:.0} s, less Innodb_buffer_pool_read_ahead {ahead:.0}; size: bytes \
             per read"
        ),
        production_ios: Some(single),
        production_mean_us: mean,
        mean_source: Some(mean_source),
        ..ModelClass::default()
    });
    bursts(c, single, m);
    submitted_reads(c, m);
    if ahead > 0.0 {
        // An extent is 64 pages of up to 16 KiB, 1 MiB; larger pages, larger extents.
        let extent = if page <= 16384 { 1 << 20 } else { 64 * page };
        let pages_per = f64::from(extent / page);
        m.classes.push(ModelClass {
            class: "multiblock-read".into(),
            event: format!("{DATA_FILE} (read-ahead)"),
            rate: ahead / pages_per / t,
            size: extent,
            source: format!(
                "SHOW GLOBAL STATUS: Innodb_buffer_pool_read_ahead {ahead:.0} pages in {t:.0} \
                 s, as reads of one extent ({pages_per:.0} pages)"
            ),
            production_ios: Some(ahead / pages_per),
            mean_source: Some(
                "not judged: InnoDB's I/O threads read ahead, no session waits for it".into(),
            ),
            ..ModelClass::default()
        });
    }
}

/// How the sessions' page reads were grouped: a transaction's misses come one after
/// another while its statements run, so the read that follows another meets a storage
/// path just used. Per transaction (`Com_commit` + `Com_rollback`; each statement where
/// nothing was committed): the reads, and the statements' time spread over them. The
/// reads of background threads (purge, change buffer merges) come alone: their share
/// is what the sessions did not read themselves, where the per-user summary says.
fn bursts(c: &MyCapture, all_reads: f64, m: &mut WorkloadModel) {
    let Some(class) = single_reads(&mut m.classes) else {
        return;
    };
    let commits = c.status_delta("Com_commit").unwrap_or(0.0);
    let rollbacks = c.status_delta("Com_rollback").unwrap_or(0.0);
    let stmts = c.statements_delta();
    let (units, per) = if commits + rollbacks > 0.0 {
        (
            commits + rollbacks,
            format!("Com_commit {commits:.0} + Com_rollback {rollbacks:.0} transactions"),
        )
    } else if let Some((n, _)) = stmts.filter(|s| s.0 > 0.0) {
        (n, format!("{n:.0} statements, none in a transaction"))
    } else {
        return;
    };
    // The sessions' own calls on the data files, at most all the reads. The summary
    // has no count per operation, so their writes and extensions count too: an upper
    // bound of their reads (under sysbench's read-write load, 23% over their pread64
    // calls), and the share alone a lower bound.
    let sessions = c
        .session_data_file_delta()
        .map(|(n, _)| n.min(all_reads))
        .filter(|&n| n > 0.0);
    let reads = sessions.unwrap_or(all_reads);
    let alone = (all_reads - reads) / all_reads;
    let per_unit = reads / units;
    let Some((_, time_ps)) = stmts else {
        m.notes.push(format!(
            "reads: {per_unit:.2} per transaction ({per}), but not how far apart \
             (performance_schema's statement summaries are off): replayed spread evenly"
        ));
        return;
    };
    let span_us = time_ps / PS_PER_US / units;
    if per_unit < 1.0 {
        return;
    }
    let gap_us = span_us / per_unit;
    class.burst_reads = Some(per_unit);
    class.burst_gap_us = Some(gap_us);
    let whose = match sessions {
        Some(_) => {
            class.burst_alone = Some(alone).filter(|&a| a > 0.0 && a < 1.0);
            format!(
                "{reads:.0} of the {all_reads:.0} page reads the sessions' own, at \
                 most (performance_schema.events_waits_summary_by_user_by_event_name \
                 innodb_data_file COUNT_STAR of the users, their other calls \
                 included), the other {:.0} ({:.1}%) background threads' and alone",
                all_reads - reads,
                100.0 * alone
            )
        }
        None => format!("{reads:.0} page reads, all taken as the sessions' (no per-user summary)"),
    };
    class.burst_source = Some(format!(
        "{whose}; over {per} = {per_unit:.2} each; \
         performance_schema.events_statements_summary_global_by_event_name \
         SUM_TIMER_WAIT {span_us:.0} us per transaction over its reads = \
         {gap_us:.0} us apart"
    ));
    m.notes.push(format!(
        "reads: in bursts as production's transactions read, {per_unit:.1} each, \
         {gap_us:.0} us apart, {:.0}% alone ({})",
        100.0 * class.burst_alone.unwrap_or(0.0),
        class.burst_source.as_deref().unwrap_or_default()
    ));
}

/// The share of page reads InnoDB submitted asynchronously (io_uring or libaio: a
/// session's prefetch of a page's siblings, background threads' reads): no read system
/// call of the server's, and `performance_schema` times them to the submission only.
/// Known where the capture ran on the server's host.
fn submitted_reads(c: &MyCapture, m: &mut WorkloadModel) {
    let Some(class) = single_reads(&mut m.classes) else {
        return;
    };
    let reads = c.status_delta("Innodb_data_reads").unwrap_or(0.0);
    match c.server_syscr_delta() {
        Some(calls) if reads > 0.0 => {
            let submitted = (reads - calls).max(0.0);
            let share = submitted / reads;
            class.async_share = Some(share);
            class.async_source = Some(format!(
                "SHOW GLOBAL STATUS Innodb_data_reads {reads:.0} less the server's read \
                 system calls {calls:.0} (/proc/{}/io syscr, every read call of the \
                 server's: a lower bound) = {submitted:.0} submitted asynchronously, \
                 {:.1}%",
                c.end.server_process.map_or(0, |p| p.pid),
                100.0 * share
            ));
            m.notes.push(format!(
                "reads: {:.1}% submitted asynchronously and timed to their submission by \
                 performance_schema; replayed so ({})",
                100.0 * share,
                class.async_source.as_deref().unwrap_or_default()
            ));
        }
        _ => {
            let why = c
                .end
                .server_process_missing
                .as_deref()
                .unwrap_or("the snapshots read different server processes");
            m.notes.push(format!(
                "reads: how many InnoDB submitted asynchronously (timed to submission by \
                 performance_schema) is not known: {why}; all are replayed as waited for"
            ));
        }
    }
}

/// Redo log flushes: a write of the log buffer, then an fsync, or a write made durable
/// by itself (O_DSYNC).
fn redo(c: &MyCapture, t: f64, m: &mut WorkloadModel) {
    let s = &c.server;
    let log = c.file_delta(LOG_FILE);
    let o_dsync = s.setting("innodb_flush_method") == Some("O_DSYNC");
    let writes = match &log {
        Some(l) if l.count_write > 0 => l.count_write as f64,
        _ => c
            .status_delta("Innodb_log_writes")
            .filter(|w| *w > 0.0)
            .unwrap_or(0.0),
    };
    let bytes = c
        .status_delta("Innodb_os_log_written")
        .filter(|b| *b > 0.0)
        .or_else(|| log.as_ref().map(|l| l.bytes_written as f64))
        .unwrap_or(0.0);
    // MariaDB 10.8 and later count no log fsyncs apart (Innodb_os_log_fsyncs is gone):
    // each log write a commit waits for is followed by one, unless O_DSYNC.
    let (fsyncs, fsyncs_from) = match c.status_delta("Innodb_os_log_fsyncs") {
        Some(f) => (f, format!("Innodb_os_log_fsyncs {f:.0}")),
        None if o_dsync => (0.0, "no log fsyncs (O_DSYNC)".to_string()),
        None => (writes, "one fsync per log write".to_string()),
    };
    let dsync = o_dsync || fsyncs <= 0.0;
    let flushes = if dsync { writes } else { fsyncs };
    if flushes <= 0.0 {
        return;
    }
    let per_flush = bytes / flushes;
    let size = ((per_flush / 512.0).ceil().max(1.0) as u32) * 512;
    let (mean, mean_source) = match &log {
        Some(l) => {
            // COUNT_MISC holds the log's fsyncs (and a few opens and closes).
            let time = if dsync {
                l.sum_timer_write
            } else {
                l.sum_timer_write + l.sum_timer_misc
            };
            match mean_us(time, flushes) {
                Some(x) if dsync => (
                    Some(x),
                    format!("performance_schema {LOG_FILE}: SUM_TIMER_WRITE per write"),
                ),
                Some(x) => (
                    Some(x),
                    format!(
                        "performance_schema {LOG_FILE}: (SUM_TIMER_WRITE + SUM_TIMER_MISC) \
                         per Innodb_os_log_fsyncs"
                    ),
                ),
                None => (None, format!("missing: {LOG_FILE} timers did not grow")),
            }
        }
        None if c.has_file_io() => (
            None,
            format!(
                "missing: {} times no redo log I/O ({LOG_FILE} is not instrumented)",
                s.name()
            ),
        ),
        None => (
            None,
            "missing: performance_schema was off, InnoDB's log writes were not timed".into(),
        ),
    };
    // MariaDB 10.8 and later write the log O_DIRECT unless innodb_log_file_buffering;
    // MySQL writes it through the page cache.
    let buffered = match s.setting("innodb_log_file_buffering") {
        Some(_) => s.on("innodb_log_file_buffering"),
        None => true,
    };
    m.classes.push(ModelClass {
        class: "redo-write".into(),
        event: LOG_FILE.into(),
        rate: flushes / t,
        size,
        source: format!(
            "SHOW GLOBAL STATUS: {flushes:.0} flushes ({writes:.0} log writes, \
             {fsyncs_from}) in {t:.0} s; size: Innodb_os_log_written {bytes:.0} per flush, \
             rounded up to 512-byte log blocks"
        ),
        production_ios: Some(flushes),
        production_mean_us: mean,
        mean_source: Some(mean_source),
        flush: Some(if dsync { "dsync" } else { "fdatasync" }.into()),
        buffered: Some(buffered),
        ..ModelClass::default()
    });
    if writes > flushes * 1.05 {
        m.notes.push(format!(
            "redo: {:.2} log writes per flush; the replay writes each flush's bytes at once",
            writes / flushes
        ));
    }
    match s.setting_u64("innodb_flush_log_at_trx_commit") {
        Some(1) | None => {}
        Some(v) => m.notes.push(format!(
            "redo: innodb_flush_log_at_trx_commit = {v}: commits did not wait for the log's \
             flush, which InnoDB made about once a second; its latency is not in any \
             commit's"
        )),
    }
}

/// Page writes by the page cleaners, and the doublewrite buffer's batches before them.
fn writes(c: &MyCapture, t: f64, page: u32, m: &mut WorkloadModel) {
    let pages = c.status_delta("Innodb_pages_written").unwrap_or(0.0);
    let dblwr_pages = c.status_delta("Innodb_dblwr_pages_written").unwrap_or(0.0);
    let dblwr_writes = c.status_delta("Innodb_dblwr_writes").unwrap_or(0.0);
    let not_judged = "not judged: InnoDB's page cleaners write in the background, no \
                      session waits for a page write";
    if pages > 0.0 {
        m.classes.push(ModelClass {
            class: "dbwr-write".into(),
            event: format!("{DATA_FILE} (writes)"),
            rate: pages / t,
            size: page,
            source: format!(
                "SHOW GLOBAL STATUS: Innodb_pages_written {pages:.0} in {t:.0} s, one page each"
            ),
            production_ios: Some(pages),
            mean_source: Some(not_judged.into()),
            // The page cleaners submit each page's write and wait for none of them.
            async_share: c.server.on("innodb_use_native_aio").then_some(1.0),
            async_source: c.server.on("innodb_use_native_aio").then(|| {
                "innodb_use_native_aio ON: the page cleaners submit the writes \
                 asynchronously"
                    .into()
            }),
            ..ModelClass::default()
        });
    }
    if dblwr_writes > 0.0 && dblwr_pages > 0.0 {
        let per = (dblwr_pages / dblwr_writes).round().max(1.0) as u32;
        let event = match c.file_delta(DBLWR_FILE) {
            Some(FileIo { count_write, .. }) if count_write > 0 => DBLWR_FILE.to_string(),
            _ => format!("{DATA_FILE} (doublewrite)"),
        };
        m.classes.push(ModelClass {
            class: "direct-write".into(),
            event,
            rate: dblwr_writes / t,
            size: per * page,
            source: format!(
                "SHOW GLOBAL STATUS: Innodb_dblwr_writes {dblwr_writes:.0}, \
                 Innodb_dblwr_pages_written {dblwr_pages:.0} in {t:.0} s: one sequential \
                 write of the batch before its pages are written in place"
            ),
            production_ios: Some(dblwr_writes),
            mean_source: Some(not_judged.into()),
            ..ModelClass::default()
        });
    }
    // Innodb_data_fsyncs counts the log's too.
    let log_fsyncs = m
        .classes
        .iter()
        .find(|k| k.class == "redo-write" && k.flush.as_deref() == Some("fdatasync"))
        .and_then(|k| k.production_ios)
        .unwrap_or(0.0);
    let data_fsyncs = c.status_delta("Innodb_data_fsyncs").unwrap_or(0.0) - log_fsyncs;
    if data_fsyncs > 0.0 {
        m.not_replayed.push(format!(
            "data file fsyncs: {:.2}/s (Innodb_data_fsyncs less the log's; no fsync class \
             for data files)",
            data_fsyncs / t
        ));
    }
    if let Some(temp) = c.file_delta("wait/io/file/innodb/innodb_temp_file") {
        let b = temp.bytes_read + temp.bytes_written;
        if b > 0 {
            m.not_replayed.push(format!(
                "temporary tablespace: {:.0} bytes/s (the data set has none)",
                b as f64 / t
            ));
        }
    }
    if c.server.on("log_bin") {
        m.not_replayed.push(
            "binary log: its writes and syncs (sync_binlog) are not in InnoDB's counters".into(),
        );
    }
}
