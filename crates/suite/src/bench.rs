//! The trace bench (seeds 000, 003, 004): optionally put the drive in a state, then replay a
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
//! drive as it is. `--image FILE` restores the user's disk image in place of the trace's
//! (seed 002's "disk image"). The one way to season a drive for a bench: `--season`
//! (older, a generated image) is now `--state seasoned`, with a note.
//!
//! `--max-idle D` keeps the trace's idle gaps up to D (the drive may collect garbage
//! in them; busy time still excludes them); `--no-trim` leaves the trace's TRIMs out.

use crate::args::{self, EngineArgs, TargetChoice};
use crate::image::IMAGE_BLOCK_BYTES;
use crate::phase::{PhasePlan, PhaseRecord, Runner, SuiteError, Work};
use crate::procedure::{Configured, Procedure};
use std::path::{Path, PathBuf};
use std::time::Duration;
use storbench_engine::TargetInfo;
pub use storbench_results::bench::{
    BenchConfig, BenchSummary, DriveState, Workload, DEFAULT_USED_PASSES, TRACE_FILE,
};
use storbench_trace::atomic::OutputDir;
use storbench_workload::synth::SynthError;

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

/// The queue depth a replay keeps for trace I/Os without completion times, unless
/// `--qd` says otherwise.
pub const DEFAULT_TRACE_QD: u32 = 1;

/// Scale of a synthesized profile with `--quick`.
pub const QUICK_SCALE: f64 = 0.002;

/// `storbench bench`'s own options.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct BenchArgs {
    /// A Parquet trace, or a profile name to synthesize (heavy-2011, light-2011, ...)
    #[arg(required_unless_present = "resume")]
    pub workload: Option<String>,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Short parameters that finish in seconds on a small simulated drive
    #[arg(long)]
    pub quick: bool,
    /// Older spelling of --state seasoned (which restores the trace's own image, or
    /// --image, where --season restored a generated one)
    #[arg(long, conflicts_with = "state", hide = true)]
    pub season: bool,
    /// Drive state before the measured replay (2009 article): fresh (purge, the trace's
    /// image), seasoned (purge, 128 KB sequential pass, the image), used (seasoned,
    /// then the trace replayed --used-passes times), as-is (no preparation)
    #[arg(long, default_value = "as-is", value_parser = ["as-is", "fresh", "seasoned", "used"])]
    pub state: String,
    /// --state used: replays of the trace before the measured one
    #[arg(long, value_name = "N", default_value_t = DEFAULT_USED_PASSES)]
    pub used_passes: u32,
    /// Keep the trace's idle gaps up to this long (e.g. 1s) instead of cutting them all,
    /// so the drive can collect garbage; busy time still excludes them
    #[arg(long, value_name = "TIME", value_parser = args::duration)]
    pub max_idle: Option<Duration>,
    /// Do not replay the trace's TRIMs (Tom's Hardware's bench; a note counts them)
    #[arg(long)]
    pub no_trim: bool,
    /// --state fresh, seasoned or used: restore this disk image file (sector by sector,
    /// over the tested span) in place of the trace's own image
    #[arg(long, value_name = "FILE")]
    pub image: Option<PathBuf>,
    /// Fold the trace onto this share of the drive (e.g. 75% = 25% spare area)
    #[arg(long, default_value = "100%", value_name = "PCT%", value_parser = args::fraction)]
    pub span: f64,
    /// Scale of a synthesized profile [default: 1; --quick: 0.002]
    #[arg(long)]
    pub scale: Option<f64>,
    /// Seed of a synthesized profile: the same seed, the same trace
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl BenchArgs {
    /// What to replay: a trace file (read whole and checked before any phase runs: a
    /// bad trace must not surface after hours of seasoning) or a profile.
    fn workload(&self) -> Result<Workload, SuiteError> {
        let w = self
            .workload
            .as_deref()
            .expect("clap requires the workload without --resume");
        if Path::new(w).is_file() {
            let path = std::fs::canonicalize(w).map_err(|e| SuiteError::Io {
                context: format!("resolving {w}"),
                source: e,
            })?;
            storbench_trace::TraceReader::open(&path).map_err(args::trace_input)?;
            Ok(Workload::Trace { path })
        } else if storbench_workload::synth::builtin(w).is_some() || w.ends_with(".toml") {
            Ok(Workload::Profile {
                name: w.to_owned(),
                scale: self
                    .scale
                    .unwrap_or(if self.quick { QUICK_SCALE } else { 1.0 }),
                seed: self.seed,
            })
        } else {
            Err(SuiteError::Refused {
                message: format!("{w}: neither a trace file nor a known profile"),
                hint: "`storbench profiles` lists the profiles; `storbench import` makes a trace"
                    .into(),
            })
        }
    }
}

/// How the bench's phases are planned (on the results crate's configuration).
trait Plans {
    fn span(&self, info: &TargetInfo) -> u64;
    fn replay_plan(&self, name: &str, title: &str, dir: &Path, info: &TargetInfo) -> PhasePlan;
    fn state_plans(&self, dir: &Path, info: &TargetInfo) -> Result<Vec<PhasePlan>, SuiteError>;
}

impl Plans for BenchConfig {
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
        plans.push(match &self.image {
            None => PhasePlan::new(
                "image",
                "restore the trace's image (the data it reads before writing), in address order",
                Work::TraceImage {
                    path: self.trace_path(dir),
                    span_bytes: span,
                    qd: 32,
                },
            ),
            Some(path) => PhasePlan::new(
                "image",
                "sector-by-sector restore of the image file",
                Work::FileImage {
                    path: path.clone(),
                    span_bytes: span,
                    qd: 32,
                },
            ),
        });
        if self.state == DriveState::Used {
            if self.used_passes == 0 {
                return Err(SuiteError::refused(
                    "--used-passes 0: a used drive has run the trace at least once",
                    "use --state seasoned",
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
}

/// The configuration of `bench` from its options, replaying `workload` rather than the
/// one `a` names: a sweep's generator workload, whose trace is written only when its
/// point runs.
pub fn configure_with(
    a: &BenchArgs,
    workload: Workload,
    target: &TargetChoice,
) -> Result<Configured<BenchConfig>, SuiteError> {
    let t = &target.spec;
    let mut c = BenchConfig::new(t, workload);
    c.span_fraction = a.span;
    let mut notes = Vec::new();
    if a.season {
        c.state = DriveState::Seasoned;
        notes.push(
            "--season is --state seasoned: purge, one 128 KB sequential pass, then the trace's own image (or --image), where --season restored a generated one".into(),
        );
    } else {
        c.state = DriveState::parse(&a.state).expect("clap checks the state");
    }
    if let Some(p) = &a.image {
        if c.state == DriveState::AsIs {
            return Err(SuiteError::Refused {
                message: "--image: the drive as it is restores no image".into(),
                hint: "give --state fresh, seasoned or used with --image".into(),
            });
        }
        c.image = Some(args::absolute("--image", p)?);
    }
    c.default_qd = a.engine.qd_or(DEFAULT_TRACE_QD)?;
    c.used_passes = a.used_passes;
    c.max_idle_ns = a.max_idle.map(args::ns);
    c.no_trim = a.no_trim;
    c.data = a.engine.data;
    c.open = a.engine.open(target);
    Ok(Configured {
        config: c,
        notes,
        scanned: Vec::new(),
    })
}

impl Procedure for BenchConfig {
    const NAME: &'static str = "bench";
    type Args = BenchArgs;
    type Summary = BenchSummary;

    fn configure(a: &BenchArgs, target: &TargetChoice) -> Result<Configured<Self>, SuiteError> {
        configure_with(a, a.workload()?, target)
    }

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
                return Err(SuiteError::refused(
                    format!("{}: no such trace file", p.display()),
                    "import or synthesize one first, or pass a profile name (storbench profiles)",
                ));
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
            let hint = e
                .hint()
                .unwrap_or_else(|| "`storbench profiles` lists them".into());
            SuiteError::refused(format!("profile {name}: {e}"), hint)
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
                e @ SynthError::FootprintTooSmall { .. } => SuiteError::refused(
                    format!("synthesizing {name}: {e}"),
                    format!(
                        "the profile's footprint shrinks with --scale ({:.1} MiB of offsets at scale {scale}): use a larger --scale",
                        opts.capacity_bytes as f64 / (1u64 << 20) as f64
                    ),
                ),
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
        crate::units::check_qd("the default queue depth", self.default_qd)?;
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
    ) -> Result<BenchSummary, SuiteError> {
        let rec = records
            .iter()
            .find(|r| r.name == "replay")
            .expect("the bench has a replay phase");
        let m = rec.metrics.clone();
        let phase = |n: &str| records.iter().find(|r| r.name == n).map(|r| &r.metrics);
        let image = phase("image").cloned().unwrap_or_default();
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
            read_bytes: m.read_bytes,
            write_bytes: m.write_bytes,
            span_bytes: crate::consistency::span_of(runner.target.info(), self.span_fraction),
            folded_ios: rec.folded_ios,
            trace_avg_qd: rec.fidelity.as_ref().and_then(|f| f.trace_avg_qd),
            replayed_avg_qd: rec.fidelity.as_ref().and_then(|f| f.replayed_avg_qd),
            state: self.state_name().into(),
            used_passes: (self.state == DriveState::Used).then_some(self.used_passes),
            image: self.image_name(),
            image_bytes: image.write_bytes,
            image_writes: image.write_ios,
            image_mb_per_s: phase("image").map(|m| m.data_rate_mb_per_s),
            seq_pass_mb_per_s: phase("seq-pass").map(|m| m.data_rate_mb_per_s),
            replay_counters: rec.counters.clone(),
            max_idle_s: self.max_idle_ns.map(|n| n as f64 / 1e9),
            trims_skipped: if self.no_trim {
                characterize.as_ref().map_or(0, |c| c.trims)
            } else {
                0
            },
            data: crate::units::data_name(self.data),
            trace_name,
            characterize: characterize.and_then(|c| match serde_json::to_value(c) {
                Ok(serde_json::Value::Object(m)) => Some(m),
                _ => None,
            }),
        };
        Ok(s)
    }
}
