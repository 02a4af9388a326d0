//! The data path over NFSv4.1 against nfs-ganesha (scripts/nfs-server): a pool opened
//! with `version=4.1`, data paths leasing session slots (more data paths than one
//! session has slots for, so a second session of the same client is made), READs
//! and WRITEs split into several COMPOUNDs, everything checked against the export's
//! files on the host side; every session has the back channel ganesha granted. Skips without ganesha unless DBIO_REQUIRE_PEERS=1.

mod common;

use std::time::Duration;

use bytes::Bytes;
use dbio_nfs::datapath::{DataPath, FileId, Outcome, ReadData, Stability};
use dbio_nfs::pool::Pool;
use dbio_nfs::ClientConfig;
use dbio_nfs::NfsUrl;

const FILE_SIZE: usize = 4 << 20;

fn pattern(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).max(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// Waits for every I/O in flight; the outcomes.
fn drain(pool: &Pool, path: &mut DataPath) -> Vec<Outcome> {
    let mut out = Vec::new();
    let mut rounds = 0;
    while path.in_flight() > 0 {
        rounds += 1;
        assert!(rounds < 1000, "I/Os never finished");
        let n = path.in_flight() as usize;
        pool.block_on(path.wait(n, Duration::from_secs(10), &mut out));
    }
    out
}

fn read_bytes(o: &Outcome, len: usize) -> Vec<u8> {
    match &o.data {
        ReadData::One(b) => b.to_vec(),
        ReadData::Parts(parts) => {
            let mut buf = vec![0u8; len];
            for (start, b) in parts {
                buf[*start as usize..*start as usize + b.len()].copy_from_slice(b);
            }
            buf
        }
        ReadData::None => Vec::new(),
    }
}

#[test]
fn reads_and_writes_over_sessions_match_the_export() {
    let Some(s) = common::Server::start("v41dp") else {
        return;
    };
    let data = pattern(FILE_SIZE, 1);
    std::fs::write(s.export_dir.join("data.bin"), &data).unwrap();
    std::fs::write(s.export_dir.join("out.bin"), vec![0u8; FILE_SIZE]).unwrap();
    let url = NfsUrl::parse(&format!("nfs://{}/export?version=4.1", s.addr)).unwrap();
    let opts = ClientConfig {
        conns: 2,
        workers: 0,
        ..ClientConfig::new(url.clone())
    };
    let (pool, rest) = Pool::open(&opts).unwrap();
    assert_eq!(rest, "export");
    let m = pool.v41().expect("an NFSv4.1 pool");
    let (fh_in, _) = pool
        .block_on(m.client().lookup_path("/export/data.bin"))
        .unwrap();
    let (fh_out, _) = pool
        .block_on(m.client().lookup_path("/export/out.bin"))
        .unwrap();
    let granted = m.sessions()[0].0;
    eprintln!("metadata session: {granted} slots");
    // The back channel: ganesha grants it at CREATE_SESSION and binds the pool's second
    // connection to it (BIND_CONN_TO_SESSION, fore or both).
    let back = m.back_channel().counts();
    let count = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
    assert!(pool.warnings().is_empty(), "{:?}", pool.warnings());
    assert_eq!((count(&back.granted), count(&back.bound)), (1, 1));

    // 64 KiB per COMPOUND: a 1 MiB I/O goes as 16.
    let depth = 64;
    let mut paths: Vec<DataPath> = (0..3)
        .map(|_| pool.data_path(depth, 64 << 10).unwrap())
        .collect();
    let sessions = m.sessions();
    eprintln!("sessions (granted, in use): {sessions:?}");
    // Three data paths of 64 slots need more than one session of `granted` slots.
    if granted < 3 * depth + 4 {
        assert!(sessions.len() >= 2, "{sessions:?}");
    }
    for p in &mut paths {
        assert!(p.session_slots().unwrap() >= 1);
        assert_eq!(p.add_file(fh_in.as_bytes()), Some(FileId(0)));
        assert_eq!(p.add_file(fh_out.as_bytes()), Some(FileId(1)));
    }

    // Reads: 8 KiB blocks in a scattered order and 1 MiB ranges, more at once than
    // slots on some paths, each checked against the file.
    for (k, p) in paths.iter_mut().enumerate() {
        let mut want = Vec::new();
        for i in 0..depth {
            let (off, len) = if i % 8 == 7 {
                (((i as usize * 7) % 3) << 20, 1 << 20)
            } else {
                (((i as usize * 97 + k * 13) % 512) * 8192, 8192)
            };
            p.read(i, FileId(0), off as u64, len as u32).unwrap();
            want.push((off, len));
        }
        p.flush();
        let out = drain(&pool, p);
        assert_eq!(out.len(), depth as usize);
        for o in &out {
            let (off, len) = want[o.slot as usize];
            assert_eq!(o.result, Ok(len as u32), "slot {}", o.slot);
            assert!(
                read_bytes(o, len) == data[off..off + len],
                "data of slot {} at {off} differs",
                o.slot
            );
        }
    }

    // Writes: UNSTABLE and FILE_SYNC, 8 KiB and 1 MiB, from every data path.
    let mut expect = vec![0u8; FILE_SIZE];
    for (k, p) in paths.iter_mut().enumerate() {
        for i in 0..16u32 {
            let len = if i == 0 { 1 << 20 } else { 8192 };
            let off = if i == 0 {
                k << 20
            } else {
                (3 << 20) + ((k * 16 + i as usize) * 8192)
            };
            let block = pattern(len, (k as u32 + 2) * 100 + i);
            expect[off..off + len].copy_from_slice(&block);
            let stable = if i % 2 == 0 {
                Stability::FileSync
            } else {
                Stability::Unstable
            };
            p.write(i, FileId(1), off as u64, Bytes::from(block), stable)
                .unwrap();
        }
        p.flush();
        for o in drain(&pool, p) {
            assert!(o.result.is_ok(), "write on slot {}: {:?}", o.slot, o.result);
        }
    }
    let written = std::fs::read(s.export_dir.join("out.bin")).unwrap();
    assert!(written == expect, "out.bin differs from what was written");

    let counts = pool.procs().snapshot();
    eprintln!("calls: {counts:?}");
    let calls = |name: &str| counts.iter().find(|c| c.0 == name).map_or(0, |c| c.1);
    // 3 x (56 reads of one COMPOUND + 8 of 16), then 3 x (16 + 15) writes.
    assert_eq!(calls("READ4"), 3 * (56 + 8 * 16));
    assert_eq!(calls("WRITE4"), 3 * (16 + 15));
    // Every session of the client got its back channel, and no SEQUENCE reply said the
    // server could not reach it.
    assert_eq!(count(&back.granted), m.sessions().len() as u64);
    assert_eq!(count(&back.path_down), 0);
    drop(paths);
    // Leases went back: no slot of the metadata session stays in use.
    assert_eq!(m.sessions()[0].1, 0, "{:?}", m.sessions());
}

#[test]
fn a_missing_file_fails_its_io_with_the_server_status() {
    let Some(s) = common::Server::start("v41dperr") else {
        return;
    };
    std::fs::write(s.export_dir.join("gone.bin"), vec![1u8; 65536]).unwrap();
    let url = NfsUrl::parse(&format!("nfs://{}/export?version=4.1", s.addr)).unwrap();
    let opts = ClientConfig {
        conns: 1,
        workers: 0,
        ..ClientConfig::new(url.clone())
    };
    let (pool, _) = Pool::open(&opts).unwrap();
    let m = pool.v41().unwrap();
    let (fh, _) = pool
        .block_on(m.client().lookup_path("/export/gone.bin"))
        .unwrap();
    let mut p = pool.data_path(4, 1 << 20).unwrap();
    p.add_file(fh.as_bytes()).unwrap();
    std::fs::remove_file(s.export_dir.join("gone.bin")).unwrap();
    p.read(0, FileId(0), 0, 8192).unwrap();
    p.flush();
    let out = drain(&pool, &mut p);
    let err = out[0].result.clone().unwrap_err().to_string();
    assert!(err.contains("PUTFH") || err.contains("READ"), "{err}");
    // The slot was answered: the next I/O on the path still goes out.
    std::fs::write(s.export_dir.join("other.bin"), vec![2u8; 8192]).unwrap();
    let (fh2, _) = pool
        .block_on(m.client().lookup_path("/export/other.bin"))
        .unwrap();
    let f2 = p.add_file(fh2.as_bytes()).unwrap();
    p.read(1, f2, 0, 8192).unwrap();
    p.flush();
    let out = drain(&pool, &mut p);
    assert_eq!(out[0].result, Ok(8192));
}
