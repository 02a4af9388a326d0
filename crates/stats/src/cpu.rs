//! CPU time of this process (getrusage) and of another one (/proc/PID/stat).

use std::time::Duration;

use crate::schema::CpuUsage;
use crate::StatsError;

/// A snapshot of this process's user and system CPU time. Take one before
/// and one after a measurement; [`CpuClock::since`] gives what was spent.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuClock {
    pub user: Duration,
    pub system: Duration,
}

impl CpuClock {
    /// CPU time used so far by all threads of this process.
    pub fn now() -> CpuClock {
        // SAFETY: getrusage only writes the struct we hand it.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        if rc != 0 {
            // RUSAGE_SELF with a valid pointer cannot fail; report zero
            // rather than abort a measurement.
            return CpuClock::default();
        }
        CpuClock {
            user: timeval(ru.ru_utime),
            system: timeval(ru.ru_stime),
        }
    }

    /// CPU spent between `earlier` and this snapshot (never negative).
    pub fn since(&self, earlier: &CpuClock) -> CpuUsage {
        CpuUsage {
            user_s: self.user.saturating_sub(earlier.user).as_secs_f64(),
            system_s: self.system.saturating_sub(earlier.system).as_secs_f64(),
        }
    }

    /// CPU spent from this snapshot until now.
    pub fn elapsed(&self) -> CpuUsage {
        CpuClock::now().since(self)
    }
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::from_secs(tv.tv_sec.max(0) as u64) + Duration::from_micros(tv.tv_usec.max(0) as u64)
}

/// User and system CPU time used so far by process `pid` (for example the
/// NFS server), from `/proc/PID/stat`. Take two readings and use
/// [`CpuUsage::since`] for the difference.
pub fn process_cpu(pid: u32) -> Result<CpuUsage, StatsError> {
    let path = format!("/proc/{pid}/stat");
    let text = std::fs::read_to_string(&path).map_err(|source| StatsError::Read {
        path: path.clone(),
        source,
    })?;
    parse_proc_stat(&text, clock_ticks()).ok_or(StatsError::Parse { path })
}

/// Clock ticks per second, the unit of /proc/PID/stat's times (100 if the
/// system will not say).
pub fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no memory side effects.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// utime and stime (fields 14 and 15) of a `/proc/PID/stat` line, in
/// seconds, as procfs parses the line (the command name, field 2, may itself
/// contain spaces and parentheses). None for a line procfs refuses (fewer
/// fields than any kernel since 2.6 writes).
pub fn parse_proc_stat(text: &str, ticks_per_s: f64) -> Option<CpuUsage> {
    use procfs::FromRead;
    let stat = procfs::process::Stat::from_read(text.as_bytes()).ok()?;
    if ticks_per_s <= 0.0 {
        return None;
    }
    Some(CpuUsage {
        user_s: stat.utime as f64 / ticks_per_s,
        system_s: stat.stime as f64 / ticks_per_s,
    })
}

impl CpuUsage {
    /// User plus system seconds.
    pub fn total_s(&self) -> f64 {
        self.user_s + self.system_s
    }

    /// What was spent between an `earlier` reading and this one (never negative).
    pub fn since(&self, earlier: &CpuUsage) -> CpuUsage {
        CpuUsage {
            user_s: (self.user_s - earlier.user_s).max(0.0),
            system_s: (self.system_s - earlier.system_s).max(0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_command_name() {
        let line =
            "4242 (ganesha) nfsd)) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 9 0 \
                    2336921 3133440 382 18446744073709551615 94034869133312 94034869153193 \
                    140736582394384 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 94034869169200 \
                    94034869170816 94035225448448 140736582396396 140736582396416 \
                    140736582396416 140736582397931 0\n";
        let cpu = parse_proc_stat(line, 100.0).unwrap();
        assert!((cpu.user_s - 2.5).abs() < 1e-9);
        assert!((cpu.system_s - 0.75).abs() < 1e-9);
    }

    #[test]
    fn rejects_truncated_stat() {
        assert!(parse_proc_stat("12 (x) S 1 2 3", 100.0).is_none());
        // Cut before field 37 (cnswap), the last one every kernel writes.
        let cut = "4242 (x) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 9 0 100 0 0";
        assert!(parse_proc_stat(cut, 100.0).is_none());
        assert!(parse_proc_stat("no parens here", 100.0).is_none());
        assert!(parse_proc_stat("", 100.0).is_none());
    }

    #[test]
    fn own_process_cpu_grows_with_work() {
        let before = CpuClock::now();
        let t = std::time::Instant::now();
        let mut x = 1u64;
        while t.elapsed() < Duration::from_millis(60) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let used = CpuClock::now().since(&before);
        assert!(used.total_s() > 0.01, "busy loop used {used:?}");
        let me = process_cpu(std::process::id()).unwrap();
        assert!(me.total_s() > 0.0);
    }

    #[test]
    fn missing_process_names_path() {
        // PID above pid_max (at most 2^22) cannot exist.
        let err = process_cpu(u32::MAX).unwrap_err().to_string();
        assert!(err.contains("/proc/4294967295/stat"), "{err}");
    }
}
