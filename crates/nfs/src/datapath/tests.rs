use super::tag::part_key;
use super::{tag, untag};

#[test]
fn tags_carry_slot_part_session_slot_and_channel() {
    let t = tag(65535, 300, 1023, 0x8000 + 7);
    assert_eq!(untag(t), (65535, 300, 1023, 0x8000 + 7));
    // Re-sends of a part keep their key whatever slot and channel they use.
    assert_eq!(part_key(t), part_key(tag(65535, 300, 5, 2)));
    assert_ne!(part_key(t), part_key(tag(65535, 301, 1023, 0x8000 + 7)));
    assert_ne!(part_key(t), part_key(tag(65534, 300, 1023, 0x8000 + 7)));
}

/// A data path over `n` connections that never connect: only where calls are queued
/// is looked at, before any is handed over.
fn unconnected_path(n: usize, rsize: u32) -> super::DataPath {
    use crate::path::{PathSpec, PathState};
    use dbio_rpc::conn::{ConnConfig, Connection};
    let addr: std::net::SocketAddr = "127.0.0.1:9".parse().unwrap();
    let conns = (0..n)
        .map(|_| (0, Connection::unconnected(addr, ConnConfig::default())))
        .collect();
    let router = crate::router::Router::new(
        dbio_nfs_proto::nfs3::PROGRAM,
        dbio_nfs_proto::nfs3::VERSION,
        dbio_rpc::Credential::none(),
        vec![PathState::new(PathSpec::new(addr.ip()))],
        conns,
        &["READ", "WRITE"],
    );
    let mut path = super::DataPath::new(
        std::sync::Arc::new(router),
        Box::<super::v3::Handles>::default(),
        64,
        (rsize, rsize),
        crate::retry::Backoff::default(),
    );
    path.add_file(&[1u8; 32]).unwrap();
    path
}

fn queued(path: &super::DataPath) -> Vec<usize> {
    let mut q: Vec<usize> = path.batches.iter().map(|b| b.len()).collect();
    q.sort_unstable();
    q
}

#[test]
fn calls_of_one_flush_go_to_one_connection_in_bursts() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _in = rt.enter();
    // 40 reads of 8 KiB: 16 to one connection, 16 to the next least loaded, 8 to a third.
    let mut path = unconnected_path(4, 1 << 20);
    for slot in 0..40 {
        path.read(slot, super::FileId(0), u64::from(slot) * 8192, 8192)
            .unwrap();
    }
    assert_eq!(queued(&path), [0, 8, 16, 16]);
    // After a flush the next calls pick again: the idle connection first.
    path.flush();
    path.read(40, super::FileId(0), 0, 8192).unwrap();
    assert_eq!(queued(&path), [0, 0, 0, 1]);
    let idle = path.batches.iter().position(|b| b.len() == 1).unwrap();
    assert_eq!(path.router.channels()[idle].outstanding(), 1);

    // One 1 MiB read in 64 KiB parts: 256 KiB per burst, so it spreads over all four.
    let mut path = unconnected_path(4, 64 << 10);
    path.read(0, super::FileId(0), 0, 1 << 20).unwrap();
    assert_eq!(queued(&path), [4, 4, 4, 4]);

    // One connection: everything on it.
    let mut path = unconnected_path(1, 1 << 20);
    for slot in 0..40 {
        path.read(slot, super::FileId(0), 0, 8192).unwrap();
    }
    assert_eq!(queued(&path), [40]);
}

/// A reply record of `results` (an accepted RPC reply, without the record mark).
fn record(results: &[u8]) -> bytes::Bytes {
    let mut body = Vec::new();
    dbio_rpc::msg::encode_reply_success(&mut body, 1);
    body.extend_from_slice(results);
    bytes::Bytes::from(body)
}

#[test]
fn part_errors_carry_the_version_s_own_status() {
    use super::{BusyStatus, Dir, PartError, PartReply};
    use crate::proto::nfs3::Nfsstat3;
    // NFSv3: an error status (READ's failure arm: post-op attributes absent).
    let mut res = Vec::new();
    res.extend_from_slice(&Nfsstat3::Io.to_u32().to_be_bytes());
    res.extend_from_slice(&0u32.to_be_bytes());
    let Err(e) = super::v3::decode(Dir::Read, record(&res), 8192) else {
        panic!("an error status decoded as success");
    };
    assert_eq!(e, PartError::Status3(Nfsstat3::Io));
    assert_eq!(e.to_string(), "NFS3ERR_IO");
    // JUKEBOX is "busy", named as NFSv3 names it once retries run out.
    let mut res = Vec::new();
    res.extend_from_slice(&Nfsstat3::Jukebox.to_u32().to_be_bytes());
    res.extend_from_slice(&0u32.to_be_bytes());
    assert!(matches!(
        super::v3::decode(Dir::Write, record(&res), 8192),
        Ok(PartReply::Busy(BusyStatus::Jukebox))
    ));
    let busy = PartError::Busy {
        status: BusyStatus::Delay,
        resends: 10,
    };
    assert_eq!(
        busy.to_string(),
        "server busy (NFS4ERR_DELAY), re-sent 10 times"
    );
    // A reply that is not XDR at all: malformed, not a panic.
    assert!(matches!(
        super::v3::decode(Dir::Read, record(&[0, 0]), 8192),
        Err(PartError::Malformed(_))
    ));
}
