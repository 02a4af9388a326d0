//! A thread that reads /proc/diskstats and /proc/stat once an interval
//! beside a run, and makes the result's `devices` section of it. It costs
//! two small file reads a second; it keeps at most [`MAX_SAMPLES`]
//! intervals (a week of seconds) and the whole-run totals always.

use std::collections::HashMap;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use dbio_stats::{DeviceSection, DeviceStats, HostCpuSample};

use crate::blockdev::BlockDevice;
use crate::diskstats::{self, DiskCounters};
use crate::hostcpu::{self, CpuTicks};

/// Most intervals kept; later ones still count in the totals.
pub const MAX_SAMPLES: usize = 7 * 86_400;

/// A running sampler; [`Sampler::finish`] stops it and gives the section.
pub struct Sampler {
    stop: Sender<()>,
    thread: JoinHandle<DeviceSection>,
}

struct Reading {
    at: Instant,
    disks: HashMap<String, DiskCounters>,
    cpu: Option<CpuTicks>,
}

fn reading(names: &[String]) -> Reading {
    let mut disks = diskstats::read();
    disks.retain(|k, _| names.contains(k));
    Reading {
        at: Instant::now(),
        disks,
        cpu: hostcpu::read(),
    }
}

impl Sampler {
    /// Starts sampling `devices` every `interval` (the first reading is
    /// taken before this returns). With no devices the CPU is still sampled.
    pub fn start(devices: Vec<BlockDevice>, interval: Duration) -> std::io::Result<Sampler> {
        let interval = interval.max(Duration::from_millis(10));
        let names: Vec<String> = devices.iter().map(|d| d.name.clone()).collect();
        let first = reading(&names);
        let (stop, rx) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("dbio-diskstats".into())
            .spawn(move || {
                let mut stats: Vec<DeviceStats> = devices
                    .iter()
                    .map(|d| DeviceStats {
                        name: d.name.clone(),
                        dev: d.dev(),
                        role: d.role.clone(),
                        ..Default::default()
                    })
                    .collect();
                let mut cpu: Vec<HostCpuSample> = Vec::new();
                let start = first.at;
                let origin = first.disks.clone();
                let mut prev = first;
                let mut next = start + interval;
                let mut kept = 0usize;
                loop {
                    let wait = next.saturating_duration_since(Instant::now());
                    let last = match rx.recv_timeout(wait) {
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => true,
                        Err(RecvTimeoutError::Timeout) => false,
                    };
                    let now = reading(&names);
                    let dt = now.at.duration_since(prev.at).as_secs_f64();
                    let t = now.at.duration_since(start).as_secs_f64();
                    // A final fragment under a quarter interval only counts in the totals.
                    let keep = kept < MAX_SAMPLES && (!last || dt >= interval.as_secs_f64() / 4.0);
                    if keep {
                        kept += 1;
                        for s in stats.iter_mut() {
                            if let (Some(a), Some(b)) =
                                (prev.disks.get(&s.name), now.disks.get(&s.name))
                            {
                                s.samples.push(diskstats::sample(a, b, dt, t));
                            }
                        }
                        if let (Some(a), Some(b)) = (&prev.cpu, &now.cpu) {
                            cpu.push(hostcpu::sample(a, b, t));
                        }
                    }
                    if last {
                        let elapsed = t;
                        for s in stats.iter_mut() {
                            if let (Some(a), Some(b)) =
                                (origin.get(&s.name), now.disks.get(&s.name))
                            {
                                s.total = diskstats::sample(a, b, elapsed, elapsed);
                            }
                        }
                        return DeviceSection {
                            interval_s: interval.as_secs_f64(),
                            elapsed_s: elapsed,
                            devices: stats,
                            cpu,
                        };
                    }
                    prev = now;
                    next += interval;
                    // Behind by more than an interval (a suspended machine): skip ahead.
                    let now = Instant::now();
                    if next + interval < now {
                        next = now + interval;
                    }
                }
            })?;
        Ok(Sampler { stop, thread })
    }

    /// Stops the thread (at once) and gives what it sampled.
    pub fn finish(self) -> DeviceSection {
        let _ = self.stop.send(());
        self.thread.join().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_once_an_interval_and_stops_at_once() {
        let s = Sampler::start(Vec::new(), Duration::from_millis(50)).unwrap();
        std::thread::sleep(Duration::from_millis(230));
        let t = Instant::now();
        let sec = s.finish();
        assert!(t.elapsed() < Duration::from_millis(200));
        assert!((3..=6).contains(&sec.cpu.len()), "{}", sec.cpu.len());
        assert!(sec.elapsed_s >= 0.2);
        for w in sec.cpu.windows(2) {
            assert!(w[1].t_s > w[0].t_s);
        }
    }
}
