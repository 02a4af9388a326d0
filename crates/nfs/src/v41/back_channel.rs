//! What a session knows of its back channel (RFC 8881 section 2.10.3.1): the
//! attributes CREATE_SESSION asks for, and the handler of the server's calls as a
//! trait the session defines, so that the session needs nothing of recalls.

use std::net::SocketAddr;

use dbio_rpc::conn::Connection;

use crate::proto::nfs4::{ChannelAttrs, RdmaIrd, SessionId};

/// The callback program number CREATE_SESSION names (any number the client likes;
/// this one is in the range RFC 5531 leaves to local use).
pub const CB_PROGRAM: u32 = 0x4000_0000;
/// Back-channel slots offered: callbacks are rare; a few may come at once.
pub const BACK_SLOTS: u32 = 8;
/// Largest back-channel request and reply offered (a CB_COMPOUND of a few recalls).
const BACK_MESSAGE: u32 = 16 << 10;

/// The back channel's attributes CREATE_SESSION asks for.
pub fn back_channel_attrs() -> ChannelAttrs {
    ChannelAttrs {
        headerpadsize: 0,
        maxrequestsize: BACK_MESSAGE,
        maxresponsesize: BACK_MESSAGE,
        maxresponsesize_cached: BACK_MESSAGE,
        maxoperations: 8,
        maxrequests: BACK_SLOTS,
        rdma_ird: RdmaIrd(None),
    }
}

/// The handler of the server's calls as a session sees it: what it is told of the
/// session's connections, its creation and its SEQUENCE replies. Defined here and
/// implemented by `callback::BackChannel`, which answers recalls with the client and
/// its layouts, above the session: the session knows nothing of recalls.
pub trait Callbacks: Send + Sync + std::fmt::Debug {
    /// Calls the server sends over `conn` come to the handler from now on.
    fn serve(&self, conn: &Connection);
    /// A session was created, with the back channel the server granted (`flags`,
    /// `back`), by `server`.
    fn created(&self, sessionid: SessionId, flags: u32, back: &ChannelAttrs, server: &str);
    /// A SEQUENCE reply's status flags, from `server`.
    fn sequenced(&self, status_flags: u32, server: SocketAddr);
}
