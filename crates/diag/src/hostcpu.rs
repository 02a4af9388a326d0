//! The machine's CPU time from the `cpu ` line of /proc/stat (read by the
//! `procfs` crate), and the `mpstat` percentages of two readings.

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

impl From<&procfs::CpuTime> for CpuTicks {
    /// The ticks of procfs's reading; a field the kernel does not write counts zero.
    fn from(c: &procfs::CpuTime) -> CpuTicks {
        CpuTicks {
            user: c.user,
            nice: c.nice,
            system: c.system,
            idle: c.idle,
            iowait: c.iowait.unwrap_or(0),
            irq: c.irq.unwrap_or(0),
            softirq: c.softirq.unwrap_or(0),
            steal: c.steal.unwrap_or(0),
        }
    }
}

/// The `cpu ` line of a /proc/stat text, as procfs parses the file (None
/// where procfs refuses it: no `cpu ` line, a `cpu` line it cannot read, or
/// no `ctxt`, `btime` or `processes` line, which every kernel writes).
pub fn parse(text: &str) -> Option<CpuTicks> {
    use procfs::FromReadSI;
    // The ticks per second only scale procfs's *_ms figures, unused here.
    let system = procfs::ExplicitSystemInfo {
        boot_time_secs: 0,
        ticks_per_second: 100,
        page_size: 4096,
        is_little_endian: cfg!(target_endian = "little"),
    };
    let stats = procfs::KernelStats::from_read(text.as_bytes(), &system).ok()?;
    Some(CpuTicks::from(&stats.total))
}

/// Reads /proc/stat through procfs.
pub fn read() -> Option<CpuTicks> {
    use procfs::CurrentSI;
    let stats = procfs::KernelStats::current().ok()?;
    Some(CpuTicks::from(&stats.total))
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

    /// A /proc/stat text whose `cpu ` line is `cpu`, as a 2-CPU machine writes it.
    fn stat(cpu: &str) -> String {
        format!(
            "{cpu}\n\
             cpu0 50 0 25 400 5 0 0 0 0 0\n\
             cpu1 50 0 25 400 5 0 0 0 0 0\n\
             intr 7 0 0\n\
             ctxt 123456\n\
             btime 1765000000\n\
             processes 4242\n\
             procs_running 1\n\
             procs_blocked 0\n\
             softirq 9 0 0\n"
        )
    }

    #[test]
    fn percentages_of_all_cpus() {
        let a = parse(&stat("cpu  100 0 50 800 10 0 0 0 0 0")).unwrap();
        let b = parse(&stat("cpu  130 10 70 910 30 5 5 0 0 0")).unwrap();
        let s = sample(&a, &b, 1.0);
        assert_eq!(s.user_pct, 20.0);
        assert_eq!(s.system_pct, 15.0);
        assert_eq!(s.idle_pct, 55.0);
        assert_eq!(s.iowait_pct, 10.0);
        assert_eq!(s.steal_pct, 0.0);
        assert!(parse("intr 1 2").is_none());
        // A kernel before 2.6.11 writes no steal: zero.
        let old = parse(&stat("cpu  100 0 50 800 10 0 0")).unwrap();
        assert_eq!((old.softirq, old.steal), (0, 0));
        // The machine's own /proc/stat reads.
        assert!(read().is_some_and(|t| t.user + t.system + t.idle > 0));
    }

    #[test]
    fn machine_cpu_between_two_readings() {
        let a = parse(&stat("cpu  100 0 50 800 10 0 0 7 0 0")).unwrap();
        let b = parse(&stat("cpu  130 10 70 910 30 5 5 9 0 0")).unwrap();
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
