//! `storbench sweep PLAN.toml`: a design sweep on the simulated drive, every point on
//! this machine's cores (see `storbench-sweep`; `docs/sweeps.md`).

use super::out::{errln, out, outln};
use super::UserError;
use anyhow::Context;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use storbench_sweep::{LocalOptions, Plan, SweepError};

#[derive(clap::Args)]
pub struct Args {
    /// The sweep plan (TOML: targets, workloads, procedures, seeds)
    #[arg(value_name = "PLAN.toml")]
    pub plan: PathBuf,
    /// Print the plan's points and its size; run nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Output directory: the dataset (sweep.parquet) and each point's results; running
    /// again continues it, skipping finished points
    #[arg(
        short = 'o',
        long = "output",
        visible_alias = "out",
        value_name = "DIR",
        required_unless_present = "dry_run"
    )]
    pub out: Option<PathBuf>,
    /// Points run at once [default: every core]
    #[arg(short = 'j', long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub jobs: Option<u32>,
    /// No progress bar
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

fn user(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::Error::new(UserError {
        message: e.to_string(),
        hint: None,
    })
}

fn sweep_user(e: &SweepError) -> anyhow::Error {
    anyhow::Error::new(UserError {
        message: e.to_string(),
        hint: e.hint().map(str::to_owned),
    })
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let plan = Plan::load(&a.plan).map_err(user)?;
    if a.dry_run {
        out!("{}", plan.describe())?;
        return Ok(());
    }
    let out = a.out.expect("clap requires -o without --dry-run");
    let stop = Arc::new(AtomicBool::new(false));
    // Ctrl-C starts no new point and lets the running ones finish (their figures stay
    // those of an unstopped run); a second one exits at once, and those points
    // continue from their last checkpoint next time.
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 130, stop.clone())
            .context("installing the signal handler")?;
        signal_hook::flag::register(sig, stop.clone()).context("installing the signal handler")?;
    }
    let mut o = LocalOptions::all_cores();
    if let Some(j) = a.jobs {
        o.jobs = j as usize;
    }
    o.progress = std::io::stderr().is_terminal() && !a.quiet;
    o.stop = stop;
    if !a.quiet {
        errln!(
            "sweep {}: {} points, {} at a time, in {}",
            plan.title,
            plan.points.len(),
            o.jobs,
            out.display()
        );
    }
    let r = match storbench_sweep::run_local(&plan, &out, &o) {
        Ok(r) => r,
        Err(e @ (SweepError::Busy { .. } | SweepError::Plan(_) | SweepError::Invalid { .. })) => {
            return Err(sweep_user(&e))
        }
        Err(e) => return Err(anyhow::Error::new(e).context(format!("sweep in {}", out.display()))),
    };
    outln!(
        "{} of {} points finished ({} this run, {} before); dataset: {}",
        r.rows,
        r.planned,
        r.ran,
        r.already_done,
        r.dataset.display()
    )?;
    if r.interrupted {
        errln!("stopped: running the same command again continues the sweep");
        std::process::exit(130);
    }
    if !r.failed.is_empty() {
        for f in &r.failed {
            errln!("failed: point {} ({}): {}", f.index, f.id, f.message);
        }
        anyhow::bail!(
            "{} point(s) failed; the others are in the dataset",
            r.failed.len()
        );
    }
    Ok(())
}
