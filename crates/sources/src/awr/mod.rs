//! Oracle AWR reports (`awrrpt.sql`, 11.2 to 19c, text or HTML) read into a model of the
//! storage work they record ([`AwrReport`]), and that into the workload model a replay
//! runs ([`model_of`], `workload.rs`). dbio-compare makes observations of them.
//!
//! Read: the header, the Load Profile (completed from the Instance Activity Stats), the
//! Top events and the Foreground and Background Wait Events (each event's mean wait from
//! the most precise figures printed), IOStat by Function and by Filetype, the Wait Event
//! Histograms, and Tablespace and File IO Stats. Both layouts become the same tables
//! (`text.rs`, `html.rs`), and each section is read from them by its column titles.

mod doc;
mod events;
mod figures;
mod fileio;
mod header;
mod histogram;
mod html;
mod iostat;
mod load;
mod model;
mod read;
mod table;
mod text;
mod workload;

pub use model::{
    AwrReport, FileIo, IoStat, Layout, LoadProfile, MeanSource, WaitBucket, WaitEvent,
    WaitHistogram,
};

pub use doc::AwrError;
pub use read::{parameters, parse};
pub use workload::model_of;

#[cfg(test)]
mod tests;
