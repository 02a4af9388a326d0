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
//! The format is in `format.rs` (re-exported here); this module holds the local
//! entry points. The algorithm itself is [`crate::prepare`], over a
//! [`crate::namespace::Namespace`].

use std::fs::{self, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use dbio_engine::FileSpec;

pub use crate::format::{
    header_text, new_id, parse_header, Dataset, DatasetError, DatasetFile, DatasetSpec, FileKind,
    Header, Manifest, PrepareOptions, DATASET_VERSION, HEADER_MAGIC, MANIFEST_MAGIC, MANIFEST_NAME,
    MIN_DATA_BYTES,
};
use crate::generator::WorkloadConfig;
use crate::namespace::{io_err, LocalDir, Namespace};
pub use crate::prepare::write_content;
use crate::prepare::write_manifest;

impl Dataset {
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

#[cfg(test)]
#[path = "dataset_tests.rs"]
mod tests;
