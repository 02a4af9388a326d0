//! MPI for dbio: launch, synchronise, gather, nothing more.
//!
//! Under `mpirun` each rank is an ordinary dbio process; this crate finds
//! out which rank it is, holds the ranks together at barriers and brings
//! every rank's bytes (a serialized result) to rank 0. The MPI library is
//! loaded at run time (`dlopen`), so that dbio builds and runs without any
//! MPI installed; it is only looked for when the environment says the
//! process was started by Open MPI's `mpirun` (`OMPI_COMM_WORLD_SIZE` or
//! `PMIX_RANK` set).
//!
//! ```
//! // Outside mpirun there is no world: dbio behaves as a single process.
//! if std::env::var_os("OMPI_COMM_WORLD_SIZE").is_none() && std::env::var_os("PMIX_RANK").is_none() {
//!     assert!(dbio_mpi::World::from_env().unwrap().is_none());
//! }
//! ```

mod ffi;

use std::ffi::c_int;
use std::ptr;

/// Environment variable naming the MPI library to load instead of
/// [`DEFAULT_LIBRARIES`].
pub const LIBRARY_ENV: &str = "DBIO_MPI_LIB";

/// The libraries tried in order: Open MPI 4's runtime library (Debian's
/// `libopenmpi3`), then the unversioned name of a development install.
pub const DEFAULT_LIBRARIES: &[&str] = &["libmpi.so.40", "libmpi.so"];

/// What failed, named.
#[derive(Debug, thiserror::Error)]
pub enum MpiError {
    #[error("MPI: cannot load {library}: {why} (install Open MPI's runtime library, e.g. Debian's libopenmpi3, or name it in DBIO_MPI_LIB)")]
    Load { library: String, why: String },
    #[error("MPI: {library} has no symbol {symbol}: {why} (only Open MPI is supported)")]
    Symbol {
        library: String,
        symbol: String,
        why: String,
    },
    #[error("MPI: {call} failed with error code {code}")]
    Call { call: &'static str, code: i32 },
    #[error("MPI: {what}")]
    Invalid { what: String },
}

/// The ranks of this `mpirun` job (MPI_COMM_WORLD), MPI initialised.
pub struct World {
    lib: ffi::Lib,
    rank: usize,
    size: usize,
}

/// True when the environment says this process was started by Open MPI's
/// launcher.
pub fn launched_by_mpirun() -> bool {
    std::env::var_os("OMPI_COMM_WORLD_SIZE").is_some() || std::env::var_os("PMIX_RANK").is_some()
}

fn check(call: &'static str, code: c_int) -> Result<(), MpiError> {
    if code == 0 {
        Ok(())
    } else {
        Err(MpiError::Call { call, code })
    }
}

impl World {
    /// `None` when this process was not started by `mpirun` (nothing is
    /// loaded then); otherwise loads the MPI library, initialises MPI and
    /// asks for rank and size.
    pub fn from_env() -> Result<Option<World>, MpiError> {
        if !launched_by_mpirun() {
            return Ok(None);
        }
        let lib = match std::env::var(LIBRARY_ENV) {
            Ok(name) if !name.is_empty() => ffi::Lib::load(&name)?,
            _ => load_default()?,
        };
        Self::init(lib).map(Some)
    }

    fn init(lib: ffi::Lib) -> Result<World, MpiError> {
        let (mut rank, mut size, mut provided) = (0 as c_int, 0 as c_int, 0 as c_int);
        // SAFETY: MPI_Init_thread with no arguments (dbio's I/O threads
        // never call MPI: FUNNELED), then queries of the world communicator
        // into local integers.
        unsafe {
            check(
                "MPI_Init_thread",
                (lib.init_thread)(
                    ptr::null_mut(),
                    ptr::null_mut(),
                    ffi::THREAD_FUNNELED,
                    &mut provided,
                ),
            )?;
            check("MPI_Comm_rank", (lib.comm_rank)(lib.comm_world, &mut rank))?;
            check("MPI_Comm_size", (lib.comm_size)(lib.comm_world, &mut size))?;
        }
        if rank < 0 || size < 1 || rank >= size {
            return Err(MpiError::Invalid {
                what: format!("rank {rank} of {size}"),
            });
        }
        Ok(World {
            lib,
            rank: rank as usize,
            size: size as usize,
        })
    }

    /// This process's rank, 0..size.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.size
    }

    /// True on rank 0, the one that gathers and writes.
    pub fn is_root(&self) -> bool {
        self.rank == 0
    }

    /// Waits until every rank has called it.
    pub fn barrier(&self) -> Result<(), MpiError> {
        // SAFETY: collective call on the world communicator.
        check("MPI_Barrier", unsafe {
            (self.lib.barrier)(self.lib.comm_world)
        })
    }

    /// Every rank's `data` on rank 0, in rank order (`Some` there, `None`
    /// elsewhere). Collective: every rank must call it. At most 2 GiB in
    /// all (MPI counts are C ints).
    pub fn gather_bytes(&self, data: &[u8]) -> Result<Option<Vec<Vec<u8>>>, MpiError> {
        let len = c_int::try_from(data.len()).map_err(|_| MpiError::Invalid {
            what: format!("{} bytes to gather from one rank", data.len()),
        })?;
        let mut lens = vec![0 as c_int; if self.is_root() { self.size } else { 0 }];
        // SAFETY: one int from each rank into `lens` (size ints on root,
        // unused elsewhere).
        check("MPI_Gather", unsafe {
            (self.lib.gather)(
                (&len as *const c_int).cast(),
                1,
                self.lib.int,
                lens.as_mut_ptr().cast(),
                1,
                self.lib.int,
                0,
                self.lib.comm_world,
            )
        })?;
        let mut displs = Vec::with_capacity(lens.len());
        let mut total: c_int = 0;
        for &l in &lens {
            displs.push(total);
            total = total
                .checked_add(l)
                .filter(|_| l >= 0)
                .ok_or_else(|| MpiError::Invalid {
                    what: "gathered data over 2 GiB".into(),
                })?;
        }
        let mut all = vec![0u8; total as usize];
        // SAFETY: `all` holds the sum of `lens`, at `displs` (root only).
        check("MPI_Gatherv", unsafe {
            (self.lib.gatherv)(
                data.as_ptr().cast(),
                len,
                self.lib.byte,
                all.as_mut_ptr().cast(),
                lens.as_ptr(),
                displs.as_ptr(),
                self.lib.byte,
                0,
                self.lib.comm_world,
            )
        })?;
        if !self.is_root() {
            return Ok(None);
        }
        Ok(Some(
            lens.iter()
                .zip(&displs)
                .map(|(&l, &d)| all[d as usize..(d + l) as usize].to_vec())
                .collect(),
        ))
    }

    /// Rank 0's `value` on every rank.
    pub fn broadcast_u64(&self, value: u64) -> Result<u64, MpiError> {
        let mut buf = value.to_le_bytes();
        // SAFETY: 8 bytes in a local buffer on every rank.
        check("MPI_Bcast", unsafe {
            (self.lib.bcast)(
                buf.as_mut_ptr().cast(),
                8,
                self.lib.byte,
                0,
                self.lib.comm_world,
            )
        })?;
        Ok(u64::from_le_bytes(buf))
    }

    /// Rank 0's `data` on every rank (what other ranks pass is ignored).
    /// At most 2 GiB.
    pub fn broadcast_bytes(&self, data: &[u8]) -> Result<Vec<u8>, MpiError> {
        let len = self.broadcast_u64(data.len() as u64)?;
        let count = c_int::try_from(len).map_err(|_| MpiError::Invalid {
            what: format!("{len} bytes to broadcast"),
        })?;
        let mut buf = if self.is_root() {
            data.to_vec()
        } else {
            vec![0u8; count as usize]
        };
        // SAFETY: `count` bytes in `buf` on every rank.
        check("MPI_Bcast", unsafe {
            (self.lib.bcast)(
                buf.as_mut_ptr().cast(),
                count,
                self.lib.byte,
                0,
                self.lib.comm_world,
            )
        })?;
        Ok(buf)
    }

    /// True on every rank when `flag` is true on any rank. Collective; also
    /// a barrier.
    pub fn any(&self, flag: bool) -> Result<bool, MpiError> {
        Ok(self.max_u8(flag as u8)? == 1)
    }

    /// The largest of every rank's `value`, on every rank. Collective; also
    /// a barrier.
    pub fn max_u8(&self, value: u8) -> Result<u8, MpiError> {
        let all = self.gather_bytes(&[value])?;
        let max = all.map_or(0, |a| {
            a.iter()
                .filter_map(|b| b.first())
                .copied()
                .max()
                .unwrap_or(0)
        });
        Ok(self.broadcast_u64(u64::from(max))? as u8)
    }

    /// Ends MPI on this rank (collective: every rank must call it). A world
    /// dropped without it (an error on this rank) is left for the launcher
    /// to end: MPI_Finalize would wait for ranks that may be waiting at a
    /// barrier for this one.
    pub fn finalize(self) -> Result<(), MpiError> {
        // SAFETY: last MPI call of this process.
        check("MPI_Finalize", unsafe { (self.lib.finalize)() })
    }

    /// Ends the whole job with `code` (every rank), e.g. after an error on
    /// this rank that the others would wait for at the next barrier.
    pub fn abort(&self, code: i32) -> ! {
        // SAFETY: MPI_Abort does not return on success.
        unsafe { (self.lib.abort)(self.lib.comm_world, code) };
        std::process::exit(code)
    }
}

fn load_default() -> Result<ffi::Lib, MpiError> {
    let mut last = None;
    for name in DEFAULT_LIBRARIES {
        match ffi::Lib::load(name) {
            Ok(lib) => return Ok(lib),
            Err(e) => last = Some(e),
        }
    }
    Err(last.expect("at least one library name"))
}

/// This host's name (for the per-host breakdown).
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "unknown".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_world_outside_mpirun() {
        if launched_by_mpirun() {
            return; // the test itself runs under mpirun
        }
        assert!(World::from_env().unwrap().is_none());
    }

    #[test]
    fn a_missing_library_is_named() {
        let e = match ffi::Lib::load("libdbio-no-such-mpi.so.1") {
            Err(e) => e.to_string(),
            Ok(_) => panic!("loaded a library that does not exist"),
        };
        assert!(e.contains("libdbio-no-such-mpi.so.1"), "{e}");
    }

    #[test]
    fn a_library_without_mpi_names_the_symbol() {
        let e = match ffi::Lib::load("libc.so.6") {
            Err(e) => e.to_string(),
            Ok(_) => panic!("libc is not MPI"),
        };
        assert!(e.contains("MPI_Init"), "{e}");
    }

    #[test]
    fn host_name_is_not_empty() {
        assert!(!host_name().is_empty());
    }
}
