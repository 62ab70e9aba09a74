//! Seasoning: simulating a used drive (seed 002). Purge; one contiguous sequential pass
//! of 128 KB writes over the whole user span (two for the SNIA variant); then a
//! sector-by-sector restore of a disk image over it, which adds randomness: the user's
//! image file, or a generated image (mixed file sizes, scattered placement,
//! deterministic by seed; see [`crate::image`]).

use crate::args::{self, EngineArgs, TargetChoice};
use crate::image::GeneratedImage;
use crate::phase::{PhasePlan, PhaseRecord, Runner, SuiteError, Work};
use crate::procedure::{Configured, Procedure};
use std::path::{Path, PathBuf};
use storbench_engine::TargetInfo;
pub use storbench_results::season::{SeasonConfig, SeasonSummary, DEFAULT_IMAGE_FILL};

/// `storbench season`'s own options.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct SeasonArgs {
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Accepted as every procedure accepts it; seasoning has no timed phase to shorten
    #[arg(long)]
    pub quick: bool,
    /// Disk image to restore (default: a generated one)
    #[arg(long, value_name = "FILE")]
    pub image: Option<PathBuf>,
    /// Share of the drive a generated image covers (below 100%)
    #[arg(long, default_value = "40%", value_name = "PCT%", value_parser = args::fraction)]
    pub image_fill: f64,
    /// Seed of a generated image: the same seed, the same image
    #[arg(long, default_value_t = 2009)]
    pub seed: u64,
    /// Sequential passes (2 = SNIA variant)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=2))]
    pub passes: u32,
}

/// The seasoning phases over `[0, span_bytes)`, the whole drive. (The trace bench
/// seasons with `--state seasoned`: the same pass, then the trace's own image.)
pub fn season_plans(cfg: &SeasonConfig, span_bytes: u64) -> Vec<PhasePlan> {
    let span = span_bytes / 4096 * 4096;
    assert!(span > 0, "seasoning span of {span_bytes} bytes");
    let restore = match &cfg.image {
        Some(p) => Work::FileImage {
            path: p.clone(),
            span_bytes: span,
            qd: cfg.qd,
        },
        None => Work::GeneratedImage {
            span_bytes: span,
            fill: cfg.image_fill,
            seed: cfg.image_seed,
            qd: cfg.qd,
        },
    };
    vec![
        PhasePlan::new("purge", "secure erase (purge)", Work::Purge),
        PhasePlan::new(
            "seq-pass",
            "one contiguous 128 KB sequential pass over the span",
            Work::SeqWrite {
                start_bytes: 0,
                len_bytes: span_bytes / (128 * 1024) * (128 * 1024),
                block_bytes: 128 * 1024,
                qd: cfg.qd,
                passes: cfg.passes,
            },
        ),
        PhasePlan::new(
            "restore",
            if cfg.image.is_some() {
                "sector-by-sector restore of the image file"
            } else {
                "sector-by-sector restore of a generated image"
            },
            restore,
        ),
    ]
}

pub fn season_summary(cfg: &SeasonConfig, records: &[PhaseRecord]) -> SeasonSummary {
    let m = |n: &str| {
        records
            .iter()
            .find(|r| r.name == n)
            .map(|r| r.metrics.clone())
            .unwrap_or_default()
    };
    let restore = m("restore");
    SeasonSummary {
        image: match &cfg.image {
            Some(p) => p.display().to_string(),
            None => format!(
                "generated (seed {}, {:.0}% of the span)",
                cfg.image_seed,
                cfg.image_fill * 100.0
            ),
        },
        image_restored_bytes: restore.write_bytes,
        image_writes: restore.write_ios,
        seq_pass_mb_per_s: m("seq-pass").data_rate_mb_per_s,
        restore_mb_per_s: restore.data_rate_mb_per_s,
    }
}

impl Procedure for SeasonConfig {
    const NAME: &'static str = "season";
    type Args = SeasonArgs;
    type Summary = SeasonSummary;

    fn configure(a: &SeasonArgs, target: &TargetChoice) -> Result<Configured<Self>, SuiteError> {
        let mut c = SeasonConfig::new(&target.spec);
        c.image = a
            .image
            .as_deref()
            .map(|p| args::absolute("--image", p))
            .transpose()?;
        if a.image_fill >= 1.0 {
            return Err(SuiteError::Invalid(
                "--image-fill must be below 100%".into(),
            ));
        }
        c.image_fill = a.image_fill;
        c.image_seed = a.seed;
        c.passes = a.passes;
        c.qd = a.engine.qd_or(args::DEFAULT_QD)?;
        c.data = a.engine.data;
        c.open = a.engine.open(target);
        Ok(Configured::new(c))
    }

    fn target_spec(&self) -> &str {
        &self.target
    }

    fn real_open(&self) -> crate::targets::RealOpen {
        self.open.clone()
    }

    fn plans(&self, _dir: &Path, info: &TargetInfo) -> Result<Vec<PhasePlan>, SuiteError> {
        crate::units::check_qd("--qd", self.qd).map_err(SuiteError::Invalid)?;
        if self.passes == 0 {
            return Err(SuiteError::Invalid("--passes must be at least 1".into()));
        }
        if !(self.image_fill > 0.0 && self.image_fill < 1.0) {
            return Err(SuiteError::Invalid(format!(
                "image fill {} must be between 0 and 1",
                self.image_fill
            )));
        }
        if let Some(p) = &self.image {
            if !p.is_file() {
                return Err(SuiteError::Invalid(format!(
                    "--image {}: not a readable file",
                    p.display()
                )));
            }
        }
        Ok(crate::phase::with_data(
            season_plans(self, info.capacity_bytes),
            self.data,
        ))
    }

    fn summarize(
        &self,
        _dir: &Path,
        _runner: &Runner<'_>,
        records: &[PhaseRecord],
    ) -> Result<SeasonSummary, SuiteError> {
        Ok(season_summary(self, records))
    }
}

/// Size of the generated image on a span (for messages).
pub fn generated_image_bytes(span_bytes: u64, fill: f64, seed: u64) -> u64 {
    use storbench_workload::Source;
    GeneratedImage::new(span_bytes, fill, seed, 0)
        .total_bytes()
        .unwrap_or(0)
}
