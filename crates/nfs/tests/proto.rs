//! Protocol codecs: hand-checked bytes, round trips of every type, bounds, no panics.

use dbio_nfs::proto::nfs3::*;
use dbio_nfs::proto::{mount3, portmap};
use dbio_xdr::{padding, Decoder, XdrDecode, XdrEncode, XdrError};
use proptest::collection::vec;
use proptest::prelude::*;

#[test]
fn getattr_reply_bytes() {
    #[rustfmt::skip]
    let record: Vec<u8> = vec![
        1, 2, 3, 4,   0, 0, 0, 1,   0, 0, 0, 0,   // xid, REPLY, MSG_ACCEPTED
        0, 0, 0, 0,   0, 0, 0, 0,   0, 0, 0, 0,   // verf AUTH_NONE, SUCCESS
        0, 0, 0, 0,                               // NFS3_OK
        0, 0, 0, 1,                               // NF3REG
        0, 0, 0x01, 0xa4,                         // mode 0644
        0, 0, 0, 1,                               // nlink
        0, 0, 0x03, 0xe8,   0, 0, 0x03, 0xe9,     // uid 1000, gid 1001
        0, 0, 0, 0, 0, 0, 0x20, 0,                // size 8192
        0, 0, 0, 0, 0, 0, 0x30, 0,                // used 12288
        0, 0, 0, 8,   0, 0, 0, 1,                 // rdev 8,1
        0, 0, 0, 0, 0, 0, 0, 0x11,                // fsid
        0, 0, 0, 0, 0, 0, 0, 0x22,                // fileid
        0, 0, 0, 1,   0, 0, 0, 2,                 // atime
        0, 0, 0, 3,   0, 0, 0, 4,                 // mtime
        0, 0, 0, 5,   0, 0, 0, 6,                 // ctime
    ];
    let reply = dbio_rpc::decode_reply(&record).unwrap();
    assert_eq!(reply.xid, 0x0102_0304);
    let ok = decode_res::<GetattrOk>(reply.results().unwrap())
        .unwrap()
        .unwrap();
    let a = ok.attributes;
    assert_eq!(a.ftype, Ftype3::Reg);
    assert_eq!((a.mode, a.nlink, a.uid, a.gid), (0o644, 1, 1000, 1001));
    assert_eq!((a.size, a.used), (8192, 12288));
    assert_eq!((a.rdev.specdata1, a.rdev.specdata2), (8, 1));
    assert_eq!((a.fsid, a.fileid), (0x11, 0x22));
    assert_eq!(
        a.mtime,
        Nfstime3 {
            seconds: 3,
            nseconds: 4
        }
    );
    assert_eq!(
        a.ctime,
        Nfstime3 {
            seconds: 5,
            nseconds: 6
        }
    );
    // Re-encoding gives the same results bytes.
    let mut again = Vec::new();
    encode_res_ok(&mut again, &ok);
    assert_eq!(again, &record[24..]);
}

#[test]
fn lookup_call_bytes() {
    let fh = FileHandle::new(&[0xab; 5]).unwrap();
    let args = DirOpArgs {
        dir: fh,
        name: Name::from("a.dbf"),
    };
    #[rustfmt::skip]
    let want = [
        0, 0, 0, 5, 0xab, 0xab, 0xab, 0xab, 0xab, 0, 0, 0,
        0, 0, 0, 5, b'a', b'.', b'd', b'b', b'f', 0, 0, 0,
    ];
    assert_eq!(args.to_xdr(), want);
}

#[test]
fn nfsstat_names() {
    assert_eq!(Nfsstat3::NoEnt.to_string(), "NFS3ERR_NOENT");
    assert_eq!(Nfsstat3::from_u32(10008), Nfsstat3::Jukebox);
    assert_eq!(Nfsstat3::Jukebox.to_string(), "NFS3ERR_JUKEBOX");
    assert_eq!(Nfsstat3::from_u32(99), Nfsstat3::Other(99));
    assert_eq!(Nfsstat3::Other(99).to_string(), "NFS3ERR_99");
    assert_eq!(
        mount3::Mountstat3::from_u32(13).to_string(),
        "MNT3ERR_ACCES"
    );
    assert_eq!(Proc::Readdirplus.to_string(), "READDIRPLUS");
    for v in 0..22 {
        assert_eq!(Proc::from_u32(v).unwrap() as u32, v);
    }
}

#[test]
fn failure_results_carry_the_status() {
    for p in 0..22u32 {
        let mut b = Vec::new();
        encode_res_fail(&mut b, p, Nfsstat3::Stale);
        assert_eq!(decode_res::<WccOk>(&b).unwrap(), Err(Nfsstat3::Stale));
    }
    // LOOKUP failure arm: one post_op_attr word.
    let mut b = Vec::new();
    encode_res_fail(&mut b, Proc::Lookup as u32, Nfsstat3::NoEnt);
    assert_eq!(b, [0, 0, 0, 2, 0, 0, 0, 0]);
}

#[test]
fn file_handle_over_64_bytes_is_rejected() {
    let mut b = vec![0, 0, 0, 65];
    b.extend_from_slice(&[7; 68]);
    assert!(matches!(
        FileHandle::from_xdr(&b),
        Err(XdrError::TooLong {
            item: "nfs_fh3",
            len: 65,
            bound: 64,
            ..
        })
    ));
    assert!(FileHandle::new(&[0; 65]).is_none());
}

#[test]
fn read_with_huge_length_fails_without_allocating() {
    // NFS3_OK, no attributes, count, eof, then a data length of 0xFFFFFFFF.
    let b = [
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 1, 2,
    ];
    assert!(matches!(
        decode_res::<ReadOk>(&b),
        Err(XdrError::TooLong { item: "data", .. })
    ));
    // Within the bound but past the input: truncated.
    let b = [
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 1, 0, 0, 0x20, 0, 1, 2,
    ];
    assert!(matches!(
        decode_res::<ReadOk>(&b),
        Err(XdrError::Truncated { item: "data", .. })
    ));
}

#[test]
fn read_data_is_borrowed_from_the_record() {
    let ok = ReadOk {
        file_attributes: None,
        count: 3,
        eof: true,
        data: Data(b"xyz"),
    };
    let mut b = Vec::new();
    encode_res_ok(&mut b, &ok);
    let back = decode_res::<ReadOk>(&b).unwrap().unwrap();
    assert_eq!(back.data.0.as_ptr(), b[20..].as_ptr());
}

#[test]
fn write_head_plus_payload_equals_full_encoding() {
    let data = [9u8; 13];
    let args = WriteArgs {
        file: FileHandle::new(b"fh").unwrap(),
        offset: 4096,
        stable: StableHow::Unstable,
        data: Data(&data),
    };
    let mut split = Vec::new();
    args.encode_head(&mut split);
    split.extend_from_slice(&data);
    split.extend_from_slice(&dbio_xdr::PAD[..padding(data.len())]);
    assert_eq!(split, args.to_xdr());
    assert_eq!(WriteArgs::from_xdr(&split).unwrap(), args);
}

#[test]
fn mount_and_portmap_bytes() {
    let ok = mount3::MountOk {
        fhandle: FileHandle::new(&[1, 2, 3, 4]).unwrap(),
        auth_flavors: vec![1, 0],
    };
    let mut b = Vec::new();
    mount3::encode_mnt(&mut b, &Ok(ok.clone()));
    assert_eq!(
        b,
        [0, 0, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0]
    );
    assert_eq!(mount3::decode_mnt(&b).unwrap(), Ok(ok));
    assert_eq!(
        mount3::decode_mnt(&[0, 0, 0, 13]).unwrap(),
        Err(mount3::Mountstat3::Acces)
    );
    let m = portmap::Mapping {
        prog: 100003,
        vers: 3,
        prot: portmap::IPPROTO_TCP,
        port: 0,
    };
    assert_eq!(
        m.to_xdr(),
        [0, 1, 0x86, 0xa3, 0, 0, 0, 3, 0, 0, 0, 6, 0, 0, 0, 0]
    );
    assert_eq!(portmap::decode_getport(&[0, 0, 0x08, 0x01]).unwrap(), 2049);
    assert!(portmap::decode_getport(&[0, 1, 0, 0]).is_err());
}

#[test]
fn long_directory_lists_are_bounded_by_input() {
    // A list that claims more entries than bytes: stops at the end of input.
    let b = [0, 0, 0, 1, 0, 0, 0, 0];
    assert!(mount3::Exports::from_xdr(&b).is_err());
}

// ---- strategies ----

fn fh() -> impl Strategy<Value = FileHandle> {
    vec(any::<u8>(), 0..=64).prop_map(|b| FileHandle::new(&b).unwrap())
}
fn time() -> impl Strategy<Value = Nfstime3> {
    (any::<u32>(), any::<u32>()).prop_map(|(seconds, nseconds)| Nfstime3 { seconds, nseconds })
}
fn ftype() -> impl Strategy<Value = Ftype3> {
    (1u32..=7).prop_map(|v| Ftype3::from_u32(v).unwrap())
}
fn stable() -> impl Strategy<Value = StableHow> {
    (0u32..=2).prop_map(|v| StableHow::from_u32(v).unwrap())
}
fn fattr() -> impl Strategy<Value = Fattr3> {
    (
        ftype(),
        any::<[u32; 4]>(),
        any::<[u64; 4]>(),
        any::<(u32, u32)>(),
        (time(), time(), time()),
    )
        .prop_map(|(ftype, w, h, (d1, d2), (atime, mtime, ctime))| Fattr3 {
            ftype,
            mode: w[0],
            nlink: w[1],
            uid: w[2],
            gid: w[3],
            size: h[0],
            used: h[1],
            rdev: Specdata3 {
                specdata1: d1,
                specdata2: d2,
            },
            fsid: h[2],
            fileid: h[3],
            atime,
            mtime,
            ctime,
        })
}
fn post_op() -> impl Strategy<Value = PostOpAttr> {
    proptest::option::of(fattr())
}
fn wcc() -> impl Strategy<Value = WccData> {
    (
        proptest::option::of((any::<u64>(), time(), time())),
        post_op(),
    )
        .prop_map(|(b, after)| WccData {
            before: b.map(|(size, mtime, ctime)| WccAttr { size, mtime, ctime }),
            after,
        })
}
fn set_time() -> impl Strategy<Value = SetTime> {
    prop_oneof![
        Just(SetTime::DontChange),
        Just(SetTime::ServerTime),
        time().prop_map(SetTime::ClientTime)
    ]
}
fn sattr() -> impl Strategy<Value = Sattr3> {
    (
        any::<(Option<u32>, Option<u32>, Option<u32>, Option<u64>)>(),
        set_time(),
        set_time(),
    )
        .prop_map(|((mode, uid, gid, size), atime, mtime)| Sattr3 {
            mode,
            uid,
            gid,
            size,
            atime,
            mtime,
        })
}
fn create_how() -> impl Strategy<Value = CreateHow> {
    prop_oneof![
        sattr().prop_map(CreateHow::Unchecked),
        sattr().prop_map(CreateHow::Guarded),
        any::<[u8; 8]>().prop_map(CreateHow::Exclusive),
    ]
}
fn mknod() -> impl Strategy<Value = MknodData> {
    let spec = any::<(u32, u32)>().prop_map(|(a, b)| Specdata3 {
        specdata1: a,
        specdata2: b,
    });
    prop_oneof![
        (sattr(), spec.clone()).prop_map(|(a, s)| MknodData::Chr(a, s)),
        (sattr(), spec).prop_map(|(a, s)| MknodData::Blk(a, s)),
        sattr().prop_map(MknodData::Sock),
        sattr().prop_map(MknodData::Fifo),
        prop_oneof![Just(Ftype3::Reg), Just(Ftype3::Dir), Just(Ftype3::Lnk)]
            .prop_map(MknodData::Other),
    ]
}
fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), 0..max)
}

/// Encode, decode the whole buffer, compare.
macro_rules! rt {
    ($v:expr, $t:ty) => {{
        let v = $v;
        let b = v.to_xdr();
        prop_assert_eq!(b.len() % 4, 0);
        let back = <$t>::from_xdr(&b)?;
        prop_assert_eq!(back, v);
    }};
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn attribute_types_round_trip(a in fattr(), w in wcc(), s in sattr(), c in create_how(), t in set_time()) {
        rt!(a, Fattr3);
        rt!(w, WccData);
        rt!(s, Sattr3);
        rt!(c, CreateHow);
        rt!(t, SetTime);
        rt!(Nfsstat3::from_u32(a.mode), Nfsstat3);
    }

    #[test]
    fn simple_args_round_trip(f in fh(), g in proptest::option::of(time()), s in sattr(), x in any::<(u64, u32, [u8; 8])>()) {
        rt!(FhArgs { object: f }, FhArgs);
        rt!(SetattrArgs { object: f, new_attributes: s, guard: g }, SetattrArgs);
        rt!(AccessArgs { object: f, access: x.1 }, AccessArgs);
        rt!(ReadArgs { file: f, offset: x.0, count: x.1 }, ReadArgs);
        rt!(ReaddirArgs { dir: f, cookie: x.0, cookieverf: x.2, count: x.1 }, ReaddirArgs);
        rt!(ReaddirplusArgs { dir: f, cookie: x.0, cookieverf: x.2, dircount: x.1, maxcount: !x.1 }, ReaddirplusArgs);
        rt!(CommitArgs { file: f, offset: x.0, count: x.1 }, CommitArgs);
    }

    #[test]
    fn named_args_round_trip(
        f in fh(), f2 in fh(), n in bytes(40), n2 in bytes(40), data in bytes(300),
        s in sattr(), how in create_how(), m in mknod(), st in stable(), off: u64,
    ) {
        let place = DirOpArgs { dir: f, name: Name(&n) };
        rt!(place.clone(), DirOpArgs);
        rt!(WriteArgs { file: f, offset: off, stable: st, data: Data(&data) }, WriteArgs);
        rt!(CreateArgs { place: place.clone(), how }, CreateArgs);
        rt!(MkdirArgs { place: place.clone(), attributes: s }, MkdirArgs);
        rt!(SymlinkArgs { place: place.clone(), symlink_attributes: s, symlink_data: Path(&n2) }, SymlinkArgs);
        rt!(MknodArgs { place: place.clone(), what: m }, MknodArgs);
        rt!(RenameArgs { from: place.clone(), to: DirOpArgs { dir: f2, name: Name(&n2) } }, RenameArgs);
        rt!(LinkArgs { file: f2, link: place }, LinkArgs);
    }

    #[test]
    fn results_round_trip(
        f in fh(), a in fattr(), p in post_op(), p2 in post_op(), w in wcc(), w2 in wcc(),
        data in bytes(300), x in any::<([u32; 7], [u64; 6], [u8; 8], bool, [bool; 4])>(), st in stable(),
    ) {
        let (u, h, verf, eof, flags) = x;
        rt!(GetattrOk { attributes: a }, GetattrOk);
        rt!(WccOk { wcc: w }, WccOk);
        rt!(LookupOk { object: f, obj_attributes: p, dir_attributes: p2 }, LookupOk);
        rt!(AccessOk { obj_attributes: p, access: u[0] }, AccessOk);
        rt!(ReadlinkOk { symlink_attributes: p, data: Path(&data) }, ReadlinkOk);
        rt!(ReadOk { file_attributes: p, count: u[1], eof, data: Data(&data) }, ReadOk);
        rt!(WriteOk { file_wcc: w, count: u[2], committed: st, verf }, WriteOk);
        rt!(CreateOk { obj: Some(f), obj_attributes: p, dir_wcc: w }, CreateOk);
        rt!(CreateOk { obj: None, obj_attributes: None, dir_wcc: w2 }, CreateOk);
        rt!(RenameOk { fromdir_wcc: w, todir_wcc: w2 }, RenameOk);
        rt!(LinkOk { file_attributes: p, linkdir_wcc: w }, LinkOk);
        rt!(FsstatOk { obj_attributes: p, tbytes: h[0], fbytes: h[1], abytes: h[2], tfiles: h[3], ffiles: h[4], afiles: h[5], invarsec: u[3] }, FsstatOk);
        rt!(FsinfoOk {
            obj_attributes: p, rtmax: u[0], rtpref: u[1], rtmult: u[2], wtmax: u[3], wtpref: u[4],
            wtmult: u[5], dtpref: u[6], maxfilesize: h[0], time_delta: Nfstime3 { seconds: u[1], nseconds: u[2] },
            properties: u[3],
        }, FsinfoOk);
        rt!(PathconfOk { obj_attributes: p, linkmax: u[0], name_max: u[1], no_trunc: flags[0], chown_restricted: flags[1], case_insensitive: flags[2], case_preserving: flags[3] }, PathconfOk);
        rt!(CommitOk { file_wcc: w, verf }, CommitOk);
    }

    #[test]
    fn directory_lists_round_trip(
        names in vec(bytes(20), 0..8), attrs in vec(post_op(), 8), fhs in vec(proptest::option::of(fh()), 8),
        p in post_op(), verf: [u8; 8], eof: bool, ids in any::<[u64; 8]>(),
    ) {
        let entries: Vec<Entry> = names.iter().enumerate().map(|(i, n)| Entry { fileid: ids[i], name: Name(n), cookie: !ids[i] }).collect();
        rt!(ReaddirOk { dir_attributes: p, cookieverf: verf, entries, eof }, ReaddirOk);
        let plus: Vec<EntryPlus> = names.iter().enumerate().map(|(i, n)| EntryPlus {
            fileid: ids[i], name: Name(n), cookie: i as u64, name_attributes: attrs[i], name_handle: fhs[i],
        }).collect();
        rt!(ReaddirplusOk { dir_attributes: p, cookieverf: verf, entries: plus, eof }, ReaddirplusOk);
    }

    #[test]
    fn mount_and_portmap_round_trip(
        f in fh(), flavors in vec(any::<u32>(), 0..8), names in vec(bytes(30), 0..6), m in any::<[u32; 4]>(),
    ) {
        rt!(mount3::MountOk { fhandle: f, auth_flavors: flavors }, mount3::MountOk);
        rt!(mount3::DirPath(&names.concat()), mount3::DirPath);
        let list = mount3::MountList(names.iter().map(|n| mount3::MountEntry { hostname: mount3::MountName(n), directory: mount3::DirPath(n) }).collect());
        rt!(list, mount3::MountList);
        let exports = mount3::Exports(names.iter().map(|n| mount3::Export {
            dir: mount3::DirPath(n),
            groups: names.iter().map(|g| mount3::MountName(g)).collect(),
        }).collect());
        rt!(exports, mount3::Exports);
        let mapping = portmap::Mapping { prog: m[0], vers: m[1], prot: m[2], port: m[3] };
        rt!(mapping, portmap::Mapping);
        rt!(portmap::MappingList(vec![mapping; names.len()]), portmap::MappingList);
    }

    #[test]
    fn decoders_never_panic(raw in bytes(512)) {
        // Half the cases start with NFS3_OK so that the resok decoders are reached.
        let mut buf = raw.clone();
        if raw.first().is_some_and(|b| b & 1 == 0) {
            buf.splice(0..0, [0u8; 4]);
        }
        let b = &buf[..];
        let _ = decode_res::<GetattrOk>(b);
        let _ = decode_res::<WccOk>(b);
        let _ = decode_res::<LookupOk>(b);
        let _ = decode_res::<AccessOk>(b);
        let _ = decode_res::<ReadlinkOk>(b);
        let _ = decode_res::<ReadOk>(b);
        let _ = decode_res::<WriteOk>(b);
        let _ = decode_res::<CreateOk>(b);
        let _ = decode_res::<RenameOk>(b);
        let _ = decode_res::<LinkOk>(b);
        let _ = decode_res::<ReaddirOk>(b);
        let _ = decode_res::<ReaddirplusOk>(b);
        let _ = decode_res::<FsstatOk>(b);
        let _ = decode_res::<FsinfoOk>(b);
        let _ = decode_res::<PathconfOk>(b);
        let _ = decode_res::<CommitOk>(b);
        let _ = SetattrArgs::from_xdr(b);
        let _ = WriteArgs::from_xdr(b);
        let _ = CreateArgs::from_xdr(b);
        let _ = SymlinkArgs::from_xdr(b);
        let _ = MknodArgs::from_xdr(b);
        let _ = RenameArgs::from_xdr(b);
        let _ = LinkArgs::from_xdr(b);
        let _ = ReaddirplusArgs::from_xdr(b);
        let _ = mount3::decode_mnt(b);
        let _ = mount3::MountList::from_xdr(b);
        let _ = mount3::Exports::from_xdr(b);
        let _ = portmap::MappingList::from_xdr(b);
        let _ = portmap::decode_getport(b);
        let _ = Decoder::new(b).decode::<Option<FileHandle>>();
    }
}
