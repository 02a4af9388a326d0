//! dbio-rpc: ONC RPC v2 (RFC 5531).
//!
//! # API overview (pure modules, no I/O)
//! - [`auth`]: [`Credential::none`] / [`Credential::sys`]`(&AuthSys { stamp, machine_name,
//!   uid, gid, gids })` build a pre-encoded cred+verf (limits checked: name ≤ 255 bytes,
//!   ≤ 16 gids).
//! - [`gss`]: RPCSEC_GSS v1 (RFC 2203): [`gss::GssCred`], [`gss::GssInitRes`],
//!   [`gss::encode_gss_call`] (header MIC as verifier), reply verifiers, integrity and
//!   privacy bodies; the mechanism is a [`gss::GssMech`] supplied by the caller.
//! - [`msg`]: [`encode_call`]`(buf, xid, prog, vers, proc, &cred)` appends a call header;
//!   the arguments follow in the same buffer. [`peek`]`(record)` gives `(xid, MsgType)`.
//!   [`decode_reply`]`(record)` gives a [`Reply`] `{ xid, verf, outcome }` where `outcome`
//!   is `Ok(results_slice)` on SUCCESS or a [`ReplyError`] (PROG_UNAVAIL, PROG_MISMATCH,
//!   PROC_UNAVAIL, GARBAGE_ARGS, SYSTEM_ERR, RPC_MISMATCH, AUTH_ERROR); `reply.results()`
//!   turns a refusal into [`RpcError::Refused`]. [`decode_call`], [`encode_reply_success`]
//!   and [`encode_reply_error`] serve test servers.
//! - [`record`]: sending one call with no extra copy:
//!   ```
//!   # use dbio_rpc::{record, encode_call, Credential};
//!   let mut buf = Vec::new();
//!   let start = record::begin_record(&mut buf);
//!   encode_call(&mut buf, 7, 100003, 3, 0, &Credential::none());
//!   // ... encode arguments here ...
//!   record::finish_record(&mut buf, start, 0);
//!   ```
//!   [`encode_call_record`]`(buf, xid, prog, vers, proc, &cred, &args)` does all three
//!   steps for any `XdrEncode` arguments. For a WRITE, encode the arguments up to the data length word, pass the payload
//!   length plus its padding as `tail`, and send the payload as its own slice.
//!   [`encode_record`](record::encode_record) splits a message into several fragments.
//!   [`RecordDecoder`] reassembles records from a byte stream (bounded by a maximum
//!   record size) and returns each as `bytes::Bytes`; single-fragment records are not
//!   copied, so READ data can be handed on with `record.slice_ref(data)`.
//!
//! # Transport (tokio)
//! - [`conn`]: [`conn::Connection`] owns one TCP connection in one task: XIDs, batched
//!   vectored writes, replies matched by XID in any order, retransmission with the same
//!   XID, reconnect and resend, deadlines. Replies go to a oneshot (`Connection::call`)
//!   or, tagged, to a [`conn::CompletionQueue`] that a plain thread blocks on. Calls the
//!   server sends over the connection (the NFSv4.1 back channel) go to a handler set
//!   with `Connection::serve_calls`, which answers each [`conn::IncomingCall`].
//! - [`secure`]: `sec=` flavours ([`Flavor`]); a connection given a [`GssTarget`]
//!   (`ConnConfig::gss`) sets up its own RPCSEC_GSS context with Kerberos ([`krb5`], the
//!   system's MIT GSS-API), seals every call and opens every reply in its task, renews a
//!   context the server drops, and destroys it at the end: the layers above build calls
//!   as for AUTH_SYS.
//! - [`stop`]: the process's stop flag (SIGINT, SIGTERM) ends every connect and every
//!   wait for a reply, with an error naming what it waited for and for how long.

pub mod auth;
mod call;
mod coalesce;
mod completion;
mod config;
pub mod conn;
mod conn_task;
mod counters;
mod error;
pub mod gss;
mod incoming;
pub mod krb5;
pub mod msg;
pub mod record;
mod recv_room;
pub mod secure;
mod socket;
pub mod stop;

pub use auth::{AuthError, AuthSys, Credential, OpaqueAuth};
pub use msg::{
    decode_call, decode_reply, encode_call, encode_call_record, encode_reply_error,
    encode_reply_success, peek, AuthStat, Call, MsgType, Reply, ReplyError, RpcError,
};
pub use record::{RecordDecoder, RecordError};
pub use secure::{Flavor, GssTarget};
