//! Reads a result directory (`DIR/result.json`, written by the procedures) into a
//! [`RunView`].
//!
//! The reader is tolerant by design: it takes the fields it knows by name and ignores
//! the rest, so results written by older or newer storbench versions still report.
//! Consistency IOPS come from the result's summary, or else from the random-write
//! phase's Parquet series (`series/random-write.parquet`, column `iops`).

use super::view::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use storbench_engine::target::TargetInfo;

pub use crate::result::RESULT_FILE;
use crate::ReportError;

/// Reads `dir/result.json` (and, when needed, its series) into a view.
pub fn load(dir: &Path) -> Result<(RunView, String), ReportError> {
    let path = dir.join(RESULT_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| ReportError::io(&path, "read", e))?;
    let view = from_json(&text, &path, dir)?;
    Ok((view, text))
}

fn f(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}
fn u(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}
fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(t) => t.clone(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), fmt_num),
        Value::Null => "-".to_string(),
        other => other.to_string(),
    }
}

/// Flattens an object into `a.b = value` pairs (arrays longer than 8 are summarized).
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out);
            }
        }
        Value::Array(a) if a.len() > 8 => {
            out.push((prefix.to_string(), format!("[{} values]", a.len())))
        }
        Value::Array(a) => out.push((
            prefix.to_string(),
            a.iter().map(scalar_text).collect::<Vec<_>>().join(", "),
        )),
        x => out.push((prefix.to_string(), scalar_text(x))),
    }
}

/// Builds a view from the text of a result.json. `path` names the file in errors;
/// `dir` is where series files are looked for.
pub fn from_json(text: &str, path: &Path, dir: &Path) -> Result<RunView, ReportError> {
    let v: Value = serde_json::from_str(text).map_err(|e| ReportError::json(path, &e))?;
    let field_err = |field: &str, message: String| ReportError::Field {
        path: path.to_path_buf(),
        field: field.to_string(),
        message,
    };
    let procedure = s(&v, "procedure")
        .ok_or_else(|| {
            field_err(
                "procedure",
                "missing; is this a storbench result.json?".into(),
            )
        })?
        .to_string();
    let target: TargetInfo =
        serde_json::from_value(v.get("target").cloned().unwrap_or(Value::Null))
            .map_err(|e| field_err("target", e.to_string()))?;
    let summary = v.get("summary").cloned().unwrap_or(Value::Null);
    let config = v
        .get("config")
        .or_else(|| v.get("options"))
        .cloned()
        .unwrap_or(Value::Null);

    let mut options = Vec::new();
    flatten("", &config, &mut options);
    let span_percent = f(&summary, "span_percent")
        .or_else(|| f(&config, "span_fraction").map(|x| x * 100.0))
        .filter(|p| *p > 0.0 && *p <= 100.0)
        .unwrap_or(100.0);
    // A span within half a percent of full is the default setting (spans are block-aligned).
    let setting = if span_percent > 99.5 {
        DEFAULT_SETTING.to_string()
    } else {
        setting_for_span(span_percent.round())
    };
    let command_line = command_line_text(v.get("command_line")).unwrap_or_else(|| {
        format!(
            "storbench {procedure} --target {} (configuration as recorded: see options)",
            s(&config, "target").unwrap_or(&target.name)
        )
    });

    let phases_v = v
        .get("phases")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let phases: Vec<PhaseView> = phases_v
        .iter()
        .map(|p| {
            let m = p.get("metrics").cloned().unwrap_or(Value::Null);
            PhaseView {
                name: s(p, "name").unwrap_or("?").to_string(),
                duration_s: u(&m, "elapsed_ns") as f64 / 1e9,
                ios: u(&m, "read_ios")
                    + u(&m, "write_ios")
                    + u(&m, "trim_ios")
                    + u(&m, "flush_ios"),
                data_rate_mb_s: f(&m, "data_rate_mb_per_s").unwrap_or(0.0),
            }
        })
        .collect();
    let phase_metrics = |name: &str| {
        phases_v
            .iter()
            .find(|p| s(p, "name") == Some(name))
            .and_then(|p| p.get("metrics"))
            .filter(|m| !m.is_null())
            .cloned()
    };

    let consistency = if procedure == "consistency" {
        let mut iops: Vec<f64> = summary
            .get("iops_per_s")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default();
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
        let sc = summary.get("scores").cloned().unwrap_or(Value::Null);
        let last: &[f64] = &iops[iops.len().saturating_sub(400)..];
        let mean = if last.is_empty() {
            0.0
        } else {
            last.iter().sum::<f64>() / last.len() as f64
        };
        let std = if last.is_empty() {
            0.0
        } else {
            (last.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / last.len() as f64).sqrt()
        };
        Some(ConsistencyView {
            avg_iops_last400: f(&sc, "avg").unwrap_or(mean),
            std_iops_last400: f(&sc, "stddev").unwrap_or(std),
            min_iops: f(&sc, "min")
                .unwrap_or_else(|| iops.iter().cloned().reduce(f64::min).unwrap_or(0.0)),
            steady_state_at_s: f(&summary, "steady_state_at_s"),
            score_window_s: f(&sc, "window_s").filter(|w| *w != 400.0),
            iops_per_s: iops,
        })
    } else {
        None
    };

    let trim = match (
        f(&summary, "clean_mb_per_s"),
        f(&summary, "dirty_mb_per_s"),
        f(&summary, "after_trim_mb_per_s"),
    ) {
        (Some(clean_mb_s), Some(dirty_mb_s), Some(after_trim_mb_s)) => Some(TrimView {
            clean_mb_s,
            dirty_mb_s,
            after_trim_mb_s,
        }),
        _ => None,
    };

    let bench = if procedure == "bench" {
        phase_metrics("replay")
            .or_else(|| {
                phases_v
                    .iter()
                    .rev()
                    .find_map(|p| p.get("metrics").filter(|m| !m.is_null()).cloned())
            })
            .map(|m| {
                let sv = m.get("service").cloned().unwrap_or(Value::Null);
                let pct = |label: &str, key: &str| f(&sv, key).map(|x| (label.to_string(), x));
                BenchView {
                    data_rate_mb_s: f(&m, "data_rate_mb_per_s").unwrap_or(0.0),
                    read_mb_s: f(&m, "read_rate_mb_per_s").unwrap_or(0.0),
                    write_mb_s: f(&m, "write_rate_mb_per_s").unwrap_or(0.0),
                    service_us_mean: f(&sv, "mean_us").unwrap_or(0.0),
                    service_us_std: f(&sv, "stddev_us").unwrap_or(0.0),
                    busy_s: u(&m, "busy_ns") as f64 / 1e9,
                    // Only the percentiles the result has (a view never holds NaN).
                    percentiles_us: [
                        pct("p50", "p50_us"),
                        pct("p90", "p90_us"),
                        pct("p99", "p99_us"),
                        pct("p99.9", "p99_9_us"),
                        pct("p99.99", "p99_99_us"),
                    ]
                    .into_iter()
                    .flatten()
                    .collect(),
                    reads: u(&m, "read_ios"),
                    writes: u(&m, "write_ios"),
                    bytes_read: u(&m, "read_bytes"),
                    bytes_written: u(&m, "write_bytes"),
                }
            })
    } else {
        None
    };

    // Characterize tables: `summary.characterize` (or `summary.trace`, or the top-level
    // `trace`, when it is an object).
    let mut traces = Vec::new();
    for obj in [
        summary.get("characterize"),
        summary.get("trace"),
        v.get("trace"),
    ] {
        if let Some(obj) = obj.filter(|x| x.is_object()) {
            let name = s(obj, "name")
                .or_else(|| s(&summary, "trace_name"))
                .or_else(|| s(&config, "trace"))
                .unwrap_or("trace")
                .to_string();
            let mut rows = Vec::new();
            flatten("", obj, &mut rows);
            traces.push(TraceView { name, rows });
            break;
        }
    }

    let health = health_view(&v);
    let notes: Vec<String> = v
        .get("notes")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let complete = v.get("complete").and_then(Value::as_bool).unwrap_or(true);
    let tool_version = s(&v, "tool_version").unwrap_or("?");
    Ok(RunView {
        source: dir.display().to_string(),
        drive: target.model.clone().unwrap_or_else(|| target.name.clone()),
        setting,
        procedure,
        tool_version: format!("storbench {tool_version}"),
        command_line,
        options,
        complete,
        notes,
        phases,
        consistency,
        bench,
        trim,
        traces,
        health,
        target,
    })
}

/// A command line stored as one string or as its arguments.
fn command_line_text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(t) => Some(t.clone()),
        Value::Array(a) if !a.is_empty() => Some(
            a.iter()
                .map(|x| {
                    let t = x.as_str().map_or_else(|| x.to_string(), str::to_string);
                    if t.is_empty()
                        || t.contains(|c: char| c.is_whitespace() || "'\"$`\\".contains(c))
                    {
                        format!("'{}'", t.replace('\'', "'\\''"))
                    } else {
                        t
                    }
                })
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    }
}

fn health_view(v: &Value) -> HealthView {
    // Suite layout: health_before / health_after / health_delta; RunResult layout:
    // health { before, after, delta }.
    let nested = v.get("health").cloned().unwrap_or(Value::Null);
    let pick = |flat: &str, inner: &str| {
        v.get(flat)
            .or_else(|| nested.get(inner))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let before = pick("health_before", "before");
    let after = pick("health_after", "after");
    let delta = pick("health_delta", "delta");
    let available = before
        .get("available")
        .and_then(Value::as_bool)
        .unwrap_or(false)
        || after
            .get("available")
            .and_then(Value::as_bool)
            .unwrap_or(false);
    if !available {
        let why = s(&after, "note")
            .or_else(|| s(&before, "note"))
            .or_else(|| s(&delta, "note"))
            .unwrap_or("no health figures were recorded");
        return HealthView {
            rows: Vec::new(),
            unavailable: Some(why.to_string()),
        };
    }
    let mut rows = Vec::new();
    let gb = |x: &Value, k: &str| x.get(k).and_then(Value::as_f64).map(|b| b / 1e9);
    for (label, key, scale_gb) in [
        ("host GB written", "host_write_bytes", true),
        ("host GB read", "host_read_bytes", true),
        ("NAND GB written", "nand_write_bytes", true),
        ("temperature °C", "temperature_c", false),
        ("media errors", "media_errors", false),
        ("percent used", "percent_used", false),
    ] {
        let (b, a) = if scale_gb {
            (gb(&before, key), gb(&after, key))
        } else {
            (f(&before, key), f(&after, key))
        };
        if b.is_some() || a.is_some() {
            rows.push(HealthRow {
                metric: label.to_string(),
                before: b,
                after: a,
            });
        }
    }
    if let Some(wa) = f(&delta, "write_amplification") {
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

    const TARGET: &str = r#"{"kind":"sim","name":"sim:mlc-7op","capacity_bytes":1073741824,
        "logical_block_bytes":4096,"rotational":false,"discard":true,"model":"Sim MLC",
        "backend":"virtual","details":{}}"#;

    fn result(procedure: &str, summary: &str, phases: &str) -> String {
        format!(
            r#"{{"format":"storbench-suite-result/1","tool_version":"0.1.0","procedure":"{procedure}",
            "target":{TARGET},"config":{{"target":"sim:mlc-7op","span_fraction":0.75,"qd":32}},
            "phases":{phases},"summary":{summary},
            "health_before":{{"source":"sim","available":true,"host_write_bytes":1000000000,"nand_write_bytes":2000000000}},
            "health_after":{{"source":"sim","available":true,"host_write_bytes":3000000000,"nand_write_bytes":8000000000}},
            "health_delta":{{"available":true,"write_amplification":3.0}},
            "notes":["resumed once"]}}"#
        )
    }

    #[test]
    fn reads_a_consistency_result() {
        let text = result(
            "consistency",
            r#"{"span_percent":75.0,"iops_per_s":[100.0,90.0,80.0],"scores":{"avg":85.0,"stddev":5.0,"min":80.0},
               "steady_state_at_s":3}"#,
            r#"[{"name":"precondition","metrics":{"elapsed_ns":2000000000,"write_ios":10,"data_rate_mb_per_s":500.0}},
                {"name":"random-write","metrics":null}]"#,
        );
        let r = from_json(&text, Path::new("x/result.json"), Path::new("x")).unwrap();
        assert_eq!(r.setting, "25% spare area");
        assert_eq!(r.drive, "Sim MLC");
        let c = r.consistency.unwrap();
        assert_eq!(c.iops_per_s, vec![100.0, 90.0, 80.0]);
        assert_eq!(
            (c.avg_iops_last400, c.std_iops_last400, c.min_iops),
            (85.0, 5.0, 80.0)
        );
        assert_eq!(c.steady_state_at_s, Some(3.0));
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
        assert!(r.options.contains(&("qd".to_string(), "32".to_string())));
    }

    #[test]
    fn reads_trim_and_bench_results() {
        let t = result(
            "trim-check",
            r#"{"clean_mb_per_s":500.0,"dirty_mb_per_s":100.0,"after_trim_mb_per_s":490.0}"#,
            "[]",
        );
        let r = from_json(&t, Path::new("r.json"), Path::new(".")).unwrap();
        assert_eq!(
            r.trim,
            Some(TrimView {
                clean_mb_s: 500.0,
                dirty_mb_s: 100.0,
                after_trim_mb_s: 490.0
            })
        );
        let b = result(
            "bench",
            r#"{"characterize":{"name":"heavy","reads":10,"sequential_pct":42.0}}"#,
            r#"[{"name":"replay","metrics":{"data_rate_mb_per_s":300.0,"read_rate_mb_per_s":400.0,
                 "write_rate_mb_per_s":200.0,"busy_ns":5000000000,"read_ios":7,"write_ios":3,
                 "service":{"mean_us":120.0,"stddev_us":80.0,"p50_us":90.0,"p99_us":700.0}}}]"#,
        );
        let r = from_json(&b, Path::new("r.json"), Path::new(".")).unwrap();
        let bench = r.bench.unwrap();
        assert_eq!(
            (bench.data_rate_mb_s, bench.busy_s, bench.reads),
            (300.0, 5.0, 7)
        );
        assert_eq!(
            bench.percentiles_us,
            vec![("p50".to_string(), 90.0), ("p99".to_string(), 700.0)],
            "missing ones left out"
        );
        assert_eq!(r.traces[0].name, "heavy");
        assert!(r.traces[0]
            .rows
            .contains(&("sequential_pct".to_string(), "42".to_string())));
    }

    #[test]
    fn reads_the_run_result_layout() {
        let text = r#"{"schema_version":1,"tool_version":"0.1.0","command_line":["storbench","replay","my trace.parquet"],
            "procedure":"bench","target":TGT,"trace":{"name":"mine","reads":5},"options":{"qd":"8"},
            "phases":[{"name":"replay","metrics":{"data_rate_mb_per_s":10.0,"service":{"mean_us":5.0}},"scores":{}}],
            "health":{"before":{"available":false,"note":"no smartctl"}},"complete":false,"notes":[]}"#
            .replace("TGT", TARGET);
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
            "{\"procedure\": 3}",
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
