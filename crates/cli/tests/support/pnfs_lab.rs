//! Runs against the pNFS lab of scripts/pnfs-lab (the lab itself:
//! `nfs/tests/common/pnfs_lab.rs`): its URL, and the data set a timed run starts from.

use super::dbio;

/// The size of the data set [`prepare`] lays out; runs over it name the same size.
pub const SIZE: &str = "16MiB";

/// The one data file of that data set, from the root of the lab's volume.
pub const DATA_FILE: &str = "dbio/dbio-data-01.dbf";

/// The lab's data set directory through `host` (an address, or `address:port`), by
/// pNFS, with every file's layout fetched again each `layout_refresh` seconds (0: only
/// after a data server fails).
pub fn url(host: &str, layout_refresh: u32) -> String {
    format!("nfs://{host}/gv0/dbio?version=pnfs&layout_refresh={layout_refresh}")
}

/// Lays out the data set of `url` ([`SIZE`], one data file) with a short run, which
/// must succeed, so that a later run's time is all I/O; `more` are further options of
/// that run (`--verify`: the data written verifiable).
pub fn prepare(url: &str, more: &[&str]) {
    let run = ["run", "--target", url, "--size", SIZE];
    let short = ["--workload", "single-block-read", "--loops", "10"];
    let st = dbio(&[&run[..], &short[..], more].concat());
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
}
