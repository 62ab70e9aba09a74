//! Write data: fresh pseudo-random bytes for every write (incompressible, never the
//! same buffer twice), all zeros, or data that compresses to about 1/ratio.

use crate::target::DataKind;
use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Fills write buffers. One per engine loop; seeded so a run is reproducible.
pub struct DataFiller {
    rng: Xoshiro256PlusPlus,
}

/// Compressible data is built in chunks of this size: the first `CHUNK/ratio` bytes of
/// each chunk are random, the rest zero, so any compressor with a window of at least a
/// chunk gets about `ratio`.
const COMPRESS_CHUNK_BYTES: usize = 4096;

impl DataFiller {
    pub fn new(seed: u64) -> DataFiller {
        DataFiller {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5354_4f52_4245_4e43),
        }
    }

    /// Fill `buf` per `kind`.
    pub fn fill(&mut self, kind: DataKind, buf: &mut [u8]) {
        match kind {
            DataKind::Random => self.fill_random(buf),
            DataKind::Zeros => buf.fill(0),
            DataKind::Compressible(ratio) => {
                assert!(ratio >= 1.0, "compressible ratio {ratio} below 1");
                let keep = ((COMPRESS_CHUNK_BYTES as f64 / ratio).ceil() as usize)
                    .clamp(1, COMPRESS_CHUNK_BYTES);
                for chunk in buf.chunks_mut(COMPRESS_CHUNK_BYTES) {
                    let k = keep.min(chunk.len());
                    self.fill_random(&mut chunk[..k]);
                    chunk[k..].fill(0);
                }
            }
        }
    }

    /// Fresh random bytes, 8 at a time (xoshiro256++ does ~1 ns per word).
    pub fn fill_random(&mut self, buf: &mut [u8]) {
        let mut chunks = buf.chunks_exact_mut(8);
        for c in &mut chunks {
            c.copy_from_slice(&self.rng.next_u64().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            let w = self.rng.next_u64().to_le_bytes();
            let n = rest.len();
            rest.copy_from_slice(&w[..n]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_fills_differ_every_time() {
        let mut f = DataFiller::new(1);
        let mut a = vec![0u8; 4096];
        let mut b = vec![0u8; 4096];
        f.fill(DataKind::Random, &mut a);
        f.fill(DataKind::Random, &mut b);
        assert_ne!(a, b);
        // Roughly uniform bytes: no byte value more than 3x its expected count.
        let mut counts = [0u32; 256];
        for &x in a.iter().chain(b.iter()) {
            counts[x as usize] += 1;
        }
        assert!(counts.iter().all(|&c| c < 96), "{counts:?}");
        // Odd lengths fill every byte.
        let mut odd = vec![0u8; 13];
        f.fill(DataKind::Random, &mut odd);
        assert!(odd[8..].iter().any(|&x| x != 0));
    }

    #[test]
    fn zeros_and_compressible() {
        let mut f = DataFiller::new(2);
        let mut buf = vec![0xffu8; 8192];
        f.fill(DataKind::Zeros, &mut buf);
        assert!(buf.iter().all(|&b| b == 0));
        f.fill(DataKind::Compressible(4.0), &mut buf);
        for chunk in buf.chunks(4096) {
            assert!(chunk[1024..].iter().all(|&b| b == 0));
            assert!(chunk[..1024].iter().filter(|&&b| b != 0).count() > 1000);
        }
    }
}
