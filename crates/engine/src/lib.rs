//! dbio-engine: one small interface for "issue this I/O, tell me when it is done".
//!
//! Modelled on fio's `ioengine_ops`: an engine owns a fixed number of
//! buffer *slots* (its queue depth); the caller fills a slot (for writes),
//! [`Engine::submit`]s a request naming the slot, and later
//! [`Engine::reap`]s completions. The workload never knows which engine it
//! drives. One engine instance is driven by one thread (a "user").

mod align;
pub mod buffer;
mod io_workers;
mod local;
pub mod null;
pub mod psync;
mod seam;
pub mod submitted;
pub mod uring;

pub use align::direct_io_alignment;
pub use buffer::SlotBuffers;
pub use seam::{
    Backend, Capabilities, Completion, Durability, Engine, EngineConfig, EngineError, EngineKind,
    FileId, FileSpec, IoDir, IoRequest, Slot,
};
pub use submitted::Submitted;

/// Open an engine of the given kind on local files.
pub fn open(kind: EngineKind, cfg: &EngineConfig) -> Result<Box<dyn Engine>, EngineError> {
    match kind {
        EngineKind::Null => Ok(Box::new(null::NullEngine::new(cfg)?)),
        EngineKind::Psync => Ok(Box::new(psync::PsyncEngine::open(cfg)?)),
        EngineKind::IoUring => Ok(Box::new(uring::UringEngine::open(cfg)?)),
        EngineKind::Nfs => Err(EngineError::Unavailable(
            "nfs",
            "it needs an nfs:// target".into(),
        )),
    }
}

/// Opens an engine: through `backend` when there is one, else a local engine.
pub fn open_with(
    kind: EngineKind,
    backend: Option<&std::sync::Arc<dyn Backend>>,
    cfg: &EngineConfig,
) -> Result<Box<dyn Engine>, EngineError> {
    match backend {
        Some(b) => b.open(cfg),
        None => open(kind, cfg),
    }
}
