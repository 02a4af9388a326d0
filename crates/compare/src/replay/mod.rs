//! Replay of production: the judgement of an open-loop run of a workload model
//! against production's own figures (per event, the headroom, the objectives, and one
//! answer to whether this storage serves production's load at production's latency).
//!
//! The model comes from dbio-sources (an AWR report, a database capture, a saved
//! model); the run itself is `dbio run`'s machinery; this module compares what it
//! measured ([`judge`]).

mod answer;
pub mod memory;
mod outcome;
mod report;

pub use answer::{latency_words, MIN_IOS_JUDGED};
pub use outcome::{judge, objectives, production_slos, LATENCY_GROWTH, RATE_TOLERANCE};
pub use report::{
    Answer, EventComparison, HistogramRow, MemoryEvent, MemoryStep, PageCacheOutcome, ReplayReport,
    ReplayStep, StepClass, REPLAY_FORMAT, REPLAY_KIND,
};

#[cfg(test)]
mod tests;
