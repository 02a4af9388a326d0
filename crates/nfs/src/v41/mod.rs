//! NFSv4.1 client (RFC 8881): a [`Session`] (slots, SEQUENCE, retries) and a small
//! file API over it ([`Client`]: look up a path, attributes, directory listing; OPEN,
//! exclusive create, READ, WRITE, COMMIT, CLOSE, REMOVE, RENAME, directories, SETATTR,
//! ACCESS, free space in `files.rs`; whole-file copies are [`crate::copy`]'s).
//! The codec is `dbio_nfs_proto::nfs4`; the transport is one rpc
//! [`Connection`](dbio_rpc::conn::Connection) (one task per socket).
//!
//! This file only declares the parts and re-exports them: the client is in
//! `client.rs`, so that a part using it does not import every other part through here.

mod back_channel;
pub mod callback;
mod client;
mod data_files;
mod files;
mod join;
pub mod layout;
mod mount;
mod opens;
mod pending_writes;
pub mod pnfs;
mod recover;
pub(crate) mod sequence;
mod session;
mod slots;
mod state;
pub mod table;

pub use data_files::CLOSE_TIMEOUT;
pub use files::{
    create_verifier, Access, FsSpace, OpenFile, Written, MAX_WRITE, OPEN4_RESULT_CONFIRM,
    OPEN4_RESULT_LOCKTYPE_POSIX, OPEN4_RESULT_PRESERVE_UNLINKED,
};
pub use mount::{V41Mount, RELEASE_WAIT};
pub use recover::Renewed;
pub use session::{Reply, Session, SessionOptions, SlotStats};
pub use slots::{SlotLease, MAX_SLOTS};
pub use state::StateManager;

pub use client::{Attr, Client, Entry, MAX_READ, NFS4_PORT};
// What the parts share with the client.
use client::{attr_mask, bad};
