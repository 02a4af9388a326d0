//! `dbio nfs ls|stat|cat` over NFSv4.1 (`?version=4.1` or `4` in the URL): one session
//! (EXCHANGE_ID, CREATE_SESSION), PUTROOTFH + LOOKUPs, READDIR, ACCESS, READ, and
//! DESTROY_SESSION + DESTROY_CLIENTID at the end.

use std::io::Write;

use anyhow::bail;
use dbio_nfs::proto::nfs4::{access, Ftype4};
use dbio_nfs::v41::{Attr, Client, SessionOptions};
use dbio_nfs::NfsUrl;

use super::{access_names, client_options, flat, format_time, kind_and_mode, ConnArgs};

async fn connect(conn: &ConnArgs, url: &NfsUrl) -> anyhow::Result<Client> {
    let options = client_options(conn, url);
    Client::connect(url, &options, SessionOptions::default())
        .await
        .map_err(flat)
}

fn mode_string(a: &Attr) -> String {
    let kind = match a.ftype {
        Ftype4::Dir | Ftype4::AttrDir => 'd',
        Ftype4::Lnk => 'l',
        Ftype4::Blk => 'b',
        Ftype4::Chr => 'c',
        Ftype4::Sock => 's',
        Ftype4::Fifo => 'p',
        _ => '-',
    };
    kind_and_mode(kind, a.mode)
}

fn mtime(a: &Attr) -> String {
    let secs = a
        .mtime
        .map_or(0, |t| t.seconds.clamp(0, i64::from(u32::MAX)));
    format_time(secs as u32)
}

fn ls_line(a: &Attr, name: &str) -> String {
    format!(
        "{} {:>3} {:>14} {} {}",
        mode_string(a),
        a.nlink,
        a.size,
        mtime(a),
        name
    )
}

pub async fn ls(conn: &ConnArgs, url: &NfsUrl) -> anyhow::Result<()> {
    let client = connect(conn, url).await?;
    let (fh, attr) = client.lookup_path(&url.path).await.map_err(flat)?;
    let mut out = std::io::stdout().lock();
    if attr.ftype != Ftype4::Dir {
        let name = url.path.rsplit('/').next().unwrap_or("");
        writeln!(out, "{}", ls_line(&attr, name))?;
    } else {
        let client = std::sync::Arc::new(client);
        let fs = dbio_nfs::Fs::v41(client.clone());
        let dir = dbio_nfs::fs::Handle::new(fh.as_bytes()).unwrap_or_default();
        let mut entries = fs.readdir(&dir, &url.path).await.map_err(flat)?;
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        for e in entries {
            let Some(a) = e.attr else { continue };
            let secs = a
                .mtime
                .map_or(0, |t| t.seconds.clamp(0, i64::from(u32::MAX)));
            writeln!(
                out,
                "{} {:>3} {:>14} {} {}",
                kind_and_mode(a.ftype.letter(), a.mode),
                a.nlink,
                a.size,
                format_time(secs as u32),
                e.name
            )?;
        }
        out.flush()?;
        drop(fs);
        return match std::sync::Arc::into_inner(client) {
            Some(c) => c.close().await.map_err(flat),
            None => Ok(()),
        };
    }
    out.flush()?;
    client.close().await.map_err(flat)
}

pub async fn stat(conn: &ConnArgs, url: &NfsUrl) -> anyhow::Result<()> {
    let client = connect(conn, url).await?;
    let (fh, a) = client.lookup_path(&url.path).await.map_err(flat)?;
    let all = access::READ
        | access::LOOKUP
        | access::MODIFY
        | access::EXTEND
        | access::DELETE
        | access::EXECUTE;
    let (_, granted) = client.access(fh, all, &url.path).await.map_err(flat)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "  path: {}:{} (NFSv4.1)", client.server(), url.path)?;
    writeln!(
        out,
        "  type: {:?}  mode: {} ({:04o})",
        a.ftype,
        mode_string(&a),
        a.mode
    )?;
    writeln!(out, "  size: {}  nlink: {}", a.size, a.nlink)?;
    writeln!(out, "  fileid: {}  mtime: {} (UTC)", a.fileid, mtime(&a))?;
    writeln!(out, "  access: {}", access_names(granted))?;
    out.flush()?;
    client.close().await.map_err(flat)
}

pub async fn cat(conn: &ConnArgs, url: &NfsUrl) -> anyhow::Result<()> {
    let client = connect(conn, url).await?;
    let path = &url.path;
    let (fh, attr) = client.lookup_path(path).await.map_err(flat)?;
    if attr.ftype == Ftype4::Dir {
        bail!("{}:{path}: is a directory", client.server());
    }
    let mut out = std::io::stdout().lock();
    let mut offset = 0u64;
    loop {
        let (data, eof) = client
            .read(fh, offset, client.max_read(), path)
            .await
            .map_err(flat)?;
        out.write_all(&data)?;
        offset += data.len() as u64;
        if eof || data.is_empty() {
            break;
        }
    }
    out.flush()?;
    client.close().await.map_err(flat)
}
