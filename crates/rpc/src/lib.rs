//! dbio-rpc: see ARCHITECTURE.md.
