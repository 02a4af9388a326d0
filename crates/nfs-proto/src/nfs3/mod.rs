//! NFSv3 (RFC 1813): program 100003, version 3.
//!
//! For procedure `P`: encode `PArgs` after the call header with `encode_call(.., PROGRAM,
//! VERSION, Proc::P as u32, ..)`, and decode the reply's results slice with
//! `decode_res::<POk>(results)`, which gives `Ok(Ok(POk))`, `Ok(Err(Nfsstat3))` for a
//! server error, or `Err(XdrError)` for a malformed reply.
//!
//! | procedure | arguments | result |
//! |---|---|---|
//! | NULL | none | none |
//! | GETATTR | [`FhArgs`] | [`GetattrOk`] |
//! | SETATTR | [`SetattrArgs`] | [`WccOk`] |
//! | LOOKUP | [`DirOpArgs`] | [`LookupOk`] |
//! | ACCESS | [`AccessArgs`] | [`AccessOk`] |
//! | READLINK | [`FhArgs`] | [`ReadlinkOk`] |
//! | READ | [`ReadArgs`] | [`ReadOk`] (data borrowed) |
//! | WRITE | [`WriteArgs`] (`encode_head` for vectored sends) | [`WriteOk`] |
//! | CREATE | [`CreateArgs`] | [`CreateOk`] |
//! | MKDIR | [`MkdirArgs`] | [`CreateOk`] |
//! | SYMLINK | [`SymlinkArgs`] | [`CreateOk`] |
//! | MKNOD | [`MknodArgs`] | [`CreateOk`] |
//! | REMOVE, RMDIR | [`DirOpArgs`] | [`WccOk`] |
//! | RENAME | [`RenameArgs`] | [`RenameOk`] |
//! | LINK | [`LinkArgs`] | [`LinkOk`] |
//! | READDIR | [`ReaddirArgs`] | [`ReaddirOk`] |
//! | READDIRPLUS | [`ReaddirplusArgs`] | [`ReaddirplusOk`] |
//! | FSSTAT | [`FhArgs`] | [`FsstatOk`] |
//! | FSINFO | [`FhArgs`] | [`FsinfoOk`] |
//! | PATHCONF | [`FhArgs`] | [`PathconfOk`] |
//! | COMMIT | [`CommitArgs`] | [`CommitOk`] |

mod procs;
mod types;

pub use procs::*;
pub use types::*;

/// RPC program number of NFS.
pub const PROGRAM: u32 = 100003;
/// NFS version 3.
pub const VERSION: u32 = 3;

xdr_enum!(
    /// NFSv3 procedure numbers.
    pub enum Proc("nfs3 procedure") {
        Null = 0,
        Getattr = 1,
        Setattr = 2,
        Lookup = 3,
        Access = 4,
        Readlink = 5,
        Read = 6,
        Write = 7,
        Create = 8,
        Mkdir = 9,
        Symlink = 10,
        Mknod = 11,
        Remove = 12,
        Rmdir = 13,
        Rename = 14,
        Link = 15,
        Readdir = 16,
        Readdirplus = 17,
        Fsstat = 18,
        Fsinfo = 19,
        Pathconf = 20,
        Commit = 21,
    }
);

impl Proc {
    /// Upper-case procedure name, for errors and per-procedure statistics.
    pub fn name(self) -> &'static str {
        const NAMES: [&str; 22] = [
            "NULL",
            "GETATTR",
            "SETATTR",
            "LOOKUP",
            "ACCESS",
            "READLINK",
            "READ",
            "WRITE",
            "CREATE",
            "MKDIR",
            "SYMLINK",
            "MKNOD",
            "REMOVE",
            "RMDIR",
            "RENAME",
            "LINK",
            "READDIR",
            "READDIRPLUS",
            "FSSTAT",
            "FSINFO",
            "PATHCONF",
            "COMMIT",
        ];
        NAMES[self as usize]
    }
}

impl std::fmt::Display for Proc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
