//! A thread that reads the kernel NFS client's counters of one mount
//! (/proc/self/mountstats) beside a run: once a second through the run (the
//! live view and the section's `series`), and at the measured window's edges
//! when the run says ([`KernelNfsSampler::edge`]: after the warm-up, and
//! when the load's last I/O completed).

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use dbio_stats::{KernelNfsSecond, KernelNfsSection};

use crate::mountstats::{self, MountCounters};

/// Most seconds kept in the series (a week); the edges count always.
const MAX_SECONDS: usize = 7 * 86_400;

/// A reading and when it was taken.
type Reading = (Instant, MountCounters);

/// The window's two edges as read so far.
#[derive(Default)]
struct Edges {
    start: Option<Reading>,
    end: Option<Reading>,
}

/// A running sampler; [`KernelNfsSampler::finish`] stops it.
pub struct KernelNfsSampler {
    mount_point: PathBuf,
    started: Instant,
    stop: Sender<()>,
    thread: JoinHandle<Vec<KernelNfsSecond>>,
    live: Arc<Mutex<String>>,
    edges: Arc<Mutex<Edges>>,
}

impl KernelNfsSampler {
    /// Starts sampling the NFS mount at `mount_point` once a second. Err:
    /// why there are no views (no such mount in mountstats).
    pub fn start(mount_point: &Path) -> Result<KernelNfsSampler, String> {
        let first = mountstats::read(mount_point)?;
        let started = Instant::now();
        let mount = mount_point.to_path_buf();
        let live = Arc::new(Mutex::new(String::new()));
        let shown = Arc::clone(&live);
        let (stop, rx) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("dbio-mountstats".into())
            .spawn(move || {
                let mut prev = first;
                let mut series = Vec::new();
                let mut next = started + Duration::from_secs(1);
                loop {
                    let wait = next.saturating_duration_since(Instant::now());
                    match rx.recv_timeout(wait) {
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => return series,
                        Err(RecvTimeoutError::Timeout) => {}
                    }
                    let Ok(now) = mountstats::read(&mount) else {
                        return series;
                    };
                    let s = second(&prev, &now, started.elapsed().as_secs_f64());
                    if let Ok(mut l) = shown.lock() {
                        *l = live_line(&now, &s);
                    }
                    if series.len() < MAX_SECONDS {
                        series.push(s);
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
            started,
            stop,
            thread,
            live,
            edges: Arc::new(Mutex::new(Edges::default())),
        })
    }

    /// A function that reads the window's start (`true`) or end (`false`)
    /// when called; give it to the run.
    pub fn edge(&self) -> impl Fn(bool) + Send + Sync + 'static {
        let mount = self.mount_point.clone();
        let edges = Arc::clone(&self.edges);
        move |start: bool| {
            let Ok(now) = mountstats::read(&mount) else {
                return;
            };
            if let Ok(mut e) = edges.lock() {
                let r = Some((Instant::now(), now));
                if start {
                    e.start = r;
                } else {
                    e.end = r;
                }
            }
        }
    }

    /// The last second's figures, one line (empty before the first second).
    pub fn live(&self) -> String {
        self.live.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Stops the thread and gives the section of the two edges (the end read
    /// now if the run did not say); Err when the start was never read (the
    /// run ended before its warm-up did) or the mount went away.
    pub fn finish(self) -> Result<KernelNfsSection, String> {
        let late_end = mountstats::read(&self.mount_point);
        let at = Instant::now();
        let _ = self.stop.send(());
        let series = self
            .thread
            .join()
            .map_err(|_| "the mountstats reader failed".to_string())?;
        let mut edges = self
            .edges
            .lock()
            .map_err(|_| "the mountstats reader failed".to_string())?;
        let (from, start) = edges
            .start
            .take()
            .ok_or("the run ended before its warm-up did")?;
        let (to, end) = match edges.end.take() {
            Some(e) => e,
            None => (at, late_end?),
        };
        let mut section = mountstats::window(&start, &end, to.duration_since(from).as_secs_f64());
        // The seconds as from the window's start.
        let shift = from.duration_since(self.started).as_secs_f64();
        section.series = series
            .into_iter()
            .map(|mut s| {
                s.t_s -= shift;
                s
            })
            .collect();
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
