//! The open a pNFS layout is asked with, against a scripted metadata server that
//! refuses OPEN by file handle (ganesha never does; some servers do): the pool opens
//! a data file by name in its directory and asks LAYOUTGET with that open's stateid,
//! the one its I/O carries. A server that refuses both leaves the file going through
//! the metadata server, the route saying why, and one warning.

use dbio_nfs::fs::Handle;
use dbio_nfs::pool::Pool;
use dbio_nfs::proto::nfs4::{Fh4, Stateid};
use dbio_nfs::ClientConfig;
use dbio_nfs::NfsUrl;

#[path = "common/v41_open_script.rs"]
mod v41_open_script;
#[path = "common/v41_script.rs"]
mod v41_script;
use v41_open_script::{shown, Log, BY_NAME};

fn pool(refuse_by_name: bool) -> (Pool, Log) {
    let log = Log::default();
    let addr = v41_open_script::start(refuse_by_name, log.clone());
    let url = NfsUrl::parse(&format!("nfs://{addr}/export?version=pnfs")).unwrap();
    let opts = ClientConfig {
        conns: 1,
        workers: 0,
        ..ClientConfig::new(url.clone())
    };
    (Pool::open(&opts).unwrap().0, log)
}

fn entries(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// The handle the script gives the file, and the file from the export's root.
const FILE: &[u8] = b"f.dat";
const REL: &str = "export/f.dat";

#[test]
fn a_layout_is_asked_with_an_open_by_name_when_open_by_handle_is_refused() {
    let (pool, log) = pool(false);
    let layouts = pool.layouts().unwrap().clone();
    let fh = Fh4::new(FILE).unwrap();
    let file = pool.data_file(Handle::new(FILE).unwrap(), REL).unwrap();
    assert_eq!(file.stateid, Some(BY_NAME));
    let route = layouts
        .route(&fh)
        .expect("the layout fetched with the open");
    assert_eq!(route.open, BY_NAME);
    assert_eq!(
        entries(&log),
        [
            "OPEN by handle".to_string(),
            "OPEN by name f.dat".into(),
            format!("LAYOUTGET {}", shown(BY_NAME)),
        ]
    );
    // The script has no layouts to give: through the metadata server, saying why.
    let why = route
        .through_mds
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(why.contains("LAYOUTUNAVAILABLE"), "{why}");
    assert!(pool.warnings().is_empty(), "{:?}", pool.warnings());
    // Asked for again, and fetched again (the periodic refresh): the one open serves
    // both, none is made again.
    let again = pool.data_file(Handle::new(FILE).unwrap(), REL).unwrap();
    assert_eq!(again.stateid, Some(BY_NAME));
    pool.block_on(layouts.refresh_all("refresh"));
    let l = entries(&log);
    assert_eq!(
        l.iter().filter(|e| e.starts_with("OPEN")).count(),
        2,
        "{l:?}"
    );
    assert_eq!(l.last(), Some(&format!("LAYOUTGET {}", shown(BY_NAME))));
    drop(route);
    drop(pool);
    assert!(
        entries(&log).contains(&format!("CLOSE {}", shown(BY_NAME))),
        "{:?}",
        entries(&log)
    );
}

#[test]
fn refused_by_handle_and_by_name_the_route_says_both() {
    let (pool, log) = pool(true);
    let layouts = pool.layouts().unwrap().clone();
    let fh = Fh4::new(FILE).unwrap();
    let file = pool.data_file(Handle::new(FILE).unwrap(), REL).unwrap();
    assert_eq!(file.stateid, None);
    let route = layouts
        .route(&fh)
        .expect("a route through the metadata server");
    assert_eq!(route.open, Stateid::ANONYMOUS);
    assert!(route.place(0, 8192).is_none());
    assert_eq!(entries(&log), ["OPEN by handle", "OPEN by name f.dat"]);
    let why = route
        .through_mds
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(
        why.contains("by handle") && why.contains("NFS4ERR_NOTSUPP"),
        "{why}"
    );
    assert!(
        why.contains("by name") && why.contains("NFS4ERR_ACCESS"),
        "{why}"
    );
    let w = pool.warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("cannot open for the run"), "{w:?}");
    // Neither asked again nor fetched again: the file has no open to ask with.
    let again = pool.data_file(Handle::new(FILE).unwrap(), REL).unwrap();
    assert_eq!(again.stateid, None);
    pool.block_on(layouts.refresh_all("refresh"));
    assert_eq!(entries(&log), ["OPEN by handle", "OPEN by name f.dat"]);
    assert_eq!(pool.warnings().len(), 1);
}
