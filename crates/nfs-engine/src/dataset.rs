//! The data set on an NFS export: the same files, manifest, headers and
//! overwrite guard as a local data set, created and checked with NFS calls
//! (LOOKUP, MKDIR, CREATE, READ, WRITE, RENAME, COMMIT, FSSTAT) and filled
//! through the NFS engine.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use bytes::Bytes;
use dbio_engine::EngineKind;
use dbio_nfs::proto::nfs3::{CreateHow, FileHandle, Ftype3, Nfsstat3, Sattr3, StableHow};
use dbio_nfs::NfsError;
use dbio_workload::dataset::{
    parse_header, write_content, DatasetFile, Manifest, DATASET_VERSION, MANIFEST_MAGIC,
    MANIFEST_NAME,
};
use dbio_workload::{Dataset, DatasetError, DatasetSpec, PrepareOptions};

use crate::NfsTarget;

/// Largest manifest read back (a few hundred bytes in practice).
const MAX_MANIFEST: u64 = 1 << 20;

fn nfs_err(what: &'static str, path: String) -> impl FnOnce(NfsError) -> DatasetError {
    move |e| DatasetError::Io {
        what,
        path,
        source: std::io::Error::other(e.to_string()),
    }
}

fn is_noent(e: &NfsError) -> bool {
    matches!(
        e,
        NfsError::Status {
            status: Nfsstat3::NoEnt,
            ..
        }
    )
}

/// `dir/name` inside the export.
fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// Reuses the data set in the target's directory when it matches `spec`,
/// or creates it through NFS. Like the local `prepare`: files dbio did not
/// create are never overwritten unless `force_overwrite`.
pub fn prepare(
    target: &Arc<NfsTarget>,
    spec: &DatasetSpec,
    force_overwrite: bool,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Dataset, DatasetError> {
    let ns = Namespace { t: target };
    let dir = target.dir.clone();
    let dir_fh = ns.ensure_dir(&dir)?;
    let old = ns.read_manifest(dir_fh, &dir, force_overwrite)?;
    let plan = spec.files();
    let mut ds = Dataset {
        dir: PathBuf::from(&dir),
        id: 0,
        block_size: spec.block_size,
        files: plan.clone(),
        created: false,
        backend: Some(target.backend()),
    };
    if let Some(m) = &old {
        let id = u64::from_str_radix(&m.id, 16).ok();
        if let Some(id) =
            id.filter(|_| m.complete && m.block_size == spec.block_size && m.files == plan)
        {
            if m.files
                .iter()
                .all(|f| ns.is_ours(&join(&dir, &f.name), f.size, id))
            {
                ds.id = id;
                return Ok(ds);
            }
        }
    }
    let old_id = old
        .as_ref()
        .and_then(|m| u64::from_str_radix(&m.id, 16).ok());
    let old_files: Vec<DatasetFile> = old.map(|m| m.files).unwrap_or_default();
    let ours = |name: &str| {
        old_id.is_some_and(|id| {
            old_files.iter().any(|f| f.name == name)
                && ns.head(&join(&dir, name)).is_some_and(|head| {
                    parse_header(&head).is_some_and(|h| h.id == id) || head.iter().all(|&b| b == 0)
                })
        })
    };
    let mut reclaimed = 0;
    for f in &plan {
        let rel = join(&dir, &f.name);
        if let Some(size) = ns.size_of(&rel) {
            if !ours(&f.name) && !force_overwrite {
                return Err(DatasetError::Foreign(target.display_path(&rel)));
            }
            reclaimed += size;
        }
    }
    let need: u64 = plan.iter().map(|f| f.size).sum();
    let have = ns.free_bytes(dir_fh, &dir)? + reclaimed;
    if have < need {
        return Err(DatasetError::NoSpace {
            dir: target.display_path(&dir),
            need,
            have,
        });
    }
    for f in &old_files {
        if !plan.iter().any(|p| p.name == f.name) && ours(&f.name) {
            let rel = join(&dir, &f.name);
            let _ = target
                .pool
                .block_on(target.pool.client().remove(dir_fh, &f.name, &rel));
            target.forget(&rel);
        }
    }
    let id = dbio_workload::dataset::new_id();
    let mut manifest = Manifest {
        magic: MANIFEST_MAGIC.into(),
        version: DATASET_VERSION,
        id: format!("{id:016x}"),
        block_size: spec.block_size,
        complete: false,
        files: plan,
    };
    ns.write_manifest(dir_fh, &dir, &manifest)?;
    let mut handles = Vec::new();
    for f in &manifest.files {
        handles.push(ns.create(dir_fh, &dir, &f.name, Some(f.size))?);
    }
    ds.id = id;
    ds.created = true;
    let opts = PrepareOptions {
        engine: EngineKind::Nfs,
        direct: true,
        force_overwrite,
    };
    write_content(&ds, &opts, stop, progress)?;
    // The content went as UNSTABLE writes: make it durable.
    for (fh, f) in handles.iter().zip(&manifest.files) {
        let rel = join(&dir, &f.name);
        target
            .pool
            .block_on(target.pool.client().commit(*fh, 0, 0, &rel))
            .map_err(nfs_err("cannot commit", target.display_path(&rel)))?;
    }
    manifest.complete = true;
    ns.write_manifest(dir_fh, &dir, &manifest)?;
    Ok(ds)
}

/// Reads the manifest of the data set in the target's directory without
/// creating or changing anything (for `dbio verify`): the data set as
/// listed, and whether its creation finished.
pub fn open_existing(target: &Arc<NfsTarget>) -> Result<(Dataset, bool), DatasetError> {
    let ns = Namespace { t: target };
    let dir = target.dir.clone();
    let path = target.display_path(&dir);
    let dir_fh = target
        .handle(&dir)
        .map_err(nfs_err("cannot open the data set", path.clone()))?;
    let m = ns.read_manifest(dir_fh, &dir, false)?.ok_or_else(|| {
        DatasetError::Spec(format!("{path}: not a dbio data set (no {MANIFEST_NAME})"))
    })?;
    let id = u64::from_str_radix(&m.id, 16)
        .map_err(|_| DatasetError::Spec(format!("{path}: bad data-set id {:?}", m.id)))?;
    let ds = Dataset {
        dir: PathBuf::from(&dir),
        id,
        block_size: m.block_size,
        files: m.files,
        created: false,
        backend: Some(target.backend()),
    };
    Ok((ds, m.complete))
}

struct Namespace<'a> {
    t: &'a Arc<NfsTarget>,
}

impl Namespace<'_> {
    fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.t.pool.block_on(f)
    }

    /// Creates the data-set directory (and its missing parents, mode 0700).
    fn ensure_dir(&self, dir: &str) -> Result<FileHandle, DatasetError> {
        let c = self.t.pool.client();
        let mut fh = c.root();
        let mut walked = String::new();
        for name in dir.split('/').filter(|s| !s.is_empty()) {
            walked = join(&walked, name);
            let path = self.t.display_path(&walked);
            fh = match self.block_on(c.lookup(fh, name, &walked)) {
                Ok((next, attrs)) => {
                    if attrs.is_some_and(|a| a.ftype != Ftype3::Dir) {
                        return Err(DatasetError::NotDir(path));
                    }
                    next
                }
                Err(e) if is_noent(&e) => self
                    .block_on(c.mkdir(fh, name, 0o700, &walked))
                    .map_err(nfs_err("cannot create the target directory", path))?,
                Err(e) => return Err(nfs_err("cannot look up", path)(e)),
            };
        }
        Ok(fh)
    }

    fn read_manifest(
        &self,
        dir_fh: FileHandle,
        dir: &str,
        force: bool,
    ) -> Result<Option<Manifest>, DatasetError> {
        let rel = join(dir, MANIFEST_NAME);
        let path = self.t.display_path(&rel);
        let c = self.t.pool.client();
        let (fh, attrs) = match self.block_on(c.lookup(dir_fh, MANIFEST_NAME, &rel)) {
            Ok(x) => x,
            Err(e) if is_noent(&e) => return Ok(None),
            Err(e) => return Err(nfs_err("cannot read the manifest", path)(e)),
        };
        let size = attrs
            .map(|a| a.size)
            .unwrap_or(MAX_MANIFEST)
            .min(MAX_MANIFEST);
        let text = self
            .read_all(fh, &rel, size)
            .map_err(nfs_err("cannot read the manifest", path.clone()))?;
        match serde_json::from_slice::<Manifest>(&text) {
            Ok(m) if m.magic == MANIFEST_MAGIC => Ok(Some(m)),
            _ if force => Ok(None),
            _ => Err(DatasetError::Foreign(path)),
        }
    }

    /// Up to `size` bytes from the start of a file.
    fn read_all(&self, fh: FileHandle, rel: &str, size: u64) -> Result<Vec<u8>, NfsError> {
        let c = self.t.pool.client();
        let mut out = Vec::new();
        while (out.len() as u64) < size {
            let want = (size - out.len() as u64).min(u64::from(c.read_size(1 << 20))) as u32;
            let r = self.block_on(c.read(fh, out.len() as u64, want, rel))?;
            out.extend_from_slice(&r.data);
            if r.eof || r.data.is_empty() {
                break;
            }
        }
        Ok(out)
    }

    /// Writes the manifest to a temporary file, then renames it into place.
    fn write_manifest(
        &self,
        dir_fh: FileHandle,
        dir: &str,
        m: &Manifest,
    ) -> Result<(), DatasetError> {
        let rel = join(dir, MANIFEST_NAME);
        let path = self.t.display_path(&rel);
        let mut text = serde_json::to_vec_pretty(m).map_err(|e| DatasetError::Io {
            what: "cannot encode the manifest",
            path: path.clone(),
            source: e.into(),
        })?;
        text.push(b'\n');
        let tmp_name = format!(".{MANIFEST_NAME}.tmp");
        let fh = self.create(dir_fh, dir, &tmp_name, Some(0))?;
        let c = self.t.pool.client();
        let data = Bytes::from(text);
        let mut off = 0usize;
        while off < data.len() {
            let n = (data.len() - off).min(c.write_size(1 << 20) as usize);
            let w = self
                .block_on(c.write(
                    fh,
                    off as u64,
                    &data.slice(off..off + n),
                    StableHow::FileSync,
                    &rel,
                ))
                .map_err(nfs_err("cannot write the manifest", path.clone()))?;
            if w.count == 0 {
                return Err(DatasetError::Io {
                    what: "cannot write the manifest",
                    path,
                    source: std::io::Error::other("server wrote 0 bytes"),
                });
            }
            off += w.count as usize;
        }
        self.block_on(c.rename((dir_fh, &tmp_name), (dir_fh, MANIFEST_NAME), &rel))
            .map_err(nfs_err("cannot write the manifest", path))?;
        self.t.forget(&join(dir, &tmp_name));
        Ok(())
    }

    /// CREATE (or truncate/extend to `size`) `name` in the directory, mode 0600.
    fn create(
        &self,
        dir_fh: FileHandle,
        dir: &str,
        name: &str,
        size: Option<u64>,
    ) -> Result<FileHandle, DatasetError> {
        let rel = join(dir, name);
        let attrs = Sattr3 {
            mode: Some(0o600),
            size,
            ..Sattr3::default()
        };
        let c = self.t.pool.client();
        let fh = self
            .block_on(c.create(dir_fh, name, CreateHow::Unchecked(attrs), &rel))
            .map_err(nfs_err("cannot create", self.t.display_path(&rel)))?;
        // UNCHECKED on an existing file may leave its size: set it.
        if let Some(size) = size {
            let a = Sattr3 {
                size: Some(size),
                ..Sattr3::default()
            };
            self.block_on(c.setattr(fh, a, &rel))
                .map_err(nfs_err("cannot size", self.t.display_path(&rel)))?;
        }
        self.t.remember(&rel, fh);
        Ok(fh)
    }

    fn size_of(&self, rel: &str) -> Option<u64> {
        let c = self.t.pool.client();
        self.block_on(c.lookup_path(rel)).ok().map(|(_, a)| a.size)
    }

    /// The first 512 bytes of a file, if it can be read.
    fn head(&self, rel: &str) -> Option<Vec<u8>> {
        let c = self.t.pool.client();
        let (fh, _) = self.block_on(c.lookup_path(rel)).ok()?;
        self.read_all(fh, rel, 512).ok()
    }

    /// The file has its listed size and a header naming data set `id`.
    fn is_ours(&self, rel: &str, size: u64, id: u64) -> bool {
        self.size_of(rel) == Some(size)
            && self
                .head(rel)
                .is_some_and(|h| parse_header(&h).is_some_and(|h| h.id == id))
    }

    fn free_bytes(&self, dir_fh: FileHandle, dir: &str) -> Result<u64, DatasetError> {
        let c = self.t.pool.client();
        let st = self
            .block_on(c.fsstat(dir_fh, dir))
            .map_err(nfs_err("cannot read free space", self.t.display_path(dir)))?;
        Ok(st.abytes)
    }
}
