//! What a caller hands an experiment to hear from it while it runs: lines of progress,
//! and the edges of the measured window (for counters read beside the run).

/// Called with one line of progress (the caller decides where it goes).
pub type ProgressFn<'a> = &'a (dyn Fn(&str) + Sync);

/// An edge of the measured window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowEdge {
    /// The warm-up is over (before the first I/O without one): what
    /// completes from here on counts, within the 20 ms the driver looks.
    Start,
    /// The load's last I/O completed (before a final verify pass).
    End,
}

/// Called at each [`WindowEdge`], from the thread that drives the load.
#[derive(Clone)]
pub struct WindowHook(pub std::sync::Arc<dyn Fn(WindowEdge) + Send + Sync>);

impl std::fmt::Debug for WindowHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WindowHook")
    }
}
