//! What the page cache under a database's buffer pool holds once the server has run
//! a while: the blocks the pool misses most often. A warm-up that reads as the server
//! did would need the page cache's characteristic time, often hundreds of millions
//! of accesses, to get there; the steady state is computed instead (Che's
//! approximation of least-recently-used caches), and so is the pool's own.

use crate::skew::Extent;

/// Ranks grouped geometrically (2% apart) in one relation.
struct Group {
    extent: usize,
    /// Ranks `first..first + count`, 1-based.
    first: u64,
    count: u64,
    /// The read probability of each of its blocks.
    p: f64,
}

/// The blocks a page cache of `cache_blocks` under a pool of `pool_blocks` holds in
/// steady state, least often missed first: those whose accesses the pool misses most
/// often (each block's read rate times the chance the pool does not hold it).
pub(crate) fn page_cache_blocks(
    extents: &[Extent],
    pool_blocks: u64,
    cache_blocks: u64,
) -> Vec<u64> {
    let groups = groups(extents);
    let read: u64 = groups.iter().map(|g| g.count).sum();
    if cache_blocks == 0 || read <= pool_blocks {
        return Vec::new();
    }
    let t = fill_time(&groups, pool_blocks as f64);
    let missed = |g: &Group| g.p * (-g.p * t).exp();
    // The rate of misses above which a block is held: the cache's worth of them.
    let held_above = |m: f64| -> u64 {
        groups
            .iter()
            .filter(|g| missed(g) >= m)
            .map(|g| g.count)
            .sum()
    };
    let (mut lo, mut hi) = (f64::MIN_POSITIVE.ln(), 0.0_f64);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if held_above(mid.exp()) > cache_blocks {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let mut kept: Vec<&Group> = groups.iter().filter(|g| missed(g) >= lo.exp()).collect();
    kept.sort_by(|a, b| missed(a).total_cmp(&missed(b)));
    let mut out = Vec::with_capacity(cache_blocks.min(1 << 26) as usize);
    // The least missed are dropped first where the last group overflows.
    let over = kept
        .iter()
        .map(|g| g.count)
        .sum::<u64>()
        .saturating_sub(cache_blocks);
    let mut skip = over;
    for g in kept {
        let e = &extents[g.extent];
        for rank in g.first..g.first + g.count {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            out.push(e.block_of_rank(rank));
        }
    }
    out
}

/// The `n` blocks read most often, least often first: what a buffer pool of `n`
/// holds once it has run a while, short of the churn at its edge.
pub(crate) fn hottest(extents: &[Extent], n: u64) -> Vec<u64> {
    let mut groups = groups(extents);
    groups.sort_by(|a, b| b.p.total_cmp(&a.p));
    let mut out = Vec::with_capacity(n.min(1 << 26) as usize);
    for g in &groups {
        let e = &extents[g.extent];
        for rank in g.first..g.first + g.count {
            if out.len() as u64 >= n {
                break;
            }
            out.push(e.block_of_rank(rank));
        }
    }
    out.reverse();
    out
}

fn groups(extents: &[Extent]) -> Vec<Group> {
    let mut out = Vec::new();
    let mut before = 0.0;
    for (i, e) in extents.iter().enumerate() {
        let share = (e.upto() - before).max(0.0);
        before = e.upto();
        let (n, s) = e.law();
        let mut own = Vec::new();
        let mut lo = 1u64;
        while lo <= n {
            let hi = (((lo as f64) * 1.02).ceil() as u64).max(lo + 1).min(n + 1);
            let mid = ((lo as f64) * (hi - 1) as f64).sqrt().max(1.0);
            own.push((lo, hi - lo, mid.powf(-s)));
            lo = hi;
        }
        let norm: f64 = own.iter().map(|&(_, c, w)| c as f64 * w).sum();
        out.extend(own.into_iter().map(|(first, count, w)| Group {
            extent: i,
            first,
            count,
            p: if norm > 0.0 { share * w / norm } else { 0.0 },
        }));
    }
    out
}

/// The time (in accesses) within which the blocks accessed fill `blocks`.
fn fill_time(groups: &[Group], blocks: f64) -> f64 {
    let held = |t: f64| -> f64 {
        groups
            .iter()
            .map(|g| g.count as f64 * -(-g.p * t).exp_m1())
            .sum()
    };
    let (mut lo, mut hi) = (1e-3_f64, 1e3_f64);
    while held(hi) < blocks && hi < 1e30 {
        hi *= 1e3;
    }
    for _ in 0..100 {
        let mid = (lo * hi).sqrt();
        if held(mid) < blocks {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo * hi).sqrt()
}
