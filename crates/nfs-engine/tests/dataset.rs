//! The data set through NFS (v3 and v4.1) against nfs-ganesha: created, reused on the
//! next prepare without writing, and guarded: a file dbio did not create
//! (a foreign one, or zeros once creation has finished) is refused and
//! left as it was.

#[path = "../../nfs/tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use dbio_nfs::{ClientConfig, NfsUrl};
use dbio_nfs_engine::dataset::{open_existing, prepare};
use dbio_nfs_engine::NfsTarget;
use dbio_workload::dataset::{parse_header, Manifest, MANIFEST_NAME};
use dbio_workload::{Dataset, DatasetError, DatasetSpec};

fn open(server: &common::Server, dir: &str) -> Arc<NfsTarget> {
    let url = server.url(&format!("/export/{dir}"));
    NfsTarget::open(
        &ClientConfig {
            conns: 1,
            ..ClientConfig::new(NfsUrl::parse(&url).unwrap())
        },
        &url,
    )
    .unwrap()
}

fn prep(t: &Arc<NfsTarget>, force: bool) -> Result<Dataset, DatasetError> {
    let spec = DatasetSpec::new(4 << 20, 8192).unwrap();
    prepare(t, &spec, force, &AtomicBool::new(false), &mut |_, _| {})
}

fn writes(t: &NfsTarget) -> u64 {
    let calls = t.pool.procs().snapshot();
    calls.iter().find(|c| c.0 == "WRITE").map_or(0, |c| c.1)
}

fn manifest(dir: &Path) -> Manifest {
    serde_json::from_slice(&std::fs::read(dir.join(MANIFEST_NAME)).unwrap()).unwrap()
}

#[test]
fn nfs_data_set_is_created_reused_and_guarded() {
    let Some(server) = common::Server::start("dataset") else {
        return;
    };
    let t = open(&server, "ds");
    let dir = server.export_dir.join("ds");

    // Created: every file its size, its header naming the data set.
    let ds = prep(&t, false).unwrap();
    assert!(ds.created);
    assert!(ds.backend.is_some());
    let m = manifest(&dir);
    assert!(m.complete);
    assert_eq!(m.id, format!("{:016x}", ds.id));
    for f in &ds.files {
        let data = std::fs::read(dir.join(&f.name)).unwrap();
        assert_eq!(data.len() as u64, f.size, "{}", f.name);
        assert_eq!(parse_header(&data).unwrap().id, ds.id, "{}", f.name);
        let mode = std::fs::metadata(dir.join(&f.name)).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600,
            "{}",
            f.name
        );
    }
    let (listed, complete) = open_existing(&t).unwrap();
    assert!(complete);
    assert_eq!((listed.id, &listed.files), (ds.id, &ds.files));

    // Reused: same id, nothing written.
    let before = writes(&t);
    let again = prep(&t, false).unwrap();
    assert!(!again.created);
    assert_eq!(again.id, ds.id);
    assert_eq!(writes(&t), before);

    // Guarded: another's file in place of one of ours is refused, untouched.
    let redo = dir.join("dbio-redo-01.log");
    std::fs::write(&redo, b"precious").unwrap();
    let err = prep(&t, false).unwrap_err();
    assert!(
        matches!(err, DatasetError::Foreign(ref p) if p.ends_with("ds/dbio-redo-01.log")),
        "{err}"
    );
    assert!(err.to_string().contains("--force-overwrite"), "{err}");
    assert_eq!(std::fs::read(&redo).unwrap(), b"precious");
    assert_eq!(manifest(&dir).id, m.id);

    // Zeros where a finished creation wrote a header are not ours either...
    let size = ds.files.last().unwrap().size as usize;
    std::fs::write(&redo, vec![0u8; size]).unwrap();
    assert!(matches!(prep(&t, false), Err(DatasetError::Foreign(_))));
    assert!(std::fs::read(&redo).unwrap().iter().all(|&b| b == 0));
    // ...but are while the manifest says creation did not finish (a crash
    // before the header was written): the data set is created again.
    let mut m = manifest(&dir);
    m.complete = false;
    std::fs::write(dir.join(MANIFEST_NAME), serde_json::to_vec(&m).unwrap()).unwrap();
    let fresh = prep(&t, false).unwrap();
    assert!(fresh.created);
    assert_ne!(fresh.id, ds.id);
    assert!(manifest(&dir).complete);
    let head = std::fs::read(&redo).unwrap();
    assert_eq!(parse_header(&head).unwrap().id, fresh.id);
}

#[test]
fn foreign_file_in_a_new_directory_is_refused() {
    let Some(server) = common::Server::start("dsforeign") else {
        return;
    };
    let dir = server.export_dir.join("theirs");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("dbio-data-01.dbf"), b"their data").unwrap();
    let t = open(&server, "theirs");
    let err = prep(&t, false).unwrap_err();
    assert!(matches!(err, DatasetError::Foreign(_)), "{err}");
    assert_eq!(
        std::fs::read(dir.join("dbio-data-01.dbf")).unwrap(),
        b"their data"
    );
    assert!(!dir.join(MANIFEST_NAME).exists());
    assert_eq!(writes(&t), 0);
    // Forced, it is replaced by a data set of dbio's.
    let ds = prep(&t, true).unwrap();
    assert!(ds.created);
    let data = std::fs::read(dir.join("dbio-data-01.dbf")).unwrap();
    assert_eq!(parse_header(&data).unwrap().id, ds.id);
}

fn open_v41(server: &common::Server, dir: &str) -> Arc<NfsTarget> {
    let url = format!("nfs://{}/export/{dir}?version=4.1", server.addr);
    NfsTarget::open(
        &ClientConfig {
            conns: 1,
            ..ClientConfig::new(NfsUrl::parse(&url).unwrap())
        },
        &url,
    )
    .unwrap()
}

/// The same data-set directory over NFSv4.1: missing parents made owner-only, files
/// owner-only at their size with dbio's header, reused without writing.
#[test]
fn nfs41_data_set_is_created_in_new_directories_and_reused() {
    let Some(server) = common::Server::start("dataset41") else {
        return;
    };
    let t = open_v41(&server, "a/b/ds");
    let dir = server.export_dir.join("a/b/ds");
    let ds = prep(&t, false).unwrap();
    assert!(ds.created);
    for d in ["a", "a/b", "a/b/ds"] {
        let meta = std::fs::metadata(server.export_dir.join(d)).unwrap();
        assert!(meta.is_dir(), "{d}");
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
            0o700,
            "{d}"
        );
    }
    for f in &ds.files {
        let data = std::fs::read(dir.join(&f.name)).unwrap();
        assert_eq!(data.len() as u64, f.size, "{}", f.name);
        assert_eq!(parse_header(&data).unwrap().id, ds.id, "{}", f.name);
    }
    assert!(manifest(&dir).complete);
    assert!(!dir.join(format!(".{MANIFEST_NAME}.tmp")).exists());
    let before = writes(&t);
    let again = prep(&t, false).unwrap();
    assert_eq!((again.created, again.id), (false, ds.id));
    assert_eq!(writes(&t), before);
    assert!(t.warnings().is_empty(), "{:?}", t.warnings());
}

/// A file where the data-set directory (or one of its parents) should be is named as
/// not a directory, over either version.
#[test]
fn a_file_in_place_of_the_directory_is_not_a_directory() {
    let Some(server) = common::Server::start("dsnotdir") else {
        return;
    };
    std::fs::write(server.export_dir.join("plain"), b"x").unwrap();
    for t in [open(&server, "plain/ds"), open_v41(&server, "plain/ds")] {
        let err = prep(&t, false).unwrap_err();
        assert!(
            matches!(err, DatasetError::NotDir(ref p) if p.ends_with("/export/plain")),
            "{err}"
        );
    }
}
