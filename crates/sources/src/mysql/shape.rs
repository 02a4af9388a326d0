//! InnoDB's reads in their shape: the buffer pool in front of them and how skewed the
//! accesses behind its hit share were. A buffer pool of 64 MiB over a gigabyte that
//! serves 94% of the page accesses was fed skewed accesses (uniform ones would hit 6%);
//! the replay simulates a pool of production's size, draws the accesses with a Zipf law
//! fitted to that hit share and reads only what it misses, as InnoDB does.

use super::capture::MyCapture;
use crate::model::shape::{fit, hit_share};
use crate::model::{PageCacheShape, WorkloadModel};

/// The buffer pool and the skew, into `m` (whose read class is made); nothing where
/// the counters or the pool's size are missing.
pub fn shape(c: &MyCapture, page: u32, m: &mut WorkloadModel) {
    let requests = c
        .status_delta("Innodb_buffer_pool_read_requests")
        .unwrap_or(0.0);
    let misses = c.status_delta("Innodb_buffer_pool_reads").unwrap_or(0.0);
    let pool = c.server.setting_u64("innodb_buffer_pool_size").unwrap_or(0);
    let data = m.dataset_bytes.unwrap_or(0);
    if requests <= 0.0 || pool == 0 || data == 0 || m.class("single-block-read").is_none() {
        return;
    }
    let hit = (1.0 - misses / requests).clamp(0.0, 1.0);
    let mut p = PageCacheShape {
        buffer_pool_bytes: Some(pool),
        buffer_pool_hit_share: Some((hit * 10_000.0).round() / 10_000.0),
        ..PageCacheShape::default()
    };
    let method = c.server.setting("innodb_flush_method").unwrap_or("fsync");
    if m.data_buffered {
        p.bytes_source = format!(
            "not known: innodb_flush_method {method} reads through the OS page cache, \
             whose size a monitoring account cannot read"
        );
        p.hit_source = "not known: InnoDB's counters do not say which reads the OS page \
                        cache served"
            .into();
    } else {
        p.bytes_source = format!("innodb_flush_method {method} bypasses it");
        p.hit_source = "none: every read InnoDB counts reached the device (O_DIRECT)".into();
    }
    let blocks = vec![((data / u64::from(page)).max(1), 1.0)];
    let cache = pool as f64 / f64::from(page);
    let whose = format!(
        "the buffer pool's (1 - Innodb_buffer_pool_reads/Innodb_buffer_pool_read_requests \
         = 1 - {misses:.0}/{requests:.0} = {hit:.4}; innodb_buffer_pool_size {pool})"
    );
    match fit(&blocks, cache, hit) {
        Ok(s) => {
            p.skew = Some((s * 1000.0).round() / 1000.0);
            p.skew_source = format!(
                "fitted to {whose} hit share: a Zipf law of exponent {s:.3} over the data \
                 set gives {hit:.3} in a least-recently-used pool of {cache:.0} pages \
                 (uniform accesses would hit {:.3})",
                hit_share(&blocks, 0.0, cache)
            );
        }
        Err(why) => {
            p.skew = Some(0.0);
            p.skew_source = format!("uniform ({whose}): {why}");
        }
    }
    m.notes.push(format!(
        "reads: through a simulated buffer pool of {} MiB that hit {:.1}% of the accesses \
         in production; only its misses are read, and page writes go to pages it holds",
        pool >> 20,
        hit * 100.0
    ));
    m.page_cache = Some(p);
}
