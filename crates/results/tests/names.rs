//! Every field name a result.json can hold follows the documented rule (units last,
//! `_pct` for percentages: `storbench_results::naming`, docs/results.md). The test walks
//! the keys of a result of every procedure, with every optional part present and every
//! phase kind, as the writer serializes it; a new field that breaks the rule fails here.

use serde::Serialize;
use std::path::PathBuf;
use storbench_core::generator::{GenSpec, Limit, Mix, Pattern, SpanSpec};
use storbench_core::pacing::{Fidelity, Pacing};
use storbench_core::{DataKind, TargetInfo, TargetKind};
use storbench_metrics::steady::{ConsistencyScores, SteadyState};
use storbench_metrics::PhaseMetrics;
use storbench_results::bench::{BenchConfig, BenchSummary, DriveState, Workload};
use storbench_results::consistency::{ConsistencyConfig, ConsistencySummary};
use storbench_results::naming::check;
use storbench_results::purge::{PurgeMethod, PurgeReport};
use storbench_results::replay::{ReplayConfig, ReplaySummary};
use storbench_results::run::{RunConfig, RunSummary};
use storbench_results::season::{SeasonConfig, SeasonSummary};
use storbench_results::trimcheck::{TrimCheckConfig, TrimTable};
use storbench_results::*;

/// Keys whose children are data, not schema: the target's free details, the
/// configuration as text (its names are the configuration's, checked there) and a
/// trace's characterization (the `characterize` command's own document).
const DATA_MAPS: [&str; 3] = ["details", "options", "characterize"];

fn walk(v: &serde_json::Value, path: &str, bad: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, child) in m {
                if let Some(why) = check(k) {
                    bad.push(format!("{path}.{k}: {why}"));
                }
                if !DATA_MAPS.contains(&k.as_str()) {
                    walk(child, &format!("{path}.{k}"), bad);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, path, bad)),
        _ => {}
    }
}

/// The names of `value` that break the rule.
fn broken(value: &impl Serialize) -> Vec<String> {
    let mut bad = Vec::new();
    walk(&serde_json::to_value(value).unwrap(), "", &mut bad);
    bad
}

fn target() -> TargetInfo {
    TargetInfo {
        kind: TargetKind::Sim,
        name: "sim:x".into(),
        capacity_bytes: 1 << 30,
        logical_block_bytes: 512,
        rotational: Some(false),
        discard: true,
        model: Some("m".into()),
        backend: "virtual".into(),
        details: Default::default(),
    }
}

fn health() -> HealthSnapshot {
    HealthSnapshot {
        source: "sim".into(),
        available: true,
        note: Some("n".into()),
        model: Some("m".into()),
        firmware: Some("f".into()),
        host_read_bytes: Some(1),
        host_write_bytes: Some(1),
        nand_write_bytes: Some(1),
        lifetime_wa: Some(1.0),
        temperature_c: Some(40.0),
        media_errors: Some(0),
        used_pct: Some(1),
        taken_unix_ms: 1,
    }
}

fn delta() -> HealthDelta {
    HealthDelta {
        available: true,
        host_write_bytes: Some(1),
        host_read_bytes: Some(1),
        nand_write_bytes: Some(1),
        write_amplification: Some(1.0),
        temperature_before_c: Some(1.0),
        temperature_after_c: Some(1.0),
        media_errors_new: Some(0),
        note: Some("n".into()),
    }
}

fn fidelity() -> Fidelity {
    Fidelity {
        mode: "timed".into(),
        issue_error_p50_ns: Some(1),
        issue_error_p90_ns: Some(1),
        issue_error_p99_ns: Some(1),
        issue_error_p99_9_ns: Some(1),
        issue_error_max_ns: Some(1),
        issue_error_mean_ns: Some(1.0),
        drift_ns: Some(1),
        drift_pct: Some(1.0),
        slot_starved_ios: 1,
        trace_avg_qd: Some(1.0),
        replayed_avg_qd: Some(1.0),
        qd_capped_ios: 1,
    }
}

/// A phase of every kind of work, every optional part present.
#[allow(
    clippy::too_many_lines,
    reason = "a table: one phase of every kind of work"
)]
fn phases() -> Vec<PhaseRecord> {
    let p = PathBuf::from("p");
    let spec = GenSpec {
        mix: Mix::ReadWrite { read_pct: 70 },
        pattern: Pattern::Random,
        limit: Limit::Bytes(1),
        ..GenSpec::seq_fill(0, 1 << 20, 1)
    };
    let works = [
        Work::Purge,
        Work::SeqWrite {
            start_bytes: 0,
            len_bytes: 1,
            block_bytes: 1,
            qd: 1,
            passes: 1,
        },
        Work::RandWrite {
            span_bytes: 1,
            block_bytes: 1,
            qd: 1,
            seed: 1,
        },
        Work::Trim {
            span_bytes: 1,
            chunk_bytes: 1,
            qd: 1,
        },
        Work::GeneratedImage {
            span_bytes: 1,
            fill: 0.4,
            seed: 1,
            qd: 1,
        },
        Work::FileImage {
            path: p.clone(),
            span_bytes: 1,
            qd: 1,
        },
        Work::TraceImage {
            path: p.clone(),
            span_bytes: 1,
            qd: 1,
        },
        Work::Replay {
            path: p,
            default_qd: 1,
            skip_trims: true,
        },
        Work::Idle { duration_ns: 1 },
        Work::Generate { spec: spec.clone() },
        Work::Generate {
            spec: GenSpec {
                mix: Mix::Trim,
                limit: Limit::Ios(1),
                ..spec
            },
        },
    ];
    works
        .into_iter()
        .map(|work| PhaseRecord {
            name: "p".into(),
            title: "t".into(),
            work,
            time_limit_ns: Some(1),
            metrics: PhaseMetrics::default(),
            purge: Some(PurgeReport {
                method: PurgeMethod::Simulator,
                bytes: 1,
                fresh: true,
                wall_ms: 1,
                note: Some("n".into()),
            }),
            issued_ios: 1,
            job_issued_ios: vec![1, 0],
            folded_ios: 1,
            aligned_ios: 1,
            aligned_extra_bytes: 1,
            ended: "source-done".into(),
            segments: 1,
            fidelity: Some(fidelity()),
            first_error: Some("e".into()),
            counters: Some(delta()),
            wall_ms: 1,
        })
        .collect()
}

fn trace() -> TraceSummary {
    TraceSummary {
        path: "t".into(),
        ios: 1,
        read_ios: 1,
        write_ios: 1,
        trim_ios: 1,
        flush_ios: 1,
        read_bytes: 1,
        write_bytes: 1,
        duration_ns: 1,
        max_io_bytes: 1,
        source_format: Some("f".into()),
        capacity_bytes: Some(1),
    }
}

fn result<C, S>(procedure: &str, config: C, summary: S) -> RunResult<C, S> {
    RunResult {
        format: RESULT_FORMAT.into(),
        schema_version: SCHEMA_VERSION,
        command_line: vec!["storbench".into()],
        options: Default::default(),
        complete: true,
        tool_version: "0".into(),
        procedure: procedure.into(),
        target: target(),
        config,
        phases: phases(),
        summary: Some(summary),
        trace: Some(trace()),
        health_before: health(),
        health_after: health(),
        health_delta: delta(),
        resumes: 0,
        notes: vec!["n".into()],
        created_unix_ms: 1,
        finished_unix_ms: 1,
    }
}

fn open() -> RealOpen {
    RealOpen {
        size_bytes: Some(1),
        destroy_data: Some("d".into()),
        buffer_memory_bytes: Some(1),
        max_in_flight: Some(1),
        buffer_bytes: Some(1),
        backend: Some("auto".into()),
        ..RealOpen::default()
    }
}

fn bench_summary() -> BenchSummary {
    let stats = PhaseMetrics::default().service;
    BenchSummary {
        trace: "t".into(),
        data_rate_mb_per_s: 1.0,
        read_rate_mb_per_s: 1.0,
        write_rate_mb_per_s: 1.0,
        service: stats.clone(),
        service_read: stats.clone(),
        service_write: stats,
        busy_s: 1.0,
        reads: 1,
        writes: 1,
        read_bytes: 1,
        write_bytes: 1,
        span_bytes: 1,
        folded_ios: 1,
        trace_avg_qd: Some(1.0),
        replayed_avg_qd: Some(1.0),
        state: "used".into(),
        used_passes: Some(1),
        image: Some("i".into()),
        image_bytes: 1,
        image_writes: 1,
        image_mb_per_s: Some(1.0),
        seq_pass_mb_per_s: Some(1.0),
        replay_counters: Some(delta()),
        max_idle_s: Some(1.0),
        trims_skipped: 1,
        data: "random".into(),
        trace_name: "t".into(),
        characterize: Some(Default::default()),
    }
}

fn twin_measurement() -> twin::Measurement {
    twin::Measurement {
        capacity_bytes: 1,
        shape: twin::PlanShape::full(),
        done: vec![twin::PhaseAmount {
            name: "p".into(),
            ios: 1,
            bytes: 1,
        }],
        figures: vec![twin::Figure {
            name: "f".into(),
            unit: "IOPS".into(),
            value: 1.0,
        }],
    }
}

/// `twin.json` (its names follow the same rule as result.json's).
fn twin_file() -> twin::TwinFile {
    twin::TwinFile {
        schema_version: twin::TWIN_SCHEMA_VERSION,
        target: "sim:x".into(),
        preset: "x".into(),
        capacity_bytes: 1,
        eval_capacity_bytes: 1,
        parameters: vec![twin::ParamReport {
            key: "program_us".into(),
            unit: "us".into(),
            value: 1.0,
            start: 1.0,
            lo: 0.5,
            hi: 2.0,
            scale: twin::Scale::Log,
            identified: true,
            sensitivity: 1.0,
            most_moved: Some("f".into()),
        }],
        unidentified: vec!["x".into()],
        figures: vec![twin::FigureReport {
            name: "f".into(),
            unit: "IOPS".into(),
            measured: 1.0,
            twin: 1.0,
            error_pct: 0.0,
            residual: 0.0,
        }],
        start_cost: 1.0,
        cost: 1.0,
        iterations: 1,
        evaluations: 1,
    }
}

#[test]
#[allow(
    clippy::too_many_lines,
    reason = "a table: one result of every procedure, walked field by field"
)]
fn every_field_of_every_procedures_result_puts_its_unit_last() {
    let mut bad = Vec::new();
    let run = RunConfig {
        open: open(),
        span: Some(SpanSpec::Percent(75.0)),
        time_limit_ns: Some(1),
        limit_bytes: Some(1),
        data: DataKind::Compressible(2.0),
        ..RunConfig::new("sim:x")
    };
    let run_summary = RunSummary {
        offset_bytes: 0,
        span_bytes: 1,
        iops: 1.0,
        data_rate_mb_per_s: 1.0,
    };
    bad.extend(broken(&result("run", run, run_summary)));
    for pacing in [
        Pacing::Timed {
            speed: 1.0,
            max_idle_ns: Some(1),
        },
        Pacing::QueueDepth { default_qd: 1 },
        Pacing::FixedQd(1),
    ] {
        let config = ReplayConfig {
            target: "sim:x".into(),
            open: open(),
            trace: trace(),
            pacing,
            time_limit_ns: Some(1),
            span: Some(SpanSpec::Bytes(1)),
            seed: 1,
            data: DataKind::Zeros,
            log_ios: true,
            jobs: 2,
        };
        let summary = ReplaySummary {
            replayed_ios: 1,
            trace_ios: 1,
            fold_span_bytes: Some(1),
            fidelity: Some(fidelity()),
        };
        bad.extend(broken(&result("replay", config, summary)));
    }
    let consistency = ConsistencySummary {
        span_bytes: 1,
        span_pct: 1.0,
        spare_area_pct: 1.0,
        iops_per_s: vec![1.0],
        scores: Some(ConsistencyScores {
            avg: 1.0,
            stddev: 1.0,
            min: 1.0,
            avg_over_stddev: Some(1.0),
            window_s: 1,
        }),
        round_s: 1,
        round_iops: vec![1.0],
        steady_state: Some(SteadyState {
            round_index: 1,
            window_start: 1,
            window_rounds: 1,
            window_mean: 1.0,
            data_excursion: 1.0,
            slope_per_round: 1.0,
            slope_excursion: 1.0,
        }),
        steady_state_reached: true,
        steady_state_at_s: Some(1),
        precondition_mb_per_s: 1.0,
        ended: "time-limit".into(),
    };
    let config = ConsistencyConfig {
        open: open(),
        ..ConsistencyConfig::new("sim:x")
    };
    bad.extend(broken(&result("consistency", config, consistency)));
    let season = SeasonSummary {
        image: "i".into(),
        image_restored_bytes: 1,
        image_writes: 1,
        seq_pass_mb_per_s: 1.0,
        restore_mb_per_s: 1.0,
    };
    let config = SeasonConfig {
        image: Some("i".into()),
        ..SeasonConfig::new("sim:x")
    };
    bad.extend(broken(&result("season", config, season)));
    let table = TrimTable {
        clean_mb_per_s: 1.0,
        dirty_mb_per_s: 1.0,
        after_trim_mb_per_s: 1.0,
        after_trim_of_clean_pct: 1.0,
        dirty_of_clean_pct: 1.0,
        measure_bytes: 1,
        trim_pass_s: 1.0,
        note: Some("n".into()),
    };
    bad.extend(broken(&result(
        "trim-check",
        TrimCheckConfig::new("sim:x"),
        table,
    )));
    for workload in [
        Workload::Trace { path: "t".into() },
        Workload::Profile {
            name: "p".into(),
            scale: 1.0,
            seed: 1,
        },
    ] {
        let config = BenchConfig {
            state: DriveState::Used,
            image: Some("i".into()),
            max_idle_ns: Some(1),
            ..BenchConfig::new("sim:x", workload)
        };
        bad.extend(broken(&result("bench", config, bench_summary())));
    }
    bad.extend(broken(&result(
        "twin-measure",
        twin::TwinMeasureConfig::new("sim:x"),
        twin_measurement(),
    )));
    bad.extend(broken(&twin_file()));
    assert!(
        bad.is_empty(),
        "names that break the rule:\n{}",
        bad.join("\n")
    );
}

/// Results of schema 2 still read: each renamed field under its old name.
#[test]
fn schema_2_names_read_as_the_new_fields() {
    let s: ConsistencySummary = serde_json::from_value(serde_json::json!({
        "span_bytes": 1, "span_percent": 75.0, "spare_area_percent": 25.0, "iops_per_s": [],
        "scores": null, "round_s": 1, "round_iops": [], "steady_state": null,
        "steady_state_reached": false, "steady_state_at_s": null,
        "precondition_mb_per_s": 0.0, "ended": "time-limit"
    }))
    .unwrap();
    assert_eq!((s.span_pct, s.spare_area_pct), (75.0, 25.0));
    let t: TrimTable = serde_json::from_value(serde_json::json!({
        "clean_mb_per_s": 1.0, "dirty_mb_per_s": 1.0, "after_trim_mb_per_s": 1.0,
        "after_trim_pct_of_clean": 98.0, "dirty_pct_of_clean": 20.0, "measure_bytes": 1,
        "trim_pass_s": 1.0
    }))
    .unwrap();
    assert_eq!(
        (t.after_trim_of_clean_pct, t.dirty_of_clean_pct),
        (98.0, 20.0)
    );
    let h: HealthDelta = serde_json::from_value(serde_json::json!({
        "available": true, "host_write_bytes": null, "host_read_bytes": null,
        "nand_write_bytes": null, "write_amplification": null,
        "temperature_c_before": 30.0, "temperature_c_after": 31.0,
        "media_errors_new": null, "note": null
    }))
    .unwrap();
    assert_eq!(
        (h.temperature_before_c, h.temperature_after_c),
        (Some(30.0), Some(31.0))
    );
    let span: SpanSpec = serde_json::from_value(serde_json::json!({"percent": 75.0})).unwrap();
    assert_eq!(span, SpanSpec::Percent(75.0));
}
