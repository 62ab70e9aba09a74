//! The tests' pseudo-random numbers: xorshift64 (13, 7, 17), small and reproducible
//! from a seed, so a failing case can be replayed. Tests only.

/// Marsaglia's xorshift64; the state must not be zero.
pub(crate) struct XorShift(pub(crate) u64);

impl XorShift {
    pub(crate) fn next(&mut self) -> u64 {
        debug_assert!(self.0 != 0, "xorshift state 0 stays 0");
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number below `n` (slightly biased; fine for test data).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
