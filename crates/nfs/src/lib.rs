//! dbio-nfs: the NFS layer.
//!
//! - [`config`]: oranfstab and TOML configuration.
//! - [`proto`]: re-export of `dbio-nfs-proto`, the pure wire formats of portmap v2,
//!   MOUNT v3 and NFSv3 (see its docs for the procedure/argument/result table).
//! - Client: [`url`] (libnfs-style URLs), [`mount`] (portmapper GETPORT, MOUNT v3 and
//!   finding the export of a path), [`client`] ([`Nfs3Client`]: one async method per
//!   NFSv3 procedure, plus `*_call`/`decode_*` pairs to pipeline READ and WRITE through
//!   [`channel::RpcChannel::submit`]), [`error`] (typed errors naming
//!   the procedure and path), [`retry`] (the one back-off for JUKEBOX and dead paths).
//! - [`v41`]: NFSv4.1 sessions (EXCHANGE_ID, CREATE_SESSION, slot table, SEQUENCE,
//!   NFS4ERR_DELAY/GRACE retries) and a small file API (lookup, getattr, readdir, read).
//! - [`router`]: the one routing and failover system (channels per path, health,
//!   calls per procedure, routes by file and offset), for metadata and data alike;
//!   [`datapath`]: version-neutral READ/WRITE of byte ranges over it, for engines;
//!   [`copy`]: whole-file copies over a data path (COMMIT and write-verifier check);
//!   [`ping`]: NULL or READ round trips and their latency.
//! - [`pool`] and [`path`]: connections over several network paths, shared by every
//!   user of a run, with load balancing by fewest outstanding requests;
//!   [`failover`]: path health, failover events and the probe of dead paths.

pub mod channel;
pub mod client;
pub mod config;
pub mod copy;
pub mod datapath;
pub mod error;
pub mod failover;
pub mod fs;
pub mod mount;
pub mod path;
pub mod ping;
pub mod pool;
pub mod retry;
pub mod router;
pub mod url;
pub mod v41;

/// The wire formats, from their own crate (no I/O).
pub use dbio_nfs_proto as proto;

/// Transport types that users of the pool and the data path see (queues, counters).
pub use dbio_rpc::conn::{
    CallBatch, CallResult, CompletionQueue, ConnStats, ReplyTo, DEFAULT_REPLY_BATCH,
};

pub use client::{ClientOptions, DirEntry, Nfs3Client, ReadReply, WriteReply};
pub use error::NfsError;
pub use fs::Fs;
pub use url::{NfsUrl, UrlError};
