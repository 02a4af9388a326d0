//! Client errors: each names the procedure and the path (or server) it concerns.

use dbio_rpc::conn::TransportError;
use dbio_rpc::RpcError;

use crate::channel::CallError;
use crate::kinds::LongRead;
use crate::proto::mount3::Mountstat3;
use crate::proto::nfs3::Nfsstat3;
use crate::url::UrlError;

#[derive(Debug, Clone, thiserror::Error)]
pub enum NfsError {
    #[error(transparent)]
    Url(#[from] UrlError),
    #[error("cannot resolve NFS server '{host}': {reason}")]
    Resolve { host: String, reason: String },
    /// The server answered an NFS procedure with an error status.
    #[error("{proc_} {path}: {status}{}", describe(*status))]
    Status {
        proc_: &'static str,
        path: String,
        status: Nfsstat3,
    },
    /// An NFSv4.1 operation failed: which op of the COMPOUND, on what, with what status.
    #[error("{op} {path}: {status}")]
    Status4 {
        op: crate::proto::nfs4::Opnum,
        path: String,
        status: crate::proto::nfs4::Nfsstat4,
    },
    #[error("mount of {export} on {server} refused: {status}")]
    Mount {
        server: String,
        export: String,
        status: Mountstat3,
    },
    #[error("no export of {server} contains {path} (exports: {exports})")]
    NoExport {
        server: String,
        path: String,
        exports: String,
    },
    #[error(
        "export {export} of {server} does not accept sec={asked}: it accepts {accepts} \
         (sec= in the URL, or security: in the oranfstab)"
    )]
    Flavor {
        server: String,
        export: String,
        asked: dbio_rpc::Flavor,
        accepts: String,
    },
    #[error("portmapper of {server}: program {prog} version {vers} is not registered for TCP")]
    NotRegistered {
        server: String,
        prog: u32,
        vers: u32,
    },
    #[error("{what} {path}: {source}")]
    Transport {
        what: String,
        path: String,
        #[source]
        source: TransportError,
    },
    #[error("{what} {path}: {source}")]
    Rpc {
        what: String,
        path: String,
        #[source]
        source: RpcError,
    },
    /// A READ reply carried more bytes than asked ([`LongRead`], the same in every
    /// version).
    #[error("READ {path} from {server}: {long}")]
    LongRead {
        server: String,
        path: String,
        long: LongRead,
    },
    #[error("{what} {path}: malformed reply: {reason}")]
    BadReply {
        what: String,
        path: String,
        reason: String,
    },
    #[error("{path}: {reason}")]
    Invalid { path: String, reason: String },
    /// A call the server kept answering "try again later" (NFS4ERR_DELAY,
    /// NFS4ERR_GRACE) until the back-off ran out: its last answer, why it was
    /// retried, and how many times over how long.
    #[error("{last} ({why}; retried {retries} times over {secs:.1} s)")]
    Retried {
        last: Box<NfsError>,
        why: &'static str,
        retries: u32,
        secs: f64,
    },
}

impl NfsError {
    /// The NFS status, if the server answered with one.
    pub fn status(&self) -> Option<Nfsstat3> {
        match self {
            NfsError::Status { status, .. } => Some(*status),
            NfsError::Retried { last, .. } => last.status(),
            _ => None,
        }
    }

    /// What the status means, whichever version's status it is.
    pub fn kind(&self) -> Option<crate::kinds::ErrorKind> {
        use crate::kinds::ErrorKind as K;
        use crate::proto::nfs4::Nfsstat4 as S4;
        match self {
            NfsError::Status { status, .. } => match status {
                Nfsstat3::NoEnt => Some(K::NotFound),
                Nfsstat3::Exist => Some(K::Exists),
                Nfsstat3::NotDir => Some(K::NotDir),
                Nfsstat3::IsDir => Some(K::IsDir),
                Nfsstat3::NotEmpty => Some(K::NotEmpty),
                Nfsstat3::Acces | Nfsstat3::Perm => Some(K::Access),
                Nfsstat3::NoSpc | Nfsstat3::Dquot => Some(K::NoSpace),
                Nfsstat3::Stale | Nfsstat3::BadHandle => Some(K::Stale),
                _ => None,
            },
            NfsError::Status4 { status, .. } => match status {
                S4::Noent => Some(K::NotFound),
                S4::Exist => Some(K::Exists),
                S4::Notdir => Some(K::NotDir),
                S4::Isdir => Some(K::IsDir),
                S4::Notempty => Some(K::NotEmpty),
                S4::Access | S4::Perm => Some(K::Access),
                S4::Nospc | S4::Dquot => Some(K::NoSpace),
                S4::Stale | S4::Badhandle | S4::Fhexpired => Some(K::Stale),
                _ => None,
            },
            NfsError::Retried { last, .. } => last.kind(),
            _ => None,
        }
    }
}

/// Maps a failed call to an error naming what was called and on what.
pub(crate) fn call_error(what: &str, path: &str, e: CallError) -> NfsError {
    match e {
        CallError::Transport(source) => NfsError::Transport {
            what: what.to_string(),
            path: path.to_string(),
            source,
        },
        CallError::Rpc(source) => NfsError::Rpc {
            what: what.to_string(),
            path: path.to_string(),
            source,
        },
    }
}

pub(crate) fn bad_reply(what: &str, path: &str, e: impl std::fmt::Display) -> NfsError {
    NfsError::BadReply {
        what: what.to_string(),
        path: path.to_string(),
        reason: e.to_string(),
    }
}

/// The READ length rule ([`LongRead`]) for the file reads of both versions, as their
/// error.
pub(crate) fn check_read_len(
    server: &str,
    path: &str,
    asked: u32,
    got: usize,
) -> Result<(), NfsError> {
    LongRead::check(asked, got).map_err(|long| NfsError::LongRead {
        server: server.to_string(),
        path: path.to_string(),
        long,
    })
}

/// Short human meaning of the common statuses.
fn describe(status: Nfsstat3) -> &'static str {
    match status {
        Nfsstat3::Perm => " (not owner)",
        Nfsstat3::NoEnt => " (no such file or directory)",
        Nfsstat3::Io => " (I/O error)",
        Nfsstat3::Acces => " (permission denied)",
        Nfsstat3::Exist => " (file exists)",
        Nfsstat3::NotDir => " (not a directory)",
        Nfsstat3::IsDir => " (is a directory)",
        Nfsstat3::NoSpc => " (no space left on device)",
        Nfsstat3::Rofs => " (read-only file system)",
        Nfsstat3::NameTooLong => " (name too long)",
        Nfsstat3::NotEmpty => " (directory not empty)",
        Nfsstat3::Dquot => " (quota exceeded)",
        Nfsstat3::Stale => " (stale file handle)",
        Nfsstat3::Jukebox => " (server busy, try later)",
        _ => "",
    }
}
