//! The verification pass: reads every unit of a data set through an
//! engine (so it works on any storage the engines reach) and checks it
//! against the generation map.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use dbio_engine::{Completion, Durability, EngineConfig, EngineKind, IoDir, IoRequest};

use crate::format::{Dataset, DatasetError};
use crate::verify::{first_unit, GenMap, VerifyCounts, GEN_MASK, IN_FLIGHT};

/// Bytes per read of the pass.
const CHUNK: u64 = 1 << 20;
/// Reads in flight.
const DEPTH: u32 = 4;

/// How to read the data set.
#[derive(Clone, Copy, Debug)]
pub struct ScanOptions {
    pub engine: EngineKind,
    pub direct: bool,
    /// Units whose write was in flight take the generation found, when it is
    /// one of the two acceptable, and the map forgets the write.
    pub settle: bool,
    /// Accept any generation: the map holds no expectations (a data set
    /// reached through a backend keeps its map for the run only), so only
    /// checksum, torn and misdirected blocks can be told.
    pub any_generation: bool,
}

/// Checks every unit of `ds` against `map`; `progress(done, total)` in
/// bytes. Stops early (returning what it counted, and `false`) when `stop`
/// is set.
pub fn scan(
    ds: &Dataset,
    map: &GenMap,
    opts: &ScanOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(VerifyCounts, bool), DatasetError> {
    let cfg = EngineConfig {
        files: ds.engine_files(),
        depth: DEPTH,
        max_io: CHUNK as u32,
        direct: opts.direct,
        write: false,
        shared_buffers: false,
        io_workers: 0,
        io_workers_from: 0,
        submitted: Default::default(),
        no_read_ahead: false,
    };
    let mut engine = ds.open_engine(opts.engine, &cfg)?;
    let mut chunks = ds.files.iter().enumerate().flat_map(|(i, f)| {
        let (_, us) = map.units(i as u32);
        let from = first_unit(ds, i) * u64::from(us);
        let size = f.size - f.size % u64::from(us);
        (from..size)
            .step_by(CHUNK as usize)
            .map(move |off| (i as u32, off, (size - off).min(CHUNK)))
    });
    let total: u64 = ds.files.iter().map(|f| f.size).sum();
    let mut counts = VerifyCounts::default();
    let mut slots = vec![(0u32, 0u64, 0u32); DEPTH as usize];
    let mut free: Vec<u32> = (0..DEPTH).collect();
    let mut out: Vec<Completion> = Vec::with_capacity(DEPTH as usize);
    let (mut done, mut more, mut complete) = (0u64, true, true);
    loop {
        while more && !free.is_empty() {
            if stop.load(Ordering::Relaxed) {
                more = false;
                complete = false;
                break;
            }
            let Some((file, offset, len)) = chunks.next() else {
                more = false;
                break;
            };
            let slot = free.pop().unwrap_or(0);
            slots[slot as usize] = (file, offset, len as u32);
            let req = IoRequest {
                file,
                offset,
                len: len as u32,
                dir: IoDir::Read,
                slot,
                durability: Durability::None,
                tag: 0,
            };
            engine.submit(req)?;
        }
        engine.commit()?;
        if engine.in_flight() == 0 {
            break;
        }
        out.clear();
        engine.reap(1, Duration::from_millis(200), &mut out)?;
        for c in out.drain(..) {
            let (file, offset, len) = slots[c.slot as usize];
            free.push(c.slot);
            c.result?;
            let buf = &engine.buffer(c.slot)[..len as usize];
            if opts.any_generation {
                check_any(ds, map, file, offset, buf, &mut counts);
            } else {
                check_chunk(ds, map, opts.settle, file, offset, buf, &mut counts);
            }
            done += u64::from(len);
        }
        progress(done, total);
    }
    Ok((counts, complete))
}

/// Checks the whole units of `buf`, read from `offset` of `file`.
fn check_chunk(
    ds: &Dataset,
    map: &GenMap,
    settle: bool,
    file: u32,
    offset: u64,
    buf: &[u8],
    counts: &mut VerifyCounts,
) {
    for (unit, u) in units_in(map, file, offset, buf) {
        let v = map.get(file, unit);
        let g = v & GEN_MASK;
        if v & IN_FLIGHT == 0 {
            counts.check(ds, file, unit, u, (g, g), false);
            continue;
        }
        // A write was in flight when the run ended: the old or the new
        // generation is right.
        let before = counts.faults();
        let old = g.wrapping_sub(1) & GEN_MASK;
        counts.check(ds, file, unit, u, (old.min(g), old.max(g)), false);
        if counts.faults() == before {
            counts.in_flight += 1;
            if settle {
                let found = u32::from_le_bytes([u[20], u[21], u[22], u[23]]);
                map.settle(file, unit, found);
            }
        }
    }
}

/// Checks the whole units of `buf` for consistency only.
fn check_any(
    ds: &Dataset,
    map: &GenMap,
    file: u32,
    offset: u64,
    buf: &[u8],
    counts: &mut VerifyCounts,
) {
    for (unit, u) in units_in(map, file, offset, buf) {
        counts.check(ds, file, unit, u, (0, GEN_MASK), false);
    }
}

/// The whole units of `buf`, read from `offset` of `file`, with their
/// numbers; none past the end of the file.
fn units_in<'a>(
    map: &GenMap,
    file: u32,
    offset: u64,
    buf: &'a [u8],
) -> impl Iterator<Item = (u64, &'a [u8])> {
    let (units, us) = map.units(file);
    let first = offset / u64::from(us);
    buf.chunks_exact(us as usize)
        .enumerate()
        .map(move |(i, u)| (first + i as u64, u))
        .take_while(move |&(unit, _)| unit < units)
}
