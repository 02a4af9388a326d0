//! Verified content: every unit (a database block of a data file, a
//! 512-byte sector of the redo log) carries a head naming what it is and a
//! generation stamp in every sector, so that a read can tell a lost write,
//! a torn write, a misdirected write and a corrupted byte apart.
//!
//! Unit layout (little endian):
//! - bytes 0..4 `DBV1`, 4..8 CRC32C of bytes 8..end, 8..16 data-set id,
//!   16..20 file index, 20..24 write generation, 24..32 unit number;
//! - the last 4 bytes of every 512-byte sector: the generation again.
//!
//! The generation map holds, per unit, the generation the storage must
//! return; its top bit marks a write in flight (either the old or the new
//! generation is then acceptable). For a local data set the map is the file
//! `dbio-verify.map` mapped into memory: a write marks its units before it is
//! issued and clears them when it completes with plain stores to the shared
//! mapping, which reach the page cache at once and so survive the process
//! being killed (as vdbench's journal does) at the cost of a memory store
//! per unit. The map is flushed (msync) at the end of a run; a machine crash
//! (power loss) can still leave it older than the data, which then shows as
//! generations newer than expected, never as silent acceptance.

use std::fs::{self, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::format::{Dataset, DatasetFile, FileKind};

/// First bytes of every verified unit.
pub const UNIT_MAGIC: [u8; 4] = *b"DBV1";
/// Bytes of the unit head.
pub const HEAD_LEN: usize = 32;
/// Unit of the redo log: one sector (redo writes are multiples of it).
pub const REDO_UNIT: u32 = 512;
/// Map entry bit: a write of this unit is in flight.
pub const IN_FLIGHT: u32 = 1 << 31;
/// Generations wrap below the in-flight bit (2^31 writes of one unit).
pub const GEN_MASK: u32 = IN_FLIGHT - 1;
/// Largest number of units a map tracks (4 bytes each: 512 MiB of map, a
/// little under 1 TiB of 8 KiB blocks with its redo log); larger data sets
/// are refused in verify mode.
pub const MAX_UNITS: u64 = 1 << 27;
/// Name of the map file in the data-set directory.
pub const MAP_NAME: &str = "dbio-verify.map";
/// How long to let the writes of a killed run land before its blocks are read: the
/// kernel finishes a dead process's io_uring requests after the process has gone, so a
/// block read at once could show the old generation and take the new one a moment later.
pub const CRASH_GRACE: std::time::Duration = std::time::Duration::from_millis(500);
const MAP_MAGIC: [u8; 8] = *b"DBIOVMAP";
const MAP_VERSION: u32 = 1;
/// The map's words start here; the header lists the files before.
const MAP_HEADER: usize = 4096;
const MAX_FILES: usize = 200;

/// Unit size of a file.
pub fn unit_size(kind: FileKind, block_size: u32) -> u32 {
    match kind {
        FileKind::Data => block_size,
        FileKind::Redo => REDO_UNIT,
    }
}

/// First unit that holds data (after the text header block).
pub fn first_unit(ds: &Dataset, file: usize) -> u64 {
    let u = u64::from(unit_size(ds.files[file].kind, ds.block_size));
    ds.header_len().div_ceil(u)
}

/// Writes head, sector stamps and checksum into each unit of `buf` (whole
/// units starting at unit `first`), all at generation `generation`.
pub fn stamp_units(buf: &mut [u8], unit: usize, id: u64, file: u32, first: u64, generation: u32) {
    for (i, u) in buf.chunks_exact_mut(unit).enumerate() {
        stamp_unit(u, id, file, first + i as u64, generation);
    }
}

/// Stamps one unit (see the module doc for the layout).
pub fn stamp_unit(u: &mut [u8], id: u64, file: u32, unit: u64, generation: u32) {
    u[0..4].copy_from_slice(&UNIT_MAGIC);
    u[8..16].copy_from_slice(&id.to_le_bytes());
    u[16..20].copy_from_slice(&file.to_le_bytes());
    u[20..24].copy_from_slice(&generation.to_le_bytes());
    u[24..32].copy_from_slice(&unit.to_le_bytes());
    for s in u.chunks_exact_mut(512) {
        s[508..512].copy_from_slice(&generation.to_le_bytes());
    }
    let crc = crc32c::crc32c(&u[8..]);
    u[4..8].copy_from_slice(&crc.to_le_bytes());
}

/// What is wrong with a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// An older generation than the last completed write (or a newer one
    /// than any issued).
    Lost,
    /// Sectors of different writes: the stamps disagree with the head.
    Torn,
    /// A valid unit of another file, block or data set.
    Misdirected,
    /// The content does not match its checksum (or carries no head).
    Checksum,
}

impl Fault {
    pub fn name(self) -> &'static str {
        match self {
            Fault::Lost => "lost",
            Fault::Torn => "torn",
            Fault::Misdirected => "misdirected",
            Fault::Checksum => "checksum",
        }
    }
}

fn word(u: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([u[at], u[at + 1], u[at + 2], u[at + 3]])
}

/// Checks one unit's own consistency and that it is `unit` of `file` of
/// data set `id`; returns its generation.
pub fn check_unit(u: &[u8], id: u64, file: u32, unit: u64) -> Result<u32, Fault> {
    if u.len() < 512 || u[0..4] != UNIT_MAGIC {
        return Err(Fault::Checksum);
    }
    let generation = word(u, 20);
    if u.chunks_exact(512).any(|s| word(s, 508) != generation) {
        return Err(Fault::Torn);
    }
    if crc32c::crc32c(&u[8..]) != word(u, 4) {
        return Err(Fault::Checksum);
    }
    let got_id = u64::from_le_bytes(u[8..16].try_into().unwrap_or_default());
    let got_unit = u64::from_le_bytes(u[24..32].try_into().unwrap_or_default());
    if got_id != id || word(u, 16) != file || got_unit != unit {
        return Err(Fault::Misdirected);
    }
    Ok(generation)
}

/// Errors of the generation map; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum MapError {
    #[error("{path}: {what}: {source}")]
    Io {
        what: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("verify mode tracks at most {max} blocks; this data set has {units} (use a smaller --size or a larger --block-size)")]
    TooLarge { units: u64, max: u64 },
    #[error("verify mode supports at most {MAX_FILES} files")]
    TooManyFiles,
    /// A map file that is there but unusable: damaged, cut short, or another data
    /// set's.
    #[error("{path}: verify map is corrupt ({reason})")]
    Corrupt { path: String, reason: String },
}

/// Where the map's words live.
enum Backing {
    Mapped { ptr: *mut u8, len: usize },
    Memory(#[allow(dead_code)] Vec<AtomicU32>),
}

// SAFETY: the mapping is only accessed through atomics and unmapped on drop.
unsafe impl Send for Backing {}
unsafe impl Sync for Backing {}

/// Expected generation per unit of every file of a data set.
pub struct GenMap {
    backing: Backing,
    words: *const AtomicU32,
    /// Per file: index of its first word, units, unit size.
    files: Vec<(usize, u64, u32)>,
    path: Option<PathBuf>,
}

// SAFETY: `words` points into `backing`, read and written only atomically.
unsafe impl Send for GenMap {}
unsafe impl Sync for GenMap {}

fn layout(ds: &Dataset) -> Result<Vec<(usize, u64, u32)>, MapError> {
    if ds.files.len() > MAX_FILES {
        return Err(MapError::TooManyFiles);
    }
    let mut at = 0usize;
    let mut out = Vec::with_capacity(ds.files.len());
    for f in &ds.files {
        let us = unit_size(f.kind, ds.block_size);
        let units = f.size / u64::from(us);
        out.push((at, units, us));
        at += units as usize;
        if at as u64 > MAX_UNITS {
            let units = ds
                .files
                .iter()
                .map(|f| f.size / u64::from(unit_size(f.kind, ds.block_size)))
                .sum();
            return Err(MapError::TooLarge {
                units,
                max: MAX_UNITS,
            });
        }
    }
    Ok(out)
}

fn header(ds: &Dataset, files: &[(usize, u64, u32)]) -> Vec<u8> {
    let mut h = Vec::with_capacity(MAP_HEADER);
    h.extend_from_slice(&MAP_MAGIC);
    h.extend_from_slice(&MAP_VERSION.to_le_bytes());
    h.extend_from_slice(&(files.len() as u32).to_le_bytes());
    h.extend_from_slice(&ds.id.to_le_bytes());
    for (f, &(_, units, us)) in ds.files.iter().zip(files) {
        h.extend_from_slice(&units.to_le_bytes());
        h.extend_from_slice(&us.to_le_bytes());
        h.extend_from_slice(&(f.size as u32).to_le_bytes());
    }
    h.resize(MAP_HEADER, 0);
    h
}

fn map_io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> MapError + 'a {
    move |source| MapError::Io {
        what,
        path: path.display().to_string(),
        source,
    }
}

impl std::fmt::Debug for GenMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GenMap")
            .field("files", &self.files)
            .field("path", &self.path)
            .finish()
    }
}

impl GenMap {
    /// A map in memory only (storage reached through a backend, e.g. NFS),
    /// every unit at generation 0.
    pub fn in_memory(ds: &Dataset) -> Result<Self, MapError> {
        let files = layout(ds)?;
        let n: usize = files.iter().map(|f| f.1 as usize).sum();
        let v: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
        let words = v.as_ptr();
        Ok(GenMap {
            backing: Backing::Memory(v),
            words,
            files,
            path: None,
        })
    }

    /// Opens the map of the local data set `ds` if it exists and belongs to
    /// it; `None` when there is none (or it is another data set's).
    pub fn open(ds: &Dataset) -> Result<Option<Self>, MapError> {
        match Self::open_checked(ds) {
            Err(MapError::Corrupt { .. }) => Ok(None),
            other => other,
        }
    }

    /// [`GenMap::open`], telling a missing map (`None`) from one that is there but
    /// does not fit `ds` ([`MapError::Corrupt`]): `dbio verify` must not mistake a
    /// damaged map for a data set written without `--verify`.
    pub fn open_checked(ds: &Dataset) -> Result<Option<Self>, MapError> {
        let files = layout(ds)?;
        let path = ds.dir.join(MAP_NAME);
        let want = header(ds, &files);
        let total = MAP_HEADER + files.iter().map(|f| f.1 as usize).sum::<usize>() * 4;
        let file = match OpenOptions::new().read(true).write(true).open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(map_io("cannot open the verify map", &path)(e)),
        };
        let mut head = vec![0u8; MAP_HEADER];
        let len = file
            .metadata()
            .map_err(map_io("cannot read the verify map", &path))?
            .len();
        let corrupt = |reason: String| MapError::Corrupt {
            path: path.display().to_string(),
            reason,
        };
        if std::os::unix::fs::FileExt::read_exact_at(&file, &mut head, 0).is_err() {
            return Err(corrupt(format!("{len} bytes, shorter than its header")));
        }
        if head != want {
            return Err(corrupt(format!(
                "its header does not match data set {:016x}",
                ds.id
            )));
        }
        if len != total as u64 {
            return Err(corrupt(format!("{len} bytes, {total} expected")));
        }
        Self::map(file, &path, total, files).map(Some)
    }

    /// Creates the map of `ds` with every unit at generation 0 (the content
    /// a fresh data set holds), replacing any older one.
    pub fn create(ds: &Dataset) -> Result<Self, MapError> {
        let files = layout(ds)?;
        let path = ds.dir.join(MAP_NAME);
        let tmp = ds.dir.join(format!(".{MAP_NAME}.tmp"));
        let total = MAP_HEADER + files.iter().map(|f| f.1 as usize).sum::<usize>() * 4;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(map_io("cannot create the verify map", &tmp))?;
        std::os::unix::fs::FileExt::write_all_at(&file, &header(ds, &files), 0)
            .and_then(|_| file.set_len(total as u64))
            .and_then(|_| file.sync_all())
            .map_err(map_io("cannot write the verify map", &tmp))?;
        fs::rename(&tmp, &path).map_err(map_io("cannot write the verify map", &path))?;
        Self::map(file, &path, total, files)
    }

    fn map(
        file: fs::File,
        path: &Path,
        len: usize,
        files: Vec<(usize, u64, u32)>,
    ) -> Result<Self, MapError> {
        use std::os::fd::AsRawFd;
        // SAFETY: a fresh shared mapping of a file we opened read-write;
        // the file's length was set to `len` above.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(map_io("cannot map the verify map", path)(
                std::io::Error::last_os_error(),
            ));
        }
        let ptr = ptr.cast::<u8>();
        // SAFETY: MAP_HEADER is within the mapping and 4-aligned (page).
        let words = unsafe { ptr.add(MAP_HEADER) }.cast::<AtomicU32>();
        Ok(GenMap {
            backing: Backing::Mapped { ptr, len },
            words,
            files,
            path: Some(path.to_path_buf()),
        })
    }

    /// Removes the map of the local data set in `dir`: a write run without
    /// verification makes the generations unknown.
    pub fn forget(dir: &Path) -> Result<(), MapError> {
        let path = dir.join(MAP_NAME);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(map_io("cannot remove the verify map", &path)(e))
            }
            _ => Ok(()),
        }
    }

    /// Units of `file` and their size.
    pub fn units(&self, file: u32) -> (u64, u32) {
        self.files
            .get(file as usize)
            .map_or((0, 512), |&(_, n, us)| (n, us))
    }

    #[inline]
    fn slot(&self, file: u32, unit: u64) -> &AtomicU32 {
        let (at, n, _) = self.files[file as usize];
        debug_assert!(unit < n);
        // SAFETY: `at + unit` is below the words the backing holds.
        unsafe { &*self.words.add(at + unit.min(n.saturating_sub(1)) as usize) }
    }

    /// The raw entry (generation, maybe with [`IN_FLIGHT`]).
    #[inline]
    pub fn get(&self, file: u32, unit: u64) -> u32 {
        self.slot(file, unit).load(Ordering::Acquire)
    }

    /// Marks `n` units from `first` as being written and returns the new
    /// generation of each in `gens`; `false` (nothing marked) when one of
    /// them already has a write in flight.
    pub fn claim(&self, file: u32, first: u64, n: u64, gens: &mut Vec<u32>) -> bool {
        gens.clear();
        for u in first..first + n {
            let s = self.slot(file, u);
            let v = s.load(Ordering::Acquire);
            let next = (v.wrapping_add(1)) & GEN_MASK;
            if v & IN_FLIGHT != 0
                || s.compare_exchange(v, next | IN_FLIGHT, Ordering::AcqRel, Ordering::Acquire)
                    .is_err()
            {
                for (i, g) in gens.iter().enumerate() {
                    self.slot(file, first + i as u64)
                        .store(g.wrapping_sub(1) & GEN_MASK, Ordering::Release);
                }
                gens.clear();
                return false;
            }
            gens.push(next);
        }
        true
    }

    /// The write of `n` units from `first` completed: their new generation
    /// is now what the storage must return.
    pub fn complete(&self, file: u32, first: u64, n: u64) {
        for u in first..first + n {
            self.slot(file, u).fetch_and(GEN_MASK, Ordering::AcqRel);
        }
    }

    /// Sets a unit to `generation` (no write in flight): what a scan found
    /// for a unit whose write was in flight at a crash.
    pub fn settle(&self, file: u32, unit: u64, generation: u32) {
        self.slot(file, unit)
            .store(generation & GEN_MASK, Ordering::Release);
    }

    /// After a killed run (some unit has a write in flight), waits [`CRASH_GRACE`] so that
    /// its last writes have landed before anyone reads those units.
    pub fn let_crash_settle(&self) {
        if self.any_in_flight() {
            std::thread::sleep(CRASH_GRACE);
        }
    }

    /// True when some unit has a write in flight (a run was killed).
    pub fn any_in_flight(&self) -> bool {
        let n: usize = self.files.iter().map(|f| f.1 as usize).sum();
        // SAFETY: the backing holds `n` words from `words`.
        (0..n).any(|i| unsafe { &*self.words.add(i) }.load(Ordering::Acquire) & IN_FLIGHT != 0)
    }

    /// Writes the map to the storage (msync); nothing for a map in memory.
    pub fn flush(&self) -> Result<(), MapError> {
        if let Backing::Mapped { ptr, len } = self.backing {
            // SAFETY: the whole mapping we own.
            if unsafe { libc::msync(ptr.cast(), len, libc::MS_SYNC) } != 0 {
                let path = self.path.clone().unwrap_or_default();
                return Err(map_io("cannot write the verify map", &path)(
                    std::io::Error::last_os_error(),
                ));
            }
        }
        Ok(())
    }
}

impl Drop for GenMap {
    fn drop(&mut self) {
        if let Backing::Mapped { ptr, len } = self.backing {
            // SAFETY: unmapping what `map` mapped; no reference outlives self.
            unsafe { libc::munmap(ptr.cast(), len) };
        }
    }
}

/// A unit found wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadUnit {
    pub file: String,
    /// Unit number in the file (block number, or sector of the redo log).
    pub block: u64,
    pub fault: Fault,
    /// What was expected and found, in words.
    pub detail: String,
}

/// Counts of a verification (during a run and in the final pass).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyCounts {
    pub blocks_checked: u64,
    pub lost: u64,
    pub torn: u64,
    pub misdirected: u64,
    pub checksum: u64,
    /// Units whose write was in flight (after a crash) and held either generation.
    pub in_flight: u64,
    /// The first [`MAX_LISTED`] bad units.
    pub bad: Vec<BadUnit>,
}

/// Bad units listed; the counts go on.
pub const MAX_LISTED: usize = 20;

impl VerifyCounts {
    pub fn faults(&self) -> u64 {
        self.lost + self.torn + self.misdirected + self.checksum
    }

    pub fn add_fault(&mut self, f: &DatasetFile, block: u64, fault: Fault, detail: String) {
        match fault {
            Fault::Lost => self.lost += 1,
            Fault::Torn => self.torn += 1,
            Fault::Misdirected => self.misdirected += 1,
            Fault::Checksum => self.checksum += 1,
        }
        if self.bad.len() < MAX_LISTED {
            self.bad.push(BadUnit {
                file: f.name.clone(),
                block,
                fault,
                detail,
            });
        }
    }

    pub fn merge(&mut self, o: &VerifyCounts) {
        self.blocks_checked += o.blocks_checked;
        self.lost += o.lost;
        self.torn += o.torn;
        self.misdirected += o.misdirected;
        self.checksum += o.checksum;
        self.in_flight += o.in_flight;
        for b in &o.bad {
            if self.bad.len() < MAX_LISTED {
                self.bad.push(b.clone());
            }
        }
    }

    /// Checks unit `unit` of `file` (bytes `u`) against the generations
    /// acceptable: `lo..=hi`. `racing`: a write of the unit overlapped the
    /// read, which may then return a mix of the two writes (buffered and
    /// direct reads are not atomic against a write of several pages), so a
    /// torn or mixed unit is not a fault.
    #[allow(clippy::too_many_arguments)]
    pub fn check(
        &mut self,
        ds: &Dataset,
        file: u32,
        unit: u64,
        u: &[u8],
        (lo, hi): (u32, u32),
        racing: bool,
    ) {
        self.blocks_checked += 1;
        let f = &ds.files[file as usize];
        match check_unit(u, ds.id, file, unit) {
            Ok(g) if (lo..=hi).contains(&g) => {}
            Err(Fault::Torn | Fault::Checksum) if racing => {}
            Ok(g) => self.add_fault(
                f,
                unit,
                Fault::Lost,
                format!("generation {g}, expected {}", expected_text(lo, hi)),
            ),
            Err(fault) => {
                let detail = describe(u, fault);
                self.add_fault(f, unit, fault, detail)
            }
        }
    }
}

fn expected_text(lo: u32, hi: u32) -> String {
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo} to {hi}")
    }
}

fn describe(u: &[u8], fault: Fault) -> String {
    match fault {
        Fault::Checksum if u.len() >= 8 && u[0..4] != UNIT_MAGIC => "no block head".into(),
        Fault::Checksum => "checksum does not match the content".into(),
        Fault::Torn => "sectors carry different write generations".into(),
        Fault::Misdirected => format!(
            "holds block {} of file {}",
            u64::from_le_bytes(u[24..32].try_into().unwrap_or_default()),
            word(u, 16)
        ),
        Fault::Lost => String::new(),
    }
}

#[cfg(test)]
#[path = "verify_tests.rs"]
mod tests;
