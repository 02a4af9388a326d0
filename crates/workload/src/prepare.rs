//! The data-set algorithm, one for every kind of storage (through a
//! [`Namespace`]): the manifest says what is there; a complete data set
//! that matches the spec is reused; files dbio did not create are never
//! overwritten (a benchmark never destroys data it did not write) unless
//! forced; missing files are created and filled through the engine; the
//! manifest says complete only once the content is durable.
//!
//! Which files are dbio's: those the manifest lists whose header block
//! names the manifest's data set. While the manifest says creation is
//! incomplete, an all-zero header counts too: creation crashed after
//! creating the file and before writing its header. Once creation has
//! finished every file has its header, so a zero header then is a file
//! someone else put there, and it is refused.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use dbio_engine::{Completion, Durability, EngineConfig, IoDir, IoRequest};

use crate::content;
use crate::format::{
    header_text, new_id, parse_header, parse_id, Dataset, DatasetError, DatasetFile, DatasetSpec,
    Manifest, PrepareOptions, CHUNK, DATASET_VERSION, MANIFEST_MAGIC, MANIFEST_NAME,
};
use crate::namespace::Namespace;
/// Chunks in flight while creating.
const CREATE_DEPTH: u32 = 4;
/// Bytes of a file read to recognise its header (the header text is shorter).
const HEAD_LEN: usize = 512;

/// Reuses the data set in `ns` when it matches `spec`, or creates it.
/// `progress(done, total)` is called as bytes are written; `stop` ends the
/// creation early with [`DatasetError::Interrupted`].
pub fn prepare(
    ns: &dyn Namespace,
    spec: &DatasetSpec,
    opts: &PrepareOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Dataset, DatasetError> {
    ns.ensure_dir()?;
    let old = read_manifest(ns, opts.force_overwrite)?;
    let plan = spec.files();
    if let Some(m) = &old {
        if let Some(id) = reusable(ns, m, spec, &plan)? {
            return Ok(listed(ns, id, m));
        }
    }
    let owner = Owner::of(old.as_ref());
    // Guard: every file about to be written is ours, or absent, or forced.
    let mut reclaimed = 0;
    let mut in_place = Vec::new();
    for f in &plan {
        if let Some(entry) = ns.entry(&f.name)? {
            if !opts.force_overwrite && !owner.owns(ns, &f.name) {
                return Err(DatasetError::Foreign(ns.path_of(&f.name)));
            }
            if entry.is_file {
                reclaimed += entry.size;
            }
            in_place.push(f.name.as_str());
        }
    }
    let need = plan.iter().map(|f| f.size).sum::<u64>();
    if let Some(free) = ns.free_bytes()? {
        if free + reclaimed < need {
            return Err(DatasetError::NoSpace {
                dir: ns.place(),
                need,
                have: free + reclaimed,
            });
        }
    }
    // Old files of ours that the new layout drops go; failing that only
    // leaves them behind.
    for f in owner.files {
        if !plan.iter().any(|p| p.name == f.name) && owner.owns(ns, &f.name) {
            let _ = ns.remove(&f.name);
        }
    }
    // The files to rewrite go before the new manifest names a new id: a
    // crash in between must not leave a file whose header names the old one.
    for name in in_place {
        ns.remove(name)?;
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
    write_manifest(ns, &manifest)?;
    let ds = Dataset {
        created: true,
        ..listed(ns, id, &manifest)
    };
    for f in &ds.files {
        ns.create(&f.name, f.size)?;
    }
    write_content(&ds, opts, stop, progress)?;
    for f in &ds.files {
        ns.make_durable(&f.name)?;
    }
    manifest.complete = true;
    write_manifest(ns, &manifest)?;
    Ok(ds)
}

/// Reads the manifest of the data set in `ns` without creating or changing
/// anything (for `dbio verify`): the data set as listed, and whether its
/// creation finished.
pub fn open_existing(ns: &dyn Namespace) -> Result<(Dataset, bool), DatasetError> {
    ns.open_dir()?;
    let Some(m) = read_manifest(ns, false)? else {
        return Err(DatasetError::Spec(format!(
            "{}: not a dbio data set (no {MANIFEST_NAME})",
            ns.place()
        )));
    };
    let id = parse_id(&m.id).ok_or_else(|| {
        DatasetError::Spec(format!(
            "{}: bad data-set id {:?}",
            ns.path_of(MANIFEST_NAME),
            m.id
        ))
    })?;
    Ok((listed(ns, id, &m), m.complete))
}

/// The data set in `ns` as manifest `m` lists it, found not created.
fn listed(ns: &dyn Namespace, id: u64, m: &Manifest) -> Dataset {
    Dataset {
        dir: ns.dir(),
        id,
        block_size: m.block_size,
        files: m.files.clone(),
        created: false,
        backend: ns.backend(),
    }
}

/// The id of the data set `m` lists when it is complete, is what `spec`
/// asks for, and every file is there with its size and header.
fn reusable(
    ns: &dyn Namespace,
    m: &Manifest,
    spec: &DatasetSpec,
    plan: &[DatasetFile],
) -> Result<Option<u64>, DatasetError> {
    let Some(id) = parse_id(&m.id) else {
        return Ok(None);
    };
    if !m.complete || m.block_size != spec.block_size || m.files != plan {
        return Ok(None);
    }
    for f in &m.files {
        let whole = ns
            .entry(&f.name)?
            .is_some_and(|e| e.is_file && e.size == f.size);
        if !whole || !has_header(ns, &f.name, id) {
            return Ok(None);
        }
    }
    Ok(Some(id))
}

fn has_header(ns: &dyn Namespace, name: &str, id: u64) -> bool {
    ns.read_head(name, HEAD_LEN)
        .is_ok_and(|head| parse_header(&head).is_some_and(|h| h.id == id))
}

/// What the old manifest says is dbio's.
struct Owner<'m> {
    id: Option<u64>,
    files: &'m [DatasetFile],
    /// The manifest says creation did not finish.
    creating: bool,
}

impl<'m> Owner<'m> {
    fn of(old: Option<&'m Manifest>) -> Self {
        Owner {
            id: old.and_then(|m| parse_id(&m.id)),
            files: old.map_or(&[], |m| &m.files),
            creating: old.is_some_and(|m| !m.complete),
        }
    }

    /// `name` is listed and its header names the data set, or is all
    /// zeros while creation is incomplete (see the module comment).
    fn owns(&self, ns: &dyn Namespace, name: &str) -> bool {
        let Some(id) = self.id else {
            return false;
        };
        if !self.files.iter().any(|f| f.name == name) {
            return false;
        }
        match ns.read_head(name, HEAD_LEN) {
            Ok(head) => {
                parse_header(&head).is_some_and(|h| h.id == id)
                    || (self.creating && head.iter().all(|&b| b == 0))
            }
            Err(_) => false,
        }
    }
}

/// Reads the manifest. A file under the manifest's name that is not a dbio
/// manifest is someone else's: refused unless forced (then ignored).
pub(crate) fn read_manifest(
    ns: &dyn Namespace,
    force: bool,
) -> Result<Option<Manifest>, DatasetError> {
    let text = match ns.read_small(MANIFEST_NAME) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(None),
        Err(DatasetError::TooLarge { .. }) if force => return Ok(None),
        Err(e) => return Err(e),
    };
    match serde_json::from_slice::<Manifest>(&text) {
        Ok(m) if m.magic == MANIFEST_MAGIC => Ok(Some(m)),
        _ if force => Ok(None),
        _ => Err(DatasetError::Foreign(ns.path_of(MANIFEST_NAME))),
    }
}

pub(crate) fn write_manifest(ns: &dyn Namespace, m: &Manifest) -> Result<(), DatasetError> {
    let mut text = serde_json::to_vec_pretty(m).map_err(|e| DatasetError::Io {
        what: "cannot encode the manifest",
        path: ns.path_of(MANIFEST_NAME),
        source: e.into(),
    })?;
    text.push(b'\n');
    ns.write_small(MANIFEST_NAME, &text)
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
        shared_buffers: false,
        io_workers: 0,
        io_workers_from: 0,
        submitted: Default::default(),
        no_read_ahead: false,
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
                durability: Durability::None,
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
#[path = "prepare_tests.rs"]
mod tests;
