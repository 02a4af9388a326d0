//! /proc/diskstats (each line parsed by the `procfs` crate): cumulative
//! counters per block device, and the `iostat -x` figures of two readings.

use std::collections::HashMap;

use dbio_stats::DeviceSample;

/// The cumulative counters of one device (fields 4-14 of a diskstats line).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskCounters {
    pub reads: u64,
    pub reads_merged: u64,
    pub sectors_read: u64,
    pub read_ms: u64,
    pub writes: u64,
    pub writes_merged: u64,
    pub sectors_written: u64,
    pub write_ms: u64,
    pub in_flight: u64,
    pub io_ms: u64,
    pub queue_ms: u64,
}

/// Parses /proc/diskstats into name -> counters, each line as procfs parses
/// it; lines that do not parse are skipped.
pub fn parse(text: &str) -> HashMap<String, DiskCounters> {
    text.lines()
        .take(65_536)
        .filter_map(|line| procfs::DiskStat::from_line(line).ok())
        .map(|d| {
            let counters = DiskCounters {
                reads: d.reads,
                reads_merged: d.merged,
                sectors_read: d.sectors_read,
                read_ms: d.time_reading,
                writes: d.writes,
                writes_merged: d.writes_merged,
                sectors_written: d.sectors_written,
                write_ms: d.time_writing,
                in_flight: d.in_progress,
                io_ms: d.time_in_progress,
                queue_ms: d.weighted_time_in_progress,
            };
            (d.name, counters)
        })
        .collect()
}

/// Reads and parses /proc/diskstats (empty when it cannot be read). Read
/// whole and parsed line by line rather than through `procfs::diskstats()`,
/// which gives nothing when one line does not parse.
pub fn read() -> HashMap<String, DiskCounters> {
    std::fs::read_to_string("/proc/diskstats")
        .map(|t| parse(&t))
        .unwrap_or_default()
}

/// The `iostat -x` figures between two readings `dt_s` seconds apart,
/// stamped `t_s`. Counters that went backwards (a device re-created)
/// count as zero.
pub fn sample(a: &DiskCounters, b: &DiskCounters, dt_s: f64, t_s: f64) -> DeviceSample {
    let d = |x: u64, y: u64| y.saturating_sub(x);
    let reads = d(a.reads, b.reads);
    let writes = d(a.writes, b.writes);
    let read_bytes = d(a.sectors_read, b.sectors_read) * 512;
    let write_bytes = d(a.sectors_written, b.sectors_written) * 512;
    let per_s = |v: f64| if dt_s > 0.0 { v / dt_s } else { 0.0 };
    let ratio = |v: f64, n: u64| if n > 0 { v / n as f64 } else { 0.0 };
    let ms = dt_s * 1000.0;
    DeviceSample {
        t_s,
        reads,
        writes,
        read_bytes,
        write_bytes,
        r_s: per_s(reads as f64),
        w_s: per_s(writes as f64),
        rmb_s: per_s(read_bytes as f64 / 1e6),
        wmb_s: per_s(write_bytes as f64 / 1e6),
        rareq_kib: ratio(read_bytes as f64 / 1024.0, reads),
        wareq_kib: ratio(write_bytes as f64 / 1024.0, writes),
        r_await_ms: ratio(d(a.read_ms, b.read_ms) as f64, reads),
        w_await_ms: ratio(d(a.write_ms, b.write_ms) as f64, writes),
        aqu_sz: if ms > 0.0 {
            d(a.queue_ms, b.queue_ms) as f64 / ms
        } else {
            0.0
        },
        util_pct: if ms > 0.0 {
            (d(a.io_ms, b.io_ms) as f64 * 100.0 / ms).min(100.0)
        } else {
            0.0
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: [&str; 2] = [
        "   7       0 loop0 100 0 1600 50 10 0 80 20 0 60 70 0 0 0 0\n 253 0 vda 5 1 10 1 0 0 0 0 0 1 1\nshort line\n",
        "   7       0 loop0 300 2 4800 250 20 0 240 40 1 560 1070 0 0 0 0\n",
    ];

    #[test]
    fn iostat_columns_from_two_readings() {
        let a = parse(TWO[0]);
        let b = parse(TWO[1]);
        assert_eq!(a.len(), 2);
        let s = sample(&a["loop0"], &b["loop0"], 2.0, 2.0);
        assert_eq!(s.reads, 200);
        assert_eq!(s.r_s, 100.0);
        assert_eq!(s.read_bytes, 3200 * 512);
        assert_eq!(s.rareq_kib, 8.0);
        assert_eq!(s.r_await_ms, 1.0);
        assert_eq!(s.writes, 10);
        assert_eq!(s.wareq_kib, 8.0);
        assert_eq!(s.w_await_ms, 2.0);
        assert_eq!(s.util_pct, 25.0);
        assert_eq!(s.aqu_sz, 0.5);
        // Backwards counters are zero, not a wrap-around.
        let z = sample(&b["loop0"], &a["loop0"], 1.0, 1.0);
        assert_eq!(z.reads, 0);
    }
}
