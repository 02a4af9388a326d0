//! The run's opens against a scripted NFSv4.1 server that refuses OPEN by file handle
//! (ganesha never does; some servers do): the target opens each data file by name in
//! its directory instead, with no warning, and the run's I/O carries that open's
//! stateid. A server that refuses OPEN by name as well leaves the file's I/O anonymous
//! with one warning line that says so. Over pNFS (the same script as metadata server
//! and as data server), the layout is asked with the open by name, and at the run's
//! end the data server's UNSTABLE writes are COMMITted and LAYOUTCOMMITted before the
//! open is closed.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use dbio_engine::{Completion, Durability, Engine, EngineConfig, FileSpec, IoDir, IoRequest};
use dbio_nfs::proto::nfs4::Stateid;
use dbio_nfs::{ClientConfig, NfsUrl};
use dbio_nfs_engine::engine::NfsEngine;
use dbio_nfs_engine::NfsTarget;

#[path = "../../nfs/tests/common/v41_open_script.rs"]
mod v41_open_script;
#[path = "../../nfs/tests/common/v41_script.rs"]
mod v41_script;
use v41_open_script::{shown, Log, Options, BY_NAME, FILE_SIZE, LAYOUT};

fn target(refuse_by_name: bool) -> (Arc<NfsTarget>, Log) {
    let log = Log::default();
    let addr = v41_open_script::start(refuse_by_name, log.clone());
    let url = format!("nfs://{addr}/export?version=4.1");
    (
        NfsTarget::open(
            &ClientConfig {
                conns: 1,
                ..ClientConfig::new(NfsUrl::parse(&url).unwrap())
            },
            &url,
        )
        .unwrap(),
        log,
    )
}

fn engine(t: &Arc<NfsTarget>) -> NfsEngine {
    let cfg = EngineConfig {
        files: vec![FileSpec {
            path: PathBuf::from("export/f.dat"),
            size: FILE_SIZE,
            buffered: false,
            direct: false,
        }],
        depth: 2,
        max_io: 8192,
        direct: true,
        write: true,
        shared_buffers: false,
        io_workers: 0,
        io_workers_from: 0,
        submitted: Default::default(),
        no_read_ahead: false,
    };
    NfsEngine::open(t.clone(), &cfg).unwrap()
}

/// One 8 KiB I/O (a WRITE asked FILE_SYNC): its result.
fn io(e: &mut NfsEngine, dir: IoDir) -> Result<u32, String> {
    io_as(e, dir, true)
}

/// One 8 KiB I/O, a WRITE asked FILE_SYNC if `sync`, else UNSTABLE.
fn io_as(e: &mut NfsEngine, dir: IoDir, sync: bool) -> Result<u32, String> {
    let req = IoRequest {
        file: 0,
        offset: 8192,
        len: 8192,
        dir,
        slot: 0,
        durability: if sync {
            Durability::Dsync
        } else {
            Durability::None
        },
        tag: 1,
    };
    e.submit(req).map_err(|e| e.to_string())?;
    e.commit().unwrap();
    let mut out: Vec<Completion> = Vec::new();
    assert_eq!(e.reap(1, Duration::from_secs(10), &mut out).unwrap(), 1);
    out.pop().unwrap().result.map_err(|e| e.to_string())
}

fn entries(log: &Log, prefix: &str) -> Vec<String> {
    let l = log.lock().unwrap();
    l.iter()
        .filter(|e| e.starts_with(prefix))
        .cloned()
        .collect()
}

#[test]
fn open_by_handle_refused_opens_by_name_and_the_io_carries_that_open() {
    let (t, log) = target(false);
    let mut e = engine(&t);
    assert_eq!(e.stateid(0), Some(BY_NAME));
    assert!(t.warnings().is_empty(), "{:?}", t.warnings());
    assert_eq!(
        entries(&log, "OPEN"),
        ["OPEN by handle", "OPEN by name f.dat"]
    );
    assert_eq!(io(&mut e, IoDir::Write), Ok(8192));
    assert_eq!(io(&mut e, IoDir::Read), Ok(8192));
    let by_name = shown(BY_NAME);
    assert_eq!(
        entries(&log, "WRITE")
            .into_iter()
            .chain(entries(&log, "READ"))
            .collect::<Vec<_>>(),
        [format!("WRITE {by_name}"), format!("READ {by_name}")]
    );
    // The open is given back at the end.
    drop(e);
    drop(t);
    assert_eq!(entries(&log, "CLOSE"), [format!("CLOSE {by_name}")]);
}

#[test]
fn open_refused_by_handle_and_by_name_goes_anonymous_with_one_warning() {
    let (t, log) = target(true);
    let mut e = engine(&t);
    assert_eq!(e.stateid(0), None);
    assert_eq!(
        entries(&log, "OPEN"),
        ["OPEN by handle", "OPEN by name f.dat"]
    );
    let w = t.warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(!w[0].contains('\n'), "{w:?}");
    assert!(w[0].contains("export/f.dat"), "{w:?}");
    assert!(w[0].contains("cannot open for the run"), "{w:?}");
    assert!(w[0].contains("anonymous stateid"), "{w:?}");
    assert_eq!(io(&mut e, IoDir::Write), Ok(8192));
    assert_eq!(
        entries(&log, "WRITE"),
        [format!("WRITE {}", shown(Stateid::ANONYMOUS))]
    );
}

#[test]
fn pnfs_run_end_commits_the_data_servers_writes_before_closing_the_open() {
    let ds_log = Log::default();
    let ds = v41_open_script::start_with(
        Options {
            committed: Some(0), // UNSTABLE4
            ..Options::default()
        },
        ds_log.clone(),
    );
    let log = Log::default();
    let mds = v41_open_script::start_with(
        Options {
            data_server: Some(ds),
            ..Options::default()
        },
        log.clone(),
    );
    let url = format!("nfs://{mds}/export?version=pnfs");
    let t = NfsTarget::open(
        &ClientConfig {
            conns: 1,
            ..ClientConfig::new(NfsUrl::parse(&url).unwrap())
        },
        &url,
    )
    .unwrap();
    let mut e = engine(&t);
    assert_eq!(e.stateid(0), Some(BY_NAME));
    assert!(t.warnings().is_empty(), "{:?}", t.warnings());
    // The layout was asked with the open by name.
    assert!(
        entries(&log, "LAYOUTGET") == [format!("LAYOUTGET {}", shown(BY_NAME))],
        "{:?}",
        log.lock().unwrap()
    );
    assert_eq!(io_as(&mut e, IoDir::Write, false), Ok(8192));
    assert_eq!(
        entries(&ds_log, "WRITE"),
        [format!("WRITE {}", shown(BY_NAME))]
    );
    assert!(
        entries(&log, "WRITE").is_empty(),
        "through the metadata server"
    );
    drop(e);
    drop(t);
    assert_eq!(entries(&ds_log, "COMMIT"), ["COMMIT"]);
    let l = log.lock().unwrap().clone();
    let at = |what: &str| l.iter().position(|e| e.starts_with(what));
    // 8 KiB at 8 KiB: the last byte written is 16383; the layout's own stateid.
    let want = format!("LAYOUTCOMMIT {} last=Some(16383)", shown(LAYOUT));
    assert_eq!(
        at("LAYOUTCOMMIT").map(|i| l[i].clone()),
        Some(want),
        "{l:?}"
    );
    assert!(at("LAYOUTCOMMIT") < at("CLOSE"), "{l:?}");
    assert!(at("CLOSE") < at("LAYOUTRETURN"), "{l:?}");
}
