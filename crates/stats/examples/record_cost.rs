//! Cost of `Recorder::record` per completion:
//! `cargo run --release -p dbio-stats --example record_cost`.

use std::time::{Duration, Instant};

use dbio_stats::{ClassDesc, Recorder};

fn main() {
    const N: u64 = 20_000_000;
    let classes = [
        ClassDesc::new("single-block-read", "db file sequential read"),
        ClassDesc::new("dbwr-write", "db file parallel write"),
    ];
    let start = Instant::now();
    let mut rec = Recorder::new(&classes, 8, start);
    // Latencies spread over 20 us .. 5 ms; the reap time advances 1 us per
    // completion, as at 1M IOPS, so the series grows as in a real run.
    let t0 = Instant::now();
    let mut lat = 20_000u64;
    for i in 0..N {
        lat = lat.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i) % 5_000_000 + 20_000;
        let now = start + Duration::from_micros(i);
        rec.record(
            (i & 1) as usize,
            (i & 7) as usize,
            i & 1 == 1,
            8192,
            lat,
            now,
        );
    }
    let spent = t0.elapsed();
    let (c, _, s) = rec.finish(Duration::from_micros(N));
    println!(
        "{N} records in {:.3} s: {:.1} ns per record; {} classes, {} seconds of series, p99 {:.0} us",
        spent.as_secs_f64(),
        spent.as_nanos() as f64 / N as f64,
        c.len(),
        s.len(),
        c[0].p99_us
    );
}
