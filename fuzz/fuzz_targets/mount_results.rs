//! MOUNT v3 and portmap v2 result decoders; the first byte picks the decoder.
#![no_main]

use dbio_nfs_proto::{mount3, portmap};
use dbio_xdr::XdrDecode;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, b)) = data.split_first() else {
        return;
    };
    match which % 5 {
        0 => drop(mount3::decode_mnt(b)),
        1 => drop(mount3::MountList::from_xdr(b)),
        2 => drop(mount3::Exports::from_xdr(b)),
        3 => drop(portmap::MappingList::from_xdr(b)),
        _ => drop(portmap::decode_getport(b)),
    }
});
