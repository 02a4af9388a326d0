//! The null engine: completes every I/O at once without touching a device,
//! so `dbio run --engine null` measures the overhead of dbio itself.

use std::collections::VecDeque;
use std::time::Duration;

use crate::{
    Capabilities, Completion, Engine, EngineConfig, EngineError, IoRequest, Slot, SlotBuffers,
};

pub struct NullEngine {
    bufs: SlotBuffers,
    done: VecDeque<(u64, Slot, u32)>,
}

impl NullEngine {
    pub fn new(cfg: &EngineConfig) -> Result<Self, EngineError> {
        // Slots still get real buffers so callers can fill and read them.
        let bufs =
            SlotBuffers::new(cfg.depth.max(1) as usize, cfg.max_io as usize).map_err(|e| {
                EngineError::Other(format!("cannot map the null engine's buffers: {e}"))
            })?;
        Ok(Self {
            bufs,
            done: VecDeque::with_capacity(cfg.depth as usize),
        })
    }
}

impl Engine for NullEngine {
    fn name(&self) -> &'static str {
        "null"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            async_io: true,
            no_data: true,
        }
    }
    fn depth(&self) -> u32 {
        self.bufs.len() as u32
    }
    fn buffer(&mut self, slot: Slot) -> &mut [u8] {
        self.bufs.slice_mut(slot as usize)
    }
    fn submit(&mut self, req: IoRequest) -> Result<(), EngineError> {
        if self.done.len() >= self.bufs.len() {
            return Err(EngineError::Busy(self.bufs.len() as u32));
        }
        self.done.push_back((req.tag, req.slot, req.len));
        Ok(())
    }
    fn reap(
        &mut self,
        _min: usize,
        _timeout: Duration,
        out: &mut Vec<Completion>,
    ) -> Result<usize, EngineError> {
        let n = self.done.len();
        out.extend(self.done.drain(..).map(|(tag, slot, len)| Completion {
            tag,
            slot,
            result: Ok(len),
        }));
        Ok(n)
    }
    fn in_flight(&self) -> u32 {
        self.done.len() as u32
    }
}
