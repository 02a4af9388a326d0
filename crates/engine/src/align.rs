//! What direct I/O on a file must be aligned to.

use std::path::Path;

/// The offset and length unit direct I/O on the file at `path` must keep
/// (`statx`'s `stx_dio_offset_align`, Linux 6.1 and later): 512 on most
/// disks, 4096 on a device of 4 KiB logical blocks (zram, 4Kn drives).
/// None where the kernel or the file system does not say.
pub fn direct_io_alignment(path: &Path) -> Option<u32> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: an all-zero statx is a valid value to be filled in.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a writable statx.
    let rc = unsafe { libc::statx(libc::AT_FDCWD, c.as_ptr(), 0, libc::STATX_DIOALIGN, &mut st) };
    if rc != 0 || st.stx_mask & libc::STATX_DIOALIGN == 0 || st.stx_dio_offset_align == 0 {
        return None;
    }
    Some(st.stx_dio_offset_align)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_says_its_alignment_or_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        if let Some(a) = direct_io_alignment(&f) {
            assert!(a.is_power_of_two() && (512..=65536).contains(&a), "{a}");
        }
        assert_eq!(direct_io_alignment(&dir.path().join("missing")), None);
    }
}
