//! What a fio-style generator does, as data: its offset [`Pattern`], read/write
//! [`Mix`], the [`SpanSpec`] a user gives, its [`Limit`] and the whole [`GenSpec`]
//! stored with a run (and in its result's phases). The generator itself, which turns
//! a spec into I/Os, is `storbench_workload::generator`, which re-exports these.

use serde::{Deserialize, Serialize};

/// A spec or span that cannot be used, in words.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SpecError(pub String);

/// Offset pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    /// Each I/O starts where the previous one ended, wrapping at the end of the span.
    Sequential,
    /// Uniform over the block-aligned positions of the span.
    Random,
}

/// What the generator issues.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mix {
    /// Reads with probability `read_pct`/100, writes otherwise (0 = all writes, 100 = all reads).
    ReadWrite { read_pct: u8 },
    /// TRIM (discard) only.
    Trim,
}

/// Where on the target a generator works: a length in bytes or a share of capacity.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpanSpec {
    Bytes(u64),
    /// Percent of capacity, in (0, 100] (`pct`; `percent` in results before schema 3).
    #[serde(rename = "pct", alias = "percent")]
    Percent(f64),
}

impl SpanSpec {
    /// Parse `75%`, `1g`, `4096`, `512m` (k, m, g, t are powers of 1024, as in fio).
    pub fn parse(s: &str) -> Result<SpanSpec, SpecError> {
        let s = s.trim();
        if let Some(p) = s.strip_suffix('%') {
            let v: f64 = p
                .trim()
                .parse()
                .map_err(|_| SpecError(format!("span `{s}`: `{p}` is not a number")))?;
            if !(v > 0.0 && v <= 100.0) {
                return Err(SpecError(format!(
                    "span `{s}`: a percentage must be in (0, 100]"
                )));
            }
            return Ok(SpanSpec::Percent(v));
        }
        crate::units::parse_size("span", s)
            .map(SpanSpec::Bytes)
            .map_err(|e| SpecError(e.to_string()))
    }

    /// Span length in bytes on a target of `capacity_bytes`, rounded down to a multiple
    /// of `align_bytes`, at most the capacity.
    pub fn resolve(self, capacity_bytes: u64, align_bytes: u64) -> Result<u64, SpecError> {
        assert!(align_bytes > 0);
        let raw = match self {
            SpanSpec::Bytes(b) => b,
            SpanSpec::Percent(p) => ((capacity_bytes as f64) * p / 100.0) as u64,
        };
        if raw > capacity_bytes {
            return Err(SpecError(format!(
                "span of {raw} bytes is larger than the target ({capacity_bytes} bytes)"
            )));
        }
        let span = raw / align_bytes * align_bytes;
        if span == 0 {
            return Err(SpecError(format!(
                "span of {raw} bytes holds no block of {align_bytes} bytes"
            )));
        }
        Ok(span)
    }
}

/// When a generator stops by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    /// Never (the engine's time limit or a stop flag ends the run).
    None,
    /// After this many bytes issued (the last I/O may be shortened to hit it exactly).
    Bytes(u64),
    /// After this many I/Os.
    Ios(u64),
}

/// A generator's full description (stored with a run, so a resume rebuilds it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenSpec {
    pub pattern: Pattern,
    pub mix: Mix,
    pub block_bytes: u64,
    pub qd: u32,
    /// First byte of the span on the target.
    pub span_start_bytes: u64,
    /// Length of the span (a multiple of `block_bytes` for random I/O).
    pub span_bytes: u64,
    pub limit: Limit,
    pub seed: u64,
}

impl GenSpec {
    /// 128 KB sequential writes over the span once (the fill of the consistency and
    /// TRIM procedures and the seasoning pass).
    pub fn seq_fill(span_start_bytes: u64, span_bytes: u64, seed: u64) -> GenSpec {
        GenSpec {
            pattern: Pattern::Sequential,
            mix: Mix::ReadWrite { read_pct: 0 },
            block_bytes: 128 << 10,
            qd: 32,
            span_start_bytes,
            span_bytes,
            limit: Limit::Bytes(span_bytes),
            seed,
        }
    }

    /// 4 KB random writes at QD32 over the span, no limit of its own.
    pub fn rand_write_4k_qd32(span_start_bytes: u64, span_bytes: u64, seed: u64) -> GenSpec {
        GenSpec {
            pattern: Pattern::Random,
            mix: Mix::ReadWrite { read_pct: 0 },
            block_bytes: 4 << 10,
            qd: 32,
            span_start_bytes,
            span_bytes,
            limit: Limit::None,
            seed,
        }
    }

    /// 128 KB sequential writes over the span, `limit` decides the length.
    pub fn seq_write_128k(
        span_start_bytes: u64,
        span_bytes: u64,
        limit: Limit,
        seed: u64,
    ) -> GenSpec {
        GenSpec {
            limit,
            ..GenSpec::seq_fill(span_start_bytes, span_bytes, seed)
        }
    }

    /// TRIM the whole span once in `chunk_bytes` pieces at QD1.
    pub fn trim_span(span_start_bytes: u64, span_bytes: u64, chunk_bytes: u64) -> GenSpec {
        GenSpec {
            pattern: Pattern::Sequential,
            mix: Mix::Trim,
            block_bytes: chunk_bytes,
            qd: 1,
            span_start_bytes,
            span_bytes,
            limit: Limit::Bytes(span_bytes),
            seed: 0,
        }
    }

    /// The spec describes a generator that can run: a block, a queue depth, a span of
    /// at least one block, a read share of at most 100%.
    pub fn check(&self) -> Result<(), SpecError> {
        let bad = |m: String| Err(SpecError(m));
        if self.block_bytes == 0 {
            return bad("block size must be at least 1 byte".into());
        }
        if self.qd == 0 {
            return bad("queue depth must be at least 1".into());
        }
        if self.span_bytes < self.block_bytes {
            return bad(format!(
                "span of {} bytes is smaller than one block of {} bytes",
                self.span_bytes, self.block_bytes
            ));
        }
        if let Mix::ReadWrite { read_pct } = self.mix {
            if read_pct > 100 {
                return bad(format!("read percentage {read_pct} is over 100"));
            }
        }
        if self.span_start_bytes.checked_add(self.span_bytes).is_none() {
            return bad("span end overflows 64 bits".into());
        }
        Ok(())
    }
}
