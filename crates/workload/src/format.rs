//! The data set's format: the manifest and the files it lists, the data set wanted and
//! the one prepared, the header at the start of every file, and the errors of making
//! one. Below everything that reads or writes a data set (`prepare`, `namespace`,
//! `verify`, `dataset`'s local entry points), which all import it and which it does not
//! import.

use std::path::{Path, PathBuf};

use dbio_engine::{EngineConfig, EngineError, EngineKind, FileSpec};
use serde::{Deserialize, Serialize};

use crate::content;

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

/// Files are created and rewritten in chunks of this size, and their sizes are whole
/// chunks.
pub(crate) const CHUNK: u64 = 1 << 20;

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
