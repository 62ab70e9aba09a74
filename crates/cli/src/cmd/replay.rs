//! `storbench replay TRACE --target T`: replay a Parquet trace on a target. Argument
//! parsing and printing only: the replay is a procedure of one phase on the suite's
//! runner (`storbench_suite::replay`).

use super::drive::{drive, failed_ios, DriveArgs};
use super::run::{print_summary, user, CommonArgs};
use super::values;
use std::path::PathBuf;
use std::time::Duration;
use storbench_engine::{BufferPlan, Pacing};
use storbench_suite::replay::{ReplayConfig, TraceSummary};
use storbench_workload::generator::SpanSpec;
use storbench_workload::replay::TraceScan;

#[derive(clap::Args)]
#[command(after_help = super::drive::EXIT_CODES)]
pub struct Args {
    /// The trace (Parquet, as written by import, record or synth)
    #[arg(required_unless_present = "resume")]
    pub trace: Option<PathBuf>,
    #[command(flatten)]
    pub common: CommonArgs,
    /// How I/Os are paced
    #[arg(long, value_enum, default_value = "queue-depth")]
    pub mode: values::Mode,
    /// Queue depth: fixed-qd's N, and queue-depth's QD for I/Os without completion times
    #[arg(long, default_value_t = 32)]
    pub qd: u32,
    /// Jobs replaying at once, each with its own ring: the trace's streams (its
    /// `stream` column) shared among them, stream k to job k mod N, each in the
    /// trace's order (1 to 256)
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub jobs: u32,
    /// timed: replay speed factor (2 = twice as fast)
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// timed: cut idle gaps longer than this (250ms, 1s, 2min), or `none`
    #[arg(long = "max-idle", default_value = "1s", value_name = "TIME|none",
        value_parser = values::max_idle)]
    pub max_idle: values::MaxIdle,
    /// Stop after this long (250us, 10s, 2min, 1h; a bare number is seconds)
    #[arg(long, visible_alias = "duration", value_name = "TIME", value_parser = values::duration)]
    pub time: Option<Duration>,
    /// Fold the trace onto the first BYTES (or PERCENT%) of the target
    #[arg(long, value_name = "SIZE|PCT%", value_parser = values::span)]
    pub span: Option<SpanSpec>,
}

fn pacing(args: &Args) -> anyhow::Result<Pacing> {
    Ok(match args.mode {
        values::Mode::QueueDepth => Pacing::QueueDepth {
            default_qd: args.qd,
        },
        values::Mode::FixedQd => Pacing::FixedQd(args.qd),
        values::Mode::Timed => {
            if !(args.speed > 0.0 && args.speed.is_finite()) {
                return Err(user(
                    format!("--speed {}: must be a positive number", args.speed),
                    None,
                ));
            }
            let max_idle_ns = args.max_idle.0.map(values::ns);
            Pacing::Timed {
                speed: args.speed,
                max_idle_ns,
            }
        }
    })
}

/// The replay's configuration from the command line (one pass over the trace).
fn config(args: &Args) -> anyhow::Result<ReplayConfig> {
    let trace = args
        .trace
        .as_deref()
        .expect("clap requires the trace without --resume");
    if !trace.exists() {
        return Err(user(
            format!("trace {} does not exist", trace.display()),
            Some("make one with `storbench import`, `storbench record` or `storbench synth`"),
        ));
    }
    if args.qd == 0 || args.qd > 4096 {
        return Err(user(
            format!("--qd {}: must be between 1 and 4096", args.qd),
            None,
        ));
    }
    storbench_suite::units::check_jobs(args.jobs).map_err(|e| user(e.to_string(), None))?;
    let pacing = pacing(args)?;
    let time_limit_ns = args.time.map(values::ns);
    if time_limit_ns == Some(0) {
        return Err(user(
            "--time 0: a replay of no time does no work",
            Some("give a duration, e.g. --time 10s, or leave it out to replay the whole trace"),
        ));
    }
    let span = args.span;
    let path = std::fs::canonicalize(trace).map_err(|e| {
        user(
            format!("trace {}: {e}", trace.display()),
            Some("check the path"),
        )
    })?;
    // Opening reads the footer: not Parquet, or not a trace, is the user's input
    // (exit 2), a failed read an I/O failure. The scan then reads every row.
    storbench_trace::TraceReader::open(&path).map_err(super::import::trace_input_error)?;
    let scan = TraceScan::of(&path).map_err(|e| {
        user(
            e.to_string(),
            Some("is the input a storbench Parquet trace? (storbench import makes one)"),
        )
    })?;
    let summary = TraceSummary::from_scan(&path, &scan);
    // Issue 19: buffers for as many I/Os as the trace (or --qd) keeps in flight, each
    // as large as its largest I/O, within --buffer-memory (fewer in flight past it).
    let want = match pacing {
        Pacing::FixedQd(n) => n as usize,
        _ => (scan.max_in_flight as usize).max(args.qd as usize),
    };
    let cap = args.common.buffer_memory_bytes()?;
    let plan = BufferPlan::new(want, summary.max_io_bytes.max(4096), cap).map_err(|e| {
        user(
            format!("{}: row {}: {e}", path.display(), scan.max_len_row),
            Some("raise --buffer-memory, or fold the trace with `storbench export --span`"),
        )
    })?;
    // Past the cap, the suite notes in the result how many it kept in flight.
    let (slots, buffer_bytes) = (plan.slots, plan.slot_bytes);
    let c = &args.common;
    Ok(ReplayConfig {
        target: c.target()?,
        open: c.real_open(summary.writes(), slots, buffer_bytes)?,
        trace: summary,
        pacing,
        time_limit_ns,
        span,
        seed: c.seed,
        data: c.data,
        log_ios: c.log_ios,
        jobs: args.jobs,
        scan: Some(scan),
    })
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let d: &DriveArgs = &args.common.drive;
    let (dir, r) = drive::<ReplayConfig>(
        d,
        args.common.output.clone(),
        args.common.destroy_data.as_deref(),
        || config(&args),
    )?;
    // The run's own status first: a closed stdout does not hide failed I/Os.
    let printed = print_summary(&r, &dir);
    failed_ios(&r, &dir)?;
    Ok(printed?)
}
