//! `storbench twin measure|fit`: a drive's digital twin (issue 33, `docs/twin.md`).
//! `measure` runs the twin's plan as a procedure (guard, checkpoints, `--resume`);
//! `fit` fits a simulated drive to the measurement in DIR/result.json and writes
//! DIR/twin.json.

use super::drive::{drive, print_footer, Driven};
use super::out::outln;
use super::{values, UserError};
use anyhow::Context;
use std::path::PathBuf;
use storbench_suite::twin::{TwinMeasureArgs, TwinMeasureConfig};
use storbench_suite::Procedure;
use storbench_twin::{FitOptions, TwinFile, TWIN_FILE};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
}

#[derive(clap::Subcommand)]
pub enum Sub {
    /// Measure a drive with the twin's plan (about 40 min on a 256 GB drive; seconds on sim:)
    Measure(Driven<TwinMeasureArgs>),
    /// Fit a simulated twin to a measurement: writes DIR/twin.json
    Fit(FitArgs),
}

#[derive(clap::Args)]
pub struct FitArgs {
    /// Result directory of `storbench twin measure`
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Presets the fit may start from (the nearest is chosen) [default: every preset]
    #[arg(long, value_delimiter = ',', value_name = "PRESET,...")]
    pub presets: Vec<String>,
    /// Capacity of the simulated drives the fit runs the plan on
    #[arg(long, default_value = "256m", value_name = "SIZE", value_parser = values::size)]
    pub eval_capacity: u64,
    /// Most Levenberg-Marquardt iterations
    #[arg(long, default_value_t = 20)]
    pub max_iterations: usize,
    /// Starting points besides the nearest preset (the best of a sample around it),
    /// each descended from; the fit costs about STARTS + 1 descents
    #[arg(long, default_value_t = storbench_twin::fit::DEFAULT_STARTS)]
    pub starts: usize,
    /// Simulated measurements run at once [default: every core]
    #[arg(short = 'j', long, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub jobs: Option<u32>,
    /// Replace a twin.json storbench did not write
    #[arg(long)]
    pub overwrite: bool,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    match a.command {
        Sub::Measure(m) => run_measure(m),
        Sub::Fit(f) => run_fit(f),
    }
}

fn run_measure(a: Driven<TwinMeasureArgs>) -> anyhow::Result<()> {
    let (dir, r) = drive::<TwinMeasureConfig>(&a)?;
    let Some(m) = &r.summary else {
        return Ok(print_footer(&dir, &r)?);
    };
    outln!(
        "twin measurement of {}: {} figures",
        r.target.name,
        m.figures.len()
    )?;
    for f in &m.figures {
        outln!("  {:<28} {:>12.1} {}", f.name, f.value, f.unit)?;
    }
    outln!("fit a twin: storbench twin fit {}", dir.display())?;
    print_footer(&dir, &r)?;
    Ok(())
}

fn run_fit(a: FitArgs) -> anyhow::Result<()> {
    let reading = || format!("{}: reading the measurement", a.dir.display());
    // What kind of result it is first, so another procedure's reads as such.
    let kind = storbench_report::read_result::<serde_json::Value, serde_json::Value>(&a.dir)
        .with_context(reading)?;
    if kind.procedure != TwinMeasureConfig::NAME {
        return Err(anyhow::Error::new(UserError {
            message: format!(
                "{}: a `{}` result, not a twin measurement",
                a.dir.display(),
                kind.procedure
            ),
            hint: Some("measure first: storbench twin measure -t TARGET -o DIR".into()),
        }));
    }
    let r = storbench_suite::read_result::<TwinMeasureConfig>(&a.dir).with_context(reading)?;
    let Some(m) = r.summary else {
        return Err(anyhow::Error::new(UserError {
            message: format!(
                "{}: the measurement has no figures (it stopped before its summary)",
                a.dir.display()
            ),
            hint: Some("finish it: storbench twin measure --resume DIR".into()),
        }));
    };
    let mut opts = FitOptions {
        presets: a.presets,
        eval_capacity_bytes: a.eval_capacity,
        max_iterations: a.max_iterations,
        starts: a.starts,
        ..FitOptions::default()
    };
    if let Some(j) = a.jobs {
        opts.jobs = j as usize;
    }
    let t0 = std::time::Instant::now();
    let twin = storbench_twin::fit(&m, &opts).map_err(|e| {
        anyhow::Error::new(UserError {
            message: format!("{}: {e}", a.dir.display()),
            hint: None,
        })
    })?;
    let wall = t0.elapsed();
    let path = a.dir.join(TWIN_FILE);
    let bytes = serde_json::to_vec_pretty(&twin).expect("twin.json serializes");
    storbench_trace::atomic::write_atomic_with(
        &path,
        &bytes,
        &storbench_trace::atomic::Rule::overwrite(a.overwrite),
    )
    .with_context(|| format!("writing {}", path.display()))?;
    print_twin(&twin)?;
    outln!(
        "fit: {} iterations, {} simulated measurements, {:.1} s; wrote {}",
        twin.iterations,
        twin.evaluations,
        wall.as_secs_f64(),
        path.display()
    )?;
    Ok(())
}

fn print_twin(t: &TwinFile) -> anyhow::Result<()> {
    outln!("twin: {}", t.target)?;
    outln!(
        "  {:<28} {:>12} {:>12} {:>8}",
        "figure",
        "measured",
        "twin",
        "error"
    )?;
    for f in &t.figures {
        outln!(
            "  {:<28} {:>12.1} {:>12.1} {:>+7.1}%",
            f.name,
            f.measured,
            f.twin,
            f.error_pct
        )?;
    }
    if t.unidentified.is_empty() {
        outln!("every parameter moves a measured figure")?;
    } else {
        outln!(
            "unidentified (the twin keeps the preset's guess): {}",
            t.unidentified.join(", ")
        )?;
    }
    Ok(())
}
