//! Whole-file copies over an NFSv4.1 session, pipelined like the NFSv3 ones
//! ([`crate::transfer`]): READs or WRITEs of one file in flight at once (each on a slot
//! of its own, the session bounding how many), handed on in order of offset; UNSTABLE
//! writes are committed and resent when the write verifier changed.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use bytes::Bytes;

use super::{Client, OpenFile, Written};
use crate::error::NfsError;
use crate::proto::nfs3;
use crate::proto::nfs4::{Fh4, StableHow, Stateid};
use crate::transfer::{fill, ReadAt, TransferOptions, WriteTracker};

/// A future in flight and, once it is ready, its output.
type Entry<'a, T> = (Pin<Box<dyn Future<Output = T> + 'a>>, Option<T>);

/// Futures run concurrently on the caller's task, their outputs taken in the order
/// they were pushed.
struct InOrder<'a, T> {
    queue: VecDeque<Entry<'a, T>>,
}

impl<'a, T> InOrder<'a, T> {
    fn new() -> Self {
        InOrder {
            queue: VecDeque::new(),
        }
    }

    fn len(&self) -> usize {
        self.queue.len()
    }

    fn push(&mut self, f: impl Future<Output = T> + 'a) {
        self.queue.push_back((Box::pin(f), None));
    }

    /// The oldest future's output, once it is ready (all are polled meanwhile);
    /// `None` when none is left.
    async fn next(&mut self) -> Option<T> {
        std::future::poll_fn(|cx| {
            for (f, out) in self.queue.iter_mut() {
                if out.is_none() {
                    if let Poll::Ready(v) = f.as_mut().poll(cx) {
                        *out = Some(v);
                    }
                }
            }
            match self.queue.front() {
                None => Poll::Ready(None),
                Some((_, Some(_))) => Poll::Ready(self.queue.pop_front().and_then(|(_, v)| v)),
                Some((_, None)) => Poll::Pending,
            }
        })
        .await
    }
}

/// The NFSv3 stability a tracker keeps (same meaning, other codec).
fn v3_stable(s: StableHow) -> nfs3::StableHow {
    match s {
        StableHow::Unstable => nfs3::StableHow::Unstable,
        StableHow::DataSync => nfs3::StableHow::DataSync,
        StableHow::FileSync => nfs3::StableHow::FileSync,
    }
}

/// The NFSv4 stability asked for by [`TransferOptions::stable`].
pub fn v4_stable(s: nfs3::StableHow) -> StableHow {
    match s {
        nfs3::StableHow::Unstable => StableHow::Unstable,
        nfs3::StableHow::DataSync => StableHow::DataSync,
        nfs3::StableHow::FileSync => StableHow::FileSync,
    }
}

/// Reads `size` bytes of a file with `stateid` (an open stateid, or
/// [`Stateid::ANONYMOUS`]) in order, handing each piece to `sink` (offset, data).
/// Returns the bytes read (less than `size` if the file ended earlier).
#[allow(clippy::too_many_arguments)]
pub async fn download(
    client: &Client,
    fh: Fh4,
    stateid: Stateid,
    path: &str,
    size: u64,
    opts: TransferOptions,
    mut sink: impl FnMut(u64, &[u8]) -> Result<(), NfsError>,
) -> Result<u64, NfsError> {
    let chunk = u64::from(client.max_read().min(opts.max_io.max(4096)));
    let window = usize::try_from((opts.read_window / chunk).max(1)).unwrap_or(usize::MAX);
    let depth = opts.depth.clamp(1, window);
    let mut reads = InOrder::new();
    let (mut next, mut done) = (0u64, 0u64);
    loop {
        while reads.len() < depth && next < size {
            let (offset, want) = (next, chunk.min(size - next) as u32);
            reads.push(async move {
                let r = client.read_stateid(fh, stateid, offset, want, path).await;
                (offset, want, r)
            });
            next += u64::from(want);
        }
        let Some((offset, want, r)) = reads.next().await else {
            return Ok(done);
        };
        let (mut data, mut eof) = r?;
        let mut got = 0u64;
        loop {
            sink(offset + got, &data)?;
            got += data.len() as u64;
            if got >= u64::from(want) || eof || data.is_empty() {
                break;
            }
            // Short read: fetch the rest of this piece before moving on.
            (data, eof) = client
                .read_stateid(fh, stateid, offset + got, want - got as u32, path)
                .await?;
        }
        done += got;
        if got < u64::from(want) {
            // The file ended early: let what is in flight finish, then stop.
            while reads.next().await.is_some() {}
            return Ok(done);
        }
    }
}

/// Writes an open file from `source`, in order, `opts.depth` WRITEs at a time.
/// UNSTABLE data is committed at the end (and every `commit_every` bytes); ranges
/// written under a verifier the COMMIT does not confirm are read from the source again
/// and resent FILE_SYNC. Returns the bytes written.
pub async fn upload(
    client: &Client,
    file: &OpenFile,
    opts: TransferOptions,
    mut source: impl ReadAt,
    mut progress: impl FnMut(u64),
) -> Result<u64, NfsError> {
    let chunk = client.max_write().min(opts.max_io.max(4096)) as usize;
    let stable = v4_stable(opts.stable);
    let mut writes = InOrder::new();
    let mut tracker = WriteTracker::default();
    let (mut offset, mut written, mut at_end) = (0u64, 0u64, false);
    loop {
        while !at_end && writes.len() < opts.depth.max(1) {
            let data = fill(&mut source, offset, chunk)?;
            at_end = data.len() < chunk;
            if data.is_empty() {
                break;
            }
            let at = offset;
            offset += data.len() as u64;
            writes.push(async move {
                let r = client.write(file, at, &data, stable).await;
                (at, data, r)
            });
        }
        let Some((at, data, r)) = writes.next().await else {
            break;
        };
        let w = r?;
        let n = w.count as usize;
        record(&mut tracker, at, n as u32, &w);
        if n < data.len() {
            // Short write: send the rest before moving on.
            write_all(
                client,
                file,
                at + n as u64,
                data.slice(n..),
                stable,
                &mut tracker,
            )
            .await?;
        }
        written += data.len() as u64;
        progress(written);
        if tracker.bytes() >= opts.commit_every {
            // Writes still in flight are checked by a later COMMIT.
            commit(client, file, &mut tracker, &mut source).await?;
        }
    }
    commit(client, file, &mut tracker, &mut source).await?;
    Ok(written)
}

fn record(tracker: &mut WriteTracker, offset: u64, len: u32, w: &Written) {
    tracker.record(offset, len, v3_stable(w.committed), w.verifier);
}

async fn write_all(
    client: &Client,
    file: &OpenFile,
    mut offset: u64,
    mut data: Bytes,
    stable: StableHow,
    tracker: &mut WriteTracker,
) -> Result<(), NfsError> {
    while !data.is_empty() {
        let w = client.write(file, offset, &data, stable).await?;
        if w.count == 0 {
            return Err(NfsError::Invalid {
                path: file.path.clone(),
                reason: format!("server wrote 0 bytes at offset {offset}"),
            });
        }
        let n = (w.count as usize).min(data.len());
        record(tracker, offset, n as u32, &w);
        offset += n as u64;
        data = data.slice(n..);
    }
    Ok(())
}

/// COMMITs what the tracker holds; ranges written under another verifier are read
/// from `source` again and sent FILE_SYNC. Returns how many ranges were resent.
pub async fn commit(
    client: &Client,
    file: &OpenFile,
    tracker: &mut WriteTracker,
    source: &mut impl ReadAt,
) -> Result<usize, NfsError> {
    if tracker.bytes() == 0 {
        return Ok(0);
    }
    let verf = client.commit(file.fh, 0, 0, &file.path).await?;
    let resend = tracker.after_commit(verf);
    for &(offset, len) in &resend {
        let data = fill(source, offset, len as usize)?;
        let mut again = WriteTracker::default();
        write_all(client, file, offset, data, StableHow::FileSync, &mut again).await?;
    }
    Ok(resend.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_hands_outputs_on_in_push_order() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut q = InOrder::new();
            // The later-pushed futures finish first.
            for (i, ms) in [(0u32, 30u64), (1, 10), (2, 0)] {
                q.push(async move {
                    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                    i
                });
            }
            let mut got = Vec::new();
            while let Some(i) = q.next().await {
                got.push(i);
            }
            assert_eq!(got, [0, 1, 2]);
            assert_eq!(q.len(), 0);
        });
    }
}
