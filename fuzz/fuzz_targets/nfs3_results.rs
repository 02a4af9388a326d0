//! Every NFSv3 result decoder; the first byte picks the procedure.
#![no_main]

use dbio_nfs_proto::nfs3::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&p, b)) = data.split_first() else {
        return;
    };
    let _ = match Proc::from_u32(u32::from(p) % 22) {
        Some(Proc::Null) | None => Ok(Ok(())),
        Some(Proc::Getattr) => decode_res::<GetattrOk>(b).map(|r| r.map(drop)),
        Some(Proc::Setattr | Proc::Remove | Proc::Rmdir) => {
            decode_res::<WccOk>(b).map(|r| r.map(drop))
        }
        Some(Proc::Lookup) => decode_res::<LookupOk>(b).map(|r| r.map(drop)),
        Some(Proc::Access) => decode_res::<AccessOk>(b).map(|r| r.map(drop)),
        Some(Proc::Readlink) => decode_res::<ReadlinkOk>(b).map(|r| r.map(drop)),
        Some(Proc::Read) => {
            decode_res::<ReadOk>(b).map(|r| r.map(|ok| assert!(ok.data.0.len() <= b.len())))
        }
        Some(Proc::Write) => decode_res::<WriteOk>(b).map(|r| r.map(drop)),
        Some(Proc::Create | Proc::Mkdir | Proc::Symlink | Proc::Mknod) => {
            decode_res::<CreateOk>(b).map(|r| r.map(drop))
        }
        Some(Proc::Rename) => decode_res::<RenameOk>(b).map(|r| r.map(drop)),
        Some(Proc::Link) => decode_res::<LinkOk>(b).map(|r| r.map(drop)),
        Some(Proc::Readdir) => {
            decode_res::<ReaddirOk>(b).map(|r| r.map(|ok| assert!(ok.entries.len() <= b.len() / 8)))
        }
        Some(Proc::Readdirplus) => decode_res::<ReaddirplusOk>(b)
            .map(|r| r.map(|ok| assert!(ok.entries.len() <= b.len() / 8))),
        Some(Proc::Fsstat) => decode_res::<FsstatOk>(b).map(|r| r.map(drop)),
        Some(Proc::Fsinfo) => decode_res::<FsinfoOk>(b).map(|r| r.map(drop)),
        Some(Proc::Pathconf) => decode_res::<PathconfOk>(b).map(|r| r.map(drop)),
        Some(Proc::Commit) => decode_res::<CommitOk>(b).map(|r| r.map(drop)),
    };
});
