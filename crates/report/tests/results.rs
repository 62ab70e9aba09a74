//! Result files: result.json through the JSON exporter and back, series.parquet (also read by pandas and
//! DuckDB when installed), fio-style logs, the I/O log.

use std::collections::BTreeMap;
use std::path::Path;
use storbench_core::{TargetInfo, TargetKind};
use storbench_metrics::{PhaseMetrics, Recorder, SecondSample};
use storbench_report::{
    read_result, read_series, write_fio_csv_logs, write_fio_csv_logs_timed, write_phase_series,
    write_series, write_series_all, Exporter, IoLogWriter, JsonExporter, ReportError, RunResult,
    RESULT_FORMAT, SCHEMA_VERSION,
};
use storbench_results::consistency::{ConsistencyConfig, ConsistencySummary};
use storbench_results::{HealthDelta, HealthSnapshot, PhaseRecord, Work};
use storbench_trace::{IoRecord, Op, TraceMeta};

const MS: u64 = 1_000_000;

fn target() -> TargetInfo {
    TargetInfo {
        kind: TargetKind::Test,
        name: "test:fixed-delay".into(),
        capacity_bytes: 1 << 30,
        logical_block_bytes: 4096,
        rotational: Some(false),
        discard: true,
        model: None,
        backend: "virtual".into(),
        details: BTreeMap::new(),
    }
}

/// A phase of `secs` seconds: at second i, (i + 1) reads of 4 KiB and one 128 KiB write.
fn phase(secs: u64) -> PhaseMetrics {
    let mut r = Recorder::new(0);
    for s in 0..secs {
        let base = s * 1000 * MS;
        let mut t = base;
        for _ in 0..=s {
            r.on_submit(t, Op::Read);
            let mut io = IoRecord::new(Op::Read, s * 4096, 4096, t);
            io.complete_ns = Some(t + 100_000);
            r.on_complete(&io, true);
            t += MS;
        }
        r.on_submit(t, Op::Write);
        let mut io = IoRecord::new(Op::Write, 0, 131_072, t);
        io.complete_ns = Some(t + 2 * MS);
        r.on_complete(&io, true);
    }
    r.finish(secs * 1000 * MS + 500 * MS)
}

/// The result type of a consistency run, the writer's own.
type Consistency = RunResult<ConsistencyConfig, ConsistencySummary>;

/// A phase record of `metrics`.
fn record(name: &str, metrics: PhaseMetrics) -> PhaseRecord {
    PhaseRecord {
        name: name.into(),
        title: name.into(),
        work: Work::Idle { duration_ns: 0 },
        time_limit_ns: None,
        metrics,
        purge: None,
        issued_ios: 0,
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

fn run() -> Consistency {
    let mut r = RunResult {
        format: RESULT_FORMAT.into(),
        schema_version: SCHEMA_VERSION,
        command_line: vec!["storbench".into(), "consistency".into()],
        options: BTreeMap::from([("qd".into(), "32".into())]),
        complete: true,
        tool_version: "0.1.0".into(),
        procedure: "consistency".into(),
        target: target(),
        config: ConsistencyConfig::quick("sim:client-7op"),
        phases: Vec::new(),
        summary: Some(ConsistencySummary {
            span_bytes: 1 << 30,
            span_pct: 100.0,
            spare_area_pct: 0.0,
            iops_per_s: vec![12.0, 13.0],
            scores: None,
            round_s: 3,
            round_iops: Vec::new(),
            steady_state: None,
            steady_state_reached: false,
            steady_state_at_s: None,
            precondition_mb_per_s: 400.0,
            ended: "time-limit".into(),
        }),
        trace: None,
        health_before: HealthSnapshot::unavailable("test", "none"),
        health_after: HealthSnapshot::unavailable("test", "none"),
        health_delta: HealthDelta {
            write_amplification: Some(1.5),
            ..HealthDelta::default()
        },
        resumes: 1,
        notes: vec!["hello".into()],
        created_unix_ms: 1,
        finished_unix_ms: 2,
    };
    for (name, secs) in [("precondition", 3), ("random write", 5)] {
        r.phases.push(record(name, phase(secs)));
    }
    r
}

/// What the series writer is given for a result's phases.
fn series_of(r: &Consistency) -> Vec<(&str, &[SecondSample])> {
    r.phases
        .iter()
        .map(|p| (p.name.as_str(), p.metrics.series.as_slice()))
        .collect()
}

#[test]
fn json_exporter_bytes_read_back_as_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = run();
    let bytes = JsonExporter.serialize(&r).unwrap();
    assert_eq!(
        Exporter::<ConsistencyConfig, ConsistencySummary>::file_name(&JsonExporter),
        "result.json"
    );
    std::fs::write(dir.path().join("result.json"), &bytes).unwrap();
    let back: Consistency = read_result(dir.path()).unwrap();
    // the JSON does not carry the series: they go to series.parquet
    for p in &mut r.phases {
        p.metrics.series.clear();
    }
    assert_eq!(back, r);
    let text = String::from_utf8(bytes).unwrap();
    assert!(!text.contains("\"series\""));
    assert!(
        text.ends_with("}\n") && text.lines().count() == 1,
        "compact"
    );
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["phases"][1]["metrics"]["read_ios"], 15);
    assert_eq!(v["target"]["kind"], "test");
    assert_eq!(v["format"], "storbench-suite-result/1");
    assert_eq!(
        back.phase("random write").map(|p| p.metrics.read_ios),
        Some(15)
    );
    assert_eq!(back.failed_ios(), None);
}

#[test]
fn failed_ios_names_the_first_phase_with_errors() {
    let mut r = run();
    r.phases[1].metrics.errors = 3;
    assert_eq!(
        r.failed_ios(),
        Some(("random write", 3, "(no detail)")),
        "no detail recorded"
    );
    r.phases[0].metrics.errors = 1;
    r.phases[0].first_error = Some("read at offset 0 length 4096: EIO".into());
    assert_eq!(
        r.failed_ios(),
        Some(("precondition", 1, "read at offset 0 length 4096: EIO"))
    );
}

#[test]
fn bad_results_are_refused_with_a_reason() {
    // a newer schema is refused, a broken file names line and column
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("result.json");
    let text = String::from_utf8(JsonExporter.serialize(&run()).unwrap()).unwrap();
    let newer = format!("\"schema_version\":{SCHEMA_VERSION}");
    assert!(text.contains(&newer), "result.json is compact: {text}");
    std::fs::write(&p, text.replacen(&newer, "\"schema_version\":99", 1)).unwrap();
    let e = read_result::<ConsistencyConfig, ConsistencySummary>(dir.path()).unwrap_err();
    assert!(e.to_string().contains("newer"), "{e}");
    std::fs::write(&p, "{\n  \"schema_version\": 1,\n  oops\n}").unwrap();
    let e = read_result::<ConsistencyConfig, ConsistencySummary>(dir.path()).unwrap_err();
    assert!(matches!(e, ReportError::Json { line: 3, .. }), "{e}");
    std::fs::remove_file(&p).unwrap();
    let e = read_result::<ConsistencyConfig, ConsistencySummary>(dir.path()).unwrap_err();
    assert!(matches!(e, ReportError::Io { .. }), "{e}");
}

/// The test's directory as the writers take it.
fn out(dir: &tempfile::TempDir) -> storbench_trace::atomic::OutputDir {
    storbench_trace::atomic::OutputDir::open(dir.path()).unwrap()
}

#[test]
fn write_series_replaces_one_phase_and_keeps_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let a = phase(3).series;
    let b = phase(2).series;
    write_series(&out(&dir), "a", &a).unwrap();
    write_series(&out(&dir), "b", &b).unwrap();
    let longer = phase(4).series;
    write_series(&out(&dir), "a", &longer).unwrap();
    let all = read_series(dir.path()).unwrap();
    assert_eq!(all, vec![("a".to_owned(), longer), ("b".to_owned(), b)]);
}

#[test]
fn fio_logs_have_known_lines() {
    let dir = tempfile::tempdir().unwrap();
    let s = phase(2).series; // windows 0, 1 full, then a 0.5 s one with no I/O
    let paths = write_fio_csv_logs(&out(&dir), "random write", &s).unwrap();
    let read = |i: usize| std::fs::read_to_string(&paths[i]).unwrap();
    assert!(paths[0].ends_with("random_write_iops.1.log"));
    // second 0: 1 read, 1 write; second 1: 2 reads, 1 write; last 0.5 s: nothing
    assert_eq!(
        read(0),
        "1000, 1, 0, 0, 0\n1000, 1, 1, 0, 0\n2000, 2, 0, 0, 0\n2000, 1, 1, 0, 0\n2500, 0, 0, 0, 0\n2500, 0, 1, 0, 0\n"
    );
    // bandwidth KiB/s: 4 KiB read, 128 KiB write in second 0
    assert!(read(1).starts_with("1000, 4, 0, 0, 0\n1000, 128, 1, 0, 0\n2000, 8, 0, 0, 0\n"));
    // latency ns, only windows with completions: reads 100 µs, writes 2 ms
    assert_eq!(
        read(2),
        "1000, 100000, 0, 0, 0\n1000, 2000000, 1, 0, 0\n2000, 100000, 0, 0, 0\n2000, 2000000, 1, 0, 0\n"
    );
}

/// A phase run in two checkpoint chunks: the first chunk ends with a short window, so
/// window starts are 0, 1000, 1500 ms (not 0, 1, 2 s): the logs and the per-phase
/// Parquet file carry the exact times.
#[test]
fn timed_logs_and_phase_series_keep_exact_window_starts() {
    use arrow_array::{Array, Int64Array};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let dir = tempfile::tempdir().unwrap();
    let full = phase(2).series;
    let mut s = vec![full[0], full[1], full[0]];
    s[1].window_ns = 500 * MS; // the short window at the first chunk's end
    for (i, w) in s.iter_mut().enumerate() {
        w.t_s = i as u64;
    }
    let starts = [0, 1000, 1500];
    let paths = write_fio_csv_logs_timed(&out(&dir), "rw", &s, &starts).unwrap();
    let iops = std::fs::read_to_string(&paths[0]).unwrap();
    let ends: Vec<&str> = iops
        .lines()
        .map(|l| l.split(", ").next().unwrap())
        .collect();
    assert_eq!(ends, ["1000", "1000", "1500", "1500", "2500", "2500"]);
    // 2 reads in a 0.5 s window are 4 IOPS
    assert!(iops.contains("1500, 4, 0, 0, 0\n"), "{iops}");
    assert!(
        iops.ends_with("2500, 1, 0, 0, 0\n2500, 1, 1, 0, 0\n"),
        "{iops}"
    );
    // the untimed writer numbers windows by t_s, which is off by 500 ms here
    let untimed = write_fio_csv_logs(&out(&dir), "rw2", &s).unwrap();
    assert!(std::fs::read_to_string(&untimed[0])
        .unwrap()
        .ends_with("3000, 1, 0, 0, 0\n3000, 1, 1, 0, 0\n"));

    let path = dir.path().join("series/rw.parquet");
    let series = out(&dir).subdir("series").unwrap();
    write_phase_series(&series, "rw.parquet", &s, &starts).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let batches: Vec<_> = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect();
    assert_eq!(batches[0].schema().field(0).name(), "t_ms");
    // Issue 34: every integer column is Int64, as in traces (it was UInt64).
    for f in batches[0].schema().fields() {
        assert!(
            matches!(
                f.data_type(),
                arrow_schema::DataType::Int64 | arrow_schema::DataType::Float64
            ),
            "{}: {}",
            f.name(),
            f.data_type()
        );
    }
    let t = batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    assert_eq!(t.values().to_vec(), starts.map(|v| v as i64));
    let iops_col = storbench_report::html::load::read_parquet_f64(&path, "iops").unwrap();
    assert_eq!(
        iops_col,
        s.iter().map(SecondSample::iops).collect::<Vec<_>>()
    );
    assert_eq!(iops_col[1], 6.0, "3 completions in 0.5 s");
}

#[test]
fn io_log_is_a_trace_in_issue_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = IoLogWriter::create(&out(&dir), &TraceMeta::default()).unwrap();
    // completions arrive out of issue order
    let mk = |issue: u64, complete: u64, op| {
        let mut io = IoRecord::new(op, issue * 10, 4096, issue);
        io.complete_ns = Some(complete);
        io
    };
    w.write(&mk(5, 6, Op::Read), true).unwrap();
    w.write(&mk(1, 9, Op::Write), true).unwrap();
    w.write(&mk(3, 10, Op::Trim), false).unwrap();
    let path = w.path().to_path_buf();
    assert_eq!(w.finish().unwrap(), 3);
    let (meta, recs, _, _) = storbench_trace::read_all(&path).unwrap();
    assert_eq!(
        recs.iter().map(|r| r.issue_ns).collect::<Vec<_>>(),
        vec![1, 3, 5]
    );
    assert_eq!(recs[0].complete_ns, Some(9));
    assert_eq!(recs[1].complete_ns, None);
    assert_eq!(recs[1].op, Op::Trim);
    assert_eq!(meta.source_format.as_deref(), Some("storbench-replay-log"));
    assert_eq!(meta.extra.get("failed_ios").map(String::as_str), Some("1"));
}

fn python(module: &str) -> bool {
    std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn run_python(script: &str, dir: &Path) -> String {
    let o = std::process::Command::new("python3")
        .args(["-c", script, dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn pandas_and_duckdb_read_series_parquet() {
    let dir = tempfile::tempdir().unwrap();
    write_series_all(&out(&dir), &series_of(&run())).unwrap();
    let want: Vec<SecondSample> = run().phases[1].metrics.series.clone();
    let total_reads: u64 = want.iter().map(|s| s.read_ios).sum();
    if python("pandas") {
        let out = run_python(
            "import sys, pandas as pd\n\
             df = pd.read_parquet(sys.argv[1] + '/series.parquet')\n\
             w = df[df.phase == 'random write']\n\
             print(len(df), len(w), int(w.read_ios.sum()), float(w.iops.iloc[1]), int(w.t_s.max()))",
            dir.path(),
        );
        assert_eq!(
            out.trim(),
            format!("10 6 {total_reads} {:?} 5", want[1].iops())
        );
    } else {
        eprintln!("skipped: python3 with pandas not available");
    }
    if python("duckdb") {
        let out = run_python(
            "import sys, duckdb\n\
             print(duckdb.sql(f\"select phase, count(*), sum(read_ios) from '{sys.argv[1]}/series.parquet' group by phase order by phase\").fetchall())",
            dir.path(),
        );
        assert_eq!(
            out.trim(),
            format!(
                "[('precondition', 4, {}), ('random write', 6, {total_reads})]",
                1 + 2 + 3
            )
        );
    } else {
        eprintln!("skipped: python3 with duckdb not available");
    }
}
