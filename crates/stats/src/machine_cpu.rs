//! The whole machine's CPU over a run's measured window, from /proc/stat's
//! `cpu` line read at the window's edges: every process's and the kernel's
//! work, so that a run on a kernel NFS mount (whose client works in the
//! kernel, not in dbio's process) and one on dbio's own client can be set
//! side by side per I/O. On a machine shared with other work it counts that
//! work too.

use serde::{Deserialize, Serialize};

/// The machine's CPU time between the measured window's edges.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct MachineCpu {
    /// CPU seconds in user mode (nice included) on all CPUs.
    pub user_s: f64,
    /// CPU seconds in the kernel (interrupts included) on all CPUs.
    pub system_s: f64,
    /// CPU seconds idle or waiting for I/O on all CPUs.
    pub idle_s: f64,
    /// Busy seconds (user + system) per I/O of the run, in microseconds.
    pub us_per_io: f64,
}

impl MachineCpu {
    /// From the tick counts (user, system, idle; all CPUs) between the
    /// edges, `ticks_per_s` a second, for a run of `ios` I/Os.
    pub fn from_ticks(user: u64, system: u64, idle: u64, ticks_per_s: f64, ios: u64) -> MachineCpu {
        let s = |t: u64| t as f64 / ticks_per_s.max(1.0);
        let busy = s(user) + s(system);
        MachineCpu {
            user_s: s(user),
            system_s: s(system),
            idle_s: s(idle),
            us_per_io: if ios > 0 {
                busy * 1e6 / ios as f64
            } else {
                0.0
            },
        }
    }

    /// Busy seconds, user and system.
    pub fn busy_s(&self) -> f64 {
        self.user_s + self.system_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_per_io() {
        let m = MachineCpu::from_ticks(30, 170, 200, 100.0, 1000);
        assert_eq!((m.user_s, m.system_s, m.idle_s), (0.3, 1.7, 2.0));
        assert!((m.us_per_io - 2000.0).abs() < 1e-9);
        assert_eq!(MachineCpu::from_ticks(1, 1, 1, 100.0, 0).us_per_io, 0.0);
    }
}
