//! The page cache warmed before a replay's reads: the blocks the simulated buffer
//! pool's warm-up missed, read through the page cache as a server that has run a
//! while read them, so that the run starts with the cache such a server has.

use std::os::fd::AsRawFd;

use dbio_engine::FileSpec;
use dbio_workload::Layout;

/// Reads `blocks` (global usable block numbers of `layout`) of `files` through the
/// page cache: first all asked at once (`POSIX_FADV_WILLNEED`, which the block layer
/// merges), then each read, which waits for what is still in flight. Returns how
/// many blocks were read. Stops early when `stop` says so.
pub(crate) fn page_cache(
    files: &[FileSpec],
    layout: &Layout,
    blocks: &[u64],
    stop: &std::sync::atomic::AtomicBool,
) -> std::io::Result<usize> {
    let bs = layout.block_size as usize;
    let mut open: Vec<Option<std::fs::File>> = (0..files.len()).map(|_| None).collect();
    let mut places = Vec::with_capacity(blocks.len());
    for &b in blocks {
        let (f, off) = layout.place(b);
        let Some(spec) = files.get(f as usize) else {
            continue;
        };
        if open[f as usize].is_none() {
            let file = std::fs::File::open(&spec.path).map_err(|e| {
                std::io::Error::new(e.kind(), format!("{}: {e}", spec.path.display()))
            })?;
            open[f as usize] = Some(file);
        }
        places.push((f as usize, off));
    }
    for &(f, off) in &places {
        if let Some(file) = &open[f] {
            // SAFETY: an open descriptor; the advice only starts reads.
            unsafe {
                libc::posix_fadvise(
                    file.as_raw_fd(),
                    off as libc::off_t,
                    bs as libc::off_t,
                    libc::POSIX_FADV_WILLNEED,
                );
            }
        }
    }
    let mut buf = vec![0u8; bs];
    let mut n = 0;
    for &(f, off) in &places {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        if let Some(file) = &open[f] {
            std::os::unix::fs::FileExt::read_at(file, &mut buf, off)?;
            n += 1;
        }
    }
    Ok(n)
}
