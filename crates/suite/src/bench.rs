//! The trace bench (seeds 000, 003, 004): optionally season the drive, then replay a
//! trace with idle time cut (queue-depth pacing: each I/O is issued once the number in
//! flight drops below what the trace had, so only busy time counts), and report the
//! average data rate (total, read, write), service time (mean, std dev, percentiles),
//! busy time and I/O counts.
//!
//! `TRACE` is a Parquet trace; a `PROFILE` name (heavy-2011, ...) is synthesized first
//! into `DIR/trace.parquet`, from the profile, its scale and seed alone (never the
//! target's size), so every drive runs the same I/Os; a trace whose footprint exceeds
//! the drive is folded onto it, and a note says so. `--span 75%` folds the trace's
//! footprint into the first 75% of the drive, adding spare area to trace tests; the
//! drive state's writes cover the same 75%, so the rest stays unmapped.
//!
//! Drive states (the 2009 article, seed 002; [`DriveState`]): `fresh` purges and
//! restores the trace's image (the data it reads before writing it, see
//! [`crate::image::TraceImage`]); `seasoned` purges, writes one 128 KB sequential pass
//! over the span, then the same image; `used` is seasoned, then the trace replayed
//! `used_passes` times before the measured pass. `as-is` (the default) replays on the
//! drive as it is. `--season` (older) seasons with a generated image instead of the
//! trace's.
//!
//! `--max-idle D` keeps the trace's idle gaps up to D (the drive may collect garbage
//! in them; busy time still excludes them); `--no-trim` leaves the trace's TRIMs out.

use crate::health::HealthDelta;
use crate::image::IMAGE_BLOCK_BYTES;
use crate::phase::{PhasePlan, PhaseRecord, Runner, SuiteError, Work};
use crate::procedure::Procedure;
use crate::season::{season_plans, season_summary, SeasonConfig, SeasonSummary};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use storbench_engine::{DataKind, TargetInfo};
use storbench_metrics::LatencyStats;
use storbench_trace::atomic::OutputDir;
use storbench_workload::synth::SynthError;

pub const TRACE_FILE: &str = "trace.parquet";

/// The capacity a profile's footprint is a share of, for a synthesized bench trace:
/// the synthesizer's reference drive (256 GiB) times the scale (at most 1), at least
/// [`MIN_PROFILE_BASIS_BYTES`] (below it the profiles' streams get too little room),
/// in whole MiB. It depends on the profile's scale alone, never on the target, so
/// every drive runs the same I/Os; a drive smaller than the footprint gets them
/// folded (noted).
pub fn profile_basis_bytes(scale: f64) -> u64 {
    let b = storbench_workload::synth::DEFAULT_CAPACITY_BYTES as f64 * scale.min(1.0);
    ((b as u64) >> 20 << 20).max(MIN_PROFILE_BASIS_BYTES)
}

/// Smallest basis of a synthesized bench trace's footprint (see [`profile_basis_bytes`]).
pub const MIN_PROFILE_BASIS_BYTES: u64 = 512 << 20;

/// What to replay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Workload {
    Trace { path: PathBuf },
    Profile { name: String, scale: f64, seed: u64 },
}

/// The state the drive is put in before the measured replay (2009 article).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriveState {
    /// No preparation: the drive as it is.
    #[default]
    AsIs,
    /// Purge, then the trace's image.
    Fresh,
    /// Purge, one 128 KB sequential pass over the span, then the trace's image.
    Seasoned,
    /// Seasoned, then the trace replayed `used_passes` times.
    Used,
}

impl DriveState {
    pub fn name(self) -> &'static str {
        match self {
            DriveState::AsIs => "as-is",
            DriveState::Fresh => "fresh",
            DriveState::Seasoned => "seasoned",
            DriveState::Used => "used",
        }
    }

    /// From its name (`fresh`, `seasoned`, `used`, `as-is`).
    pub fn parse(s: &str) -> Option<DriveState> {
        [
            DriveState::AsIs,
            DriveState::Fresh,
            DriveState::Seasoned,
            DriveState::Used,
        ]
        .into_iter()
        .find(|d| d.name() == s)
    }
}

/// Replays of the trace before the measured one in the `used` state, by default.
pub const DEFAULT_USED_PASSES: u32 = 3;

fn default_used_passes() -> u32 {
    DEFAULT_USED_PASSES
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
    /// Drive state before the measured replay.
    #[serde(default)]
    pub state: DriveState,
    /// `used`: replays of the trace before the measured one.
    #[serde(default = "default_used_passes")]
    pub used_passes: u32,
    /// Idle gaps of the trace kept up to this long (`None`: all idle cut).
    #[serde(default)]
    pub max_idle_ns: Option<u64>,
    /// Leave the trace's TRIMs out of every replay.
    #[serde(default)]
    pub no_trim: bool,
    /// Content of every write of the procedure.
    #[serde(default = "crate::phase::random_data")]
    pub data: DataKind,
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
            state: DriveState::AsIs,
            used_passes: DEFAULT_USED_PASSES,
            max_idle_ns: None,
            no_trim: false,
            data: DataKind::Random,
        }
    }

    /// The span the trace and the state's writes are folded onto.
    fn span(&self, info: &TargetInfo) -> u64 {
        if self.span_fraction < 1.0 {
            crate::consistency::span_of(info, self.span_fraction)
        } else {
            info.capacity_bytes / IMAGE_BLOCK_BYTES * IMAGE_BLOCK_BYTES
        }
    }

    /// The replay of the trace, as the measured pass and the `used` passes run it.
    fn replay_plan(&self, name: &str, title: &str, dir: &Path, info: &TargetInfo) -> PhasePlan {
        let mut replay = PhasePlan::new(
            name,
            title,
            Work::Replay {
                path: self.trace_path(dir),
                default_qd: self.default_qd,
                skip_trims: self.no_trim,
            },
        );
        if self.span_fraction < 1.0 {
            replay.fold_span_bytes = Some(crate::consistency::span_of(info, self.span_fraction));
        }
        replay.max_idle_ns = self.max_idle_ns;
        replay
    }

    /// The state's phases before the measured replay.
    fn state_plans(&self, dir: &Path, info: &TargetInfo) -> Result<Vec<PhasePlan>, SuiteError> {
        if let Some(s) = &self.season {
            if !matches!(self.state, DriveState::AsIs | DriveState::Seasoned) {
                return Err(SuiteError::Invalid(format!(
                    "--season seasons the drive; it does not go with --state {}",
                    self.state.name()
                )));
            }
            return Ok(season_plans(
                s,
                crate::consistency::span_of(info, self.span_fraction),
                "season-",
            ));
        }
        if self.state == DriveState::AsIs {
            return Ok(Vec::new());
        }
        let span = self.span(info);
        let mut plans = vec![PhasePlan::new("purge", "secure erase (purge)", Work::Purge)];
        if self.state != DriveState::Fresh {
            let fill = crate::consistency::span_of(info, self.span_fraction);
            plans.push(PhasePlan::new(
                "seq-pass",
                "one contiguous 128 KB sequential pass over the span",
                Work::SeqWrite {
                    start_bytes: 0,
                    len_bytes: fill / (128 * 1024) * (128 * 1024),
                    block_bytes: 128 * 1024,
                    qd: 32,
                    passes: 1,
                },
            ));
        }
        plans.push(PhasePlan::new(
            "image",
            "restore the trace's image (the data it reads before writing), in address order",
            Work::TraceImage {
                path: self.trace_path(dir),
                span_bytes: span,
                qd: 32,
            },
        ));
        if self.state == DriveState::Used {
            if self.used_passes == 0 {
                return Err(SuiteError::Invalid(
                    "--used-passes 0: a used drive has run the trace at least once; hint: use --state seasoned".into(),
                ));
            }
            for i in 1..=self.used_passes {
                plans.push(self.replay_plan(
                    &format!("used-{i}"),
                    &format!("use the drive: trace replay {i} of {}", self.used_passes),
                    dir,
                    info,
                ));
            }
        }
        Ok(plans)
    }

    /// The state's name as results carry it.
    pub fn state_name(&self) -> &'static str {
        if self.season.is_some() {
            DriveState::Seasoned.name()
        } else {
            self.state.name()
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
    /// Drive state before the measured replay: `as-is`, `fresh`, `seasoned`, `used`.
    #[serde(default)]
    pub state: String,
    /// `used`: replays of the trace before the measured one.
    #[serde(default)]
    pub used_passes: Option<u32>,
    /// The trace's image restored by the state (bytes, writes).
    #[serde(default)]
    pub image_bytes: u64,
    #[serde(default)]
    pub image_writes: u64,
    /// The measured replay's own host and flash writes and their ratio (the state's
    /// writes are not in it).
    #[serde(default)]
    pub replay_counters: Option<HealthDelta>,
    /// Idle gaps kept up to this long (`--max-idle`); `None`: all idle cut.
    #[serde(default)]
    pub max_idle_s: Option<f64>,
    /// TRIMs of the trace not replayed (`--no-trim`), per replay.
    #[serde(default)]
    pub trims_skipped: u64,
    /// Content of the written data (`random`, `zeros`, `compressible:R`).
    #[serde(default)]
    pub data: String,
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

    fn prepare(&self, dir: &OutputDir, _info: &TargetInfo) -> Result<(), SuiteError> {
        let Workload::Profile { name, scale, seed } = &self.workload else {
            let p = self.trace_path(dir.path());
            if !p.is_file() {
                return Err(SuiteError::Invalid(format!(
                    "{}: no such trace file; hint: import or synthesize one first, or pass a profile name (storbench profiles)",
                    p.display()
                )));
            }
            return Ok(());
        };
        let out = dir.join(TRACE_FILE);
        let there = dir.entry(TRACE_FILE).map_err(|e| SuiteError::Io {
            context: format!("checking {}", out.display()),
            source: e,
        })?;
        if there == storbench_trace::atomic::Entry::File {
            return Ok(());
        }
        let profile = storbench_workload::synth::load(name).map_err(|e| {
            SuiteError::Invalid(format!(
                "profile {name}: {e}; hint: `storbench profiles` lists them"
            ))
        })?;
        let opts = storbench_workload::synth::SynthOptions {
            scale: *scale,
            capacity_bytes: profile_basis_bytes(*scale),
            seed: *seed,
        };
        let meta = storbench_workload::synth::trace_meta(&profile, &opts);
        let synth_err = |e: String| SuiteError::Invalid(format!("synthesizing {name}: {e}"));
        // Appears at its name only when finished (a temporary file until then).
        let mut w = storbench_trace::TraceWriter::create_in(dir, TRACE_FILE, &meta)
            .map_err(|e| synth_err(e.to_string()))?;
        storbench_workload::synth::generate(&profile, &opts, &mut w, &mut |_, _| {}).map_err(
            |e| match e {
                // Here the footprint is the tested span: say what to change in this command.
                e @ SynthError::FootprintTooSmall { .. } => synth_err(format!(
                    "{e}\n  hint: the profile's footprint shrinks with --scale ({:.1} MiB of offsets at scale {scale}): use a larger --scale",
                    opts.capacity_bytes as f64 / (1u64 << 20) as f64
                )),
                e => synth_err(e.to_string()),
            },
        )?;
        w.finish().map_err(|e| synth_err(e.to_string()))?;
        Ok(())
    }

    fn plans(&self, dir: &Path, info: &TargetInfo) -> Result<Vec<PhasePlan>, SuiteError> {
        if !(self.span_fraction > 0.0 && self.span_fraction <= 1.0) {
            return Err(SuiteError::Invalid("--span must be in (0, 100%]".into()));
        }
        crate::units::check_qd("the default queue depth", self.default_qd)
            .map_err(SuiteError::Invalid)?;
        let mut plans = self.state_plans(dir, info)?;
        plans.push(self.replay_plan(
            "replay",
            "trace replay, idle time cut (queue-depth pacing)",
            dir,
            info,
        ));
        Ok(crate::phase::with_data(plans, self.data))
    }

    fn notes(&self, dir: &Path, records: &[PhaseRecord]) -> Vec<String> {
        let mut notes = Vec::new();
        let folded: u64 = records
            .iter()
            .filter(|r| matches!(r.work, Work::Replay { .. }))
            .map(|r| r.folded_ios)
            .sum();
        if let (Workload::Profile { name, scale, .. }, true) = (&self.workload, folded > 0) {
            notes.push(format!(
                "the {name} trace (scale {scale}) spans more than the tested span of this drive: {folded} of its I/Os were folded onto it; a larger drive runs the same trace unfolded"
            ));
        }
        if self.no_trim {
            let trims =
                storbench_trace::characterize_file(&self.trace_path(dir)).map_or(0, |c| c.trims);
            let replays = records
                .iter()
                .filter(|r| matches!(r.work, Work::Replay { .. }))
                .count();
            notes.push(format!(
                "--no-trim: the trace's {trims} TRIMs were not replayed ({replays} replay(s) of the trace, as Tom's Hardware's bench does)"
            ));
        }
        if let Some(n) = self.max_idle_ns {
            notes.push(format!(
                "--max-idle: the trace's idle gaps were kept up to {:.3} s (the drive could work in the background); busy time does not count them",
                n as f64 / 1e9
            ));
        }
        notes
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
        let image = records
            .iter()
            .find(|r| r.name == "image")
            .map(|r| r.metrics.clone())
            .unwrap_or_default();
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
            state: self.state_name().into(),
            used_passes: (self.state == DriveState::Used).then_some(self.used_passes),
            image_bytes: image.write_bytes,
            image_writes: image.write_ios,
            replay_counters: rec.counters.clone(),
            max_idle_s: self.max_idle_ns.map(|n| n as f64 / 1e9),
            trims_skipped: if self.no_trim {
                characterize.as_ref().map_or(0, |c| c.trims)
            } else {
                0
            },
            data: crate::units::data_name(self.data),
            trace_name,
            characterize,
        };
        Ok(serde_json::to_value(s).expect("serializes"))
    }
}
