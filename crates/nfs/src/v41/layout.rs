//! pNFS files layouts (RFC 8881 chapters 12 and 13) on the client side: LAYOUTGET,
//! GETDEVICEINFO and LAYOUTRETURN against the metadata server, a session to a data
//! server, and the stripe map that says, for a file offset, which data server, which
//! file handle and which offset to send.
//!
//! A server that hands out no layout (not a metadata server, no files layouts, none
//! available now) answers with a typed [`NoLayout`], so that the caller goes on through
//! the metadata server instead of failing.

use std::net::SocketAddr;

use crate::error::NfsError;
use crate::proto::nfs4::{
    share, Bitmap4, Compound, DeviceId, Fh4, FileDsAddr, FileLayout, LayoutIomode, LayoutReturn,
    LayoutType, NetAddr, Nfsstat4, OpResult, OpenClaim, OpenHow, Opnum, Stateid, MINOR_VERSION,
};
use crate::ClientOptions;

use super::opens::LAYOUT_OPEN_OWNER;
use super::{Client, Session, SessionOptions};

/// Largest device address asked for in one GETDEVICEINFO (a device of 256 data servers
/// with 256 addresses each stays far below).
pub const MAX_DEVICE_INFO: u32 = 256 << 10;
/// Largest layout asked for in one LAYOUTGET.
pub const MAX_LAYOUT_REPLY: u32 = 256 << 10;

/// Why a server gave no layout: the caller reads and writes through the metadata
/// server instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoLayout {
    /// NFS4ERR_LAYOUTUNAVAILABLE: no layout for this file (e.g. the file system has no
    /// pNFS), now or ever.
    Unavailable,
    /// NFS4ERR_LAYOUTTRYLATER: none now; asking again later may give one.
    TryLater,
    /// NFS4ERR_UNKNOWN_LAYOUTTYPE: the server does not hand out files layouts.
    UnknownLayoutType,
    /// NFS4ERR_NOTSUPP (or another status that says LAYOUTGET is not served): the
    /// server is not a metadata server.
    NotMetadataServer(Nfsstat4),
    /// The server answered with layouts, none of them a files layout covering the
    /// offset asked for.
    NoFilesLayout,
}

impl std::fmt::Display for NoLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoLayout::Unavailable => f.write_str("no layout available (NFS4ERR_LAYOUTUNAVAILABLE)"),
            NoLayout::TryLater => f.write_str("no layout now (NFS4ERR_LAYOUTTRYLATER)"),
            NoLayout::UnknownLayoutType => {
                f.write_str("no files layouts (NFS4ERR_UNKNOWN_LAYOUTTYPE)")
            }
            NoLayout::NotMetadataServer(s) => write!(f, "not a pNFS metadata server ({s})"),
            NoLayout::NoFilesLayout => f.write_str("the reply held no files layout"),
        }
    }
}

impl NoLayout {
    /// The no-layout reason a LAYOUTGET status stands for, if it is one.
    pub fn from_status(status: Nfsstat4) -> Option<NoLayout> {
        match status {
            Nfsstat4::Layoutunavailable => Some(NoLayout::Unavailable),
            Nfsstat4::Layouttrylater => Some(NoLayout::TryLater),
            Nfsstat4::UnknownLayouttype => Some(NoLayout::UnknownLayoutType),
            Nfsstat4::Notsupp | Nfsstat4::OpIllegal | Nfsstat4::PnfsNoLayout => {
                Some(NoLayout::NotMetadataServer(status))
            }
            _ => None,
        }
    }
}

/// A files layout the metadata server granted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileLayoutGrant {
    /// The layout stateid (LAYOUTRETURN, LAYOUTCOMMIT).
    pub stateid: Stateid,
    /// Whether the layout goes when the open that got it is closed.
    pub return_on_close: bool,
    /// The byte range the layout covers (`length` u64::MAX: to the end of the file).
    pub offset: u64,
    pub length: u64,
    pub iomode: LayoutIomode,
    pub layout: FileLayout,
}

/// The outcome of a LAYOUTGET.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayoutReply {
    Files(FileLayoutGrant),
    NoLayout(NoLayout),
}

impl Client {
    /// OPEN of an existing file by handle (CLAIM_FH) under an open-owner of its own,
    /// for reading or, with [`LayoutIomode::Rw`], reading and writing: the stateid a
    /// LAYOUTGET is asked with, for a caller that holds no open of the file (a pool's
    /// data files have theirs: `v41::data_files`). Close it with
    /// [`Client::layout_close`].
    pub async fn layout_open(
        &self,
        fh: Fh4,
        iomode: LayoutIomode,
        path: &str,
    ) -> Result<Stateid, NfsError> {
        // No delegation: a recall of it would only cost the I/O a round trip.
        let access = share::ACCESS_WANT_NO_DELEG
            | match iomode {
                LayoutIomode::Rw => share::ACCESS_BOTH,
                _ => share::ACCESS_READ,
            };
        let c =
            Compound::new("open", MINOR_VERSION)
                .putfh(fh)
                .op(crate::proto::nfs4::ArgOp::Open {
                    seqid: 0,
                    share_access: access,
                    share_deny: 0,
                    clientid: self.session.clientid(),
                    owner: LAYOUT_OPEN_OWNER,
                    how: OpenHow::NoCreate,
                    claim: OpenClaim::Fh,
                });
        let r = self.session.compound(&c, path).await?;
        let res = r.res()?;
        let stateid = res.results.iter().find_map(|op| match op {
            OpResult::Open(ok) => Some(ok.stateid),
            _ => None,
        });
        let Some(stateid) = stateid else {
            return Err(bad(&self.server, path, "OPEN reply without a stateid"));
        };
        self.opens.add(fh, access, true, stateid, path);
        Ok(stateid)
    }

    /// CLOSE of an open from [`Client::layout_open`].
    pub async fn layout_close(
        &self,
        fh: Fh4,
        stateid: Stateid,
        path: &str,
    ) -> Result<(), NfsError> {
        self.close_stateid(fh, stateid, path).await
    }

    /// LAYOUTGET of a files layout for `fh` over `offset..offset+length` (`length`
    /// u64::MAX: to the end of the file), with the stateid of an open (or a lock or a
    /// delegation) of the file. A server that gives none says why in
    /// [`LayoutReply::NoLayout`]; other failures are errors naming LAYOUTGET and `path`.
    pub async fn layoutget(
        &self,
        fh: Fh4,
        stateid: Stateid,
        iomode: LayoutIomode,
        offset: u64,
        length: u64,
        path: &str,
    ) -> Result<LayoutReply, NfsError> {
        let maxcount = self
            .session
            .fore_channel()
            .maxresponsesize
            .min(MAX_LAYOUT_REPLY);
        let c = Compound::new("layoutget", MINOR_VERSION).putfh(fh).op(
            crate::proto::nfs4::ArgOp::Layoutget {
                signal_layout_avail: false,
                layout_type: LayoutType::NfsV41Files,
                iomode,
                offset,
                length,
                minlength: 0,
                stateid: self.opens.current(stateid),
                maxcount,
            },
        );
        let r = match self.session.compound(&c, path).await {
            Ok(r) => r,
            Err(e) => {
                let no_layout = match &e {
                    NfsError::Status4 {
                        op: Opnum::Layoutget,
                        status,
                        ..
                    } => NoLayout::from_status(*status),
                    _ => None,
                };
                return no_layout.map(LayoutReply::NoLayout).ok_or(e);
            }
        };
        let res = r.res()?;
        let Some(OpResult::Layoutget(ok)) = res.results.last() else {
            return Err(bad(&self.server, path, "LAYOUTGET reply without a layout"));
        };
        let Some(lo) = ok.layouts.iter().find(|l| {
            l.layout_type == LayoutType::NfsV41Files
                && l.offset <= offset
                && (l.length == u64::MAX || offset - l.offset < l.length)
        }) else {
            return Ok(LayoutReply::NoLayout(NoLayout::NoFilesLayout));
        };
        let layout = FileLayout::from_body(lo.body)
            .map_err(|e| bad(&self.server, path, &format!("files layout: {e}")))?;
        Ok(LayoutReply::Files(FileLayoutGrant {
            stateid: ok.stateid,
            return_on_close: ok.return_on_close,
            offset: lo.offset,
            length: lo.length,
            iomode: lo.iomode,
            layout,
        }))
    }

    /// GETDEVICEINFO of a files-layout device: its data servers and their addresses.
    pub async fn getdeviceinfo(
        &self,
        deviceid: DeviceId,
        path: &str,
    ) -> Result<FileDsAddr, NfsError> {
        let maxcount = self
            .session
            .fore_channel()
            .maxresponsesize
            .min(MAX_DEVICE_INFO);
        let c = Compound::new("getdeviceinfo", MINOR_VERSION).op(
            crate::proto::nfs4::ArgOp::Getdeviceinfo {
                deviceid,
                layout_type: LayoutType::NfsV41Files,
                maxcount,
                notify_types: Bitmap4::new(),
            },
        );
        let r = self.session.compound(&c, path).await?;
        let res = r.res()?;
        let Some(OpResult::Getdeviceinfo(ok)) = res.results.last() else {
            return Err(bad(
                &self.server,
                path,
                "GETDEVICEINFO reply without a device",
            ));
        };
        if ok.layout_type != LayoutType::NfsV41Files {
            return Err(bad(
                &self.server,
                path,
                "GETDEVICEINFO answered for another layout type",
            ));
        }
        FileDsAddr::from_body(ok.addr_body)
            .map_err(|e| bad(&self.server, path, &format!("device address: {e}")))
    }

    /// LAYOUTRETURN of a granted layout's range.
    pub async fn layoutreturn(
        &self,
        fh: Fh4,
        grant: &FileLayoutGrant,
        path: &str,
    ) -> Result<(), NfsError> {
        let c = Compound::new("layoutreturn", MINOR_VERSION).putfh(fh).op(
            crate::proto::nfs4::ArgOp::Layoutreturn {
                reclaim: false,
                layout_type: LayoutType::NfsV41Files,
                iomode: grant.iomode,
                how: LayoutReturn::File {
                    offset: grant.offset,
                    length: grant.length,
                    stateid: grant.stateid,
                    body: &[],
                },
            },
        );
        self.session.compound(&c, path).await.map(drop)
    }

    /// LAYOUTCOMMIT (RFC 8881 §18.42) of a granted files layout: the byte range of the
    /// grant, its layout stateid, the last byte written through data servers
    /// (`loca_last_write_offset`, so that the metadata server learns a new size), no
    /// time (the server sets it), and the files layout's empty `layoutupdate4` body.
    /// The new size, if the server says it changed it.
    pub async fn layoutcommit(
        &self,
        fh: Fh4,
        grant: &FileLayoutGrant,
        last_write_offset: u64,
        path: &str,
    ) -> Result<Option<u64>, NfsError> {
        let c = Compound::new("layoutcommit", MINOR_VERSION).putfh(fh).op(
            crate::proto::nfs4::ArgOp::Layoutcommit {
                offset: grant.offset,
                length: grant.length,
                reclaim: false,
                stateid: grant.stateid,
                last_write_offset: Some(last_write_offset),
                time_modify: None,
                layout_type: LayoutType::NfsV41Files,
                body: &[],
            },
        );
        let r = self.session.compound(&c, path).await?;
        let res = r.res()?;
        match res.results.last() {
            Some(OpResult::Layoutcommit { new_size }) => Ok(*new_size),
            _ => Err(bad(
                &self.server,
                path,
                "LAYOUTCOMMIT reply without its result",
            )),
        }
    }

    /// A session to a data server: the first of its multipath list's distinct
    /// addresses to give one, all tried at once (addresses of another transport than
    /// TCP are skipped), the whole bounded by `session.conn.connect_timeout`: a device
    /// that names one dead address 32 times costs that bound once, not 32 times. The
    /// error, if none gives one, is the last to fail, or the bound's. The session's
    /// client owner is `session.owner` + `/ds`: a client id of its own even when the
    /// data server is the metadata server itself (same owner, same server: same
    /// client id, RFC 8881 2.4), so that closing it leaves the metadata session's
    /// state alone.
    ///
    /// The connection behaves as `session.conn` says (its timeouts, retries and
    /// fail-fast mode: a silent data server must cost seconds, not the metadata
    /// connection's patience); `options` gives the credential.
    pub async fn connect_data_server(
        addrs: &[NetAddr],
        options: &ClientOptions,
        mut session: SessionOptions,
    ) -> Result<Client, NfsError> {
        session.owner.push_str("/ds");
        // Recalls come from the metadata server; a data server's session needs none.
        session.back_channel = None;
        let cred = options.credential()?;
        let distinct = distinct_tcp(addrs);
        let names = || {
            let v: Vec<String> = distinct.iter().map(ToString::to_string).collect();
            v.join(", ")
        };
        if distinct.is_empty() {
            return Err(NfsError::Invalid {
                path: addrs
                    .iter()
                    .map(|a| format!("{} {}", a.netid, a.uaddr))
                    .collect::<Vec<_>>()
                    .join(", "),
                reason: "data server without a TCP address".into(),
            });
        }
        let bound = session.conn.connect_timeout;
        // Dropped when one answers or the bound passes: the other tries end with it.
        let mut tries = tokio::task::JoinSet::new();
        for &addr in &distinct {
            let (cred, mut session) = (cred.clone(), session.clone());
            // Under Kerberos a data server proves itself as its own host, known here
            // by its address only (named by its reverse lookup, as gssd does).
            if let Some(gss) = &mut session.conn.gss {
                gss.principal = format!("nfs@{}", addr.ip());
            }
            tries.spawn(async move { (addr, Session::connect(addr, cred, session).await) });
        }
        let mut last = None;
        let first = tokio::time::timeout(bound, async {
            while let Some(done) = tries.join_next().await {
                match done {
                    Ok((addr, Ok(s))) => return Some((addr, s)),
                    Ok((_, Err(e))) => last = Some(e),
                    Err(_) => {}
                }
            }
            None
        })
        .await;
        match first {
            Ok(Some((addr, s))) => Ok(Client::from_session(s, addr.to_string())),
            _ => Err(last.unwrap_or_else(|| NfsError::Invalid {
                path: names(),
                reason: format!("no NFSv4.1 session within {:.1} s", bound.as_secs_f64()),
            })),
        }
    }
}

/// The distinct TCP socket addresses of a multipath list, in its order.
pub fn distinct_tcp(addrs: &[NetAddr]) -> Vec<SocketAddr> {
    let mut out: Vec<SocketAddr> = Vec::new();
    for a in addrs.iter().filter_map(tcp_addr) {
        if !out.contains(&a) {
            out.push(a);
        }
    }
    out
}

/// The socket address of a `tcp`/`tcp6` network address.
pub fn tcp_addr(a: &NetAddr) -> Option<SocketAddr> {
    match a.netid.as_str() {
        "tcp" | "tcp6" => a.socket_addr(),
        _ => None,
    }
}

fn bad(server: &str, path: &str, reason: &str) -> NfsError {
    NfsError::BadReply {
        what: "NFSv4.1 pNFS".into(),
        path: format!("{server}:{path}"),
        reason: reason.into(),
    }
}

/// Where one stripe unit of a file lives (RFC 8881 13.4.2 and 13.4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StripeTarget<'a> {
    /// The stripe unit number of the offset (counted from the pattern offset).
    pub stripe_unit: u64,
    /// `j`: the index into the device's stripe indices.
    pub stripe_index: u32,
    /// `idx`: the data server (index into the device's multipath list).
    pub data_server: u32,
    /// The addresses of that data server (any of them, multipath).
    pub addrs: &'a [NetAddr],
    /// The handle to send; `None`: the handle the metadata server gave (a sparse
    /// layout without handles).
    pub fh: Option<Fh4>,
    /// The offset to send to the data server (dense packing changes it).
    pub ds_offset: u64,
    /// Bytes from the offset to the end of its stripe unit: an I/O longer than this
    /// crosses to another data server.
    pub unit_left: u64,
}

/// A malformed layout or device, or an offset the layout does not map.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StripeError {
    #[error("files layout device has no stripe indices")]
    NoStripes,
    #[error("files layout stripe unit is 0 with {0} stripes")]
    ZeroStripeUnit(usize),
    #[error(
        "files layout has {fhs} file handles for {stripes} stripes and {servers} data servers"
    )]
    HandleCount {
        fhs: usize,
        stripes: usize,
        servers: usize,
    },
    #[error("files layout stripe index {index} names data server {server} of {servers}")]
    BadStripeIndex {
        index: usize,
        server: u32,
        servers: usize,
    },
    #[error("offset {offset} is before the layout's pattern offset {pattern_offset}")]
    BeforePattern { offset: u64, pattern_offset: u64 },
}

/// A files layout and its device, checked once, mapping file offsets to data servers.
#[derive(Clone, Debug)]
pub struct StripeMap<'a> {
    layout: &'a FileLayout,
    device: &'a FileDsAddr,
}

impl<'a> StripeMap<'a> {
    /// Checks that `layout` and `device` fit together: at least one stripe, a stripe
    /// unit when there are several, every stripe index naming a data server, and a
    /// handle count the RFC allows (sparse: 0, 1 or one per data server; dense: one
    /// per stripe, or 1, which stands for all).
    pub fn new(layout: &'a FileLayout, device: &'a FileDsAddr) -> Result<Self, StripeError> {
        let stripes = device.stripe_indices.len();
        let servers = device.multipath_ds_list.len();
        if stripes == 0 {
            return Err(StripeError::NoStripes);
        }
        if stripes > 1 && layout.stripe_unit() == 0 {
            return Err(StripeError::ZeroStripeUnit(stripes));
        }
        if let Some((index, &server)) = device
            .stripe_indices
            .iter()
            .enumerate()
            .find(|(_, &s)| s as usize >= servers)
        {
            return Err(StripeError::BadStripeIndex {
                index,
                server,
                servers,
            });
        }
        let fhs = layout.fh_list.len();
        let ok = if layout.dense() {
            fhs == stripes || fhs == 1
        } else {
            fhs <= 1 || fhs == servers
        };
        if !ok {
            return Err(StripeError::HandleCount {
                fhs,
                stripes,
                servers,
            });
        }
        Ok(StripeMap { layout, device })
    }

    /// Each stripe index's data server (index into the device's multipath list) and
    /// the handle it is sent (`None`: the metadata server's), as [`StripeMap::locate`]
    /// picks them: where a COMMIT to the data servers goes.
    pub fn targets(&self) -> impl Iterator<Item = (u32, Option<Fh4>)> + '_ {
        let l = self.layout;
        self.device
            .stripe_indices
            .iter()
            .enumerate()
            .map(move |(j, &idx)| {
                let fh = match l.fh_list.len() {
                    0 => None,
                    1 => Some(l.fh_list[0]),
                    _ if l.dense() => l.fh_list.get(j).copied(),
                    _ => l.fh_list.get(idx as usize).copied(),
                };
                (idx, fh)
            })
    }

    /// Where the byte at file offset `offset` lives.
    pub fn locate(&self, offset: u64) -> Result<StripeTarget<'a>, StripeError> {
        let l = self.layout;
        let pattern_offset = l.pattern_offset;
        let rel = offset
            .checked_sub(pattern_offset)
            .ok_or(StripeError::BeforePattern {
                offset,
                pattern_offset,
            })?;
        let count = self.device.stripe_indices.len() as u64;
        let unit = u64::from(l.stripe_unit());
        let (su, within, unit_left) = match rel.checked_div(unit) {
            Some(su) => (su, rel % unit, unit - rel % unit),
            // One stripe and no unit: the whole file is one stripe unit.
            None => (0, rel, (u64::MAX - rel).saturating_add(1)),
        };
        let j = ((su + u64::from(l.first_stripe_index)) % count) as u32;
        let idx = self.device.stripe_indices[j as usize];
        let fh = match l.fh_list.len() {
            0 => None,
            1 => Some(l.fh_list[0]),
            _ if l.dense() => Some(l.fh_list[j as usize]),
            _ => Some(l.fh_list[idx as usize]),
        };
        let ds_offset = if l.dense() {
            // Each data server holds only its own stripe units, packed end to end.
            (su / count) * unit + within
        } else {
            offset
        };
        Ok(StripeTarget {
            stripe_unit: su,
            stripe_index: j,
            data_server: idx,
            addrs: &self.device.multipath_ds_list[idx as usize],
            fh,
            ds_offset,
            unit_left,
        })
    }
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;
