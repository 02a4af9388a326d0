//! Kinds every version shares, in a module of their own so that the error type, the
//! file API and the data path can all name them without importing one another.

/// What an error status means, whichever version's status it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    NotFound,
    Exists,
    NotDir,
    IsDir,
    NotEmpty,
    Access,
    NoSpace,
    Stale,
}

/// How durable a WRITE must be before its reply (numbered as both versions' wire
/// numbers it: `stable_how` and `stable_how4`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stable {
    /// In the server's memory; a later COMMIT makes it durable.
    Unstable = 0,
    /// The data on stable storage (not necessarily the metadata).
    DataSync = 1,
    /// Data and metadata on stable storage.
    FileSync = 2,
}

impl Stable {
    /// The stability of a wire number; an unknown one is taken as the weakest.
    pub fn from_wire(n: u32) -> Stable {
        match n {
            2 => Stable::FileSync,
            1 => Stable::DataSync,
            _ => Stable::Unstable,
        }
    }
}
