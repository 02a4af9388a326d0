//! `dbio nfs cp|mkdir|rm|df|ping` over NFSv4.1 (`?version=4.1`): the same output and
//! errors as the NFSv3 commands, over one session. Files are OPENed (CLAIM_NULL, share
//! deny none) and CLOSEd; `cp` to NFS creates or truncates the target like the NFSv3
//! one, with pipelined UNSTABLE WRITEs and a COMMIT.

use std::future::Future;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::pin::Pin;

use anyhow::{anyhow, bail};
use dbio_nfs::proto::nfs4::{Compound, Fh4, Ftype4, Nfsstat4, Stateid, MINOR_VERSION};
use dbio_nfs::transfer::TransferOptions;
use dbio_nfs::v41::{self, Access, Client, SessionOptions};
use dbio_nfs::{NfsError, NfsUrl};

use super::cp_impl::{base_name, open_source, Progress};
use super::{client_options, flat, local_error, write_latency, ConnArgs};

async fn connect(conn: &ConnArgs, url: &NfsUrl) -> anyhow::Result<Client> {
    let options = client_options(conn, url);
    let session = SessionOptions {
        // Room for a 1 MiB READ or WRITE besides the COMPOUND's other ops.
        max_message: (1 << 20) + 4096,
        ..SessionOptions::default()
    };
    Client::connect(url, &options, session).await.map_err(flat)
}

fn parse(url: &str) -> anyhow::Result<NfsUrl> {
    NfsUrl::parse(url).map_err(|e| anyhow!("{e}"))
}

/// The components of an absolute path.
fn components(path: &str) -> Vec<&str> {
    path.split('/').filter(|c| !c.is_empty()).collect()
}

/// `/a/b/c` as (`/a/b`, `c`); `None` for the root.
fn split_path(path: &str) -> Option<(String, &str)> {
    let names = components(path);
    let (name, dirs) = names.split_last()?;
    Some((format!("/{}", dirs.join("/")), name))
}

/// `server:path` for messages.
fn full(client: &Client, path: &str) -> String {
    format!("{}:{path}", client.server())
}

pub async fn cp(
    conn: &ConnArgs,
    src: &str,
    dst: &str,
    opts: TransferOptions,
) -> anyhow::Result<()> {
    match (src.starts_with("nfs://"), dst.starts_with("nfs://")) {
        (false, true) => upload(conn, Path::new(src), &parse(dst)?, opts).await,
        (true, false) => download(conn, &parse(src)?, Path::new(dst), opts).await,
        (true, true) => {
            bail!("cp: both {src} and {dst} are NFS URLs; one side must be a local path")
        }
        (false, false) => bail!("cp: neither {src} nor {dst} is an nfs:// URL"),
    }
}

async fn upload(
    conn: &ConnArgs,
    src: &Path,
    url: &NfsUrl,
    opts: TransferOptions,
) -> anyhow::Result<()> {
    let (file, meta) = open_source(src)?;
    let client = connect(conn, url).await?;
    let mut path = url.path.clone();
    // A directory target (trailing slash, the root, or an existing directory) gets the
    // source's name.
    let into_dir = url.trailing_slash
        || components(&path).is_empty()
        || matches!(client.lookup_path(&path).await, Ok((_, a)) if a.ftype == Ftype4::Dir);
    if into_dir {
        path = format!("{}/{}", path.trim_end_matches('/'), base_name(src)?);
    }
    let Some((dir, name)) = split_path(&path) else {
        bail!("cp: {} names no file", full(&client, &path));
    };
    let (dfh, _) = client.lookup_path(&dir).await.map_err(flat)?;
    let open = client
        .create_or_truncate(dfh, name, 0o644, &path)
        .await
        .map_err(flat)?;
    let mut progress = Progress::new(meta.len(), &full(&client, &path));
    let src_name = src.display().to_string();
    let written = v41::transfer::upload(
        &client,
        &open,
        opts,
        |off: u64, buf: &mut [u8]| {
            file.read_at(buf, off)
                .map_err(|e| local_error(&src_name, e))
        },
        |done| progress.update(done),
    )
    .await
    .map_err(flat)?;
    client.close_file(open).await.map_err(flat)?;
    progress.finish(written);
    client.close().await.map_err(flat)
}

async fn download(
    conn: &ConnArgs,
    url: &NfsUrl,
    dst: &Path,
    opts: TransferOptions,
) -> anyhow::Result<()> {
    let client = connect(conn, url).await?;
    let path = &url.path;
    let (_, attr) = client.lookup_path(path).await.map_err(flat)?;
    let Some((dir, name)) = split_path(path).filter(|_| attr.ftype != Ftype4::Dir) else {
        bail!(
            "cp: {} is a directory (only files are copied)",
            full(&client, path)
        );
    };
    let target: PathBuf = if dst.is_dir() {
        dst.join(name)
    } else {
        dst.to_path_buf()
    };
    let target_name = target.display().to_string();
    let (dfh, _) = client.lookup_path(&dir).await.map_err(flat)?;
    let open = client
        .open(dfh, name, Access::Read, path)
        .await
        .map_err(flat)?;
    let mut file = std::fs::File::create(&target).map_err(|e| anyhow!("cp: {target_name}: {e}"))?;
    let mut progress = Progress::new(open.attr.size, &full(&client, path));
    let mut done = 0u64;
    let read = v41::transfer::download(
        &client,
        open.fh,
        open.stateid,
        path,
        open.attr.size,
        opts,
        |_, data| {
            file.write_all(data)
                .map_err(|e| local_error(&target_name, e))?;
            done += data.len() as u64;
            progress.update(done);
            Ok(())
        },
    )
    .await
    .map_err(flat)?;
    file.flush()
        .map_err(|e| anyhow!("cp: {target_name}: {e}"))?;
    client.close_file(open).await.map_err(flat)?;
    progress.finish(read);
    client.close().await.map_err(flat)
}

pub async fn mkdir(conn: &ConnArgs, url: &NfsUrl, parents: bool) -> anyhow::Result<()> {
    let client = connect(conn, url).await?;
    let path = &url.path;
    let Some((dir, name)) = split_path(path) else {
        bail!("{}: the root exists already", full(&client, path));
    };
    if !parents {
        let (dfh, _) = client.lookup_path(&dir).await.map_err(flat)?;
        client.mkdir(dfh, name, 0o755, path).await.map_err(flat)?;
        return client.close().await.map_err(flat);
    }
    let (mut fh, _) = client.lookup_path("/").await.map_err(flat)?;
    let mut walked = String::new();
    for name in components(path) {
        walked = format!("{walked}/{name}");
        fh = match client.lookup(fh, name, &walked).await {
            Ok((h, _)) => h,
            Err(NfsError::Status4 {
                status: Nfsstat4::Noent,
                ..
            }) => client.mkdir(fh, name, 0o755, &walked).await.map_err(flat)?,
            Err(e) => return Err(flat(e)),
        };
    }
    client.close().await.map_err(flat)
}

pub async fn rm(conn: &ConnArgs, url: &NfsUrl) -> anyhow::Result<()> {
    let client = connect(conn, url).await?;
    let path = &url.path;
    let Some((dir, name)) = split_path(path) else {
        bail!("{}: will not remove the root", full(&client, path));
    };
    let (dfh, _) = client.lookup_path(&dir).await.map_err(flat)?;
    // REMOVE takes files and empty directories alike.
    client.remove(dfh, name, path).await.map_err(flat)?;
    client.close().await.map_err(flat)
}

pub async fn df(conn: &ConnArgs, url: &NfsUrl) -> anyhow::Result<()> {
    let client = connect(conn, url).await?;
    let (fh, _) = client.lookup_path(&url.path).await.map_err(flat)?;
    let s = client.fs_space(fh, &url.path).await.map_err(flat)?;
    let (total, free, avail) = (
        s.space_total.unwrap_or(0),
        s.space_free.unwrap_or(0),
        s.space_avail.unwrap_or(0),
    );
    let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
    let used = total.saturating_sub(free);
    let pct = if total == 0 {
        0.0
    } else {
        used as f64 * 100.0 / total as f64
    };
    let n = |v: Option<u64>| v.map_or("?".to_string(), |v| v.to_string());
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:<28} {:>10} {:>10} {:>10} {:>5}",
        "export", "size GiB", "used GiB", "avail GiB", "use%"
    )?;
    writeln!(
        out,
        "{:<28} {:>10.2} {:>10.2} {:>10.2} {:>4.0}%",
        full(&client, &url.path),
        gib(total),
        gib(used),
        gib(avail),
        pct
    )?;
    writeln!(
        out,
        "files: {} total, {} free, {} available to you",
        n(s.files_total),
        n(s.files_free),
        n(s.files_avail)
    )?;
    writeln!(
        out,
        "maxread {} maxwrite {}; name_max {}, linkmax {}; session: {} slots, {} byte requests",
        n(s.maxread),
        n(s.maxwrite),
        n(s.maxname.map(u64::from)),
        n(s.maxlink.map(u64::from)),
        client.session().slot_stats().granted,
        client.session().fore_channel().maxrequestsize
    )?;
    out.flush()?;
    client.close().await.map_err(flat)
}

/// SEQUENCE-only COMPOUNDs (the NFSv4.1 round trip with the least work), or READs.
struct PingCalls<'a> {
    client: &'a Client,
    path: &'a str,
    /// The file's handle, the size of a READ and the READs that fit in the file.
    read: Option<(Fh4, u32, u64)>,
    rng: u64,
}

impl<'a> dbio_experiment::ping::RoundTrip for PingCalls<'a> {
    type Reply = Result<(), NfsError>;
    type Pending = Pin<Box<dyn Future<Output = Result<(), NfsError>> + 'a>>;

    fn send(&mut self) -> Self::Pending {
        let (client, path) = (self.client, self.path);
        match self.read {
            None => Box::pin(async move {
                let c = Compound::new("ping", MINOR_VERSION);
                client.session().compound(&c, path).await.map(drop)
            }),
            Some((fh, size, blocks)) => {
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                let offset = (self.rng % blocks) * u64::from(size);
                Box::pin(async move {
                    let (data, _) = client
                        .read_stateid(fh, Stateid::ANONYMOUS, offset, size, path)
                        .await?;
                    std::hint::black_box(data.len());
                    Ok(())
                })
            }
        }
    }

    fn check(&mut self, reply: Self::Reply) -> Result<(), String> {
        reply.map_err(|e| e.to_string())
    }
}

pub async fn ping(
    conn: &ConnArgs,
    url: &NfsUrl,
    count: u64,
    outstanding: usize,
    read: Option<u64>,
) -> anyhow::Result<()> {
    let client = connect(conn, url).await?;
    let path = &url.path;
    let read = match read {
        None => None,
        Some(size) => {
            let (fh, attr) = client.lookup_path(path).await.map_err(flat)?;
            let size = size.clamp(1, u64::from(client.max_read()));
            if attr.size < size {
                bail!(
                    "{}: file of {} bytes is smaller than one READ of {size}",
                    full(&client, path),
                    attr.size
                );
            }
            Some((fh, size as u32, attr.size / size))
        }
    };
    let name = if read.is_some() { "READ" } else { "SEQUENCE" };
    let mut calls = PingCalls {
        client: &client,
        path,
        read,
        rng: 0x9e37_79b9_7f4a_7c15u64 ^ u64::from(std::process::id()),
    };
    let r = dbio_experiment::ping::ping(&mut calls, count, outstanding)
        .await
        .map_err(|e| anyhow!(e))?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{} {name} calls to {} ({}, NFSv4.1 session of {} slots), {} outstanding: {:.0} calls/s, client CPU {:.2} us/call",
        r.calls,
        client.server(),
        path,
        client.session().slot_stats().granted,
        r.outstanding,
        r.calls_per_s(),
        r.cpu_us_per_call(),
    )?;
    write_latency(&mut out, &r)?;
    out.flush()?;
    client.close().await.map_err(flat)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_into_parent_and_name() {
        assert_eq!(split_path("/export/a/b"), Some(("/export/a".into(), "b")));
        assert_eq!(split_path("/export/"), Some(("/".into(), "export")));
        assert_eq!(split_path("//"), None);
        assert_eq!(components("/a//b/"), ["a", "b"]);
    }
}
