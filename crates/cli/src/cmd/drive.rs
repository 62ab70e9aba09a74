//! What every command that drives a target shares (`run`, `replay` and the drive
//! procedures): the one signal setup, the run control (checkpoints, progress, quiet),
//! starting or resuming the run through the suite's runner, and the one mapping of
//! its errors to messages and exit codes.

use super::out::{errln, outln, StdoutError};
use super::UserError;
use anyhow::Context;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use storbench_report::RunResult;
use storbench_suite::args::TargetArgs;
use storbench_suite::state::StateError;
use storbench_suite::targets::TargetOpenError;
use storbench_suite::{execute, Control, Procedure, Start, SuiteError, SuiteResult};

/// Exit status of an interrupted run (128 + SIGINT), the same for every command.
pub const EXIT_INTERRUPTED: i32 = 130;

/// The exit codes, for `--help`.
pub const EXIT_CODES: &str = "Exit status, the same in every command:
  0    success (also when standard output is closed early, as by `| head`)
  1    failure: I/O errors on the target or a file, a full disk (the results measured
       so far are kept, and the first failed I/O is printed with its offset and error)
  2    usage or input error: a bad option, a bad trace or profile, a target refused by
       the safety guard, an output refused (a device, a link, an input, a file
       storbench did not write)
  130  interrupted (Ctrl-C, SIGTERM): the run stops at the next whole second, keeps what
       it measured up to there, and continues with --resume DIR";

/// Every command that drives a target: how it reaches the target, where and how it
/// runs, and the procedure's own options (declared once, beside the procedure:
/// `storbench_suite::consistency::ConsistencyArgs`, ...).
#[derive(clap::Args, Clone, Debug)]
#[command(after_help = EXIT_CODES)]
pub struct Driven<A: clap::Args> {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub drive: DriveArgs,
    #[command(flatten)]
    pub opts: A,
}

/// How the run is driven: flags every command that drives a target takes.
#[derive(clap::Args, Clone, Debug)]
pub struct DriveArgs {
    /// Result directory (created; must not hold another run) [default:
    /// storbench-COMMAND-UNIXTIME]
    #[arg(
        long = "output",
        short = 'o',
        visible_alias = "out",
        value_name = "DIR",
        conflicts_with = "resume"
    )]
    pub out: Option<PathBuf>,
    /// Continue the interrupted run in DIR (its stored options are used)
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// Discard the run or results already in the result directory
    #[arg(long, conflicts_with = "resume")]
    pub replace: bool,
    /// Time between checkpoints inside long phases (at most 60s): wall time on a real
    /// target, the simulated drive's own clock on `sim:`; taken at whole seconds of
    /// the phase, they change no figure
    #[arg(long, default_value = "60s", value_name = "TIME", value_parser = super::values::duration)]
    pub checkpoint_every: Duration,
    /// No progress bars or phase lines
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

fn user(message: String, hint: &str) -> anyhow::Error {
    anyhow::Error::new(UserError {
        message,
        hint: (!hint.is_empty()).then(|| hint.to_owned()),
    })
}

/// Ctrl-C and SIGTERM set the returned flag: the run stops at the next whole second
/// with a checkpoint there. A second signal exits at once (status 130); the last
/// checkpoint is kept, as after a kill.
pub fn stop_on_signals() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, EXIT_INTERRUPTED, stop.clone())
            .context("installing the signal handler")?;
        signal_hook::flag::register(sig, stop.clone()).context("installing the signal handler")?;
    }
    Ok(stop)
}

fn control(d: &DriveArgs) -> anyhow::Result<Control> {
    let every = d.checkpoint_every;
    if every.is_zero() || every > Duration::from_secs(60) {
        return Err(user(
            format!("--checkpoint-every {every:?}: must be more than 0 and at most 60s"),
            "checkpoints are taken at least every minute",
        ));
    }
    Ok(Control {
        stop: stop_on_signals()?,
        progress: std::io::stderr().is_terminal() && !d.quiet,
        checkpoint_interval: every,
        verbose: !d.quiet,
        command_line: std::env::args().collect(),
        replace: d.replace,
    })
}

/// Start the run of procedure `P` its options configure (or resume the one in
/// `--resume`), run it to the end and return its result. An interrupted run exits
/// here with status 130 after saying where it stands. With `--resume`,
/// `--destroy-data` is the consent given again (the device changed at its ends since
/// the last checkpoint, see `storbench_suite::trust`).
pub fn drive<P: Procedure>(a: &Driven<P::Args>) -> anyhow::Result<(PathBuf, SuiteResult<P>)> {
    let d = &a.drive;
    let ctl = control(d)?;
    let (dir, start) = match (&d.resume, &a.target.destroy_data) {
        (Some(dir), None) => (dir.clone(), Start::Resume),
        (Some(dir), Some(c)) => (
            dir.clone(),
            Start::ResumeWithConsent(
                storbench_suite::args::absolute("--destroy-data", c)
                    .map_err(|e| suite_error(e, P::NAME, dir))?,
            ),
        ),
        (None, _) => {
            let dir = d.out.clone().unwrap_or_else(|| default_dir(P::NAME));
            let configured = a
                .target
                .choice()
                .and_then(|t| P::configure(&a.opts, &t))
                .map_err(|e| suite_error(e, P::NAME, &dir))?;
            for n in &configured.notes {
                errln!("note: {n}");
            }
            (dir, configured.start())
        }
    };
    if ctl.verbose {
        let what = if d.resume.is_some() {
            "resuming"
        } else {
            "running"
        };
        errln!("{what} {} in {}", P::NAME, dir.display());
    }
    match execute::<P>(&dir, start, &ctl) {
        Ok(r) => Ok((dir, r)),
        Err(e @ SuiteError::Interrupted { .. }) => {
            errln!("{e}");
            errln!(
                "results so far (marked incomplete): {}",
                dir.join("result.json").display()
            );
            std::process::exit(EXIT_INTERRUPTED);
        }
        Err(e) => Err(suite_error(e, P::NAME, &dir)),
    }
}

/// A result directory named after the command and the time, when none is given.
fn default_dir(procedure: &str) -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    PathBuf::from(format!("storbench-{procedure}-{secs}"))
}

/// The suite's errors as the user sees them: their mistakes (bad options, a target
/// that may not be used, a bad trace, a directory holding another run) exit 2;
/// failed I/O and everything else exit 1.
fn suite_error(e: SuiteError, procedure: &str, dir: &Path) -> anyhow::Error {
    use storbench_engine::EngineError;
    match e {
        SuiteError::Invalid(_) => {
            let message = e.to_string();
            // A message may carry its own, more specific hint.
            let hint = if message.contains("hint:") {
                ""
            } else {
                "check the options; `storbench sim` lists the simulated presets"
            };
            user(message, hint)
        }
        SuiteError::Refused { message, hint } => user(message, &hint),
        SuiteError::Target(TargetOpenError::Real { spec, source }) => {
            super::run::target_err(source).context(format!("target `{spec}`"))
        }
        SuiteError::Target(t @ TargetOpenError::Sim { .. }) => user(t.to_string(), ""),
        // A state file or journal that cannot be written (a full disk) is a failure
        // (issue 30: it exited 2); a result directory that is not one (a file, a
        // missing parent, no permission), another run's, or a state that does not read
        // is the user's.
        SuiteError::State(StateError::Io { ref source, .. }) if !super::path_mistake(source) => {
            anyhow::Error::new(e).context(format!("{procedure} in {}", dir.display()))
        }
        SuiteError::State(s) => user(s.to_string(), ""),
        SuiteError::Source { phase, source } => user(
            format!("phase {phase}: {source}"),
            "is the input a storbench trace?",
        ),
        SuiteError::Engine {
            phase,
            source: EngineError::Invalid(m),
        } => user(format!("phase {phase}: {m}"), ""),
        SuiteError::Engine {
            phase,
            source: EngineError::Source(s),
        } => user(
            format!("phase {phase}: {s}"),
            "is the input a storbench trace?",
        ),
        e @ SuiteError::IoErrors { .. } => anyhow::Error::new(e).context(format!(
            "{procedure} in {} (results kept, marked incomplete)",
            dir.display()
        )),
        e => anyhow::Error::new(e).context(format!("{procedure} in {}", dir.display())),
    }
}

/// After a run whose phases count failed I/Os instead of stopping (`run`, `replay`):
/// the first failure and how many, as the error the command exits with.
pub fn failed_ios<C, S>(r: &RunResult<C, S>, dir: &Path) -> anyhow::Result<()> {
    match r.failed_ios() {
        None => Ok(()),
        Some((phase, n, first)) => Err(anyhow::anyhow!(
            "phase {phase}: {n} I/Os failed; the first: {first} (results kept in {})",
            dir.join("result.json").display()
        )),
    }
}

/// The lines every driven command ends with: drive health, notes, where the results are.
pub fn print_footer<C, S>(dir: &Path, r: &RunResult<C, S>) -> Result<(), StdoutError> {
    let d = &r.health_delta;
    if d.available {
        let gb = |b: Option<u64>| b.map_or("-".into(), |b| format!("{:.2} GB", b as f64 / 1e9));
        outln!(
            "drive health: host writes {}, NAND writes {}, WA {}",
            gb(d.host_write_bytes),
            gb(d.nand_write_bytes),
            d.write_amplification
                .map_or("-".into(), |w| format!("{w:.2}"))
        )?;
    } else if let Some(n) = &d.note {
        outln!("drive health: not available ({n})")?;
    }
    for n in &r.notes {
        outln!("note: {n}")?;
    }
    outln!("results: {}", dir.join("result.json").display())
}
