//! dbio-experiment: see ARCHITECTURE.md.
