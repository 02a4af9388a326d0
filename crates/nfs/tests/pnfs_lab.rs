//! The layout layer against a real pNFS server: scripts/pnfs-lab (GlusterFS with two
//! bricks on two hosts, nfs-ganesha's Gluster backend, host 1 the metadata server,
//! both hosts data servers). A file of known content goes in through Gluster; the
//! client gets a layout and the device from the metadata server, opens a session to
//! the named data server and reads the file through it. Then the lab moves the file's
//! brick to the other host: a fresh layout must name that host, and the old data
//! server and the other ganesha still read the file right. The VFS ganesha of
//! scripts/nfs-server has no layouts: LAYOUTGET gives the typed "no layout". A write
//! through the data server past the end is followed by a LAYOUTCOMMIT the metadata
//! server takes, sent by the pool's layouts after their own WRITEs (COMMIT to the data
//! server, which answers UNSTABLE).
//! Skips without root, GlusterFS or ganesha unless DBIO_REQUIRE_PEERS=1.

mod common;

use std::time::Duration;

use bytes::Bytes;
use dbio_nfs::datapath::Stability;
use dbio_nfs::pool::Pool;
use dbio_nfs::proto::nfs4::{Fh4, LayoutIomode};
use dbio_nfs::v41::layout::{FileLayoutGrant, LayoutReply, NoLayout, StripeMap};
use dbio_nfs::v41::{Client, SessionOptions};
use dbio_nfs::ClientConfig;
use dbio_nfs::{ClientOptions, NfsUrl};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[path = "common/pnfs_lab.rs"]
mod lab;
use lab::Lab;

/// Pseudo-random bytes (xorshift64*), a different stream per seed.
fn content(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect()
}

async fn connect(host: &str, path: &str) -> Client {
    let u = NfsUrl::parse(&format!("nfs://{host}{path}?version=4.1")).unwrap();
    let opts = ClientConfig::new(u.clone()).client;
    Client::connect(&u, &opts, SessionOptions::default())
        .await
        .unwrap()
}

/// A layout for the whole file and the data server of its first stripe: the open's
/// stateid, the layout, the data server's address and a session to it.
struct Placed {
    open: dbio_nfs::proto::nfs4::Stateid,
    grant: FileLayoutGrant,
    device: dbio_nfs::proto::nfs4::FileDsAddr,
}

async fn place(mds: &Client, fh: Fh4, path: &str) -> Placed {
    let open = mds.layout_open(fh, LayoutIomode::Read, path).await.unwrap();
    let reply = mds
        .layoutget(fh, open, LayoutIomode::Read, 0, u64::MAX, path)
        .await
        .unwrap();
    let LayoutReply::Files(grant) = reply else {
        panic!("no layout from the metadata server: {reply:?}")
    };
    let device = mds
        .getdeviceinfo(grant.layout.deviceid, path)
        .await
        .unwrap();
    Placed {
        open,
        grant,
        device,
    }
}

/// Reads `len` bytes of the file through the data servers the layout names, each
/// READ within one stripe unit; returns the bytes and the data-server addresses used.
async fn read_through_layout(p: &Placed, mds_fh: Fh4, len: usize) -> (Vec<u8>, Vec<String>) {
    let map = StripeMap::new(&p.grant.layout, &p.device).unwrap();
    let opts = ClientOptions::default();
    let mut sessions: Vec<(u32, Client)> = Vec::new();
    let mut out = Vec::with_capacity(len);
    let mut used = Vec::new();
    // Bounded: every READ returns at least one byte or the loop ends.
    while out.len() < len {
        let t = map.locate(out.len() as u64).unwrap();
        if !sessions.iter().any(|(i, _)| *i == t.data_server) {
            let c = Client::connect_data_server(t.addrs, &opts, SessionOptions::default())
                .await
                .unwrap();
            used.push(c.server().to_string());
            sessions.push((t.data_server, c));
        }
        let ds = &sessions
            .iter()
            .find(|(i, _)| *i == t.data_server)
            .unwrap()
            .1;
        let want = (len - out.len()).min(256 << 10).min(t.unit_left as usize) as u32;
        let (b, eof) = ds
            .read(t.fh.unwrap_or(mds_fh), t.ds_offset, want, "ds read")
            .await
            .unwrap();
        out.extend_from_slice(&b);
        if b.is_empty() || eof {
            break;
        }
    }
    for (_, c) in sessions {
        c.close().await.unwrap();
    }
    (out, used)
}

#[test]
fn layout_from_the_metadata_server_reads_through_the_data_server_and_follows_a_move() {
    let Some(lab) = Lab::start() else {
        return;
    };
    let data = content(3 * 1024 * 1024 + 12345, 0x5eed);
    let local = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(local.path(), &data).unwrap();
    lab.run(&["put", local.path().to_str().unwrap(), "data.bin"]);
    let before = lab.holder("data.bin");
    let path = "/gv0/data.bin";
    rt().block_on(async {
        let mds = connect(&lab.hosts[0], "/gv0").await;
        let (fh, attr) = mds.lookup_path(path).await.unwrap();
        assert_eq!(attr.size, data.len() as u64);

        let p = place(&mds, fh, path).await;
        eprintln!("layout: {:?}\ndevice: {:?}", p.grant, p.device);
        let (got, used) = read_through_layout(&p, fh, data.len()).await;
        assert!(got == data, "read {} bytes through {used:?}", got.len());
        // The data server is the host whose brick holds the file.
        assert_eq!(used, [format!("{before}:2049")]);
        mds.layoutreturn(fh, &p.grant, path).await.unwrap();
        mds.layout_close(fh, p.open, path).await.unwrap();

        // The volume moves: the file's brick empties onto the other host.
        let moved_to = lab.host(&lab.run(&["move", "data.bin"]));
        assert_ne!(moved_to, before);
        assert_eq!(lab.holder("data.bin"), moved_to);
        let q = place(&mds, fh, path).await;
        eprintln!("after the move: device {:?}", q.device);
        let (got, used) = read_through_layout(&q, fh, data.len()).await;
        assert!(got == data, "read {} bytes through {used:?}", got.len());
        assert_eq!(used, [format!("{moved_to}:2049")]);
        // The old layout's data server still serves the file: ganesha's Gluster
        // backend reads through the whole volume, not only its own brick.
        let old = StripeMap::new(&p.grant.layout, &p.device)
            .unwrap()
            .locate(0)
            .unwrap();
        let ds = Client::connect_data_server(
            old.addrs,
            &ClientOptions::default(),
            SessionOptions::default(),
        )
        .await
        .unwrap();
        assert_eq!(ds.server(), format!("{before}:2049"));
        let (b, _) = ds.read(old.fh.unwrap_or(fh), 0, 65536, path).await.unwrap();
        assert!(b[..] == data[..65536], "old data server after the move");
        ds.close().await.unwrap();
        // And so does the ganesha of host 2, which is no metadata server.
        let other = connect(&lab.hosts[1], "/gv0").await;
        let (fh2, _) = other.lookup_path(path).await.unwrap();
        let (b, _) = other.read(fh2, 1 << 20, 65536, path).await.unwrap();
        assert!(
            b[..] == data[1 << 20..(1 << 20) + 65536],
            "host 2 after the move"
        );
        other.close().await.unwrap();
        mds.layoutreturn(fh, &q.grant, path).await.unwrap();
        mds.layout_close(fh, q.open, path).await.unwrap();

        // The data server's ganesha dies (Gluster stays up): the metadata server
        // still names it, connecting fails at once with an error naming it, and the
        // metadata server itself still reads the file (the fallback).
        if moved_to == lab.hosts[1] {
            lab.run(&["down", "2"]);
            let r = place(&mds, fh, path).await;
            let t = StripeMap::new(&r.grant.layout, &r.device)
                .unwrap()
                .locate(0)
                .unwrap();
            let e = Client::connect_data_server(
                t.addrs,
                &ClientOptions::default(),
                SessionOptions::default(),
            )
            .await
            .err()
            .expect("a session to a dead data server");
            assert!(e.to_string().contains(&format!("{moved_to}:2049")), "{e}");
            let (b, _) = mds.read(fh, 0, 65536, path).await.unwrap();
            assert!(b[..] == data[..65536], "through the metadata server");
            mds.layout_close(fh, r.open, path).await.unwrap();
        } else {
            eprintln!(
                "note: the file moved to {moved_to}, the dead-data-server check needs host 2"
            );
        }
        mds.close().await.unwrap();
    });
}

#[test]
fn vfs_ganesha_gives_no_layout() {
    let Some(s) = common::Server::start("nolayout") else {
        return;
    };
    std::fs::write(s.export_dir.join("plain.bin"), content(8192, 7)).unwrap();
    rt().block_on(async {
        let c = connect(&s.addr, "/export").await;
        let (fh, _) = c.lookup_path("/export/plain.bin").await.unwrap();
        let open = c
            .layout_open(fh, LayoutIomode::Read, "plain.bin")
            .await
            .unwrap();
        let reply = c
            .layoutget(fh, open, LayoutIomode::Read, 0, u64::MAX, "plain.bin")
            .await
            .unwrap();
        eprintln!("VFS ganesha LAYOUTGET: {reply:?}");
        // ganesha's VFS backend has no pNFS: NFS4ERR_LAYOUTUNAVAILABLE.
        assert_eq!(reply, LayoutReply::NoLayout(NoLayout::Unavailable));
        c.layout_close(fh, open, "plain.bin").await.unwrap();
        c.close().await.unwrap();
    });
}

#[test]
fn the_metadata_server_takes_a_layoutcommit_after_a_write_through_the_data_server() {
    let Some(lab) = Lab::start() else {
        return;
    };
    let data = content(8192, 0x1a70);
    let local = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(local.path(), &data).unwrap();
    lab.run(&["put", local.path().to_str().unwrap(), "grow.bin"]);
    let path = "/gv0/grow.bin";
    rt().block_on(async {
        let mds = connect(&lab.hosts[0], "/gv0").await;
        let (fh, _) = mds.lookup_path(path).await.unwrap();
        let open = mds.layout_open(fh, LayoutIomode::Rw, path).await.unwrap();
        let LayoutReply::Files(grant) = mds
            .layoutget(fh, open, LayoutIomode::Rw, 0, u64::MAX, path)
            .await
            .unwrap()
        else {
            panic!("no read/write layout from the metadata server")
        };
        let device = mds
            .getdeviceinfo(grant.layout.deviceid, path)
            .await
            .unwrap();
        // 8 KiB more, past the end, through the data server.
        let end = 2 * data.len() as u64;
        let t = StripeMap::new(&grant.layout, &device)
            .unwrap()
            .locate(end - 8192)
            .unwrap();
        let opts = ClientOptions::default();
        let ds = Client::connect_data_server(t.addrs, &opts, SessionOptions::default())
            .await
            .unwrap();
        let w = ds
            .write_stateid(
                t.fh.unwrap_or(fh),
                open,
                t.ds_offset,
                &data,
                dbio_nfs::proto::nfs4::StableHow::Unstable,
                path,
            )
            .await
            .unwrap();
        eprintln!("data server WRITE: {w:?}");
        assert_eq!(w.count, 8192);
        ds.commit(t.fh.unwrap_or(fh), 0, 0, path).await.unwrap();
        ds.close().await.unwrap();
        // The metadata server takes the LAYOUTCOMMIT of the new end.
        let new_size = mds.layoutcommit(fh, &grant, end - 1, path).await.unwrap();
        eprintln!("LAYOUTCOMMIT: new size {new_size:?}");
        let attr = mds.getattr(fh, path).await.unwrap();
        assert_eq!(attr.size, end);
        mds.layoutreturn(fh, &grant, path).await.unwrap();
        mds.layout_close(fh, open, path).await.unwrap();
        mds.close().await.unwrap();
    });

    // The same through a pool's data path: its WRITEs reach the data server, which
    // answers UNSTABLE, so the layouts COMMIT there and send a LAYOUTCOMMIT, taken.
    let url = NfsUrl::parse(&format!("nfs://{}/gv0?version=pnfs", lab.hosts[0])).unwrap();
    let opts = ClientConfig {
        conns: 1,
        workers: 0,
        ..ClientConfig::new(url.clone())
    };
    let (pool, _) = Pool::open(&opts).unwrap();
    let layouts = pool.layouts().unwrap().clone();
    let client = pool.v41().unwrap().client();
    let (fh, _) = pool.block_on(client.lookup_path(path)).unwrap();
    // The pool's open of the data file, and its layout fetched with it.
    let handle = dbio_nfs::fs::Handle::new(fh.as_bytes()).unwrap();
    let file = pool
        .data_file(handle, path.trim_start_matches('/'))
        .unwrap();
    assert!(file.stateid.is_some());
    let route = layouts.route(&fh).expect("the layout fetched");
    assert!(route.through_mds.is_none(), "{:?}", route.through_mds);
    let mut dp = pool.data_path(4, 64 << 10).unwrap();
    let file = dp.add_file(fh.as_bytes()).unwrap();
    let more = Bytes::from(content(65536, 0x2b));
    dp.write(0, file, 16384, more.clone(), Stability::Unstable)
        .unwrap();
    dp.flush();
    let mut out = Vec::new();
    pool.block_on(dp.wait(1, Duration::from_secs(10), &mut out));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].result, Ok(65536));
    let done = pool.block_on(layouts.layoutcommit(fh)).unwrap();
    eprintln!("pool's LAYOUTCOMMIT: {done:?}");
    assert!(done.commits == 1 && done.layoutcommit, "{done:?}");
    let ds_io: u64 = layouts
        .servers()
        .iter()
        .filter(|s| s.0 != "MDS")
        .map(|s| s.1)
        .sum();
    assert_eq!(ds_io, 1, "{:?}", layouts.servers());
    let (b, _) = pool.block_on(client.read(fh, 16384, 65536, path)).unwrap();
    assert!(b[..] == more[..], "read back through the metadata server");
    drop(dp);
    pool.close().unwrap();
}
