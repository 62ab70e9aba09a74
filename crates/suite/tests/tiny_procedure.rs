//! Issue 32: a procedure is one place. This file adds one, `tiny` (purge, then one
//! sequential pass over a share of the drive), with its options, configuration and
//! summary, and touches nothing else in storbench: the one orchestrator runs it (phases,
//! checkpoints, result files), its result reads back as its own types, its options parse
//! as a sweep plan's do (through its clap `Args`), its summary's names follow the
//! documented rule, and the report loads its result and draws the chart its spec
//! declares (`ChartSpec`, data: in storbench the one line of `PROCEDURE_CHARTS`).

use serde::{Deserialize, Serialize};
use std::path::Path;
use storbench_engine::TargetInfo;
use storbench_report::html::charts::Better;
use storbench_report::html::{render_html_with_charts, ChartSpec};
use storbench_suite::args::{self, parse_options, EngineArgs, TargetChoice};
use storbench_suite::phase::Runner;
use storbench_suite::targets::RealOpen;
use storbench_suite::{
    execute, read_result, Configured, Control, PhasePlan, PhaseRecord, Procedure, Start,
    SuiteError, Work,
};

/// `storbench tiny`'s own options.
#[derive(clap::Args, Clone, Debug, PartialEq)]
struct TinyArgs {
    #[command(flatten)]
    engine: EngineArgs,
    /// Share of the drive the pass writes
    #[arg(long, default_value = "25%", value_name = "PCT%", value_parser = args::fraction)]
    share: f64,
}

/// Its configuration (result.json's `config`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct TinyConfig {
    target: String,
    share: f64,
    qd: u32,
}

/// Its summary (result.json's `summary`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct TinySummary {
    written_bytes: u64,
    write_rate_mb_per_s: f64,
}

const BLOCK_BYTES: u64 = 128 << 10;

impl Procedure for TinyConfig {
    const NAME: &'static str = "tiny";
    type Args = TinyArgs;
    type Summary = TinySummary;

    fn configure(a: &TinyArgs, target: &TargetChoice) -> Result<Configured<Self>, SuiteError> {
        if !(a.share > 0.0 && a.share <= 1.0) {
            return Err(SuiteError::Invalid("--share must be in (0, 100%]".into()));
        }
        Ok(Configured::new(TinyConfig {
            target: target.spec.clone(),
            share: a.share,
            qd: a.engine.qd_or(args::DEFAULT_QD)?,
        }))
    }

    fn target_spec(&self) -> &str {
        &self.target
    }

    fn real_open(&self) -> RealOpen {
        RealOpen::default()
    }

    fn plans(&self, _dir: &Path, info: &TargetInfo) -> Result<Vec<PhasePlan>, SuiteError> {
        let len = (info.capacity_bytes as f64 * self.share) as u64 / BLOCK_BYTES * BLOCK_BYTES;
        Ok(vec![
            PhasePlan::new("purge", "secure erase (purge)", Work::Purge),
            PhasePlan::new(
                "write",
                "one 128 KB sequential pass over the share",
                Work::SeqWrite {
                    start_bytes: 0,
                    len_bytes: len,
                    block_bytes: BLOCK_BYTES,
                    qd: self.qd,
                    passes: 1,
                },
            ),
        ])
    }

    fn summarize(
        &self,
        _dir: &Path,
        _runner: &Runner<'_>,
        records: &[PhaseRecord],
    ) -> Result<TinySummary, SuiteError> {
        let w = &records.iter().find(|r| r.name == "write").unwrap().metrics;
        Ok(TinySummary {
            written_bytes: w.write_bytes,
            write_rate_mb_per_s: w.data_rate_mb_per_s,
        })
    }
}

const TARGET: &str = "sim:client-7op,capacity=256m,seed=3";

#[test]
fn a_procedure_in_one_file_runs_records_reads_back_and_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    // Its options, as a sweep point parses them: the command line's names and units.
    let argv = ["--share=50%".to_owned(), "--qd=8".to_owned()];
    let a: TinyArgs = parse_options(TinyConfig::NAME, &argv).unwrap();
    let cfg = TinyConfig::configure(&a, &TargetChoice::sim(TARGET))
        .unwrap()
        .config;
    assert_eq!((cfg.share, cfg.qd), (0.5, 8));
    let e = parse_options::<TinyArgs>("tiny", &["--share=half".into()]).unwrap_err();
    assert!(
        e.message
            .starts_with("invalid value 'half' for '--share <PCT%>'"),
        "{e}"
    );

    // The one orchestrator runs it and writes its result.
    let r = execute(&dir, Start::New(cfg), &Control::default()).unwrap();
    assert!(r.complete);
    assert_eq!(r.procedure, "tiny");
    let names: Vec<&str> = r.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["purge", "write"]);
    let s = r.summary.clone().unwrap();
    assert_eq!(s.written_bytes, (256u64 << 20) / 2);
    assert!(s.write_rate_mb_per_s > 0.0);
    assert!(dir.join("series/write.parquet").is_file());

    // Read back as its own types, equal to what was written.
    let back = read_result::<TinyConfig>(&dir).unwrap();
    assert_eq!(back, r);

    // Its names follow the rule every result's do (units last, `_pct`).
    let summary = serde_json::to_value(&s).unwrap();
    for k in summary.as_object().unwrap().keys() {
        assert_eq!(storbench_results::naming::check(k), None, "{k}");
    }

    // The report takes a procedure it does not know: its phases and health, and the
    // chart its spec declares, in a section of its own.
    let (view, _) = storbench_report::html::load::load(&dir).unwrap();
    assert_eq!(view.procedure, "tiny");
    assert_eq!(view.phases.len(), 2);
    let chart = TINY_CHART.chart(std::slice::from_ref(&view)).unwrap();
    assert_eq!(chart.series[0].y, [s.write_rate_mb_per_s]);
    let html = render_html_with_charts(&[view], &[TINY_CHART], "a report");
    assert!(html.contains("<td>tiny</td>"), "the methods table names it");
    let section = &html[html.find("<section id=\"tiny\">").expect("its section")..];
    assert!(section.contains("id=\"chart-tiny-chart\""), "its chart");
}

/// The procedure's chart, declared as data.
const TINY_CHART: ChartSpec = ChartSpec {
    procedure: "tiny",
    title: "Tiny: one sequential pass",
    fields: &[("write_rate_mb_per_s", "sequential write")],
    unit: "MB/s (higher is better)",
    better: Better::Higher,
};
