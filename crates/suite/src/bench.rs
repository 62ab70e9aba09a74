//! The trace bench (seeds 000, 003, 004): optionally season the drive, then replay a
//! trace with idle time cut (queue-depth pacing: each I/O is issued once the number in
//! flight drops below what the trace had, so only busy time counts), and report the
//! average data rate (total, read, write), service time (mean, std dev, percentiles),
//! busy time and I/O counts.
//!
//! `TRACE` is a Parquet trace; a `PROFILE` name (heavy-2011, ...) is synthesized first
//! into `DIR/trace.parquet`, sized for the target. `--span 75%` folds the trace's
//! footprint into the first 75% of the drive, adding spare area to trace tests; with
//! `--season` the seasoning covers the same 75%, so the rest stays unmapped.

use crate::phase::{PhasePlan, PhaseRecord, Runner, SuiteError, Work};
use crate::procedure::Procedure;
use crate::season::{season_plans, season_summary, SeasonConfig, SeasonSummary};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use storbench_engine::TargetInfo;
use storbench_metrics::LatencyStats;
use storbench_workload::synth::SynthError;

pub const TRACE_FILE: &str = "trace.parquet";

/// What to replay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Workload {
    Trace { path: PathBuf },
    Profile { name: String, scale: f64, seed: u64 },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchConfig {
    pub target: String,
    /// How to open a real target.
    #[serde(default)]
    pub open: crate::targets::RealOpen,
    pub workload: Workload,
    /// Season the drive first.
    pub season: Option<SeasonConfig>,
    /// Fold the trace onto this share of the drive (1.0 = whole drive).
    pub span_fraction: f64,
    /// QD for trace records without completion times.
    pub default_qd: u32,
}

impl BenchConfig {
    pub fn new(target: &str, workload: Workload) -> Self {
        BenchConfig {
            target: target.to_owned(),
            open: Default::default(),
            workload,
            season: None,
            span_fraction: 1.0,
            default_qd: 1,
        }
    }

    /// The trace file the replay reads.
    pub fn trace_path(&self, dir: &Path) -> PathBuf {
        match &self.workload {
            Workload::Trace { path } => path.clone(),
            Workload::Profile { .. } => dir.join(TRACE_FILE),
        }
    }
}

/// The bench section of result.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchSummary {
    pub trace: String,
    pub data_rate_mb_per_s: f64,
    pub read_rate_mb_per_s: f64,
    pub write_rate_mb_per_s: f64,
    pub service: LatencyStats,
    pub service_read: LatencyStats,
    pub service_write: LatencyStats,
    pub busy_s: f64,
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub span_bytes: u64,
    pub folded_ios: u64,
    pub trace_avg_qd: Option<f64>,
    pub replayed_avg_qd: Option<f64>,
    pub seasoning: Option<SeasonSummary>,
    /// Name of the trace in the report's trace table.
    pub trace_name: String,
    /// Characterization of the trace (the report's trace table).
    pub characterize: Option<storbench_trace::Characterization>,
}

impl Procedure for BenchConfig {
    const NAME: &'static str = "bench";

    fn target_spec(&self) -> &str {
        &self.target
    }

    fn real_open(&self) -> crate::targets::RealOpen {
        self.open.clone()
    }

    fn prepare(&self, dir: &Path, info: &TargetInfo) -> Result<(), SuiteError> {
        let Workload::Profile { name, scale, seed } = &self.workload else {
            let p = self.trace_path(dir);
            if !p.is_file() {
                return Err(SuiteError::Invalid(format!(
                    "{}: no such trace file; hint: import or synthesize one first, or pass a profile name (storbench profiles)",
                    p.display()
                )));
            }
            return Ok(());
        };
        let out = dir.join(TRACE_FILE);
        if out.is_file() {
            return Ok(());
        }
        let profile = storbench_workload::synth::load(name).map_err(|e| {
            SuiteError::Invalid(format!(
                "profile {name}: {e}; hint: `storbench profiles` lists them"
            ))
        })?;
        let opts = storbench_workload::synth::SynthOptions {
            scale: *scale,
            capacity_bytes: crate::consistency::span_of(info, self.span_fraction),
            seed: *seed,
        };
        let meta = storbench_workload::synth::trace_meta(&profile, &opts);
        let tmp = dir.join("trace.parquet.tmp");
        let synth_err = |e: String| SuiteError::Invalid(format!("synthesizing {name}: {e}"));
        let mut w = storbench_trace::TraceWriter::create(&tmp, &meta)
            .map_err(|e| synth_err(e.to_string()))?;
        storbench_workload::synth::generate(&profile, &opts, &mut w, &mut |_, _| {}).map_err(
            |e| match e {
                // Here the footprint is the tested span: say what to change in this command.
                e @ SynthError::FootprintTooSmall { .. } => synth_err(format!(
                    "{e}\n  hint: the trace bench fits the trace into the tested span ({:.1} MiB here): use a larger target or --span, or a smaller --scale",
                    opts.capacity_bytes as f64 / (1u64 << 20) as f64
                )),
                e => synth_err(e.to_string()),
            },
        )?;
        w.finish().map_err(|e| synth_err(e.to_string()))?;
        std::fs::rename(&tmp, &out).map_err(|e| SuiteError::Io {
            context: format!("renaming {} into place", out.display()),
            source: e,
        })?;
        Ok(())
    }

    fn plans(&self, dir: &Path, info: &TargetInfo) -> Result<Vec<PhasePlan>, SuiteError> {
        if !(self.span_fraction > 0.0 && self.span_fraction <= 1.0) {
            return Err(SuiteError::Invalid("--span must be in (0, 100%]".into()));
        }
        crate::units::check_qd("the default queue depth", self.default_qd)
            .map_err(SuiteError::Invalid)?;
        let mut plans = Vec::new();
        if let Some(s) = &self.season {
            plans.extend(season_plans(
                s,
                crate::consistency::span_of(info, self.span_fraction),
                "season-",
            ));
        }
        let mut replay = PhasePlan::new(
            "replay",
            "trace replay, idle time cut (queue-depth pacing)",
            Work::Replay {
                path: self.trace_path(dir),
                default_qd: self.default_qd,
            },
        );
        if self.span_fraction < 1.0 {
            replay.fold_span_bytes = Some(crate::consistency::span_of(info, self.span_fraction));
        }
        plans.push(replay);
        Ok(plans)
    }

    fn summarize(
        &self,
        dir: &Path,
        runner: &Runner<'_>,
        records: &[PhaseRecord],
    ) -> Result<serde_json::Value, SuiteError> {
        let rec = records
            .iter()
            .find(|r| r.name == "replay")
            .expect("the bench has a replay phase");
        let m = rec.metrics.clone();
        let trace = self.trace_path(dir);
        let characterize = storbench_trace::characterize_file(&trace).ok();
        let trace_name = match &self.workload {
            Workload::Trace { path } => path
                .file_stem()
                .map_or("trace".into(), |s| s.to_string_lossy().into_owned()),
            Workload::Profile { name, scale, .. } => format!("{name} x{scale}"),
        };
        let s = BenchSummary {
            trace: match &self.workload {
                Workload::Trace { path } => path.display().to_string(),
                Workload::Profile { name, scale, .. } => {
                    format!("{name} (synthesized, scale {scale})")
                }
            },
            data_rate_mb_per_s: m.data_rate_mb_per_s,
            read_rate_mb_per_s: m.read_rate_mb_per_s,
            write_rate_mb_per_s: m.write_rate_mb_per_s,
            service: m.service.clone(),
            service_read: m.service_read.clone(),
            service_write: m.service_write.clone(),
            busy_s: m.busy_ns as f64 / 1e9,
            reads: m.read_ios,
            writes: m.write_ios,
            bytes_read: m.read_bytes,
            bytes_written: m.write_bytes,
            span_bytes: crate::consistency::span_of(runner.target.info(), self.span_fraction),
            folded_ios: rec.folded_ios,
            trace_avg_qd: rec.fidelity.as_ref().and_then(|f| f.trace_avg_qd),
            replayed_avg_qd: rec.fidelity.as_ref().and_then(|f| f.replayed_avg_qd),
            seasoning: self
                .season
                .as_ref()
                .map(|s| season_summary(s, records, "season-")),
            trace_name,
            characterize,
        };
        Ok(serde_json::to_value(s).expect("serializes"))
    }
}
