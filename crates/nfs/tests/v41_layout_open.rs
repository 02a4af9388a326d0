//! The open a pNFS layout is asked with, against a scripted metadata server that
//! refuses OPEN by file handle (ganesha never does; some servers do): the layouts open
//! the file by name in its directory and ask LAYOUTGET with that open's stateid. A
//! server that refuses both leaves the file going through the metadata server, and
//! the route says why.

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

#[test]
fn a_layout_is_asked_with_an_open_by_name_when_open_by_handle_is_refused() {
    let (pool, log) = pool(false);
    let layouts = pool.layouts().unwrap().clone();
    // The handle the script gives the file.
    let fh = Fh4::new(b"f.dat").unwrap();
    let route = pool
        .block_on(layouts.fetch(fh, "/export/f.dat", "first use"))
        .unwrap();
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
    // Fetched again (the periodic refresh): the open is kept, not made again.
    pool.block_on(layouts.fetch(fh, "/export/f.dat", "refresh"))
        .unwrap();
    assert_eq!(
        entries(&log)
            .iter()
            .filter(|e| e.starts_with("OPEN"))
            .count(),
        2
    );
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
    let fh = Fh4::new(b"f.dat").unwrap();
    let route = pool
        .block_on(layouts.fetch(fh, "/export/f.dat", "first use"))
        .unwrap();
    assert_eq!(route.open, Stateid::ANONYMOUS);
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
}
