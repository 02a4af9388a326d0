use super::*;
use crate::content;
use dbio_engine::EngineKind;
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::Ordering;

fn opts(force: bool) -> PrepareOptions {
    PrepareOptions {
        engine: EngineKind::Psync,
        direct: false,
        force_overwrite: force,
    }
}

fn prep(dir: &Path, mib: u64, force: bool) -> Result<Dataset, DatasetError> {
    let spec = DatasetSpec::new(mib << 20, 8192).unwrap();
    prepare(
        dir,
        &spec,
        &opts(force),
        &AtomicBool::new(false),
        &mut |_, _| {},
    )
}

#[test]
fn creates_then_reuses() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ds");
    let mut last = (0, 0);
    let spec = DatasetSpec::new(8 << 20, 8192).unwrap();
    let ds = prepare(
        &dir,
        &spec,
        &opts(false),
        &AtomicBool::new(false),
        &mut |d, t| last = (d, t),
    )
    .unwrap();
    assert!(ds.created);
    assert_eq!(last.0, last.1);
    assert_eq!(last.1, ds.total_bytes());
    assert_eq!(
        fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    for f in &ds.files {
        let path = dir.join(&f.name);
        let meta = fs::metadata(&path).unwrap();
        assert_eq!(meta.len(), f.size);
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let data = fs::read(&path).unwrap();
        let h = parse_header(&data).unwrap();
        assert_eq!(h.id, ds.id);
        // Block 1 holds its own PRNG content, never zeros.
        let mut want = vec![0u8; 8192];
        let idx = ds.files.iter().position(|x| x.name == f.name).unwrap() as u32;
        content::fill(&mut want, content::block_seed(ds.id, idx, 1, 0));
        // With its verify head (per block, or per sector in the redo log).
        let us = crate::verify::unit_size(f.kind, 8192) as usize;
        crate::verify::stamp_units(&mut want, us, ds.id, idx, 8192 / us as u64, 0);
        assert_eq!(&data[8192..16384], &want[..]);
        assert!(data.chunks(4096).all(|c| c.iter().any(|&b| b != 0)));
    }
    // The verify map of a fresh data set is owner-only too.
    let map = fs::metadata(dir.join(crate::verify::MAP_NAME)).unwrap();
    assert_eq!(map.permissions().mode() & 0o777, 0o600);
    let again = prep(&dir, 8, false).unwrap();
    assert!(!again.created);
    assert_eq!(again.id, ds.id);
    // Another size makes a new data set over dbio's own files.
    let bigger = prep(&dir, 16, false).unwrap();
    assert!(bigger.created);
    assert_ne!(bigger.id, ds.id);
}

#[test]
fn refuses_files_it_did_not_create() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fs::write(dir.join("dbio-data-01.dbf"), b"precious").unwrap();
    fs::write(dir.join("unrelated.txt"), b"fine").unwrap();
    let err = prep(dir, 8, false).unwrap_err();
    assert!(
        matches!(err, DatasetError::Foreign(ref p) if p.ends_with("dbio-data-01.dbf")),
        "{err}"
    );
    assert_eq!(fs::read(dir.join("dbio-data-01.dbf")).unwrap(), b"precious");
    let ds = prep(dir, 8, true).unwrap();
    assert!(ds.created);
    assert_eq!(fs::read(dir.join("unrelated.txt")).unwrap(), b"fine");
}

#[test]
fn refuses_a_replaced_file_even_with_a_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    prep(tmp.path(), 8, false).unwrap();
    fs::write(tmp.path().join("dbio-redo-01.log"), vec![1u8; 4096]).unwrap();
    assert!(matches!(
        prep(tmp.path(), 8, false),
        Err(DatasetError::Foreign(_))
    ));
}

#[test]
fn foreign_manifest_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join(MANIFEST_NAME), b"{}").unwrap();
    assert!(matches!(
        prep(tmp.path(), 8, false),
        Err(DatasetError::Foreign(_))
    ));
}

#[test]
fn missing_parent_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let err = prep(&tmp.path().join("a/b"), 8, false).unwrap_err();
    assert!(matches!(err, DatasetError::NoParent { .. }));
    assert!(err.to_string().contains("does not exist"));
}

#[test]
fn stop_interrupts_creation_and_leaves_it_incomplete() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = DatasetSpec::new(8 << 20, 8192).unwrap();
    let stop = AtomicBool::new(false);
    let err = prepare(tmp.path(), &spec, &opts(false), &stop, &mut |d, _| {
        if d >= 2 << 20 {
            stop.store(true, Ordering::Relaxed);
        }
    })
    .unwrap_err();
    assert!(matches!(err, DatasetError::Interrupted));
    let m: Manifest =
        serde_json::from_slice(&fs::read(tmp.path().join(MANIFEST_NAME)).unwrap()).unwrap();
    assert!(!m.complete);
    // Next time it is created again, over its own files without force.
    assert!(prep(tmp.path(), 8, false).unwrap().created);
}

#[test]
fn spec_checks_and_layout() {
    assert!(DatasetSpec::new(1 << 30, 3000).is_err());
    assert!(DatasetSpec::new(1 << 20, 8192).is_err());
    let files = DatasetSpec::new(1 << 30, 8192).unwrap().files();
    assert_eq!(files.iter().filter(|f| f.kind == FileKind::Data).count(), 4);
    assert_eq!(
        files
            .iter()
            .filter(|f| f.kind == FileKind::Data)
            .map(|f| f.size)
            .sum::<u64>(),
        1 << 30
    );
    assert_eq!(files.last().unwrap().kind, FileKind::Redo);
    assert_eq!(files.last().unwrap().size, 128 << 20);
}

#[test]
fn header_round_trips() {
    let f = DatasetFile {
        name: "x".into(),
        kind: FileKind::Redo,
        size: 1 << 20,
    };
    let text = header_text(0xabc, 3, &f, 8192);
    let h = parse_header(text.as_bytes()).unwrap();
    assert_eq!(
        (h.id, h.file, h.kind.as_str(), h.size, h.block_size),
        (0xabc, 3, "redo", 1 << 20, 8192)
    );
    assert!(parse_header(b"precious data").is_none());
}
