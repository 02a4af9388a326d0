//! NFSv4.1 state recovery against nfs-ganesha (scripts/nfs-server with a 2 s lease):
//! the client's lease runs out while its renewal is held back; the data path's next
//! I/O, and in a second round the renewal itself, notice it, the state is recovered
//! (new client id and session, the open had again) and I/O goes on under the open's
//! new stateid without a failure. Skips without ganesha unless DBIO_REQUIRE_PEERS=1.

mod common;

use std::time::{Duration, Instant};

use bytes::Bytes;
use dbio_nfs::datapath::{DataPath, FileId, Outcome, ReadData, Stability};
use dbio_nfs::pool::Pool;
use dbio_nfs::v41::Access;
use dbio_nfs::ClientConfig;
use dbio_nfs::NfsUrl;

const LEASE_S: u64 = 2;
const BLOCK: usize = 64 << 10;
const BLOCKS: u64 = 8;

/// Writes block `i` of `seed` and reads it back on `path`; every I/O must succeed.
fn write_and_read(pool: &Pool, path: &mut DataPath, file: FileId, seed: u8) {
    for i in 0..BLOCKS {
        let data = Bytes::from(vec![seed.wrapping_add(i as u8); BLOCK]);
        path.write(0, file, i * BLOCK as u64, data, Stability::FileSync)
            .unwrap();
        let o = wait_one(pool, path);
        assert_eq!(o.result, Ok(BLOCK as u32), "write of block {i}");
        path.read(0, file, i * BLOCK as u64, BLOCK as u32).unwrap();
        let o = wait_one(pool, path);
        assert_eq!(o.result, Ok(BLOCK as u32), "read of block {i}");
        let ReadData::One(got) = o.data else {
            panic!("read of block {i} brought no data")
        };
        assert!(
            got.iter().all(|b| *b == seed.wrapping_add(i as u8)),
            "block {i}"
        );
    }
}

fn wait_one(pool: &Pool, path: &mut DataPath) -> Outcome {
    let mut out = Vec::new();
    pool.block_on(path.wait(1, Duration::from_secs(30), &mut out));
    out.pop().unwrap_or_else(|| {
        panic!(
            "the I/O did not finish within 30 s; events {:?}",
            pool.events()
        )
    })
}

/// The recovery events of the pool so far.
fn recoveries(pool: &Pool) -> Vec<String> {
    pool.events()
        .into_iter()
        .filter(|e| e.what.starts_with("state recover"))
        .map(|e| e.what)
        .collect()
}

#[test]
fn an_expired_lease_is_recovered_without_a_failed_io() {
    let lease = LEASE_S.to_string();
    let Some(s) = common::Server::start_with("v41lease", &["--lease", &lease]) else {
        return;
    };
    std::fs::write(
        s.export_dir.join("data.bin"),
        vec![0u8; BLOCK * BLOCKS as usize],
    )
    .unwrap();
    let url = NfsUrl::parse(&format!("nfs://{}/export?version=4.1", s.addr)).unwrap();
    let opts = ClientConfig {
        conns: 1,
        // A thread of its own: the renewal runs while the test sleeps.
        workers: 1,
        ..ClientConfig::new(url.clone())
    };
    let (pool, _) = Pool::open(&opts).unwrap();
    let m = pool.v41().expect("an NFSv4.1 pool");
    let client = m.client();
    let (fh, _) = pool
        .block_on(client.lookup_path("/export/data.bin"))
        .unwrap();
    let open = pool
        .block_on(client.open_handle(fh, Access::Both, "/export/data.bin"))
        .unwrap();
    let mut path = pool.data_path(4, 1 << 20).unwrap();
    let file = path.add_file(fh.as_bytes()).unwrap();
    assert!(path.set_stateid(file, open.stateid));
    write_and_read(&pool, &mut path, file, 1);
    assert!(recoveries(&pool).is_empty(), "{:?}", recoveries(&pool));

    // Round 1: nothing renews the lease; the data path's next I/O finds it gone.
    let expired = Duration::from_secs(LEASE_S * 4);
    m.state().hold_renewal(true);
    std::thread::sleep(expired);
    write_and_read(&pool, &mut path, file, 2);
    let events = recoveries(&pool);
    assert_eq!(events.len(), 1, "{events:?}");
    // No grace period after a lease ran out: the open is had again by handle.
    assert!(events[0].contains("1 opened again"), "{events:?}");
    let first = client.current_stateid(open.stateid);
    assert_ne!(
        first.other, open.stateid.other,
        "the open kept its old stateid"
    );
    assert_eq!(client.opens_held(), 1);

    // Round 2: the renewal, let go again after the lease ran out, finds it gone and
    // recovers before any I/O.
    std::thread::sleep(expired);
    m.state().hold_renewal(false);
    let t0 = Instant::now();
    while m.state().recoveries() < 2 {
        assert!(
            t0.elapsed() < Duration::from_secs(LEASE_S * 5),
            "the renewal did not recover: {:?}",
            pool.events()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_ne!(client.current_stateid(open.stateid).other, first.other);
    write_and_read(&pool, &mut path, file, 3);
    assert_eq!(recoveries(&pool).len(), 2, "{:?}", recoveries(&pool));
    // What the data path wrote under the recovered open is on the server.
    let on_disk = std::fs::read(s.export_dir.join("data.bin")).unwrap();
    for i in 0..BLOCKS as usize {
        assert!(on_disk[i * BLOCK..(i + 1) * BLOCK]
            .iter()
            .all(|b| *b == 3u8.wrapping_add(i as u8)));
    }
    pool.block_on(client.close_file(open)).unwrap();
    assert_eq!(client.opens_held(), 0);
}
