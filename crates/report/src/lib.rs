//! dbio-report: renders the results of `dbio run` and `dbio calibrate`
//! ([`RunResult`], [`CalibrateResult`] from dbio-stats) as a terminal
//! summary, JSON, CSV, Markdown (AWR-style sections) and one self-contained
//! HTML file with inline SVG charts.
//!
//! - [`terminal`], [`json`], [`csv`], [`markdown`], [`html`] turn a result
//!   into text.
//! - [`write_outputs`] writes the files asked for; a file is written beside
//!   its final name and renamed, so no half-written file is ever left.
//! - [`load`] reads a saved run or calibrate result back; [`saved::load_saved`] any
//!   kind dbio writes (for `dbio report`).
//!
//! ```
//! use dbio_report::{load, terminal, write_outputs, AnyResult, Outputs};
//! use dbio_stats::{RunResult, FORMAT_VERSION, RUN_KIND};
//!
//! let run = RunResult {
//!     kind: RUN_KIND.into(),
//!     format_version: FORMAT_VERSION,
//!     ..Default::default()
//! };
//! let result = AnyResult::from(run);
//! print!("{}", terminal(&result));
//!
//! let dir = std::env::temp_dir().join(format!("dbio-report-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let outputs = Outputs {
//!     json: Some(dir.join("run.json")),
//!     html: Some(dir.join("run.html")),
//!     ..Default::default()
//! };
//! write_outputs(&result, &outputs).unwrap();
//! assert_eq!(load(&dir.join("run.json")).unwrap(), result);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

pub mod age;
pub mod comparison;
mod comparison_charts;
mod comparison_nfs;
mod comparison_view;
pub mod matrix;
pub mod replay;
pub mod saved;

pub use fmt::{Align, Table};

mod csv;
mod devices_view;
mod error;
mod fmt;
mod html;
mod kernel_nfs_view;
mod markdown;
mod nfs_views;
mod output;
mod ranks_view;
mod rate_view;
mod result;
pub mod sample;
mod svg;
mod terminal;
mod verify_view;

pub use csv::csv;
pub use error::ReportError;
pub use fmt::{bytes as fmt_bytes, count as fmt_count, UtcTime};
pub use html::html;
pub use markdown::markdown;
pub(crate) use output::Written;
pub use output::{write_atomic, write_outputs, Outputs};
pub(crate) use result::parse;
pub use result::{json, load, AnyResult};
pub use terminal::terminal;

#[cfg(test)]
mod tests;
