//! The embedded runner: a plan's points on this machine's cores, no other service.
//!
//! `jobs` worker threads (`sweep-N`) take the next unfinished point from a shared
//! counter, run it to its end in its own directory and record it; each point holds one
//! simulated drive, so memory is bounded by `jobs` drives.
//!
//! A stop request (Ctrl-C) starts no new point and stops the running ones at their next
//! whole second, checkpointed there (the suite's checkpoints change nothing: a point
//! continued later ends with the figures of a point never stopped). A point killed
//! outright (a second Ctrl-C, kill -9, power loss) continues from its last checkpoint.
//! Running the sweep again skips the finished points and continues the stopped ones.

use crate::plan::{Plan, Point};
use crate::point::{self, PointError};
use crate::store::{SweepDir, SweepError};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub struct LocalOptions {
    /// Points run at once (at least 1).
    pub jobs: usize,
    /// Draw a progress bar over points on stderr (the CLI sets this on a terminal).
    pub progress: bool,
    /// Set to start no further point (running ones finish).
    pub stop: Arc<AtomicBool>,
}

impl LocalOptions {
    /// Every core, no bar, a fresh stop flag.
    pub fn all_cores() -> LocalOptions {
        LocalOptions {
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            progress: false,
            stop: Arc::new(AtomicBool::new(false)),
        }
    }
}

/// A point that failed: its index, id and error.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub index: usize,
    pub id: String,
    pub message: String,
}

#[derive(Clone, Debug)]
pub struct Outcome {
    pub planned: usize,
    /// Finished before this run (skipped).
    pub already_done: usize,
    /// Finished by this run.
    pub ran: usize,
    pub failed: Vec<Failure>,
    /// A stop request ended the run before every point finished.
    pub interrupted: bool,
    pub dataset: PathBuf,
    /// Rows in the dataset (finished points).
    pub rows: usize,
}

impl Outcome {
    pub fn complete(&self) -> bool {
        self.rows == self.planned
    }
}

fn bar(total: usize, done: usize, show: bool) -> ProgressBar {
    let b = ProgressBar::with_draw_target(
        Some(total as u64),
        if show {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    b.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} points {msg} ETA {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    b.set_position(done as u64);
    b.reset_eta();
    b
}

/// A stop flag nobody raises: a detached point runs to its end (its directory is
/// temporary, so there is nothing to continue).
fn never_stop() -> Arc<AtomicBool> {
    Arc::new(AtomicBool::new(false))
}

/// A failed point, told on stderr and counted on the bar.
fn failure(pb: &ProgressBar, p: &Point, message: String) -> Failure {
    // Dropped when stderr is closed: the failure is in the outcome.
    pb.suspend(|| {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "point {} ({}): {message}", p.index, p.id);
    });
    pb.inc(1);
    Failure {
        index: p.index,
        id: p.id.clone(),
        message,
    }
}

/// Run `plan` into `out` with `o.jobs` points at a time, then write the dataset.
pub fn run_local(plan: &Plan, out: &Path, o: &LocalOptions) -> Result<Outcome, SweepError> {
    let sd = SweepDir::open(out, plan)?;
    let pending: Vec<&Point> = sd.pending(plan)?;
    let already_done = plan.points.len() - pending.len();
    let pb = bar(plan.points.len(), already_done, o.progress);
    let next = AtomicUsize::new(0);
    let ran = AtomicUsize::new(0);
    let failed: Mutex<Vec<Failure>> = Mutex::new(Vec::new());
    let interrupted = AtomicBool::new(false);
    // The first error that is not the point's own (a full disk writing point.json).
    let fatal: Mutex<Option<SweepError>> = Mutex::new(None);
    let workers = o.jobs.max(1).min(pending.len());
    std::thread::scope(|s| {
        for w in 0..workers {
            let work = || loop {
                if o.stop.load(Ordering::Relaxed) || fatal.lock().expect("lock").is_some() {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(p) = pending.get(i) else { break };
                let t0 = Instant::now();
                let dir = match sd.point_dir(p) {
                    Ok(d) => d,
                    Err(e) => {
                        fatal.lock().expect("lock").get_or_insert(e);
                        break;
                    }
                };
                match point::run_point(&p.run, &dir, o.stop.clone()) {
                    Ok(row) => match sd.record(p, row, t0.elapsed().as_millis() as u64, "local") {
                        Ok(_) => {
                            ran.fetch_add(1, Ordering::Relaxed);
                            pb.inc(1);
                        }
                        Err(e) => {
                            fatal.lock().expect("lock").get_or_insert(e);
                        }
                    },
                    Err(PointError::Interrupted { .. }) => {
                        interrupted.store(true, Ordering::Relaxed);
                    }
                    Err(e @ (PointError::Failed(_) | PointError::Spec(_))) => {
                        let message = e.to_string();
                        failed.lock().expect("lock").push(failure(&pb, p, message));
                    }
                }
            };
            std::thread::Builder::new()
                .name(format!("sweep-{w}"))
                .spawn_scoped(s, work)
                .expect("spawning a sweep worker");
        }
    });
    pb.finish_and_clear();
    if let Some(e) = fatal.into_inner().expect("lock") {
        return Err(e);
    }
    let (dataset, rows) = sd.write_dataset(plan)?;
    let mut failed = failed.into_inner().expect("lock");
    failed.sort_by_key(|f| f.index);
    Ok(Outcome {
        planned: plan.points.len(),
        already_done,
        ran: ran.into_inner(),
        failed,
        interrupted: interrupted.into_inner()
            || (o.stop.load(Ordering::Relaxed) && rows < plan.points.len()),
        dataset,
        rows,
    })
}

/// Run one point in a private temporary directory and return its row and every file
/// it wrote (for a runner on another machine, which ships them back).
pub fn run_detached(p: &Point) -> Result<(point::Row, crate::store::Files, u64), SweepError> {
    let tmp = tempfile::Builder::new()
        .prefix("storbench-point-")
        .tempdir()
        .map_err(|e| SweepError::Io {
            path: std::env::temp_dir(),
            context: "creating a temporary point directory",
            source: e,
        })?;
    let dir = tmp.path().join(&p.id);
    let t0 = Instant::now();
    let row = point::run_point(&p.run, &dir, never_stop())
        .map_err(|e| SweepError::Point(format!("point {} ({}): {e}", p.index, p.id)))?;
    let wall_ms = t0.elapsed().as_millis() as u64;
    let files = crate::store::collect_files(&dir)?;
    Ok((row, files, wall_ms))
}
