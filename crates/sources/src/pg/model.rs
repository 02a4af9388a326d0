//! A PostgreSQL capture's I/O as a workload model: relation reads, WAL flushes and
//! buffered block writes, each figure from the view, rows and columns named in its
//! source; what the views count but dbio does not replay is listed, and what the
//! figures mix in is said in the model's notes.

use serde_json::Value;

use super::capture::{CaptureError, PgCapture};
use crate::model::{ModelClass, WorkloadModel};

/// PostgreSQL's wait events for the classes it replays.
pub const READ_EVENT: &str = "DataFileRead";
pub const WAL_EVENT: &str = "WALWrite+WALSync";
pub const WRITE_EVENT: &str = "DataFileWrite";

/// The model of `c`, named `file` in its source.
pub fn model_of(c: &PgCapture, file: &str) -> Result<WorkloadModel, CaptureError> {
    c.check()?;
    let t = c.elapsed_s();
    let bs = c
        .setting("block_size")
        .and_then(|b| b.parse::<u32>().ok())
        .filter(|b| b.is_power_of_two() && (2048..=32768).contains(b))
        .unwrap_or(8192);
    let mut m = WorkloadModel {
        source: format!(
            "{file}: PostgreSQL {} at {}, {t:.0} s",
            version_text(c),
            c.target
        ),
        block_size: bs,
        users: Some(c.sessions.max.max(1)),
        outstanding: Some(1),
        engine: Some("psync".into()),
        service_time: true,
        ..WorkloadModel::default()
    };
    let total: u64 = c.database_bytes.values().sum();
    if total > 0 {
        m.dataset_bytes = Some(total);
        m.dataset_source = Some(format!(
            "pg_database_size of the server's {} databases",
            c.database_bytes.len()
        ));
    }
    m.notes.push(format!(
        "users: {} client sessions at most in pg_stat_activity ({} samples, mean {:.1}, \
         at most {} active at once)",
        c.sessions.max, c.sessions.samples, c.sessions.mean, c.sessions.max_active
    ));
    m.data_buffered = !c
        .setting("debug_io_direct")
        .is_some_and(|v| v.split(',').any(|p| p.trim() == "data"));
    reads(c, t, bs, &mut m);
    super::cache::shape(c, bs, &mut m);
    wal(c, t, &mut m);
    cpu_wait(c, &mut m);
    writes(c, t, bs, &mut m);
    m.classes.retain(|k| k.rate > 0.0);
    Ok(m)
}

/// The time PostgreSQL's processes waited for a CPU, as a term of the read and WAL
/// classes' prediction.
///
/// PostgreSQL takes the clock before and after each read (and around each WAL write
/// and sync). A read that goes to the device puts the backend to sleep; the I/O's
/// completion makes it runnable, and it takes the second clock only once it has a CPU
/// again. On a busy host (the server's backends and its clients on a few cores) that
/// wait is in read_time but not in the storage's latency, and dbio's replay, a few
/// threads doing only the I/O, hardly waits at all. So the prediction of what
/// PostgreSQL would time on the replay's storage is the storage's service time plus
/// one run-queue wait per blocking call, as the server's processes waited during the
/// capture: the server is assumed to keep its CPUs as busy on the new storage.
///
/// One wait per call is the kernel's run-queue time over the number of timeslices
/// (schedstat fields 2 and 3): each blocking call ends in one wake-up, so in one
/// timeslice, and the mean over timeslices is the mean wait of a wake-up on that
/// host. Not run-queue time over reads: a backend also sleeps for its client's next
/// query, and those waits are not in any read's time. A WAL flush (write, then
/// fdatasync) sleeps once, in the sync; with open_datasync, in the write. Block
/// writes are not judged, so they get no term.
///
/// Traced (scripts/trace-reads), the replay's own reads wait for a CPU after their
/// wake-ups too, 3-8 us against the server's 5-14 on this 2-core host: the replay
/// therefore reads its own I/O threads' schedstat over its window and adds only the
/// server's wait beyond it (see `cpu_term` in the replay's outcome). What else the
/// server's read call spends beyond dbio's, faults mapping the buffer, is replayed
/// (see [`faults`]).
fn cpu_wait(c: &PgCapture, m: &mut WorkloadModel) {
    let known = c.cpu_wait();
    for k in m
        .classes
        .iter_mut()
        .filter(|k| k.event == READ_EVENT || k.event == WAL_EVENT)
    {
        match &known {
            Ok(w) => {
                k.cpu_wait_us = Some(w.per_slice_us);
                k.cpu_wait_source = Some(w.source());
            }
            Err(why) => k.cpu_wait_source = Some(format!("not known: {why}")),
        }
    }
    if m.classes.iter().any(|k| k.cpu_wait_source.is_some()) {
        m.notes.push(match &known {
            Ok(w) => format!(
                "CPU: PostgreSQL's read and WAL times include the wait for a CPU after each \
                 call that sleeps, {:.1} us per timeslice during the capture; the replay adds \
                 what of it is beyond its own I/O threads' wait to this storage's mean, for \
                 the share of its calls that slept, to predict PostgreSQL's (the server's \
                 CPUs assumed as busy there)",
                w.per_slice_us
            ),
            Err(why) => format!(
                "CPU: the time PostgreSQL's processes waited for a CPU is not known ({why}); \
                 it is in PostgreSQL's read and WAL times but not in this storage's, and the \
                 prediction is this storage's alone"
            ),
        });
    }
    if let Ok(w) = &known {
        faults(w, m);
    }
}

/// The minor page faults PostgreSQL's backends took per read, replayed: a read into a
/// shared buffer its backend has not mapped yet faults the buffer's pages in inside
/// the read call (the kernel pins them for the transfer), CPU that is in read_time but
/// in no storage's time. Traced on zram, those faults were a sixth of the read call's
/// CPU. The read class's `unmapped_pages` is the faults over the reads' pages, at most
/// all of them: every fault of the backends counts, so it bounds those of the reads
/// from above.
fn faults(w: &super::CpuWait, m: &mut WorkloadModel) {
    let Some(k) = m.classes.iter_mut().find(|k| k.event == READ_EVENT) else {
        return;
    };
    let Some(n) = k.production_ios.filter(|n| *n > 0.0) else {
        return;
    };
    if w.minor_faults == 0 {
        return;
    }
    let per_read = w.minor_faults as f64 / n;
    let pages = f64::from(k.size.div_ceil(4096).max(1));
    let share = (per_read / pages).min(1.0);
    k.unmapped_pages = Some(share);
    k.unmapped_source = Some(format!(
        "/proc/PID/stat field 10 of the {}: {} minor faults over {n:.0} reads of {} pages",
        w.which, w.minor_faults, pages
    ));
    m.notes.push(format!(
        "faults: the {} took {per_read:.1} minor page faults per read during the capture \
         ({} over {n:.0} reads, every fault counted, so at most this many in the reads): a \
         read into a shared buffer its backend has not mapped yet takes them inside the \
         read call, CPU in PostgreSQL's read time that is not the storage's; the replay \
         reads into shared memory with {:.0}% of each read's pages unmapped first, so its \
         reads take them too",
        w.which,
        w.minor_faults,
        share * 100.0
    ));
}

fn version_text(c: &PgCapture) -> String {
    c.server
        .strip_prefix("PostgreSQL ")
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or(&c.server)
        .to_string()
}

fn is(r: &Value, column: &str, value: &str) -> bool {
    r.get(column).and_then(Value::as_str) == Some(value)
}

fn relation(r: &Value) -> bool {
    is(r, "object", "relation")
}

fn any(_: &Value) -> bool {
    true
}

/// Mean in microseconds of `time_ms` over `n`, when there is time to divide.
fn mean_us(time_ms: Option<f64>, n: f64) -> Option<f64> {
    time_ms
        .filter(|t| *t > 0.0 && n > 0.0)
        .map(|t| t * 1000.0 / n)
}

/// Relation reads: pg_stat_io's relation rows (16+), else pg_stat_database.
fn reads(c: &PgCapture, t: f64, bs: u32, m: &mut WorkloadModel) {
    let timing = c.on("track_io_timing");
    let (n, time, size, from) = if c.has_view("pg_stat_io") {
        let n = c.delta("pg_stat_io", "reads", relation).unwrap_or(0.0);
        let time = c.delta("pg_stat_io", "read_time", relation);
        let (size, size_from) = match c.delta("pg_stat_io", "read_bytes", relation) {
            Some(b) if n > 0.0 => (b / n, format!("; size: read_bytes/reads = {b:.0}/{n:.0}")),
            _ => (f64::from(bs), format!("; size: op_bytes {bs}")),
        };
        let from = format!(
            "pg_stat_io, object relation, all backend types and contexts: reads \
             {n:.0} in {t:.0} s{size_from}"
        );
        (n, time, size, from)
    } else {
        let n = c.delta("pg_stat_database", "blks_read", any).unwrap_or(0.0);
        let time = c.delta("pg_stat_database", "blk_read_time", any);
        let from = format!(
            "pg_stat_database, all databases: blks_read {n:.0} in {t:.0} s; size: block_size"
        );
        (n, time, f64::from(bs), from)
    };
    if n <= 0.0 {
        return;
    }
    let blocks = (size / f64::from(bs)).round().max(1.0) as u32;
    let class = if blocks > 1 {
        "multiblock-read"
    } else {
        "single-block-read"
    };
    let (time_col, view) = if c.has_view("pg_stat_io") {
        ("read_time", "pg_stat_io")
    } else {
        ("blk_read_time", "pg_stat_database")
    };
    let mean = if timing { mean_us(time, n) } else { None };
    let mean_source = match mean {
        Some(_) => format!("{view}: {time_col}/reads"),
        None if !timing => "missing: track_io_timing was off, PostgreSQL did not time its \
                            reads (turn it on to judge read latency)"
            .into(),
        None => format!("missing: {view} {time_col} did not grow"),
    };
    m.classes.push(ModelClass {
        class: class.into(),
        event: READ_EVENT.into(),
        rate: n / t,
        size: blocks * bs,
        source: from,
        production_ios: Some(n),
        production_mean_us: mean,
        mean_source: Some(mean_source),
        ..ModelClass::default()
    });
    m.notes.push(
        "reads: PostgreSQL counts every block it asked of the kernel, so reads the OS page \
         cache served are among them, and its read time includes waiting for a CPU and for \
         memory; with a page cache much smaller than the database the two agree"
            .into(),
    );
    if m.data_buffered {
        m.notes.push(
            "reads: PostgreSQL read through the OS page cache (debug_io_direct without \
             data): a miss costs it more than the device's time (a page allocated, often \
             one reclaimed first, and a copy); --page-cache SIZE, the server's page cache, \
             replays the reads the same way through a cache that size"
                .into(),
        );
    }
    if c.major() == 17 {
        m.notes.push(
            "reads: PostgreSQL 17 counts combined reads block by block, so its time per read \
             is per block where it read several at once"
                .into(),
        );
    }
    match c.setting("io_method") {
        Some("worker") => {
            let n = c
                .setting("io_workers")
                .and_then(|v| v.parse::<u32>().ok())
                .unwrap_or(3)
                .clamp(1, 32);
            m.io_workers = Some(n);
            m.notes.push(format!(
                "reads: io_method worker with {n} I/O workers (io_workers): a backend \
                 reads a single block it waits for at once itself (ReadBuffer, a read \
                 stream's one-block fast path) and hands its read streams' larger reads \
                 to the workers, paying two wake-ups for each; the replay does the same \
                 with {n} worker threads"
            ));
        }
        Some(v) if v != "sync" => m.notes.push(format!(
            "reads: io_method {v}: read_time is the backend's wait for a read it may have \
             started ahead, not each read's latency"
        )),
        _ => {}
    }
}

/// WAL flushes: pg_stat_io's wal rows (18), else pg_stat_wal.
fn wal(c: &PgCapture, t: f64, m: &mut WorkloadModel) {
    let method = c.setting("wal_sync_method").unwrap_or("fdatasync");
    let open = method.starts_with("open_");
    let wal_block = c
        .setting("wal_block_size")
        .and_then(|b| b.parse::<u32>().ok())
        .unwrap_or(8192)
        .max(512);
    let io_wal = |r: &Value| is(r, "object", "wal") && is(r, "context", "normal");
    let from_io = c.delta("pg_stat_io", "writes", io_wal).is_some();
    let (writes, syncs, wtime, stime, bytes, view) = if from_io {
        (
            c.delta("pg_stat_io", "writes", io_wal).unwrap_or(0.0),
            c.delta("pg_stat_io", "fsyncs", io_wal).unwrap_or(0.0),
            c.delta("pg_stat_io", "write_time", io_wal),
            c.delta("pg_stat_io", "fsync_time", io_wal),
            c.delta("pg_stat_io", "write_bytes", io_wal),
            "pg_stat_io, object wal, context normal: writes, fsyncs, write_bytes",
        )
    } else if c.has_view("pg_stat_wal") {
        (
            c.delta("pg_stat_wal", "wal_write", any).unwrap_or(0.0),
            c.delta("pg_stat_wal", "wal_sync", any).unwrap_or(0.0),
            c.delta("pg_stat_wal", "wal_write_time", any),
            c.delta("pg_stat_wal", "wal_sync_time", any),
            c.delta("pg_stat_wal", "wal_bytes", any),
            "pg_stat_wal: wal_write, wal_sync, wal_bytes",
        )
    } else {
        return;
    };
    // With open_datasync or open_sync each write is durable by itself and the views
    // count no syncs; otherwise a flush is a sync after the writes before it.
    let flushes = if open { writes } else { syncs };
    if flushes <= 0.0 {
        if writes > 0.0 {
            m.not_replayed.push(format!(
                "WAL writes without a flush: {:.2}/s (fsync off or no commit waited)",
                writes / t
            ));
        }
        return;
    }
    let per_flush = bytes.unwrap_or(0.0) / flushes;
    let size = ((per_flush / f64::from(wal_block)).ceil().max(1.0) as u32) * wal_block;
    let bytes_what = if from_io {
        "bytes written"
    } else {
        "WAL generated (wal_bytes), rounded up to whole WAL blocks: a flush rewrites its \
         last partial block"
    };
    let timing = c.on("track_wal_io_timing");
    let time = if open {
        wtime
    } else {
        Some(wtime.unwrap_or(0.0) + stime.unwrap_or(0.0))
    };
    let mean = if timing { mean_us(time, flushes) } else { None };
    let mean_source = match mean {
        Some(_) if open => format!("{view}: write time per write ({method})"),
        Some(_) => format!("{view}: (write time + sync time) per sync ({method})"),
        None if !timing => "missing: track_wal_io_timing was off, PostgreSQL did not time \
                            its WAL writes and syncs"
            .into(),
        None => "missing: WAL times did not grow".into(),
    };
    let direct_wal = c
        .setting("debug_io_direct")
        .is_some_and(|v| v.split(',').any(|p| p.trim() == "wal"));
    m.classes.push(ModelClass {
        class: "redo-write".into(),
        event: WAL_EVENT.into(),
        rate: flushes / t,
        size,
        source: format!(
            "{view}: {flushes:.0} flushes ({writes:.0} writes, {syncs:.0} syncs) in {t:.0} s; \
             size: {:.0} bytes per flush of {bytes_what}",
            per_flush
        ),
        production_ios: Some(flushes),
        production_mean_us: mean,
        mean_source: Some(mean_source),
        flush: Some(if open { "dsync" } else { "fdatasync" }.into()),
        buffered: Some(!direct_wal),
        ..ModelClass::default()
    });
    if !open && writes > flushes * 1.05 {
        m.notes.push(format!(
            "WAL: {:.2} writes per flush; the replay writes each flush's bytes at once",
            writes / flushes
        ));
    }
}

/// Block writes by the checkpointer, the background writer and backends, and
/// relation extends: buffered copies into the page cache, replayed for their load.
fn writes(c: &PgCapture, t: f64, bs: u32, m: &mut WorkloadModel) {
    let (writes, extends, fsyncs, from) = if c.has_view("pg_stat_io") {
        let w = c.delta("pg_stat_io", "writes", relation).unwrap_or(0.0);
        let e = c.delta("pg_stat_io", "extends", relation).unwrap_or(0.0);
        let f = c.delta("pg_stat_io", "fsyncs", relation).unwrap_or(0.0);
        let from = format!(
            "pg_stat_io, object relation, all backend types: writes {w:.0} + extends {e:.0} \
             in {t:.0} s"
        );
        (w, e, f, from)
    } else {
        let part = |col| c.delta("pg_stat_bgwriter", col, any).unwrap_or(0.0);
        let (ck, cl, be) = (
            part("buffers_checkpoint"),
            part("buffers_clean"),
            part("buffers_backend"),
        );
        let from = format!(
            "pg_stat_bgwriter: buffers_checkpoint {ck:.0} + buffers_clean {cl:.0} + \
             buffers_backend {be:.0} in {t:.0} s"
        );
        (ck + cl + be, 0.0, part("buffers_backend_fsync"), from)
    };
    let n = writes + extends;
    if n > 0.0 {
        m.classes.push(ModelClass {
            class: "dbwr-write".into(),
            event: WRITE_EVENT.into(),
            rate: n / t,
            size: bs,
            source: from,
            production_ios: Some(n),
            production_mean_us: None,
            mean_source: Some(
                "not judged: PostgreSQL writes blocks into the page cache, so its write \
                 times are copies (and checkpoints spread on purpose), not storage latency"
                    .into(),
            ),
            ..ModelClass::default()
        });
        m.notes.push(
            "writes: replayed at PostgreSQL's rate as the run opens the data files \
             (O_DIRECT by default): the device sees them when they come, not when the page \
             cache would have written them back"
                .into(),
        );
        if extends > 0.0 {
            m.notes.push(
                "writes: relation extends are replayed as block writes in place (the \
                 data set does not grow)"
                    .into(),
            );
        }
    }
    if !c.has_view("pg_stat_io") {
        m.notes.push(
            "writes: PostgreSQL before 16 does not count relation extends; they are not \
             in the model"
                .into(),
        );
    }
    if fsyncs > 0.0 {
        m.not_replayed.push(format!(
            "DataFileSync: {:.2}/s fsyncs of data files (no fsync class for data files)",
            fsyncs / t
        ));
    }
    if !c.has_view("pg_stat_io") {
        let ck = c
            .delta("pg_stat_bgwriter", "checkpoints_timed", any)
            .unwrap_or(0.0)
            + c.delta("pg_stat_bgwriter", "checkpoints_req", any)
                .unwrap_or(0.0);
        if ck > 0.0 {
            m.not_replayed.push(format!(
                "checkpoint fsyncs: {ck:.0} checkpoints (no fsync class for data files)"
            ));
        }
    }
    let temp = c
        .delta("pg_stat_database", "temp_bytes", any)
        .unwrap_or(0.0);
    if temp > 0.0 {
        m.not_replayed.push(format!(
            "temporary files: {:.0} bytes/s (the data set has none)",
            temp / t
        ));
    }
}
