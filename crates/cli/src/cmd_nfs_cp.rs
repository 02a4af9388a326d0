//! `dbio nfs cp`: local to NFS and NFS to local, pipelined, with a progress
//! line on a terminal.

use super::*;
use std::os::unix::fs::FileExt;

pub(super) async fn cp(
    conn: &ConnArgs,
    src: &str,
    dst: &str,
    opts: TransferOptions,
) -> anyhow::Result<()> {
    match (src.starts_with("nfs://"), dst.starts_with("nfs://")) {
        (false, true) => upload(conn, Path::new(src), dst, opts).await,
        (true, false) => download(conn, src, Path::new(dst), opts).await,
        (true, true) => {
            bail!("cp: both {src} and {dst} are NFS URLs; one side must be a local path")
        }
        (false, false) => bail!("cp: neither {src} nor {dst} is an nfs:// URL"),
    }
}

pub(super) fn base_name(path: &Path) -> anyhow::Result<String> {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| anyhow!("cp: {} has no file name", path.display()))
}

/// The local file a copy reads from, with its metadata; a directory is refused.
pub(super) fn open_source(src: &Path) -> anyhow::Result<(std::fs::File, std::fs::Metadata)> {
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

async fn upload(
    conn: &ConnArgs,
    src: &Path,
    dst: &str,
    opts: TransferOptions,
) -> anyhow::Result<()> {
    let (file, meta) = open_source(src)?;
    let (client, mut rest, url) = mount(conn, dst).await?;
    // A directory target (trailing slash, export root, or existing directory) gets the source's name.
    let into_dir = url.trailing_slash
        || rest.is_empty()
        || matches!(client.lookup_path(&rest).await, Ok((_, a)) if a.ftype == Ftype3::Dir);
    if into_dir {
        rest = join(&rest, &base_name(src)?);
    }
    let (dir, name) = split_parent(&rest);
    let (dfh, _) = client.lookup_path(dir).await.map_err(flat)?;
    let attrs = Sattr3 {
        mode: Some(0o644),
        size: Some(0),
        ..Sattr3::default()
    };
    let fh = client
        .create(dfh, name, CreateHow::Unchecked(attrs), &rest)
        .await
        .map_err(flat)?;
    let mut progress = Progress::new(meta.len(), &client.full_path(&rest));
    let src_name = src.display().to_string();
    let written = transfer::upload(
        &client,
        fh,
        &rest,
        opts,
        |off: u64, buf: &mut [u8]| {
            file.read_at(buf, off)
                .map_err(|e| local_error(&src_name, e))
        },
        |done| progress.update(done),
    )
    .await
    .map_err(flat)?;
    progress.finish(written);
    Ok(())
}

async fn download(
    conn: &ConnArgs,
    src: &str,
    dst: &Path,
    opts: TransferOptions,
) -> anyhow::Result<()> {
    let (client, rest, _) = mount(conn, src).await?;
    let (fh, attrs) = client.lookup_path(&rest).await.map_err(flat)?;
    if attrs.ftype == Ftype3::Dir {
        bail!(
            "cp: {} is a directory (only files are copied)",
            client.full_path(&rest)
        );
    }
    let target: PathBuf = if dst.is_dir() {
        dst.join(split_parent(&rest).1)
    } else {
        dst.to_path_buf()
    };
    let target_name = target.display().to_string();
    let mut file = std::fs::File::create(&target).map_err(|e| anyhow!("cp: {target_name}: {e}"))?;
    let mut progress = Progress::new(attrs.size, &client.full_path(&rest));
    let mut done = 0u64;
    let read = transfer::download(&client, fh, &rest, attrs.size, opts, |_, data| {
        file.write_all(data)
            .map_err(|e| local_error(&target_name, e))?;
        done += data.len() as u64;
        progress.update(done);
        Ok(())
    })
    .await
    .map_err(flat)?;
    file.flush()
        .map_err(|e| anyhow!("cp: {target_name}: {e}"))?;
    progress.finish(read);
    Ok(())
}

/// A progress line on standard error, only when it is a terminal.
pub(super) struct Progress {
    total: u64,
    label: String,
    start: Instant,
    last: Instant,
    tty: bool,
}

impl Progress {
    pub(super) fn new(total: u64, label: &str) -> Progress {
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

    pub(super) fn update(&mut self, done: u64) {
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

    pub(super) fn finish(&self, done: u64) {
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
