//! The AWR report reader (text and HTML): never panics, and what it reads keeps its
//! promises: histograms contiguous from 0 with shares of 0 to 100 %, finite figures.
#![no_main]

use dbio_sources::awr::{parameters, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = parameters(&text);
    let Ok(r) = parse(&text) else {
        return;
    };
    assert!(r.elapsed_s > 0.0 && r.elapsed_s.is_finite());
    for (event, h) in &r.histograms {
        let mut lower = 0;
        let mut sum = 0.0;
        for b in &h.buckets {
            assert_eq!(b.lower_us, lower, "{event}: a gap");
            assert!(b.upper_us > b.lower_us, "{event}: {b:?}");
            assert!((0.0..=100.0).contains(&b.pct), "{event}: {b:?}");
            lower = b.upper_us;
            sum += b.pct;
        }
        assert!(sum <= 100.0 + 1e-6, "{event}: {sum}");
    }
    for e in r.events.iter().chain(&r.background_events) {
        assert!(e.total_wait_s.is_finite());
        if let Some(m) = e.mean_wait_us {
            assert!(m.is_finite(), "{e:?}");
        }
    }
    for (_, v) in r.metrics() {
        assert!(v.is_finite());
    }
});
