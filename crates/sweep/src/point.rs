//! One point through the procedures the CLI runs: the sweep's only door into
//! `storbench-suite`. Everything that knows a procedure's configuration type, its
//! options or its summary lives here, so a change of the suite's API touches this
//! module alone.
//!
//! A point's options are the command's options, spelled as on the command line
//! (`time = "600s"`, `precondition-passes = 2`), parsed through the command's own clap
//! `Args` (`Procedure::Args`) and made a configuration by its `Procedure::configure`:
//! the same configuration `storbench consistency ...` builds, the same bounds, and the
//! same error for a bad value. The row it returns holds only figures the simulated
//! drive decides (no wall time, no host name, no path), so a point gives the same row
//! on any machine.
//!
//! Figures in the row (null where the procedure has none):
//! - every procedure: `host_write_bytes`, `nand_write_bytes` and `wa` (NAND writes ÷
//!   host writes over the whole procedure, fills and seasoning included: the suite
//!   reports no per-phase flash counters yet);
//! - consistency: `steady_iops` (average over the scored last seconds), its std dev,
//!   min and avg ÷ std dev, `steady_state_reached`, `steady_state_at_s`,
//!   `precondition_mb_per_s`;
//! - bench: `iops` (reads and writes per busy second), data rates, service time mean,
//!   p99 and p99.9, busy seconds, read and write counts, the replayed average QD;
//! - trim-check: the clean / dirty / after-TRIM table;
//! - season: the sequential pass and the image restore rates;
//! - twin-measure: the twin's measurement plan's figures (`storbench_twin::figures`),
//!   one column each, so a sweep over hidden drives shows what the plan can tell apart.

use crate::plan::{RunSpec, WorkloadSpec};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use storbench_report::sweep::{Cell, Kind};
use storbench_report::RunResult;
use storbench_suite::args::{option_names, parse_options, switch_names, TargetChoice};
use storbench_suite::bench::{
    configure_with, BenchArgs, BenchConfig, BenchSummary, Workload, QUICK_SCALE,
};
use storbench_suite::consistency::{ConsistencyConfig, ConsistencySummary};
use storbench_suite::season::{SeasonConfig, SeasonSummary};
use storbench_suite::trimcheck::{TrimCheckConfig, TrimTable};
use storbench_suite::twin::TwinMeasureConfig;
use storbench_suite::units::parse_size;
use storbench_suite::{
    execute, read_result, Configured, Control, Procedure, Start, SuiteError, SuiteResult,
};
use storbench_twin::figures::FIGURES;
use storbench_twin::Measurement;

/// The procedures a plan may name.
pub const PROCEDURES: [&str; 5] = [
    "consistency",
    "trim-check",
    "season",
    "bench",
    "twin-measure",
];

/// Whether a procedure replays a workload (and so pairs with the plan's workloads).
pub fn takes_workload(procedure: &str) -> bool {
    procedure == "bench"
}

/// The options a plan may give a procedure: its command's own (`storbench consistency
/// --help`), aliases included, without `seed` (the plan's `seeds` decide it) and a
/// workload's `scale`.
pub fn options(procedure: &str) -> Vec<String> {
    match procedure {
        "consistency" => names_of::<ConsistencyConfig>(),
        "trim-check" => names_of::<TrimCheckConfig>(),
        "season" => names_of::<SeasonConfig>(),
        "bench" => names_of::<BenchConfig>(),
        "twin-measure" => names_of::<TwinMeasureConfig>(),
        _ => Vec::new(),
    }
}

const COMMON: [(&str, Kind); 3] = [
    ("host_write_bytes", Kind::Int),
    ("nand_write_bytes", Kind::Int),
    ("wa", Kind::Float),
];

/// The headline figures of a procedure's row, in column order (after the common ones).
pub fn figures(procedure: &str) -> Vec<(&'static str, Kind)> {
    let own: &[(&str, Kind)] = match procedure {
        "consistency" => &[
            ("steady_iops", Kind::Float),
            ("steady_iops_stddev", Kind::Float),
            ("steady_iops_min", Kind::Float),
            ("steady_avg_over_stddev", Kind::Float),
            ("steady_state_reached", Kind::Bool),
            ("steady_state_at_s", Kind::Int),
            ("precondition_mb_per_s", Kind::Float),
        ],
        "bench" => &[
            ("iops", Kind::Float),
            ("data_rate_mb_per_s", Kind::Float),
            ("read_mb_per_s", Kind::Float),
            ("write_mb_per_s", Kind::Float),
            ("latency_mean_us", Kind::Float),
            ("latency_p99_us", Kind::Float),
            ("latency_p99_9_us", Kind::Float),
            ("busy_s", Kind::Float),
            ("reads", Kind::Int),
            ("writes", Kind::Int),
            ("replayed_avg_qd", Kind::Float),
        ],
        "trim-check" => &[
            ("clean_mb_per_s", Kind::Float),
            ("dirty_mb_per_s", Kind::Float),
            ("after_trim_mb_per_s", Kind::Float),
            ("dirty_of_clean_pct", Kind::Float),
            ("after_trim_of_clean_pct", Kind::Float),
        ],
        "season" => &[
            ("seq_pass_mb_per_s", Kind::Float),
            ("restore_mb_per_s", Kind::Float),
        ],
        "twin-measure" => {
            return COMMON
                .iter()
                .copied()
                .chain(FIGURES.iter().map(|f| (f.name, Kind::Float)))
                .collect()
        }
        _ => &[],
    };
    COMMON.iter().chain(own).copied().collect()
}

/// The name a figure had in rows recorded before result schema 3 put every unit last.
pub fn old_figure_name(name: &str) -> Option<&'static str> {
    [
        ("latency_mean_us", "latency_us_mean"),
        ("latency_p99_us", "latency_us_p99"),
        ("latency_p99_9_us", "latency_us_p99_9"),
        ("dirty_of_clean_pct", "dirty_pct_of_clean"),
        ("after_trim_of_clean_pct", "after_trim_pct_of_clean"),
    ]
    .into_iter()
    .find(|(new, _)| *new == name)
    .map(|(_, old)| old)
}

/// A point's row: figure name and value.
pub type Row = Vec<(String, Cell)>;

#[derive(Debug, thiserror::Error)]
pub enum PointError {
    /// Stopped at a checkpoint (Ctrl-C): everything measured is saved; run again to continue.
    #[error("interrupted in phase {phase}")]
    Interrupted { phase: String },
    #[error("{0}")]
    Failed(String),
    #[error(transparent)]
    Spec(#[from] PointSpecError),
}

/// Why a point's options, or the trace its generator writes, cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum PointSpecError {
    #[error("`{key} = {value}`: --{key} is a switch; give true or false")]
    NotBool { key: String, value: String },
    /// The procedure's command refused the options: its own message (clap's, or its
    /// configuration's), as the command line prints it.
    #[error("{0}")]
    Refused(String),
    #[error("bench needs a workload")]
    NoWorkload,
    #[error("a generator needs ios or size")]
    NoLimit,
    #[error("unknown procedure {0}")]
    UnknownProcedure(String),
    #[error(transparent)]
    Quantity(#[from] storbench_suite::units::QuantityError),
    /// The generator's span, target or I/O stream refused (their own message).
    #[error("{0}")]
    Generator(String),
    #[error("{}: {error}", path.display())]
    Io {
        path: std::path::PathBuf,
        error: std::io::Error,
    },
}

fn refused(e: impl std::fmt::Display) -> PointSpecError {
    PointSpecError::Refused(e.to_string())
}

fn generator(e: impl std::fmt::Display) -> PointSpecError {
    PointSpecError::Generator(e.to_string())
}

// ---------------------------------------------------------------- options

/// Option names a plan may not give: the plan's `seeds` decide every point's seed, and
/// a workload's `scale` is the workload's; `resume` is the command line's alone.
const PLAN_OWNS: [&str; 3] = ["seed", "scale", "resume"];

/// The option names `P`'s command takes that a plan may give (aliases included).
fn names_of<P: Procedure>() -> Vec<String> {
    let mut names = option_names::<P::Args>();
    names.retain(|n| !PLAN_OWNS.contains(&n.as_str()));
    names
}

/// The command line of a point: the plan's options as `--name=value` (a switch,
/// `quick = true`, as `--quick`; `false` leaves it out), then `extra`.
fn argv<P: Procedure>(run: &RunSpec, extra: Vec<String>) -> Result<Vec<String>, PointSpecError> {
    let switches = switch_names::<P::Args>();
    let mut out = Vec::new();
    for (key, value) in &run.options {
        let switch = switches.contains(key);
        match (switch, value) {
            (true, Cell::Bool(true)) => out.push(format!("--{key}")),
            (true, Cell::Bool(false)) => {}
            (true, other) => {
                return Err(PointSpecError::NotBool {
                    key: key.clone(),
                    value: other.text(),
                })
            }
            (false, v) => out.push(format!("--{key}={}", v.text())),
        }
    }
    out.extend(extra);
    Ok(out)
}

/// `P`'s configuration for the point: its options parsed through the command's own
/// `Args` (clap: the same names, values, units and bounds, and the same errors), then
/// made a configuration as the command makes it, on the point's simulated drive.
fn configured<P: Procedure>(
    run: &RunSpec,
    extra: Vec<String>,
) -> Result<Configured<P>, PointSpecError> {
    let args: P::Args = parse_options(P::NAME, &argv::<P>(run, extra)?).map_err(refused)?;
    P::configure(&args, &TargetChoice::sim(&run.target)).map_err(refused)
}

fn seed(run: &RunSpec) -> String {
    format!("--seed={}", run.seed)
}

fn consistency(run: &RunSpec) -> Result<ConsistencyConfig, PointSpecError> {
    configured(run, vec![seed(run)]).map(|c| c.config)
}

fn trim_check(run: &RunSpec) -> Result<TrimCheckConfig, PointSpecError> {
    configured(run, vec![seed(run)]).map(|c| c.config)
}

fn season(run: &RunSpec) -> Result<SeasonConfig, PointSpecError> {
    configured(run, vec![seed(run)]).map(|c| c.config)
}

/// The twin's measurement plan takes no seed: its phases' seeds are the plan's own, so
/// the plan's `seeds` give the same row.
fn twin_measure(run: &RunSpec) -> Result<TwinMeasureConfig, PointSpecError> {
    configured(run, Vec::new()).map(|c| c.config)
}

/// The generated trace of a generator workload, in the point's directory.
pub const GENERATOR_TRACE: &str = "generator.parquet";

fn bench(run: &RunSpec, dir: &Path) -> Result<BenchConfig, PointSpecError> {
    let mut extra = vec![seed(run)];
    // The trace a point replays: the plan checked a trace workload's file when it
    // read it, and a generator's is written when the point runs, so neither is opened
    // per point here (a plan of many points checks in moments); the run reads the trace
    // whole before its first phase.
    let trace = match &run.workload {
        Some(WorkloadSpec::Profile { name, scale }) => {
            extra.push(name.clone());
            extra.extend(scale.map(|s| format!("--scale={s}")));
            None
        }
        Some(WorkloadSpec::Trace { path }) => Some(path.clone()),
        Some(WorkloadSpec::Generator { qd, .. }) => {
            // The generator's queue depth, unless the plan's `qd` says otherwise.
            if !run.options.contains_key("qd") {
                extra.push(format!("--qd={qd}"));
            }
            Some(dir.join(GENERATOR_TRACE))
        }
        None => return Err(PointSpecError::NoWorkload),
    };
    let Some(path) = trace else {
        return configured(run, extra).map(|c| c.config);
    };
    extra.push(path.display().to_string());
    let args: BenchArgs =
        parse_options(BenchConfig::NAME, &argv::<BenchConfig>(run, extra)?).map_err(refused)?;
    configure_with(
        &args,
        Workload::Trace { path },
        &TargetChoice::sim(&run.target),
    )
    .map(|c| c.config)
    .map_err(refused)
}

/// Check a point's options without running it (the plan checks every point first).
pub fn check(run: &RunSpec) -> Result<(), PointSpecError> {
    match run.procedure.as_str() {
        "consistency" => consistency(run).map(drop),
        "trim-check" => trim_check(run).map(drop),
        "season" => season(run).map(drop),
        "twin-measure" => twin_measure(run).map(drop),
        "bench" => {
            if let Some(WorkloadSpec::Generator { bs, span, size, .. }) = &run.workload {
                parse_size("bs", bs)?;
                storbench_workload::generator::SpanSpec::parse(span)
                    .map_err(|e| PointSpecError::Generator(e.0))?;
                if let Some(s) = size {
                    parse_size("size", s)?;
                }
            }
            bench(run, Path::new(".")).map(drop)
        }
        other => Err(PointSpecError::UnknownProcedure(other.to_owned())),
    }
}

/// Whether `quick = true` (for the size of a point's profile trace).
fn quick(run: &RunSpec) -> bool {
    run.options.get("quick") == Some(&Cell::Bool(true))
}

// ---------------------------------------------------------------- output size

/// Bytes a point's trace takes per I/O: 4.0 measured (200,000 random 4 KiB writes
/// over 1 GiB, a generator trace as storbench writes it); 8 bounds wider spans. A
/// synthesized profile's trace carries times and names: 16.
pub const TRACE_BYTES_PER_IO: u64 = 8;
pub const PROFILE_BYTES_PER_IO: u64 = 16;
/// A point's results whatever it runs (result.json, state, fio logs, series of a
/// short run: 45 to 120 KB measured), and per second of a timed phase (the journal
/// and series: 490 B a second measured over a 400 s run).
pub const POINT_RESULT_BYTES: u64 = 256 << 10;
pub const RESULT_BYTES_PER_S: u64 = 1 << 10;

/// What a point will write, estimated before it runs, by what decides it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutputEstimate {
    /// The trace it writes: a generator's (`ios`, or `size` / `bs`) or a profile's.
    pub trace_bytes: u64,
    /// Its results: a fixed part and the per-second series of its timed phases.
    pub results_bytes: u64,
    /// Seconds of timed phases counted (consistency `duration`, trim-check
    /// `dirty-for` and `settle`).
    pub timed_s: u64,
}

impl OutputEstimate {
    pub fn total_bytes(&self) -> u64 {
        self.trace_bytes.saturating_add(self.results_bytes)
    }
}

/// A point's output, estimated from its spec (options that do not parse count as
/// their defaults: the plan's check refuses them anyway).
pub fn output_estimate(run: &RunSpec) -> OutputEstimate {
    let trace_bytes = match &run.workload {
        Some(WorkloadSpec::Generator { bs, ios, size, .. }) => {
            let n = match (ios, size) {
                (Some(n), _) => *n,
                (None, Some(b)) => {
                    let bytes = parse_size("size", b).unwrap_or(0);
                    let bs = parse_size("bs", bs).unwrap_or(4096).max(1);
                    bytes.div_ceil(bs)
                }
                (None, None) => 0,
            };
            n.saturating_mul(TRACE_BYTES_PER_IO)
        }
        Some(WorkloadSpec::Profile { name, scale }) => {
            let ios = storbench_workload::synth::load(name).map_or(0, |p| p.total_ios());
            let quick = quick(run);
            let scale = scale.unwrap_or(if quick { QUICK_SCALE } else { 1.0 });
            ((ios as f64 * scale).ceil() as u64).saturating_mul(PROFILE_BYTES_PER_IO)
        }
        Some(WorkloadSpec::Trace { .. }) | None => 0,
    };
    let timed_ns = match run.procedure.as_str() {
        "consistency" => consistency(run).map_or(0, |c| c.duration_ns),
        "trim-check" => trim_check(run).map_or(0, |c| c.dirty_for_ns.saturating_add(c.settle_ns)),
        _ => 0,
    };
    let timed_s = timed_ns.div_ceil(1_000_000_000);
    OutputEstimate {
        trace_bytes,
        results_bytes: POINT_RESULT_BYTES
            .saturating_add(timed_s.saturating_mul(RESULT_BYTES_PER_S)),
        timed_s,
    }
}

// ---------------------------------------------------------------- generator workloads

/// Write a generator workload as a trace with no times (so the trace bench keeps `qd`
/// in flight), sized for the point's drive. Idempotent: an existing file is kept.
fn write_generator_trace(run: &RunSpec, dir: &Path) -> Result<(), PointSpecError> {
    use storbench_workload::generator::{GenSpec, Generator, Limit, Mix, Pattern, SpanSpec};
    let Some(WorkloadSpec::Generator {
        rw,
        bs,
        qd,
        read_pct,
        span,
        ios,
        size,
    }) = &run.workload
    else {
        return Ok(());
    };
    let out = dir.join(GENERATOR_TRACE);
    if out.is_file() {
        return Ok(());
    }
    let cfg = storbench_sim::SimConfig::parse(&run.target).map_err(generator)?;
    let block_bytes = parse_size("bs", bs)?;
    let span_bytes = SpanSpec::parse(span)
        .and_then(|s| s.resolve(cfg.capacity_bytes, block_bytes))
        .map_err(generator)?;
    let spec = GenSpec {
        pattern: if rw.starts_with("rand") {
            Pattern::Random
        } else {
            Pattern::Sequential
        },
        mix: match rw.as_str() {
            "trim" => Mix::Trim,
            "read" | "randread" => Mix::ReadWrite { read_pct: 100 },
            "write" | "randwrite" => Mix::ReadWrite { read_pct: 0 },
            _ => Mix::ReadWrite {
                read_pct: *read_pct,
            },
        },
        block_bytes,
        qd: *qd,
        span_start_bytes: 0,
        span_bytes,
        limit: match (ios, size) {
            (Some(n), _) => Limit::Ios(*n),
            (_, Some(s)) => Limit::Bytes(parse_size("size", s)?),
            _ => return Err(PointSpecError::NoLimit),
        },
        seed: run.seed,
    };
    let mut gen = Generator::new(spec).map_err(generator)?;
    let meta = storbench_trace::TraceMeta {
        source_format: Some(format!("generator:{rw}")),
        capacity_bytes: Some(cfg.capacity_bytes),
        ..Default::default()
    };
    std::fs::create_dir_all(dir).map_err(|error| PointSpecError::Io {
        path: dir.to_path_buf(),
        error,
    })?;
    let tmp = dir.join("generator.parquet.tmp");
    let mut w = storbench_trace::TraceWriter::create(&tmp, &meta).map_err(generator)?;
    use storbench_workload::Source;
    let mut n: u64 = 0;
    while let Some(io) = gen.next_io() {
        let io = io.map_err(generator)?;
        // Issue times only keep the order; the bench paces by queue depth.
        w.write(&storbench_trace::IoRecord::new(
            io.op,
            io.offset_bytes,
            io.len_bytes,
            n,
        ))
        .map_err(generator)?;
        n += 1;
    }
    w.finish().map_err(generator)?;
    std::fs::rename(&tmp, &out).map_err(|error| PointSpecError::Io { path: out, error })
}

// ---------------------------------------------------------------- running

fn go<P: Procedure>(dir: &Path, cfg: P, ctl: &Control) -> Result<SuiteResult<P>, PointError> {
    let start = if dir.join(storbench_suite::state::STATE_FILE).is_file() {
        Start::Resume
    } else {
        Start::New(cfg)
    };
    execute::<P>(dir, start, ctl).map_err(|e| match e {
        SuiteError::Interrupted { phase, .. } => PointError::Interrupted { phase },
        other => PointError::Failed(other.to_string()),
    })
}

/// Run one point in `dir` (created), or continue it if an earlier run was stopped
/// there, or read its result if it finished; `stop` ends it at its next checkpoint.
pub fn run_point(run: &RunSpec, dir: &Path, stop: Arc<AtomicBool>) -> Result<Row, PointError> {
    if let Some(row) = finished_row(run, dir) {
        return row;
    }
    let ctl = Control {
        stop,
        progress: false,
        checkpoint_interval: Duration::from_nanos(run.checkpoint_every_ns),
        verbose: false,
        // Recorded in result.json: the same on every machine.
        command_line: vec!["storbench-sweep".into(), run.id()],
        // The point's directory is the sweep's own: an unfinished result left there
        // (a point that failed) is replaced by the new run of that point.
        replace: true,
    };
    match run.procedure.as_str() {
        "consistency" => row_of(run, &go(dir, consistency(run)?, &ctl)?),
        "trim-check" => row_of(run, &go(dir, trim_check(run)?, &ctl)?),
        "season" => row_of(run, &go(dir, season(run)?, &ctl)?),
        "twin-measure" => row_of(run, &go(dir, twin_measure(run)?, &ctl)?),
        "bench" => {
            write_generator_trace(run, dir)?;
            row_of(run, &go(dir, bench(run, dir)?, &ctl)?)
        }
        other => Err(PointError::Failed(format!("unknown procedure {other}"))),
    }
}

/// The row of the point's finished result in `dir`, if it has one.
fn finished_row(run: &RunSpec, dir: &Path) -> Option<Result<Row, PointError>> {
    fn done<P: Procedure>(run: &RunSpec, dir: &Path) -> Option<Result<Row, PointError>>
    where
        P::Summary: Figures,
    {
        let r = read_result::<P>(dir).ok()?;
        r.complete.then(|| row_of(run, &r))
    }
    match run.procedure.as_str() {
        "consistency" => done::<ConsistencyConfig>(run, dir),
        "trim-check" => done::<TrimCheckConfig>(run, dir),
        "season" => done::<SeasonConfig>(run, dir),
        "bench" => done::<BenchConfig>(run, dir),
        "twin-measure" => done::<TwinMeasureConfig>(run, dir),
        _ => None,
    }
}

fn float(v: f64) -> Cell {
    if v.is_finite() {
        Cell::Float(v)
    } else {
        Cell::Null
    }
}

fn opt_float(v: Option<f64>) -> Cell {
    v.map_or(Cell::Null, float)
}

fn count(v: u64) -> Cell {
    i64::try_from(v).map_or(Cell::Null, Cell::Int)
}

/// A summary's headline figures, in the order of [`figures`].
trait Figures {
    fn row(&self) -> Vec<(&'static str, Cell)>;
}

impl Figures for ConsistencySummary {
    fn row(&self) -> Vec<(&'static str, Cell)> {
        let s = self;
        let sc = s.scores.as_ref();
        vec![
            ("steady_iops", opt_float(sc.map(|x| x.avg))),
            ("steady_iops_stddev", opt_float(sc.map(|x| x.stddev))),
            ("steady_iops_min", opt_float(sc.map(|x| x.min))),
            (
                "steady_avg_over_stddev",
                opt_float(sc.and_then(|x| x.avg_over_stddev)),
            ),
            ("steady_state_reached", Cell::Bool(s.steady_state_reached)),
            (
                "steady_state_at_s",
                s.steady_state_at_s.map_or(Cell::Null, count),
            ),
            ("precondition_mb_per_s", float(s.precondition_mb_per_s)),
        ]
    }
}

impl Figures for BenchSummary {
    fn row(&self) -> Vec<(&'static str, Cell)> {
        let s = self;
        let ios = (s.reads + s.writes) as f64;
        vec![
            (
                "iops",
                if s.busy_s > 0.0 {
                    float(ios / s.busy_s)
                } else {
                    Cell::Null
                },
            ),
            ("data_rate_mb_per_s", float(s.data_rate_mb_per_s)),
            ("read_mb_per_s", float(s.read_rate_mb_per_s)),
            ("write_mb_per_s", float(s.write_rate_mb_per_s)),
            ("latency_mean_us", float(s.service.mean_us)),
            ("latency_p99_us", float(s.service.p99_us)),
            ("latency_p99_9_us", float(s.service.p99_9_us)),
            ("busy_s", float(s.busy_s)),
            ("reads", count(s.reads)),
            ("writes", count(s.writes)),
            ("replayed_avg_qd", opt_float(s.replayed_avg_qd)),
        ]
    }
}

impl Figures for TrimTable {
    fn row(&self) -> Vec<(&'static str, Cell)> {
        let t = self;
        vec![
            ("clean_mb_per_s", float(t.clean_mb_per_s)),
            ("dirty_mb_per_s", float(t.dirty_mb_per_s)),
            ("after_trim_mb_per_s", float(t.after_trim_mb_per_s)),
            ("dirty_of_clean_pct", float(t.dirty_of_clean_pct)),
            ("after_trim_of_clean_pct", float(t.after_trim_of_clean_pct)),
        ]
    }
}

impl Figures for Measurement {
    fn row(&self) -> Vec<(&'static str, Cell)> {
        FIGURES
            .iter()
            .map(|d| {
                let v = self.figures.iter().find(|f| f.name == d.name);
                (d.name, v.map_or(Cell::Null, |f| float(f.value)))
            })
            .collect()
    }
}

impl Figures for SeasonSummary {
    fn row(&self) -> Vec<(&'static str, Cell)> {
        vec![
            ("seq_pass_mb_per_s", float(self.seq_pass_mb_per_s)),
            ("restore_mb_per_s", float(self.restore_mb_per_s)),
        ]
    }
}

/// The headline row of a finished procedure.
fn row_of<C, S: Figures>(run: &RunSpec, r: &RunResult<C, S>) -> Result<Row, PointError> {
    let d = &r.health_delta;
    let mut row: Vec<(&str, Cell)> = vec![
        (
            "host_write_bytes",
            d.host_write_bytes.map_or(Cell::Null, count),
        ),
        (
            "nand_write_bytes",
            d.nand_write_bytes.map_or(Cell::Null, count),
        ),
        ("wa", opt_float(d.write_amplification)),
    ];
    let s = r
        .summary
        .as_ref()
        .ok_or_else(|| PointError::Failed(format!("the {} result has no summary", r.procedure)))?;
    row.extend(s.row());
    debug_assert_eq!(
        row.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
        figures(&run.procedure)
            .iter()
            .map(|(k, _)| *k)
            .collect::<Vec<_>>(),
        "the row follows figures()"
    );
    Ok(row.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

#[cfg(test)]
mod tests {
    /// The dataset's columns follow result.json's naming rule (units last, `_pct`).
    #[test]
    fn every_figure_puts_its_unit_last() {
        let bad: Vec<String> = super::PROCEDURES
            .iter()
            .flat_map(|p| super::figures(p))
            .filter_map(|(name, _)| storbench_results::naming::check(name))
            .collect();
        assert!(bad.is_empty(), "{bad:?}");
    }
}
