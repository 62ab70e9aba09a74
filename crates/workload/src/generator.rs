//! fio-style generators: sequential or random offsets, a read/write mix (or TRIM),
//! one block size, a span of the target, a byte or I/O-count limit. Seeded, so the
//! same spec gives the same I/O stream.
//!
//! A generator reports its queue depth as `trace_qd`, so `queue-depth` pacing keeps
//! `qd` I/Os in flight; it has no issue times (`at_ns` is `None`). Time limits are the
//! engine's (`RunOptions::time_limit_ns`): a generator without a byte or count limit
//! never ends by itself.

use crate::source::{NextIo, Source, SourceError};
use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
pub use storbench_core::generator::{GenSpec, Limit, Mix, Pattern, SpanSpec, SpecError};
use storbench_trace::Op;

/// A generator: a [`Source`] built from a [`GenSpec`].
pub struct Generator {
    spec: GenSpec,
    rng: Xoshiro256PlusPlus,
    /// Next sequential position, relative to the span start.
    seq_pos_bytes: u64,
    /// Number of whole blocks in the span (random positions).
    blocks: u64,
    issued_ios: u64,
    issued_bytes: u64,
}

impl Generator {
    pub fn new(spec: GenSpec) -> Result<Generator, SourceError> {
        spec.check().map_err(|e| SourceError::Invalid(e.0))?;
        let blocks = spec.span_bytes / spec.block_bytes;
        assert!(blocks >= 1);
        Ok(Generator {
            rng: Xoshiro256PlusPlus::seed_from_u64(spec.seed),
            spec,
            seq_pos_bytes: 0,
            blocks,
            issued_ios: 0,
            issued_bytes: 0,
        })
    }

    pub fn spec(&self) -> &GenSpec {
        &self.spec
    }

    /// Uniform integer in [0, n) (Lemire's multiply-shift; the bias is below 2^-64 * n).
    #[inline]
    fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0);
        ((self.rng.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

impl Source for Generator {
    fn next_io(&mut self) -> Option<Result<NextIo, SourceError>> {
        let mut len = self.spec.block_bytes;
        match self.spec.limit {
            Limit::None => {}
            Limit::Ios(n) => {
                if self.issued_ios >= n {
                    return None;
                }
            }
            Limit::Bytes(n) => {
                if self.issued_bytes >= n {
                    return None;
                }
                len = len.min(n - self.issued_bytes);
            }
        }
        let rel = match self.spec.pattern {
            Pattern::Sequential => {
                if self.seq_pos_bytes + len > self.spec.span_bytes {
                    self.seq_pos_bytes = 0;
                }
                let p = self.seq_pos_bytes;
                self.seq_pos_bytes += len;
                p
            }
            Pattern::Random => self.below(self.blocks) * self.spec.block_bytes,
        };
        let op = match self.spec.mix {
            Mix::Trim => Op::Trim,
            Mix::ReadWrite { read_pct: 0 } => Op::Write,
            Mix::ReadWrite { read_pct: 100 } => Op::Read,
            Mix::ReadWrite { read_pct } => {
                if self.below(100) < read_pct as u64 {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        };
        assert!(rel + len <= self.spec.span_bytes);
        self.issued_ios += 1;
        self.issued_bytes += len;
        Some(Ok(NextIo {
            op,
            offset_bytes: self.spec.span_start_bytes + rel,
            len_bytes: len,
            at_ns: None,
            trace_qd: Some(self.spec.qd),
        }))
    }

    fn total_ios(&self) -> Option<u64> {
        match self.spec.limit {
            Limit::Ios(n) => Some(n),
            Limit::Bytes(n) => Some(n.div_ceil(self.spec.block_bytes)),
            Limit::None => None,
        }
    }

    fn total_bytes(&self) -> Option<u64> {
        match self.spec.limit {
            Limit::Bytes(n) => Some(n),
            Limit::Ios(n) => Some(n.saturating_mul(self.spec.block_bytes)),
            Limit::None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(g: &mut Generator, max: usize) -> Vec<NextIo> {
        let mut v = Vec::new();
        while let Some(io) = g.next_io() {
            v.push(io.unwrap());
            if v.len() == max {
                break;
            }
        }
        v
    }

    #[test]
    fn parses_spans() {
        assert_eq!(SpanSpec::parse("75%").unwrap(), SpanSpec::Percent(75.0));
        assert!(SpanSpec::parse("0%").is_err());
        assert!(SpanSpec::parse("101%").is_err());
        assert_eq!(SpanSpec::parse("2g").unwrap(), SpanSpec::Bytes(2 << 30));
    }

    #[test]
    fn span_resolves_to_block_multiple() {
        let cap = 1_000_000_000u64;
        let s = SpanSpec::Percent(75.0).resolve(cap, 4096).unwrap();
        assert_eq!(s % 4096, 0);
        assert!(s <= 750_000_000 && s > 750_000_000 - 4096);
        assert!(SpanSpec::Bytes(cap + 1).resolve(cap, 4096).is_err());
        assert!(SpanSpec::Bytes(100).resolve(cap, 4096).is_err());
    }

    #[test]
    fn sequential_fill_covers_span_exactly_once() {
        let span = 10 * (128 << 10) + 4096; // last I/O is short
        let mut g = Generator::new(GenSpec::seq_fill(1 << 20, span, 1)).unwrap();
        assert_eq!(g.total_ios(), Some(11));
        let ios = collect(&mut g, 1000);
        assert_eq!(ios.len(), 11);
        let mut expect = 1u64 << 20;
        for io in &ios {
            assert_eq!(io.op, Op::Write);
            assert_eq!(io.offset_bytes, expect);
            assert_eq!(io.trace_qd, Some(32));
            assert_eq!(io.at_ns, None);
            expect += io.len_bytes;
        }
        assert_eq!(expect, (1 << 20) + span);
        assert_eq!(ios.last().unwrap().len_bytes, 4096);
    }

    #[test]
    fn sequential_wraps_at_span_end() {
        let spec = GenSpec {
            limit: Limit::Ios(5),
            ..GenSpec::seq_write_128k(0, 2 * (128 << 10), Limit::None, 0)
        };
        let ios = collect(&mut Generator::new(spec).unwrap(), 100);
        let offs: Vec<u64> = ios.iter().map(|i| i.offset_bytes >> 17).collect();
        assert_eq!(offs, vec![0, 1, 0, 1, 0]);
    }

    #[test]
    fn random_is_aligned_in_span_seeded_and_covers() {
        let span = 64 * 4096;
        let spec = GenSpec {
            limit: Limit::Ios(20_000),
            ..GenSpec::rand_write_4k_qd32(8192, span, 42)
        };
        let a = collect(&mut Generator::new(spec.clone()).unwrap(), usize::MAX);
        let b = collect(&mut Generator::new(spec.clone()).unwrap(), usize::MAX);
        assert_eq!(a, b, "same seed, same stream");
        let c = collect(
            &mut Generator::new(GenSpec { seed: 43, ..spec }).unwrap(),
            usize::MAX,
        );
        assert_ne!(a, c);
        let mut hits = [0u32; 64];
        for io in &a {
            assert_eq!(io.op, Op::Write);
            assert_eq!(io.len_bytes, 4096);
            assert_eq!(io.offset_bytes % 4096, 0);
            assert!(io.offset_bytes >= 8192 && io.offset_bytes + 4096 <= 8192 + span);
            hits[((io.offset_bytes - 8192) / 4096) as usize] += 1;
        }
        // 20000 draws over 64 blocks: expect 312.5 each; every block within +-40%.
        for h in hits {
            assert!((187..=438).contains(&h), "non-uniform: {hits:?}");
        }
    }

    #[test]
    fn read_write_mix_follows_percentage() {
        let spec = GenSpec {
            mix: Mix::ReadWrite { read_pct: 70 },
            limit: Limit::Ios(10_000),
            ..GenSpec::rand_write_4k_qd32(0, 1 << 30, 7)
        };
        let ios = collect(&mut Generator::new(spec).unwrap(), usize::MAX);
        let reads = ios.iter().filter(|i| i.op == Op::Read).count();
        assert!((6700..7300).contains(&reads), "reads {reads}");
    }

    #[test]
    fn trim_span_and_byte_limit() {
        let mut g = Generator::new(GenSpec::trim_span(0, 5 << 20, 2 << 20)).unwrap();
        let ios = collect(&mut g, 100);
        assert_eq!(ios.len(), 3);
        assert!(ios
            .iter()
            .all(|i| i.op == Op::Trim && i.trace_qd == Some(1)));
        assert_eq!(ios.iter().map(|i| i.len_bytes).sum::<u64>(), 5 << 20);
    }

    #[test]
    fn invalid_specs_are_refused() {
        let base = GenSpec::rand_write_4k_qd32(0, 1 << 20, 0);
        assert!(Generator::new(GenSpec {
            qd: 0,
            ..base.clone()
        })
        .is_err());
        assert!(Generator::new(GenSpec {
            block_bytes: 0,
            ..base.clone()
        })
        .is_err());
        assert!(Generator::new(GenSpec {
            span_bytes: 100,
            ..base.clone()
        })
        .is_err());
        assert!(Generator::new(GenSpec {
            mix: Mix::ReadWrite { read_pct: 101 },
            ..base
        })
        .is_err());
    }
}
