//! dbio-nfs: see ARCHITECTURE.md.
