//! Reads a result directory (`DIR/result.json`, written by the procedures) into a
//! [`RunView`].
//!
//! The file is read as its writer's own types ([`crate::read::AnyResult`]: the
//! procedure's configuration and summary from `storbench-results`); each procedure's
//! part of the view is built from its typed summary here, the rest from what every
//! result has. A field it uses with the wrong type or a missing required one is an
//! error naming the file, line and column. Consistency IOPS come from the result's
//! summary, or else from the random-write phase's Parquet series.

use super::view::*;
use crate::read::{self, AnyResult, CommandLine, Health, Legacy};
use serde::de::IgnoredAny;
use std::path::{Path, PathBuf};
use storbench_metrics::PhaseMetrics;
use storbench_results::bench::{BenchConfig, BenchSummary, Workload};
use storbench_results::consistency::{ConsistencyConfig, ConsistencySummary};
use storbench_results::replay::{ReplayConfig, ReplaySummary};
use storbench_results::run::{RunConfig, RunSummary};
use storbench_results::season::{SeasonConfig, SeasonSummary};
use storbench_results::trimcheck::{TrimCheckConfig, TrimTable};
use storbench_results::twin::{Measurement, TwinFile, TwinMeasureConfig, TWIN_FILE};
use storbench_results::{PhaseRecord, RunResult};

pub use crate::result::RESULT_FILE;
use crate::ReportError;

/// Reads `dir/result.json` (and, when needed, its series) into a view.
pub fn load(dir: &Path) -> Result<(RunView, String), ReportError> {
    let path = dir.join(RESULT_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| ReportError::io(&path, "read", e))?;
    let mut view = from_json(&text, &path, dir)?;
    view.twin = load_twin(dir)?;
    Ok((view, text))
}

/// `dir/twin.json` (written by `storbench twin fit`), when there is one, read as the
/// fit's own type.
fn load_twin(dir: &Path) -> Result<Option<TwinFile>, ReportError> {
    let path = dir.join(TWIN_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ReportError::io(&path, "read", e)),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| ReportError::json(&path, &e))
}

/// `2026-11-26 02:25` (UTC) from Unix milliseconds.
pub fn utc_minute(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let days = (secs / 86_400) as i64;
    let (h, m) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{m:02}")
}

/// Builds a view from the text of a result.json. `path` names the file in errors;
/// `dir` is where series files are looked for.
pub fn from_json(text: &str, path: &Path, dir: &Path) -> Result<RunView, ReportError> {
    Ok(match read::parse(text, path)? {
        AnyResult::Consistency(r) => consistency(&r, dir)?,
        AnyResult::Bench(r) => bench(&r, dir),
        AnyResult::TrimCheck(r) => trim_check(&r, dir),
        AnyResult::Season(r) => season(&r, dir),
        AnyResult::Run(r) => run(&r, dir),
        AnyResult::Replay(r) => replay(&r, dir),
        AnyResult::TwinMeasure(r) => twin_measure(&r, dir),
        AnyResult::Other(r) => other(&r, dir),
        AnyResult::Legacy(r) => legacy(&r, dir),
    })
}

/// What every result shows, whatever its procedure: a view without the procedure's
/// own parts, named `workload`, its drive in `state`.
fn common<C, S>(r: &RunResult<C, S>, dir: &Path, workload: String, state: &str) -> RunView {
    let mut notes = r.notes.clone();
    let phases: Vec<(&str, Option<&PhaseMetrics>)> = r
        .phases
        .iter()
        .map(|p| (p.name.as_str(), Some(&p.metrics)))
        .collect();
    let failed = failed_ios_note(&phases);
    if r.complete {
        if let Some(n) = &failed {
            notes.insert(0, n.clone());
        }
    }
    RunView {
        source: dir.display().to_string(),
        drive: drive_name(&r.target),
        setting: DEFAULT_SETTING.to_string(),
        procedure: r.procedure.clone(),
        target: r.target.clone(),
        tool_version: format!("storbench {}", r.tool_version),
        command_line: command_line_text(&r.command_line, &r.procedure, &r.target.name),
        options: option_rows(&r.options),
        complete: r.complete && failed.is_none(),
        notes,
        phases: phase_views(&phases),
        consistency: None,
        bench: None,
        trim: None,
        twin: None,
        traces: Vec::new(),
        health: health_view(
            &Health::from(&r.health_before),
            &Health::from(&r.health_after),
            &Health::from(&r.health_delta),
        ),
        state: state.to_string(),
        workload,
        date: (r.created_unix_ms > 0).then(|| utc_minute(r.created_unix_ms)),
        name: String::new(),
        season: None,
        highlight: false,
        figures: Vec::new(),
    }
}

fn consistency(
    r: &RunResult<ConsistencyConfig, ConsistencySummary>,
    dir: &Path,
) -> Result<RunView, ReportError> {
    let c = &r.config;
    let s = r.summary.as_ref();
    let workload = format!("{} random write QD{}", fmt_block(c.block_bytes), c.qd);
    Ok(RunView {
        setting: setting_text(s.map_or(c.span_fraction * 100.0, |s| s.span_pct)),
        consistency: Some(consistency_view(s, c, dir)?),
        ..common(r, dir, workload, "fresh")
    })
}

fn bench(r: &RunResult<BenchConfig, BenchSummary>, dir: &Path) -> RunView {
    let c = &r.config;
    let s = r.summary.as_ref();
    let workload = match &c.workload {
        Workload::Profile { name, .. } => name.clone(),
        Workload::Trace { path } => path
            .file_stem()
            .map_or("trace".into(), |s| s.to_string_lossy().into_owned()),
    };
    let state = s.map_or_else(|| c.state.name().to_string(), |s| s.state.clone());
    let image = s.and_then(|s| s.image.clone());
    let traces = s
        .and_then(|s| {
            let obj = s.characterize.as_ref()?;
            Some(vec![TraceView {
                name: s.trace_name.clone(),
                rows: trace_rows(obj),
            }])
        })
        .unwrap_or_default();
    RunView {
        setting: setting_text(c.span_fraction * 100.0),
        bench: bench_metrics(&r.phases),
        traces,
        season: season_view(&r.phases, image, &state, "the trace's image"),
        ..common(r, dir, workload, &state)
    }
}

fn trim_check(r: &RunResult<TrimCheckConfig, TrimTable>, dir: &Path) -> RunView {
    RunView {
        setting: setting_text(r.config.span_fraction * 100.0),
        trim: r.summary.as_ref().map(|t| TrimView {
            clean_mb_s: t.clean_mb_per_s,
            dirty_mb_s: t.dirty_mb_per_s,
            after_trim_mb_s: t.after_trim_mb_per_s,
            note: t.note.clone(),
        }),
        ..common(r, dir, "TRIM check".into(), "fresh")
    }
}

fn season(r: &RunResult<SeasonConfig, SeasonSummary>, dir: &Path) -> RunView {
    let image = r.summary.as_ref().map(|s| s.image.clone());
    RunView {
        season: season_view(&r.phases, image, "seasoned", "image"),
        ..common(r, dir, "seasoning".into(), "seasoned")
    }
}

fn run(r: &RunResult<RunConfig, RunSummary>, dir: &Path) -> RunView {
    use storbench_core::generator::{Mix, Pattern};
    let c = &r.config;
    let pattern = match c.pattern {
        Pattern::Sequential => "sequential",
        Pattern::Random => "random",
    };
    let mix = match c.mix {
        Mix::ReadWrite { read_pct: 0 } => "write".to_string(),
        Mix::ReadWrite { read_pct: 100 } => "read".to_string(),
        Mix::ReadWrite { read_pct } => format!("{read_pct}% read"),
        Mix::Trim => "trim".to_string(),
    };
    let workload = format!("{} {pattern} {mix} QD{}", fmt_block(c.block_bytes), c.qd);
    common(r, dir, workload, "fresh")
}

fn replay(r: &RunResult<ReplayConfig, ReplaySummary>, dir: &Path) -> RunView {
    let trace = r.trace.as_ref().unwrap_or(&r.config.trace);
    let workload = Path::new(&trace.path)
        .file_stem()
        .map_or_else(|| "replay".into(), |s| s.to_string_lossy().into_owned());
    let rows = match serde_json::to_value(trace) {
        Ok(serde_json::Value::Object(m)) => trace_rows(&m),
        _ => Vec::new(),
    };
    RunView {
        traces: vec![TraceView {
            name: workload.clone(),
            rows,
        }],
        ..common(r, dir, workload, "fresh")
    }
}

/// A twin measurement: what every result has; its figures beside the fitted twin's
/// come from `twin.json` ([`load`]), the twin section's table.
fn twin_measure(r: &RunResult<TwinMeasureConfig, Measurement>, dir: &Path) -> RunView {
    common(r, dir, "twin plan".into(), "fresh")
}

/// A procedure this build does not know: what every result has.
fn other(r: &RunResult<IgnoredAny, serde_json::Value>, dir: &Path) -> RunView {
    let figures = r
        .summary
        .as_ref()
        .and_then(serde_json::Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| v.as_f64().map(|x| (k.clone(), x)))
        .collect();
    RunView {
        figures,
        ..common(r, dir, r.procedure.clone(), "fresh")
    }
}

/// The layout before `RunResult` (`run` and `replay`).
fn legacy(r: &Legacy, dir: &Path) -> RunView {
    let phases: Vec<(&str, Option<&PhaseMetrics>)> = r
        .phases
        .iter()
        .map(|p| (p.name.as_str(), p.metrics.as_ref()))
        .collect();
    let failed = failed_ios_note(&phases);
    let mut notes = r.notes.clone();
    if r.complete {
        if let Some(n) = &failed {
            notes.insert(0, n.clone());
        }
    }
    let nested = r.health.as_ref();
    let empty = Health::default();
    let pick = |f: fn(&read::LegacyHealth) -> &Option<Health>| {
        nested.and_then(|n| f(n).as_ref()).unwrap_or(&empty)
    };
    let traces = r
        .trace
        .as_ref()
        .map(|t| {
            let name = t
                .get("name")
                .and_then(|n| n.as_str())
                .unwrap_or(&r.procedure)
                .to_string();
            vec![TraceView {
                name,
                rows: trace_rows(t),
            }]
        })
        .unwrap_or_default();
    let command_line = match &r.command_line {
        Some(CommandLine::Text(t)) => t.clone(),
        Some(CommandLine::Args(a)) => command_line_text(a, &r.procedure, &r.target.name),
        None => command_line_text(&[], &r.procedure, &r.target.name),
    };
    RunView {
        source: dir.display().to_string(),
        drive: drive_name(&r.target),
        setting: DEFAULT_SETTING.to_string(),
        procedure: r.procedure.clone(),
        target: r.target.clone(),
        tool_version: format!("storbench {}", r.tool_version.as_deref().unwrap_or("?")),
        command_line,
        options: option_rows(&r.options),
        complete: r.complete && failed.is_none(),
        notes,
        bench: (r.procedure == "bench")
            .then(|| legacy_bench(&phases))
            .flatten(),
        phases: phase_views(&phases),
        consistency: None,
        trim: None,
        twin: None,
        traces,
        health: health_view(pick(|n| &n.before), pick(|n| &n.after), pick(|n| &n.delta)),
        state: "fresh".into(),
        workload: r.procedure.clone(),
        date: r.created_unix_ms.map(utc_minute),
        name: String::new(),
        season: None,
        highlight: false,
        figures: Vec::new(),
    }
}

/// A legacy bench's figures: its replay phase, else its last phase with metrics.
fn legacy_bench(phases: &[(&str, Option<&PhaseMetrics>)]) -> Option<BenchView> {
    phases
        .iter()
        .find(|(n, _)| *n == "replay")
        .and_then(|(_, m)| *m)
        .or_else(|| phases.iter().rev().find_map(|(_, m)| *m))
        .map(bench_view)
}

/// Options worth showing: scalars, and the rest summarized (no JSON blobs in tables);
/// how the target is opened (`open`) is in the targets table.
fn option_rows(options: &std::collections::BTreeMap<String, String>) -> Vec<(String, String)> {
    options
        .iter()
        .filter(|(k, v)| *k != "open" && v.as_str() != "null")
        .map(|(k, v)| {
            let shown = match serde_json::from_str::<serde_json::Value>(v) {
                Ok(serde_json::Value::Number(n)) => {
                    n.as_f64().map_or_else(|| n.to_string(), fmt_num)
                }
                Ok(serde_json::Value::Array(a)) => format!("[{} values]", a.len()),
                Ok(serde_json::Value::Object(_)) => "{…}".to_string(),
                _ => v.clone(),
            };
            (k.clone(), shown)
        })
        .collect()
}

/// The spare-area setting from the tested span; within half a percent of full is the
/// default setting (spans are block-aligned).
fn setting_text(span_pct: f64) -> String {
    let span_pct = Some(span_pct)
        .filter(|p| *p > 0.0 && *p <= 100.0)
        .unwrap_or(100.0);
    if span_pct > 99.5 {
        DEFAULT_SETTING.to_string()
    } else {
        setting_for_span(span_pct.round())
    }
}

/// The command line as recorded, or what it would have been.
fn command_line_text(args: &[String], procedure: &str, target: &str) -> String {
    if args.is_empty() {
        format!("storbench {procedure} --target {target} (configuration as recorded: see options)")
    } else {
        shell_words(args)
    }
}

/// A result written as complete although a phase had failed I/Os (storbench before
/// issue 30 did so for `run` and `replay`): the note that marks it incomplete.
fn failed_ios_note(phases: &[(&str, Option<&PhaseMetrics>)]) -> Option<String> {
    let (name, m) = phases
        .iter()
        .find_map(|(n, m)| m.filter(|m| m.errors > 0).map(|m| (n, m)))?;
    let done = m.read_ios + m.write_ios + m.trim_ios + m.flush_ios;
    Some(format!(
        "incomplete: phase {name}: {} of {} I/Os failed; the figures cover only the I/Os that completed",
        m.errors,
        done + m.errors
    ))
}

fn phase_views(phases: &[(&str, Option<&PhaseMetrics>)]) -> Vec<PhaseView> {
    phases
        .iter()
        .map(|(name, m)| {
            let m = m.cloned().unwrap_or_default();
            PhaseView {
                name: name.to_string(),
                duration_s: m.elapsed_ns as f64 / 1e9,
                ios: m.read_ios + m.write_ios + m.trim_ios + m.flush_ios,
                data_rate_mb_s: m.data_rate_mb_per_s,
            }
        })
        .collect()
}

/// A bench's figures: its replay phase, else its last phase.
fn bench_metrics(phases: &[PhaseRecord]) -> Option<BenchView> {
    phases
        .iter()
        .find(|p| p.name == "replay")
        .or_else(|| phases.last())
        .map(|p| bench_view(&p.metrics))
}

/// The drive's preparation from its phases, whichever procedure ran them: the
/// sequential pass (`seq-pass`) and the image restore (`image` of a bench's state,
/// `restore` of a season run; `season-` before them in results of the older
/// `bench --season`, whose image was a generated one). `None` for a run that prepared
/// nothing. `image`: what was restored, when the result says (else `default`).
fn season_view(
    phases: &[PhaseRecord],
    image: Option<String>,
    state: &str,
    default: &str,
) -> Option<SeasonView> {
    let metrics = |names: &[&str]| {
        phases
            .iter()
            .find(|p| names.contains(&p.name.as_str()))
            .map(|p| &p.metrics)
    };
    let seq = metrics(&["seq-pass", "season-seq-pass"]);
    let restore = metrics(&["image", "restore", "season-restore"]);
    if seq.is_none() && restore.is_none() {
        return None;
    }
    let legacy = phases.iter().any(|p| p.name == "season-restore");
    let image = image.unwrap_or_else(|| {
        if legacy {
            "a generated image".into()
        } else {
            default.into()
        }
    });
    Some(SeasonView {
        state: state.to_string(),
        image,
        image_bytes: restore.map_or(0, |m| m.write_bytes),
        image_writes: restore.map_or(0, |m| m.write_ios),
        seq_pass_mb_s: seq.map(|m| m.data_rate_mb_per_s),
        restore_mb_s: restore.map(|m| m.data_rate_mb_per_s),
    })
}

/// The drive's name: its model, except a simulated drive whose model is the
/// simulator's own (`storbench sim ...`, the same for several presets), named by its
/// preset (`sim client-7op`); else the target name.
fn drive_name(t: &storbench_core::TargetInfo) -> String {
    let generic = t
        .model
        .as_deref()
        .is_none_or(|m| m.starts_with("storbench sim"));
    if let (Some(rest), true) = (t.name.strip_prefix("sim:"), generic) {
        let preset = rest.split(',').next().unwrap_or(rest);
        return format!("sim {preset}");
    }
    t.model.clone().unwrap_or_else(|| t.name.clone())
}

fn consistency_view(
    s: Option<&ConsistencySummary>,
    config: &ConsistencyConfig,
    dir: &Path,
) -> Result<ConsistencyView, ReportError> {
    let mut iops = s.map(|s| s.iops_per_s.clone()).unwrap_or_default();
    if iops.is_empty() {
        let p = dir.join("series").join("random-write.parquet");
        if p.is_file() {
            iops = read_parquet_f64(&p, "iops")?;
        } else if dir.join(crate::series::SERIES_FILE).is_file() {
            // One file for every phase (RunResult layout): full 1-second windows only.
            let all = crate::series::read_series(dir)?;
            if let Some((_, ss)) = all.into_iter().find(|(name, _)| name == "random-write") {
                iops = ss
                    .iter()
                    .filter(|x| x.window_ns == 1_000_000_000)
                    .map(|x| x.iops())
                    .collect();
            }
        }
    }
    let scores = s.and_then(|s| s.scores.as_ref());
    let window = scores.map_or(config.score_last_s, |sc| sc.window_s);
    let last: &[f64] = &iops[iops.len().saturating_sub(window)..];
    let (mean, std) = if last.is_empty() {
        (0.0, 0.0)
    } else {
        let m = last.iter().sum::<f64>() / last.len() as f64;
        let v = last.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / last.len() as f64;
        (m, v.sqrt())
    };
    let min_all = iops.iter().cloned().reduce(f64::min).unwrap_or(0.0);
    Ok(ConsistencyView {
        avg_iops_last400: scores.map_or(mean, |x| x.avg),
        std_iops_last400: scores.map_or(std, |x| x.stddev),
        min_iops: scores.map_or(min_all, |x| x.min),
        steady_state_at_s: s.and_then(|s| s.steady_state_at_s).map(|t| t as f64),
        score_window_s: Some(window as f64).filter(|w| *w != 400.0),
        block_bytes: config.block_bytes,
        qd: config.qd,
        iops_per_s: iops,
    })
}

fn bench_view(m: &PhaseMetrics) -> BenchView {
    let sv = &m.service;
    let has = sv.count > 0;
    BenchView {
        data_rate_mb_s: m.data_rate_mb_per_s,
        read_mb_s: m.read_rate_mb_per_s,
        write_mb_s: m.write_rate_mb_per_s,
        service_us_mean: sv.mean_us,
        service_us_std: sv.stddev_us,
        busy_s: m.busy_ns as f64 / 1e9,
        busy_read_s: m.busy_read_ns as f64 / 1e9,
        busy_write_s: m.busy_write_ns as f64 / 1e9,
        percentiles_us: if has {
            vec![
                ("p50".to_string(), sv.p50_us),
                ("p90".to_string(), sv.p90_us),
                ("p99".to_string(), sv.p99_us),
                ("p99.9".to_string(), sv.p99_9_us),
                ("p99.99".to_string(), sv.p99_99_us),
            ]
        } else {
            Vec::new()
        },
        reads: m.read_ios,
        writes: m.write_ios,
        bytes_read: m.read_bytes,
        bytes_written: m.write_bytes,
    }
}

/// The characterize table in human units: `_ns` as time, `_bytes` as bytes, nested
/// objects and long arrays left out (they are in result.json).
fn trace_rows(m: &serde_json::Map<String, serde_json::Value>) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    for (k, v) in m {
        if k == "path" || k == "name" {
            continue;
        }
        let text = match v {
            serde_json::Value::Number(n) => {
                let x = n.as_f64().unwrap_or(0.0);
                if let Some(base) = k.strip_suffix("_ns") {
                    rows.push((base.replace('_', " "), fmt_duration(x / 1e9)));
                    continue;
                } else if let Some(base) = k.strip_suffix("_bytes") {
                    rows.push((base.replace('_', " "), fmt_bytes(x as u64)));
                    continue;
                } else {
                    fmt_num(x)
                }
            }
            serde_json::Value::String(t) => t.clone(),
            serde_json::Value::Bool(b) => b.to_string(),
            _ => continue,
        };
        rows.push((k.replace('_', " "), text));
    }
    rows
}

/// A command line from its arguments, quoted for a POSIX shell where needed.
fn shell_words(a: &[String]) -> String {
    a.iter()
        .map(|t| {
            if t.is_empty() || t.contains(|c: char| c.is_whitespace() || "'\"$`\\".contains(c)) {
                format!("'{}'", t.replace('\'', "'\\''"))
            } else {
                t.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn health_view(before: &Health, after: &Health, delta: &Health) -> HealthView {
    if !before.available && !after.available {
        let why = after
            .note
            .as_deref()
            .or(before.note.as_deref())
            .or(delta.note.as_deref())
            .unwrap_or("no health figures were recorded");
        return HealthView {
            rows: Vec::new(),
            unavailable: Some(why.to_string()),
        };
    }
    let mut rows = Vec::new();
    type Get = fn(&Health) -> Option<f64>;
    let items: [(&str, Get, bool); 6] = [
        ("host GB written", |h| h.host_write_bytes, true),
        ("host GB read", |h| h.host_read_bytes, true),
        ("NAND GB written", |h| h.nand_write_bytes, true),
        ("temperature °C", |h| h.temperature_c, false),
        ("media errors", |h| h.media_errors, false),
        ("percent used", |h| h.used_pct, false),
    ];
    for (label, get, scale_gb) in items {
        let conv = |x: f64| if scale_gb { x / 1e9 } else { x };
        let (b, a) = (get(before).map(conv), get(after).map(conv));
        if b.is_some() || a.is_some() {
            rows.push(HealthRow {
                metric: label.to_string(),
                before: b,
                after: a,
            });
        }
    }
    if let Some(wa) = delta.write_amplification {
        rows.push(HealthRow {
            metric: "write amplification during the run".to_string(),
            before: None,
            after: Some(wa),
        });
    }
    HealthView {
        rows,
        unavailable: None,
    }
}

/// Reads one Float64 column of a Parquet file.
pub fn read_parquet_f64(path: &Path, column: &str) -> Result<Vec<f64>, ReportError> {
    use arrow_array::{Array, Float64Array};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let bad = |m: String| ReportError::Field {
        path: path.to_path_buf(),
        field: column.to_string(),
        message: m,
    };
    let file = std::fs::File::open(path).map_err(|e| ReportError::io(path, "open", e))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| bad(e.to_string()))?
        .build()
        .map_err(|e| bad(e.to_string()))?;
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| bad(e.to_string()))?;
        let col = batch
            .column_by_name(column)
            .ok_or_else(|| bad("no such column".to_string()))?;
        let a = col
            .as_any()
            .downcast_ref::<Float64Array>()
            .ok_or_else(|| bad(format!("is {:?}, not Float64", col.data_type())))?;
        out.extend((0..a.len()).map(|i| if a.is_null(i) { f64::NAN } else { a.value(i) }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use storbench_core::TargetInfo;
    use storbench_metrics::steady::ConsistencyScores;
    use storbench_metrics::LatencyStats;
    use storbench_results::{HealthDelta, HealthSnapshot, Work};

    fn target() -> TargetInfo {
        serde_json::from_str(
            r#"{"kind":"sim","name":"sim:mlc-7op","capacity_bytes":1073741824,
            "logical_block_bytes":4096,"rotational":false,"discard":true,"model":"Sim MLC",
            "backend":"virtual","details":{}}"#,
        )
        .unwrap()
    }

    fn metrics(f: impl FnOnce(&mut PhaseMetrics)) -> PhaseMetrics {
        let mut m = PhaseMetrics::default();
        f(&mut m);
        m
    }

    fn record(name: &str, metrics: PhaseMetrics) -> PhaseRecord {
        PhaseRecord {
            name: name.into(),
            title: name.into(),
            work: Work::Purge,
            time_limit_ns: None,
            metrics,
            purge: None,
            issued_ios: 0,
            job_issued_ios: Vec::new(),
            folded_ios: 0,
            aligned_ios: 0,
            aligned_extra_bytes: 0,
            ended: "source-done".into(),
            segments: 1,
            fidelity: None,
            first_error: None,
            counters: None,
            wall_ms: 0,
        }
    }

    fn health(host: u64, nand: u64) -> HealthSnapshot {
        HealthSnapshot {
            source: "sim".into(),
            available: true,
            host_write_bytes: Some(host),
            nand_write_bytes: Some(nand),
            ..HealthSnapshot::default()
        }
    }

    /// A result as the suite writes it, of `procedure` with its typed parts.
    fn result<C, S>(
        procedure: &str,
        config: C,
        summary: Option<S>,
        phases: Vec<PhaseRecord>,
    ) -> RunResult<C, S> {
        RunResult {
            format: storbench_results::RESULT_FORMAT.into(),
            schema_version: storbench_results::SCHEMA_VERSION,
            command_line: vec!["storbench".into(), procedure.into()],
            options: Default::default(),
            complete: true,
            tool_version: "0.1.0".into(),
            procedure: procedure.into(),
            target: target(),
            config,
            phases,
            summary,
            trace: None,
            health_before: health(1_000_000_000, 2_000_000_000),
            health_after: health(3_000_000_000, 8_000_000_000),
            health_delta: HealthDelta {
                available: true,
                write_amplification: Some(3.0),
                ..HealthDelta::default()
            },
            resumes: 1,
            notes: vec!["resumed once".into()],
            created_unix_ms: 1_795_660_146_275,
            finished_unix_ms: 1_795_660_146_999,
        }
    }

    fn view<C: Serialize, S: Serialize>(r: &RunResult<C, S>) -> RunView {
        let text = serde_json::to_string(r).unwrap();
        from_json(&text, Path::new("x/result.json"), Path::new("x")).unwrap()
    }

    fn consistency_summary() -> ConsistencySummary {
        ConsistencySummary {
            span_bytes: 3 << 28,
            span_pct: 75.0,
            spare_area_pct: 25.0,
            iops_per_s: vec![100.0, 90.0, 80.0],
            scores: Some(ConsistencyScores {
                avg: 85.0,
                stddev: 5.0,
                min: 80.0,
                avg_over_stddev: Some(17.0),
                window_s: 2,
            }),
            round_s: 1,
            round_iops: Vec::new(),
            steady_state: None,
            steady_state_reached: true,
            steady_state_at_s: Some(3),
            precondition_mb_per_s: 500.0,
            ended: "time-limit".into(),
        }
    }

    #[test]
    fn reads_a_consistency_result() {
        let mut c = ConsistencyConfig::quick("sim:mlc-7op");
        (c.span_fraction, c.qd, c.block_bytes, c.score_last_s) = (0.75, 16, 8192, 2);
        let pre = metrics(|m| {
            m.elapsed_ns = 2_000_000_000;
            m.write_ios = 10;
            m.data_rate_mb_per_s = 500.0;
        });
        let mut r = result(
            "consistency",
            c,
            Some(consistency_summary()),
            vec![
                record("precondition", pre),
                record("random-write", PhaseMetrics::default()),
            ],
        );
        r.options = [
            ("qd", "16"),
            ("open", "{\"write\":true}"),
            ("span_fraction", "0.75"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let r = view(&r);
        assert_eq!(r.setting, "25% spare area");
        assert_eq!(r.drive, "Sim MLC", "a model of its own names the drive");
        assert_eq!(r.state, "fresh");
        assert_eq!(r.workload, "8 KB random write QD16");
        assert_eq!(r.date.as_deref(), Some("2026-11-26 02:29"));
        let c = r.consistency.unwrap();
        assert_eq!(c.iops_per_s, vec![100.0, 90.0, 80.0]);
        assert_eq!(
            (c.avg_iops_last400, c.std_iops_last400, c.min_iops),
            (85.0, 5.0, 80.0)
        );
        assert_eq!(c.steady_state_at_s, Some(3.0));
        assert_eq!((c.window_s(), c.window_start_s()), (2.0, 1.0));
        assert_eq!(c.work_text(), "8 KB random writes at QD16");
        assert_eq!(r.phases[0].duration_s, 2.0);
        assert_eq!(r.phases[0].ios, 10);
        assert_eq!(r.notes, vec!["resumed once"]);
        let wa = r
            .health
            .rows
            .iter()
            .find(|h| h.metric.starts_with("write amp"))
            .unwrap();
        assert_eq!(wa.after, Some(3.0));
        let host = &r.health.rows[0];
        assert_eq!(
            (host.metric.as_str(), host.delta()),
            ("host GB written", Some(2.0))
        );
        assert!(r.options.contains(&("qd".to_string(), "16".to_string())));
        assert!(!r.options.iter().any(|o| o.0 == "open"), "no JSON blobs");
    }

    #[test]
    fn reads_trim_check_results() {
        let t = result(
            "trim-check",
            TrimCheckConfig::quick("sim:mlc-7op"),
            Some(TrimTable {
                clean_mb_per_s: 500.0,
                dirty_mb_per_s: 100.0,
                after_trim_mb_per_s: 490.0,
                after_trim_of_clean_pct: 98.0,
                dirty_of_clean_pct: 20.0,
                measure_bytes: 1 << 20,
                trim_pass_s: 1.0,
                note: None,
            }),
            Vec::new(),
        );
        assert_eq!(
            view(&t).trim,
            Some(TrimView {
                clean_mb_s: 500.0,
                dirty_mb_s: 100.0,
                after_trim_mb_s: 490.0,
                note: None
            })
        );
    }

    #[test]
    fn reads_season_results() {
        let seq = metrics(|m| m.data_rate_mb_per_s = 470.0);
        let restore = metrics(|m| {
            m.write_bytes = 65_000_000;
            m.write_ios = 641;
            m.data_rate_mb_per_s = 449.0;
        });
        let s = result(
            "season",
            SeasonConfig::new("sim:mlc-7op"),
            Some(SeasonSummary {
                image: "generated".into(),
                image_restored_bytes: 65_000_000,
                image_writes: 641,
                seq_pass_mb_per_s: 470.0,
                restore_mb_per_s: 449.0,
            }),
            vec![
                record("purge", PhaseMetrics::default()),
                record("seq-pass", seq),
                record("restore", restore),
            ],
        );
        let r = view(&s);
        assert_eq!(r.state, "seasoned");
        let season = r.season.unwrap();
        assert_eq!(
            (season.image.as_str(), season.image_writes),
            ("generated", 641)
        );
        assert_eq!(
            (season.seq_pass_mb_s, season.restore_mb_s),
            (Some(470.0), Some(449.0))
        );
    }

    #[test]
    fn reads_bench_results() {
        let m = metrics(|m| {
            m.data_rate_mb_per_s = 300.0;
            m.read_rate_mb_per_s = 400.0;
            m.write_rate_mb_per_s = 200.0;
            m.busy_ns = 5_000_000_000;
            m.busy_read_ns = 2_000_000_000;
            m.busy_write_ns = 3_500_000_000;
            m.read_ios = 7;
            m.write_ios = 3;
            m.service = LatencyStats {
                count: 10,
                mean_us: 120.0,
                stddev_us: 80.0,
                p50_us: 90.0,
                p99_us: 700.0,
                ..Default::default()
            };
        });
        let mut c = BenchConfig::new(
            "sim:mlc-7op",
            Workload::Profile {
                name: "heavy-2011".into(),
                scale: 0.01,
                seed: 1,
            },
        );
        c.state = storbench_results::bench::DriveState::Seasoned;
        let characterize = serde_json::json!({"reads":10,"sequential_pct":42.0,
            "duration_ns":90000000000u64,"read_bytes":1500000});
        let b = result(
            "bench",
            c,
            Some(BenchSummary {
                trace_name: "heavy-2011 x0.01".into(),
                characterize: characterize.as_object().cloned(),
                state: "seasoned".into(),
                ..bench_summary()
            }),
            vec![record("replay", m)],
        );
        let r = view(&b);
        assert_eq!(
            (r.state.as_str(), r.workload.as_str()),
            ("seasoned", "heavy-2011")
        );
        assert_eq!(r.season, None, "no preparation phase in this result");
        let bench = r.bench.unwrap();
        assert_eq!(
            (bench.data_rate_mb_s, bench.busy_s, bench.reads),
            (300.0, 5.0, 7)
        );
        assert_eq!((bench.busy_read_s, bench.busy_write_s), (2.0, 3.5));
        assert_eq!(bench.percentiles_us[2], ("p99".to_string(), 700.0));
        assert_eq!(r.traces[0].name, "heavy-2011 x0.01");
        let rows = &r.traces[0].rows;
        assert!(
            rows.contains(&("sequential pct".to_string(), "42".to_string())),
            "{rows:?}"
        );
        assert!(
            rows.contains(&("duration".to_string(), "0:01:30".to_string())),
            "{rows:?}"
        );
        assert!(
            rows.contains(&("read".to_string(), "1.5 MB".to_string())),
            "{rows:?}"
        );
    }

    fn bench_summary() -> BenchSummary {
        BenchSummary {
            trace: "t".into(),
            data_rate_mb_per_s: 0.0,
            read_rate_mb_per_s: 0.0,
            write_rate_mb_per_s: 0.0,
            service: LatencyStats::default(),
            service_read: LatencyStats::default(),
            service_write: LatencyStats::default(),
            busy_s: 0.0,
            reads: 0,
            writes: 0,
            read_bytes: 0,
            write_bytes: 0,
            span_bytes: 0,
            folded_ios: 0,
            trace_avg_qd: None,
            replayed_avg_qd: None,
            state: "as-is".into(),
            used_passes: None,
            image: None,
            image_bytes: 0,
            image_writes: 0,
            image_mb_per_s: None,
            seq_pass_mb_per_s: None,
            replay_counters: None,
            max_idle_s: None,
            trims_skipped: 0,
            data: "random".into(),
            trace_name: "t".into(),
            characterize: None,
        }
    }

    /// Issue 32: the seasoning section shows every bench state's preparation phases,
    /// not only a season run's: a fresh drive's image restore without a sequential pass.
    #[test]
    fn a_bench_states_preparation_is_its_seasoning() {
        let image = metrics(|m| {
            m.write_bytes = 4096 * 100;
            m.write_ios = 100;
            m.data_rate_mb_per_s = 300.0;
        });
        let mut c = BenchConfig::new(
            "sim:x",
            Workload::Trace {
                path: "t.parquet".into(),
            },
        );
        c.state = storbench_results::bench::DriveState::Fresh;
        let b = result(
            "bench",
            c,
            Some(BenchSummary {
                state: "fresh".into(),
                image: Some("the trace's image".into()),
                ..bench_summary()
            }),
            vec![
                record("purge", PhaseMetrics::default()),
                record("image", image.clone()),
                record("replay", image),
            ],
        );
        let s = view(&b).season.unwrap();
        assert_eq!(s.state, "fresh");
        assert_eq!((s.seq_pass_mb_s, s.restore_mb_s), (None, Some(300.0)));
        assert_eq!(
            (s.image.as_str(), s.image_writes),
            ("the trace's image", 100)
        );
    }

    /// An incomplete bench has no summary: its state is its configuration's.
    #[test]
    fn an_incomplete_bench_takes_its_state_from_the_configuration() {
        let mut c = BenchConfig::new(
            "sim:x",
            Workload::Trace {
                path: "t.parquet".into(),
            },
        );
        c.state = storbench_results::bench::DriveState::Used;
        let mut b = result::<_, BenchSummary>("bench", c, None, Vec::new());
        b.complete = false;
        let v = view(&b);
        assert_eq!((v.state.as_str(), v.complete), ("used", false));
    }

    /// A procedure this build does not know loads for what every result has.
    #[test]
    fn an_unknown_procedure_loads_its_common_parts() {
        let r = result(
            "fixture",
            serde_json::json!({"anything": 1}),
            Some(serde_json::json!({"figure": 2})),
            vec![record("only", metrics(|m| m.write_ios = 5))],
        );
        let v = view(&r);
        assert_eq!(
            (v.procedure.as_str(), v.workload.as_str()),
            ("fixture", "fixture")
        );
        assert_eq!(v.phases[0].ios, 5);
        assert!(v.consistency.is_none() && v.bench.is_none());
    }

    const TARGET: &str = r#"{"kind":"sim","name":"sim:mlc-7op","capacity_bytes":1073741824,
        "logical_block_bytes":4096,"rotational":false,"discard":true,"model":"Sim MLC",
        "backend":"virtual","details":{}}"#;

    #[test]
    fn reads_the_run_result_layout() {
        let m = serde_json::to_string(&metrics(|m| m.data_rate_mb_per_s = 10.0)).unwrap();
        let text = r#"{"schema_version":1,"tool_version":"0.1.0","command_line":["storbench","replay","my trace.parquet"],
            "procedure":"bench","target":TGT,"trace":{"name":"mine","reads":5},"options":{"qd":"8","open":"{\"a\":1}"},
            "phases":[{"name":"replay","metrics":M,"scores":{}}],
            "health":{"before":{"available":false,"note":"no smartctl"}},"complete":false,"notes":[]}"#
            .replace("TGT", TARGET)
            .replace("M,", &format!("{m},"));
        let r = from_json(&text, Path::new("r.json"), Path::new(".")).unwrap();
        assert_eq!(r.command_line, "storbench replay 'my trace.parquet'");
        assert_eq!(r.options, vec![("qd".to_string(), "8".to_string())]);
        assert!(!r.complete);
        assert_eq!(r.traces[0].name, "mine");
        assert_eq!(r.bench.unwrap().data_rate_mb_s, 10.0);
        assert_eq!(r.health.unavailable.as_deref(), Some("no smartctl"));
    }

    #[test]
    fn bad_input_names_file_and_field() {
        let e = from_json(
            r#"{"target":{}}"#,
            Path::new("d/result.json"),
            Path::new("d"),
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("d/result.json: "), "{e}");
        let e = from_json(
            &format!(r#"{{"target":{TARGET}}}"#),
            Path::new("d/result.json"),
            Path::new("d"),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "d/result.json: field `procedure`: missing; is this a storbench result.json?"
        );
        let e = from_json("{\n  oops", Path::new("d/result.json"), Path::new("d")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("d/result.json: line 2, column 3:"),
            "{e}"
        );
        // A renamed figure is an error naming the file and the field, not a silent zero.
        let t = result(
            "trim-check",
            TrimCheckConfig::quick("sim:x"),
            Some(serde_json::json!({"clean_mb_s": 500.0})),
            Vec::new(),
        );
        let text = serde_json::to_string(&t).unwrap();
        let e = from_json(&text, Path::new("d/result.json"), Path::new("d")).unwrap_err();
        assert!(
            e.to_string().starts_with("d/result.json: line 1, column ")
                && e.to_string().contains("missing field `clean_mb_per_s`"),
            "{e}"
        );
    }

    #[test]
    fn unavailable_health_is_said_plainly() {
        let mut r =
            result::<_, SeasonSummary>("season", SeasonConfig::new("sim:x"), None, Vec::new());
        r.health_before = HealthSnapshot::unavailable("smartctl", "smartctl not installed");
        r.health_after = r.health_before.clone();
        let v = view(&r);
        assert_eq!(
            v.health.unavailable.as_deref(),
            Some("smartctl not installed")
        );
        assert_eq!(v.setting, "Default");
    }
}

/// The result directories under `path`: `path` itself when it holds a result.json,
/// otherwise its immediate subdirectories that do (sorted by name), so the output
/// directory of `storbench demo` or of several runs can be given as one argument.
pub fn discover(path: &Path) -> Result<Vec<PathBuf>, ReportError> {
    if path.join(RESULT_FILE).is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let rd = std::fs::read_dir(path).map_err(|e| ReportError::io(path, "list", e))?;
    let mut out = Vec::new();
    for e in rd {
        let e = e.map_err(|e| ReportError::io(path, "list", e))?;
        let p = e.path();
        if p.join(RESULT_FILE).is_file() {
            out.push(p);
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod discover_tests {
    use super::*;

    #[test]
    fn finds_the_dir_itself_or_its_result_subdirs() {
        let d = tempfile::tempdir().unwrap();
        for sub in ["b", "a", "empty"] {
            std::fs::create_dir(d.path().join(sub)).unwrap();
        }
        std::fs::write(d.path().join("b").join(RESULT_FILE), "{}").unwrap();
        std::fs::write(d.path().join("a").join(RESULT_FILE), "{}").unwrap();
        assert_eq!(
            discover(d.path()).unwrap(),
            vec![d.path().join("a"), d.path().join("b")]
        );
        assert_eq!(
            discover(&d.path().join("a")).unwrap(),
            vec![d.path().join("a")]
        );
        assert!(discover(&d.path().join("empty")).unwrap().is_empty());
        assert!(discover(&d.path().join("missing")).is_err());
    }
}
