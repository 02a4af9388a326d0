//! How long the server's processes waited for a CPU while a capture ran, from the
//! kernel's per-process scheduler statistics (`/proc/PID/schedstat`), read beside each
//! snapshot when the server runs on the host that captures. PostgreSQL times a read
//! from its call to its return, and a read that sleeps returns only once its process
//! has a CPU again: that wait is in PostgreSQL's read time, not in the storage's.
//! Reading `/proc` is the binary's work; the readings are kept in `readings.rs`, and
//! here is their arithmetic.

use super::capture::PgCapture;
pub use super::readings::{ProcessSched, SchedSnapshot};

/// The run-queue wait of the server's processes between a capture's snapshots.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuWait {
    /// Mean wait per timeslice, microseconds: run-queue time over timeslices.
    pub per_slice_us: f64,
    /// Run-queue time between the snapshots, nanoseconds, summed over `processes`.
    pub run_delay_ns: u64,
    /// Timeslices between the snapshots, summed over `processes`.
    pub timeslices: u64,
    /// Minor page faults between the snapshots, summed over `processes`.
    pub minor_faults: u64,
    /// Processes summed: present at both snapshots (same pid, same start).
    pub processes: usize,
    /// Which: "client backends", or "server processes" when no client backend was
    /// present at both.
    pub which: &'static str,
    /// Processes present at one snapshot only, left out.
    pub left_out: usize,
}

impl CpuWait {
    /// Where the figure came from, in one sentence.
    pub fn source(&self) -> String {
        let mut s = format!(
            "/proc/PID/schedstat of the {} {} present at both snapshots: {:.3} s waiting \
             on a run queue (field 2) over {} timeslices (field 3) = {:.1} us per timeslice",
            self.processes,
            self.which,
            self.run_delay_ns as f64 / 1e9,
            self.timeslices,
            self.per_slice_us
        );
        if self.left_out > 0 {
            s += &format!(
                "; {} processes seen at one snapshot only left out",
                self.left_out
            );
        }
        s
    }
}

pub use dbio_stats::parse_schedstat;

/// Field 10 of a `/proc/PID/stat` line: the minor page faults the process took.
pub fn parse_stat_minor_faults(text: &str) -> Option<u64> {
    stat_field(text, 10)
}

/// Field 22 of a `/proc/PID/stat` line: when the process started, clock ticks after
/// boot.
pub fn parse_stat_start(text: &str) -> Option<u64> {
    stat_field(text, 22)
}

/// Numeric field `n` (3 or more, counted from 1) of a `/proc/PID/stat` line. The
/// command name (field 2) may hold spaces and parentheses: fields are counted after
/// its last ')', where field 3 (the state) is the first.
fn stat_field(text: &str, n: usize) -> Option<u64> {
    let rest = &text[text.rfind(')')? + 1..];
    rest.split_whitespace().nth(n.checked_sub(3)?)?.parse().ok()
}

impl PgCapture {
    /// The mean run-queue wait per timeslice of the server's processes between the
    /// snapshots, or why it is not known.
    ///
    /// Summed over processes present at both snapshots, so that both sums are of the
    /// same processes. Client backends when any was present at both (they make the
    /// reads and most WAL flushes a capture times), else every server process read.
    pub fn cpu_wait(&self) -> Result<CpuWait, String> {
        let (Some(b), Some(e)) = (&self.begin.sched, &self.end.sched) else {
            return Err(
                "the capture has no /proc/PID/schedstat readings (taken by a dbio \
                        that did not read them)"
                    .into(),
            );
        };
        if b.processes.is_empty() || e.processes.is_empty() {
            let why = e.unread.as_deref().or(b.unread.as_deref());
            return Err(format!(
                "PostgreSQL's processes could not be read in /proc/PID/schedstat: {}",
                why.unwrap_or("none was listed")
            ));
        }
        let pairs: Vec<(&ProcessSched, &ProcessSched)> = e
            .processes
            .iter()
            .filter_map(|x| {
                let before = b
                    .processes
                    .iter()
                    .find(|p| p.pid == x.pid && (p.started - x.started).abs() < 1e-3)?;
                // A counter that went down is not the same process.
                (x.run_delay_ns >= before.run_delay_ns
                    && x.timeslices >= before.timeslices
                    && x.minor_faults >= before.minor_faults)
                    .then_some((before, x))
            })
            .collect();
        let left_out = b.processes.len() + e.processes.len() - 2 * pairs.len();
        let clients: Vec<_> = pairs
            .iter()
            .filter(|(_, x)| x.backend_type == "client backend")
            .filter(|(p, x)| x.timeslices > p.timeslices)
            .copied()
            .collect();
        let (used, which) = if clients.is_empty() {
            (pairs, "server processes")
        } else {
            (clients, "client backends")
        };
        let run_delay_ns: u64 = used
            .iter()
            .map(|(p, x)| x.run_delay_ns - p.run_delay_ns)
            .sum();
        let timeslices: u64 = used.iter().map(|(p, x)| x.timeslices - p.timeslices).sum();
        let minor_faults: u64 = used
            .iter()
            .map(|(p, x)| x.minor_faults - p.minor_faults)
            .sum();
        if used.is_empty() {
            return Err("no server process was present at both snapshots".into());
        }
        if timeslices == 0 {
            return Err(format!(
                "the {} server processes present at both snapshots ran no timeslices \
                 between them (/proc/PID/schedstat all zeros: the kernel keeps no \
                 scheduler statistics?)",
                used.len()
            ));
        }
        Ok(CpuWait {
            per_slice_us: run_delay_ns as f64 / 1e3 / timeslices as f64,
            run_delay_ns,
            timeslices,
            minor_faults,
            processes: used.len(),
            which,
            left_out,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::pg15;
    use super::*;
    use crate::pg::{model_of, READ_EVENT, WAL_EVENT};

    fn proc(pid: u32, kind: &str, started: f64, delay: u64, slices: u64) -> ProcessSched {
        ProcessSched {
            pid,
            backend_type: kind.into(),
            started,
            run_delay_ns: delay,
            timeslices: slices,
            // Faults grow with the timeslices here: 3 per timeslice.
            minor_faults: 3 * slices,
            read_bytes: None,
        }
    }

    fn sched(processes: Vec<ProcessSched>) -> Option<SchedSnapshot> {
        Some(SchedSnapshot {
            processes,
            unread: None,
        })
    }

    /// pg15() with two client backends, a walwriter, one backend gone and one new.
    fn with_sched() -> PgCapture {
        let mut c = pg15();
        c.begin.sched = sched(vec![
            proc(10, "client backend", 900.0, 1_000_000, 100),
            proc(11, "client backend", 900.5, 2_000_000, 200),
            proc(12, "walwriter", 800.0, 0, 10),
            proc(13, "client backend", 950.0, 9_000_000, 900),
        ]);
        c.end.sched = sched(vec![
            // 6 ms over 300 timeslices and 12 ms over 700: 18 ms over 1,000.
            proc(10, "client backend", 900.0, 7_000_000, 400),
            proc(11, "client backend", 900.5, 14_000_000, 900),
            proc(12, "walwriter", 800.0, 50_000_000, 20),
            proc(14, "client backend", 1050.0, 1_000_000, 10),
        ]);
        c
    }

    #[test]
    fn schedstat_and_stat_lines_parse() {
        let stat = "4242 (postgres: a) b) S 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 \
                    0 3731937 100 1 18446744073709551615";
        assert_eq!(parse_stat_start(stat), Some(3_731_937));
        assert_eq!(parse_stat_minor_faults(stat), Some(1));
        assert_eq!(parse_stat_minor_faults("4242 (postgres) S 1"), None);
        assert_eq!(parse_stat_start("4242 (postgres) S 1"), None);
    }

    #[test]
    fn the_wait_is_per_timeslice_of_the_client_backends_present_at_both() {
        let w = with_sched().cpu_wait().unwrap();
        assert_eq!((w.run_delay_ns, w.timeslices), (18_000_000, 1_000));
        assert_eq!(w.minor_faults, 3_000);
        assert_eq!(w.per_slice_us, 18.0);
        assert_eq!((w.processes, w.which), (2, "client backends"));
        // 13 ended and 14 began between the snapshots.
        assert_eq!(w.left_out, 2);
        let s = w.source();
        assert!(
            s.starts_with("/proc/PID/schedstat of the 2 client backends"),
            "{s}"
        );
        assert!(s.contains("18.0 us per timeslice"), "{s}");
    }

    #[test]
    fn a_reused_pid_is_another_process_and_without_clients_every_process_counts() {
        let mut c = with_sched();
        // Both client backends' pids taken by new processes: only the walwriter is
        // the same process at both.
        for p in c.end.sched.as_mut().unwrap().processes.iter_mut() {
            if p.backend_type == "client backend" {
                p.started += 30.0;
            }
        }
        let w = c.cpu_wait().unwrap();
        assert_eq!((w.processes, w.which), (1, "server processes"));
        assert_eq!(w.per_slice_us, 5_000.0);
        // A counter that went down is not the same process either.
        c.end.sched.as_mut().unwrap().processes[2].timeslices = 5;
        let e = c.cpu_wait().unwrap_err();
        assert_eq!(e, "no server process was present at both snapshots");
    }

    #[test]
    fn a_missing_figure_says_why() {
        let mut c = pg15();
        assert!(c
            .cpu_wait()
            .unwrap_err()
            .contains("no /proc/PID/schedstat readings"));
        c.begin.sched = Some(SchedSnapshot {
            processes: Vec::new(),
            unread: Some("none of the server's 5 processes is on this host".into()),
        });
        c.end.sched = c.begin.sched.clone();
        let e = c.cpu_wait().unwrap_err();
        assert!(
            e.ends_with("none of the server's 5 processes is on this host"),
            "{e}"
        );
        c.begin.sched = sched(vec![proc(10, "client backend", 900.0, 0, 0)]);
        c.end.sched = c.begin.sched.clone();
        assert!(c.cpu_wait().unwrap_err().contains("ran no timeslices"));
    }

    #[test]
    fn the_model_adds_the_wait_to_reads_and_wal_only() {
        let m = model_of(&with_sched(), "c.json").unwrap();
        for k in &m.classes {
            let judged = k.event == READ_EVENT || k.event == WAL_EVENT;
            assert_eq!(k.cpu_wait_us, judged.then_some(18.0), "{}", k.class);
            assert_eq!(
                k.cpu_wait_source
                    .as_deref()
                    .is_some_and(|s| s.starts_with("/proc/PID/schedstat")),
                judged,
                "{}",
                k.class
            );
        }
        assert!(m.notes.iter().any(|n| n.contains("18.0 us per timeslice")));
        // The client backends' 3,000 faults over the capture's reads: the share of the
        // reads' pages replayed unmapped, and a note.
        let read = m.class("single-block-read").unwrap();
        let reads = read.production_ios.unwrap();
        let pages = f64::from(read.size / 4096);
        let share = (3000.0 / reads / pages).min(1.0);
        assert_eq!(read.unmapped_pages, Some(share));
        assert!(read
            .unmapped_source
            .as_deref()
            .unwrap()
            .contains("3000 minor faults"));
        let want = format!(
            "faults: the client backends took {:.1} minor page faults per read during the \
             capture (3000 over {reads:.0} reads",
            3000.0 / reads
        );
        assert!(
            m.notes.iter().any(|n| n.starts_with(&want)),
            "{:?}",
            m.notes
        );
        // Other classes replay none.
        assert!(m
            .classes
            .iter()
            .filter(|k| k.event != READ_EVENT)
            .all(|k| k.unmapped_pages.is_none()));
        // Without the readings: no term, and the reason where the term would be.
        let m = model_of(&pg15(), "c.json").unwrap();
        let read = m.class("single-block-read").unwrap();
        assert_eq!(read.cpu_wait_us, None);
        assert!(read
            .cpu_wait_source
            .as_deref()
            .unwrap()
            .starts_with("not known: the capture has no /proc/PID/schedstat"));
        assert!(m.notes.iter().any(
            |n| n.starts_with("CPU: the time PostgreSQL's processes waited for a CPU is not known")
        ));
        assert!(!m.notes.iter().any(|n| n.starts_with("faults:")));
        assert_eq!(read.unmapped_pages, None);
        assert_eq!(m.class("dbwr-write").unwrap().cpu_wait_source, None);
    }

    #[test]
    fn a_capture_file_without_readings_still_loads() {
        let mut v = serde_json::to_value(with_sched()).unwrap();
        assert!(v["end"]["sched"]["processes"].is_array());
        v["begin"].as_object_mut().unwrap().remove("sched");
        v["end"].as_object_mut().unwrap().remove("sched");
        let c = crate::pg::read(&v.to_string(), "old.json").unwrap();
        assert_eq!(c.end.sched, None);
        let back: PgCapture =
            serde_json::from_str(&serde_json::to_string(&with_sched()).unwrap()).unwrap();
        assert_eq!(back, with_sched());
    }
}
