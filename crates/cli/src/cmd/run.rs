//! `storbench run`: a generator on a target, fio-style. Printing only: the options and
//! the run are the suite's (`storbench_suite::run`), a procedure of one phase on its
//! runner, as `replay` and the drive procedures are. Also holds what `run` and
//! `replay` print.

use super::drive::{drive, failed_ios, print_footer, Driven};
use super::out::{outln, StdoutError};
use super::UserError;
use std::path::Path;
use storbench_engine::TargetError;
use storbench_report::RunResult;
use storbench_suite::run::{RunArgs, RunConfig};
use storbench_suite::PhaseRecord;

pub(crate) fn user(message: impl Into<String>, hint: Option<&str>) -> anyhow::Error {
    anyhow::Error::new(UserError {
        message: message.into(),
        hint: hint.map(str::to_string),
    })
}

/// Typed errors of a target become user errors where the user can fix them.
pub(crate) fn target_err(e: TargetError) -> anyhow::Error {
    match e {
        TargetError::Refused { message, hint } => user(message, Some(&hint)),
        TargetError::Invalid(m) => user(m, None),
        // A path that does not exist or may not be opened is the user's to fix.
        TargetError::Io { context, source } if source.kind() == std::io::ErrorKind::NotFound => {
            user(
                format!("{context}: {source}"),
                Some("check the path: storbench creates a target file, not its directory"),
            )
        }
        TargetError::Io { context, source }
            if source.kind() == std::io::ErrorKind::PermissionDenied =>
        {
            user(
                format!("{context}: {source}"),
                Some("block devices need root; a file target needs write permission"),
            )
        }
        other => anyhow::Error::new(other),
    }
}

/// What `run` and `replay` print: the phase's figures, then the common footer.
pub(crate) fn print_summary<C, S>(r: &RunResult<C, S>, dir: &Path) -> Result<(), StdoutError> {
    let Some(p) = r.phases.first() else {
        return Ok(());
    };
    print_phase(r, p)?;
    let ios = dir.join(storbench_report::IOS_FILE);
    if ios.is_file() {
        outln!("every I/O: {}", ios.display())?;
    }
    print_footer(dir, r)
}

fn print_phase<C, S>(r: &RunResult<C, S>, p: &PhaseRecord) -> Result<(), StdoutError> {
    let m = &p.metrics;
    outln!(
        "{} on {} ({}, {}): {:.2} s",
        r.procedure,
        r.target.name,
        kind_str(&r.target),
        r.target.backend,
        m.elapsed_ns as f64 / 1e9,
    )?;
    outln!(
        "  I/Os: {} read, {} write, {} trim, {} flush, {} errors",
        m.read_ios,
        m.write_ios,
        m.trim_ios,
        m.flush_ios,
        m.errors
    )?;
    outln!(
        "  IOPS {:.0}   data rate {:.1} MB/s (read {:.1}, write {:.1})   busy {:.2} s   avg QD {:.1}",
        m.iops,
        m.data_rate_mb_per_s,
        m.read_rate_mb_per_s,
        m.write_rate_mb_per_s,
        m.busy_ns as f64 / 1e9,
        m.qd.mean_over_busy
    )?;
    let s = &m.service;
    if s.count > 0 {
        outln!(
            "  service time µs: mean {:.1}  sd {:.1}  min {:.1}  p50 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}",
            s.mean_us, s.stddev_us, s.min_us, s.p50_us, s.p99_us, s.p99_9_us, s.max_us
        )?;
    }
    let Some(f) = &p.fidelity else {
        return Ok(());
    };
    match f.mode.as_str() {
        "timed" => {
            if let (Some(p50), Some(p99)) = (f.issue_error_p50_ns, f.issue_error_p99_ns) {
                outln!(
                    "  timed fidelity: issue error p50 {:.1} µs, p99 {:.1} µs, drift {:.4}%",
                    p50 as f64 / 1e3,
                    p99 as f64 / 1e3,
                    f.drift_pct.unwrap_or(0.0)
                )?;
            }
        }
        _ => {
            if let (Some(t), Some(rq)) = (f.trace_avg_qd, f.replayed_avg_qd) {
                outln!("  queue depth: trace avg {t:.2}, replayed avg {rq:.2}")?;
            }
        }
    }
    Ok(())
}

fn kind_str(t: &storbench_engine::TargetInfo) -> &'static str {
    match t.kind {
        storbench_engine::TargetKind::File => "file",
        storbench_engine::TargetKind::BlockDevice => "block device",
        storbench_engine::TargetKind::Sim => "simulated",
        storbench_engine::TargetKind::Test => "test",
    }
}

pub fn run(args: Driven<RunArgs>) -> anyhow::Result<()> {
    let (dir, r) = drive::<RunConfig>(&args)?;
    // The run's own status first: a closed stdout does not hide failed I/Os.
    let printed = print_summary(&r, &dir);
    failed_ios(&r, &dir)?;
    Ok(printed?)
}
