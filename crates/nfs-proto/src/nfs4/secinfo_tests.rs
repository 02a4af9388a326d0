//! SECINFO: the flavours a server accepts, by number, and the Kerberos OID in both
//! the forms servers send.

use super::tests::words;
use super::*;
use dbio_xdr::XdrEncode;

#[test]
fn secinfo_lists_flavours_by_number() {
    // COMPOUND OK, empty tag, 2 results: PUTROOTFH OK, SECINFO OK with
    // [RPCSEC_GSS krb5 integrity, RPCSEC_GSS krb5 privacy, AUTH_SYS].
    let mut w = vec![0, 0, 2, 24, 0, 33, 0, 3];
    for service in [2u32, 3] {
        w.extend([6, 11]);
        w.extend([0x0609_2a86, 0x4886_f712, 0x0102_0200]);
        w.extend([0, service]);
    }
    w.push(1);
    let b = words(&w);
    let r = decode_compound(&b).unwrap();
    assert_eq!(r.results[1], OpResult::Secinfo(vec![390_004, 390_005, 1]));
    // Another mechanism is named as unknown; a bad service is an error.
    let mut other = w.clone();
    other[10] = 0x0609_2a86 ^ 1;
    let b = words(&other);
    let r = decode_compound(&b).unwrap();
    assert_eq!(r.results[1], OpResult::Secinfo(vec![u32::MAX, 390_005, 1]));
    // Without the DER tag and length, as ganesha sends it.
    let mut bare = vec![0, 0, 2, 24, 0, 33, 0, 1, 6, 9];
    bare.extend([0x2a86_4886, 0xf712_0102, 0x0200_0000, 0, 1]);
    let b = words(&bare);
    let r = decode_compound(&b).unwrap();
    assert_eq!(r.results[1], OpResult::Secinfo(vec![390_003]));
    let mut bad = w.clone();
    bad[14] = 9;
    assert!(decode_compound(&words(&bad)).is_err());
    // The arguments: SECINFO with its name.
    let mut out = Vec::new();
    ArgOp::Secinfo("all".into()).encode(&mut out);
    assert_eq!(out, words(&[33, 3, 0x616c_6c00]));
}
