//! The NFS engine: one per user thread, all sharing the run's [`NfsTarget`] (its
//! connection pool). A thin adapter: the I/O itself (splitting, routing, failover,
//! retries) is the client's [`DataPath`]; the engine owns the slot buffers and turns
//! requests and outcomes into the engine interface's terms.
//!
//! WRITE data is never copied: a slot's buffer is shared (an `Arc`) with the calls that
//! send it, and handed back to the caller once they are done with it. A READ done in one
//! RPC leaves its data in the receive buffer; it is copied into the slot only if someone
//! asks for the slot's buffer (most runs never look at read data).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use dbio_engine::{
    Capabilities, Completion, Durability, Engine, EngineConfig, EngineError, IoDir, IoRequest, Slot,
};
use dbio_nfs::datapath::{DataError, DataPath, FileId, Outcome, ReadData, Stability};
use dbio_nfs::proto::nfs4::Stateid;

use crate::NfsTarget;

pub struct NfsEngine {
    target: Arc<NfsTarget>,
    path: DataPath,
    /// The slot buffers; a write's calls hold a second reference until they are done.
    bufs: Vec<Arc<Vec<u8>>>,
    /// Data of a completed one-RPC read, still in the receive buffer.
    read_data: Vec<Option<Bytes>>,
    /// The request on each slot, while it is in flight.
    reqs: Vec<Option<IoRequest>>,
    /// Each file's path relative to the export (for messages).
    names: Vec<String>,
    /// The open stateid handed to the data path for each file (None: anonymous).
    stateids: Vec<Option<Stateid>>,
    outcomes: Vec<Outcome>,
}

impl NfsEngine {
    pub fn open(target: Arc<NfsTarget>, cfg: &EngineConfig) -> Result<NfsEngine, EngineError> {
        let depth = cfg.depth.max(1);
        // Files first: with pNFS they bring the layouts, so the data path finds the
        // data servers known and can have slots reserved on them.
        let mut names = Vec::with_capacity(cfg.files.len());
        let mut files = Vec::with_capacity(cfg.files.len());
        for f in &cfg.files {
            let rel = f.path.to_string_lossy().into_owned();
            let file = target.data_file(&rel).map_err(|e| EngineError::Open {
                path: target.display_path(&rel),
                source: std::io::Error::other(e.to_string()),
            })?;
            files.push(file);
            names.push(rel);
        }
        let mut path = target
            .pool
            .data_path(depth, target.max_transfer())
            .map_err(|e| EngineError::Other(format!("{}: {e}", target.url)))?;
        let mut stateids = Vec::with_capacity(files.len());
        for (file, rel) in files.iter().zip(&names) {
            let id = path
                .add_file(file.handle.as_bytes())
                .ok_or_else(|| EngineError::Open {
                    path: target.display_path(rel),
                    source: std::io::Error::other("file handle too long"),
                })?;
            // The run's open, so that the server sees I/O under it (not anonymous).
            let carried = file.stateid.filter(|&s| path.set_stateid(id, s));
            stateids.push(carried);
        }
        Ok(NfsEngine {
            path,
            bufs: (0..depth)
                .map(|_| Arc::new(vec![0; cfg.max_io.max(1) as usize]))
                .collect(),
            read_data: vec![None; depth as usize],
            reqs: vec![None; depth as usize],
            names,
            stateids,
            outcomes: Vec::with_capacity(depth as usize),
            target,
        })
    }

    /// The stateid file `file`'s I/O carries: the run's open of it, or None for the
    /// anonymous one (NFSv3, or an open the server refused).
    pub fn stateid(&self, file: u32) -> Option<Stateid> {
        self.stateids.get(file as usize).copied().flatten()
    }

    /// The engine's completion for a data-path outcome.
    fn complete(&mut self, o: Outcome) -> Option<Completion> {
        let slot = o.slot as Slot;
        let req = self.reqs.get_mut(o.slot as usize)?.take()?;
        match o.data {
            ReadData::None => {}
            ReadData::One(data) => self.read_data[slot as usize] = Some(data),
            ReadData::Parts(parts) => {
                let buf = slot_mut(&mut self.bufs[slot as usize]);
                for (start, data) in parts {
                    let start = start as usize;
                    buf[start..start + data.len()].copy_from_slice(&data);
                }
            }
        }
        let result = o.result.map_err(|e| self.error(req, e));
        Some(Completion {
            tag: req.tag,
            slot,
            result,
        })
    }

    fn error(&self, req: IoRequest, e: DataError) -> EngineError {
        let op = match req.dir {
            IoDir::Read => "NFS READ",
            IoDir::Write => "NFS WRITE",
        };
        let path = self.target.display_path(&self.names[req.file as usize]);
        match e {
            DataError::Io { offset, cause } => EngineError::Io {
                op,
                path,
                offset,
                source: std::io::Error::other(cause),
            },
            DataError::Short { done } => EngineError::Short {
                op,
                path,
                offset: req.offset,
                done,
                want: req.len,
            },
            DataError::Busy => EngineError::Busy(self.path.depth()),
            DataError::BadRequest(why) => EngineError::Other(why),
        }
    }
}

impl Engine for NfsEngine {
    fn name(&self) -> &'static str {
        "nfs"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            async_io: true,
            no_data: false,
        }
    }

    fn depth(&self) -> u32 {
        self.path.depth()
    }

    fn buffer(&mut self, slot: Slot) -> &mut [u8] {
        let buf = slot_mut(&mut self.bufs[slot as usize]);
        if let Some(data) = self.read_data[slot as usize].take() {
            buf[..data.len()].copy_from_slice(&data);
        }
        buf
    }

    fn submit(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let s = req.slot as usize;
        if req.len as usize > self.bufs[0].len() || req.file as usize >= self.names.len() {
            return Err(EngineError::Other(format!(
                "bad request: file {} of {}, {} bytes for {}-byte slots",
                req.file,
                self.names.len(),
                req.len,
                self.bufs[0].len()
            )));
        }
        let file = FileId(req.file);
        let started = match req.dir {
            IoDir::Read => self.path.read(req.slot, file, req.offset, req.len),
            IoDir::Write => {
                let data = Bytes::from_owner(SlotData {
                    buf: self.bufs[s].clone(),
                    len: req.len as usize,
                });
                // Fdatasync is a FILE_SYNC WRITE too, not an UNSTABLE one and a
                // COMMIT: the data path has no COMMIT of its own (it would need one
                // per version, sent where pNFS placed the write, with its retries).
                // Same guarantee, one round trip less than a kernel client's
                // pwrite + fdatasync (UNSTABLE WRITEs, then COMMIT).
                let stable = match req.durability {
                    Durability::Dsync | Durability::Fdatasync => Stability::FileSync,
                    Durability::None if self.target.sync_writes() => Stability::FileSync,
                    Durability::None => Stability::Unstable,
                };
                self.path.write(req.slot, file, req.offset, data, stable)
            }
        };
        started.map_err(|e| self.error(req, e))?;
        self.read_data[s] = None;
        self.reqs[s] = Some(req);
        Ok(())
    }

    fn commit(&mut self) -> Result<(), EngineError> {
        self.path.commit();
        Ok(())
    }

    fn reap(
        &mut self,
        min: usize,
        timeout: Duration,
        out: &mut Vec<Completion>,
    ) -> Result<usize, EngineError> {
        // Inside the pool's runtime: with a pool that has no threads of its own, handing
        // calls over wakes the connection tasks on this thread, without a system call,
        // and this thread runs them while it waits.
        let mut outcomes = std::mem::take(&mut self.outcomes);
        self.target
            .pool
            .block_on(self.path.wait(min, timeout, &mut outcomes));
        let mut got = 0;
        for o in outcomes.drain(..) {
            if let Some(c) = self.complete(o) {
                out.push(c);
                got += 1;
            }
        }
        self.outcomes = outcomes;
        Ok(got)
    }

    fn in_flight(&self) -> u32 {
        self.path.in_flight()
    }
}

/// The first `len` bytes of a slot's buffer, as a WRITE's payload.
struct SlotData {
    buf: Arc<Vec<u8>>,
    len: usize,
}

impl AsRef<[u8]> for SlotData {
    fn as_ref(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// A slot's buffer for writing into. Its last write's calls are normally gone by the
/// time the slot is reused; a call still queued for a resend (a reply that overtook its
/// retransmission) keeps the old buffer, and the slot gets a copy of it.
fn slot_mut(buf: &mut Arc<Vec<u8>>) -> &mut [u8] {
    Arc::make_mut(buf).as_mut_slice()
}
