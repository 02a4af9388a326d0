//! The NFSv3 encoding of the data path's operations: READ and WRITE calls and their
//! replies.

use bytes::Bytes;
use dbio_rpc::conn::CallBuf;
use dbio_xdr::XdrEncode;

use super::{BusyStatus, Dir, PartError, PartReply as Reply, Stability};
use crate::channel::Results;
use crate::client::{is_jukebox, read_reply_hint};
use crate::kinds::LongRead;
use crate::proto::nfs3::{
    decode_res, Data, FileHandle, Proc, ReadArgs, ReadOk, StableHow, WriteArgs, WriteOk,
};
use crate::router::Router;

pub type Handle = FileHandle;
pub const READ: &str = "READ";
pub const WRITE: &str = "WRITE";

pub fn handle(bytes: &[u8]) -> Option<Handle> {
    FileHandle::new(bytes)
}

pub fn read_call(router: &Router, fh: &Handle, offset: u64, count: u32) -> CallBuf {
    let args = ReadArgs {
        file: *fh,
        offset,
        count,
    };
    let mut call = router.encode(Proc::Read as u32, |b| args.encode(b), Bytes::new());
    call.reply_hint = read_reply_hint(count);
    call
}

pub fn write_call(
    router: &Router,
    fh: &Handle,
    offset: u64,
    data: Bytes,
    stable: Stability,
) -> CallBuf {
    let stable = StableHow::from_u32(stable as u32).unwrap_or(StableHow::FileSync);
    let args = WriteArgs {
        file: *fh,
        offset,
        stable,
        data: Data(&data[..]),
    };
    router.encode(Proc::Write as u32, |b| args.encode_head(b), data.clone())
}

/// Decodes a READ or WRITE reply of a part of `want` bytes.
pub fn decode(dir: Dir, record: Bytes, want: u32) -> Result<Reply, PartError> {
    let malformed = |e: &dyn std::fmt::Display| PartError::Malformed(e.to_string());
    let res = Results::from_record(record).map_err(|e| malformed(&e))?;
    if is_jukebox(res.bytes()) {
        return Ok(Reply::Busy(BusyStatus::Jukebox));
    }
    match dir {
        Dir::Read => match decode_res::<ReadOk>(res.bytes()) {
            Ok(Ok(ok)) => {
                LongRead::check(want, ok.data.0.len()).map_err(PartError::LongRead)?;
                Ok(Reply::Read(res.share(ok.data.0)))
            }
            Ok(Err(status)) => Err(PartError::Status3(status)),
            Err(e) => Err(malformed(&e)),
        },
        Dir::Write => match decode_res::<WriteOk>(res.bytes()) {
            Ok(Ok(ok)) => Ok(Reply::Written(
                ok.count,
                super::Stability::from_wire(ok.committed as u32),
                ok.verf,
            )),
            Ok(Err(status)) => Err(PartError::Status3(status)),
            Err(e) => Err(malformed(&e)),
        },
    }
}
