//! Skewed reads: the data set as relations of production's sizes, each read in
//! production's share, and within each a Zipf law over its blocks. A page cache then
//! holds the hot part of each, as a server's does, and serves the share of reads it
//! served there.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::content::Rng;

/// How reads spread over the data set.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadSkew {
    /// The database's own buffer pool in front of the reads (PostgreSQL's
    /// shared_buffers), shared by the run's users: the relations' shares are then of
    /// every access, and only the accesses it misses are read, as the database reads
    /// only those. None: every draw is a read.
    pub pool: Option<SharedPool>,
    /// The relations in the order they are laid out from the data set's first block:
    /// (share of the data set's blocks, share of the reads). Both columns are
    /// normalised by the generator; a relation gets at least one block.
    pub relations: Vec<(f64, f64)>,
    /// The Zipf exponent within each relation (0: uniform; 1.1: pgbench's
    /// `random_zipfian(.., 1.1)`).
    pub exponent: f64,
    /// Each relation's own exponent, in the order of `relations`, where fitted one by
    /// one; empty: `exponent` for every relation.
    pub exponents: Vec<f64>,
    /// The share of each relation's blocks read at all, its hottest (1: every
    /// block): the Zipf law is drawn over them alone.
    pub span: f64,
    /// The hottest blocks next to each other at the relation's start (keys read in
    /// ranges, the kernel's read-ahead bringing hot neighbours), else spread over it.
    pub clustered: bool,
}

// The plan holding it compares whole configurations; its shares and exponent are
// finite numbers (the model checks them), so equality is an equivalence.
impl Eq for ReadSkew {}

/// The largest buffer pool simulated, blocks (32 GiB of 8 KiB blocks).
pub const MAX_POOL_BLOCKS: u64 = 1 << 22;

/// A database's buffer pool, simulated over block numbers: which blocks it holds, so
/// that only the accesses it misses become reads. Replacement is PostgreSQL's clock
/// sweep (a usage count per buffer, up to 5, counted down by the sweeping hand).
#[derive(Debug)]
pub(crate) struct BufferPool {
    capacity: usize,
    slots: Vec<(u64, u8)>,
    at: HashMap<u64, u32>,
    hand: usize,
    warmed: bool,
    /// What a page cache of `remember` blocks under the pool holds once a server
    /// has run a while, found with the warm-up.
    warm: Vec<u64>,
    remember: u64,
}

const MAX_USAGE: u8 = 5;

impl BufferPool {
    pub(crate) fn new(blocks: u64) -> Self {
        let capacity = blocks.clamp(1, MAX_POOL_BLOCKS) as usize;
        BufferPool {
            capacity,
            slots: Vec::with_capacity(capacity),
            at: HashMap::with_capacity(capacity),
            hand: 0,
            warmed: false,
            warm: Vec::new(),
            remember: 0,
        }
    }

    /// Accesses `block`: true when the pool held it; else it takes a buffer.
    pub(crate) fn access(&mut self, block: u64) -> bool {
        if let Some(&i) = self.at.get(&block) {
            let u = &mut self.slots[i as usize].1;
            *u = (*u + 1).min(MAX_USAGE);
            return true;
        }
        let i = if self.slots.len() < self.capacity {
            self.slots.push((block, 1));
            self.slots.len() - 1
        } else {
            // Every buffer is passed at most MAX_USAGE + 1 times.
            loop {
                let i = self.hand;
                self.hand = (self.hand + 1) % self.capacity;
                let slot = &mut self.slots[i];
                if slot.1 == 0 {
                    self.at.remove(&slot.0);
                    *slot = (block, 1);
                    break i;
                }
                slot.1 -= 1;
            }
        };
        self.at.insert(block, i as u32);
        false
    }

    /// A block the pool holds, any of them alike (None while empty).
    pub(crate) fn resident(&self, rng: &mut Rng) -> Option<u64> {
        (!self.slots.is_empty()).then(|| self.slots[rng.below(self.slots.len() as u64) as usize].0)
    }
}

/// The buffer pool the users of one run share.
#[derive(Clone)]
pub struct SharedPool(Arc<Mutex<BufferPool>>);

impl SharedPool {
    pub fn new(blocks: u64) -> Self {
        SharedPool(Arc::new(Mutex::new(BufferPool::new(blocks))))
    }

    /// A pool that also remembers the last `page_cache_blocks` blocks its warm-up
    /// missed ([`SharedPool::warm_blocks`]).
    pub fn with_page_cache(blocks: u64, page_cache_blocks: u64) -> Self {
        let mut p = BufferPool::new(blocks);
        p.remember = page_cache_blocks.min(MAX_POOL_BLOCKS * 4);
        SharedPool(Arc::new(Mutex::new(p)))
    }

    /// The blocks a page cache under the pool holds once a server has run a while,
    /// least often missed first (empty before a generator warmed the pool): read
    /// through the page cache before the run, they leave it as such a server's.
    pub fn warm_blocks(&self) -> Vec<u64> {
        let p = self.0.lock().unwrap_or_else(|e| e.into_inner());
        p.warm.clone()
    }
}

// One pool is equal to itself only: two runs never share theirs.
impl PartialEq for SharedPool {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for SharedPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = self.0.lock().unwrap_or_else(|e| e.into_inner());
        write!(f, "SharedPool({} blocks)", p.capacity)
    }
}

/// A user's reads through the shared pool: draws accesses until one misses.
pub(crate) struct PooledReads {
    pool: Arc<Mutex<BufferPool>>,
}

/// Accesses drawn at most for one read (a pool that hits more often than this
/// lets the next access through).
const MAX_DRAWS: u32 = 100_000;

impl PooledReads {
    /// The reads through `pool`, warmed first (once per pool) with its hottest
    /// blocks and accesses that read nothing, so that the run starts with the pool
    /// a server that has run a while has.
    pub(crate) fn new(pool: &SharedPool, extents: &[Extent], seed: u64) -> Self {
        let mut p = pool.0.lock().unwrap_or_else(|e| e.into_inner());
        if !p.warmed {
            let mut rng = Rng::new(seed ^ 0x706f_6f6c);
            // The pool as it stands after long: its hottest blocks, whose rank a
            // warm-up of ten times its size then refines (reaching that by draws
            // alone would take its characteristic time, millions of accesses).
            for b in crate::steady::hottest(extents, p.capacity as u64) {
                p.access(b);
            }
            for _ in 0..p.capacity.saturating_mul(10) {
                p.access(draw(extents, &mut rng));
            }
            p.warm = crate::steady::page_cache_blocks(extents, p.capacity as u64, p.remember);
            p.warmed = true;
        }
        drop(p);
        PooledReads {
            pool: pool.0.clone(),
        }
    }

    /// A block for a page write: one the pool holds, since a database writes back
    /// the dirty pages of its pool (so a page written may be read again once it has
    /// left the pool, as a storage's own caches then see).
    pub(crate) fn resident(&self, rng: &mut Rng) -> Option<u64> {
        let p = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        p.resident(rng)
    }

    /// The next block the pool misses.
    pub(crate) fn next(&self, extents: &[Extent], rng: &mut Rng) -> u64 {
        let mut p = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        let mut b = draw(extents, rng);
        for _ in 1..MAX_DRAWS {
            if !p.access(b) {
                break;
            }
            b = draw(extents, rng);
        }
        b
    }
}

/// One relation as the generator reads it.
#[derive(Clone, Debug)]
pub(crate) struct Extent {
    first: u64,
    blocks: u64,
    /// Cumulative share of the reads up to and with this relation.
    upto: f64,
    zipf: Zipf,
    /// Multiplier of the permutation that spreads ranks over the blocks (1 when
    /// clustered): coprime with `blocks`.
    spread: u64,
    /// Where the hottest rank lands (0 when clustered).
    shift: u64,
}

impl Extent {
    /// Cumulative share of the reads up to and with this relation.
    pub(crate) fn upto(&self) -> f64 {
        self.upto
    }

    /// The ranks read (its span) and the Zipf exponent over them.
    pub(crate) fn law(&self) -> (u64, f64) {
        (self.zipf.n as u64, self.zipf.s)
    }

    /// Where rank `rank` (1-based) of this relation lies in the data set.
    pub(crate) fn block_of_rank(&self, rank: u64) -> u64 {
        let r = rank.saturating_sub(1);
        self.first
            + ((u128::from(r) * u128::from(self.spread) + u128::from(self.shift))
                % u128::from(self.blocks)) as u64
    }
}

/// The relations laid out over `total` blocks.
pub(crate) fn extents(skew: &ReadSkew, total: u64) -> Vec<Extent> {
    let rels: Vec<(f64, f64, f64)> = skew
        .relations
        .iter()
        .enumerate()
        .map(|(i, &(b, r))| {
            let s = skew.exponents.get(i).copied().unwrap_or(skew.exponent);
            (b.max(0.0), r.max(0.0), s)
        })
        .filter(|&(b, _, _)| b.is_finite())
        .collect();
    let size_sum: f64 = rels.iter().map(|r| r.0).sum();
    let read_sum: f64 = rels.iter().map(|r| r.1).sum();
    if rels.is_empty() || size_sum <= 0.0 || read_sum <= 0.0 || total == 0 {
        return vec![extent(0, total.max(1), 1.0, skew.exponent, skew)];
    }
    let n = rels.len() as u64;
    let mut out = Vec::with_capacity(rels.len());
    let (mut first, mut upto, mut size_upto) = (0u64, 0.0, 0.0);
    for (i, &(b, r, s)) in rels.iter().enumerate() {
        size_upto += b;
        // Each relation ends where its cumulative size falls, leaving at least a
        // block to each after it.
        let left_after = n - 1 - i as u64;
        let end = if left_after == 0 {
            total
        } else {
            ((size_upto / size_sum * total as f64).round() as u64)
                .clamp(first + 1, total.saturating_sub(left_after).max(first + 1))
        };
        upto += r / read_sum;
        out.push(extent(first, end - first, upto, s, skew));
        first = end;
    }
    if let Some(last) = out.last_mut() {
        last.upto = 1.0;
    }
    out
}

fn extent(first: u64, blocks: u64, upto: f64, exponent: f64, skew: &ReadSkew) -> Extent {
    let clustered = skew.clustered;
    let span = if skew.span > 0.0 && skew.span < 1.0 {
        skew.span
    } else {
        1.0
    };
    let read = ((blocks as f64 * span).round() as u64).clamp(1, blocks.max(1));
    Extent {
        first,
        blocks,
        upto,
        zipf: Zipf::new(read, exponent),
        spread: if clustered {
            1
        } else {
            coprime_near(blocks, (blocks as f64 * 0.618_033_988_75) as u64)
        },
        shift: if clustered { 0 } else { blocks / 3 },
    }
}

/// A multiplier near `guess` that has no common factor with `n`.
fn coprime_near(n: u64, guess: u64) -> u64 {
    if n <= 2 {
        return 1;
    }
    let mut a = guess.clamp(1, n - 1);
    while gcd(a, n) != 1 {
        a = if a + 1 < n { a + 1 } else { 1 };
    }
    a
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The next read's block, counted from the data set's first usable block.
#[inline]
pub(crate) fn draw(extents: &[Extent], rng: &mut Rng) -> u64 {
    let u = unit(rng);
    let e = extents
        .iter()
        .find(|e| u < e.upto)
        .unwrap_or(&extents[extents.len() - 1]);
    e.block_of_rank(e.zipf.sample(rng))
}

/// Uniform in [0, 1).
#[inline]
fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Ranks 1..=n with probability proportional to rank^-s, drawn by rejection-inversion
/// (Hörmann and Derflinger, 1996): a few floating-point operations a draw, no table.
#[derive(Clone, Debug)]
pub(crate) struct Zipf {
    n: f64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    cut: f64,
}

impl Zipf {
    pub(crate) fn new(n: u64, s: f64) -> Self {
        let s = if s.is_finite() { s.max(0.0) } else { 0.0 };
        let n = n.max(1) as f64;
        let mut z = Zipf {
            n,
            s,
            h_x1: 0.0,
            h_n: 0.0,
            cut: 0.0,
        };
        z.h_x1 = z.big_h(1.5) - 1.0;
        z.h_n = z.big_h(n + 0.5);
        z.cut = 2.0 - z.big_h_inv(z.big_h(2.5) - z.h(2.0));
        z
    }

    pub(crate) fn sample(&self, rng: &mut Rng) -> u64 {
        // Bounded: the acceptance rate is above 1/2 for every n and s.
        for _ in 0..64 {
            let u = self.h_n + unit(rng) * (self.h_x1 - self.h_n);
            let x = self.big_h_inv(u);
            let k = x.round().clamp(1.0, self.n);
            if k - x <= self.cut || u >= self.big_h(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
        1
    }

    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    /// The integral of h, shifted so that it is smooth at s = 1.
    fn big_h(&self, x: f64) -> f64 {
        let l = x.ln();
        expm1_over((1.0 - self.s) * l) * l
    }

    fn big_h_inv(&self, x: f64) -> f64 {
        let t = ((1.0 - self.s) * x).max(-1.0 + 1e-12);
        (log1p_over(t) * x).exp()
    }
}

/// (e^x - 1) / x, 1 at 0.
fn expm1_over(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x / 2.0
    }
}

/// ln(1 + x) / x, 1 at 0.
fn log1p_over(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_draws_follow_the_law() {
        let mut rng = Rng::new(7);
        for s in [0.0, 0.8, 1.0, 1.1, 2.0] {
            let n = 1000u64;
            let z = Zipf::new(n, s);
            let draws = 200_000;
            let mut counts = vec![0u32; n as usize + 1];
            for _ in 0..draws {
                let k = z.sample(&mut rng);
                assert!((1..=n).contains(&k));
                counts[k as usize] += 1;
            }
            let norm: f64 = (1..=n).map(|k| (k as f64).powf(-s)).sum();
            for k in [1u64, 2, 10] {
                let expect = (k as f64).powf(-s) / norm * draws as f64;
                let got = f64::from(counts[k as usize]);
                assert!(
                    (got - expect).abs() < 5.0 * expect.sqrt() + 3.0,
                    "s {s} rank {k}: {got} draws, expected {expect:.0}"
                );
            }
        }
    }

    #[test]
    fn relations_get_their_share_of_blocks_and_reads() {
        let skew = ReadSkew {
            pool: None,
            relations: vec![(0.75, 0.25), (0.25, 0.75)],
            exponent: 0.0,
            exponents: Vec::new(),
            span: 1.0,
            clustered: true,
        };
        let e = extents(&skew, 1000);
        assert_eq!((e[0].first, e[0].blocks), (0, 750));
        assert_eq!((e[1].first, e[1].blocks), (750, 250));
        let mut rng = Rng::new(1);
        let second = (0..40_000).filter(|_| draw(&e, &mut rng) >= 750).count();
        assert!((29_000..31_000).contains(&second), "{second}");
        // A relation too small for its share of blocks still gets one.
        let tiny = ReadSkew {
            relations: vec![(1e-9, 0.5), (1.0, 0.5)],
            ..skew
        };
        let e = extents(&tiny, 100);
        assert_eq!((e[0].blocks, e[1].first, e[1].blocks), (1, 1, 99));
    }

    #[test]
    fn a_span_reads_only_that_share_of_each_relation() {
        let skew = ReadSkew {
            pool: None,
            relations: vec![(0.5, 0.5), (0.5, 0.5)],
            exponent: 0.0,
            exponents: Vec::new(),
            span: 0.1,
            clustered: false,
        };
        let e = extents(&skew, 10_000);
        let mut rng = Rng::new(5);
        let read: std::collections::HashSet<u64> =
            (0..50_000).map(|_| draw(&e, &mut rng)).collect();
        // 500 blocks of each half, uniformly: all of them seen, none else.
        assert_eq!(read.len(), 1000);
        assert_eq!(read.iter().filter(|&&b| b < 5000).count(), 500);
    }

    #[test]
    fn clustered_ranks_sit_at_the_start_and_spread_ones_do_not() {
        let mut rng = Rng::new(3);
        let hot_share = |clustered: bool, rng: &mut Rng| {
            let skew = ReadSkew {
                pool: None,
                relations: vec![(1.0, 1.0)],
                exponent: 1.2,
                exponents: Vec::new(),
                span: 1.0,
                clustered,
            };
            let e = extents(&skew, 10_000);
            (0..20_000).filter(|_| draw(&e, rng) < 100).count() as f64 / 20_000.0
        };
        assert!(hot_share(true, &mut rng) > 0.6);
        assert!(hot_share(false, &mut rng) < 0.2);
    }

    #[test]
    fn the_pool_holds_the_hot_blocks_and_reads_only_its_misses() {
        let mut p = BufferPool::new(3);
        assert!(!p.access(1) && !p.access(2) && !p.access(3));
        assert!(p.access(1) && p.access(1));
        // Full: 4 takes the buffer of a block used least (2 or 3), not 1.
        assert!(!p.access(4));
        assert!(p.access(1), "the block used most stays");
        assert_eq!(p.at.len(), 3);
        // Through a pool of 100 blocks of 10,000 read with exponent 1.1, reads are
        // the misses: about what Che's approximation gives for that pool (0.6 hit).
        let skew = ReadSkew {
            pool: Some(SharedPool::new(100)),
            relations: vec![(1.0, 1.0)],
            exponent: 1.1,
            exponents: Vec::new(),
            span: 1.0,
            clustered: true,
        };
        let e = extents(&skew, 10_000);
        let pooled = PooledReads::new(skew.pool.as_ref().unwrap(), &e, 1);
        let mut rng = Rng::new(9);
        let hot = (0..5_000)
            .filter(|_| pooled.next(&e, &mut rng) < 50)
            .count();
        let drawn = (0..5_000).filter(|_| draw(&e, &mut rng) < 50).count();
        // The 50 hottest blocks are mostly in the pool: far fewer of them are read
        // than drawn.
        assert!(
            hot * 2 < drawn,
            "{hot} reads of the hottest 50 blocks, {drawn} drawn"
        );
        // Page writes go to the blocks the pool holds, each alike.
        let held: std::collections::HashSet<u64> = {
            let p = pooled.pool.lock().unwrap();
            p.at.keys().copied().collect()
        };
        assert_eq!(held.len(), 100);
        let written: std::collections::HashSet<u64> = (0..2_000)
            .map(|_| pooled.resident(&mut rng).unwrap())
            .collect();
        assert!(written.is_subset(&held));
        assert!(written.len() > 90, "{} of the 100 written", written.len());
        assert_eq!(BufferPool::new(4).resident(&mut rng), None);
    }

    #[test]
    fn the_warm_up_leaves_the_page_cache_with_the_blocks_missed_most() {
        let pool = SharedPool::with_page_cache(100, 2_000);
        let skew = ReadSkew {
            pool: Some(pool.clone()),
            relations: vec![(1.0, 1.0)],
            exponent: 0.8,
            exponents: Vec::new(),
            span: 1.0,
            clustered: false,
        };
        let e = extents(&skew, 50_000);
        let _ = PooledReads::new(&pool, &e, 5);
        let warm = pool.warm_blocks();
        assert_eq!(warm.len(), 2_000);
        assert!(warm.iter().all(|b| *b < 50_000));
        // Distinct blocks: a block missed twice is held once.
        let distinct: std::collections::HashSet<u64> = warm.iter().copied().collect();
        assert_eq!(distinct.len(), 2_000);
        // The page cache so warmed holds the blocks the pool misses most: of its next
        // misses it serves what those blocks' rates give (0.42 here, with 4% of the
        // blocks), more than a least-recently-used cache of the misses would hold on
        // to in steady state (0.27, Che's approximation).
        let reads = PooledReads::new(&pool, &e, 7);
        let mut rng = Rng::new(8);
        let served = (0..4_000)
            .filter(|_| distinct.contains(&reads.next(&e, &mut rng)))
            .count() as f64
            / 4_000.0;
        assert!((0.36..0.48).contains(&served), "{served}");
        // Warmed once: a second user's generator adds nothing.
        let _ = PooledReads::new(&pool, &e, 6);
        assert_eq!(pool.warm_blocks(), warm);
        // Nothing remembered for a page cache unless asked.
        let plain = SharedPool::new(100);
        let _ = PooledReads::new(&plain, &e, 5);
        assert!(plain.warm_blocks().is_empty());
    }
}
