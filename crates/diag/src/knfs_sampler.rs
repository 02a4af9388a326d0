//! A thread that reads the kernel NFS client's counters of one mount
//! (/proc/self/mountstats) beside a run: at the measured window's start
//! (when the warm-up's time is up), once a second through the run (the live
//! view and the section's `series`), and at the end, when the run is over.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use dbio_stats::{KernelNfsSecond, KernelNfsSection};

use crate::mountstats::{self, MountCounters};

/// Most seconds kept in the series (a week); the edges count always.
const MAX_SECONDS: usize = 7 * 86_400;

/// What the thread hands back: the window's start (when and what), and the seconds.
type Sampled = (Option<(Instant, MountCounters)>, Vec<KernelNfsSecond>);

/// A running sampler; [`KernelNfsSampler::finish`] stops it.
pub struct KernelNfsSampler {
    mount_point: PathBuf,
    stop: Sender<()>,
    thread: JoinHandle<Sampled>,
    live: Arc<Mutex<String>>,
}

impl KernelNfsSampler {
    /// Starts sampling the NFS mount at `mount_point`; the window's start is
    /// read `warmup` from now (at once when zero, before this returns).
    /// Err: why there are no views (no such mount in mountstats).
    pub fn start(mount_point: &Path, warmup: Duration) -> Result<KernelNfsSampler, String> {
        let first = mountstats::read(mount_point)?;
        let t0 = Instant::now();
        let mount = mount_point.to_path_buf();
        let live = Arc::new(Mutex::new(String::new()));
        let shown = Arc::clone(&live);
        let (stop, rx) = mpsc::channel::<()>();
        let edge = warmup.is_zero().then(|| (t0, first.clone()));
        let thread = std::thread::Builder::new()
            .name("dbio-mountstats".into())
            .spawn(move || {
                let mut edge = edge;
                let mut prev = first;
                let mut series = Vec::new();
                let mut next = t0
                    + if warmup.is_zero() {
                        Duration::from_secs(1)
                    } else {
                        warmup
                    };
                loop {
                    let wait = next.saturating_duration_since(Instant::now());
                    match rx.recv_timeout(wait) {
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => return (edge, series),
                        Err(RecvTimeoutError::Timeout) => {}
                    }
                    let Ok(now) = mountstats::read(&mount) else {
                        return (edge, series);
                    };
                    let at = Instant::now();
                    match &edge {
                        None => edge = Some((at, now.clone())),
                        Some((from, _)) => {
                            let s = second(&prev, &now, at.duration_since(*from).as_secs_f64());
                            if let Ok(mut l) = shown.lock() {
                                *l = live_line(&now, &s);
                            }
                            if series.len() < MAX_SECONDS {
                                series.push(s);
                            }
                        }
                    }
                    prev = now;
                    next += Duration::from_secs(1);
                    if next + Duration::from_secs(1) < Instant::now() {
                        next = Instant::now() + Duration::from_secs(1);
                    }
                }
            })
            .map_err(|e| format!("cannot start the mountstats reader: {e}"))?;
        Ok(KernelNfsSampler {
            mount_point: mount_point.to_path_buf(),
            stop,
            thread,
            live,
        })
    }

    /// The last second's figures, one line (empty before the first second).
    pub fn live(&self) -> String {
        self.live.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Stops the thread, reads the window's end and gives the section; Err
    /// when the mount went away or the run ended before the warm-up did.
    pub fn finish(self) -> Result<KernelNfsSection, String> {
        let end = mountstats::read(&self.mount_point);
        let at = Instant::now();
        let _ = self.stop.send(());
        let (edge, series) = self
            .thread
            .join()
            .map_err(|_| "the mountstats reader failed".to_string())?;
        let end = end?;
        let (from, start) = edge.ok_or("the run ended before its warm-up did")?;
        let mut section = mountstats::window(&start, &end, at.duration_since(from).as_secs_f64());
        section.series = series;
        Ok(section)
    }
}

/// The figures of one second, from two readings.
fn second(a: &MountCounters, b: &MountCounters, t_s: f64) -> KernelNfsSecond {
    let w = mountstats::window(a, b, 0.0);
    let (mut reads, mut writes, mut others, mut n, mut rtt, mut exe) = (0, 0, 0, 0, 0, 0);
    for o in &w.ops {
        match o.procedure.as_str() {
            "READ" => reads += o.calls,
            "WRITE" => writes += o.calls,
            _ => others += o.calls,
        }
        if o.procedure == "READ" || o.procedure == "WRITE" {
            n += o.calls;
            rtt += o.rtt_ms;
            exe += o.execute_ms;
        }
    }
    let sends: u64 = w.connections.iter().map(|c| c.sends).sum();
    let backlog: u64 = w.connections.iter().map(|c| c.backlog_sum).sum();
    let mean = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    KernelNfsSecond {
        t_s,
        reads,
        writes,
        others,
        rtt_ms: mean(rtt, n),
        execute_ms: mean(exe, n),
        backlog: mean(backlog, sends),
    }
}

fn live_line(m: &MountCounters, s: &KernelNfsSecond) -> String {
    format!(
        "  kernel NFS {} ({} conn): READ {}/s  WRITE {}/s  other {}/s  rtt {:.2} ms  exec {:.2} ms  backlog {:.2}",
        m.device,
        m.xprts.len(),
        s.reads,
        s.writes,
        s.others,
        s.rtt_ms,
        s.execute_ms,
        s.backlog
    )
}
