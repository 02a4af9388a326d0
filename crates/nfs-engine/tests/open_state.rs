//! The run's opens against nfs-ganesha: over NFSv4.1 the target opens each data file
//! once and the engine's I/O carries that open's stateid (shown on the wire: once the
//! open is closed behind the engine's back, the server refuses its READs, which an
//! anonymous READ would not be); a file the server will not open goes anonymous with a
//! warning for the CLI; NFSv3 has no state.

#[path = "../../nfs/tests/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use dbio_engine::{Completion, Durability, Engine, EngineConfig, FileSpec, IoDir, IoRequest};
use dbio_nfs::fs::OpenFile;
use dbio_nfs::proto::nfs4::Stateid;
use dbio_nfs::{ClientConfig, NfsUrl};
use dbio_nfs_engine::engine::NfsEngine;
use dbio_nfs_engine::NfsTarget;

const SIZE: u64 = 1 << 20;

fn v41_target(server: &common::Server, query: &str) -> Arc<NfsTarget> {
    let url = format!("nfs://{}/export?version=4.1{query}", server.addr);
    NfsTarget::open(
        &ClientConfig {
            conns: 1,
            ..ClientConfig::new(NfsUrl::parse(&url).unwrap())
        },
        &url,
    )
    .unwrap()
}

fn engine(t: &Arc<NfsTarget>, rel: &str) -> NfsEngine {
    let cfg = EngineConfig {
        files: vec![FileSpec {
            path: PathBuf::from(rel),
            size: SIZE,
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

/// One 8 KiB I/O on slot 0 at offset 8192: its result.
fn io(e: &mut NfsEngine, dir: IoDir) -> Result<u32, String> {
    e.submit(IoRequest {
        file: 0,
        offset: 8192,
        len: 8192,
        dir,
        slot: 0,
        durability: Durability::Dsync,
        tag: 7,
    })
    .map_err(|e| e.to_string())?;
    e.commit().unwrap();
    let mut out: Vec<Completion> = Vec::new();
    assert_eq!(e.reap(1, Duration::from_secs(10), &mut out).unwrap(), 1);
    out.pop().unwrap().result.map_err(|e| e.to_string())
}

#[test]
fn v41_io_carries_the_runs_open_stateid() {
    let Some(server) = common::Server::start("openstate") else {
        return;
    };
    std::fs::write(server.export_dir.join("f.dat"), vec![0u8; SIZE as usize]).unwrap();
    let t = v41_target(&server, "");
    let mut e = engine(&t, "export/f.dat");
    let stateid = e.stateid(0).expect("an open stateid");
    assert_ne!(stateid, Stateid::ANONYMOUS);
    assert!(t.warnings().is_empty(), "{:?}", t.warnings());
    // A second engine shares the run's open.
    assert_eq!(engine(&t, "export/f.dat").stateid(0), Some(stateid));

    e.buffer(0).fill(0x5a);
    assert_eq!(io(&mut e, IoDir::Write), Ok(8192));
    assert_eq!(io(&mut e, IoDir::Read), Ok(8192));
    let on_disk = std::fs::read(server.export_dir.join("f.dat")).unwrap();
    assert!(on_disk[8192..16384].iter().all(|&b| b == 0x5a));

    // Closed behind the engine's back, the open's stateid is no longer the server's:
    // the READ that carries it is refused (an anonymous one would pass).
    let handle = t.handle("export/f.dat").unwrap();
    let open = OpenFile {
        handle,
        stateid: Some(stateid),
        attr: None,
        rel: "export/f.dat".into(),
    };
    t.pool.block_on(t.fs().close(open)).unwrap();
    let refused = io(&mut e, IoDir::Read).unwrap_err();
    assert!(refused.contains("STATEID"), "{refused}");
}

#[test]
fn v41_file_the_server_will_not_open_goes_anonymous_with_a_warning() {
    let Some(server) = common::Server::start("openrefused") else {
        return;
    };
    let file = server.export_dir.join("locked.dat");
    std::fs::write(&file, vec![0u8; SIZE as usize]).unwrap();
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    // Someone other than the owner: neither OPEN by handle nor by name is allowed.
    let t = v41_target(&server, "&uid=54321&gid=54321");
    let e = engine(&t, "export/locked.dat");
    assert_eq!(e.stateid(0), None);
    let warnings = t.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("/export/locked.dat"), "{warnings:?}");
    assert!(
        warnings[0].contains("cannot open for the run"),
        "{warnings:?}"
    );
    assert!(warnings[0].contains("anonymous stateid"), "{warnings:?}");
    // Asked again (another user's engine), the refusal is not repeated.
    assert_eq!(engine(&t, "export/locked.dat").stateid(0), None);
    assert_eq!(t.warnings().len(), 1);
}

#[test]
fn v3_io_has_no_state() {
    let Some(server) = common::Server::start("openv3") else {
        return;
    };
    std::fs::write(server.export_dir.join("f.dat"), vec![0u8; SIZE as usize]).unwrap();
    let url = server.url("/export");
    let t = NfsTarget::open(
        &ClientConfig {
            conns: 1,
            ..ClientConfig::new(NfsUrl::parse(&url).unwrap())
        },
        &url,
    )
    .unwrap();
    let mut e = engine(&t, "f.dat");
    assert_eq!(e.stateid(0), None);
    assert_eq!(io(&mut e, IoDir::Read), Ok(8192));
    assert!(t.warnings().is_empty());
}
