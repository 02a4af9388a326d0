//! The back channel's slot table and CB_COMPOUND evaluation, without a server.

use super::*;
use crate::proto::nfs4::{
    decode_cb_compound_res, encode_cb_compound, Bitmap4, DeviceNotice, Fh4, Stateid,
};

const SID: SessionId = [3; 16];

#[test]
fn slots_replay_the_same_request_and_refuse_the_rest() {
    let mut t = BackSlots::new(2);
    assert_eq!(t.highest(), 1);
    assert_eq!(t.check(2, 1, b"a"), SlotCheck::Refused(Nfsstat4::Badslot));
    // The first request of a slot has sequence id 1.
    assert_eq!(
        t.check(0, 2, b"a"),
        SlotCheck::Refused(Nfsstat4::SeqMisordered)
    );
    assert_eq!(t.check(0, 1, b"a"), SlotCheck::New);
    t.store(0, Bytes::from_static(b"reply 1"));
    // The same request again: its reply, from the cache.
    assert_eq!(
        t.check(0, 1, b"a"),
        SlotCheck::Replay(Bytes::from_static(b"reply 1"))
    );
    // Another request under the same sequence id is not a retry.
    assert_eq!(
        t.check(0, 1, b"b"),
        SlotCheck::Refused(Nfsstat4::SeqFalseRetry)
    );
    assert_eq!(
        t.check(0, 3, b"c"),
        SlotCheck::Refused(Nfsstat4::SeqMisordered)
    );
    assert_eq!(t.check(0, 2, b"c"), SlotCheck::New);
    // Slots are independent.
    assert_eq!(t.check(1, 1, b"a"), SlotCheck::New);
    // At most BACK_SLOTS, at least one, whatever the server grants.
    assert_eq!(BackSlots::new(0).highest(), 0);
    assert_eq!(BackSlots::new(1000).highest(), BACK_SLOTS - 1);
}

fn state() -> Arc<State> {
    let state = Arc::new(State {
        sessions: Mutex::new(HashMap::new()),
        targets: OnceLock::new(),
        warnings: Mutex::new(Vec::new()),
        counts: CallbackCounts::default(),
    });
    lock(&state.sessions).insert(SID, BackSlots::new(4));
    state
}

fn sequence(sessionid: SessionId, seqid: u32) -> CbOp {
    CbOp::Sequence {
        sessionid,
        sequenceid: seqid,
        slotid: 1,
        highest_slotid: 1,
        cachethis: false,
        referring: Vec::new(),
    }
}

fn call(ops: &[CbOp]) -> Vec<u8> {
    let mut b = Vec::new();
    encode_cb_compound(&mut b, b"cb", 0, ops);
    b
}

/// The status of each result (the CB_SEQUENCE result counted as NFS4_OK).
fn statuses(reply: &[u8]) -> Vec<Nfsstat4> {
    let r = decode_cb_compound_res(reply).unwrap();
    r.results
        .iter()
        .map(|r| match r {
            CbResult::Sequence { .. } => Nfsstat4::Ok,
            CbResult::Status(_, s) => *s,
        })
        .collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn compounds_are_checked_against_the_session_and_replayed() {
    let rt = runtime();
    let _in = rt.enter();
    let s = state();
    let fh = Fh4::new(b"file").unwrap();
    let recall = CbOp::LayoutRecall {
        layout_type: LayoutType::NfsV41Files,
        iomode: LayoutIomode::Any,
        changed: true,
        recall: LayoutRecall::File {
            fh,
            offset: 0,
            length: u64::MAX,
            stateid: Stateid::ANONYMOUS,
        },
    };
    // No layouts here: a recall matches nothing; RECALL_ANY is done at once.
    let recall_any = CbOp::RecallAny {
        keep: 0,
        mask: Bitmap4::from_bits(&[1]),
    };
    let args = call(&[sequence(SID, 1), recall_any.clone(), recall.clone()]);
    let first = s.compound(&args);
    assert_eq!(
        statuses(&first),
        [Nfsstat4::Ok, Nfsstat4::Ok, Nfsstat4::NomatchingLayout]
    );
    let r = decode_cb_compound_res(&first).unwrap();
    assert_eq!(r.status, Nfsstat4::NomatchingLayout);
    assert!(matches!(
        r.results[0],
        CbResult::Sequence {
            sessionid: SID,
            sequenceid: 1,
            slotid: 1,
            highest_slotid: 3,
            ..
        }
    ));
    // The same call again: the same bytes, from the slot's cache.
    assert_eq!(s.compound(&args), first);
    assert_eq!(s.counts.replays.load(Relaxed), 1);
    // Another session, an op without CB_SEQUENCE first, CB_SEQUENCE second, an op not
    // supported, a minor version other than 1.
    let other = call(&[sequence([9; 16], 1)]);
    assert_eq!(statuses(&s.compound(&other)), [Nfsstat4::Badsession]);
    let alone = call(std::slice::from_ref(&recall));
    assert_eq!(statuses(&s.compound(&alone)), [Nfsstat4::OpNotInSession]);
    let twice = call(&[sequence(SID, 2), sequence(SID, 3)]);
    assert_eq!(
        statuses(&s.compound(&twice)),
        [Nfsstat4::Ok, Nfsstat4::SequencePos]
    );
    let odd = call(&[sequence(SID, 3), CbOp::Unsupported(6), recall]);
    assert_eq!(
        statuses(&s.compound(&odd)),
        [Nfsstat4::Ok, Nfsstat4::Notsupp]
    );
    let mut v2 = call(&[sequence(SID, 4)]);
    v2[8..12].copy_from_slice(&2u32.to_be_bytes()); // tag "cb" is 8 bytes
    assert_eq!(statuses(&s.compound(&v2)), [Nfsstat4::MinorVersMismatch]);
    // Garbage gets NFS4ERR_BADXDR, never a panic.
    assert_eq!(statuses(&s.compound(&[0, 0, 0])), [Nfsstat4::Badxdr]);
}

#[test]
fn delegation_recalls_and_device_notices_are_answered_and_counted() {
    let rt = runtime();
    let _in = rt.enter();
    let s = state();
    let args = call(&[
        sequence(SID, 1),
        CbOp::Recall {
            stateid: Stateid::ANONYMOUS,
            truncate: false,
            fh: Fh4::new(b"f").unwrap(),
        },
        CbOp::NotifyDeviceid(vec![DeviceNotice {
            layout_type: LayoutType::NfsV41Files,
            deviceid: [1; 16],
            change: Some(false),
        }]),
    ]);
    assert_eq!(
        statuses(&s.compound(&args)),
        [Nfsstat4::Ok, Nfsstat4::Ok, Nfsstat4::Ok]
    );
    assert_eq!(s.counts.delegation_recalls.load(Relaxed), 1);
    assert_eq!(s.counts.device_notices.load(Relaxed), 1);
}
