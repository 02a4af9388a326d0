//! Byte-exact vectors computed by hand from RFC 8881's XDR, round trips, truncation and
//! hostile lengths.

use super::*;
use dbio_xdr::{BufMut, XdrDecode, XdrEncode, XdrError, XdrPut};

use super::layout_tests::{device_reply, file_layout, layout_reply};

/// Big-endian words to bytes (vectors are written as XDR words).
pub(super) fn words(ws: &[u32]) -> Vec<u8> {
    ws.iter().flat_map(|w| w.to_be_bytes()).collect()
}

pub(super) const SID: SessionId = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];
pub(super) const SID_WORDS: [u32; 4] = [0x01020304, 0x05060708, 0x090a0b0c, 0x0d0e0f10];

#[test]
fn sequence_putrootfh_getattr_bytes() {
    let c = Compound::new("t", 1)
        .sequence(SID, 7, 0, 0, false)
        .putrootfh()
        .getattr(Bitmap4::from_bits(&[bit::TYPE, bit::SIZE]));
    let mut want = vec![
        1,
        0x7400_0000, // tag "t" + 3 bytes padding
        1,           // minorversion
        3,           // 3 ops
        53,          // OP_SEQUENCE
    ];
    want.extend(SID_WORDS); // sessionid4 (16 fixed bytes)
    want.extend([7, 0, 0, 0]); // sequenceid, slotid, highest_slotid, cachethis=false
    want.extend([24]); // OP_PUTROOTFH (void)
    want.extend([9, 1, 0x12]); // OP_GETATTR, bitmap4<1> = bits 1 (type) and 4 (size)
    assert_eq!(c.to_xdr(), words(&want));
    assert_eq!(
        c.opnums().collect::<Vec<_>>(),
        [Opnum::Sequence, Opnum::Putrootfh, Opnum::Getattr]
    );
}

#[test]
fn putfh_read_write_commit_bytes() {
    let fh = Fh4::new(&[0xaa, 0xbb, 0xcc, 0xdd, 0xee]).unwrap();
    let st = Stateid {
        seqid: 2,
        other: [0x11; 12],
    };
    let c = Compound::new("", 1)
        .putfh(fh)
        .read(st, 0x1_0000_2000, 8192)
        .write(Stateid::CURRENT, 4096, StableHow::FileSync, b"abcde")
        .commit(0, 0);
    let want = words(&[
        0, // empty tag
        1,
        4,
        22, // OP_PUTFH
        5,
        0xaabbccdd,
        0xee00_0000, // nfs_fh4<> of 5 bytes, padded
        25,          // OP_READ
        2,
        0x11111111,
        0x11111111,
        0x11111111, // stateid4
        1,
        0x2000, // offset4 0x1_0000_2000
        8192,   // count4
        38,     // OP_WRITE
        1,
        0,
        0,
        0, // current stateid: seqid 1, other 0
        0,
        4096, // offset
        2,    // FILE_SYNC4
        5,
        0x61626364,
        0x6500_0000, // data<> "abcde" padded
        5,           // OP_COMMIT
        0,
        0, // offset
        0, // count
    ]);
    assert_eq!(c.to_xdr(), want);
}

#[test]
fn write_last_leaves_payload_out() {
    let data = vec![7u8; 10];
    let c = Compound::new("w", 1)
        .sequence(SID, 1, 0, 0, false)
        .putfh(Fh4::new(&[1, 2, 3, 4]).unwrap())
        .write(Stateid::ANONYMOUS, 0, StableHow::Unstable, &data);
    let mut head = Vec::new();
    let payload = c.encode_head(&mut head);
    assert_eq!(payload, &data[..]);
    head.put_slice(payload);
    head.put_slice(&dbio_xdr::PAD[..dbio_xdr::padding(payload.len())]);
    assert_eq!(head, c.to_xdr());
    // Without a trailing WRITE the encoding is complete.
    let c = Compound::new("", 1).putrootfh().getfh();
    let mut out = Vec::new();
    assert!(c.encode_head(&mut out).is_empty());
    assert_eq!(out, c.to_xdr());
}

#[test]
fn open_guarded_create_bytes() {
    let c = Compound::new("", 1).op(ArgOp::Open {
        seqid: 0,
        share_access: share::ACCESS_BOTH | share::ACCESS_WANT_NO_DELEG,
        share_deny: share::DENY_NONE,
        clientid: 0x0102030405060708,
        owner: b"own",
        how: OpenHow::Guarded(SetAttrs {
            size: None,
            mode: Some(0o600),
            ..SetAttrs::NONE
        }),
        claim: OpenClaim::Null("f".into()),
    });
    let want = words(&[
        0,
        1,
        1,
        18,     // tag, minorversion, 1 op, OP_OPEN
        0,      // seqid
        0x0403, // share_access BOTH | WANT_NO_DELEG
        0,      // share_deny NONE
        0x01020304,
        0x05060708, // open_owner4.clientid
        3,
        0x6f776e00, // owner<> "own"
        1,          // OPEN4_CREATE
        1,          // GUARDED4
        2,
        0,
        2, // fattr4 bitmap: word 1 bit 1 = attribute 33 (mode)
        4,
        0o600, // attrlist4<> of 4 bytes: mode
        0,     // CLAIM_NULL
        1,
        0x6600_0000, // component4 "f"
    ]);
    assert_eq!(c.to_xdr(), want);

    let c = Compound::new("", 1).op(ArgOp::Open {
        seqid: 0,
        share_access: share::ACCESS_READ,
        share_deny: share::DENY_NONE,
        clientid: 9,
        owner: b"",
        how: OpenHow::NoCreate,
        claim: OpenClaim::Fh,
    });
    assert_eq!(c.to_xdr(), words(&[0, 1, 1, 18, 0, 1, 0, 0, 9, 0, 0, 4]));

    // CLAIM_PREVIOUS (1) with OPEN_DELEGATE_NONE: the reclaim after a server restart.
    let c = Compound::new("", 1).op(ArgOp::Open {
        seqid: 0,
        share_access: share::ACCESS_READ,
        share_deny: share::DENY_NONE,
        clientid: 9,
        owner: b"",
        how: OpenHow::NoCreate,
        claim: OpenClaim::Previous(0),
    });
    assert_eq!(c.to_xdr(), words(&[0, 1, 1, 18, 0, 1, 0, 0, 9, 0, 0, 1, 0]));

    let c = Compound::new("", 1).op(ArgOp::Open {
        seqid: 0,
        share_access: share::ACCESS_WRITE,
        share_deny: share::DENY_NONE,
        clientid: 0,
        owner: b"",
        how: OpenHow::Exclusive41([0xab; 8], SetAttrs::NONE),
        claim: OpenClaim::Fh,
    });
    let want = words(&[
        0, 1, 1, 18, 0, 2, 0, 0, 0, 0, //
        1, 3, // OPEN4_CREATE, EXCLUSIVE4_1
        0xabababab, 0xabababab, // verifier4
        0, 0, // empty fattr4: bitmap4<0>, attrlist4<0>
        4, // CLAIM_FH
    ]);
    assert_eq!(c.to_xdr(), want);
}

#[test]
fn exchange_id_create_session_bytes() {
    let c = Compound::new("", 1).op(ArgOp::ExchangeId {
        verifier: [0; 8],
        owner: b"dbio",
        flags: exchgid::USE_PNFS_MDS | exchgid::USE_NON_PNFS,
        impl_id: None,
    });
    let want = words(&[
        0,
        1,
        1,
        42, // OP_EXCHANGE_ID
        0,
        0, // co_verifier
        4,
        0x6462696f,  // co_ownerid "dbio"
        0x0003_0000, // eia_flags
        0,           // SP4_NONE
        0,           // eia_client_impl_id<1>: none
    ]);
    assert_eq!(c.to_xdr(), want);

    let attrs = ChannelAttrs {
        headerpadsize: 0,
        maxrequestsize: 1 << 20,
        maxresponsesize: 1 << 20,
        maxresponsesize_cached: 4096,
        maxoperations: 16,
        maxrequests: 64,
        rdma_ird: RdmaIrd(None),
    };
    let c = Compound::new("", 1).op(ArgOp::CreateSession {
        clientid: 5,
        sequence: 1,
        flags: 0,
        fore: attrs,
        back: attrs,
        cb_program: 0x40000000,
        sec: CallbackSec::None,
    });
    let mut want = vec![0, 1, 1, 43, 0, 5, 1, 0];
    let ca = [0, 1 << 20, 1 << 20, 4096, 16, 64, 0]; // channel_attrs4, ca_rdma_ird<0>
    want.extend(ca);
    want.extend(ca);
    want.extend([0x40000000, 1, 0]); // cb_program, one callback_sec_parms4: AUTH_NONE
    assert_eq!(c.to_xdr(), words(&want));
}

#[test]
fn pnfs_args_bytes() {
    let st = Stateid {
        seqid: 1,
        other: [0; 12],
    };
    let c = Compound::new("", 1).op(ArgOp::Layoutget {
        signal_layout_avail: false,
        layout_type: LayoutType::NfsV41Files,
        iomode: LayoutIomode::Rw,
        offset: 0,
        length: u64::MAX,
        minlength: 0,
        stateid: st,
        maxcount: 4096,
    });
    let want = words(&[
        0, 1, 1, 50, // OP_LAYOUTGET
        0, 1, 2, // signal, LAYOUT4_NFSV4_1_FILES, LAYOUTIOMODE4_RW
        0, 0, // offset
        0xffffffff, 0xffffffff, // length: whole file
        0, 0, // minlength
        1, 0, 0, 0, // stateid
        4096,
    ]);
    assert_eq!(c.to_xdr(), want);

    let c = Compound::new("", 1)
        .op(ArgOp::Getdeviceinfo {
            deviceid: SID,
            layout_type: LayoutType::NfsV41Files,
            maxcount: 0,
            notify_types: Bitmap4::new(),
        })
        .op(ArgOp::Layoutreturn {
            reclaim: false,
            layout_type: LayoutType::NfsV41Files,
            iomode: LayoutIomode::Any,
            how: LayoutReturn::File {
                offset: 0,
                length: 8,
                stateid: st,
                body: &[],
            },
        })
        .op(ArgOp::Layoutcommit {
            offset: 0,
            length: 8,
            reclaim: false,
            stateid: st,
            last_write_offset: Some(7),
            time_modify: None,
            layout_type: LayoutType::NfsV41Files,
            body: &[],
        });
    let mut want = vec![0, 1, 3, 47];
    want.extend(SID_WORDS);
    want.extend([1, 0, 0]); // files, maxcount 0, empty notify bitmap
    want.extend([51, 0, 1, 3, 1, 0, 0, 0, 8, 1, 0, 0, 0, 0]); // LAYOUTRETURN4_FILE
    want.extend([49, 0, 0, 0, 8, 0, 1, 0, 0, 0]); // LAYOUTCOMMIT: range, reclaim, stateid
    want.extend([1, 0, 7, 0, 1, 0]); // newoffset present 7, no time, layoutupdate4 files + body<0>
    assert_eq!(c.to_xdr(), words(&want));
}

#[test]
fn other_ops_bytes() {
    let c = Compound::new("", 1)
        .lookup("ab")
        .getfh()
        .access(access::READ | access::MODIFY)
        .setattr(
            Stateid::ANONYMOUS,
            SetAttrs {
                size: Some(1 << 32),
                mode: Some(0o644),
                ..SetAttrs::NONE
            },
        )
        .remove("x")
        .savefh()
        .rename("a", "b")
        .mkdir("d", SetAttrs::NONE)
        .readdir(0, [0; 8], 4096, 8192, Bitmap4::from_bits(&[bit::TYPE]))
        .close(0, Stateid::CURRENT)
        .delegreturn(Stateid::CURRENT)
        .reclaim_complete(false)
        .destroy_session(SID)
        .bind_conn_to_session(SID, chan_dir::FORE_OR_BOTH)
        .destroy_clientid(3);
    let mut want = vec![0, 1, 15];
    want.extend([15, 2, 0x61620000]); // LOOKUP "ab"
    want.extend([10]); // GETFH
    want.extend([3, 5]); // ACCESS READ|MODIFY
    want.extend([34, 0, 0, 0, 0]); // SETATTR, anonymous stateid
    want.extend([2, 0x10, 2, 12, 1, 0, 0o644]); // bits 4 and 33; size 1<<32, mode
    want.extend([28, 1, 0x78000000]); // REMOVE "x"
    want.extend([32]); // SAVEFH
    want.extend([29, 1, 0x61000000, 1, 0x62000000]); // RENAME a b
    want.extend([6, 2, 1, 0x64000000, 0, 0]); // CREATE NF4DIR "d", empty fattr4
    want.extend([26, 0, 0, 0, 0, 4096, 8192, 1, 2]); // READDIR
    want.extend([4, 0, 1, 0, 0, 0]); // CLOSE seqid 0, current stateid
    want.extend([8, 1, 0, 0, 0]); // DELEGRETURN, current stateid
    want.extend([58, 0]); // RECLAIM_COMPLETE one_fs=false
    want.push(44);
    want.extend(SID_WORDS); // DESTROY_SESSION
    want.push(41);
    want.extend(SID_WORDS);
    want.extend([3, 0]); // BIND_CONN_TO_SESSION: CDFC4_FORE_OR_BOTH, no RDMA
    want.extend([57, 0, 3]); // DESTROY_CLIENTID
    assert_eq!(c.to_xdr(), words(&want));
}

/// SEQUENCE, PUTROOTFH, GETATTR(type, change, size, fileid, mode) all OK.
fn getattr_reply() -> Vec<u8> {
    let mut w = vec![0, 1, 0x74000000, 3]; // NFS4_OK, tag "t", 3 results
    w.extend([53, 0]);
    w.extend(SID_WORDS);
    w.extend([7, 0, 63, 31, 0]); // seqid, slot, highest 63, target 31, flags
    w.extend([24, 0]); // PUTROOTFH OK
    w.extend([9, 0]); // GETATTR OK
    w.extend([2, (1 << 1) | (1 << 3) | (1 << 4) | (1 << 20), 1 << 1]); // bits 1,3,4,20,33
    w.extend([36]); // attrlist4 length: 4 + 8 + 8 + 8 + 4 + ... (type,change,size,fileid,mode)
    w.extend([2]); // type NF4DIR
    w.extend([0, 99]); // change
    w.extend([0, 4096]); // size
    w.extend([0, 2]); // fileid
    w.extend([0o755]); // mode
    let mut b = words(&w);
    // Fix the length word: 4 + 8 + 8 + 8 + 4 = 32 bytes.
    let len_at = (4 + 2 + 4 + 5 + 2 + 2 + 3) * 4;
    b[len_at..len_at + 4].copy_from_slice(&32u32.to_be_bytes());
    b
}

#[test]
fn decode_getattr_reply() {
    let b = getattr_reply();
    let r = decode_compound(&b).unwrap();
    assert_eq!(r.status, Nfsstat4::Ok);
    assert_eq!(r.tag.0, b"t");
    assert!(r.failure.is_none());
    let res = r.into_results().unwrap();
    assert_eq!(res.len(), 3);
    match &res[0] {
        OpResult::Sequence(s) => {
            assert_eq!(s.sessionid, SID);
            assert_eq!(
                (s.sequenceid, s.highest_slotid, s.target_highest_slotid),
                (7, 63, 31)
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(res[1], OpResult::Putrootfh);
    let OpResult::Getattr(a) = &res[2] else {
        panic!("{:?}", res[2])
    };
    assert_eq!(a.ftype, Some(Ftype4::Dir));
    assert_eq!(a.change, Some(99));
    assert_eq!(a.size, Some(4096));
    assert_eq!(a.fileid, Some(2));
    assert_eq!(a.mode, Some(0o755));
    assert_eq!(a.owner, None);
}

#[test]
fn truncation_at_every_offset_is_an_error() {
    for b in [
        getattr_reply(),
        open_fail_reply(),
        layout_reply(),
        device_reply(),
    ] {
        for n in 0..b.len() {
            assert!(
                decode_compound(&b[..n]).is_err(),
                "prefix of {n} bytes accepted"
            );
        }
        assert!(decode_compound(&b).is_ok());
    }
}

/// SEQUENCE OK, PUTFH OK, OPEN NFS4ERR_GRACE.
fn open_fail_reply() -> Vec<u8> {
    let mut w = vec![10013, 0, 3, 53, 0];
    w.extend(SID_WORDS);
    w.extend([1, 0, 0, 0, 0]);
    w.extend([22, 0, 18, 10013]);
    words(&w)
}

#[test]
fn failure_names_op_and_status() {
    let b = open_fail_reply();
    let r = decode_compound(&b).unwrap();
    assert_eq!(r.status, Nfsstat4::Grace);
    assert_eq!(r.results.len(), 2);
    let f = r.failure.unwrap();
    assert_eq!((f.index, f.op, f.status), (2, Opnum::Open, Nfsstat4::Grace));
    assert_eq!(
        f.to_string(),
        "OPEN (op 3 of the COMPOUND) failed: NFS4ERR_GRACE"
    );
    assert!(f.status.is_retryable());
    // Bytes after the failing op are not looked at.
    let mut b = open_fail_reply();
    b.extend([0xff; 8]);
    assert_eq!(decode_compound(&b).unwrap().failure, Some(f));

    // SETATTR carries its bitmap on failure; LAYOUTGET and GETDEVICEINFO carry extras.
    let b = words(&[10004, 0, 1, 34, 10032, 0]);
    let f = decode_compound(&b).unwrap().failure.unwrap();
    assert_eq!(f.status, Nfsstat4::Attrnotsupp);
    let b = words(&[10058, 0, 1, 50, 10058, 1]);
    let f = decode_compound(&b).unwrap().failure.unwrap();
    assert_eq!(f.will_signal_layout_avail, Some(true));
    let b = words(&[10005, 0, 1, 47, 10005, 300]);
    let f = decode_compound(&b).unwrap().failure.unwrap();
    assert_eq!(f.mincount, Some(300));
    let b = words(&[10059, 0, 1, 50, 10059]);
    let f = decode_compound(&b).unwrap().failure.unwrap();
    assert_eq!(f.status.to_string(), "NFS4ERR_LAYOUTUNAVAILABLE");
}

#[test]
fn results_checked_against_request() {
    let b = open_fail_reply();
    let r = decode_compound(&b).unwrap();
    let sent = [Opnum::Sequence, Opnum::Putfh, Opnum::Open, Opnum::Getfh];
    assert_eq!(r.check_ops(sent), Ok(()));
    let e = r
        .check_ops([Opnum::Sequence, Opnum::Putrootfh, Opnum::Open])
        .unwrap_err();
    assert_eq!(
        (e.index, e.sent, e.got),
        (1, Some(Opnum::Putrootfh), Some(Opnum::Putfh))
    );
    assert!(r.check_ops([Opnum::Sequence]).is_err());
    // Without a failure, every op sent must be answered.
    let b = getattr_reply();
    let r = decode_compound(&b).unwrap();
    let sent = [Opnum::Sequence, Opnum::Putrootfh, Opnum::Getattr];
    assert_eq!(r.check_ops(sent), Ok(()));
    let e = r
        .check_ops(sent.into_iter().chain([Opnum::Getfh]))
        .unwrap_err();
    assert_eq!((e.index, e.sent, e.got), (3, Some(Opnum::Getfh), None));
    assert_eq!(
        e.to_string(),
        "COMPOUND reply does not match the request at op 4: sent GETFH, answered nothing"
    );
}

#[test]
fn readdir_entries_stay_small() {
    // An entry takes at least 28 bytes on the wire (value_follows, cookie, empty name,
    // empty bitmap, empty attrlist); decoded it must not be many times that.
    assert!(std::mem::size_of::<DirEntry>() <= 3 * 28);
    let mut w = vec![0, 0, 1, 26, 0, 0, 0];
    for i in 0..1000 {
        w.extend([1, 0, i, 0, 0, 0]);
    }
    w.extend([0, 1]);
    let b = words(&w);
    let r = decode_compound(&b).unwrap();
    let OpResult::Readdir(rd) = &r.results[0] else {
        panic!()
    };
    assert_eq!(rd.entries.len(), 1000);
    assert_eq!(rd.entries[999].cookie, 999);
    // Attributes of an entry are checked while decoding: a bit not decoded is an error.
    let b = words(&[0, 0, 1, 26, 0, 0, 0, 1, 0, 1, 0, 1, 1 << 12, 0, 0, 1]);
    assert!(matches!(
        decode_compound(&b),
        Err(XdrError::BadDiscriminant { value: 12, .. })
    ));
}

#[test]
fn status_names() {
    for (s, n) in [
        (Nfsstat4::Delay, "NFS4ERR_DELAY"),
        (Nfsstat4::Badsession, "NFS4ERR_BADSESSION"),
        (Nfsstat4::Badlayout, "NFS4ERR_BADLAYOUT"),
        (Nfsstat4::Ok, "NFS4_OK"),
    ] {
        assert_eq!(s.to_string(), n);
        assert_eq!(Nfsstat4::from_u32(s.to_u32()), s);
    }
    assert_eq!(Nfsstat4::from_u32(12345).to_string(), "NFS4ERR_12345");
    assert_eq!(Opnum::Layoutget.to_string(), "LAYOUTGET");
}

#[test]
fn round_trips() {
    let fl = file_layout();
    assert_eq!(FileLayout::from_xdr(&fl.to_xdr()).unwrap(), fl);
    let st = Stateid {
        seqid: 9,
        other: [3; 12],
    };
    assert_eq!(Stateid::from_xdr(&st.to_xdr()).unwrap(), st);
    let bm = Bitmap4::from_bits(&[0, 31, 33, 75]);
    assert_eq!(Bitmap4::from_xdr(&bm.to_xdr()).unwrap(), bm);
    assert_eq!(bm.iter().collect::<Vec<_>>(), [0, 31, 33, 75]);
    // SETATTR's fattr4 decodes as the attributes it set.
    let sa = SetAttrs {
        size: Some(12345),
        mode: Some(0o640),
        ..SetAttrs::NONE
    };
    let enc = sa.to_xdr();
    let a = Fattr::from_xdr(&enc).unwrap();
    assert_eq!(
        (a.size, a.mode, a.mask),
        (Some(12345), Some(0o640), sa.mask())
    );
    let ci = ChangeInfo {
        atomic: true,
        before: 1,
        after: 2,
    };
    assert_eq!(ChangeInfo::from_xdr(&ci.to_xdr()).unwrap(), ci);
}

#[test]
fn setattr_times_are_encoded_in_bit_order() {
    let sa = SetAttrs {
        mode: Some(0o600),
        time_access: Some(SetTime::ServerTime),
        time_modify: Some(SetTime::ClientTime(Nfstime4 {
            seconds: 5,
            nseconds: 6,
        })),
        ..SetAttrs::NONE
    };
    // Bits 33, 48 and 54 in the second word; mode, then SET_TO_SERVER_TIME4, then
    // SET_TO_CLIENT_TIME4 and its nfstime4.
    let want = words(&[2, 0, 0x0041_0002, 24, 0o600, 0, 1, 0, 5, 6]);
    assert_eq!(sa.to_xdr(), want);
    assert!(!sa.is_empty() && SetAttrs::NONE.is_empty());
    assert_eq!(SetAttrs::NONE.to_xdr(), words(&[0, 0]));
}

#[test]
fn unknown_attribute_bit_is_rejected() {
    // bit 12 (acl) is not decoded: the error names the bit.
    let b = words(&[1, 1 << 12, 4, 0]);
    match Fattr::from_xdr(&b) {
        Err(XdrError::BadDiscriminant {
            value: 12, item, ..
        }) => {
            assert!(item.contains("fattr4"), "{item}")
        }
        other => panic!("{other:?}"),
    }
    // Values left over after the returned bits are an error too.
    let b = words(&[1, 1 << 4, 12, 0, 1, 2]);
    assert!(Fattr::from_xdr(&b).is_err());
}

#[test]
fn oversize_lengths_rejected() {
    // resarray count far beyond the input / the bound
    assert!(matches!(
        decode_compound(&words(&[0, 0, 0xffff_ffff])),
        Err(XdrError::TooLong { .. })
    ));
    assert!(matches!(
        decode_compound(&words(&[0, 0, 1000])),
        Err(XdrError::Truncated { .. })
    ));
    // tag length
    assert!(decode_compound(&words(&[0, 0xffff_fff0])).is_err());
    // READ data length beyond the input
    assert!(matches!(
        decode_compound(&words(&[0, 0, 1, 25, 0, 0, 0x7fff_0000, 1])),
        Err(XdrError::TooLong { .. } | XdrError::Truncated { .. })
    ));
    // file handle longer than NFS4_FHSIZE
    let mut b = words(&[0, 0, 1, 10, 0, 129]);
    b.extend([0u8; 132]);
    assert!(matches!(decode_compound(&b), Err(XdrError::TooLong { .. })));
    // bitmap4 with too many words
    assert!(matches!(
        decode_compound(&words(&[0, 0, 1, 9, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])),
        Err(XdrError::TooLong { .. })
    ));
    // layout count beyond the input
    assert!(decode_compound(&words(&[0, 0, 1, 50, 0, 0, 0, 0, 0, 0, 0xffff])).is_err());
    // fh list of a files layout beyond the input
    let mut body = Vec::new();
    body.put_opaque_fixed(&SID);
    body.extend(words(&[0, 0, 0, 0, 0x00ff_ffff]));
    assert!(FileLayout::from_body(&body).is_err());
    // unknown op number in a reply
    assert!(matches!(
        decode_compound(&words(&[0, 0, 1, 99, 0])),
        Err(XdrError::BadDiscriminant { value: 99, .. })
    ));
}

#[test]
fn decode_other_results() {
    // EXCHANGE_ID with SP4_NONE and one impl id; CREATE_SESSION; OPEN with a read
    // delegation; READ; WRITE; READDIR with one entry; LAYOUTCOMMIT; LAYOUTRETURN.
    let mut b = words(&[0, 0, 9]);
    b.extend(words(&[42, 0, 0, 77, 1, 0x0001_0000, 0, 0, 5]));
    b.put_opaque(b"major");
    b.put_opaque(b"scope");
    b.extend(words(&[1]));
    b.put_string("kernel.org");
    b.put_string("ganesha");
    b.extend(words(&[0, 0, 0]));
    b.extend(words(&[43, 0]));
    b.extend(words(&SID_WORDS));
    b.extend(words(&[
        1, 0, 0, 1024, 1024, 512, 8, 16, 0, 0, 4096, 4096, 0, 2, 1, 0,
    ]));
    b.extend(words(&[18, 0, 1, 0, 0, 0, 1, 0, 1, 0, 2, 4, 0])); // stateid, cinfo, rflags 4, no attrs
    b.extend(words(&[1, 5, 0, 0, 0, 0, 0, 0, 0])); // OPEN_DELEGATE_READ: stateid, recall, nfsace4
    b.put_string("EVERYONE@");
    b.extend(words(&[25, 0, 1, 3, 0x61626300])); // READ eof "abc"
    b.extend(words(&[38, 0, 4096, 2, 0, 1])); // WRITE count FILE_SYNC verifier
    b.extend(words(&[
        26, 0, 0, 0, 1, 0, 3, 1, 0x66000000, 1, 2, 4, 1, 0, 1,
    ])); // READDIR
    b.extend(words(&[49, 0, 1, 0, 100])); // LAYOUTCOMMIT new size 100
    b.extend(words(&[51, 0, 1, 2, 0, 0, 0])); // LAYOUTRETURN stateid present
    b.extend(words(&[41, 0]));
    b.extend(words(&SID_WORDS));
    b.extend(words(&[3, 0])); // BIND_CONN_TO_SESSION: both directions, no RDMA
    let res = decode_compound(&b).unwrap().into_results().unwrap();
    let OpResult::ExchangeId(x) = &res[0] else {
        panic!()
    };
    assert_eq!((x.clientid, x.sequenceid, x.server_minor_id), (77, 1, 5));
    assert_eq!(
        (x.server_major_id.0, x.server_scope.0),
        (&b"major"[..], &b"scope"[..])
    );
    assert_eq!(x.server_impl_id.as_ref().unwrap().name.0, b"ganesha");
    let OpResult::CreateSession(s) = &res[1] else {
        panic!()
    };
    assert_eq!(
        (s.sessionid, s.fore.maxrequests, s.back.maxrequests),
        (SID, 16, 1)
    );
    assert_eq!(s.fore.rdma_ird, RdmaIrd(None));
    let OpResult::Open(o) = &res[2] else { panic!() };
    assert_eq!((o.stateid.seqid, o.cinfo.after, o.rflags), (1, 2, 4));
    assert!(matches!(&o.delegation, Delegation::Read { stateid, .. } if stateid.seqid == 5));
    assert_eq!(
        res[3],
        OpResult::Read {
            eof: true,
            data: b"abc"
        }
    );
    assert_eq!(
        res[4],
        OpResult::Write {
            count: 4096,
            committed: StableHow::FileSync,
            verifier: [0, 0, 0, 0, 0, 0, 0, 1]
        }
    );
    let OpResult::Readdir(r) = &res[5] else {
        panic!()
    };
    assert_eq!(r.entries.len(), 1);
    assert_eq!(r.entries[0].name.0, b"f");
    assert_eq!(r.entries[0].attrs().ftype, Some(Ftype4::Reg));
    assert!(r.eof);
    assert_eq!(
        res[6],
        OpResult::Layoutcommit {
            new_size: Some(100)
        }
    );
    assert_eq!(
        res[7],
        OpResult::Layoutreturn(Some(Stateid {
            seqid: 2,
            other: [0; 12]
        }))
    );
    assert_eq!(
        res[8],
        OpResult::BindConnToSession {
            sessionid: SID,
            dir: chan_dir::FORE_OR_BOTH,
            rdma: false
        }
    );
}

#[test]
fn a_reader_gives_the_results_one_by_one_and_stops_at_the_failure() {
    let mut b = open_fail_reply();
    b.extend([0xff; 8]);
    let mut r = CompoundReader::new(&b).unwrap();
    assert_eq!((r.status, r.len()), (Nfsstat4::Grace, 3));
    assert!(matches!(r.next_op(), Some(Ok(Ok(OpResult::Sequence(s)))) if s.sessionid == SID));
    assert!(matches!(r.next_op(), Some(Ok(Ok(OpResult::Putfh)))));
    assert!(matches!(r.next_op(), Some(Ok(Err(f))) if f.op == Opnum::Open && f.index == 2));
    // Nothing after the failure, whatever follows it.
    assert!(r.next_op().is_none());
    assert!(r.next_op().is_none());

    // Without a failure, bytes after the last result are an error, once.
    let mut b = words(&[0, 0, 1, 22, 0]);
    b.extend([0; 4]);
    let mut r = CompoundReader::new(&b).unwrap();
    assert!(matches!(r.next_op(), Some(Ok(Ok(OpResult::Putfh)))));
    assert!(matches!(r.next_op(), Some(Err(XdrError::Trailing { .. }))));
    assert!(r.next_op().is_none());

    // Every prefix of a reply fails somewhere, as decode_compound does.
    let b = getattr_reply();
    for n in 0..b.len() {
        let failed = match CompoundReader::new(&b[..n]) {
            Err(_) => true,
            Ok(mut r) => std::iter::from_fn(|| r.next_op()).any(|op| op.is_err()),
        };
        assert!(failed, "prefix of {n} bytes accepted");
    }
}
