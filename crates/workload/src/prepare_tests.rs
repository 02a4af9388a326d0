use super::*;
use crate::namespace::{LocalDir, MAX_SMALL_FILE};
use dbio_engine::EngineKind;
use std::fs;
use std::path::Path;

fn opts(force: bool) -> PrepareOptions {
    PrepareOptions {
        engine: EngineKind::Psync,
        direct: false,
        force_overwrite: force,
    }
}

fn prep(dir: &Path, force: bool) -> Result<Dataset, DatasetError> {
    let spec = DatasetSpec::new(8 << 20, 8192).unwrap();
    prepare(
        &LocalDir::new(dir),
        &spec,
        &opts(force),
        &AtomicBool::new(false),
        &mut |_, _| {},
    )
}

fn manifest(dir: &Path) -> Manifest {
    serde_json::from_slice(&fs::read(dir.join(MANIFEST_NAME)).unwrap()).unwrap()
}

fn set_complete(dir: &Path, complete: bool) {
    let mut m = manifest(dir);
    m.complete = complete;
    fs::write(dir.join(MANIFEST_NAME), serde_json::to_vec(&m).unwrap()).unwrap();
}

#[test]
fn zero_header_is_ours_only_while_creation_is_incomplete() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let first = prep(dir, false).unwrap();
    let redo = dir.join("dbio-redo-01.log");
    let size = fs::metadata(&redo).unwrap().len() as usize;
    // A complete data set has a header in every file: zeros in place of
    // one are someone else's file, left as it is.
    fs::write(&redo, vec![0u8; size]).unwrap();
    let err = prep(dir, false).unwrap_err();
    assert!(
        matches!(err, DatasetError::Foreign(ref p) if p.ends_with("dbio-redo-01.log")),
        "{err}"
    );
    assert!(fs::read(&redo).unwrap().iter().all(|&b| b == 0));
    assert_eq!(manifest(dir).id, format!("{:016x}", first.id));
    // The same file while the manifest says creation did not finish: a
    // crash after creating the file, before its header. Ours: created again.
    set_complete(dir, false);
    let again = prep(dir, false).unwrap();
    assert!(again.created);
    assert!(manifest(dir).complete);
    let head = fs::read(&redo).unwrap();
    assert_eq!(parse_header(&head).unwrap().id, again.id);
}

#[test]
fn foreign_header_is_refused_even_while_creating() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    prep(dir, false).unwrap();
    set_complete(dir, false);
    let data = dir.join("dbio-data-01.dbf");
    fs::write(&data, b"precious, and not zeros").unwrap();
    assert!(matches!(prep(dir, false), Err(DatasetError::Foreign(_))));
    assert_eq!(fs::read(&data).unwrap(), b"precious, and not zeros");
}

#[test]
fn unlisted_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // A manifest that lists no files does not make files under dbio's
    // names its own, zeros or not.
    let spec = DatasetSpec::new(8 << 20, 8192).unwrap();
    let m = Manifest {
        magic: MANIFEST_MAGIC.into(),
        version: DATASET_VERSION,
        id: "0000000000000001".into(),
        block_size: 8192,
        complete: false,
        files: Vec::new(),
    };
    write_manifest(&LocalDir::new(dir), &m).unwrap();
    fs::write(dir.join(&spec.files()[0].name), vec![0u8; 4096]).unwrap();
    assert!(matches!(prep(dir, false), Err(DatasetError::Foreign(_))));
}

#[test]
fn oversized_manifest_is_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let f = fs::File::create(dir.join(MANIFEST_NAME)).unwrap();
    f.set_len(MAX_SMALL_FILE + 1).unwrap();
    let err = prep(dir, false).unwrap_err();
    assert!(matches!(err, DatasetError::TooLarge { .. }), "{err}");
    assert!(err.to_string().contains("--force-overwrite"), "{err}");
    let err = open_existing(&LocalDir::new(dir)).unwrap_err();
    assert!(matches!(err, DatasetError::TooLarge { .. }), "{err}");
    // Forced, it is replaced by a manifest of ours.
    assert!(prep(dir, true).unwrap().created);
    assert!(manifest(dir).complete);
}

#[test]
fn open_existing_lists_without_changing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let err = open_existing(&LocalDir::new(dir)).unwrap_err();
    assert!(err.to_string().contains("not a dbio data set"), "{err}");
    let ds = prep(dir, false).unwrap();
    set_complete(dir, false);
    let (found, complete) = open_existing(&LocalDir::new(dir)).unwrap();
    assert!(!complete && !found.created);
    assert_eq!((found.id, found.files), (ds.id, ds.files));
    assert!(!manifest(dir).complete);
}

#[test]
fn a_file_is_created_new_or_not_at_all() {
    let tmp = tempfile::tempdir().unwrap();
    let ns = LocalDir::new(tmp.path());
    ns.create("f", 1 << 20).unwrap();
    assert_eq!(ns.entry("f").unwrap().unwrap().size, 1 << 20);
    assert!(ns.create("f", 4096).is_err());
    assert_eq!(ns.entry("f").unwrap().unwrap().size, 1 << 20);
    ns.remove("f").unwrap();
    assert_eq!(ns.entry("f").unwrap(), None);
}
