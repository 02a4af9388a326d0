//! The connection pool and the NFS engine against nfs-ganesha: balancing by
//! fewest outstanding requests across connections and paths, path down/up
//! events, and the engine's READ/WRITE round trip with splitting.

#[path = "../../nfs/tests/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::time::Duration;

use dbio_engine::{Completion, Durability, EngineConfig, FileSpec, IoDir, IoRequest};
use dbio_nfs::path::PathSpec;
use dbio_nfs::proto::nfs3::Proc;
use dbio_nfs::router::Route;
use dbio_nfs::{ClientConfig, NfsUrl};
use dbio_nfs::{CompletionQueue, ReplyTo};
use dbio_nfs_engine::NfsTarget;

fn target(server: &common::Server, paths: usize, conns: u32, rw: u32) -> std::sync::Arc<NfsTarget> {
    let ip = server.addr.parse().unwrap();
    let url = server.url("/export");
    let config = ClientConfig {
        conns,
        workers: 1,
        // The first path is the URL's host.
        paths: (1..paths).map(|_| PathSpec::new(ip)).collect(),
        max_transfer: rw,
        ..ClientConfig::new(NfsUrl::parse(&url).unwrap())
    };
    NfsTarget::open(&config, &url).unwrap()
}

#[test]
fn pool_balances_and_tracks_paths() {
    let Some(server) = common::Server::start("pool") else {
        return;
    };
    let t = target(&server, 2, 2, 1 << 20);
    let pool = t.pool.router();
    assert_eq!(pool.channels().len(), 4);
    assert_eq!(pool.paths().len(), 2);

    // Nothing is marked done until reaped, so eight calls spread two per
    // channel: each goes to the channel with the fewest outstanding.
    let q = std::sync::Arc::new(CompletionQueue::new());
    // The mount's own calls (FSINFO) went over these channels too.
    let sends = |pool: &std::sync::Arc<dbio_nfs::router::Router>| -> u64 {
        pool.channels()
            .iter()
            .map(|c| dbio_nfs::ConnStats::get(&c.stats().calls))
            .sum()
    };
    let mounting = sends(pool);
    let mut used = Vec::new();
    for i in 0..8u64 {
        let ch = pool.pick(Route::META, None);
        used.push(ch);
        let call = pool.encode(Proc::Null as u32, |_| {}, bytes::Bytes::new());
        pool.submit(
            ch,
            pool.proc_id(Proc::Null.name()),
            call,
            ReplyTo::Sink(q.clone(), ch as u64 | i << 8),
        );
    }
    for ch in 0..4 {
        assert_eq!(used.iter().filter(|&&c| c == ch).count(), 2, "{used:?}");
        assert_eq!(pool.channels()[ch].outstanding(), 2);
    }
    let mut out = Vec::new();
    while out.len() < 8 {
        assert!(q.wait(8 - out.len(), Duration::from_secs(5), &mut out) > 0);
    }
    for (tag, r) in &out {
        assert!(r.is_ok());
        pool.done((*tag & 0xff) as usize);
    }
    assert!(pool.channels().iter().all(|c| c.outstanding() == 0));
    assert_eq!(sends(pool) - mounting, 8);

    // A failure on path 0 moves work to path 1 and is recorded; the probe
    // finds path 0 answering and brings it back.
    let other = pool.path_failed(0, "test: connection reset").unwrap();
    assert_eq!(pool.channels()[other].path, 1);
    assert!(!pool.paths()[0].is_up());
    for _ in 0..10 {
        assert_eq!(pool.channels()[pool.pick(Route::META, None)].path, 1);
    }
    pool.path_answered(1);
    let t = std::time::Instant::now();
    while !pool.paths()[0].is_up() && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(pool.paths()[0].is_up());
    let ev = pool.events();
    assert_eq!(ev.len(), 2);
    assert_eq!((ev[0].path, ev[0].moved), (0, 1));
    assert!(ev[0].what.starts_with("down"));
    assert_eq!(ev[1].what, "up");
    assert!(ev[1].recovered_after_s.is_some());
}

#[test]
fn engine_writes_and_reads_back_split_io() {
    let Some(server) = common::Server::start("engio") else {
        return;
    };
    let file = server.export_dir.join("f.dat");
    std::fs::write(&file, vec![0u8; 1 << 20]).unwrap();
    // 16 KiB per RPC: a 100 KiB I/O goes as 7 calls.
    let t = target(&server, 1, 3, 16 << 10);
    assert_eq!(t.transfer_sizes(), (16 << 10, 16 << 10));
    let cfg = EngineConfig {
        files: vec![FileSpec {
            path: PathBuf::from("f.dat"),
            size: 1 << 20,
            buffered: false,
            direct: false,
        }],
        depth: 4,
        max_io: 100 << 10,
        direct: true,
        write: true,
        shared_buffers: false,
        io_workers: 0,
        io_workers_from: 0,
        submitted: Default::default(),
        no_read_ahead: false,
    };
    let mut e = t.backend().open(&cfg).unwrap();
    let len = 100u32 << 10;
    let data: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
    e.buffer(1)[..len as usize].copy_from_slice(&data);
    let io = |dir, slot, durability| IoRequest {
        file: 0,
        offset: 4096 * 3,
        len,
        dir,
        slot,
        durability,
        tag: 42,
    };
    e.submit(io(IoDir::Write, 1, Durability::Dsync)).unwrap();
    let again = io(IoDir::Write, 1, Durability::Dsync);
    assert!(e.submit(again).is_err(), "slot busy");
    let mut out: Vec<Completion> = Vec::new();
    assert_eq!(e.reap(1, Duration::from_secs(5), &mut out).unwrap(), 1);
    assert_eq!(out[0].tag, 42);
    assert_eq!(*out[0].result.as_ref().unwrap(), len);
    let on_disk = std::fs::read(&file).unwrap();
    assert_eq!(&on_disk[4096 * 3..4096 * 3 + len as usize], &data[..]);

    e.submit(io(IoDir::Read, 2, Durability::None)).unwrap();
    out.clear();
    assert_eq!(e.reap(1, Duration::from_secs(5), &mut out).unwrap(), 1);
    assert!(out[0].result.is_ok());
    assert_eq!(&e.buffer(2)[..len as usize], &data[..]);
    assert_eq!(e.in_flight(), 0);

    // Reading past the end of the file is a short read, not silent zeros.
    let mut past = io(IoDir::Read, 0, Durability::None);
    past.offset = (1 << 20) - 4096;
    e.submit(past).unwrap();
    out.clear();
    e.reap(1, Duration::from_secs(5), &mut out).unwrap();
    assert!(out[0].result.is_err());
    let calls = t.pool.procs().snapshot();
    let reads = calls.iter().find(|c| c.0 == "READ").unwrap().1;
    let writes = calls.iter().find(|c| c.0 == "WRITE").unwrap().1;
    assert_eq!(writes, 7);
    assert_eq!(reads, 7 + 7);
}

/// Writes go from the slot buffers without a copy, and a slot is refilled as soon as
/// its write completes: 32 outstanding over 2 connections, each slot reused 60 times,
/// and every block on the server holds the last content written to it.
#[test]
fn reused_slots_never_change_data_in_flight() {
    let Some(server) = common::Server::start("engslots") else {
        return;
    };
    const BLOCK: usize = 8192;
    const BLOCKS: usize = 256;
    let file = server.export_dir.join("s.dat");
    std::fs::write(&file, vec![0u8; BLOCK * BLOCKS]).unwrap();
    let t = target(&server, 1, 2, 1 << 20);
    let cfg = EngineConfig {
        files: vec![FileSpec {
            path: PathBuf::from("s.dat"),
            size: (BLOCK * BLOCKS) as u64,
            buffered: false,
            direct: false,
        }],
        depth: 32,
        max_io: BLOCK as u32,
        direct: true,
        write: true,
        shared_buffers: false,
        io_workers: 0,
        io_workers_from: 0,
        submitted: Default::default(),
        no_read_ahead: false,
    };
    let mut e = t.backend().open(&cfg).unwrap();
    let mut last = vec![0u32; BLOCKS];
    let mut issue = |e: &mut Box<dyn dbio_engine::Engine>, slot: u32, n: u32| {
        let block = (n as usize * 37) % BLOCKS;
        let stamp = (n + 1).to_le_bytes();
        for (i, b) in e.buffer(slot).iter_mut().enumerate() {
            *b = stamp[i % 4] ^ (i / 4) as u8;
        }
        last[block] = n + 1;
        let req = IoRequest {
            file: 0,
            offset: (block * BLOCK) as u64,
            len: BLOCK as u32,
            dir: IoDir::Write,
            slot,
            durability: [Durability::None, Durability::Dsync, Durability::Fdatasync]
                [n as usize % 3],
            tag: u64::from(slot),
        };
        e.submit(req).unwrap();
    };
    let total = 32 * 60;
    let mut n = 0;
    for slot in 0..32 {
        issue(&mut e, slot, n);
        n += 1;
    }
    e.commit().unwrap();
    let mut out: Vec<Completion> = Vec::new();
    let mut done = 0;
    while done < total {
        out.clear();
        let got = e.reap(1, Duration::from_secs(10), &mut out).unwrap();
        assert!(got > 0, "no completion after {done} writes");
        for c in &out {
            assert_eq!(*c.result.as_ref().unwrap(), BLOCK as u32);
            done += 1;
            if n < total {
                issue(&mut e, c.slot, n);
                n += 1;
            }
        }
        e.commit().unwrap();
    }
    let on_disk = std::fs::read(&file).unwrap();
    for (block, &v) in last.iter().enumerate() {
        let stamp = v.to_le_bytes();
        let got = &on_disk[block * BLOCK..(block + 1) * BLOCK];
        let ok = got
            .iter()
            .enumerate()
            .all(|(i, b)| *b == stamp[i % 4] ^ (i / 4) as u8);
        assert!(ok, "block {block}: not the content of write {v}");
    }
}
