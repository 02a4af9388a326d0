//! `dbio doctor`: the pitfalls field reports name, checked on a target
//! directory and an Oracle parameter file. Each check is a function from
//! what it reads to [`Finding`]s: what was found, why it matters, the fix.

use std::fs;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::blockdev::{devices_under, mount_of};
use crate::doctor_nfs::{self, Cluster};
use crate::frag::{copy_on_write, file_frag, fs_fill};
use crate::kernel_files;
use crate::DiagError;

/// How bad a finding is. Only warnings and errors make `dbio doctor` exit 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub severity: Severity,
    /// A short name of the check, e.g. "cow-data-files".
    pub check: String,
    /// What was found, naming where.
    pub found: String,
    /// Why it matters, one sentence.
    pub why: String,
    /// What to do.
    pub fix: String,
}

/// A check that ran and what it looked at, so that a clean result can be
/// trusted: "no problems" then means these passed, not that nothing ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// The check's name, as its findings carry it.
    pub check: String,
    /// What it looked at, e.g. "/data (ext4) accepts O_DIRECT".
    pub looked_at: String,
}

/// What a doctor's visit found, and every check that ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Checkup {
    pub findings: Vec<Finding>,
    pub ran: Vec<Check>,
}

impl Checkup {
    fn ran(&mut self, check: &str, looked_at: String) {
        self.ran.push(Check {
            check: check.into(),
            looked_at,
        });
    }

    /// The checks that ran and found nothing.
    pub fn passed(&self) -> Vec<&Check> {
        self.ran
            .iter()
            .filter(|c| !self.findings.iter().any(|f| f.check == c.check))
            .collect()
    }

    /// The checks of Oracle parameters ([`check_params`]), recorded as run.
    pub fn params(&mut self, params: &[(String, String)], cores: usize) {
        self.ran(
            "filesystemio_options",
            "filesystemio_options is SETALL".into(),
        );
        if params.iter().any(|(n, _)| n == "parallel_max_servers") {
            self.ran(
                "parallel_max_servers",
                format!("parallel_max_servers is at most twice the {cores} cores"),
            );
        }
        self.findings.extend(check_params(params, cores));
    }
}

pub(crate) fn finding(
    severity: Severity,
    check: &str,
    found: String,
    why: &str,
    fix: &str,
) -> Finding {
    Finding {
        severity,
        check: check.into(),
        found,
        why: why.into(),
        fix: fix.into(),
    }
}

/// Fill level above which a copy-on-write file system fragments fast.
pub const COW_FILL_PCT: f64 = 80.0;
/// Fewer requests per device queue than this starve a database's I/O.
pub const MIN_QUEUE_DEPTH: u64 = 32;

const FS_IOC_GETFLAGS: libc::c_ulong = 0x8008_6601;
const FS_NOCOW_FL: libc::c_long = 0x0080_0000;

/// The files of a target: data files (`*.dbf`, `*.dat`, dbio's data files)
/// and redo logs (`*.log`, `*.rdo`, `*redo*`), regular files only.
pub fn target_files(dir: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>), DiagError> {
    let mut data = Vec::new();
    let mut redo = Vec::new();
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| DiagError::io(dir, e))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
        .collect();
    entries.sort();
    for p in entries.into_iter().take(100_000) {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        if name.ends_with(".dbf") || name.ends_with(".dat") {
            data.push(p);
        } else if name.ends_with(".log") || name.ends_with(".rdo") || name.contains("redo") {
            redo.push(p);
        }
    }
    Ok((data, redo))
}

/// Whether the file has the no-copy-on-write attribute (chattr +C).
fn nocow(path: &Path) -> Option<bool> {
    let f = fs::File::open(path).ok()?;
    let mut flags: libc::c_long = 0;
    // SAFETY: FS_IOC_GETFLAGS writes one long into `flags`.
    let rc = unsafe {
        libc::ioctl(
            std::os::fd::AsRawFd::as_raw_fd(&f),
            FS_IOC_GETFLAGS as _,
            &mut flags,
        )
    };
    (rc == 0).then_some(flags & FS_NOCOW_FL != 0)
}

fn names(paths: &[PathBuf], max: usize) -> String {
    let mut v: Vec<String> = paths
        .iter()
        .take(max)
        .map(|p| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    if paths.len() > max {
        v.push(format!("and {} more", paths.len() - max));
    }
    v.join(", ")
}

/// The checks of the target directory: copy on write, fill level, data and
/// redo together, fragmentation, O_DIRECT, the devices' queues, NFS mount
/// options (for a database that is `cluster`, RAC or not).
pub fn check_target(dir: &Path, cluster: Cluster) -> Result<Checkup, DiagError> {
    let mut up = Checkup::default();
    let mut out = Vec::new();
    let meta = fs::metadata(dir).map_err(|e| DiagError::io(dir, e))?;
    if !meta.is_dir() {
        return Err(DiagError::Other(format!(
            "{}: not a directory",
            dir.display()
        )));
    }
    let (data, redo) = target_files(dir)?;
    let fill = fs_fill(dir)?;
    let cow = copy_on_write(&fill.fs_type);
    let shown = dir.display();
    let files = data.len() + redo.len();
    if fill.fs_type == "btrfs" {
        up.ran(
            "cow-data-files",
            format!("the {files} database files in {shown} have chattr +C on btrfs"),
        );
        let cow_files: Vec<PathBuf> = data
            .iter()
            .chain(&redo)
            .filter(|p| nocow(p) == Some(false))
            .cloned()
            .collect();
        if !cow_files.is_empty() {
            out.push(finding(
                Severity::Warning,
                "cow-data-files",
                format!(
                    "{} of {} database files in {shown} copy on write on btrfs (no +C): {}",
                    cow_files.len(),
                    data.len() + redo.len(),
                    names(&cow_files, 4)
                ),
                "every overwrite of a block lands somewhere new, so random updates cut the files into thousands of extents and scans and redo slow down as they age.",
                "chattr +C on the directory, then copy each file anew (cp --reflink=never FILE FILE.new && mv FILE.new FILE) with the database down; +C only takes on empty files.",
            ));
        }
    }
    if cow {
        up.ran(
            "cow-fill",
            format!(
                "{} ({}) is {:.0}% full, at most {COW_FILL_PCT:.0}%",
                fill.mount_point, fill.fs_type, fill.fill_pct
            ),
        );
    }
    if cow && fill.fill_pct > COW_FILL_PCT {
        out.push(finding(
            Severity::Warning,
            "cow-fill",
            format!(
                "{} ({}) holding {shown} is {:.0}% full",
                fill.mount_point, fill.fs_type, fill.fill_pct
            ),
            "a copy-on-write file system above 80% full finds ever smaller free runs, so writes fragment and slow down within weeks.",
            "keep copy-on-write file systems under 80% full (add space or move files), or use a file system that writes in place for data files.",
        ));
    }
    if let (Some(d), Some(r)) = (data.first(), redo.first()) {
        up.ran(
            "data-redo-same-fs",
            format!("data files and redo logs in {shown} are on file systems of their own"),
        );
        let same = fs::metadata(d)
            .and_then(|a| fs::metadata(r).map(|b| a.dev() == b.dev()))
            .unwrap_or(false);
        if same {
            out.push(finding(
                Severity::Info,
                "data-redo-same-fs",
                format!("data files and redo logs share the file system of {shown}"),
                "redo writes wait behind data-file I/O on the same devices, and a commit waits for its redo write.",
                "put the redo logs on a file system (and devices) of their own when redo waits matter.",
            ));
        }
    }
    if fill.fs_type == "zfs" {
        if let Some((recordsize, logbias)) = zfs_properties(&fill.source) {
            up.ran(
                "zfs-recordsize",
                format!("recordsize of {} suits its files", fill.source),
            );
            up.ran(
                "zfs-logbias",
                format!("logbias of {} suits its files", fill.source),
            );
            let role = if data.is_empty() && !redo.is_empty() {
                ZfsRole::Redo
            } else {
                ZfsRole::Data
            };
            out.extend(zfs_findings(&fill.source, role, recordsize, &logbias, 8192));
        }
    }
    if !data.is_empty() {
        up.ran(
            "fragmented-data-files",
            format!(
                "the {} data files in {shown} are not fragmented (at most {} fragments or {:.0} per GiB)",
                data.len(),
                crate::frag::FRAGMENTED_MIN,
                crate::frag::FRAGMENTED_PER_GIB
            ),
        );
    }
    let mut fragmented = Vec::new();
    for p in &data {
        if let Ok(f) = file_frag(p) {
            if f.fragmented {
                fragmented.push(format!(
                    "{} ({} fragments, {} KiB each on average)",
                    p.file_name().unwrap_or_default().to_string_lossy(),
                    f.fragments,
                    f.size / f.fragments.max(1) / 1024
                ));
            }
        }
    }
    if !fragmented.is_empty() {
        let n = fragmented.len();
        fragmented.truncate(4);
        out.push(finding(
            Severity::Warning,
            "fragmented-data-files",
            format!("{n} fragmented data files: {}", fragmented.join(", ")),
            "a scan of a fragmented file turns into many small reads, and multiblock reads lose their size.",
            "copy the files anew (with +C on btrfs) while the database is down; `dbio frag` shows the extents.",
        ));
    }
    up.ran(
        "odirect-refused",
        format!(
            "the file system of {shown} ({}) accepts O_DIRECT",
            fill.fs_type
        ),
    );
    if let Some(f) = odirect_refused(dir, data.first()) {
        out.push(f);
    }
    out.extend(check_queues(dir, &mut up));
    if fill.fs_type.starts_with("nfs") {
        if let Some(m) = mount_of(dir) {
            for (check, what) in doctor_nfs::CHECKS {
                up.ran(check, what.into());
            }
            out.extend(doctor_nfs::check_nfs_options(&m.options, cluster));
        }
        let slots = kernel_files::sysctl_u64("sunrpc.tcp_max_slot_table_entries");
        up.ran("sunrpc-slots", doctor_nfs::slots_looked_at(slots));
        out.extend(doctor_nfs::check_sunrpc_slots(slots));
    }
    up.findings = out;
    Ok(up)
}

/// What a ZFS dataset holds, for its property checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZfsRole {
    Data,
    Redo,
}

/// `recordsize` (bytes) and `logbias` of a ZFS dataset, from `zfs get`;
/// None without the zfs tool or the dataset.
fn zfs_properties(dataset: &str) -> Option<(u64, String)> {
    let o = std::process::Command::new("zfs")
        .args(["get", "-Hp", "-o", "value", "recordsize,logbias", dataset])
        .output()
        .ok()?;
    if !o.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&o.stdout);
    let mut lines = text.lines();
    let recordsize = lines.next()?.trim().parse().ok()?;
    let logbias = lines.next()?.trim().to_string();
    Some((recordsize, logbias))
}

/// ZFS dataset properties against what the files need: data files want a
/// `recordsize` equal to the database block size and `logbias=throughput`;
/// redo wants a `recordsize` of 128K or more.
pub fn zfs_findings(
    dataset: &str,
    role: ZfsRole,
    recordsize: u64,
    logbias: &str,
    block_size: u64,
) -> Vec<Finding> {
    let mut out = Vec::new();
    match role {
        ZfsRole::Data => {
            if recordsize != block_size {
                out.push(finding(
                    Severity::Warning,
                    "zfs-recordsize",
                    format!(
                        "ZFS dataset {dataset} holding data files has recordsize={} (block size {})",
                        recordsize, block_size
                    ),
                    "a record larger than the block makes every block write read, modify and rewrite a whole record, and a smaller one splits each block.",
                    "zfs set recordsize=8K (the db_block_size) on the data files' dataset, then copy the files anew so they take it.",
                ));
            }
            if logbias == "latency" {
                out.push(finding(
                    Severity::Warning,
                    "zfs-logbias",
                    format!("ZFS dataset {dataset} holding data files has logbias=latency"),
                    "synchronous data-file writes then go through the intent log first and are written twice, which slowed redo in a field report after a patch set it.",
                    "zfs set logbias=throughput on the data files' dataset (keep latency for redo).",
                ));
            }
        }
        ZfsRole::Redo => {
            if recordsize < 128 * 1024 {
                out.push(finding(
                    Severity::Warning,
                    "zfs-recordsize",
                    format!("ZFS dataset {dataset} holding redo logs has recordsize={recordsize}"),
                    "redo is written sequentially in large pieces, and small records multiply the metadata and the writes behind each one.",
                    "zfs set recordsize=128K (or 1M) on the redo logs' dataset.",
                ));
            }
        }
    }
    out
}

/// Opens a data file (or a scratch file that is removed at once) with
/// O_DIRECT; a refusal is an error finding.
fn odirect_refused(dir: &Path, data: Option<&PathBuf>) -> Option<Finding> {
    let res = match data {
        Some(p) => fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(p)
            .map(|_| ()),
        None => {
            let p = dir.join(format!(".dbio-doctor-{}", std::process::id()));
            let r = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .custom_flags(libc::O_DIRECT)
                .open(&p)
                .map(|_| ());
            let _ = fs::remove_file(&p);
            r
        }
    };
    match res {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Some(finding(
            Severity::Error,
            "odirect-refused",
            format!("the file system of {} refuses O_DIRECT", dir.display()),
            "without direct I/O every database read and write goes through the page cache twice over, and Oracle's filesystemio_options=SETALL cannot take effect.",
            "put the data files on a file system that supports O_DIRECT (ext4, xfs, btrfs, NFS; not tmpfs or some overlays).",
        )),
        _ => None,
    }
}

/// The I/O scheduler and queue depth of each device under `dir`.
fn check_queues(dir: &Path, up: &mut Checkup) -> Vec<Finding> {
    let mut out = Vec::new();
    for d in devices_under(dir).unwrap_or_default() {
        up.ran(
            "io-scheduler",
            format!("{} uses no fairness I/O scheduler (bfq, cfq)", d.name),
        );
        up.ran(
            "queue-depth",
            format!("{} queues {MIN_QUEUE_DEPTH} requests or more", d.name),
        );
        let q = kernel_files::block_queue(&d.disk_name());
        out.extend(queue_findings(&d.name, q.scheduler.as_deref(), q.depth));
    }
    out
}

/// Findings about one device's queue: a scheduler built for desktop
/// fairness (bfq, cfq) or a queue shorter than [`MIN_QUEUE_DEPTH`].
pub fn queue_findings(dev: &str, scheduler: Option<&str>, depth: Option<u64>) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(s @ ("bfq" | "cfq")) = scheduler {
        out.push(finding(
            Severity::Warning,
            "io-scheduler",
            format!("{dev} uses the {s} I/O scheduler"),
            "a fairness scheduler idles between processes and adds latency to every synchronous database read and redo write.",
            "echo mq-deadline (or none for NVMe) > /sys/block/DEV/queue/scheduler, and make it stick with a udev rule.",
        ));
    }
    if let Some(n) = depth.filter(|n| *n < MIN_QUEUE_DEPTH) {
        out.push(finding(
            Severity::Warning,
            "queue-depth",
            format!("{dev} queues at most {n} requests (nr_requests)"),
            "a short queue caps the I/Os in flight, so parallel sessions and asynchronous DBWR writes wait in the kernel instead of the device.",
            "raise /sys/block/DEV/queue/nr_requests (e.g. to 256).",
        ));
    }
    out
}

/// An Oracle parameter file (init.ora or a pfile made from an spfile):
/// name (lower case, without a `SID.`/`*.` prefix) to value (unquoted).
/// Comments (`#`) and blank lines are skipped; the last setting wins.
pub fn parse_init_ora(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines().take(100_000) {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let k = k.trim();
        let k = k
            .rsplit_once('.')
            .map_or(k, |(_, name)| name)
            .to_lowercase();
        let v = v
            .trim()
            .trim_matches(|c| c == '\'' || c == '"')
            .trim()
            .to_string();
        if k.is_empty() {
            continue;
        }
        out.retain(|(n, _)| *n != k);
        out.push((k, v));
    }
    out
}

/// The checks of Oracle parameters, on a machine of `cores` CPUs.
pub fn check_params(params: &[(String, String)], cores: usize) -> Vec<Finding> {
    let mut out = Vec::new();
    let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    match get("filesystemio_options") {
        Some(v) if v.eq_ignore_ascii_case("setall") => {}
        v => out.push(finding(
            Severity::Warning,
            "filesystemio_options",
            match v {
                Some(v) => format!("filesystemio_options = {v}"),
                None => "filesystemio_options is not set (the platform default is not SETALL on most)".into(),
            },
            "without SETALL Oracle does buffered, synchronous file I/O: the page cache doubles memory use and DBWR cannot keep many writes in flight.",
            "set filesystemio_options=SETALL (direct and asynchronous I/O) and restart the instance.",
        )),
    }
    if let Some(v) = get("parallel_max_servers") {
        if let Ok(n) = v.parse::<u64>() {
            let limit = 2 * cores.max(1) as u64;
            if n > limit {
                out.push(finding(
                    Severity::Warning,
                    "parallel_max_servers",
                    format!("parallel_max_servers = {n} on {cores} cores (more than {limit})"),
                    "CALIBRATE_IO and parallel queries start that many I/O processes, which oversubscribe the CPUs and the file system (one report: 5,058 IOPS measured instead of 220,000).",
                    "set parallel_max_servers to about twice the cores for CALIBRATE_IO, or calibrate with dbio calibrate.",
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_files_parse_and_check() {
        let p = parse_init_ora(
            "# comment\n*.filesystemio_options='asynch'\nORCL.parallel_max_servers = 80 # per SID\n\
             *.db_block_size=8192\n*.FILESYSTEMIO_OPTIONS=\"none\"\ngarbage line\n",
        );
        assert_eq!(
            p,
            vec![
                ("parallel_max_servers".to_string(), "80".to_string()),
                ("db_block_size".to_string(), "8192".to_string()),
                ("filesystemio_options".to_string(), "none".to_string()),
            ]
        );
        let f = check_params(&p, 2);
        assert_eq!(f.len(), 2);
        assert!(f
            .iter()
            .any(|f| f.check == "parallel_max_servers" && f.found.contains("80 on 2 cores")));
        let ok = parse_init_ora("*.filesystemio_options=SETALL\n*.parallel_max_servers=8\n");
        assert!(check_params(&ok, 4).is_empty());
        assert_eq!(check_params(&ok, 2).len(), 1);
    }

    #[test]
    fn zfs_properties_against_the_files() {
        let f = zfs_findings("tank/data", ZfsRole::Data, 131072, "latency", 8192);
        let checks: Vec<&str> = f.iter().map(|f| f.check.as_str()).collect();
        assert_eq!(checks, ["zfs-recordsize", "zfs-logbias"]);
        assert!(zfs_findings("tank/data", ZfsRole::Data, 8192, "throughput", 8192).is_empty());
        assert_eq!(
            zfs_findings("tank/redo", ZfsRole::Redo, 8192, "latency", 8192).len(),
            1
        );
        assert!(zfs_findings("tank/redo", ZfsRole::Redo, 1 << 20, "latency", 8192).is_empty());
    }

    #[test]
    fn queues() {
        assert_eq!(queue_findings("sda", Some("bfq"), Some(16)).len(), 2);
        assert!(queue_findings("sda", Some("none"), Some(128)).is_empty());
    }
}
