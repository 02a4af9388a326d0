//! Latencies in words, shared by the replay's text and its charts.

use dbio_compare::replay::latency_words;

/// A bucket bound as Oracle titles its power-of-two buckets: 512us, 1ms (1024 us),
/// 32ms, 2s.
pub(super) fn us_short(us: u64) -> String {
    match us {
        0..1024 => format!("{us}us"),
        1024..1_048_576 => format!("{}ms", us / 1024),
        _ => format!("{}s", us / 1_048_576),
    }
}

/// A latency for a sentence: "585 µs", "1.2 ms", "2.3 s" (as the verdict writes it).
pub fn latency(us: f64) -> String {
    latency_words(us)
}
