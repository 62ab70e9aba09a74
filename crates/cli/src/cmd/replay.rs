//! `storbench replay TRACE --target T`: replay a Parquet trace on a target.

use super::run::{execute, open_target, parse_data, parse_duration_ns, CommonArgs, Job};
use super::UserError;
use std::collections::BTreeMap;
use std::path::PathBuf;
use storbench_engine::run::DEFAULT_MAX_IDLE_NS;
use storbench_engine::{Pacing, RunOptions};
use storbench_trace::store::Columns;
use storbench_trace::{IoRecord, Op, TraceMeta, TraceReader};
use storbench_workload::replay::ReplaySource;

#[derive(clap::Args)]
pub struct Args {
    /// The trace (Parquet, as written by import, record or synth)
    pub trace: PathBuf,
    #[command(flatten)]
    pub common: CommonArgs,
    /// queue-depth (default: the trace's in-flight count), timed (trace times), fixed-qd
    #[arg(long, default_value = "queue-depth")]
    pub mode: String,
    /// Queue depth: fixed-qd's N, and queue-depth's QD for I/Os without completion times
    #[arg(long, default_value_t = 32)]
    pub qd: u32,
    /// timed: replay speed factor (2 = twice as fast)
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// timed: cut idle gaps longer than this (default 1s), or `none`
    #[arg(long = "max-idle", default_value = "1s")]
    pub max_idle: String,
    /// Stop after this long (10s, 2m)
    #[arg(long)]
    pub time: Option<String>,
    /// Fold the trace onto the first BYTES (or PERCENT%) of the target
    #[arg(long)]
    pub span: Option<String>,
}

fn user(message: String, hint: Option<&str>) -> anyhow::Error {
    anyhow::Error::new(UserError {
        message,
        hint: hint.map(str::to_string),
    })
}

/// One pass over the op column: whether the trace writes or trims, the largest I/O,
/// and a short summary for result.json.
fn scan(path: &std::path::Path) -> anyhow::Result<(bool, u64, serde_json::Value, TraceMeta)> {
    let mut r = TraceReader::open_columns(path, Columns::NoNames)
        .map_err(super::import::trace_input_error)?;
    let meta = r.meta().clone();
    let mut batch: Vec<IoRecord> = Vec::new();
    let mut counts = [0u64; 4];
    let mut bytes = [0u64; 4];
    let mut max_len = 0u64;
    let mut first = None;
    let mut last = 0u64;
    while r.next_batch(&mut batch).map_err(anyhow::Error::new)? {
        for rec in &batch {
            counts[rec.op.index()] += 1;
            bytes[rec.op.index()] += rec.len_bytes;
            if rec.op.is_data() {
                max_len = max_len.max(rec.len_bytes);
            }
            first.get_or_insert(rec.issue_ns);
            last = last.max(rec.issue_ns);
        }
    }
    let writes = counts[Op::Write.index()] + counts[Op::Trim.index()] > 0;
    let summary = serde_json::json!({
        "path": path.display().to_string(),
        "ios": counts.iter().sum::<u64>(),
        "read_ios": counts[Op::Read.index()],
        "write_ios": counts[Op::Write.index()],
        "trim_ios": counts[Op::Trim.index()],
        "flush_ios": counts[Op::Flush.index()],
        "read_bytes": bytes[Op::Read.index()],
        "write_bytes": bytes[Op::Write.index()],
        "duration_ns": last.saturating_sub(first.unwrap_or(0)),
        "source_format": meta.source_format,
        "capacity_bytes": meta.capacity_bytes,
    });
    Ok((writes, max_len, summary, meta))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if !args.trace.exists() {
        return Err(user(
            format!("trace {} does not exist", args.trace.display()),
            Some("make one with `storbench import`, `storbench record` or `storbench synth`"),
        ));
    }
    if args.qd == 0 || args.qd > 4096 {
        return Err(user(
            format!("--qd {}: must be between 1 and 4096", args.qd),
            None,
        ));
    }
    let pacing = match args.mode.as_str() {
        "queue-depth" | "qd" => Pacing::QueueDepth {
            default_qd: args.qd,
        },
        "fixed-qd" => Pacing::FixedQd(args.qd),
        "timed" => {
            if !(args.speed > 0.0 && args.speed.is_finite()) {
                return Err(user(
                    format!("--speed {}: must be a positive number", args.speed),
                    None,
                ));
            }
            let max_idle_ns = match args.max_idle.as_str() {
                "none" => None,
                s => Some(parse_duration_ns("--max-idle", s)?),
            };
            Pacing::Timed {
                speed: args.speed,
                max_idle_ns,
            }
        }
        m => {
            return Err(user(
                format!("--mode {m}: unknown replay mode"),
                Some("use queue-depth, timed or fixed-qd"),
            ))
        }
    };
    let (writes, max_len, summary, meta) = scan(&args.trace)?;
    // Slots: the trace's QD can exceed --qd in queue-depth mode; allow up to 256 in flight.
    let slots = match pacing {
        Pacing::FixedQd(n) => n as usize,
        _ => 256.max(args.qd as usize),
    };
    let buffer_bytes = (max_len as usize).clamp(4096, 64 << 20);
    let mut target = open_target(&args.common, writes, slots, buffer_bytes)?;
    let info = target.info().clone();
    let mut opts = RunOptions::new(pacing);
    opts.data = parse_data(&args.common.data)?;
    opts.seed = args.common.seed;
    opts.time_limit_ns = args
        .time
        .as_deref()
        .map(|t| parse_duration_ns("--time", t))
        .transpose()?;
    if let Some(s) = args.span.as_deref() {
        let spec = storbench_workload::generator::SpanSpec::parse(s)
            .map_err(|e| user(format!("--span: {e}"), None))?;
        let span = spec
            .resolve(
                info.capacity_bytes,
                u64::from(info.logical_block_bytes.max(1)),
            )
            .map_err(|e| user(format!("--span {s}: {e}"), None))?;
        opts.fold_span_bytes = Some(span);
    }
    let source = ReplaySource::open(&args.trace).map_err(|e| user(e.to_string(), None))?;
    // Decode the trace on a helper thread: a batch decode on the engine thread (a few
    // ms) made every timed I/O due meanwhile late.
    let mut source = storbench_engine::Prefetch::new(source)
        .map_err(|e| anyhow::anyhow!("starting the trace read-ahead thread: {e}"))?;
    let mut options = BTreeMap::new();
    options.insert("mode".into(), pacing.name().to_string());
    options.insert("qd".into(), args.qd.to_string());
    if let Pacing::Timed { speed, max_idle_ns } = pacing {
        options.insert("speed".into(), speed.to_string());
        options.insert(
            "max_idle".into(),
            max_idle_ns.map_or("none".to_string(), |n| format!("{n}ns")),
        );
        if max_idle_ns == Some(DEFAULT_MAX_IDLE_NS) {
            options.insert("max_idle_default".into(), "true".into());
        }
    }
    options.insert("data".into(), args.common.data.clone());
    options.insert("seed".into(), args.common.seed.to_string());
    if let Some(t) = &args.time {
        options.insert("time".into(), t.clone());
    }
    if let Some(s) = &args.span {
        options.insert("span".into(), s.clone());
    }
    let job = Job {
        procedure: "replay",
        phase: "replay",
        common: &args.common,
        opts,
        options,
        trace: Some(summary),
        ios_meta: TraceMeta {
            source_file: Some(args.trace.display().to_string()),
            capacity_bytes: Some(info.capacity_bytes),
            logical_block_bytes: Some(info.logical_block_bytes),
            extra: meta.extra.clone(),
            ..TraceMeta::default()
        },
    };
    execute(job, target.as_mut(), &mut source)
}
