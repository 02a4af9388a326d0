//! One RPC program (portmap, MOUNT, NFS) over one or more connections,
//! with the credential every call carries.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use dbio_rpc::conn::{CallBuf, Connection, ReplyTo, TransportError};
use dbio_rpc::{decode_reply, encode_call, Credential, RpcError};

/// Room for the call header and small arguments, so encoding does not grow the buffer.
const HEAD_CAPACITY: usize = 256;

/// Encodes a call: RPC header (XID left zero: the connection fills it in) for `prog`,
/// `vers` and `proc_` with `cred`, then `args`; `payload` (a WRITE's data) is sent as its
/// own slice, never copied. The one call encoder of the client and the data path.
pub fn build_call(
    prog: u32,
    vers: u32,
    proc_: u32,
    cred: &Credential,
    args: impl FnOnce(&mut BytesMut),
    payload: Bytes,
) -> CallBuf {
    let mut head = BytesMut::with_capacity(HEAD_CAPACITY);
    encode_call(&mut head, 0, prog, vers, proc_, cred);
    args(&mut head);
    let mut call = CallBuf::new(head);
    call.payload = payload;
    call
}

/// Procedure results inside a reply record. The record is kept whole so
/// that READ data can be handed on as a slice of it, without copying.
#[derive(Clone, Debug)]
pub struct Results {
    pub record: Bytes,
    start: usize,
}

impl Results {
    /// Checks the RPC reply header; refusals become [`RpcError::Refused`].
    pub fn from_record(record: Bytes) -> Result<Results, RpcError> {
        let reply = decode_reply(&record)?;
        let results = reply.results()?;
        let start = results.as_ptr() as usize - record.as_ptr() as usize;
        Ok(Results { record, start })
    }

    /// The procedure results.
    pub fn bytes(&self) -> &[u8] {
        &self.record[self.start..]
    }

    /// `data` (a slice of [`Results::bytes`]) as a `Bytes` sharing the record.
    pub fn share(&self, data: &[u8]) -> Bytes {
        if data.is_empty() {
            Bytes::new()
        } else {
            self.record.slice_ref(data)
        }
    }
}

/// Why a call produced no results.
#[derive(Debug, Clone)]
pub enum CallError {
    Transport(TransportError),
    Rpc(RpcError),
}

/// A program and version on a set of connections (round robin).
#[derive(Clone)]
pub struct RpcChannel {
    conns: Arc<[Connection]>,
    next: Arc<AtomicUsize>,
    prog: u32,
    vers: u32,
    cred: Arc<Credential>,
}

impl RpcChannel {
    pub fn new(conns: Vec<Connection>, prog: u32, vers: u32, cred: Credential) -> RpcChannel {
        assert!(!conns.is_empty(), "an RPC channel needs a connection");
        RpcChannel {
            conns: conns.into(),
            next: Arc::new(AtomicUsize::new(0)),
            prog,
            vers,
            cred: Arc::new(cred),
        }
    }

    /// Encodes a call: header (XID filled in by the connection), then `args`.
    pub fn encode(&self, proc_: u32, args: impl FnOnce(&mut BytesMut)) -> CallBuf {
        build_call(self.prog, self.vers, proc_, &self.cred, args, Bytes::new())
    }

    /// The connection the next call goes to.
    pub fn pick(&self) -> &Connection {
        let i = if self.conns.len() == 1 {
            0
        } else {
            self.next.fetch_add(1, Ordering::Relaxed) % self.conns.len()
        };
        &self.conns[i]
    }

    pub fn connections(&self) -> &[Connection] {
        &self.conns
    }

    /// Queues a call without waiting (for pipelines and plain threads).
    pub fn submit(&self, call: CallBuf, reply: ReplyTo) {
        self.pick().submit(call, reply);
    }

    /// Sends a call and waits for its results.
    pub async fn call(&self, call: CallBuf) -> Result<Results, CallError> {
        let reply = self.pick().call(call).await.map_err(CallError::Transport)?;
        Results::from_record(reply.record).map_err(CallError::Rpc)
    }
}
