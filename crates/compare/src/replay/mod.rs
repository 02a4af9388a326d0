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
pub mod shape;

pub use answer::{latency_words, Answer, MIN_IOS_JUDGED};
pub use from_awr::model_of;
pub use model::{ModelClass, ModelError, WorkloadModel, CLASSES};
pub use outcome::{
    judge, objectives, production_slos, EventComparison, HistogramRow, ReplayReport, ReplayStep,
    StepClass, LATENCY_GROWTH, RATE_TOLERANCE, REPLAY_FORMAT, REPLAY_KIND,
};
pub use shape::{PageCacheOutcome, PageCacheShape, RelationShare};

#[cfg(test)]
mod tests;
