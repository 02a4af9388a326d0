//! Pieces of a scripted NFSv4.1 server on loopback (tests that need replies ganesha
//! never sends): the session's own operations answered as a server would.

use bytes::BufMut;
use dbio_nfs::proto::nfs4::{
    encode_compound_header, encode_resop_status, ChannelAttrs, CreateSessionOk, Nfsstat4, Opnum,
    RdmaIrd,
};
use dbio_xdr::{XdrEncode, XdrPut};

/// The session id every scripted CREATE_SESSION grants.
pub const SID: [u8; 16] = *b"dbio-test-sessio";

pub fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}

/// Answers a COMPOUND whose first op is `op` when that op sets the session up or tears
/// it down (EXCHANGE_ID, CREATE_SESSION with 8 slots, DESTROY_SESSION,
/// DESTROY_CLIENTID); false for any other op, leaving `out` as it was.
pub fn answer_session_op(op: u32, out: &mut Vec<u8>) -> bool {
    let ok = Nfsstat4::Ok;
    match op {
        42 => {
            encode_compound_header(out, ok, b"", 1);
            encode_resop_status(out, Opnum::ExchangeId, ok);
            out.put_u64(7); // clientid
            out.put_u32(1); // sequenceid
            out.put_u32(0); // flags
            out.put_u32(0); // SP4_NONE
            out.put_u64(0); // server owner minor id
            out.put_opaque(b"srv");
            out.put_opaque(b"scope");
            out.put_u32(0); // no impl id
        }
        43 => {
            encode_compound_header(out, ok, b"", 1);
            encode_resop_status(out, Opnum::CreateSession, ok);
            let fore = ChannelAttrs {
                headerpadsize: 0,
                maxrequestsize: 1 << 20,
                maxresponsesize: 1 << 20,
                maxresponsesize_cached: 8192,
                maxoperations: 16,
                maxrequests: 8,
                rdma_ird: RdmaIrd(None),
            };
            CreateSessionOk {
                sessionid: SID,
                sequence: 1,
                flags: 0,
                fore,
                back: fore,
            }
            .encode(out);
        }
        44 | 57 => {
            encode_compound_header(out, ok, b"", 1);
            encode_resop_status(out, Opnum::from_u32(op).unwrap(), ok);
        }
        _ => return false,
    }
    true
}
