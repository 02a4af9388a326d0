//! dbio-nfs: dbio's NFS client, one client for every version (NFSv3, NFSv4.1, pNFS).
//!
//! Written once, for every version (see ARCHITECTURE.md, "The NFS client"):
//! - [`fs`]: the file API ([`Fs`]: lookup, attributes, directories, create, open and
//!   close, small reads and writes, remove, rename, commit, space, listings) over one
//!   handle and one attribute type, with the bounds and progress guards no version may
//!   miss; each version implements its table of operations in `fs/v3.rs`, `fs/v41.rs`.
//! - [`client_config`]: the one configuration of a client ([`ClientConfig`], what
//!   [`pool::Pool::open`] takes), laid together from its sources' [`settings`] (the
//!   command line over the URL over an oranfstab entry over the defaults).
//! - [`pool`]: the connections of a run or command over every path, its runtime, its
//!   `Fs`, its data paths and its data files (each opened once, with its pNFS layout:
//!   `v41::data_files`); [`path`] and [`failover`]: path health, events, probes.
//! - [`version`]: each version's set-up table (its port, then its mount over the one
//!   router), as the Linux client's `nfs_subversion`; NFSv3's in [`v3`], NFSv4.1's and
//!   pNFS's in `v41::table`. The pool picks the table once and asks nothing else:
//!   the table makes the file API, the data paths and the end, so no caller matches a
//!   version or downcasts.
//! - [`router`]: the one routing and failover system through which every call goes
//!   (channels per path, health, calls per procedure, routes by file and offset).
//! - [`datapath`]: READ/WRITE/COMMIT of byte ranges over the router, many outstanding,
//!   for engines and copies; the wire is the version's `Seam` (one table per version,
//!   handed over by the version's table), and pNFS
//!   placement beside them; [`copy`]: whole-file copies over a data path (COMMIT and
//!   the write-verifier check); [`ping`]: NULL or READ round trips and their latency.
//! - [`retry`]: the one back-off for "try later" (JUKEBOX, DELAY, GRACE) and dead paths;
//!   [`error`]: typed errors naming the procedure and path; [`url`]: libnfs-style URLs
//!   (`version=3`, `4.1`, `pnfs`); [`config`]: oranfstab and TOML configuration.
//!
//! What differs on the wire, per version:
//! - NFSv3: [`client`] ([`Nfs3Client`]: one async method per procedure), [`mount`]
//!   (portmapper GETPORT, MOUNT v3, finding the export of a path), [`channel`] (the
//!   call encoder).
//! - NFSv4.1: [`v41`] (sessions, slot tables, SEQUENCE, the COMPOUNDs of the file
//!   operations, the mount of a pool) and pNFS layouts (`v41::layout`, `v41::pnfs`).
//! - [`proto`]: re-export of `dbio-nfs-proto`, the pure wire formats of portmap, MOUNT v3,
//!   NFSv3 and NFSv4.1 (no I/O).

pub mod channel;
pub mod client;
pub mod client_config;
pub mod config;
pub mod copy;
pub mod datapath;
pub mod error;
pub mod failover;
pub mod fs;
pub mod kinds;
pub mod mount;
pub mod path;
pub mod ping;
pub mod pool;
pub mod resolve;
pub mod retry;
pub mod router;
pub mod settings;
pub mod table;
pub mod url;
pub mod v3;
pub mod v41;
pub mod version;

/// The wire formats, from their own crate (no I/O).
pub use dbio_nfs_proto as proto;

/// Transport types that users of the pool and the data path see (queues, counters).
pub use dbio_rpc::conn::{
    CallBatch, CallResult, CompletionQueue, ConnStats, ReplyTo, DEFAULT_REPLY_BATCH,
};

pub use client::{DirEntry, Nfs3Client, ReadReply, WriteReply};
pub use client_config::{ClientConfig, ClientOptions};
pub use error::NfsError;
pub use fs::Fs;
pub use settings::Settings;
pub use url::{NfsUrl, UrlError};
