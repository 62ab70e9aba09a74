//! Reads a result directory (`DIR/result.json`, written by the procedures) into a
//! [`RunView`].
//!
//! The file is deserialized into typed structs ([`crate::read`]): the writer's own
//! metric types where they live below the report, a serde mirror of the rest. Fields
//! the report does not use are ignored, so newer results still load; a field it uses
//! with the wrong type or a missing required one is an error naming the file and field.
//! Consistency IOPS come from the result's summary, or else from the random-write
//! phase's Parquet series.

use super::view::*;
use crate::read::{self, ResultFile};
use std::path::{Path, PathBuf};
use storbench_metrics::PhaseMetrics;

pub use crate::result::RESULT_FILE;

/// The twin `storbench twin fit` writes beside a twin measurement's result.
pub const TWIN_FILE: &str = "twin.json";
use crate::ReportError;

/// Reads `dir/result.json` (and, when needed, its series) into a view.
pub fn load(dir: &Path) -> Result<(RunView, String), ReportError> {
    let path = dir.join(RESULT_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| ReportError::io(&path, "read", e))?;
    let mut view = from_json(&text, &path, dir)?;
    view.twin = load_twin(dir)?;
    Ok((view, text))
}

/// `dir/twin.json` (written by `storbench twin fit`), when there is one.
fn load_twin(dir: &Path) -> Result<Option<super::view::TwinView>, ReportError> {
    let path = dir.join(TWIN_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ReportError::io(&path, "read", e)),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| ReportError::Field {
            path: path.clone(),
            field: "twin".into(),
            message: e.to_string(),
        })
}

fn scalar_text(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::String(t) => t.clone(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), fmt_num),
        Value::Null => "-".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Array(a) => format!("[{} values]", a.len()),
        Value::Object(_) => "{…}".to_string(),
    }
}

/// A typed part of the file (`summary`, `config`): an error names the file and field.
fn part<T: serde::de::DeserializeOwned>(
    v: &Option<serde_json::Value>,
    path: &Path,
    field: &str,
) -> Result<Option<T>, ReportError> {
    match v {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(v) => T::deserialize(v).map(Some).map_err(|e| ReportError::Field {
            path: path.to_path_buf(),
            field: field.to_string(),
            message: e.to_string(),
        }),
    }
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

/// Options worth showing: scalars, and the rest summarized (no JSON blobs in tables).
fn option_rows(r: &ResultFile) -> Vec<(String, String)> {
    if let Some(serde_json::Value::Object(m)) = &r.config {
        return m
            .iter()
            .filter(|(k, v)| *k != "open" && !v.is_null())
            .map(|(k, v)| (k.clone(), scalar_text(v)))
            .collect();
    }
    r.options
        .iter()
        .filter(|(_, v)| !v.starts_with('{') && v.as_str() != "null")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Builds a view from the text of a result.json. `path` names the file in errors;
/// `dir` is where series files are looked for.
pub fn from_json(text: &str, path: &Path, dir: &Path) -> Result<RunView, ReportError> {
    let r = parse(text, path)?;
    let config: read::Config = part(&r.config, path, "config")?.unwrap_or_default();
    let procedure = r.procedure.as_str();
    // The summary is the procedure's own: read as that procedure's type only.
    let summary = |name: &str| (procedure == name).then(|| r.summary.clone()).flatten();
    let cons_summary: Option<read::ConsistencySummary> =
        part(&summary("consistency"), path, "summary")?;
    let bench_summary: Option<read::BenchSummary> = part(&summary("bench"), path, "summary")?;
    let trim: Option<read::TrimSummary> = part(&summary("trim-check"), path, "summary")?;
    let season = match part::<read::SeasonSummary>(&summary("season"), path, "summary")? {
        Some(s) => Some(s),
        None => bench_summary.as_ref().and_then(|b| b.seasoning.clone()),
    };
    let setting = setting_text(cons_summary.as_ref(), &config);
    let consistency = match cons_summary {
        Some(s) => Some(consistency_view(&s, &config, dir)?),
        None if procedure == "consistency" => Some(consistency_view(
            &read::ConsistencySummary::default(),
            &config,
            dir,
        )?),
        None => None,
    };
    let workload = workload_text(procedure, &config, bench_summary.as_ref(), &r);
    Ok(RunView {
        source: dir.display().to_string(),
        drive: drive_name(&r.target),
        setting,
        procedure: procedure.to_string(),
        tool_version: format!("storbench {}", r.tool_version.as_deref().unwrap_or("?")),
        command_line: command_line_text(&r, &config),
        options: option_rows(&r),
        complete: r.complete && failed_ios_note(&r).is_none(),
        notes: notes(&r),
        phases: phase_views(&r),
        consistency,
        bench: (procedure == "bench").then(|| bench_metrics(&r)).flatten(),
        trim: trim.map(trim_view),
        twin: None,
        traces: trace_views(&r, bench_summary.as_ref(), &workload),
        health: health_view(&r),
        target: r.target.clone(),
        state: state_text(procedure, bench_summary.as_ref(), &config),
        workload,
        date: r.created_unix_ms.map(utc_minute),
        name: String::new(),
        season: season.map(season_view),
        highlight: false,
    })
}

/// The file deserialized; a file without `procedure` is probably not a result at all.
fn parse(text: &str, path: &Path) -> Result<ResultFile, ReportError> {
    serde_json::from_str(text).map_err(|e| {
        if e.is_data() && e.to_string().starts_with("missing field `procedure`") {
            ReportError::Field {
                path: path.to_path_buf(),
                field: "procedure".into(),
                message: "missing; is this a storbench result.json?".into(),
            }
        } else {
            ReportError::json(path, &e)
        }
    })
}

/// The spare-area setting from the tested span; within half a percent of full is the
/// default setting (spans are block-aligned).
fn setting_text(consistency: Option<&read::ConsistencySummary>, config: &read::Config) -> String {
    let span_percent = consistency
        .and_then(|s| s.span_percent)
        .or_else(|| config.span_fraction.map(|x| x * 100.0))
        .filter(|p| *p > 0.0 && *p <= 100.0)
        .unwrap_or(100.0);
    if span_percent > 99.5 {
        DEFAULT_SETTING.to_string()
    } else {
        setting_for_span(span_percent.round())
    }
}

/// The command line as recorded, or what it would have been.
fn command_line_text(r: &ResultFile, config: &read::Config) -> String {
    match &r.command_line {
        Some(read::CommandLine::Text(t)) => t.clone(),
        Some(read::CommandLine::Args(a)) if !a.is_empty() => shell_words(a),
        _ => format!(
            "storbench {} --target {} (configuration as recorded: see options)",
            r.procedure,
            config.target.as_deref().unwrap_or(&r.target.name)
        ),
    }
}

/// A result written as complete although a phase had failed I/Os (storbench before
/// issue 30 did so for `run` and `replay`): the note that marks it incomplete.
fn failed_ios_note(r: &ResultFile) -> Option<String> {
    let (name, m) = r.phases.iter().find_map(|p| {
        p.metrics
            .as_ref()
            .filter(|m| m.errors > 0)
            .map(|m| (&p.name, m))
    })?;
    let done = m.read_ios + m.write_ios + m.trim_ios + m.flush_ios;
    Some(format!(
        "incomplete: phase {name}: {} of {} I/Os failed; the figures cover only the I/Os that completed",
        m.errors,
        done + m.errors
    ))
}

/// The result's notes; a result that failed I/Os without saying so gets the note first.
fn notes(r: &ResultFile) -> Vec<String> {
    let mut notes = r.notes.clone();
    if r.complete {
        if let Some(n) = failed_ios_note(r) {
            notes.insert(0, n);
        }
    }
    notes
}

fn phase_views(r: &ResultFile) -> Vec<PhaseView> {
    r.phases
        .iter()
        .map(|p| {
            let m = p.metrics.clone().unwrap_or_default();
            PhaseView {
                name: p.name.clone(),
                duration_s: m.elapsed_ns as f64 / 1e9,
                ios: m.read_ios + m.write_ios + m.trim_ios + m.flush_ios,
                data_rate_mb_s: m.data_rate_mb_per_s,
            }
        })
        .collect()
}

/// A bench's figures: its replay phase, else its last phase with metrics.
fn bench_metrics(r: &ResultFile) -> Option<BenchView> {
    r.phases
        .iter()
        .find(|p| p.name == "replay")
        .and_then(|p| p.metrics.as_ref())
        .or_else(|| r.phases.iter().rev().find_map(|p| p.metrics.as_ref()))
        .map(bench_view)
}

fn trim_view(t: read::TrimSummary) -> TrimView {
    TrimView {
        clean_mb_s: t.clean_mb_per_s,
        dirty_mb_s: t.dirty_mb_per_s,
        after_trim_mb_s: t.after_trim_mb_per_s,
        note: t.note,
    }
}

fn season_view(s: read::SeasonSummary) -> SeasonView {
    SeasonView {
        image: s.image,
        image_bytes: s.image_bytes_restored,
        image_writes: s.image_writes,
        seq_pass_mb_s: s.seq_pass_mb_per_s,
        restore_mb_s: s.restore_mb_per_s,
    }
}

/// The drive state: as the bench wrote it, else from the configuration.
fn state_text(
    procedure: &str,
    bench: Option<&read::BenchSummary>,
    config: &read::Config,
) -> String {
    bench
        .and_then(|b| b.state.clone())
        .or_else(|| config.state.clone())
        .unwrap_or_else(|| {
            let seasoned =
                procedure == "season" || config.season.as_ref().is_some_and(|s| !s.is_null());
            if seasoned { "seasoned" } else { "fresh" }.to_string()
        })
}

/// The characterize table of the trace used.
fn trace_views(
    r: &ResultFile,
    bench: Option<&read::BenchSummary>,
    workload: &str,
) -> Vec<TraceView> {
    let characterize = bench
        .and_then(|b| b.characterize.clone())
        .or_else(|| r.trace.clone())
        .filter(|t| t.is_object());
    let Some(obj) = characterize else {
        return Vec::new();
    };
    let name = bench
        .and_then(|b| b.trace_name.clone())
        .or_else(|| obj.get("name").and_then(|n| n.as_str()).map(str::to_string))
        .unwrap_or_else(|| workload.to_string());
    vec![TraceView {
        name,
        rows: trace_rows(&obj),
    }]
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

fn workload_text(
    procedure: &str,
    config: &read::Config,
    bench: Option<&read::BenchSummary>,
    r: &ResultFile,
) -> String {
    let bs = config.block_bytes.map(fmt_block);
    match procedure {
        "bench" => match &config.workload {
            Some(read::BenchWorkload::Profile { name, .. }) => name.clone(),
            Some(read::BenchWorkload::Trace { path }) => path
                .file_stem()
                .map_or("trace".into(), |s| s.to_string_lossy().into_owned()),
            None => bench
                .and_then(|b| b.trace_name.clone())
                .unwrap_or_else(|| "trace".into()),
        },
        "consistency" => format!(
            "{} random write QD{}",
            bs.unwrap_or_else(|| "4 KB".into()),
            config.qd.unwrap_or(32)
        ),
        "trim-check" => "TRIM check".to_string(),
        "season" => "seasoning".to_string(),
        "run" => {
            let pattern = config.pattern.clone().unwrap_or_else(|| "run".into());
            let mix = match &config.mix {
                Some(serde_json::Value::Object(m)) => m
                    .iter()
                    .next()
                    .map(|(k, v)| match v.get("read_pct").and_then(|x| x.as_u64()) {
                        Some(0) => "write".to_string(),
                        Some(100) => "read".to_string(),
                        Some(p) => format!("{p}% read"),
                        None => k.clone(),
                    })
                    .unwrap_or_default(),
                Some(serde_json::Value::String(k)) => k.clone(),
                _ => String::new(),
            };
            format!(
                "{} {pattern} {mix} QD{}",
                bs.unwrap_or_default(),
                config.qd.unwrap_or(1)
            )
            .trim()
            .to_string()
        }
        "replay" => r
            .trace
            .as_ref()
            .and_then(|t| t.get("path"))
            .or_else(|| config.trace.as_ref().and_then(|t| t.get("path")))
            .and_then(|p| p.as_str())
            .and_then(|p| {
                Path::new(p)
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
            })
            .unwrap_or_else(|| "replay".into()),
        other => other.to_string(),
    }
}

fn consistency_view(
    s: &read::ConsistencySummary,
    config: &read::Config,
    dir: &Path,
) -> Result<ConsistencyView, ReportError> {
    let mut iops = s.iops_per_s.clone();
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
    let window = s
        .scores
        .as_ref()
        .map(|sc| sc.window_s)
        .or(config.score_last_s.map(|w| w as usize))
        .unwrap_or(400);
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
        avg_iops_last400: s.scores.as_ref().map_or(mean, |x| x.avg),
        std_iops_last400: s.scores.as_ref().map_or(std, |x| x.stddev),
        min_iops: s.scores.as_ref().map_or(min_all, |x| x.min),
        steady_state_at_s: s.steady_state_at_s,
        score_window_s: Some(window as f64).filter(|w| *w != 400.0),
        block_bytes: config.block_bytes.unwrap_or(4096),
        qd: config.qd.unwrap_or(32),
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
fn trace_rows(obj: &serde_json::Value) -> Vec<(String, String)> {
    let Some(m) = obj.as_object() else {
        return Vec::new();
    };
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

fn health_view(r: &ResultFile) -> HealthView {
    let nested = r.health.as_ref();
    let empty = read::Health::default();
    let before = r
        .health_before
        .as_ref()
        .or_else(|| nested.and_then(|n| n.before.as_ref()))
        .unwrap_or(&empty);
    let after = r
        .health_after
        .as_ref()
        .or_else(|| nested.and_then(|n| n.after.as_ref()))
        .unwrap_or(&empty);
    let delta = r
        .health_delta
        .as_ref()
        .or_else(|| nested.and_then(|n| n.delta.as_ref()))
        .unwrap_or(&empty);
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
    type Get = fn(&read::Health) -> Option<f64>;
    let items: [(&str, Get, bool); 6] = [
        ("host GB written", |h| h.host_write_bytes, true),
        ("host GB read", |h| h.host_read_bytes, true),
        ("NAND GB written", |h| h.nand_write_bytes, true),
        ("temperature °C", |h| h.temperature_c, false),
        ("media errors", |h| h.media_errors, false),
        ("percent used", |h| h.percent_used, false),
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
    use serde_json::json;
    use storbench_metrics::LatencyStats;

    const TARGET: &str = r#"{"kind":"sim","name":"sim:mlc-7op","capacity_bytes":1073741824,
        "logical_block_bytes":4096,"rotational":false,"discard":true,"model":"Sim MLC",
        "backend":"virtual","details":{}}"#;

    /// Metrics as the writer serializes them (every field present).
    fn metrics(f: impl FnOnce(&mut PhaseMetrics)) -> String {
        let mut m = PhaseMetrics::default();
        f(&mut m);
        serde_json::to_string(&m).unwrap()
    }

    fn result(procedure: &str, config: &str, summary: &str, phases: &str) -> String {
        format!(
            r#"{{"format":"storbench-suite-result/1","schema_version":1,"tool_version":"0.1.0","procedure":"{procedure}",
            "target":{TARGET},"config":{config},"options":{{}},"complete":true,
            "phases":{phases},"summary":{summary},
            "health_before":{{"source":"sim","available":true,"host_write_bytes":1000000000,"nand_write_bytes":2000000000}},
            "health_after":{{"source":"sim","available":true,"host_write_bytes":3000000000,"nand_write_bytes":8000000000}},
            "health_delta":{{"available":true,"write_amplification":3.0}},
            "created_unix_ms":1795660146275,"notes":["resumed once"]}}"#
        )
    }

    #[test]
    fn reads_a_consistency_result() {
        let pre = metrics(|m| {
            m.elapsed_ns = 2_000_000_000;
            m.write_ios = 10;
            m.data_rate_mb_per_s = 500.0;
        });
        let text = result(
            "consistency",
            r#"{"target":"sim:mlc-7op","span_fraction":0.75,"qd":16,"block_bytes":8192,"score_last_s":2,"open":{"write":true}}"#,
            r#"{"span_percent":75.0,"iops_per_s":[100.0,90.0,80.0],"scores":{"avg":85.0,"stddev":5.0,"min":80.0,"avg_over_stddev":17.0,"window_s":2},
               "steady_state_at_s":3}"#,
            &format!(
                r#"[{{"name":"precondition","metrics":{pre}}},{{"name":"random-write","metrics":null}}]"#
            ),
        );
        let r = from_json(&text, Path::new("x/result.json"), Path::new("x")).unwrap();
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
    fn reads_trim_season_and_bench_results() {
        let t = result(
            "trim-check",
            "{}",
            r#"{"clean_mb_per_s":500.0,"dirty_mb_per_s":100.0,"after_trim_mb_per_s":490.0,"note":null}"#,
            "[]",
        );
        let r = from_json(&t, Path::new("r.json"), Path::new(".")).unwrap();
        assert_eq!(
            r.trim,
            Some(TrimView {
                clean_mb_s: 500.0,
                dirty_mb_s: 100.0,
                after_trim_mb_s: 490.0,
                note: None
            })
        );
        let s = result(
            "season",
            "{}",
            r#"{"image":"generated","image_bytes_restored":65000000,"image_writes":641,"seq_pass_mb_per_s":470.0,"restore_mb_per_s":449.0}"#,
            "[]",
        );
        let r = from_json(&s, Path::new("r.json"), Path::new(".")).unwrap();
        assert_eq!(r.state, "seasoned");
        assert_eq!(r.season.unwrap().image_writes, 641);
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
        let b = result(
            "bench",
            r#"{"workload":{"kind":"profile","name":"heavy-2011","scale":0.01,"seed":1},"season":{"passes":1}}"#,
            r#"{"trace_name":"heavy-2011 x0.01","characterize":{"reads":10,"sequential_pct":42.0,"duration_ns":90000000000,"read_bytes":1500000}}"#,
            &format!(r#"[{{"name":"replay","metrics":{m}}}]"#),
        );
        let r = from_json(&b, Path::new("r.json"), Path::new(".")).unwrap();
        assert_eq!(
            (r.state.as_str(), r.workload.as_str()),
            ("seasoned", "heavy-2011")
        );
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

    #[test]
    fn a_bench_state_written_by_the_suite_wins() {
        let b = result("bench", r#"{"state":"used"}"#, r#"{"state":"used"}"#, "[]");
        assert_eq!(
            from_json(&b, Path::new("r.json"), Path::new("."))
                .unwrap()
                .state,
            "used"
        );
    }

    #[test]
    fn reads_the_run_result_layout() {
        let m = metrics(|m| m.data_rate_mb_per_s = 10.0);
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
        // A renamed metric is an error naming the summary, not a silent zero.
        let t = result("trim-check", "{}", r#"{"clean_mb_s":500.0}"#, "[]");
        let e = from_json(&t, Path::new("d/result.json"), Path::new("d")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("d/result.json: field `summary`: missing field `clean_mb_per_s`"),
            "{e}"
        );
    }

    #[test]
    fn unavailable_health_is_said_plainly() {
        let text = r#"{"procedure":"season","target":TGT,"health_before":{"available":false,"note":"smartctl not installed"}}"#
            .replace("TGT", TARGET);
        let r = from_json(&text, Path::new("r.json"), Path::new(".")).unwrap();
        assert_eq!(
            r.health.unavailable.as_deref(),
            Some("smartctl not installed")
        );
        assert_eq!(r.setting, "Default");
        let _ = json!(null);
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
