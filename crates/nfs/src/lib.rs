//! dbio-nfs: the NFS layer.
//!
//! - [`config`]: oranfstab and TOML configuration.
//! - [`proto`]: pure wire formats of portmap v2, MOUNT v3 and NFSv3 (see its docs for
//!   the procedure/argument/result table).

pub mod config;
pub mod proto;
