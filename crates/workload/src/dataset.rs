//! The data set: dbio's own files in the target directory.
//!
//! Layout: a few data files (`dbio-data-NN.dbf`) and one redo log file
//! (`dbio-redo-01.log`), plus a manifest (`dbio-dataset.json`) that lists
//! them with the data-set id, sizes and block size. Block 0 of every file is
//! a header (like a datafile header block) that names the data set; the rest
//! is PRNG content, unique per block. The content is written through the
//! [`Engine`](dbio_engine::Engine) interface so that any engine can build a
//! data set. A file that exists under one of these names but is not listed
//! by the manifest with a matching header was not created by dbio and is
//! never overwritten unless the caller forces it.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use dbio_engine::{Completion, EngineConfig, EngineError, EngineKind, FileSpec, IoDir, IoRequest};
use serde::{Deserialize, Serialize};

use crate::content;

/// Name of the manifest in the target directory.
pub const MANIFEST_NAME: &str = "dbio-dataset.json";
/// Version of the manifest and header format.
pub const DATASET_VERSION: u32 = 1;
/// First line of every file header.
pub const HEADER_MAGIC: &str = "DBIO-DATASET";
pub const MANIFEST_MAGIC: &str = "dbio-dataset";
/// Files are created and rewritten in chunks of this size.
const CHUNK: u64 = 1 << 20;
/// Chunks in flight while creating.
const CREATE_DEPTH: u32 = 4;
/// Smallest data set: room for a few hundred blocks.
pub const MIN_DATA_BYTES: u64 = 4 << 20;

/// Errors of data-set preparation; each names the path involved.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("{dir}: cannot create the target directory: parent {parent} does not exist")]
    NoParent { dir: String, parent: String },
    #[error("{0}: not a directory")]
    NotDir(String),
    #[error("{path}: {what}: {source}")]
    Io {
        what: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{0}: exists and was not created by dbio; refusing to overwrite it (use --force-overwrite)"
    )]
    Foreign(String),
    #[error("{dir}: not enough free space for the data set: need {need} bytes, {have} available")]
    NoSpace { dir: String, need: u64, have: u64 },
    #[error("{0}: the file system does not support O_DIRECT (use --buffered)")]
    NoDirect(String),
    #[error("bad data set: {0}")]
    Spec(String),
    #[error("data set creation interrupted; it will be created again next time")]
    Interrupted,
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Map(#[from] crate::verify::MapError),
}

fn io_err<'a>(
    what: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> DatasetError + 'a {
    move |source| DatasetError::Io {
        what,
        path: path.display().to_string(),
        source,
    }
}

/// What a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    Data,
    Redo,
}

impl FileKind {
    fn name(self) -> &'static str {
        match self {
            FileKind::Data => "data",
            FileKind::Redo => "redo",
        }
    }
}

/// One file of the data set, as the manifest lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatasetFile {
    /// File name inside the target directory.
    pub name: String,
    pub kind: FileKind,
    /// Size in bytes, header block included.
    pub size: u64,
}

/// The manifest file (`dbio-dataset.json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always "dbio-dataset".
    pub magic: String,
    /// Format version ([`DATASET_VERSION`]).
    pub version: u32,
    /// Data-set id, 16 hex digits; also in every file header.
    pub id: String,
    /// Database block size in bytes.
    pub block_size: u32,
    /// False while the files are being written.
    pub complete: bool,
    pub files: Vec<DatasetFile>,
}

/// The data set wanted: total data bytes and block size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DatasetSpec {
    pub data_bytes: u64,
    pub block_size: u32,
}

impl DatasetSpec {
    /// Checks the block size (a power of two, 2 KiB..32 KiB, as Oracle's)
    /// and the size (at least [`MIN_DATA_BYTES`]).
    pub fn new(data_bytes: u64, block_size: u32) -> Result<Self, DatasetError> {
        if !block_size.is_power_of_two() || !(2048..=32768).contains(&block_size) {
            return Err(DatasetError::Spec(format!(
                "block size {block_size} must be a power of two from 2k to 32k"
            )));
        }
        if data_bytes < MIN_DATA_BYTES {
            return Err(DatasetError::Spec(format!(
                "size {data_bytes} bytes is below the minimum of {} MiB",
                MIN_DATA_BYTES >> 20
            )));
        }
        Ok(Self {
            data_bytes,
            block_size,
        })
    }

    /// Bytes at the start of every file that hold its header.
    pub fn header_len(&self) -> u64 {
        header_len(self.block_size)
    }

    /// The files this spec asks for: 1, 2 or 4 data files of equal size
    /// (whole MiB) and a redo log of about an eighth of the data.
    pub fn files(&self) -> Vec<DatasetFile> {
        let n: u64 = match self.data_bytes {
            b if b >= 256 << 20 => 4,
            b if b >= 64 << 20 => 2,
            _ => 1,
        };
        let per_file = (self.data_bytes / n / CHUNK).max(1) * CHUNK;
        let mut files: Vec<DatasetFile> = (1..=n)
            .map(|i| DatasetFile {
                name: format!("dbio-data-{i:02}.dbf"),
                kind: FileKind::Data,
                size: per_file,
            })
            .collect();
        let redo = (self.data_bytes / 8 / CHUNK).clamp(8, 1024) * CHUNK;
        files.push(DatasetFile {
            name: "dbio-redo-01.log".into(),
            kind: FileKind::Redo,
            size: redo,
        });
        files
    }
}

fn header_len(block_size: u32) -> u64 {
    u64::from(block_size).max(4096)
}

/// A prepared data set, ready for an engine.
#[derive(Clone, Debug)]
pub struct Dataset {
    pub dir: PathBuf,
    pub id: u64,
    pub block_size: u32,
    pub files: Vec<DatasetFile>,
    /// True when this call wrote the files, false when it reused them.
    pub created: bool,
    /// Where engines come from when the files are not local (NFS); `None`
    /// for local files.
    pub backend: Option<std::sync::Arc<dyn dbio_engine::Backend>>,
}

impl Dataset {
    /// The data set `spec` would create in `dir`, without touching any
    /// file (for the null engine, which moves no data).
    pub fn planned(dir: &Path, spec: &DatasetSpec) -> Self {
        Dataset {
            dir: dir.to_path_buf(),
            id: 0,
            block_size: spec.block_size,
            files: spec.files(),
            created: false,
            backend: None,
        }
    }

    /// The data set in `dir` as its manifest `m` lists it, found not created.
    fn listed(dir: &Path, id: u64, m: &Manifest) -> Self {
        Dataset {
            dir: dir.to_path_buf(),
            id,
            block_size: m.block_size,
            files: m.files.clone(),
            created: false,
            backend: None,
        }
    }

    /// Opens an engine on this data set's files (through its backend if any).
    pub fn open_engine(
        &self,
        kind: EngineKind,
        cfg: &EngineConfig,
    ) -> Result<Box<dyn dbio_engine::Engine>, EngineError> {
        dbio_engine::open_with(kind, self.backend.as_ref(), cfg)
    }

    /// The files in engine order (the manifest's order).
    pub fn engine_files(&self) -> Vec<FileSpec> {
        self.files
            .iter()
            .map(|f| FileSpec {
                path: self.dir.join(&f.name),
                size: f.size,
            })
            .collect()
    }

    /// Bytes at the start of every file that hold its header.
    pub fn header_len(&self) -> u64 {
        header_len(self.block_size)
    }

    /// Total bytes of the data files.
    pub fn data_bytes(&self) -> u64 {
        self.files
            .iter()
            .filter(|f| f.kind == FileKind::Data)
            .map(|f| f.size)
            .sum()
    }

    /// Total bytes of all files.
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }
}

/// How to prepare a data set.
#[derive(Clone, Copy, Debug)]
pub struct PrepareOptions {
    /// Engine that writes the files.
    pub engine: EngineKind,
    /// O_DIRECT for the writes.
    pub direct: bool,
    /// Overwrite files dbio did not create.
    pub force_overwrite: bool,
}

/// Reuses the data set in `dir` when it matches `spec`, or creates it.
/// `progress(done, total)` is called as bytes are written; `stop` ends the
/// creation early with [`DatasetError::Interrupted`].
pub fn prepare(
    dir: &Path,
    spec: &DatasetSpec,
    opts: &PrepareOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Dataset, DatasetError> {
    ensure_dir(dir)?;
    if opts.direct {
        probe_direct(dir)?;
    }
    let old = read_manifest(dir, opts.force_overwrite)?;
    let plan = spec.files();
    if let Some(m) = &old {
        if m.complete && m.block_size == spec.block_size && m.files == plan {
            if let Some(id) = parse_id(&m.id) {
                if m.files.iter().all(|f| is_ours(dir, f, id)) {
                    return Ok(Dataset::listed(dir, id, m));
                }
            }
        }
    }
    let old_id = old.as_ref().and_then(|m| parse_id(&m.id));
    // An interrupted creation may leave a file before its header was written.
    let old_incomplete = old.as_ref().is_some_and(|m| !m.complete);
    let old_files: Vec<&DatasetFile> = old.iter().flat_map(|m| m.files.iter()).collect();
    let ours = |name: &str| {
        old_id.is_some_and(|id| {
            old_files.iter().any(|f| {
                f.name == name
                    && match read_head(&dir.join(name)) {
                        Some(head) => {
                            parse_header(&head).is_some_and(|h| h.id == id)
                                || (old_incomplete && head.iter().all(|&b| b == 0))
                        }
                        None => false,
                    }
            })
        })
    };
    // Guard: every file about to be written is ours, or absent, or forced.
    let mut reclaimed = 0;
    for f in &plan {
        let path = dir.join(&f.name);
        if let Ok(meta) = fs::symlink_metadata(&path) {
            if !ours(&f.name) && !opts.force_overwrite {
                return Err(DatasetError::Foreign(path.display().to_string()));
            }
            if meta.is_file() {
                reclaimed += meta.len();
            }
        }
    }
    let need = plan.iter().map(|f| f.size).sum::<u64>();
    let have = free_bytes(dir)? + reclaimed;
    if have < need {
        return Err(DatasetError::NoSpace {
            dir: dir.display().to_string(),
            need,
            have,
        });
    }
    // Old files of ours that the new layout drops are removed.
    for f in &old_files {
        if !plan.iter().any(|p| p.name == f.name) && ours(&f.name) {
            let _ = fs::remove_file(dir.join(&f.name));
        }
    }
    let id = new_id();
    let mut manifest = Manifest {
        magic: MANIFEST_MAGIC.into(),
        version: DATASET_VERSION,
        id: format!("{id:016x}"),
        block_size: spec.block_size,
        complete: false,
        files: plan,
    };
    write_manifest(dir, &manifest)?;
    let ds = Dataset {
        dir: dir.to_path_buf(),
        id,
        block_size: spec.block_size,
        files: manifest.files.clone(),
        created: true,
        backend: None,
    };
    for f in ds.engine_files() {
        create_file(&f.path, f.size)?;
    }
    write_content(&ds, opts, stop, progress)?;
    manifest.complete = true;
    write_manifest(dir, &manifest)?;
    // Fresh content is at generation 0 everywhere: verifiable at once. A
    // data set too large to track simply has no map (verify mode refuses it).
    match crate::verify::GenMap::create(&ds) {
        Ok(_)
        | Err(crate::verify::MapError::TooLarge { .. } | crate::verify::MapError::TooManyFiles) => {
            Ok(ds)
        }
        Err(e) => Err(e.into()),
    }
}

/// Rewrites the content of the local data set `ds` at generation 0 and a
/// fresh verify map, for a verify run on content whose generations are not
/// known. The manifest says incomplete meanwhile, so that an interruption
/// leaves a data set that is created again on next use.
pub fn reformat(
    ds: &Dataset,
    opts: &PrepareOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<crate::verify::GenMap, DatasetError> {
    let mut manifest = Manifest {
        magic: MANIFEST_MAGIC.into(),
        version: DATASET_VERSION,
        id: format!("{:016x}", ds.id),
        block_size: ds.block_size,
        complete: false,
        files: ds.files.clone(),
    };
    crate::verify::GenMap::forget(&ds.dir)?;
    write_manifest(&ds.dir, &manifest)?;
    write_content(ds, opts, stop, progress)?;
    manifest.complete = true;
    write_manifest(&ds.dir, &manifest)?;
    Ok(crate::verify::GenMap::create(ds)?)
}

/// Reads the manifest of the data set in `dir` for `dbio verify`: the data
/// set as listed, whether its creation finished.
pub fn open_existing(dir: &Path) -> Result<(Dataset, bool), DatasetError> {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(DatasetError::NotDir(dir.display().to_string())),
        Err(e) => return Err(io_err("cannot open the data set", dir)(e)),
    }
    let Some(m) = read_manifest(dir, false)? else {
        return Err(DatasetError::Spec(format!(
            "{}: not a dbio data set (no {MANIFEST_NAME})",
            dir.display()
        )));
    };
    let id = parse_id(&m.id).ok_or_else(|| {
        DatasetError::Spec(format!(
            "{}: bad data-set id {:?}",
            dir.join(MANIFEST_NAME).display(),
            m.id
        ))
    })?;
    Ok((Dataset::listed(dir, id, &m), m.complete))
}

/// Creates `dir` (owner-only) if its parent exists.
pub fn ensure_dir(dir: &Path) -> Result<(), DatasetError> {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => return Ok(()),
        Ok(_) => return Err(DatasetError::NotDir(dir.display().to_string())),
        Err(_) => {}
    }
    let parent = match dir.parent() {
        Some(p) if p.as_os_str().is_empty() => Path::new("."),
        Some(p) => p,
        None => Path::new("/"),
    };
    if !parent.is_dir() {
        return Err(DatasetError::NoParent {
            dir: dir.display().to_string(),
            parent: parent.display().to_string(),
        });
    }
    fs::DirBuilder::new()
        .mode(0o700)
        .create(dir)
        .map_err(io_err("cannot create the target directory", dir))
}

/// Fails with [`DatasetError::NoDirect`] when `dir`'s file system refuses
/// O_DIRECT, before anything is written there.
fn probe_direct(dir: &Path) -> Result<(), DatasetError> {
    let probe = dir.join(".dbio-direct-probe");
    let res = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_DIRECT)
        .open(&probe);
    let _ = fs::remove_file(&probe);
    match res {
        Ok(_) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            Err(DatasetError::NoDirect(dir.display().to_string()))
        }
        Err(e) => Err(io_err("cannot create a file", dir)(e)),
    }
}

/// Reads the manifest. A file under the manifest's name that is not a dbio
/// manifest is someone else's: refused unless forced (then ignored).
fn read_manifest(dir: &Path, force: bool) -> Result<Option<Manifest>, DatasetError> {
    let path = dir.join(MANIFEST_NAME);
    let text = match fs::read(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err("cannot read the manifest", &path)(e)),
    };
    match serde_json::from_slice::<Manifest>(&text) {
        Ok(m) if m.magic == MANIFEST_MAGIC => Ok(Some(m)),
        _ if force => Ok(None),
        _ => Err(DatasetError::Foreign(path.display().to_string())),
    }
}

fn write_manifest(dir: &Path, m: &Manifest) -> Result<(), DatasetError> {
    let path = dir.join(MANIFEST_NAME);
    let tmp = dir.join(format!(".{MANIFEST_NAME}.tmp"));
    let mut text = serde_json::to_vec_pretty(m).map_err(|e| DatasetError::Io {
        what: "cannot encode the manifest",
        path: path.display().to_string(),
        source: e.into(),
    })?;
    text.push(b'\n');
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(io_err("cannot write the manifest", &tmp))?;
    f.write_all(&text)
        .and_then(|_| f.sync_all())
        .map_err(io_err("cannot write the manifest", &tmp))?;
    fs::rename(&tmp, &path).map_err(io_err("cannot write the manifest", &path))
}

fn parse_id(s: &str) -> Option<u64> {
    u64::from_str_radix(s, 16).ok()
}

/// A fresh data-set id: clock and pid, spread over 64 bits.
pub fn new_id() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    content::splitmix(t ^ u64::from(std::process::id()) << 32)
}

/// The file exists with its listed size and a header naming data set `id`.
fn is_ours(dir: &Path, f: &DatasetFile, id: u64) -> bool {
    let path = dir.join(&f.name);
    fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() == f.size) && is_ours_header(&path, id)
}

fn is_ours_header(path: &Path, id: u64) -> bool {
    read_head(path).is_some_and(|head| parse_header(&head).is_some_and(|h| h.id == id))
}

/// The first 512 bytes of a file (fewer if it is shorter).
fn read_head(path: &Path) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; 512];
    let mut file = File::open(path).ok()?;
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(_) => return None,
        }
    }
    buf.truncate(got);
    Some(buf)
}

/// What a file header says.
#[derive(Debug, PartialEq, Eq)]
pub struct Header {
    pub id: u64,
    pub file: u32,
    pub kind: String,
    pub size: u64,
    pub block_size: u32,
}

/// The text at the start of block 0: readable with `head -c 200 FILE`.
pub fn header_text(id: u64, file: u32, f: &DatasetFile, block_size: u32) -> String {
    format!(
        "{HEADER_MAGIC}\nversion={DATASET_VERSION}\nid={id:016x}\nfile={file}\nkind={}\nsize={}\nblock_size={block_size}\nend\n",
        f.kind.name(),
        f.size
    )
}

/// Parses a header; `None` when `buf` does not start with one.
pub fn parse_header(buf: &[u8]) -> Option<Header> {
    let end = buf.windows(5).position(|w| w == b"\nend\n")?;
    let text = std::str::from_utf8(&buf[..end]).ok()?;
    let mut lines = text.lines();
    if lines.next()? != HEADER_MAGIC {
        return None;
    }
    let (mut id, mut file, mut kind, mut size, mut bs) = (None, None, None, None, None);
    for line in lines {
        let (k, v) = line.split_once('=')?;
        match k {
            "version" => (v.parse::<u32>().ok()? == DATASET_VERSION).then_some(())?,
            "id" => id = parse_id(v),
            "file" => file = v.parse().ok(),
            "kind" => kind = Some(v.to_string()),
            "size" => size = v.parse().ok(),
            "block_size" => bs = v.parse().ok(),
            _ => {}
        }
    }
    Some(Header {
        id: id?,
        file: file?,
        kind: kind?,
        size: size?,
        block_size: bs?,
    })
}

fn create_file(path: &Path, size: u64) -> Result<(), DatasetError> {
    let f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(io_err("cannot create", path))?;
    // Reserve the space now so that a full disk fails here, clearly, and
    // the file is laid out in few extents.
    let len = libc::off_t::try_from(size).unwrap_or(libc::off_t::MAX);
    // SAFETY: plain syscall on a file descriptor we own.
    let rc = unsafe { libc::posix_fallocate(std::os::fd::AsRawFd::as_raw_fd(&f), 0, len) };
    match rc {
        0 | libc::EOPNOTSUPP | libc::EINVAL => Ok(()),
        libc::ENOSPC => Err(DatasetError::NoSpace {
            dir: path.display().to_string(),
            need: size,
            have: 0,
        }),
        e => Err(io_err("cannot allocate", path)(
            std::io::Error::from_raw_os_error(e),
        )),
    }
}

fn free_bytes(dir: &Path) -> Result<u64, DatasetError> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| DatasetError::Spec(format!("{}: path holds a NUL byte", dir.display())))?;
    // SAFETY: statvfs writes only the struct we hand it.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io_err("cannot read free space", dir)(
            std::io::Error::last_os_error(),
        ));
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Writes every file in 1 MiB chunks through the engine, a few in flight.
pub fn write_content(
    ds: &Dataset,
    opts: &PrepareOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), DatasetError> {
    let cfg = EngineConfig {
        files: ds.engine_files(),
        depth: CREATE_DEPTH,
        max_io: CHUNK as u32,
        direct: opts.direct,
        write: true,
    };
    let mut engine = ds.open_engine(opts.engine, &cfg)?;
    let total = ds.total_bytes();
    let bs = u64::from(ds.block_size);
    // Headers first, so that an interrupted creation leaves every file
    // marked as dbio's.
    let chunk =
        |i: usize, f: &DatasetFile, c: u64| (i as u32, c * CHUNK, (f.size - c * CHUNK).min(CHUNK));
    let heads = ds.files.iter().enumerate().map(|(i, f)| chunk(i, f, 0));
    let rest = ds
        .files
        .iter()
        .enumerate()
        .flat_map(|(i, f)| (1..f.size.div_ceil(CHUNK)).map(move |c| chunk(i, f, c)));
    let mut chunks = heads.chain(rest);
    let mut free: Vec<u32> = (0..engine.depth()).collect();
    let mut done = 0u64;
    let mut out: Vec<Completion> = Vec::with_capacity(CREATE_DEPTH as usize);
    let mut more = true;
    let mut result = Ok(());
    loop {
        while more && result.is_ok() && !free.is_empty() {
            if stop.load(Ordering::Relaxed) {
                result = Err(DatasetError::Interrupted);
                break;
            }
            let Some((file, offset, len)) = chunks.next() else {
                more = false;
                break;
            };
            let slot = free.pop().unwrap_or(0);
            let buf = &mut engine.buffer(slot)[..len as usize];
            content::fill_blocks(buf, bs as usize, ds.id, file, offset / bs, 0);
            let f = &ds.files[file as usize];
            // Every unit after the text header carries its verify head.
            let us = u64::from(crate::verify::unit_size(f.kind, ds.block_size));
            let skip = if offset == 0 { ds.header_len() } else { 0 };
            let whole = (len.saturating_sub(skip) / us * us) as usize;
            let units = &mut buf[skip as usize..skip as usize + whole];
            let first = (offset + skip) / us;
            crate::verify::stamp_units(units, us as usize, ds.id, file, first, 0);
            if offset == 0 {
                let text = header_text(ds.id, file, f, ds.block_size);
                buf[..text.len()].copy_from_slice(text.as_bytes());
            }
            let req = IoRequest {
                file,
                offset,
                len: len as u32,
                dir: IoDir::Write,
                slot,
                sync: false,
                tag: 0,
            };
            if let Err(e) = engine.submit(req) {
                free.push(slot);
                result = Err(e.into());
            }
        }
        engine.commit()?;
        if engine.in_flight() == 0 {
            break;
        }
        out.clear();
        engine.reap(1, Duration::from_millis(200), &mut out)?;
        for c in out.drain(..) {
            free.push(c.slot);
            match c.result {
                Ok(n) => done += u64::from(n),
                Err(e) if result.is_ok() => result = Err(e.into()),
                Err(_) => {}
            }
        }
        progress(done, total);
    }
    result
}

#[cfg(test)]
#[path = "dataset_tests.rs"]
mod tests;
