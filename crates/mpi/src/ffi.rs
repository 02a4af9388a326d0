//! Open MPI's C interface, resolved at run time with dlopen/dlsym: the few
//! calls dbio needs and the predefined handles. In Open MPI a handle
//! (`MPI_Comm`, `MPI_Datatype`) is a pointer, and the predefined ones are
//! the addresses of global objects: `MPI_COMM_WORLD` is
//! `&ompi_mpi_comm_world`, `MPI_BYTE` is `&ompi_mpi_byte`, `MPI_INT`
//! `&ompi_mpi_int`.

use std::ffi::{c_char, c_int, c_void, CStr, CString};

use crate::MpiError;

pub type Comm = *mut c_void;
/// MPI_THREAD_FUNNELED in Open MPI's `mpi.h`: the process has threads, only
/// the main thread calls MPI.
pub const THREAD_FUNNELED: c_int = 1;
pub type Datatype = *mut c_void;

type InitThreadFn =
    unsafe extern "C" fn(*mut c_int, *mut *mut *mut c_char, c_int, *mut c_int) -> c_int;
type CommIntFn = unsafe extern "C" fn(Comm, *mut c_int) -> c_int;
type BarrierFn = unsafe extern "C" fn(Comm) -> c_int;
type GatherFn = unsafe extern "C" fn(
    *const c_void,
    c_int,
    Datatype,
    *mut c_void,
    c_int,
    Datatype,
    c_int,
    Comm,
) -> c_int;
type GathervFn = unsafe extern "C" fn(
    *const c_void,
    c_int,
    Datatype,
    *mut c_void,
    *const c_int,
    *const c_int,
    Datatype,
    c_int,
    Comm,
) -> c_int;
type BcastFn = unsafe extern "C" fn(*mut c_void, c_int, Datatype, c_int, Comm) -> c_int;
type FinalizeFn = unsafe extern "C" fn() -> c_int;
type AbortFn = unsafe extern "C" fn(Comm, c_int) -> c_int;

/// The loaded library: entry points and predefined handles.
pub struct Lib {
    /// dlopen's handle; never closed (MPI cannot be initialised twice).
    _handle: *mut c_void,
    pub init_thread: InitThreadFn,
    pub comm_rank: CommIntFn,
    pub comm_size: CommIntFn,
    pub barrier: BarrierFn,
    pub gather: GatherFn,
    pub gatherv: GathervFn,
    pub bcast: BcastFn,
    pub finalize: FinalizeFn,
    pub abort: AbortFn,
    pub comm_world: Comm,
    pub byte: Datatype,
    pub int: Datatype,
}

// SAFETY: the handles are addresses of objects that live as long as the
// process; MPI calls are made from one thread at a time (`World` takes
// `&self` but dbio calls MPI from its main thread only).
unsafe impl Send for Lib {}
unsafe impl Sync for Lib {}

fn dlerror() -> String {
    // SAFETY: dlerror returns a thread-local string or null.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: non-null dlerror result is a C string.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

impl Lib {
    /// Loads `name` (a file name dlopen searches for, or a path) with
    /// RTLD_GLOBAL, as Open MPI's own plugins expect to find its symbols.
    pub fn load(name: &str) -> Result<Lib, MpiError> {
        let c = CString::new(name).map_err(|_| MpiError::Load {
            library: name.into(),
            why: "name contains a NUL byte".into(),
        })?;
        // SAFETY: dlopen of a library by name.
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        if handle.is_null() {
            return Err(MpiError::Load {
                library: name.into(),
                why: dlerror(),
            });
        }
        let sym = |s: &str| -> Result<*mut c_void, MpiError> {
            let cs = CString::new(s).expect("symbol names have no NUL");
            // SAFETY: dlsym on a live handle.
            let p = unsafe { libc::dlsym(handle, cs.as_ptr()) };
            if p.is_null() {
                Err(MpiError::Symbol {
                    library: name.into(),
                    symbol: s.into(),
                    why: dlerror(),
                })
            } else {
                Ok(p)
            }
        };
        // SAFETY: each symbol is transmuted to the type of the MPI function
        // of that name (MPI-3 C bindings, as Open MPI 4 declares them).
        unsafe {
            Ok(Lib {
                init_thread: std::mem::transmute::<*mut c_void, InitThreadFn>(sym(
                    "MPI_Init_thread",
                )?),
                comm_rank: std::mem::transmute::<*mut c_void, CommIntFn>(sym("MPI_Comm_rank")?),
                comm_size: std::mem::transmute::<*mut c_void, CommIntFn>(sym("MPI_Comm_size")?),
                barrier: std::mem::transmute::<*mut c_void, BarrierFn>(sym("MPI_Barrier")?),
                gather: std::mem::transmute::<*mut c_void, GatherFn>(sym("MPI_Gather")?),
                gatherv: std::mem::transmute::<*mut c_void, GathervFn>(sym("MPI_Gatherv")?),
                bcast: std::mem::transmute::<*mut c_void, BcastFn>(sym("MPI_Bcast")?),
                finalize: std::mem::transmute::<*mut c_void, FinalizeFn>(sym("MPI_Finalize")?),
                abort: std::mem::transmute::<*mut c_void, AbortFn>(sym("MPI_Abort")?),
                comm_world: sym("ompi_mpi_comm_world")?,
                byte: sym("ompi_mpi_byte")?,
                int: sym("ompi_mpi_int")?,
                _handle: handle,
            })
        }
    }
}
