//! Production's reads in their shape: the relations they spread over, and the page
//! cache that served part of them. The skew within the relations is fitted so that a
//! page cache of production's size serves production's share of the reads. The shapes a
//! model holds are defined with it (`workload.rs`) and re-exported here; what a replay
//! made of them is judged in dbio-compare (`replay/memory.rs`).

pub use super::workload::{PageCacheShape, RelationShare, MAX_SKEW};

/// Highest hit share a relation is fitted to.
const MAX_HIT: f64 = 0.999;

/// The share of reads a page cache of `cache_blocks` serves in steady state, when
/// reads go to relations of `(blocks, share)` with a Zipf law of exponent `s` within
/// each, under least-recently-used replacement (Che's approximation: a block is in
/// the cache when it was read within the cache's characteristic time).
pub fn hit_share(relations: &[(u64, f64)], s: f64, cache_blocks: f64) -> f64 {
    let buckets = buckets(relations, s);
    let total: f64 = buckets.iter().map(|b| b.0).sum();
    if cache_blocks >= total {
        return 1.0;
    }
    if cache_blocks <= 0.0 {
        return 0.0;
    }
    // The characteristic time T: blocks read within T fill the cache.
    let Some(t) = characteristic_time(&buckets, cache_blocks) else {
        return 1.0;
    };
    buckets
        .iter()
        .map(|&(n, p)| n * p * -(-p * t).exp_m1())
        .sum::<f64>()
        .clamp(0.0, 1.0)
}

/// The exponent at which a cache of `cache_blocks` serves `target` of the reads, or
/// why none does.
pub fn fit(relations: &[(u64, f64)], cache_blocks: f64, target: f64) -> Result<f64, String> {
    let uniform = hit_share(relations, 0.0, cache_blocks);
    if uniform >= 1.0 {
        return Err("the page cache holds the whole data set: every read is served".into());
    }
    if target <= uniform {
        return Err(format!(
            "production's cache served {:.3} of the reads, no more than uniform reads \
             would ({uniform:.3}): read uniformly",
            target
        ));
    }
    if hit_share(relations, MAX_SKEW, cache_blocks) < target {
        return Err(format!(
            "production's cache served {target:.3} of the reads, more than a Zipf law of \
             exponent {MAX_SKEW} gives"
        ));
    }
    let (mut lo, mut hi) = (0.0, MAX_SKEW);
    for _ in 0..50 {
        let mid = (lo + hi) / 2.0;
        if hit_share(relations, mid, cache_blocks) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok((lo + hi) / 2.0)
}

/// Each relation's own exponent, so that a least-recently-used cache of
/// `cache_blocks` shared by all serves each its own hit share: `relations` are
/// (blocks, share of the accesses, hit share). The cache's characteristic time is
/// found by bisection; at each, every relation's exponent by bisection on its share
/// (0 where even uniform accesses hit more, the steepest where none hits enough).
pub fn fit_each(relations: &[(u64, f64, f64)], cache_blocks: f64) -> Vec<f64> {
    let share_sum: f64 = relations.iter().map(|r| r.1.max(0.0)).sum();
    let one = |n: u64, q: f64, s: f64| -> Vec<(f64, f64)> {
        buckets(&[(n, 1.0)], s)
            .into_iter()
            .map(|(c, p)| (c, p * q / share_sum.max(f64::MIN_POSITIVE)))
            .collect()
    };
    // (hit share, blocks held) of one relation at characteristic time t.
    let at = |b: &[(f64, f64)], q: f64, t: f64| -> (f64, f64) {
        let hit: f64 = b.iter().map(|&(c, p)| c * p * -(-p * t).exp_m1()).sum();
        let held: f64 = b.iter().map(|&(c, p)| c * -(-p * t).exp_m1()).sum();
        (if q > 0.0 { hit / q } else { 0.0 }, held)
    };
    let exponents_at = |t: f64| -> (Vec<f64>, f64) {
        let mut held = 0.0;
        let mut out = Vec::with_capacity(relations.len());
        for &(n, share, target) in relations {
            let q = share.max(0.0) / share_sum.max(f64::MIN_POSITIVE);
            let (mut lo, mut hi) = (0.0, MAX_SKEW);
            // A relation the pool (nearly) never missed, an index's upper levels or a
            // small catalog, is read steeply: uniform reads would serve it as well
            // only with its every block held, which the pool did not spend on it.
            if target >= MAX_HIT {
                lo = MAX_SKEW;
            } else if at(&one(n, share, 0.0), q, t).0 >= target {
                hi = 0.0;
            } else if at(&one(n, share, MAX_SKEW), q, t).0 <= target {
                lo = MAX_SKEW;
            }
            for _ in 0..30 {
                if hi - lo < 1e-4 {
                    break;
                }
                let mid = (lo + hi) / 2.0;
                if at(&one(n, share, mid), q, t).0 < target {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            let s = (lo + hi) / 2.0;
            held += at(&one(n, share, s), q, t).1;
            out.push(s);
        }
        (out, held)
    };
    let (mut lo, mut hi) = (1e-3_f64, 1e12_f64);
    for _ in 0..60 {
        let mid = (lo * hi).sqrt();
        if exponents_at(mid).1 < cache_blocks {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // The side where the relations fit the cache: where a target is out of reach the
    // blocks held jump, and the midpoint may fall past the jump.
    exponents_at(lo).0
}

/// Each relation's hit share in a least-recently-used cache of `cache_blocks` they
/// share, reads going to relations of (blocks, share, own exponent): the inverse of
/// [`fit_each`].
pub fn hit_shares_each(relations: &[(u64, f64, f64)], cache_blocks: f64) -> Vec<f64> {
    let share_sum: f64 = relations
        .iter()
        .map(|r| r.1.max(0.0))
        .sum::<f64>()
        .max(f64::MIN_POSITIVE);
    let each: Vec<(f64, Vec<(f64, f64)>)> = relations
        .iter()
        .map(|&(n, q, s)| {
            let q = q.max(0.0) / share_sum;
            (
                q,
                buckets(&[(n, 1.0)], s)
                    .into_iter()
                    .map(|(c, p)| (c, p * q))
                    .collect(),
            )
        })
        .collect();
    let held = |t: f64| -> f64 {
        each.iter()
            .flat_map(|(_, b)| b.iter())
            .map(|&(c, p)| c * -(-p * t).exp_m1())
            .sum()
    };
    let (mut lo, mut hi) = (1e-3_f64, 1e12_f64);
    for _ in 0..100 {
        let mid = (lo * hi).sqrt();
        if held(mid) < cache_blocks {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let t = (lo * hi).sqrt();
    each.iter()
        .map(|(q, b)| {
            let hit: f64 = b.iter().map(|&(c, p)| c * p * -(-p * t).exp_m1()).sum();
            if *q > 0.0 {
                (hit / q).clamp(0.0, 1.0)
            } else {
                0.0
            }
        })
        .collect()
}

/// The share of a buffer pool's misses that a page cache of `cache_blocks` under it
/// serves, reads going to relations of (blocks, share, exponent): each block is
/// missed at its read rate times the chance the pool (least-recently-used, Che's
/// approximation) does not hold it, and the page cache is a least-recently-used
/// cache of that stream alone (the pool's hits never reach it).
pub fn page_cache_hit_share(
    relations: &[(u64, f64, f64)],
    pool_blocks: f64,
    cache_blocks: f64,
) -> f64 {
    let share_sum: f64 = relations
        .iter()
        .map(|r| r.1.max(0.0))
        .sum::<f64>()
        .max(f64::MIN_POSITIVE);
    let b: Vec<(f64, f64)> = relations
        .iter()
        .flat_map(|&(n, q, s)| {
            let q = q.max(0.0) / share_sum;
            buckets(&[(n, 1.0)], s)
                .into_iter()
                .map(move |(c, p)| (c, p * q))
        })
        .collect();
    let t_pool = characteristic_time(&b, pool_blocks);
    let missed: Vec<(f64, f64)> = b
        .iter()
        .map(|&(c, p)| (c, t_pool.map_or(p, |t| p * (-p * t).exp())))
        .filter(|&(_, m)| m > 0.0)
        .collect();
    let total: f64 = missed.iter().map(|&(c, m)| c * m).sum();
    if total <= 0.0 {
        return 1.0;
    }
    match characteristic_time(&missed, cache_blocks) {
        None => 1.0,
        Some(t) => (missed
            .iter()
            .map(|&(c, m)| c * m * -(-m * t).exp_m1())
            .sum::<f64>()
            / total)
            .clamp(0.0, 1.0),
    }
}

/// The time within which the blocks read fill `cache_blocks` (Che's approximation),
/// none when every block read fits.
fn characteristic_time(b: &[(f64, f64)], cache_blocks: f64) -> Option<f64> {
    let read: f64 = b.iter().filter(|x| x.1 > 0.0).map(|x| x.0).sum();
    if cache_blocks >= read {
        return None;
    }
    let held = |t: f64| -> f64 { b.iter().map(|&(c, p)| c * -(-p * t).exp_m1()).sum() };
    let (mut lo, mut hi) = (1e-3_f64, 1e3_f64);
    while held(hi) < cache_blocks && hi < 1e30 {
        hi *= 1e3;
    }
    for _ in 0..100 {
        let mid = (lo * hi).sqrt();
        if held(mid) < cache_blocks {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some((lo * hi).sqrt())
}

/// Smallest share of a relation's blocks the fit reads.
pub const MIN_SPAN: f64 = 1e-4;

/// The share of each relation's blocks read at all (its hottest, a Zipf law drawn
/// over them alone), with each relation's exponent fitted at that span to its
/// buffer-pool hit share as [`fit_each`] does, so that a page cache of
/// `cache_blocks` under a pool of `pool_blocks` serves `target` of the pool's
/// misses. A Zipf law over whole relations reaches either the pool's hit share or
/// the page cache's, seldom both: a database's cold rows are not read at all in a
/// window. The span is 1 where whole relations already give the page cache's share.
pub fn fit_span(
    relations: &[(u64, f64, f64)],
    pool_blocks: f64,
    cache_blocks: f64,
    target: f64,
) -> (f64, Vec<f64>) {
    let target = target.min(MAX_HIT);
    let at = |f: f64| -> (f64, Vec<f64>) {
        let rels: Vec<(u64, f64, f64)> = relations
            .iter()
            .map(|&(n, q, h)| (((n as f64 * f).round() as u64).max(1), q, h))
            .collect();
        let exps = fit_each(&rels, pool_blocks);
        let with: Vec<(u64, f64, f64)> = rels
            .iter()
            .zip(&exps)
            .map(|(&(n, q, _), &s)| (n, q, s))
            .collect();
        (page_cache_hit_share(&with, pool_blocks, cache_blocks), exps)
    };
    let whole = at(1.0);
    if whole.0 >= target {
        return (1.0, whole.1);
    }
    // The page cache's share grows as the span narrows; the widest span reaching it.
    let (mut lo, mut hi) = (MIN_SPAN.ln(), 0.0_f64);
    for _ in 0..24 {
        let mid = (lo + hi) / 2.0;
        if at(mid.exp()).0 >= target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let f = lo.exp();
    (f, at(f).1)
}

/// Ranks grouped geometrically (2% apart): (blocks in the group, the read
/// probability of each of them), over all relations.
fn buckets(relations: &[(u64, f64)], s: f64) -> Vec<(f64, f64)> {
    let share_sum: f64 = relations.iter().map(|r| r.1.max(0.0)).sum();
    let mut out = Vec::new();
    for &(n, share) in relations {
        if n == 0 || share <= 0.0 || share_sum <= 0.0 {
            if n > 0 {
                out.push((n as f64, 0.0));
            }
            continue;
        }
        let mut groups = Vec::new();
        let mut lo = 1u64;
        while lo <= n {
            let hi = (((lo as f64) * 1.02).ceil() as u64).max(lo + 1).min(n + 1);
            let mid = ((lo as f64) * (hi - 1) as f64).sqrt().max(1.0);
            groups.push(((hi - lo) as f64, mid.powf(-s)));
            lo = hi;
        }
        let norm: f64 = groups.iter().map(|(c, w)| c * w).sum();
        let q = share / share_sum;
        out.extend(groups.into_iter().map(|(c, w)| (c, q * w / norm)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_reads_hit_as_the_cache_covers_the_data() {
        let rel = [(10_000, 1.0)];
        assert!((hit_share(&rel, 0.0, 2_500.0) - 0.25).abs() < 0.01);
        assert_eq!(hit_share(&rel, 1.0, 20_000.0), 1.0);
        // Skewed reads hit more in the same cache.
        assert!(hit_share(&rel, 1.0, 2_500.0) > 0.7);
    }

    #[test]
    fn a_relation_read_often_and_small_is_all_hits() {
        // 90% of reads on 100 blocks, the rest on a million: a 1000-block cache
        // serves about the 90%.
        let rels = [(100, 0.9), (1_000_000, 0.1)];
        let h = hit_share(&rels, 0.0, 1_000.0);
        assert!((0.89..0.92).contains(&h), "{h}");
    }

    #[test]
    fn each_relation_gets_the_exponent_of_its_own_hit_share() {
        // A heap read nearly uniformly beside a steep index, sharing one cache: the
        // fit finds each one's exponent back from its hit share.
        let cache = 10_000.0;
        let truth = [
            (100_000u64, 0.5, 0.1),
            (20_000, 0.3, 1.2),
            (5_000, 0.2, 0.6),
        ];
        let hits = hit_shares_each(&truth, cache);
        let rels: Vec<(u64, f64, f64)> = truth
            .iter()
            .zip(&hits)
            .map(|(&(n, q, _), &h)| (n, q, h))
            .collect();
        let fitted = fit_each(&rels, cache);
        for (f, t) in fitted.iter().zip(&truth) {
            assert!((f - t.2).abs() < 0.02, "fitted {fitted:?}, truth {truth:?}");
        }
    }

    #[test]
    fn a_relation_never_missed_keeps_its_blocks_out_of_the_pool() {
        // An index whose upper levels and hot leaves always hit beside a heap that
        // misses: all hits is fitted as steep, not as read uniformly (which would
        // need its every block in the pool).
        let rels = [(40_000u64, 0.6, 1.0), (240_000, 0.4, 0.97)];
        let fitted = fit_each(&rels, 16_384.0);
        assert!(fitted[0] > 1.5, "{fitted:?}");
        let back = hit_shares_each(
            &[(40_000, 0.6, fitted[0]), (240_000, 0.4, fitted[1])],
            16_384.0,
        );
        assert!(back[0] > 0.99 && (back[1] - 0.97).abs() < 0.01, "{back:?}");
    }

    #[test]
    fn the_span_brings_the_page_cache_s_share_with_the_pool_s() {
        let (pool, cache) = (16_384.0, 65_536.0);
        let rels = [(40_000u64, 0.6, 0.999), (240_000, 0.4, 0.97)];
        let with = |span: f64, exps: &[f64]| -> Vec<(u64, f64, f64)> {
            rels.iter()
                .zip(exps)
                .map(|(&(n, q, _), &s)| (((n as f64 * span).round() as u64).max(1), q, s))
                .collect()
        };
        // Whole relations: the page cache serves some share of the pool's misses.
        let (span, exps) = fit_span(&rels, pool, cache, 0.0);
        assert_eq!(span, 1.0);
        let whole = page_cache_hit_share(&with(1.0, &exps), pool, cache);
        assert!(whole > 0.2 && whole < 0.9, "{whole}");
        // Asked for more, the span narrows until the page cache serves it, and the
        // pool still serves each relation its own share.
        let (span, exps) = fit_span(&rels, pool, cache, 0.98);
        assert!(span < 1.0, "{span}");
        let got = page_cache_hit_share(&with(span, &exps), pool, cache);
        assert!((got - 0.98).abs() < 0.01, "{got} at span {span}");
        let pool_hits = hit_shares_each(&with(span, &exps), pool);
        assert!((pool_hits[1] - 0.97).abs() < 0.01, "{pool_hits:?}");
    }

    #[test]
    fn the_fit_finds_the_exponent_back() {
        let rels = [(200_000, 0.7), (30_000, 0.3)];
        for s in [0.5, 0.9, 1.1] {
            let target = hit_share(&rels, s, 20_000.0);
            let got = fit(&rels, 20_000.0, target).unwrap();
            assert!((got - s).abs() < 0.01, "{s}: fitted {got}");
        }
        let e = fit(&rels, 20_000.0, 0.01).unwrap_err();
        assert!(e.contains("read uniformly"), "{e}");
        let e = fit(&rels, 300_000.0, 0.5).unwrap_err();
        assert!(e.contains("whole data set"), "{e}");
    }
}
