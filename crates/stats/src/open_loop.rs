//! Open-loop runs (`dbio run --rate`): how late each I/O was issued after
//! its intended start, per class, and the result section that sets what
//! was asked against what was achieved.
//!
//! Latencies of an open-loop run count from the intended start (the
//! recorder gets them so), so a backlog shows in the percentiles; this
//! module says where that time went before the I/O reached the engine.

use crate::recorder::ClassDesc;
use crate::schema::ClassResult;
pub use crate::schema::{OpenLoopClass, OpenLoopSection};

/// Lateness of one class's I/Os.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassLateness {
    /// I/Os issued (of the measured time).
    pub issued: u64,
    /// Of those, I/Os that were due while every slot was busy and waited
    /// in the backlog.
    pub late: u64,
    pub late_sum_ns: u64,
    pub max_late_ns: u64,
    /// I/Os due before the time was up that were never issued (stop,
    /// error, or a backlog past the drain limit).
    pub left: u64,
    /// I/Os due before the time was up that were still waiting then.
    pub at_end: u64,
}

/// Per-thread lateness accounts, indexed by class like the recorder.
/// [`issued`](Lateness::issued) is a few additions: no lock, no allocation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lateness {
    pub classes: Vec<ClassLateness>,
}

impl Lateness {
    pub fn new(classes: usize) -> Self {
        Lateness {
            classes: vec![ClassLateness::default(); classes],
        }
    }

    /// One I/O of `class` issued `late_ns` after its intended start;
    /// `waited`: it found no free slot when it was due.
    #[inline]
    pub fn issued(&mut self, class: usize, late_ns: u64, waited: bool) {
        if let Some(c) = self.classes.get_mut(class) {
            c.issued += 1;
            c.late += u64::from(waited);
            c.late_sum_ns = c.late_sum_ns.saturating_add(late_ns);
            c.max_late_ns = c.max_late_ns.max(late_ns);
        }
    }

    /// One I/O of `class` due before the time was up and not issued then;
    /// `never`: not issued at all.
    pub fn pending(&mut self, class: usize, never: bool) {
        if let Some(c) = self.classes.get_mut(class) {
            c.at_end += 1;
            c.left += u64::from(never);
        }
    }

    pub fn merge(&mut self, other: &Lateness) {
        if other.classes.len() > self.classes.len() {
            self.classes
                .resize(other.classes.len(), ClassLateness::default());
        }
        for (a, b) in self.classes.iter_mut().zip(&other.classes) {
            a.issued += b.issued;
            a.late += b.late;
            a.late_sum_ns = a.late_sum_ns.saturating_add(b.late_sum_ns);
            a.max_late_ns = a.max_late_ns.max(b.max_late_ns);
            a.left += b.left;
            a.at_end += b.at_end;
        }
    }

    /// The section of the result: per class of `descs` with a rate asked
    /// (`asked`, I/Os per second, by class index) or I/Os issued, the
    /// achieved rate taken from `results` (the run's classes).
    pub fn section(
        &self,
        descs: &[ClassDesc],
        asked: &[f64],
        results: &[ClassResult],
        arrivals: &str,
    ) -> OpenLoopSection {
        let classes = descs
            .iter()
            .enumerate()
            .filter_map(|(i, d)| {
                let l = self.classes.get(i).copied().unwrap_or_default();
                let asked = asked.get(i).copied().unwrap_or(0.0);
                if asked <= 0.0 && l.issued == 0 && l.at_end == 0 {
                    return None;
                }
                let done = results.iter().find(|c| c.class == d.name);
                Some(OpenLoopClass {
                    class: d.name.clone(),
                    asked_iops: asked,
                    achieved_iops: done.map_or(0.0, |c| c.iops),
                    due: l.issued + l.left,
                    late: l.late,
                    mean_late_us: mean_us(l.late_sum_ns, l.issued),
                    max_late_us: l.max_late_ns as f64 / 1e3,
                    left: l.left,
                    at_end: l.at_end,
                })
            })
            .collect();
        let mut s = OpenLoopSection {
            arrivals: arrivals.into(),
            classes,
            ..Default::default()
        };
        s.sum_classes();
        s
    }
}

fn mean_us(sum_ns: u64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        sum_ns as f64 / n as f64 / 1e3
    }
}

impl OpenLoopSection {
    /// The sections of runs that ran at the same time as one load:
    /// per-class figures summed (the largest lateness kept), achieved
    /// rates taken from the merged `results`.
    pub fn merge(parts: &[&OpenLoopSection], results: &[ClassResult]) -> OpenLoopSection {
        let mut m = OpenLoopSection {
            arrivals: parts
                .first()
                .map(|p| p.arrivals.clone())
                .unwrap_or_default(),
            ..Default::default()
        };
        for p in parts {
            for c in &p.classes {
                let i = match m.classes.iter().position(|x| x.class == c.class) {
                    Some(i) => i,
                    None => {
                        m.classes.push(OpenLoopClass {
                            class: c.class.clone(),
                            ..Default::default()
                        });
                        m.classes.len() - 1
                    }
                };
                let x = &mut m.classes[i];
                let (n0, n1) = ((x.due - x.left) as f64, (c.due - c.left) as f64);
                if n0 + n1 > 0.0 {
                    x.mean_late_us = (x.mean_late_us * n0 + c.mean_late_us * n1) / (n0 + n1);
                }
                x.asked_iops += c.asked_iops;
                x.due += c.due;
                x.late += c.late;
                x.max_late_us = x.max_late_us.max(c.max_late_us);
                x.left += c.left;
                x.at_end += c.at_end;
            }
        }
        for x in &mut m.classes {
            x.achieved_iops = results
                .iter()
                .find(|c| c.class == x.class)
                .map_or(0.0, |c| c.iops);
        }
        m.sum_classes();
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn descs() -> Vec<ClassDesc> {
        ["single-block-read", "redo-write"]
            .map(|n| ClassDesc::new(n, "e"))
            .to_vec()
    }

    fn done(class: &str, iops: f64) -> ClassResult {
        ClassResult {
            class: class.into(),
            iops,
            ..Default::default()
        }
    }

    #[test]
    fn lateness_adds_up_per_class_and_over_threads() {
        let mut a = Lateness::new(2);
        a.issued(0, 1_000, false);
        a.issued(0, 3_000, true);
        a.issued(1, 500_000, true);
        a.issued(7, 9, true); // no such class: ignored
        let mut b = Lateness::new(2);
        b.issued(0, 2_000, false);
        b.pending(0, false);
        b.pending(1, true);
        a.merge(&b);
        assert_eq!(
            a.classes[0],
            ClassLateness {
                issued: 3,
                late: 1,
                late_sum_ns: 6_000,
                max_late_ns: 3_000,
                left: 0,
                at_end: 1,
            }
        );
        assert_eq!((a.classes[1].issued, a.classes[1].left), (1, 1));
        let s = a.section(
            &descs(),
            &[100.0, 10.0],
            &[done("single-block-read", 99.5), done("redo-write", 9.0)],
            "poisson",
        );
        assert_eq!(s.due, 3 + 2);
        assert_eq!(s.classes[0].due, 3);
        assert_eq!((s.classes[1].due, s.classes[1].left), (2, 1));
        assert!((s.classes[0].mean_late_us - 2.0).abs() < 1e-9);
        assert_eq!(s.max_late_us, 500.0);
        assert!((s.mean_late_us - (6.0 + 500.0) / 4.0).abs() < 1e-9);
        assert_eq!(s.late, 2);
        assert!(s.behind, "an I/O never issued is behind");
        assert!(s
            .verdict
            .starts_with("storage fell behind: achieved 108 of 110"));
        assert!(s.verdict.contains("1 never issued"), "{}", s.verdict);
    }

    #[test]
    fn the_verdict_follows_the_backlog_and_the_rate() {
        let class = |late, at_end, achieved| OpenLoopClass {
            class: "single-block-read".into(),
            asked_iops: 1000.0,
            achieved_iops: achieved,
            due: 100_000,
            late,
            max_late_us: 250.0,
            at_end,
            ..Default::default()
        };
        let judged = |c: OpenLoopClass| {
            let mut s = OpenLoopSection {
                classes: vec![c],
                ..Default::default()
            };
            s.sum_classes();
            s
        };
        let ok = judged(class(0, 0, 995.0));
        assert!(!ok.behind);
        assert_eq!(
            ok.verdict,
            "storage kept pace: achieved 995 of 1000 I/Os per second asked, up to 250 us late"
        );
        let waited = judged(class(2000, 10, 1000.0));
        assert!(!waited.behind && waited.verdict.contains("2000 I/Os (2.0%) waited"));
        assert!(judged(class(0, 0, 980.0)).behind, "2% short");
        let backlog = judged(class(0, 2000, 1000.0));
        assert!(backlog.behind);
        assert!(backlog.verdict.contains("2000 I/Os still waiting"));
        // Two ranks: summed, the worst lateness kept.
        let m = OpenLoopSection::merge(&[&ok, &backlog], &[done("single-block-read", 1990.0)]);
        assert_eq!((m.asked_iops, m.due, m.at_end), (2000.0, 200_000, 2000));
        assert_eq!(m.achieved_iops, 1990.0);
        assert!(!m.behind, "0.5% short, 1% waiting");
    }
}
