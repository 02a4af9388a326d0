//! Whole-file transfers with many READs or WRITEs outstanding, in order of
//! offset; UNSTABLE writes are committed, and resent when the server's
//! write verifier changed (it restarted and may have lost them).

use std::collections::VecDeque;

use bytes::Bytes;
use dbio_rpc::conn::{CallResult, ReplyTo};
use tokio::sync::oneshot;

use crate::channel::CallError;
use crate::channel::Results;
use crate::client::Nfs3Client;
use crate::error::NfsError;
use crate::mount::call_error;
use crate::proto::nfs3::{FileHandle, StableHow, Verifier};

/// How a transfer is pipelined.
#[derive(Clone, Copy, Debug)]
pub struct TransferOptions {
    /// RPCs outstanding at once.
    pub depth: usize,
    /// Largest READ/WRITE (further bounded by the server's rtmax/wtmax).
    pub max_io: u32,
    /// How WRITEs are sent; UNSTABLE ones are COMMITted.
    pub stable: StableHow,
    /// UNSTABLE bytes written before a COMMIT (bounds the data kept for resending).
    pub commit_every: u64,
}

impl Default for TransferOptions {
    fn default() -> Self {
        TransferOptions {
            depth: 16,
            max_io: 1 << 20,
            stable: StableHow::Unstable,
            commit_every: 64 << 20,
        }
    }
}

/// UNSTABLE writes not yet covered by a COMMIT with a matching verifier.
#[derive(Default, Debug)]
pub struct WriteTracker {
    writes: Vec<(u64, Bytes, Verifier)>,
    bytes: u64,
}

impl WriteTracker {
    /// Remembers a WRITE the server answered with `committed` and `verf`.
    pub fn record(&mut self, offset: u64, data: Bytes, committed: StableHow, verf: Verifier) {
        if committed == StableHow::FileSync || committed == StableHow::DataSync {
            return;
        }
        self.bytes += data.len() as u64;
        self.writes.push((offset, data, verf));
    }

    /// Uncommitted bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// After a COMMIT answered `verf`: every write made under another
    /// verifier must be sent again. Clears the tracker.
    pub fn after_commit(&mut self, verf: Verifier) -> Vec<(u64, Bytes)> {
        self.bytes = 0;
        self.writes
            .drain(..)
            .filter(|w| w.2 != verf)
            .map(|w| (w.0, w.1))
            .collect()
    }
}

type Pending = (u64, Bytes, oneshot::Receiver<CallResult>);

fn submit(client: &Nfs3Client, call: dbio_rpc::conn::CallBuf) -> oneshot::Receiver<CallResult> {
    let (tx, rx) = oneshot::channel();
    client.channel().submit(call, ReplyTo::Once(tx));
    rx
}

async fn results(
    client: &Nfs3Client,
    what: &str,
    rel: &str,
    rx: oneshot::Receiver<CallResult>,
) -> Result<Results, NfsError> {
    let path = client.full_path(rel);
    let reply = rx
        .await
        .map_err(|_| NfsError::Invalid {
            path: path.clone(),
            reason: "connection task ended".into(),
        })?
        .map_err(|e| call_error(what, &path, CallError::Transport(e)))?;
    Results::from_record(reply.record).map_err(|e| call_error(what, &path, CallError::Rpc(e)))
}

/// Reads `size` bytes of a file in order, handing each piece to `sink`
/// (offset, data). Returns the bytes read (less than `size` if the file
/// ended earlier).
pub async fn download(
    client: &Nfs3Client,
    fh: FileHandle,
    rel: &str,
    size: u64,
    opts: TransferOptions,
    mut sink: impl FnMut(u64, &[u8]) -> Result<(), NfsError>,
) -> Result<u64, NfsError> {
    let chunk = u64::from(client.read_size(opts.max_io));
    let mut queue: VecDeque<Pending> = VecDeque::new();
    let mut next = 0u64;
    let mut done = 0u64;
    loop {
        while queue.len() < opts.depth.max(1) && next < size {
            let len = chunk.min(size - next) as u32;
            let rx = submit(client, client.read_call(fh, next, len));
            queue.push_back((next, Bytes::new(), rx));
            next += u64::from(len);
        }
        let Some((offset, _, rx)) = queue.pop_front() else {
            return Ok(done);
        };
        let want = chunk.min(size - offset);
        let res = results(client, "READ", rel, rx).await?;
        let mut reply = if crate::client::is_jukebox(res.bytes()) {
            client.read(fh, offset, want as u32, rel).await?
        } else {
            let reply = client.decode_read(&res, rel)?;
            crate::client::check_read_len(&reply, want as u32, &client.full_path(rel))?;
            reply
        };
        let mut got = 0u64;
        loop {
            sink(offset + got, &reply.data)?;
            got += reply.data.len() as u64;
            if got >= want || reply.eof || reply.data.is_empty() {
                break;
            }
            // Short read: fetch the rest of this piece before moving on.
            reply = client
                .read(fh, offset + got, (want - got) as u32, rel)
                .await?;
        }
        done += got;
        if got < want {
            // The file ended early: wait for what is in flight, then stop.
            for (_, _, rx) in queue.drain(..) {
                let _ = rx.await;
            }
            return Ok(done);
        }
    }
}

/// Writes a file from `source` (which fills a buffer and returns how many
/// bytes it put there, 0 at the end), in order, `depth` WRITEs at a time.
/// UNSTABLE data is committed every `commit_every` bytes and at the end, and
/// resent if the verifier changed. Returns the bytes written.
pub async fn upload(
    client: &Nfs3Client,
    fh: FileHandle,
    rel: &str,
    opts: TransferOptions,
    mut source: impl FnMut(&mut [u8]) -> Result<usize, NfsError>,
    mut progress: impl FnMut(u64),
) -> Result<u64, NfsError> {
    let chunk = client.write_size(opts.max_io) as usize;
    let mut queue: VecDeque<Pending> = VecDeque::new();
    let mut tracker = WriteTracker::default();
    let mut offset = 0u64;
    let mut written = 0u64;
    let mut at_end = false;
    loop {
        while !at_end && queue.len() < opts.depth.max(1) {
            let mut buf = vec![0u8; chunk];
            let mut filled = 0;
            while filled < chunk {
                let n = source(&mut buf[filled..])?;
                if n == 0 {
                    at_end = true;
                    break;
                }
                filled += n;
            }
            if filled == 0 {
                break;
            }
            buf.truncate(filled);
            let data = Bytes::from(buf);
            let rx = submit(client, client.write_call(fh, offset, &data, opts.stable));
            queue.push_back((offset, data, rx));
            offset += filled as u64;
        }
        let Some((off, data, rx)) = queue.pop_front() else {
            break;
        };
        let res = results(client, "WRITE", rel, rx).await?;
        let reply = if crate::client::is_jukebox(res.bytes()) {
            client.write(fh, off, &data, opts.stable, rel).await?
        } else {
            client.decode_write(&res, rel)?
        };
        tracker.record(off, data.clone(), reply.committed, reply.verf);
        if (reply.count as usize) < data.len() {
            // Short write: send the rest synchronously, in as many WRITEs as needed.
            write_all(
                client,
                fh,
                rel,
                off + u64::from(reply.count),
                data.slice(reply.count as usize..),
                opts.stable,
                &mut tracker,
            )
            .await?;
        }
        written += data.len() as u64;
        progress(written);
        if tracker.bytes() >= opts.commit_every {
            // Drain in-flight writes so the COMMIT covers them.
            while let Some((o, d, rx)) = queue.pop_front() {
                let res = results(client, "WRITE", rel, rx).await?;
                let r = client.decode_write(&res, rel)?;
                tracker.record(o, d.clone(), r.committed, r.verf);
                if (r.count as usize) < d.len() {
                    write_all(
                        client,
                        fh,
                        rel,
                        o + u64::from(r.count),
                        d.slice(r.count as usize..),
                        opts.stable,
                        &mut tracker,
                    )
                    .await?;
                }
                written += d.len() as u64;
                progress(written);
            }
            commit(client, fh, rel, &mut tracker).await?;
        }
    }
    commit(client, fh, rel, &mut tracker).await?;
    Ok(written)
}

async fn write_all(
    client: &Nfs3Client,
    fh: FileHandle,
    rel: &str,
    mut offset: u64,
    mut data: Bytes,
    stable: StableHow,
    tracker: &mut WriteTracker,
) -> Result<(), NfsError> {
    while !data.is_empty() {
        let r = client.write(fh, offset, &data, stable, rel).await?;
        if r.count == 0 {
            return Err(NfsError::Invalid {
                path: client.full_path(rel),
                reason: format!("server wrote 0 bytes at offset {offset}"),
            });
        }
        let n = (r.count as usize).min(data.len());
        tracker.record(offset, data.slice(..n), r.committed, r.verf);
        offset += n as u64;
        data = data.slice(n..);
    }
    Ok(())
}

/// COMMITs what the tracker holds; writes made under an older verifier
/// are sent again FILE_SYNC (durable on reply, no further COMMIT needed).
pub async fn commit(
    client: &Nfs3Client,
    fh: FileHandle,
    rel: &str,
    tracker: &mut WriteTracker,
) -> Result<usize, NfsError> {
    if tracker.bytes() == 0 {
        return Ok(0);
    }
    let verf = client.commit(fh, 0, 0, rel).await?;
    let resend = tracker.after_commit(verf);
    let n = resend.len();
    for (offset, data) in resend {
        let mut again = WriteTracker::default();
        write_all(
            client,
            fh,
            rel,
            offset,
            data,
            StableHow::FileSync,
            &mut again,
        )
        .await?;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_verifier_resends_only_older_writes() {
        let mut t = WriteTracker::default();
        t.record(0, Bytes::from_static(b"aaaa"), StableHow::Unstable, [1; 8]);
        t.record(4, Bytes::from_static(b"bbbb"), StableHow::Unstable, [2; 8]);
        t.record(8, Bytes::from_static(b"cccc"), StableHow::FileSync, [1; 8]);
        assert_eq!(t.bytes(), 8);
        let resend = t.after_commit([2; 8]);
        assert_eq!(resend, vec![(0, Bytes::from_static(b"aaaa"))]);
        assert_eq!(t.bytes(), 0);
        assert!(t.after_commit([3; 8]).is_empty());
    }
}
