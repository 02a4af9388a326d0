//! dbio-report: see ARCHITECTURE.md.
