//! Procedure checks on quantities (block size, queue depth, phase length, span). The
//! parsing rules themselves live in `storbench_core::units`, the one units module,
//! re-exported here for the procedures' callers.

pub use storbench_workload::units::{
    fmt_bytes, parse_duration, parse_duration_ns, parse_fraction, parse_size, QuantityError,
};

/// The byte span `fraction` of `capacity_bytes` covers, rounded down to `align_bytes`
/// (at least one aligned unit).
pub fn span_bytes(capacity_bytes: u64, fraction: f64, align_bytes: u64) -> u64 {
    assert!(align_bytes > 0 && fraction > 0.0 && fraction <= 1.0);
    let raw = (capacity_bytes as f64 * fraction).floor() as u64;
    let aligned = raw.min(capacity_bytes) / align_bytes * align_bytes;
    aligned.max(align_bytes.min(capacity_bytes / align_bytes * align_bytes))
}

/// Largest block size a procedure takes (as `run --bs`).
pub const MAX_BLOCK_BYTES: u64 = 64 << 20;

/// A quantity out of the bounds a procedure takes; `field` names the flag (or what the
/// quantity is) as the user gave it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BoundError {
    #[error("{field} {size}: must be between 1 byte and 64m")]
    BlockSize { field: String, size: String },
    #[error("{field} {size}: not a multiple of the target's logical block size ({logical_block_bytes} bytes)")]
    Unaligned {
        field: String,
        size: String,
        logical_block_bytes: u64,
    },
    #[error("{field} {qd}: must be between 1 and 4096")]
    Qd { field: String, qd: u32 },
    #[error("{field} 0: the phase would do no work; give a duration like 30s")]
    NoTime { field: String },
}

impl From<BoundError> for crate::SuiteError {
    fn from(e: BoundError) -> Self {
        crate::SuiteError::Invalid(e.to_string())
    }
}

/// A block size as `run` checks it: more than 0, at most 64 MiB, and a multiple of the
/// target's logical block size (an unaligned size would be widened on every I/O while
/// the result still named the size asked for).
pub fn check_block(field: &str, bytes: u64, logical_block_bytes: u32) -> Result<(), BoundError> {
    let lbs = u64::from(logical_block_bytes.max(1));
    if bytes == 0 || bytes > MAX_BLOCK_BYTES {
        return Err(BoundError::BlockSize {
            field: field.into(),
            size: fmt_bytes(bytes),
        });
    }
    if !bytes.is_multiple_of(lbs) {
        return Err(BoundError::Unaligned {
            field: field.into(),
            size: fmt_bytes(bytes),
            logical_block_bytes: lbs,
        });
    }
    Ok(())
}

/// A queue depth as `run` checks it: 1 to 4096.
pub fn check_qd(field: &str, qd: u32) -> Result<(), BoundError> {
    if qd == 0 || qd > 4096 {
        return Err(BoundError::Qd {
            field: field.into(),
            qd,
        });
    }
    Ok(())
}

/// Most jobs (`--jobs`) a phase runs at once.
pub const MAX_JOBS: u32 = 256;

/// A number of jobs outside 1 to [`MAX_JOBS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("--jobs {0}: must be between 1 and {MAX_JOBS}")]
pub struct JobsOutOfRange(pub u32);

/// A number of jobs: 1 to [`MAX_JOBS`].
pub fn check_jobs(jobs: u32) -> Result<(), JobsOutOfRange> {
    if jobs == 0 || jobs > MAX_JOBS {
        return Err(JobsOutOfRange(jobs));
    }
    Ok(())
}

/// A phase length that must do some work.
pub fn check_duration(field: &str, ns: u64) -> Result<(), BoundError> {
    if ns == 0 {
        return Err(BoundError::NoTime {
            field: field.into(),
        });
    }
    Ok(())
}

/// The name `--data` takes for a kind of written data (`random`, `zeros`,
/// `compressible:R`), as results carry it.
pub fn data_name(d: storbench_engine::DataKind) -> String {
    match d {
        storbench_engine::DataKind::Random => "random".into(),
        storbench_engine::DataKind::Zeros => "zeros".into(),
        storbench_engine::DataKind::Compressible(r) => format!("compressible:{r}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_from_one_to_max_jobs() {
        assert_eq!(check_jobs(1), Ok(()));
        assert_eq!(check_jobs(MAX_JOBS), Ok(()));
        assert_eq!(check_jobs(0), Err(JobsOutOfRange(0)));
        assert_eq!(
            check_jobs(MAX_JOBS + 1).unwrap_err().to_string(),
            "--jobs 257: must be between 1 and 256"
        );
    }

    #[test]
    fn fractions_and_spans() {
        assert_eq!(parse_fraction("span", "75%").unwrap(), 0.75);
        assert_eq!(parse_fraction("span", "1").unwrap(), 1.0);
        assert!(parse_fraction("span", "0%").is_err());
        assert!(parse_fraction("span", "120%").is_err());
        assert_eq!(span_bytes(1 << 30, 0.75, 4096), 805_306_368);
        assert_eq!(span_bytes(10_000, 1.0, 4096), 8192);
        assert_eq!(fmt_bytes(4096), "4 KiB");
        assert_eq!(fmt_bytes(1536 << 20), "1.5 GiB");
    }
}
