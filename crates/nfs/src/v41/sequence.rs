//! What a COMPOUND reply's SEQUENCE result and its first failure mean: the one place
//! they are settled, for the session's own slot table (metadata) and for the slots a
//! data path leases alike (RFC 8881 2.10.6).

use crate::proto::nfs4::{CompoundRes, Nfsstat4, OpFailure, OpResult, Opnum, SequenceOk};

/// The meaning of one reply for its request and its slot.
#[derive(Debug, PartialEq)]
pub enum Settled<'r> {
    /// SEQUENCE was done and every op succeeded.
    Done(&'r SequenceOk),
    /// SEQUENCE was done, then an op answered "try later" (DELAY, GRACE), or the server
    /// kept no reply to replay a re-send (RETRY_UNCACHED_REP): the request goes again
    /// as a new one, on the slot's next sequence id.
    Again {
        seq: &'r SequenceOk,
        op: Opnum,
        status: Nfsstat4,
    },
    /// SEQUENCE itself was delayed: the server still works on this sequence id, so the
    /// same request goes again with it.
    Same { status: Nfsstat4 },
    /// An op failed; `seq` when SEQUENCE was done (the slot advanced).
    Failed {
        seq: Option<&'r SequenceOk>,
        op: Opnum,
        status: Nfsstat4,
    },
    /// The session or the client's state is gone (a server restart, an expired lease)
    /// or the connection is not bound to the session: the request was not run. It goes
    /// again, as a new request, once the state is recovered ([`Lost::of`] says how).
    Lost {
        seq: Option<&'r SequenceOk>,
        op: Opnum,
        status: Nfsstat4,
    },
    /// A reply with neither a SEQUENCE result nor a failure.
    NoSequence,
}

/// What a [`Settled::Lost`] reply lost, and so what recovers it (RFC 8881 8.4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lost {
    /// NFS4ERR_CONN_NOT_BOUND_TO_SESSION: BIND_CONN_TO_SESSION.
    Binding,
    /// NFS4ERR_BADSESSION, NFS4ERR_DEADSESSION: a new session (CREATE_SESSION), of a
    /// new client id if the server no longer knows the old one.
    Session,
    /// NFS4ERR_STALE_CLIENTID, NFS4ERR_EXPIRED: a new client id (EXCHANGE_ID), a new
    /// session and the opens reclaimed.
    Client,
}

impl Lost {
    /// What `status` (of SEQUENCE, or of a later op when `after_sequence`) lost, if
    /// anything recovery brings back.
    pub fn of(status: Nfsstat4, after_sequence: bool) -> Option<Lost> {
        match status {
            // A later op's EXPIRED: the lease of the state it used ran out.
            Nfsstat4::Expired => Some(Lost::Client),
            _ if after_sequence => None,
            Nfsstat4::StaleClientid => Some(Lost::Client),
            Nfsstat4::Badsession | Nfsstat4::Deadsession => Some(Lost::Session),
            Nfsstat4::ConnNotBoundToSession => Some(Lost::Binding),
            _ => None,
        }
    }
}

/// Settles a decoded COMPOUND reply whose first op was SEQUENCE.
pub fn settle<'r>(res: &'r CompoundRes<'_>) -> Settled<'r> {
    let seq = match res.results.first() {
        Some(OpResult::Sequence(ok)) => Some(ok),
        _ => None,
    };
    settle_parts(seq, res.failure)
}

/// [`settle`] from the parts of a reply read op by op: SEQUENCE's result if it was the
/// first op and succeeded, and the failed op if one did.
pub fn settle_parts(seq: Option<&SequenceOk>, failure: Option<OpFailure>) -> Settled<'_> {
    match (seq, failure) {
        (Some(ok), None) => Settled::Done(ok),
        (Some(ok), Some(f)) if again(f.status) => Settled::Again {
            seq: ok,
            op: f.op,
            status: f.status,
        },
        (None, Some(f)) if f.op == Opnum::Sequence && f.status == Nfsstat4::Delay => {
            Settled::Same { status: f.status }
        }
        (seq, Some(f)) if Lost::of(f.status, seq.is_some()).is_some() => Settled::Lost {
            seq,
            op: f.op,
            status: f.status,
        },
        (seq, Some(f)) => Settled::Failed {
            seq,
            op: f.op,
            status: f.status,
        },
        (None, None) => Settled::NoSequence,
    }
}

/// Statuses after which a request whose SEQUENCE was done goes again as a new one.
fn again(status: Nfsstat4) -> bool {
    matches!(
        status,
        Nfsstat4::Delay | Nfsstat4::Grace | Nfsstat4::RetryUncachedRep
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::nfs4::Utf8;

    fn res(seq: bool, failure: Option<(Opnum, Nfsstat4)>) -> CompoundRes<'static> {
        let ok = SequenceOk {
            sessionid: [1; 16],
            sequenceid: 2,
            slotid: 0,
            highest_slotid: 7,
            target_highest_slotid: 7,
            status_flags: 0,
        };
        CompoundRes {
            status: failure.map_or(Nfsstat4::Ok, |f| f.1),
            tag: Utf8(b""),
            results: if seq {
                vec![OpResult::Sequence(ok)]
            } else {
                vec![]
            },
            failure: failure.map(|(op, status)| OpFailure {
                index: usize::from(seq),
                op,
                status,
                mincount: None,
                will_signal_layout_avail: None,
            }),
        }
    }

    #[test]
    fn each_outcome_of_a_sequenced_reply() {
        assert!(matches!(settle(&res(true, None)), Settled::Done(_)));
        for s in [Nfsstat4::Delay, Nfsstat4::Grace, Nfsstat4::RetryUncachedRep] {
            let r = res(true, Some((Opnum::Read, s)));
            assert!(
                matches!(settle(&r), Settled::Again { status, op: Opnum::Read, .. } if status == s),
                "{s:?}"
            );
        }
        let r = res(false, Some((Opnum::Sequence, Nfsstat4::Delay)));
        assert_eq!(
            settle(&r),
            Settled::Same {
                status: Nfsstat4::Delay
            }
        );
        let r = res(false, Some((Opnum::Sequence, Nfsstat4::Stale)));
        assert!(matches!(
            settle(&r),
            Settled::Failed {
                seq: None,
                status: Nfsstat4::Stale,
                ..
            }
        ));
        let r = res(true, Some((Opnum::Read, Nfsstat4::Io)));
        assert!(matches!(
            settle(&r),
            Settled::Failed {
                seq: Some(_),
                status: Nfsstat4::Io,
                ..
            }
        ));
        assert_eq!(settle(&res(false, None)), Settled::NoSequence);
    }

    #[test]
    fn a_lost_session_or_client_is_recovered_not_failed() {
        // SEQUENCE refused: the session, the client or the connection's binding is gone.
        for (s, lost) in [
            (Nfsstat4::Badsession, Lost::Session),
            (Nfsstat4::Deadsession, Lost::Session),
            (Nfsstat4::StaleClientid, Lost::Client),
            (Nfsstat4::Expired, Lost::Client),
            (Nfsstat4::ConnNotBoundToSession, Lost::Binding),
        ] {
            let r = res(false, Some((Opnum::Sequence, s)));
            assert!(
                matches!(settle(&r), Settled::Lost { seq: None, op: Opnum::Sequence, status } if status == s),
                "{s:?}"
            );
            assert_eq!(Lost::of(s, false), Some(lost), "{s:?}");
        }
        // A later op's EXPIRED (its stateid's lease ran out) loses the client's state;
        // the slot advanced.
        let r = res(true, Some((Opnum::Write, Nfsstat4::Expired)));
        assert!(matches!(
            settle(&r),
            Settled::Lost {
                seq: Some(_),
                op: Opnum::Write,
                status: Nfsstat4::Expired
            }
        ));
        // Session errors from a later op are no session's loss: they fail the call.
        for s in [Nfsstat4::Badsession, Nfsstat4::StaleClientid] {
            let r = res(true, Some((Opnum::Read, s)));
            assert!(
                matches!(settle(&r), Settled::Failed { seq: Some(_), .. }),
                "{s:?}"
            );
            assert_eq!(Lost::of(s, true), None);
        }
        assert_eq!(Lost::of(Nfsstat4::Io, false), None);
    }
}
