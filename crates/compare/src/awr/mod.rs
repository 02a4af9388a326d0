//! Oracle AWR reports (`awrrpt.sql`, 11.2 to 19c, text or HTML) read into a model of the
//! storage work they record ([`AwrReport`]), and into observations, so that runs already
//! made with a database compare like dbio's own.
//!
//! Read: the header, the Load Profile (completed from the Instance Activity Stats), the
//! Top events and the Foreground and Background Wait Events (each event's mean wait from
//! the most precise figures printed), IOStat by Function and by Filetype, the Wait Event
//! Histograms, and Tablespace and File IO Stats. Both layouts become the same tables
//! (`text.rs`, `html.rs`), and each section is read from them by its column titles.

mod doc;
mod events;
mod fileio;
mod header;
mod histogram;
mod html;
mod import;
mod iostat;
mod load;
mod model;
mod read;
mod table;
mod text;

pub use import::{import, Import};
pub use model::{
    AwrReport, FileIo, IoStat, Layout, LoadProfile, MeanSource, WaitBucket, WaitEvent,
    WaitHistogram,
};

pub use doc::AwrError;
pub use read::{parameters, parse};

#[cfg(test)]
mod tests;
