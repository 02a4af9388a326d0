//! `dbio nfs ls|stat|df|mkdir|rm`: metadata over the file API, one output format for
//! every version (what an attribute set does not carry shows as "-").

use std::io::Write;

use anyhow::bail;
use dbio_nfs::fs::{access, join, split_parent, Attr, Time};

use super::remote::{flat, format_time, ConnArgs, Done, Remote};

/// `ls -l`'s mode column: the file type letter, then rwx for owner, group, others.
pub(crate) fn kind_and_mode(kind: char, mode: u32) -> String {
    let mut s = String::from(kind);
    for shift in [6, 3, 0] {
        let bits = (mode >> shift) & 7;
        s.push(if bits & 4 != 0 { 'r' } else { '-' });
        s.push(if bits & 2 != 0 { 'w' } else { '-' });
        s.push(if bits & 1 != 0 { 'x' } else { '-' });
    }
    s
}

/// The access an ACCESS reply granted, by name ("none" for nothing).
pub(crate) fn access_names(granted: u32) -> String {
    let names: Vec<&str> = [
        (access::READ, "read"),
        (access::LOOKUP, "lookup"),
        (access::MODIFY, "modify"),
        (access::EXTEND, "extend"),
        (access::DELETE, "delete"),
        (access::EXECUTE, "execute"),
    ]
    .iter()
    .filter(|(bit, _)| granted & bit != 0)
    .map(|(_, name)| *name)
    .collect();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(",")
    }
}

/// An optional figure, "-" when the attributes do not carry it.
fn opt(v: Option<impl std::fmt::Display>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

fn time(t: Option<Time>) -> String {
    t.map_or_else(|| "-".to_string(), |t| format_time(t.seconds))
}

fn ls_line(a: &Attr, name: &str) -> String {
    format!(
        "{} {:>3} {:>6} {:>6} {:>14} {:>16} {}",
        kind_and_mode(a.ftype.letter(), a.mode),
        a.nlink,
        opt(a.uid),
        opt(a.gid),
        a.size,
        time(a.mtime),
        name
    )
}

pub(super) fn ls(conn: &ConnArgs, url: &str) -> anyhow::Result<Done> {
    let r = Remote::open(conn, url)?;
    let (fs, rel) = (&r.fs, r.rel.as_str());
    let lines = r.block_on(async {
        let (fh, attr) = fs.lookup_path(rel).await?;
        if !attr.is_dir() {
            return Ok(vec![ls_line(&attr, split_parent(rel).1)]);
        }
        let mut entries = fs.readdir(&fh, rel).await?;
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        let mut lines = Vec::with_capacity(entries.len());
        for e in entries {
            let path = join(rel, &e.name);
            let a = match (e.attr, e.handle) {
                (Some(a), _) => a,
                (None, Some(h)) => fs.getattr(&h, &path).await?,
                (None, None) => fs.lookup_path(&path).await?.1,
            };
            lines.push(ls_line(&a, &e.name));
        }
        Ok::<_, dbio_nfs::NfsError>(lines)
    });
    let lines = lines.map_err(flat)?;
    let mut out = std::io::stdout().lock();
    for l in lines {
        writeln!(out, "{l}")?;
    }
    out.flush()?;
    r.close()
}

pub(super) fn stat(conn: &ConnArgs, url: &str) -> anyhow::Result<Done> {
    let r = Remote::open(conn, url)?;
    let (fs, rel) = (&r.fs, r.rel.as_str());
    let (a, granted) = r
        .block_on(async {
            let (fh, a) = fs.lookup_path(rel).await?;
            let granted = fs.access(&fh, access::ALL, rel).await?;
            Ok::<_, dbio_nfs::NfsError>((a, granted))
        })
        .map_err(flat)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "  path: {} (NFS version {})",
        r.display(rel),
        fs.version().label()
    )?;
    writeln!(
        out,
        "  type: {:?}  mode: {} ({:04o})",
        a.ftype,
        kind_and_mode(a.ftype.letter(), a.mode),
        a.mode & 0o7777
    )?;
    writeln!(out, "  size: {}  used: {}", a.size, opt(a.used))?;
    writeln!(
        out,
        "  uid: {}  gid: {}  nlink: {}",
        opt(a.uid),
        opt(a.gid),
        a.nlink
    )?;
    writeln!(
        out,
        "  fileid: {}  fsid: {}",
        a.fileid,
        opt(a.fsid.map(|f| format!("{f:#x}")))
    )?;
    writeln!(
        out,
        "  atime: {}  mtime: {}  ctime: {} (UTC)",
        time(a.atime),
        time(a.mtime),
        time(a.ctime)
    )?;
    writeln!(out, "  access: {}", access_names(granted))?;
    out.flush()?;
    r.close()
}

pub(super) fn df(conn: &ConnArgs, url: &str) -> anyhow::Result<Done> {
    let r = Remote::open(conn, url)?;
    let (fs, rel) = (&r.fs, r.rel.as_str());
    let s = r
        .block_on(async {
            let (fh, _) = fs.lookup_path(rel).await?;
            fs.space(&fh, rel).await
        })
        .map_err(flat)?;
    let (total, free, avail) = (
        s.bytes_total.unwrap_or(0),
        s.bytes_free.unwrap_or(0),
        s.bytes_avail.unwrap_or(0),
    );
    let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
    let used = total.saturating_sub(free);
    let pct = if total == 0 {
        0.0
    } else {
        used as f64 * 100.0 / total as f64
    };
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:<28} {:>10} {:>10} {:>10} {:>5}",
        "export", "size GiB", "used GiB", "avail GiB", "use%"
    )?;
    writeln!(
        out,
        "{:<28} {:>10.2} {:>10.2} {:>10.2} {:>4.0}%",
        r.display(rel),
        gib(total),
        gib(used),
        gib(avail),
        pct
    )?;
    writeln!(
        out,
        "files: {} total, {} free, {} available to you",
        opt(s.files_total),
        opt(s.files_free),
        opt(s.files_avail)
    )?;
    writeln!(
        out,
        "maxread {} maxwrite {}; name_max {}, linkmax {}",
        opt(s.max_read),
        opt(s.max_write),
        opt(s.max_name),
        opt(s.max_link)
    )?;
    out.flush()?;
    r.close()
}

pub(super) fn mkdir(conn: &ConnArgs, url: &str, parents: bool) -> anyhow::Result<Done> {
    let r = Remote::open(conn, url)?;
    let (fs, rel) = (&r.fs, r.rel.as_str());
    if rel.trim_matches('/').is_empty() {
        bail!("{}: the root exists already", r.display(rel));
    }
    r.block_on(async {
        if parents {
            return fs.make_dirs(rel, 0o755).await.map(drop);
        }
        let (dir, name) = split_parent(rel);
        let (dfh, _) = fs.lookup_path(dir).await?;
        fs.mkdir(&dfh, name, 0o755, rel).await.map(drop)
    })
    .map_err(flat)?;
    r.close()
}

pub(super) fn rm(conn: &ConnArgs, url: &str) -> anyhow::Result<Done> {
    let r = Remote::open(conn, url)?;
    let (fs, rel) = (&r.fs, r.rel.as_str());
    if rel.trim_matches('/').is_empty() {
        bail!("{}: will not remove the root", r.display(rel));
    }
    r.block_on(async {
        let (dir, name) = split_parent(rel);
        let (dfh, _) = fs.lookup_path(dir).await?;
        let (_, a) = fs.lookup(&dfh, name, rel).await?;
        fs.remove(&dfh, name, a.is_dir(), rel).await
    })
    .map_err(flat)?;
    r.close()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_and_access_render() {
        assert_eq!(kind_and_mode('d', 0o750), "drwxr-x---");
        assert_eq!(kind_and_mode('-', 0o644), "-rw-r--r--");
        assert_eq!(access_names(0), "none");
        assert_eq!(access_names(access::READ | access::EXTEND), "read,extend");
        assert_eq!(opt(None::<u32>), "-");
        assert_eq!(time(Some(Time::default())), "1970-01-01 00:00");
    }
}
