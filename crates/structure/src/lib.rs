//! dbio-structure: no code of its own. Its tests check the shape of the workspace:
//! `tests/module_graph.rs` fails on an import circle of more than two files in any
//! crate and on a crate that depends on a crate of its own layer or one above it.
