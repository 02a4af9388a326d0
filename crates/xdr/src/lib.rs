//! dbio-xdr: see ARCHITECTURE.md.
