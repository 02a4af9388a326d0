//! The machine's CPU time from the first line of /proc/stat, and the
//! `mpstat` percentages of two readings.

use dbio_stats::{HostCpuSample, MachineCpu};

/// Cumulative CPU ticks of all CPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTicks {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

/// Parses the `cpu ` line of /proc/stat.
pub fn parse(text: &str) -> Option<CpuTicks> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let g = |i: usize| v.get(i).copied().unwrap_or(0);
    Some(CpuTicks {
        user: g(0),
        nice: g(1),
        system: g(2),
        idle: g(3),
        iowait: g(4),
        irq: g(5),
        softirq: g(6),
        steal: g(7),
    })
}

/// Reads /proc/stat.
pub fn read() -> Option<CpuTicks> {
    std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|t| parse(&t))
}

/// Percentages between two readings (guest time is inside user time).
pub fn sample(a: &CpuTicks, b: &CpuTicks, t_s: f64) -> HostCpuSample {
    let d = |x: u64, y: u64| y.saturating_sub(x) as f64;
    let user = d(a.user, b.user) + d(a.nice, b.nice);
    let system = d(a.system, b.system) + d(a.irq, b.irq) + d(a.softirq, b.softirq);
    let idle = d(a.idle, b.idle);
    let iowait = d(a.iowait, b.iowait);
    let steal = d(a.steal, b.steal);
    let total = user + system + idle + iowait + steal;
    let pct = |v: f64| if total > 0.0 { v * 100.0 / total } else { 0.0 };
    HostCpuSample {
        t_s,
        user_pct: pct(user),
        system_pct: pct(system),
        iowait_pct: pct(iowait),
        steal_pct: pct(steal),
        idle_pct: pct(idle),
    }
}

/// /proc/stat read at a run's measured window's edges, from the thread that
/// drives the load, for the machine's CPU over exactly that window.
#[derive(Debug, Default)]
pub struct WindowTicks {
    edges: std::sync::Mutex<[Option<CpuTicks>; 2]>,
}

impl WindowTicks {
    /// Reads /proc/stat for the window's start (`true`) or end.
    pub fn edge(&self, start: bool) {
        let now = read();
        if let Ok(mut e) = self.edges.lock() {
            e[usize::from(!start)] = now;
        }
    }

    /// The machine's CPU between the edges (the end read now if the run did
    /// not say), for a run of `ios` I/Os; None without a start.
    pub fn section(&self, ios: u64) -> Option<MachineCpu> {
        let [a, b] = *self.edges.lock().ok()?;
        machine_cpu(&a?, &b.or_else(read)?, ios)
    }
}

/// The machine's CPU between two readings (steal left out: not this
/// machine's work).
pub fn machine_cpu(a: &CpuTicks, b: &CpuTicks, ios: u64) -> Option<MachineCpu> {
    let d = |x: u64, y: u64| y.checked_sub(x);
    let user = d(a.user, b.user)? + d(a.nice, b.nice)?;
    let system = d(a.system, b.system)? + d(a.irq, b.irq)? + d(a.softirq, b.softirq)?;
    let idle = d(a.idle, b.idle)? + d(a.iowait, b.iowait)?;
    // SAFETY: sysconf has no memory side effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = if hz > 0 { hz as f64 } else { 100.0 };
    Some(MachineCpu::from_ticks(user, system, idle, hz, ios))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_of_all_cpus() {
        let a = parse("cpu  100 0 50 800 10 0 0 0 0 0\ncpu0 1 2 3\n").unwrap();
        let b = parse("cpu  130 10 70 910 30 5 5 0 0 0\n").unwrap();
        let s = sample(&a, &b, 1.0);
        assert_eq!(s.user_pct, 20.0);
        assert_eq!(s.system_pct, 15.0);
        assert_eq!(s.idle_pct, 55.0);
        assert_eq!(s.iowait_pct, 10.0);
        assert_eq!(s.steal_pct, 0.0);
        assert!(parse("intr 1 2").is_none());
    }

    #[test]
    fn machine_cpu_between_two_readings() {
        let a = parse("cpu  100 0 50 800 10 0 0 7 0 0\n").unwrap();
        let b = parse("cpu  130 10 70 910 30 5 5 9 0 0\n").unwrap();
        let m = machine_cpu(&a, &b, 100).unwrap();
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        assert!((m.user_s - 40.0 / hz).abs() < 1e-12);
        assert!((m.system_s - 30.0 / hz).abs() < 1e-12);
        assert!((m.idle_s - 130.0 / hz).abs() < 1e-12);
        assert!((m.us_per_io - 70.0 / hz * 1e4).abs() < 1e-6);
        // A counter that went back (another boot, a bad reading) gives none.
        assert!(machine_cpu(&b, &a, 100).is_none());
        let w = WindowTicks::default();
        assert!(w.section(1).is_none(), "no start edge");
        w.edge(true);
        w.edge(false);
        assert!(w.section(1).is_some());
    }
}
