//! dbio-workload: see ARCHITECTURE.md.
