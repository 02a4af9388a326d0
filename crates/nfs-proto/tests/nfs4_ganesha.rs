//! The NFSv4.1 codec against a real server: nfs-ganesha (scripts/nfs-server, VFS
//! backend, NFSv4.1 without layouts) over one TCP connection with RPC record marking.
//! NULL, EXCHANGE_ID, CREATE_SESSION, then SEQUENCE-led COMPOUNDs: PUTROOTFH + GETATTR,
//! RECLAIM_COMPLETE, LOOKUP of the export, OPEN (create), WRITE, READ, COMMIT, LAYOUTGET
//! (refused: the VFS backend has no layouts), CLOSE, REMOVE, DESTROY_SESSION,
//! DESTROY_CLIENTID. Without root or ganesha the test prints a note and passes, unless
//! DBIO_REQUIRE_PEERS=1.

use dbio_nfs_proto::nfs4::*;
use dbio_rpc::{decode_reply, encode_call_record, AuthSys, Credential};
use dbio_xdr::XdrEncode;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/nfs-server")
}

/// A throw-away ganesha, stopped on drop.
struct Server {
    name: String,
    addr: String,
    export_dir: PathBuf,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start() -> Option<Server> {
        let name = format!("nfs4proto-{}", std::process::id());
        let dir = tempfile::Builder::new()
            .prefix("dbio-export-")
            .tempdir()
            .unwrap();
        let export_dir = dir.path().to_path_buf();
        let out = Command::new(script())
            .args(["start", "--name", &name, "--dir"])
            .arg(&export_dir)
            .output();
        if !matches!(&out, Ok(o) if o.status.success()) {
            let why = match &out {
                Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
                Err(e) => e.to_string(),
            };
            if std::env::var("DBIO_REQUIRE_PEERS").is_ok_and(|v| v == "1") {
                panic!("DBIO_REQUIRE_PEERS=1 but nfs-ganesha could not start: {why}");
            }
            eprintln!("note: skipping the NFSv4.1 live test, nfs-ganesha could not start: {why}");
            return None;
        }
        let out = Command::new(script())
            .args(["env", "--name", &name])
            .output()
            .unwrap();
        let env: HashMap<String, String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.trim_matches('\'').to_string()))
            .collect();
        Some(Server {
            addr: env.get("NFS_ADDR").cloned().unwrap_or_default(),
            name,
            export_dir,
            _dir: dir,
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new(script())
            .args(["stop", "--name", &self.name])
            .output();
    }
}

/// One connection; calls are sent one at a time.
struct Conn {
    sock: TcpStream,
    xid: u32,
    cred: Credential,
    /// `DBIO_NFS4_SEEDS=DIR` writes every COMPOUND reply there, prefixed with the
    /// `nfs4_results` fuzz target's selector byte (0), as seeds for fuzz/corpus.
    seeds: Option<PathBuf>,
}

impl Conn {
    /// Send a call and return the reply's results (the RPC header checked).
    fn call(&mut self, proc_: u32, args: &impl XdrEncode) -> Vec<u8> {
        self.xid += 1;
        let mut rec = Vec::new();
        encode_call_record(
            &mut rec, self.xid, PROGRAM, VERSION, proc_, &self.cred, args,
        );
        self.sock.write_all(&rec).unwrap();
        // Read fragments until the last one.
        let mut record = Vec::new();
        loop {
            let mut h = [0u8; 4];
            self.sock.read_exact(&mut h).unwrap();
            let h = u32::from_be_bytes(h);
            let len = (h & 0x7fff_ffff) as usize;
            assert!(len <= 4 << 20, "reply fragment of {len} bytes");
            let start = record.len();
            record.resize(start + len, 0);
            self.sock.read_exact(&mut record[start..]).unwrap();
            if h & 0x8000_0000 != 0 {
                break;
            }
        }
        let reply = decode_reply(&record).unwrap();
        assert_eq!(reply.xid, self.xid);
        reply.results().unwrap().to_vec()
    }

    fn compound(&mut self, c: &Compound<'_>) -> Vec<u8> {
        let b = self.call(PROC_COMPOUND, c);
        if let Some(dir) = &self.seeds {
            let name = format!("ganesha-{:02}-{}", self.xid, c.tag);
            std::fs::write(dir.join(name), [&[0u8][..], &b].concat()).unwrap();
        }
        b
    }
}

/// Decode a reply whose ops must all succeed, checking the op numbers.
fn ok<'a>(c: &Compound<'_>, b: &'a [u8]) -> Vec<OpResult<'a>> {
    let r = decode_compound(b).unwrap();
    if let Some(f) = r.failure {
        panic!("{f}");
    }
    assert_eq!(r.status, Nfsstat4::Ok);
    r.check_ops(c.opnums()).unwrap();
    r.results
}

/// A null argument.
struct Void;
impl XdrEncode for Void {
    fn encode<B: dbio_xdr::BufMut>(&self, _out: &mut B) {}
}

#[test]
fn nfs41_session_and_file_io_against_ganesha() {
    let Some(server) = Server::start() else {
        return;
    };
    let sock = TcpStream::connect((server.addr.as_str(), 2049)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let cred = Credential::sys(&AuthSys {
        stamp: 1,
        machine_name: "dbio-test".into(),
        uid: 0,
        gid: 0,
        gids: vec![],
    })
    .unwrap();
    let seeds = std::env::var_os("DBIO_NFS4_SEEDS").map(PathBuf::from);
    let mut conn = Conn {
        sock,
        xid: 0,
        cred,
        seeds,
    };

    // NULL
    assert!(conn.call(PROC_NULL, &Void).is_empty());

    // EXCHANGE_ID
    let owner = format!("dbio-nfs4-test-{}", std::process::id());
    let c = Compound::new("exchange_id", MINOR_VERSION).op(ArgOp::ExchangeId {
        verifier: *b"dbiotest",
        owner: owner.as_bytes(),
        flags: 0,
        impl_id: Some(("dbio.test", "dbio")),
    });
    let b = conn.compound(&c);
    let r = decode_compound(&b).unwrap();
    assert_eq!(r.tag.0, b"exchange_id");
    let res = ok(&c, &b);
    let OpResult::ExchangeId(x) = &res[0] else {
        unreachable!()
    };
    let (clientid, seq) = (x.clientid, x.sequenceid);
    eprintln!(
        "EXCHANGE_ID: clientid {clientid:#x} sequence {seq} flags {:#x} server impl {:?}",
        x.flags,
        x.server_impl_id
            .as_ref()
            .map(|i| String::from_utf8_lossy(i.name.0).into_owned())
    );

    // CREATE_SESSION
    let fore = ChannelAttrs {
        headerpadsize: 0,
        maxrequestsize: 1 << 20,
        maxresponsesize: 1 << 20,
        maxresponsesize_cached: 8192,
        maxoperations: 16,
        maxrequests: 64,
        rdma_ird: RdmaIrd(None),
    };
    let back = ChannelAttrs {
        maxrequestsize: 4096,
        maxresponsesize: 4096,
        maxresponsesize_cached: 0,
        maxoperations: 2,
        maxrequests: 1,
        ..fore
    };
    let c = Compound::new("create_session", MINOR_VERSION).op(ArgOp::CreateSession {
        clientid,
        sequence: seq,
        flags: 0,
        fore,
        back,
        cb_program: 0x4000_0000,
        sec: CallbackSec::None,
    });
    let b = conn.compound(&c);
    let res = ok(&c, &b);
    let OpResult::CreateSession(s) = &res[0] else {
        unreachable!()
    };
    let sid = s.sessionid;
    let slots = s.fore.maxrequests;
    eprintln!("CREATE_SESSION: {} slots, fore {:?}", slots, s.fore);
    assert!(slots >= 1);

    // Each later COMPOUND starts with SEQUENCE on slot 0.
    let mut seqid = 0;
    let mut next = |tag| {
        seqid += 1;
        Compound::new(tag, MINOR_VERSION).sequence(sid, seqid, 0, 0, false)
    };

    // PUTROOTFH + GETATTR
    let mask = Bitmap4::from_bits(&[
        bit::SUPPORTED_ATTRS,
        bit::TYPE,
        bit::CHANGE,
        bit::SIZE,
        bit::FSID,
        bit::LEASE_TIME,
        bit::FILEID,
        bit::MODE,
        bit::NUMLINKS,
        bit::OWNER,
        bit::TIME_MODIFY,
    ]);
    let c = next("root").putrootfh().getattr(mask);
    let b = conn.compound(&c);
    let res = ok(&c, &b);
    let OpResult::Sequence(sq) = &res[0] else {
        unreachable!()
    };
    assert_eq!((sq.sessionid, sq.sequenceid, sq.slotid), (sid, 1, 0));
    let OpResult::Getattr(a) = &res[2] else {
        unreachable!()
    };
    eprintln!("root attributes: {a:?}");
    assert_eq!(a.ftype, Some(Ftype4::Dir));
    assert!(a.fileid.is_some() && a.change.is_some() && a.lease_time.is_some());
    assert!(a.supported_attrs.unwrap().contains(bit::SIZE));

    // A second connection joins the session (BIND_CONN_TO_SESSION, alone in its
    // COMPOUND) and sends on slot 1 while slot 0 stays with the first connection.
    let mut conn2 = Conn {
        sock: TcpStream::connect((server.addr.as_str(), 2049)).unwrap(),
        xid: 1000,
        cred: conn.cred.clone(),
        seeds: None,
    };
    conn2
        .sock
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let c = Compound::new("bind", MINOR_VERSION).bind_conn_to_session(sid, chan_dir::FORE);
    let b = conn2.compound(&c);
    let res = ok(&c, &b);
    assert!(
        matches!(res[0], OpResult::BindConnToSession { sessionid, dir, .. }
        if sessionid == sid && dir & chan_dir::FORE != 0)
    );
    if slots > 1 {
        let c = Compound::new("slot1", MINOR_VERSION)
            .sequence(sid, 1, 1, 1, false)
            .putrootfh()
            .getfh();
        let b = conn2.compound(&c);
        let res = ok(&c, &b);
        assert!(matches!(res[0], OpResult::Sequence(s) if s.slotid == 1 && s.sequenceid == 1));
    }

    // RECLAIM_COMPLETE (before any OPEN of a new client).
    let c = next("reclaim").reclaim_complete(false);
    let b = conn.compound(&c);
    ok(&c, &b);

    // LOOKUP the export, GETFH.
    let c = next("lookup").putrootfh().lookup("export").getfh();
    let b = conn.compound(&c);
    let res = ok(&c, &b);
    let OpResult::Getfh(dir) = res[3] else {
        unreachable!()
    };

    // A name that does not exist: LOOKUP fails, the failure names it.
    let c = next("noent").putfh(dir).lookup("no-such-file").getfh();
    let b = conn.compound(&c);
    let r = decode_compound(&b).unwrap();
    let f = r.failure.unwrap();
    assert_eq!(
        (f.index, f.op, f.status),
        (2, Opnum::Lookup, Nfsstat4::Noent)
    );
    assert_eq!(r.results.len(), 2);

    // OPEN (GUARDED create, mode 0600) + GETFH, WRITE FILE_SYNC in the same COMPOUND
    // through the current stateid.
    let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
    let c = next("open")
        .putfh(dir)
        .op(ArgOp::Open {
            seqid: 0,
            share_access: share::ACCESS_BOTH | share::ACCESS_WANT_NO_DELEG,
            share_deny: share::DENY_NONE,
            clientid,
            owner: b"dbio-open-owner",
            how: OpenHow::Guarded(SetAttrs {
                size: None,
                mode: Some(0o600),
                ..SetAttrs::NONE
            }),
            claim: OpenClaim::Null("dbio-nfs4.dat".into()),
        })
        .getfh()
        .write(Stateid::CURRENT, 0, StableHow::Unstable, &data);
    let b = conn.compound(&c);
    let res = ok(&c, &b);
    let OpResult::Open(o) = &res[2] else {
        unreachable!()
    };
    let open_stateid = o.stateid;
    eprintln!("OPEN: {o:?}");
    let OpResult::Getfh(fh) = res[3] else {
        unreachable!()
    };
    let OpResult::Write {
        count, verifier, ..
    } = res[4]
    else {
        unreachable!()
    };
    assert_eq!(count as usize, data.len());

    // GUARDED create of the same name fails with NFS4ERR_EXIST.
    let c = next("open-again").putfh(dir).op(ArgOp::Open {
        seqid: 0,
        share_access: share::ACCESS_READ,
        share_deny: share::DENY_NONE,
        clientid,
        owner: b"dbio-open-owner",
        how: OpenHow::Guarded(SetAttrs::NONE),
        claim: OpenClaim::Null("dbio-nfs4.dat".into()),
    });
    let b = conn.compound(&c);
    let f = decode_compound(&b).unwrap().failure.unwrap();
    assert_eq!((f.op, f.status), (Opnum::Open, Nfsstat4::Exist));

    // COMMIT, READ back, GETATTR size; LAYOUTGET is refused by the VFS backend.
    let c = next("commit")
        .putfh(fh)
        .commit(0, 0)
        .read(open_stateid, 0, 65536)
        .getattr(Bitmap4::from_bits(&[bit::TYPE, bit::SIZE, bit::MODE]));
    let b = conn.compound(&c);
    let res = ok(&c, &b);
    assert_eq!(res[2], OpResult::Commit(verifier));
    let OpResult::Read { eof, data: got } = res[3] else {
        unreachable!()
    };
    assert!(eof);
    assert_eq!(got, &data[..]);
    let OpResult::Getattr(a) = &res[4] else {
        unreachable!()
    };
    assert_eq!(
        (a.ftype, a.size, a.mode.map(|m| m & 0o777)),
        (Some(Ftype4::Reg), Some(data.len() as u64), Some(0o600))
    );
    assert_eq!(
        std::fs::metadata(server.export_dir.join("dbio-nfs4.dat"))
            .unwrap()
            .len(),
        data.len() as u64
    );

    let c = next("layoutget").putfh(fh).op(ArgOp::Layoutget {
        signal_layout_avail: false,
        layout_type: LayoutType::NfsV41Files,
        iomode: LayoutIomode::Read,
        offset: 0,
        length: u64::MAX,
        minlength: 0,
        stateid: open_stateid,
        maxcount: 4096,
    });
    let b = conn.compound(&c);
    let f = decode_compound(&b).unwrap().failure.unwrap();
    eprintln!("LAYOUTGET on the VFS backend: {f}");
    assert_eq!(f.op, Opnum::Layoutget);

    // SETATTR (truncate) through the open stateid, CLOSE, REMOVE, and clean up.
    let c = next("setattr").putfh(fh).setattr(
        open_stateid,
        SetAttrs {
            size: Some(100),
            mode: None,
            ..SetAttrs::NONE
        },
    );
    let b = conn.compound(&c);
    let res = ok(&c, &b);
    assert!(matches!(&res[2], OpResult::Setattr(bits) if bits.contains(bit::SIZE)));
    let c = next("close").putfh(fh).close(0, open_stateid);
    let b = conn.compound(&c);
    ok(&c, &b);
    // CREATE a directory, RENAME the file into it, READDIR it, ACCESS.
    let c = next("mkdir")
        .putfh(dir)
        .mkdir(
            "sub",
            SetAttrs {
                size: None,
                mode: Some(0o755),
                ..SetAttrs::NONE
            },
        )
        .getfh();
    let b = conn.compound(&c);
    let res = ok(&c, &b);
    assert!(matches!(&res[2], OpResult::Create { attrset, .. } if attrset.contains(bit::MODE)));
    let OpResult::Getfh(sub) = res[3] else {
        unreachable!()
    };
    assert!(server.export_dir.join("sub").is_dir());
    // RENAME: from the saved filehandle's directory to the current one's.
    let c = next("rename")
        .putfh(dir)
        .savefh()
        .putfh(dir)
        .rename("dbio-nfs4.dat", "dbio-nfs4.renamed");
    let b = conn.compound(&c);
    let res = ok(&c, &b);
    assert!(matches!(&res[4], OpResult::Rename { source, target } if source.after == target.after));
    let name = "dbio-nfs4.renamed";
    assert!(server.export_dir.join(name).exists());
    let c = next("readdir").putfh(dir).readdir(
        0,
        [0; 8],
        4096,
        32768,
        Bitmap4::from_bits(&[bit::TYPE, bit::SIZE, bit::FILEID]),
    );
    let b = conn.compound(&c);
    let res = ok(&c, &b);
    let OpResult::Readdir(rd) = &res[2] else {
        unreachable!()
    };
    assert!(rd.eof);
    let mut names: Vec<_> = rd
        .entries
        .iter()
        .map(|e| {
            (
                String::from_utf8_lossy(e.name.0).into_owned(),
                e.attrs().ftype,
            )
        })
        .collect();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        names,
        [
            (name.to_string(), Some(Ftype4::Reg)),
            ("sub".to_string(), Some(Ftype4::Dir))
        ]
    );
    let c = next("access")
        .putfh(sub)
        .access(access::READ | access::LOOKUP | access::MODIFY);
    let b = conn.compound(&c);
    let res = ok(&c, &b);
    assert!(matches!(res[2], OpResult::Access { access, .. } if access & access::LOOKUP != 0));
    let c = next("rmdir").putfh(dir).remove("sub");
    let b = conn.compound(&c);
    ok(&c, &b);

    let c = next("remove").putfh(dir).remove(name);
    let b = conn.compound(&c);
    ok(&c, &b);
    assert!(!server.export_dir.join(name).exists());

    let c = Compound::new("destroy_session", MINOR_VERSION).destroy_session(sid);
    let b = conn.compound(&c);
    ok(&c, &b);
    let c = Compound::new("destroy_clientid", MINOR_VERSION).destroy_clientid(clientid);
    let b = conn.compound(&c);
    ok(&c, &b);
}
