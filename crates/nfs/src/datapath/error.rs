//! Why an I/O of the data path failed, in each version's own terms.

pub use crate::retry::BusyStatus;

/// Why an I/O failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DataError {
    /// An RPC of the I/O failed; `offset` is where that RPC's range starts.
    #[error("{cause}")]
    Io { offset: u64, cause: PartError },
    /// The server moved fewer bytes than asked: `done` from the I/O's start.
    #[error("short transfer: {done} bytes")]
    Short { done: u32 },
    /// The slot already has an I/O in flight.
    #[error("slot busy")]
    Busy,
    /// A slot or file the data path does not have.
    #[error("{0}")]
    BadRequest(String),
}

/// Why one RPC of an I/O failed, in the version's own terms.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PartError {
    /// The server answered an NFSv3 READ or WRITE with an error status.
    #[error("{0}")]
    Status3(crate::proto::nfs3::Nfsstat3),
    /// An op of an NFSv4.1 COMPOUND failed.
    #[error("{op}: {status}")]
    Status4 {
        op: crate::proto::nfs4::Opnum,
        status: crate::proto::nfs4::Nfsstat4,
    },
    /// The server kept answering "try later" (JUKEBOX, DELAY, GRACE) after every
    /// re-send the back-off allows.
    #[error("server busy ({status}), re-sent {resends} times")]
    Busy { status: BusyStatus, resends: u32 },
    /// The call got no reply (timeout, connection lost, refused), on every path tried.
    #[error("{0}")]
    Transport(dbio_rpc::conn::TransportError),
    /// A READ reply carried more bytes than the part asked.
    #[error("{0}")]
    LongRead(crate::kinds::LongRead),
    /// The reply broke the protocol.
    #[error("malformed reply: {0}")]
    Malformed(String),
    /// NFSv4.1: every session slot of the data path was retired (their requests got
    /// no reply), so nothing can be sent.
    #[error("{0}; no NFSv4.1 session slot left")]
    NoSlot(dbio_rpc::conn::TransportError),
    /// NFSv4.1: the server lost the session or the client's state (`status`) and it
    /// could not be recovered.
    #[error("{status}; state not recovered: {why}")]
    Unrecovered {
        status: crate::proto::nfs4::Nfsstat4,
        why: String,
    },
}
