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
//!
//! This module holds the format and the local entry points; the algorithm
//! itself is [`crate::prepare`], over a [`crate::namespace::Namespace`].

use std::fs::{self, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use dbio_engine::{EngineConfig, EngineError, EngineKind, FileSpec};
use serde::{Deserialize, Serialize};

use crate::content;
use crate::generator::WorkloadConfig;
use crate::namespace::{io_err, LocalDir, Namespace};
use crate::prepare::{write_manifest, CHUNK};

pub use crate::prepare::write_content;

/// Name of the manifest in the target directory.
pub const MANIFEST_NAME: &str = "dbio-dataset.json";
/// Version of the manifest and header format.
pub const DATASET_VERSION: u32 = 1;
/// First line of every file header.
pub const HEADER_MAGIC: &str = "DBIO-DATASET";
pub const MANIFEST_MAGIC: &str = "dbio-dataset";
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
    #[error("{path}: {size} bytes, more than a dbio manifest ever holds ({limit} bytes): not created by dbio (use --force-overwrite to replace it)")]
    TooLarge { path: String, size: u64, limit: u64 },
    #[error("bad data set: {0}")]
    Spec(String),
    #[error("data set creation interrupted; it will be created again next time")]
    Interrupted,
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Map(#[from] crate::verify::MapError),
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
                buffered: false,
                direct: false,
            })
            .collect()
    }

    /// The files in engine order for a run of `workload`: the redo log
    /// through the page cache, or around it, when it asks for that.
    pub fn run_files(&self, workload: &WorkloadConfig) -> Vec<FileSpec> {
        let mut files = self.engine_files();
        for (spec, f) in files.iter_mut().zip(&self.files) {
            let redo = f.kind == FileKind::Redo;
            spec.buffered = workload.redo_buffered && redo;
            spec.direct = workload.redo_direct && redo;
        }
        files
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

/// Reuses the data set in `dir` when it matches `spec`, or creates it
/// ([`crate::prepare::prepare`] on the local directory), with a fresh
/// verify map. `progress(done, total)` is called as bytes are written;
/// `stop` ends the creation early with [`DatasetError::Interrupted`].
pub fn prepare(
    dir: &Path,
    spec: &DatasetSpec,
    opts: &PrepareOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Dataset, DatasetError> {
    let ns = LocalDir::new(dir);
    ns.ensure_dir()?;
    if opts.direct {
        probe_direct(dir)?;
    }
    let ds = crate::prepare::prepare(&ns, spec, opts, stop, progress)?;
    if !ds.created {
        return Ok(ds);
    }
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
/// leaves a data set that is created again on next use, and complete again
/// once the new content is durable.
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
    let ns = LocalDir::new(&ds.dir);
    crate::verify::GenMap::forget(&ds.dir)?;
    write_manifest(&ns, &manifest)?;
    write_content(ds, opts, stop, progress)?;
    for f in &ds.files {
        ns.make_durable(&f.name)?;
    }
    manifest.complete = true;
    write_manifest(&ns, &manifest)?;
    Ok(crate::verify::GenMap::create(ds)?)
}

/// Reads the manifest of the data set in `dir` for `dbio verify`: the data
/// set as listed, whether its creation finished.
pub fn open_existing(dir: &Path) -> Result<(Dataset, bool), DatasetError> {
    crate::prepare::open_existing(&LocalDir::new(dir))
}

/// Creates `dir` (owner-only) if its parent exists.
pub fn ensure_dir(dir: &Path) -> Result<(), DatasetError> {
    LocalDir::new(dir).ensure_dir()
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

pub(crate) fn parse_id(s: &str) -> Option<u64> {
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

#[cfg(test)]
#[path = "dataset_tests.rs"]
mod tests;
