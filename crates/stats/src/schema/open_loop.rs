//! The section of an open-loop run (`--rate`) in the result: what was asked against
//! what was achieved, and the verdict; recorded and merged by `crate::open_loop`.

use serde::{Deserialize, Serialize};

/// Shortfall of the achieved rate below the asked one that still counts
/// as keeping pace (besides the randomness of Poisson arrivals).
const PACE_TOLERANCE: f64 = 0.01;

/// An open-loop run (`--rate`): what was asked and what was achieved,
/// and the backlog. Absent from closed-loop runs.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct OpenLoopSection {
    /// How arrivals were spaced: "poisson" or "fixed".
    pub arrivals: String,
    /// I/Os per second asked, all classes.
    pub asked_iops: f64,
    /// I/Os per second completed over the measured time, all classes (the
    /// run's `iops`).
    pub achieved_iops: f64,
    /// I/Os due in the measured time (issued or left).
    pub due: u64,
    /// I/Os that were due while every slot (`--outstanding` per user) was
    /// busy and waited in the backlog; latencies count that wait.
    pub late: u64,
    /// Mean time from intended start to issue, microseconds (pacing and
    /// backlog).
    pub mean_late_us: f64,
    /// Longest time from intended start to issue, microseconds.
    pub max_late_us: f64,
    /// I/Os due that were never issued (a stop, an error, or a backlog
    /// still there after the drain limit).
    pub left: u64,
    /// I/Os due before the time was up that were still waiting then (they
    /// were issued after it, and the measured time grew by their wait).
    pub at_end: u64,
    /// True when the storage did not keep pace: a backlog over 1% of the
    /// due I/Os when the time was up, I/Os never issued, or an achieved
    /// rate more than 1% (or 3 Poisson standard deviations) short.
    pub behind: bool,
    /// One line saying whether the storage kept pace, and by how much.
    pub verdict: String,
    /// Per class, in the run's class order.
    pub classes: Vec<OpenLoopClass>,
}

/// One class of an open-loop run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct OpenLoopClass {
    /// dbio class name, e.g. "redo-write".
    pub class: String,
    /// I/Os per second asked (a rate over the whole mix is split by its
    /// shares).
    pub asked_iops: f64,
    /// I/Os per second completed (the class's `iops`).
    pub achieved_iops: f64,
    pub due: u64,
    pub late: u64,
    pub mean_late_us: f64,
    pub max_late_us: f64,
    pub left: u64,
    pub at_end: u64,
}

impl OpenLoopSection {
    /// Sets the totals from `classes`, then `behind` and `verdict`.
    pub fn sum_classes(&mut self) {
        let c = &self.classes;
        self.asked_iops = c.iter().map(|c| c.asked_iops).sum();
        self.achieved_iops = c.iter().map(|c| c.achieved_iops).sum();
        self.due = c.iter().map(|c| c.due).sum();
        self.late = c.iter().map(|c| c.late).sum();
        let issued = |c: &OpenLoopClass| c.due - c.left;
        let n: u64 = c.iter().map(issued).sum();
        let sum: f64 = c.iter().map(|c| c.mean_late_us * issued(c) as f64).sum();
        self.mean_late_us = if n > 0 { sum / n as f64 } else { 0.0 };
        self.max_late_us = c.iter().map(|c| c.max_late_us).fold(0.0, f64::max);
        self.left = c.iter().map(|c| c.left).sum();
        self.at_end = c.iter().map(|c| c.at_end).sum();
        self.judge();
    }

    fn judge(&mut self) {
        let due = self.due.max(1) as f64;
        let slack = PACE_TOLERANCE.max(3.0 / due.sqrt());
        let short = self.achieved_iops < self.asked_iops * (1.0 - slack);
        let backlog = self.at_end as f64 > due * PACE_TOLERANCE;
        self.behind = short || backlog || self.left > 0;
        let rates = format!(
            "achieved {:.0} of {:.0} I/Os per second asked",
            self.achieved_iops, self.asked_iops
        );
        let worst = format!("up to {} late", late_text(self.max_late_us));
        self.verdict = if self.behind {
            let mut why = vec![rates];
            if self.at_end > 0 {
                why.push(format!(
                    "{} I/Os still waiting when the time was up",
                    self.at_end
                ));
            }
            if self.left > 0 {
                why.push(format!("{} never issued", self.left));
            }
            why.push(worst);
            format!("storage fell behind: {}", why.join(", "))
        } else if self.late > 0 {
            format!(
                "storage kept pace: {rates}; {} I/Os ({:.1}%) waited for a free slot, {worst}",
                self.late,
                100.0 * self.late as f64 / due
            )
        } else {
            format!("storage kept pace: {rates}, {worst}")
        };
    }
}

/// `850 us` or `1.2 s` or `104 ms`.
fn late_text(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.1} s", us / 1e6)
    } else if us >= 1e4 {
        format!("{:.0} ms", us / 1e3)
    } else if us >= 1e3 {
        format!("{:.1} ms", us / 1e3)
    } else {
        format!("{us:.0} us")
    }
}
