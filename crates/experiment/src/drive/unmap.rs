//! How many of a read buffer's pages a user takes out of the page tables after each
//! read, so that the next read into it faults them in as a database backend's does
//! (see [`dbio_workload::WorkloadConfig::unmapped_read_permille`]).

const PAGE: u32 = 4096;

/// Draws, per read, how many of its buffer's pages go unmapped: each page with the
/// configured probability, from a generator of its own (the I/O stream's is not
/// touched, so the same seed still gives the same I/O).
pub(super) struct Unmapper {
    permille: u32,
    state: u64,
}

impl Unmapper {
    pub(super) fn new(permille: u32, seed: u64, user: u64) -> Self {
        Unmapper {
            permille: permille.min(1000),
            // Any non-zero state; splitmix-style spreading of seed and user.
            state: (seed ^ user.wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1,
        }
    }

    /// Pages of a `len`-byte read's buffer to unmap (from its start).
    pub(super) fn pages(&mut self, len: u32) -> usize {
        if self.permille == 0 {
            return 0;
        }
        let pages = len.div_ceil(PAGE);
        if self.permille >= 1000 {
            return pages as usize;
        }
        (0..pages).filter(|_| self.draw() < self.permille).count()
    }

    /// A number in 0..1000 (xorshift64).
    fn draw(&mut self) -> u32 {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        ((x >> 11) % 1000) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_all_or_the_share_asked() {
        assert_eq!(Unmapper::new(0, 1, 0).pages(8192), 0);
        assert_eq!(Unmapper::new(1000, 1, 0).pages(8192), 2);
        assert_eq!(Unmapper::new(1000, 1, 0).pages(5000), 2);
        let mut u = Unmapper::new(750, 7, 3);
        let n: usize = (0..20_000).map(|_| u.pages(8192)).sum();
        let share = n as f64 / 40_000.0;
        assert!((0.73..0.77).contains(&share), "{share}");
    }
}
