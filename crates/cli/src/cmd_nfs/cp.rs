//! `dbio nfs cp` (local to NFS and NFS to local) and `dbio nfs cat`, over the pool's
//! data path (`dbio_nfs::copy`), with a progress line on a terminal.

use std::io::{IsTerminal, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use dbio_nfs::copy::{self, CopyError, CopyOptions};
use dbio_nfs::fs::{split_parent, Access, Create, Stable};

use super::remote::{copy_result, flat, stop_flag, warn, ConnArgs, Done, Remote};

/// Copy options from the command line, within sane bounds.
pub(super) fn options(depth: u32, io_size: u64, stable: Stable) -> CopyOptions {
    CopyOptions {
        depth: depth.clamp(1, 1024),
        io_size: io_size.clamp(4096, 16 << 20) as u32,
        stable,
        ..CopyOptions::default()
    }
}

pub(super) fn cp(conn: &ConnArgs, src: &str, dst: &str, opts: CopyOptions) -> anyhow::Result<Done> {
    match (src.starts_with("nfs://"), dst.starts_with("nfs://")) {
        (false, true) => upload(conn, Path::new(src), dst, opts),
        (true, false) => download(conn, src, Path::new(dst), opts),
        (true, true) => {
            bail!("cp: both {src} and {dst} are NFS URLs; one side must be a local path")
        }
        (false, false) => bail!("cp: neither {src} nor {dst} is an nfs:// URL"),
    }
}

fn base_name(path: &Path) -> anyhow::Result<String> {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| anyhow!("cp: {} has no file name", path.display()))
}

/// The local file a copy reads from, with its metadata; a directory is refused.
fn open_source(src: &Path) -> anyhow::Result<(std::fs::File, std::fs::Metadata)> {
    let file = std::fs::File::open(src).map_err(|e| anyhow!("cp: {}: {e}", src.display()))?;
    let meta = file
        .metadata()
        .map_err(|e| anyhow!("cp: {}: {e}", src.display()))?;
    if meta.is_dir() {
        bail!(
            "cp: {} is a directory (only files are copied)",
            src.display()
        );
    }
    Ok((file, meta))
}

fn upload(conn: &ConnArgs, src: &Path, dst: &str, opts: CopyOptions) -> anyhow::Result<Done> {
    let stop = stop_flag();
    let (file, meta) = open_source(src)?;
    let r = Remote::open(conn, dst)?;
    let fs = &r.fs;
    let mut rel = r.rel.clone();
    // A directory target (trailing slash, the root, or an existing directory) gets the
    // source's name.
    let into_dir = r.url.trailing_slash
        || rel.trim_matches('/').is_empty()
        || matches!(r.block_on(fs.lookup_path(&rel)), Ok((_, a)) if a.is_dir());
    if into_dir {
        rel = dbio_nfs::fs::join(&rel, &base_name(src)?);
    }
    let (dir, name) = split_parent(&rel);
    let (dfh, open) = r
        .block_on(async {
            let (dfh, _) = fs.lookup_path(dir).await?;
            let open = fs.create(&dfh, name, 0o644, Create::Truncate, &rel).await?;
            Ok::<_, dbio_nfs::NfsError>((dfh, open))
        })
        .map_err(flat)?;
    let mut dp = r.pool.data_path(opts.depth, opts.io_size).map_err(flat)?;
    let id = copy::add_file(fs, &mut dp, &open).map_err(flat)?;
    let mut progress = Progress::new(meta.len(), &r.display(&rel));
    let src_name = src.display().to_string();
    let result = r.block_on(copy::upload(
        fs,
        &mut dp,
        id,
        &open,
        &opts,
        stop,
        |off: u64, buf: &mut [u8]| file.read_at(buf, off),
        &src_name,
        |done| progress.update(done),
    ));
    drop(dp);
    let closed = r.block_on(fs.close(open));
    let outcome = copy_result(result);
    if !matches!(outcome, Ok(Ok(_))) {
        // No partial file is left to pass for a copy.
        let _ = r.block_on(fs.remove(&dfh, name, false, &rel));
    }
    let up = match outcome? {
        Ok(up) => up,
        Err(stopped) => return Ok(stopped),
    };
    // The data is written and committed: a refused CLOSE loses nothing.
    if let Err(e) = closed {
        warn(&e);
    }
    progress.finish(up.bytes);
    r.close()
}

fn download(conn: &ConnArgs, src: &str, dst: &Path, opts: CopyOptions) -> anyhow::Result<Done> {
    let stop = stop_flag();
    let r = Remote::open(conn, src)?;
    let (fs, rel) = (&r.fs, r.rel.as_str());
    let (open, size) = open_for_reading(&r, "cp: ")?;
    let target: PathBuf = if dst.is_dir() {
        dst.join(split_parent(rel).1)
    } else {
        dst.to_path_buf()
    };
    let target_name = target.display().to_string();
    let mut file = std::fs::File::create(&target).map_err(|e| anyhow!("cp: {target_name}: {e}"))?;
    let mut dp = r.pool.data_path(opts.depth, opts.io_size).map_err(flat)?;
    let id = copy::add_file(fs, &mut dp, &open).map_err(flat)?;
    let mut progress = Progress::new(size, &r.display(rel));
    let mut done = 0u64;
    let result = r
        .block_on(copy::download(
            &mut dp,
            id,
            size,
            &opts,
            &r.display(rel),
            stop,
            |_, data| {
                file.write_all(data)?;
                done += data.len() as u64;
                progress.update(done);
                Ok(())
            },
            &target_name,
        ))
        .and_then(|n| {
            file.flush().map_err(|source| CopyError::Local {
                path: target_name.clone(),
                source,
            })?;
            Ok(n)
        });
    drop(dp);
    let closed = r.block_on(fs.close(open));
    drop(file);
    let outcome = copy_result(result);
    if !matches!(outcome, Ok(Ok(_))) {
        // No partial file is left to pass for a copy.
        let _ = std::fs::remove_file(&target);
    }
    let read = match outcome? {
        Ok(n) => n,
        Err(stopped) => return Ok(stopped),
    };
    if let Err(e) = closed {
        warn(&e);
    }
    progress.finish(read);
    r.close()
}

/// Looks the URL's file up and opens it for reading: the open file and its size (from
/// the attributes, which bound what is read). A directory is refused.
fn open_for_reading(r: &Remote, prefix: &str) -> anyhow::Result<(dbio_nfs::fs::OpenFile, u64)> {
    let (fs, rel) = (&r.fs, r.rel.as_str());
    r.block_on(async {
        let (fh, attr) = fs.lookup_path(rel).await.map_err(flat)?;
        if attr.is_dir() {
            bail!(
                "{prefix}{} is a directory (only files are copied)",
                r.display(rel)
            );
        }
        let open = fs.open_handle(&fh, Access::Read, rel).await.map_err(flat)?;
        let size = open.attr.map_or(attr.size, |a| a.size);
        Ok((open, size))
    })
}

pub(super) fn cat(conn: &ConnArgs, url: &str) -> anyhow::Result<Done> {
    let stop = stop_flag();
    let r = Remote::open(conn, url)?;
    let (fs, rel) = (&r.fs, r.rel.as_str());
    let (open, size) = open_for_reading(&r, "")?;
    let opts = CopyOptions::default();
    let mut dp = r.pool.data_path(opts.depth, opts.io_size).map_err(flat)?;
    let id = copy::add_file(fs, &mut dp, &open).map_err(flat)?;
    let mut out = std::io::stdout().lock();
    let result = r.block_on(copy::download(
        &mut dp,
        id,
        size,
        &opts,
        &r.display(rel),
        stop,
        |_, data| out.write_all(data),
        "standard output",
    ));
    drop(dp);
    let closed = r.block_on(fs.close(open));
    match result {
        // The reader of our output went away (`| head`): not an error.
        Err(CopyError::Local { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => {
            return Ok(Done::Ok)
        }
        other => {
            if let Err(done) = copy_result(other)? {
                return Ok(done);
            }
        }
    }
    out.flush()?;
    if let Err(e) = closed {
        warn(&e);
    }
    r.close()
}

/// A progress line on standard error, only when it is a terminal.
struct Progress {
    total: u64,
    label: String,
    start: Instant,
    last: Instant,
    tty: bool,
}

impl Progress {
    fn new(total: u64, label: &str) -> Progress {
        let now = Instant::now();
        Progress {
            total,
            label: label.to_string(),
            start: now,
            last: now,
            tty: std::io::stderr().is_terminal(),
        }
    }

    fn rate(&self, done: u64) -> f64 {
        done as f64 / self.start.elapsed().as_secs_f64().max(1e-6) / 1e6
    }

    fn update(&mut self, done: u64) {
        if !self.tty || self.last.elapsed() < Duration::from_millis(100) {
            return;
        }
        self.last = Instant::now();
        let pct = (done * 100).checked_div(self.total).unwrap_or(100);
        let width = 30usize;
        let filled = (pct as usize * width / 100).min(width);
        eprint!(
            "\r{} [{}{}] {pct:>3}% {:.1}/{:.1} MiB {:.0} MB/s ",
            self.label,
            "#".repeat(filled),
            " ".repeat(width - filled),
            done as f64 / 1048576.0,
            self.total as f64 / 1048576.0,
            self.rate(done)
        );
    }

    fn finish(&self, done: u64) {
        if self.tty {
            eprintln!(
                "\r{}: {} bytes in {:.2} s ({:.0} MB/s){}",
                self.label,
                done,
                self.start.elapsed().as_secs_f64(),
                self.rate(done),
                " ".repeat(30)
            );
        }
    }
}
