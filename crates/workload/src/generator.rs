//! Workload mixes and the per-user generator that yields the next I/O.
//!
//! SLOB's knobs map onto this directly: each user (session) draws block
//! operations; UPDATE_PCT of them are updates (a DBWR block write, batched,
//! and a redo write), SCAN_PCT of the rest are scans (multiblock or direct
//! reads), the others single-block reads. A hot spot gets every Nth block
//! operation, and every Nth operation is preceded by a think time.

use std::time::Duration;

use dbio_engine::{Durability, IoDir};

use crate::class::{IoClass, COUNT};
use crate::content::Rng;
use crate::format::{Dataset, FileKind};

/// Size of redo writes: `lite` small commits, `heavy` large batches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedoStress {
    /// 512 B to 16 KiB per write (SLOB REDO_STRESS=LITE).
    Lite,
    /// 64 KiB to 1 MiB per write (SLOB REDO_STRESS=HEAVY).
    Heavy,
    /// Every write this many 512-byte sectors (a replayed report's mean
    /// redo write: redo size over redo writes).
    Sized(u32),
}

impl RedoStress {
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "lite" | "light" => Some(Self::Lite),
            "heavy" => Some(Self::Heavy),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Lite => "lite",
            Self::Heavy => "heavy",
            Self::Sized(_) => "sized",
        }
    }
    /// Smallest and largest redo write, in 512-byte sectors.
    fn sectors(self) -> (u64, u64) {
        match self {
            Self::Lite => (1, 32),
            Self::Heavy => (128, 2048),
            Self::Sized(n) => (u64::from(n.max(1)), u64::from(n.max(1))),
        }
    }
}

/// How a redo write is made durable, as PostgreSQL's wal_sync_method names
/// the ways on Linux.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RedoFlush {
    /// Each write durable by itself: O_DSYNC (Oracle's LGWR, PostgreSQL's
    /// open_datasync).
    #[default]
    Dsync,
    /// Written, then the log file fdatasync'ed (PostgreSQL's default).
    Fdatasync,
}

impl RedoFlush {
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "dsync" | "open_datasync" => Some(Self::Dsync),
            "fdatasync" => Some(Self::Fdatasync),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Dsync => "dsync",
            Self::Fdatasync => "fdatasync",
        }
    }
    /// What the engine is asked for each redo write.
    pub fn durability(self) -> Durability {
        match self {
            Self::Dsync => Durability::Dsync,
            Self::Fdatasync => Durability::Fdatasync,
        }
    }
}

/// A hot spot (SLOB DO_HOTSPOT): every `frequency`-th block operation goes
/// to `size` bytes starting `offset` bytes into the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hotspot {
    pub offset: u64,
    pub size: u64,
    pub frequency: u32,
}

/// Think time (SLOB THINK_TM_*): every `frequency`-th operation waits a
/// random time between `min` and `max` before it is issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Think {
    pub min: Duration,
    pub max: Duration,
    pub frequency: u32,
}

/// Named mixes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// Single-block reads with 25% updates (DBWR and redo writes), like SLOB's default.
    Oltp,
    /// Scans: multiblock and direct-path reads.
    Olap,
    /// Redo log writes only, heavy.
    Redo,
    /// Every class: 25% updates, 10% scans.
    Mixed,
}

impl Profile {
    pub const ALL: [Profile; 4] = [Profile::Oltp, Profile::Olap, Profile::Redo, Profile::Mixed];

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == s.to_ascii_lowercase())
    }
    pub fn name(self) -> &'static str {
        match self {
            Profile::Oltp => "oltp",
            Profile::Olap => "olap",
            Profile::Redo => "redo",
            Profile::Mixed => "mixed",
        }
    }
    /// The configuration this profile stands for, with `block_size`.
    pub fn config(self, block_size: u32) -> WorkloadConfig {
        use IoClass::*;
        let (classes, update_pct, scan_pct, redo) = match self {
            Profile::Oltp => (
                vec![SingleBlockRead, DbwrWrite, RedoWrite],
                25,
                0,
                RedoStress::Lite,
            ),
            Profile::Olap => (vec![MultiblockRead, DirectRead], 0, 100, RedoStress::Lite),
            Profile::Redo => (vec![RedoWrite], 100, 0, RedoStress::Heavy),
            Profile::Mixed => (
                vec![
                    SingleBlockRead,
                    MultiblockRead,
                    DirectRead,
                    DbwrWrite,
                    RedoWrite,
                ],
                25,
                10,
                RedoStress::Lite,
            ),
        };
        WorkloadConfig {
            classes,
            update_pct,
            scan_pct,
            redo_stress: redo,
            ..WorkloadConfig::new(block_size)
        }
    }
}

/// What a user does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadConfig {
    /// Classes enabled.
    pub classes: Vec<IoClass>,
    /// Database block size, bytes.
    pub block_size: u32,
    /// Percent of block operations that are updates (SLOB UPDATE_PCT).
    pub update_pct: u32,
    /// Percent of read operations that are scans (SLOB SCAN_PCT).
    pub scan_pct: u32,
    pub redo_stress: RedoStress,
    /// Redo writes are whole units of this many bytes, at offsets that are
    /// multiples of it: 512, or the log's direct-I/O alignment where the log
    /// is written O_DIRECT on a device of larger logical blocks.
    pub redo_unit: u32,
    /// How each redo write is made durable.
    pub redo_flush: RedoFlush,
    /// The redo log through the page cache even when the data files use
    /// O_DIRECT (a WAL written with pwrite, then fdatasync).
    pub redo_buffered: bool,
    /// The redo log with O_DIRECT even when the data files go through the
    /// page cache.
    pub redo_direct: bool,
    pub hotspot: Option<Hotspot>,
    pub think: Option<Think>,
    /// Size of a multiblock read (db_file_multiblock_read_count x block size).
    pub multiblock_bytes: u32,
    /// Multiblock reads at random places instead of sequential scans.
    pub multiblock_random: bool,
    /// Size of a direct-path read.
    pub direct_read_bytes: u32,
    /// Size of a direct-path write.
    pub direct_write_bytes: u32,
    /// DBWR writes issued together.
    pub dbwr_batch: u32,
    /// Per mille of each read's buffer pages that are not mapped when the read starts
    /// (0: all are). A PostgreSQL backend reads into shared buffers it has often never
    /// touched, and the kernel faults them in inside the read call; the replay does the
    /// same by unmapping that share of its (shared) buffers' pages after each read.
    pub unmapped_read_permille: u32,
    /// Single-block reads spread as production's were (relations, Zipf within
    /// each); None: uniform over the data set.
    pub read_skew: Option<crate::skew::ReadSkew>,
    /// Reads handed to this many I/O worker threads (PostgreSQL 18's io_method=worker);
    /// 0: each user reads itself.
    pub io_workers: u32,
    /// Buffered data files advised as read at random (`POSIX_FADV_RANDOM`): the
    /// kernel reads no more than each read asks, as production's device did.
    pub no_read_ahead: bool,
    /// I/Os submitted and not waited for, timed to their submission (InnoDB's
    /// background reads and page writes); none by default.
    pub submitted: dbio_engine::Submitted,
}

impl WorkloadConfig {
    /// Single-block reads only, SLOB-like defaults for the rest.
    pub fn new(block_size: u32) -> Self {
        WorkloadConfig {
            classes: vec![IoClass::SingleBlockRead],
            block_size,
            update_pct: 25,
            scan_pct: 0,
            redo_stress: RedoStress::Lite,
            redo_unit: 512,
            redo_flush: RedoFlush::Dsync,
            redo_buffered: false,
            redo_direct: false,
            hotspot: None,
            think: None,
            multiblock_bytes: 1 << 20,
            multiblock_random: false,
            direct_read_bytes: 1 << 20,
            direct_write_bytes: 1 << 20,
            dbwr_batch: 8,
            unmapped_read_permille: 0,
            read_skew: None,
            io_workers: 0,
            no_read_ahead: false,
            submitted: dbio_engine::Submitted::default(),
        }
    }

    /// The largest I/O this configuration issues (the engine slot size).
    pub fn max_io(&self) -> u32 {
        let redo = (self.redo_stress.sectors().1 * 512) as u32;
        self.classes
            .iter()
            .map(|c| match c {
                IoClass::SingleBlockRead | IoClass::DbwrWrite => self.block_size,
                IoClass::MultiblockRead => self.multiblock_bytes,
                IoClass::DirectRead => self.direct_read_bytes,
                IoClass::DirectWrite => self.direct_write_bytes,
                IoClass::RedoWrite => redo,
            })
            .max()
            .unwrap_or(self.block_size)
    }

    /// True when some class writes.
    pub fn writes(&self) -> bool {
        self.classes.iter().any(|c| c.is_write())
    }

    /// The share of each class in the I/Os the mix issues (indexed by
    /// [`IoClass::index`], summing to 1): a DBWR draw issues a whole batch.
    pub fn shares(&self) -> [f64; COUNT] {
        let mut w = self.weights().map(|x| x as f64);
        w[IoClass::DbwrWrite.index()] *= f64::from(self.dbwr_batch.max(1));
        let sum: f64 = w.iter().sum();
        w.map(|x| if sum > 0.0 { x / sum } else { 0.0 })
    }

    /// Relative weight of each class per draw (indexed by [`IoClass::index`]).
    /// Direct writes, the large I/O of batch work, share SCAN_PCT with the
    /// scans.
    fn weights(&self) -> [u64; COUNT] {
        let on = |c: IoClass| self.classes.contains(&c);
        let u = u64::from(self.update_pct.min(100));
        let s = u64::from(self.scan_pct.min(100));
        const SCANS: [IoClass; 3] = [
            IoClass::MultiblockRead,
            IoClass::DirectRead,
            IoClass::DirectWrite,
        ];
        let scans = SCANS.iter().filter(|c| on(**c)).count() as u64;
        let batch = u64::from(self.dbwr_batch.max(1));
        let mut w = [0u64; COUNT];
        // Scaled so that integer division by the batch keeps precision.
        w[0] = (100 - u) * (100 - s) * 64;
        for c in SCANS {
            w[c.index()] = (100 - u) * s * 64 / scans.max(1);
        }
        w[IoClass::DbwrWrite.index()] = u * 100 * 64 / batch;
        w[IoClass::RedoWrite.index()] = u * 100 * 64;
        for c in IoClass::ALL {
            if !on(c) {
                w[c.index()] = 0;
            }
        }
        if w.iter().all(|&x| x == 0) {
            for c in &self.classes {
                w[c.index()] = 1;
            }
        }
        w
    }
}

/// Where each user's redo writes start: a multiple of this past the log's header.
const REDO_ALIGN: u64 = 4096;

/// Where the blocks are: data files of equal size and the redo log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Engine file index of each data file.
    pub data_files: Vec<u32>,
    /// Usable blocks per data file (after the header).
    pub blocks_per_file: u64,
    /// Block index of the first usable block (after the header).
    pub first_block: u64,
    pub block_size: u32,
    /// Redo log: engine file index and the usable byte range.
    pub redo: Option<(u32, u64, u64)>,
}

impl Layout {
    pub fn of(ds: &Dataset) -> Self {
        let bs = u64::from(ds.block_size);
        let first_block = ds.header_len().div_ceil(bs);
        let data: Vec<(u32, u64)> = ds
            .files
            .iter()
            .enumerate()
            .filter(|(_, f)| f.kind == FileKind::Data)
            .map(|(i, f)| (i as u32, f.size))
            .collect();
        let blocks_per_file = data
            .iter()
            .map(|&(_, size)| (size / bs).saturating_sub(first_block))
            .min()
            .unwrap_or(0);
        let redo = ds
            .files
            .iter()
            .position(|f| f.kind == FileKind::Redo)
            .map(|i| (i as u32, ds.header_len(), ds.files[i].size));
        Layout {
            data_files: data.into_iter().map(|(i, _)| i).collect(),
            blocks_per_file,
            first_block,
            block_size: ds.block_size,
            redo,
        }
    }

    fn total_blocks(&self) -> u64 {
        self.blocks_per_file * self.data_files.len() as u64
    }

    /// Engine file and byte offset of global usable block `g`.
    #[inline]
    pub fn place(&self, g: u64) -> (u32, u64) {
        let f = (g / self.blocks_per_file) as usize;
        let b = self.first_block + g % self.blocks_per_file;
        (self.data_files[f], b * u64::from(self.block_size))
    }
}

/// One I/O to issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    pub class: IoClass,
    pub file: u32,
    pub offset: u64,
    pub len: u32,
    pub dir: IoDir,
    /// What must be stable when it completes (redo writes).
    pub durability: Durability,
    /// Wait this long before issuing it (think time), nanoseconds.
    pub think_ns: u64,
}

/// A configuration the generator cannot run.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GeneratorError {
    #[error("no workload class enabled")]
    NoClass,
    #[error("the data set has no data blocks")]
    NoData,
    #[error("redo-write needs a redo log file in the data set")]
    NoRedo,
    #[error("hot spot of {size} bytes at offset {offset} lies outside the {data} bytes of data")]
    Hotspot { offset: u64, size: u64, data: u64 },
    #[error("think time min {min:?} is above max {max:?}")]
    Think { min: Duration, max: Duration },
}

/// Yields the I/Os of one user. Allocates nothing once made: `next` is a few
/// arithmetic operations and PRNG draws (a simulated buffer pool's misses take a few
/// more draws and a lock).
pub struct Generator {
    rng: Rng,
    layout: Layout,
    cumulative: [u64; COUNT],
    block_size: u64,
    update_hot: Option<(u64, u64, u64)>,
    /// Where skewed single-block reads go (empty: uniform).
    read_extents: Vec<crate::skew::Extent>,
    /// The database's buffer pool those reads pass first, where simulated.
    pooled: Option<crate::skew::PooledReads>,
    /// The next pooled read's block, drawn ahead by [`Generator::prepare`].
    ready_read: Option<u64>,
    think: Option<(u64, u64, u64)>,
    mb_blocks: u64,
    mb_random: bool,
    direct_blocks: u64,
    direct_write_blocks: u64,
    dbwr_batch: u32,
    redo_sectors: (u64, u64),
    redo_unit: u64,
    redo_durability: Durability,
    ops: u64,
    block_ops: u64,
    dbwr_left: u32,
    scan_at: u64,
    direct_at: u64,
    direct_write_at: u64,
    redo_at: u64,
}

impl Generator {
    /// The generator of user `user` of `users`, seeded by `seed`.
    pub fn new(
        cfg: &WorkloadConfig,
        layout: &Layout,
        user: u32,
        users: u32,
        seed: u64,
    ) -> Result<Self, GeneratorError> {
        if cfg.classes.is_empty() {
            return Err(GeneratorError::NoClass);
        }
        if layout.total_blocks() == 0 {
            return Err(GeneratorError::NoData);
        }
        if cfg.classes.contains(&IoClass::RedoWrite) && layout.redo.is_none() {
            return Err(GeneratorError::NoRedo);
        }
        let bs = u64::from(layout.block_size);
        let data = layout.total_blocks() * bs;
        let update_hot = match cfg.hotspot {
            Some(h) if h.frequency > 0 => {
                if h.size < bs || h.offset.saturating_add(h.size) > data {
                    return Err(GeneratorError::Hotspot {
                        offset: h.offset,
                        size: h.size,
                        data,
                    });
                }
                Some((h.offset / bs, h.size / bs, u64::from(h.frequency)))
            }
            _ => None,
        };
        let think = match cfg.think {
            Some(t) if t.frequency > 0 => {
                if t.min > t.max {
                    return Err(GeneratorError::Think {
                        min: t.min,
                        max: t.max,
                    });
                }
                Some((
                    t.min.as_nanos() as u64,
                    t.max.as_nanos() as u64,
                    u64::from(t.frequency),
                ))
            }
            _ => None,
        };
        let mut cumulative = cfg.weights();
        for i in 1..COUNT {
            cumulative[i] += cumulative[i - 1];
        }
        // Users start their scans and redo at different places.
        let start = layout.total_blocks() * u64::from(user) / u64::from(users.max(1));
        // Each at a 4 KiB boundary: with writes in whole 4 KiB (a WAL's blocks)
        // every offset then suits O_DIRECT on a disk of 4 KiB sectors too.
        let align = REDO_ALIGN.max(u64::from(cfg.redo_unit));
        let redo_at = layout.redo.map_or(0, |(_, lo, hi)| {
            let span = (hi - lo) / align;
            lo + span * u64::from(user) / u64::from(users.max(1)) * align
        });
        let read_extents = cfg
            .read_skew
            .as_ref()
            .map(|s| crate::skew::extents(s, layout.total_blocks()))
            .unwrap_or_default();
        let pooled = cfg
            .read_skew
            .as_ref()
            .and_then(|s| s.pool.as_ref())
            .map(|p| crate::skew::PooledReads::new(p, &read_extents, seed));
        Ok(Generator {
            rng: Rng::new(seed ^ (u64::from(user) << 32)),
            layout: layout.clone(),
            cumulative,
            block_size: bs,
            update_hot,
            read_extents,
            pooled,
            ready_read: None,
            think,
            mb_blocks: (u64::from(cfg.multiblock_bytes) / bs).max(1),
            mb_random: cfg.multiblock_random,
            direct_blocks: (u64::from(cfg.direct_read_bytes) / bs).max(1),
            direct_write_blocks: (u64::from(cfg.direct_write_bytes) / bs).max(1),
            dbwr_batch: cfg.dbwr_batch.max(1),
            redo_sectors: cfg.redo_stress.sectors(),
            redo_unit: u64::from(cfg.redo_unit.max(512)),
            redo_durability: cfg.redo_flush.durability(),
            ops: 0,
            block_ops: 0,
            dbwr_left: 0,
            scan_at: start,
            direct_at: start,
            // Away from the direct reads: the two do not chase each other.
            direct_write_at: (start + layout.total_blocks() / 2) % layout.total_blocks(),
            redo_at,
        })
    }

    /// Does ahead of time what the next I/O needs that takes long (the simulated
    /// buffer pool's draws), so that an open loop does it while it waits for the
    /// arrival rather than inside the I/O's latency.
    pub fn prepare(&mut self) {
        if self.ready_read.is_none() {
            if let Some(p) = &self.pooled {
                self.ready_read = Some(p.next(&self.read_extents, &mut self.rng));
            }
        }
    }

    /// The next I/O.
    #[inline]
    pub fn next_op(&mut self) -> Op {
        self.ops += 1;
        let think_ns = match self.think {
            Some((lo, hi, every)) if self.ops.is_multiple_of(every) => self.rng.between(lo, hi),
            _ => 0,
        };
        let class = if self.dbwr_left > 0 {
            self.dbwr_left -= 1;
            IoClass::DbwrWrite
        } else {
            self.pick()
        };
        let mut op = self.op_of(class);
        op.think_ns = think_ns;
        op
    }

    /// The next I/O of `class`, whatever the mix (an open loop with a rate
    /// per class draws each class on its own schedule).
    #[inline]
    pub fn next_of(&mut self, class: IoClass) -> Op {
        self.ops += 1;
        self.op_of(class)
    }

    #[inline]
    fn op_of(&mut self, class: IoClass) -> Op {
        match class {
            IoClass::SingleBlockRead => self.block_op(class, IoDir::Read),
            IoClass::DbwrWrite => self.block_op(class, IoDir::Write),
            IoClass::MultiblockRead => {
                let (blocks, random) = (self.mb_blocks, self.mb_random);
                self.extent_op(class, blocks, random)
            }
            IoClass::DirectRead => {
                let blocks = self.direct_blocks;
                self.extent_op(class, blocks, false)
            }
            IoClass::DirectWrite => {
                let blocks = self.direct_write_blocks;
                self.extent_op(class, blocks, false)
            }
            IoClass::RedoWrite => self.redo_op(),
        }
    }

    #[inline]
    fn pick(&mut self) -> IoClass {
        let r = self.rng.below(self.cumulative[COUNT - 1]);
        let i = self.cumulative.iter().position(|&c| r < c).unwrap_or(0);
        let class = IoClass::ALL[i];
        if class == IoClass::DbwrWrite {
            self.dbwr_left = self.dbwr_batch - 1;
        }
        class
    }

    #[inline]
    fn block_op(&mut self, class: IoClass, dir: IoDir) -> Op {
        self.block_ops += 1;
        let g = match self.update_hot {
            Some((first, n, every)) if self.block_ops.is_multiple_of(every) => {
                first + self.rng.below(n)
            }
            _ if class == IoClass::DbwrWrite && self.pooled.is_some() => self
                .pooled
                .as_ref()
                .and_then(|p| p.resident(&mut self.rng))
                .unwrap_or_else(|| self.rng.below(self.layout.total_blocks())),
            _ if class == IoClass::SingleBlockRead && !self.read_extents.is_empty() => {
                match (&self.pooled, self.ready_read.take()) {
                    (_, Some(b)) => b,
                    (Some(p), None) => p.next(&self.read_extents, &mut self.rng),
                    (None, None) => crate::skew::draw(&self.read_extents, &mut self.rng),
                }
            }
            _ => self.rng.below(self.layout.total_blocks()),
        };
        let (file, offset) = self.layout.place(g);
        Op {
            class,
            file,
            offset,
            len: self.block_size as u32,
            dir,
            durability: Durability::None,
            think_ns: 0,
        }
    }

    /// A read (a write for direct-write) of up to `blocks` blocks that
    /// never crosses a file end.
    fn extent_op(&mut self, class: IoClass, blocks: u64, random: bool) -> Op {
        let per_file = self.layout.blocks_per_file;
        let total = self.layout.total_blocks();
        let cursor = match class {
            IoClass::DirectRead => &mut self.direct_at,
            IoClass::DirectWrite => &mut self.direct_write_at,
            _ => &mut self.scan_at,
        };
        let g = if random {
            let g = self.rng.below(total);
            // Aligned to the read size within its file.
            g - (g % per_file) % blocks
        } else {
            *cursor % total
        };
        let n = blocks.min(per_file - g % per_file);
        if !random {
            *cursor = (g + n) % total;
        }
        let (file, offset) = self.layout.place(g);
        Op {
            class,
            file,
            offset,
            len: (n * self.block_size) as u32,
            dir: if class.is_write() {
                IoDir::Write
            } else {
                IoDir::Read
            },
            durability: Durability::None,
            think_ns: 0,
        }
    }

    /// The next sequential redo write, wrapping at the end of the log.
    fn redo_op(&mut self) -> Op {
        let (file, lo, hi) = self.layout.redo.unwrap_or((0, 0, 0));
        let (smin, smax) = self.redo_sectors;
        // Sectors as whole units: a 512-byte write is one 4 KiB unit on a
        // device of 4 KiB blocks, as a database's log writes are there.
        let unit = self.redo_unit;
        let (umin, umax) = ((smin * 512).div_ceil(unit), (smax * 512).div_ceil(unit));
        let max_here = ((hi - lo) / unit).max(1);
        let len = self.rng.between(umin.min(max_here), umax.min(max_here)) * unit;
        if self.redo_at < lo || self.redo_at + len > hi {
            self.redo_at = lo;
        }
        let offset = self.redo_at;
        self.redo_at += len;
        Op {
            class: IoClass::RedoWrite,
            file,
            offset,
            len: len as u32,
            dir: IoDir::Write,
            durability: self.redo_durability,
            think_ns: 0,
        }
    }
}

#[cfg(test)]
#[path = "generator_tests.rs"]
mod tests;
