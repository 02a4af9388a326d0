//! NFSv3's table for a data path ([`Handles`], a [`Seam`]): READ and WRITE calls and
//! their replies, on no session slots.

use bytes::Bytes;
use dbio_rpc::conn::CallBuf;
use dbio_xdr::XdrEncode;

use super::error::{BusyStatus, PartError};
use super::seam::{Dir, Io, PartReply as Reply, Seam, SlotIndex};
use crate::channel::Results;
use crate::client::{is_jukebox, read_reply_hint};
use crate::kinds::LongRead;
use crate::kinds::Stable as Stability;
use crate::proto::nfs3::{
    decode_res, Data, FileHandle, Proc, ReadArgs, ReadOk, StableHow, WriteArgs, WriteOk,
};
use crate::router::Router;

pub type Handle = FileHandle;
pub const READ: &str = "READ";
pub const WRITE: &str = "WRITE";

/// The files of an NFSv3 data path: their handles.
#[derive(Default)]
pub(crate) struct Handles(Vec<Handle>);

impl Seam for Handles {
    fn procs(&self) -> (&'static str, &'static str) {
        (READ, WRITE)
    }
    fn files(&self) -> usize {
        self.0.len()
    }
    fn add_file(&mut self, handle: &[u8]) -> bool {
        FileHandle::new(handle).map(|h| self.0.push(h)).is_some()
    }
    fn call(
        &mut self,
        router: &Router,
        io: &Io,
        (offset, len): (u64, u32),
        data: Bytes,
        _again: Option<SlotIndex>,
    ) -> Option<(CallBuf, SlotIndex)> {
        let fh = &self.0[io.file.0 as usize];
        let call = match io.dir {
            Dir::Read => read_call(router, fh, offset, len),
            Dir::Write => write_call(router, fh, offset, data, io.stable),
        };
        Some((call, 0))
    }
    fn decode(
        &mut self,
        _index: SlotIndex,
        dir: Dir,
        record: Bytes,
        want: u32,
    ) -> Result<Reply, PartError> {
        decode(dir, record, want)
    }
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
                Stability::from_wire(ok.committed as u32),
                ok.verf,
            )),
            Ok(Err(status)) => Err(PartError::Status3(status)),
            Err(e) => Err(malformed(&e)),
        },
    }
}
