//! Back-channel vectors computed by hand from RFC 8881's XDR.

use super::*;
use dbio_xdr::{XdrEncode, XdrError};

fn words(ws: &[u32]) -> Vec<u8> {
    ws.iter().flat_map(|w| w.to_be_bytes()).collect()
}

const SID: SessionId = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];
const SID_WORDS: [u32; 4] = [0x01020304, 0x05060708, 0x090a0b0c, 0x0d0e0f10];

/// CB_SEQUENCE (one referring call) + CB_LAYOUTRECALL of a file range.
fn recall_call() -> Vec<u8> {
    let mut w = vec![0, 1, 7, 2]; // tag "", minorversion 1, callback_ident 7, 2 ops
    w.push(11); // OP_CB_SEQUENCE
    w.extend(SID_WORDS);
    w.extend([1, 0, 0, 0]); // sequenceid, slotid, highest_slotid, cachethis
    w.push(1); // one referring_call_list4
    w.extend(SID_WORDS);
    w.extend([1, 5, 3]); // one referring_call4: sequenceid 5, slot 3
    w.extend([5, 1, 3, 1]); // OP_CB_LAYOUTRECALL, files, LAYOUTIOMODE4_ANY, changed
    w.extend([1, 4, 0x61626364]); // LAYOUTRECALL4_FILE, nfs_fh4 "abcd"
    w.extend([0, 0, 0xffff_ffff, 0xffff_ffff]); // offset 0, length: to the end
    w.extend([2, 0, 0, 0]); // stateid
    words(&w)
}

#[test]
fn decode_layout_recall() {
    let b = recall_call();
    let c = decode_cb_compound(&b).unwrap();
    assert_eq!((c.minorversion, c.callback_ident, c.ops.len()), (1, 7, 2));
    assert_eq!(
        c.ops[0],
        CbOp::Sequence {
            sessionid: SID,
            sequenceid: 1,
            slotid: 0,
            highest_slotid: 0,
            cachethis: false,
            referring: vec![ReferringCalls {
                sessionid: SID,
                calls: vec![(5, 3)]
            }],
        }
    );
    assert_eq!(
        c.ops[1],
        CbOp::LayoutRecall {
            layout_type: LayoutType::NfsV41Files,
            iomode: LayoutIomode::Any,
            changed: true,
            recall: LayoutRecall::File {
                fh: Fh4::new(b"abcd").unwrap(),
                offset: 0,
                length: u64::MAX,
                stateid: Stateid {
                    seqid: 2,
                    other: [0; 12]
                },
            },
        }
    );
    for n in 0..b.len() {
        assert!(decode_cb_compound(&b[..n]).is_err(), "prefix of {n} bytes");
    }
}

#[test]
fn other_recalls_and_unsupported_ops() {
    // CB_LAYOUTRECALL of a file system and of everything; CB_RECALL of a delegation.
    let b = words(&[
        0, 1, 0, 3, //
        5, 1, 1, 0, 2, 0, 9, 0, 10, // LAYOUTRECALL4_FSID {9, 10}
        5, 1, 2, 0, 3, // LAYOUTRECALL4_ALL
        4, 1, 0, 0, 0, 1, 2, 0xaabb0000, // CB_RECALL: stateid, truncate, fh
    ]);
    let c = decode_cb_compound(&b).unwrap();
    assert!(matches!(
        c.ops[0],
        CbOp::LayoutRecall {
            recall: LayoutRecall::Fsid(Fsid {
                major: 9,
                minor: 10
            }),
            ..
        }
    ));
    assert!(matches!(
        c.ops[1],
        CbOp::LayoutRecall {
            recall: LayoutRecall::All,
            iomode: LayoutIomode::Rw,
            changed: false,
            ..
        }
    ));
    assert!(
        matches!(&c.ops[2], CbOp::Recall { truncate: true, fh, .. } if fh.as_bytes() == [0xaa, 0xbb])
    );
    // An op not decoded ends the decoding (its arguments cannot be skipped).
    let b = words(&[0, 1, 0, 2, 6, 0xdead_beef, 0xdead_beef]);
    let c = decode_cb_compound(&b).unwrap();
    assert_eq!(c.ops, [CbOp::Unsupported(cb_op::NOTIFY)]);
    // Hostile counts and discriminants.
    assert!(matches!(
        decode_cb_compound(&words(&[0, 1, 0, 0xffff_ffff])),
        Err(XdrError::TooLong { .. })
    ));
    assert!(matches!(
        decode_cb_compound(&words(&[0, 1, 0, 100, 11])),
        Err(XdrError::Truncated { .. })
    ));
    assert!(matches!(
        decode_cb_compound(&words(&[0, 1, 0, 1, 5, 1, 1, 0, 4])),
        Err(XdrError::BadDiscriminant { value: 4, .. })
    ));
    let mut w = vec![0, 1, 0, 1, 11];
    w.extend(SID_WORDS);
    w.extend([1, 0, 0, 0, 0x00ff_ffff]);
    assert!(decode_cb_compound(&words(&w)).is_err());
}

#[test]
fn encode_reply() {
    let mut out = Vec::new();
    encode_cb_compound_res(
        &mut out,
        b"",
        &[
            CbResult::Sequence {
                sessionid: SID,
                sequenceid: 1,
                slotid: 0,
                highest_slotid: 0,
                target_highest_slotid: 0,
            },
            CbResult::Status(cb_op::LAYOUTRECALL, Nfsstat4::NomatchingLayout),
        ],
    );
    let mut want = vec![10060, 0, 2, 11, 0];
    want.extend(SID_WORDS);
    want.extend([1, 0, 0, 0, 5, 10060]);
    assert_eq!(out, words(&want));
    // A reply of only CB_SEQUENCE is NFS4_OK.
    let r = CbResult::Status(cb_op::SEQUENCE, Nfsstat4::Ok);
    assert_eq!(r.to_xdr(), words(&[11, 0]));
}

fn every_op() -> Vec<CbOp> {
    vec![
        CbOp::Sequence {
            sessionid: SID,
            sequenceid: 9,
            slotid: 2,
            highest_slotid: 3,
            cachethis: true,
            referring: vec![ReferringCalls {
                sessionid: SID,
                calls: vec![(5, 3), (6, 1)],
            }],
        },
        CbOp::LayoutRecall {
            layout_type: LayoutType::NfsV41Files,
            iomode: LayoutIomode::Rw,
            changed: true,
            recall: LayoutRecall::File {
                fh: Fh4::new(b"handle").unwrap(),
                offset: 4096,
                length: u64::MAX,
                stateid: Stateid {
                    seqid: 3,
                    other: [7; 12],
                },
            },
        },
        CbOp::LayoutRecall {
            layout_type: LayoutType::NfsV41Files,
            iomode: LayoutIomode::Any,
            changed: false,
            recall: LayoutRecall::Fsid(Fsid { major: 1, minor: 2 }),
        },
        CbOp::Recall {
            stateid: Stateid {
                seqid: 1,
                other: [1; 12],
            },
            truncate: false,
            fh: Fh4::new(b"f").unwrap(),
        },
        CbOp::NotifyDeviceid(vec![
            DeviceNotice {
                layout_type: LayoutType::NfsV41Files,
                deviceid: [4; 16],
                change: Some(true),
            },
            DeviceNotice {
                layout_type: LayoutType::NfsV41Files,
                deviceid: [5; 16],
                change: None,
            },
        ]),
        CbOp::RecallAny {
            keep: 0,
            mask: Bitmap4::from_bits(&[recall_any::WDATA_DLG, recall_any::FILE_LAYOUT]),
        },
    ]
}

/// Every op the codec knows goes through encode and decode unchanged, and every
/// prefix of the call is an error, never a panic.
#[test]
fn every_op_round_trips_and_truncation_is_an_error() {
    let ops = every_op();
    let mut b = Vec::new();
    encode_cb_compound(&mut b, b"cb", 42, &ops);
    let c = decode_cb_compound(&b).unwrap();
    assert_eq!(
        (c.tag.0, c.minorversion, c.callback_ident),
        (&b"cb"[..], 1, 42)
    );
    assert_eq!(c.ops, ops);
    for n in 0..b.len() {
        assert!(decode_cb_compound(&b[..n]).is_err(), "prefix of {n} bytes");
    }
}

/// CB_NOTIFY_DEVICEID by hand: one notify4 with both bits carries the CHANGE entry
/// first (ascending bit order); a bit the codec does not know, or values left over,
/// are errors.
#[test]
fn notify_deviceid_from_the_wire() {
    let dev = [0x0a0a_0a0a_u32; 4];
    let mut w = vec![0, 1, 0, 1, 14, 1]; // CB_NOTIFY_DEVICEID, one notify4
    w.extend([1, 0b110, 4 * (1 + 4 + 1 + 1 + 4)]); // mask {CHANGE, DELETE}, 44 bytes
    w.push(1); // files
    w.extend(dev);
    w.extend([0, 1]); // not immediate; DELETE: files
    w.extend(dev);
    let b = words(&w);
    let c = decode_cb_compound(&b).unwrap();
    let CbOp::NotifyDeviceid(n) = &c.ops[0] else {
        panic!("{:?}", c.ops)
    };
    assert_eq!(n.len(), 2);
    assert_eq!((n[0].change, n[1].change), (Some(false), None));
    assert_eq!(n[1].deviceid, [0x0a; 16]);
    // Bit 3 is not a notify_deviceid_type4.
    let bad = words(&[0, 1, 0, 1, 14, 1, 1, 0b1000, 0]);
    assert!(matches!(
        decode_cb_compound(&bad),
        Err(XdrError::BadDiscriminant { value: 3, .. })
    ));
    // A DELETE whose values run on past its entry.
    let mut w = vec![0, 1, 0, 1, 14, 1, 1, 0b100, 4 * 6, 1];
    w.extend(dev);
    w.push(0);
    assert!(decode_cb_compound(&words(&w)).is_err());
    // Hostile counts: notices and value bytes beyond the bounds.
    assert!(decode_cb_compound(&words(&[0, 1, 0, 1, 14, 0xffff_ffff])).is_err());
    assert!(decode_cb_compound(&words(&[0, 1, 0, 1, 14, 1, 1, 2, 0x7fff_ffff])).is_err());
}

#[test]
fn recall_any_from_the_wire() {
    let b = words(&[0, 1, 0, 1, 8, 5, 1, 0x102]);
    let c = decode_cb_compound(&b).unwrap();
    assert_eq!(
        c.ops,
        [CbOp::RecallAny {
            keep: 5,
            mask: Bitmap4::from_bits(&[1, 8])
        }]
    );
    assert!(decode_cb_compound(&words(&[0, 1, 0, 1, 8, 5, 9])).is_err());
}

/// A reply the client encodes reads back the same (status, tag, results); its
/// prefixes are errors.
#[test]
fn replies_round_trip() {
    let results = [
        CbResult::Sequence {
            sessionid: SID,
            sequenceid: 2,
            slotid: 1,
            highest_slotid: 1,
            target_highest_slotid: 3,
        },
        CbResult::Status(cb_op::NOTIFY_DEVICEID, Nfsstat4::Ok),
        CbResult::Status(cb_op::RECALL_ANY, Nfsstat4::Ok),
        CbResult::Status(cb_op::NOTIFY, Nfsstat4::Notsupp),
    ];
    let mut b = Vec::new();
    encode_cb_compound_res(&mut b, b"t", &results);
    let r = decode_cb_compound_res(&b).unwrap();
    assert_eq!(r.status, Nfsstat4::Notsupp);
    assert_eq!(r.tag.0, b"t");
    assert_eq!(r.results, results);
    for n in 0..b.len() {
        assert!(
            decode_cb_compound_res(&b[..n]).is_err(),
            "prefix of {n} bytes"
        );
    }
}
