//! dbio-diag: the operating system seen from a storage benchmark. Small
//! probes, each a function from the system's state to data:
//!
//! - [`blockdev`]: the block devices under a path (partition to disk, loop
//!   device to the device of its backing file, device-mapper and md members).
//! - [`cache`]: whether a data set fits in the page cache that could serve its
//!   reads (this host's, or an NFS server's on this host).
//! - [`diskstats`] and [`hostcpu`]: /proc/diskstats and /proc/stat as the
//!   `procfs` crate parses them, and the `iostat -x` / `mpstat` figures of two
//!   readings.
//! - [`kernel_files`]: the kernel's one-value files that `procfs` does not
//!   read (a sysctl of sunrpc, a block queue's scheduler and depth in sysfs).
//! - [`loopfs`]: a file system on a loop device that dbio makes on its own
//!   image file and always takes down again (`dbio age`, the tests).
//! - [`knfs_sampler`]: a thread that reads them beside a run on a kernel NFS mount.
//! - [`mountstats`]: /proc/self/mountstats parsed, the kernel NFS client's
//!   counters of one mount, and the result's `kernel_nfs` section of two readings.
//! - [`pagecache`]: dbio in a memory cgroup of its own, so that its buffered I/O
//!   goes through a page cache of a chosen size.
//! - [`sampler`]: a thread that reads both once a second beside a run and
//!   hands back the result's `devices` section.
//!
//! Linux only; elsewhere the probes find nothing.

pub mod blockdev;
pub mod cache;
pub mod diskstats;
pub mod doctor;
pub mod doctor_nfs;
mod error;
pub mod frag;
pub mod hostcpu;
pub mod kernel_files;
pub mod knfs_sampler;
pub mod loopfs;
pub mod mountstats;
pub mod pagecache;
pub mod sampler;

pub use blockdev::{devices_under, BlockDevice};
pub use error::DiagError;
pub use knfs_sampler::KernelNfsSampler;
pub use sampler::Sampler;
