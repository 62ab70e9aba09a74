//! Hand-made sample runs (deterministic) for tests of the report, compare and images.
//! They look like real results: two drives, default and 25% spare area, a trace bench
//! and a TRIM check. Not measurements.

use super::view::*;
use std::collections::BTreeMap;
use storbench_core::{TargetInfo, TargetKind};

fn target(name: &str, model: &str) -> TargetInfo {
    let mut details = BTreeMap::new();
    details.insert("op_percent".to_string(), "7".to_string());
    TargetInfo {
        kind: TargetKind::Sim,
        name: name.to_string(),
        capacity_bytes: 64 << 30,
        logical_block_bytes: 4096,
        rotational: Some(false),
        discard: true,
        model: Some(model.to_string()),
        backend: "virtual".to_string(),
        details,
    }
}

/// A deterministic pseudo-random sequence in [0, 1) (xorshift), so samples need no RNG crate.
fn noise(seed: u64, n: usize) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}

/// IOPS per second: a fresh-drive plateau falling to a noisy steady state.
fn iops(seconds: usize, peak: f64, steady: f64, seed: u64) -> Vec<f64> {
    let r = noise(seed, seconds);
    (0..seconds)
        .map(|t| {
            let fall = (-(t as f64) / (seconds as f64 * 0.08)).exp();
            let base = steady + (peak - steady) * fall;
            let dip = if r[t] < 0.1 { 0.3 } else { 1.0 };
            (base * dip * (0.85 + 0.3 * r[(t * 7 + 3) % seconds])).round()
        })
        .collect()
}

fn run(drive: &str, model: &str, span: f64, procedure: &str) -> RunView {
    RunView {
        source: format!("results/{}-{}-{}", drive, procedure, span as u32),
        drive: model.to_string(),
        setting: setting_for_span(span),
        procedure: procedure.to_string(),
        target: target(&format!("sim:{drive}"), model),
        tool_version: "storbench 0.1.0".to_string(),
        command_line: format!("storbench {procedure} --target sim:{drive} --span {span}% --quick"),
        options: vec![
            ("span".to_string(), format!("{span}%")),
            ("qd".to_string(), "32".to_string()),
        ],
        complete: true,
        notes: Vec::new(),
        phases: Vec::new(),
        consistency: None,
        bench: None,
        trim: None,
        twin: None,
        traces: Vec::new(),
        health: HealthView {
            rows: vec![
                HealthRow {
                    metric: "host GB written".to_string(),
                    before: Some(10.0),
                    after: Some(74.5),
                },
                HealthRow {
                    metric: "NAND GB written".to_string(),
                    before: Some(12.0),
                    after: Some(260.25),
                },
                HealthRow {
                    metric: "write amplification".to_string(),
                    before: None,
                    after: Some(3.49),
                },
            ],
            unavailable: None,
        },
        state: "fresh".to_string(),
        workload: if procedure == "bench" {
            "heavy-2011".to_string()
        } else {
            procedure.to_string()
        },
        date: Some("2026-11-26 02:00".to_string()),
        name: String::new(),
        season: None,
        highlight: false,
        figures: Vec::new(),
    }
}

/// Sample consistency runs: two drives × {Default, 25% spare area}, `seconds` long.
pub fn consistency_runs(seconds: usize) -> Vec<RunView> {
    let mut out = Vec::new();
    for (i, (drive, model, steady)) in [
        ("mlc-7op", "Sim MLC 64G 7% OP", 6000.0),
        ("tlc-12op", "Sim TLC 64G 12% OP", 4000.0),
    ]
    .into_iter()
    .enumerate()
    {
        for (j, span) in [100.0, 75.0].into_iter().enumerate() {
            let mut r = run(drive, model, span, "consistency");
            let boost = if span < 100.0 { 2.6 } else { 1.0 };
            let y = iops(seconds, 90_000.0, steady * boost, (i * 2 + j) as u64 + 1);
            let last: Vec<f64> = y[y.len().saturating_sub(400)..].to_vec();
            let avg = last.iter().sum::<f64>() / last.len() as f64;
            let var = last.iter().map(|v| (v - avg) * (v - avg)).sum::<f64>() / last.len() as f64;
            r.phases = vec![
                PhaseView {
                    name: "precondition".into(),
                    duration_s: 12.5,
                    ios: 524_288,
                    data_rate_mb_s: 5498.0,
                },
                PhaseView {
                    name: "random-write".into(),
                    duration_s: seconds as f64,
                    ios: y.iter().sum::<f64>() as u64,
                    data_rate_mb_s: avg * 4096.0 / 1e6,
                },
            ];
            r.consistency = Some(ConsistencyView {
                min_iops: y.iter().cloned().fold(f64::INFINITY, f64::min),
                iops_per_s: y,
                avg_iops_last400: avg,
                std_iops_last400: var.sqrt(),
                score_window_s: None,
                block_bytes: 4096,
                qd: 32,
                steady_state_at_s: if j == 0 {
                    Some(seconds as f64 * 0.4)
                } else {
                    None
                },
            });
            out.push(r);
        }
    }
    out
}

/// Sample trace-bench runs for two drives, one with a characterize table.
pub fn bench_runs() -> Vec<RunView> {
    let trace = TraceView {
        name: "heavy-2011 (scale 0.01)".to_string(),
        rows: vec![
            ("reads".into(), "21689".into()),
            ("writes".into(), "17834".into()),
            ("GB read".into(), "0.486".into()),
            ("GB written".into(), "1.063".into()),
            ("sequential".into(), "42%".into()),
            ("average QD".into(), "4.63".into()),
        ],
    };
    [
        ("mlc-7op", "Sim MLC 64G 7% OP", 310.0, 420.0),
        ("tlc-12op", "Sim TLC 64G 12% OP", 190.0, 760.0),
    ]
    .into_iter()
    .map(|(drive, model, rate, mean)| {
        let mut r = run(drive, model, 100.0, "bench");
        r.traces = vec![trace.clone()];
        r.bench = Some(BenchView {
            data_rate_mb_s: rate,
            read_mb_s: rate * 1.3,
            write_mb_s: rate * 0.8,
            service_us_mean: mean,
            service_us_std: mean * 2.2,
            busy_s: 1.549e9 / (rate * 1e6),
            busy_read_s: 0.4863e9 / (rate * 1.3e6),
            busy_write_s: 1.0632e9 / (rate * 0.8e6),
            percentiles_us: vec![
                ("p50".into(), mean * 0.4),
                ("p90".into(), mean * 1.5),
                ("p99".into(), mean * 6.0),
                ("p99.9".into(), mean * 20.0),
                ("p99.99".into(), mean * 55.0),
            ],
            reads: 21689,
            writes: 17834,
            bytes_read: 486_300_000,
            bytes_written: 1_063_200_000,
        });
        r
    })
    .collect()
}

/// Sample TRIM-check runs.
pub fn trim_runs() -> Vec<RunView> {
    [
        ("mlc-7op", "Sim MLC 64G 7% OP", 520.0, 140.0, 505.0),
        ("tlc-12op", "Sim TLC 64G 12% OP", 480.0, 95.0, 470.0),
    ]
    .into_iter()
    .map(|(drive, model, clean, dirty, after)| {
        let mut r = run(drive, model, 100.0, "trim-check");
        r.trim = Some(TrimView {
            clean_mb_s: clean,
            dirty_mb_s: dirty,
            after_trim_mb_s: after,
            note: None,
        });
        r
    })
    .collect()
}

/// All samples together, as a reviewer's full bench would look.
pub fn all_runs(consistency_seconds: usize) -> Vec<RunView> {
    let mut v = consistency_runs(consistency_seconds);
    v.extend(bench_runs());
    v.extend(trim_runs());
    v
}
