//! The kernel NFS client's views beside a run whose target sits on a kernel
//! NFS mount: started before the run, finished after it, and one line on
//! stderr when there are none and why.

use std::io::{IsTerminal, Write};
use std::path::Path;

use dbio_diag::hostcpu::WindowTicks;
use dbio_diag::KernelNfsSampler;
use dbio_stats::KernelNfsSection;

/// Starts reading the kernel client's counters of the mount under `dir`;
/// None (after one line saying why) when it is not an NFS mount or
/// /proc/self/mountstats does not show it.
pub fn start(dir: &Path) -> Option<KernelNfsSampler> {
    let Some(m) = dbio_diag::blockdev::mount_of(dir) else {
        eprintln!(
            "kernel NFS views: none ({}: its mount is not in /proc/self/mountinfo)",
            dir.display()
        );
        return None;
    };
    if m.fs_type != "nfs" && m.fs_type != "nfs4" {
        eprintln!(
            "kernel NFS views: none ({} is on {}, not an NFS mount)",
            dir.display(),
            m.fs_type
        );
        return None;
    }
    match KernelNfsSampler::start(&m.mount_point) {
        Ok(s) => Some(s),
        Err(why) => {
            eprintln!("kernel NFS views: none ({why})");
            None
        }
    }
}

/// The run's hook that reads the window's edges: the machine's CPU, and the
/// kernel client's counters for a target on a kernel NFS mount.
pub fn hook(
    s: Option<&KernelNfsSampler>,
    machine: std::sync::Arc<WindowTicks>,
) -> dbio_experiment::WindowHook {
    let edge = s.map(|s| s.edge());
    dbio_experiment::WindowHook(std::sync::Arc::new(move |e| {
        let start = e == dbio_experiment::WindowEdge::Start;
        machine.edge(start);
        if let Some(edge) = &edge {
            edge(start);
        }
    }))
}

/// Ends the sampling; the section, or None after one line saying why.
pub fn finish(s: KernelNfsSampler) -> Option<KernelNfsSection> {
    match s.finish() {
        Ok(k) => Some(k),
        Err(why) => {
            eprintln!("kernel NFS views: none ({why})");
            None
        }
    }
}

/// A progress printer that shows the kernel client's last second under each
/// progress line (redrawn in place on a terminal).
pub fn printer(s: &KernelNfsSampler) -> impl Fn(&str) + Sync + '_ {
    let tty = std::io::stderr().is_terminal();
    let drawn = std::sync::atomic::AtomicBool::new(false);
    move |line: &str| {
        let text = format!("{line}\n{}\n", s.live());
        let mut err = std::io::stderr().lock();
        if tty && drawn.swap(true, std::sync::atomic::Ordering::Relaxed) {
            let _ = write!(err, "\x1b[2A\x1b[J");
        }
        let _ = err.write_all(text.as_bytes());
    }
}
