//! Replay of production: an AWR report's I/O as a workload model (classes, rates,
//! sizes; an editable TOML profile), and the judgement of an open-loop run of it
//! against the report's own figures (per event, the headroom, the objectives, and one
//! answer to whether this storage serves production's load at production's latency).
//!
//! The run itself is `dbio run`'s machinery; this module only builds what it is asked
//! to run ([`model_of`]) and compares what it measured ([`judge`]).

mod answer;
mod from_awr;
mod model;
mod outcome;
mod report;
pub mod shape;

pub use answer::{latency_words, MIN_IOS_JUDGED};
pub use from_awr::model_of;
pub use model::{ModelClass, ModelError, WorkloadModel, CLASSES};
pub use outcome::{judge, objectives, production_slos, LATENCY_GROWTH, RATE_TOLERANCE};
pub use report::{
    Answer, EventComparison, HistogramRow, PageCacheOutcome, ReplayReport, ReplayStep, StepClass,
    REPLAY_FORMAT, REPLAY_KIND,
};
pub use shape::{PageCacheShape, RelationShare};

#[cfg(test)]
mod tests;
