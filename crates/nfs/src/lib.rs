//! dbio-nfs: see ARCHITECTURE.md.
pub mod config;
