//! The workload model every source gives: per I/O class the rate and size production
//! asked and where each figure came from (`workload.rs`, an editable TOML profile), and
//! the shape of production's reads over its relations and page cache (`shape.rs`).

pub mod shape;
mod workload;

pub use shape::{PageCacheShape, RelationShare};
pub use workload::{ModelClass, ModelError, WorkloadModel, CLASSES};
