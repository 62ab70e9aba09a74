//! A phase as several jobs on threads of their own (`--jobs N` on a file or block
//! device): each job is the one engine loop ([`PhaseRun`]) on a target of its own (its
//! own ring and buffers on the same open file, sharing one clock), on a thread named
//! `job-N`, pinned to a CPU of its own where the process may use as many CPUs as
//! there are jobs (otherwise left to the scheduler). The calling thread coordinates:
//! it alone calls the caller's [`Observer`], so what observes a phase (checkpoints,
//! the journal, the progress bar, the I/O log) keeps to one thread and one code path.
//!
//! At each whole second of the phase every job stops at the mark and says where it
//! stands (the window that just ended, its errors, its position); once all have, the
//! coordinator merges the window into the phase's series and shows the observer one
//! [`SecondMark`] of all jobs at that instant. Only when the observer asks for the
//! phase's result (a checkpoint) does each job hand over its share at the mark: its
//! metrics and its I/Os in flight. Then every job goes on, or stops, as the observer
//! said. A job wakes at each whole second, so the others wait for it no longer than
//! a completion takes. A job that ends first crosses its last second before it says
//! so: at every later mark its whole share lies before the mark.
//!
//! Bounds: the jobs' messages to the coordinator queue at most [`UP_BOUND`] (I/O log
//! records when `--log-ios`; a full queue makes the jobs wait for the log), the
//! coordinator's to a job at most 2.

use super::merge::{job_seed, merge, JobPart};
use super::phase::{Jobs, JobsAt, PhaseRun, SecondMark};
use super::{EngineError, Flow, InFlightIo, Observer, Pacing, PhaseOutcome, RunOptions};
use crate::target::Target;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::time::Duration;
use storbench_metrics::{SecondSample, NS_PER_S};
use storbench_trace::IoRecord;
use storbench_workload::Source;

/// Messages the jobs may have queued for the coordinator.
pub const UP_BOUND: usize = 1024;
/// How often the coordinator looks at the caller's stop flag while it waits.
const STOP_POLL: Duration = Duration::from_millis(50);

/// A job to the coordinator.
enum Up {
    Io(IoRecord),
    Tick {
        job: usize,
        elapsed_ns: u64,
        done: u64,
    },
    /// At whole second `k`: the window that just ended and the job's position.
    Second {
        job: usize,
        at: Arrival,
    },
    /// Its share at the mark, when asked.
    Part {
        job: usize,
        part: JobPart,
        in_flight: Vec<InFlightIo>,
    },
    /// It ended: its share of the whole phase, or what stopped it.
    Done {
        job: usize,
        result: Result<JobPart, EngineError>,
    },
}

/// The coordinator to a job stopped at a mark.
enum Down {
    /// Hand over your share at the mark.
    Part,
    /// Go on (or stop).
    Go(Flow),
}

/// A job's share at a mark and its I/Os in flight there.
type Share = (JobPart, Vec<InFlightIo>);

/// Where a job stood when it reached a mark.
struct Arrival {
    k: u64,
    window: SecondSample,
    errors: u64,
    first_error: Option<String>,
    submitted: u64,
}

/// Run one phase as `targets.len()` jobs, job `j` driving `targets[j]` with
/// `sources[j]` on its own thread. The targets must share one clock (the same origin:
/// `RealTarget::job_target`). Each job keeps its own queue depth (the pacing's, per
/// job, as fio's iodepth with numjobs) and writes data of its own seed
/// ([`super::job_seed`]). The result is one: the jobs' shares merged (histograms
/// merged, series summed). `opts.stop` stops every job; the first job that fails
/// stops the others, and its error is returned once all have ended.
pub fn run_jobs(
    targets: Vec<Box<dyn Target + Send + '_>>,
    sources: Vec<Box<dyn Source + Send + '_>>,
    opts: &RunOptions,
    observer: &mut dyn Observer,
) -> Result<PhaseOutcome, EngineError> {
    let n = targets.len();
    assert!(n > 0 && sources.len() == n, "one source per job");
    let start_ns = targets[0].now_ns();
    let backend = targets[0].info().backend.clone();
    let cpus = job_cpus(n);
    let abort = Arc::new(AtomicBool::new(false));
    let (up_tx, up_rx) = sync_channel::<Up>(UP_BOUND);
    let mut downs = Vec::with_capacity(n);
    std::thread::scope(|s| -> Result<PhaseOutcome, EngineError> {
        for (j, (mut target, mut source)) in targets.into_iter().zip(sources).enumerate() {
            let (down_tx, down_rx) = sync_channel::<Down>(2);
            downs.push(down_tx);
            let job_opts = RunOptions {
                stop: Some(abort.clone()),
                start_ns: Some(start_ns),
                seed: job_seed(opts.seed, j as u32),
                ..opts.clone()
            };
            let up = up_tx.clone();
            let cpu = cpus.get(j).copied();
            let spawned = std::thread::Builder::new()
                .name(format!("job-{j}"))
                .spawn_scoped(s, move || {
                    if let Some(c) = cpu {
                        pin_to(c);
                    }
                    let mut departure = Departure {
                        up: up.clone(),
                        job: j,
                        sent: false,
                    };
                    let mut tap = Tap {
                        job: j,
                        up,
                        down: down_rx,
                    };
                    let result =
                        PhaseRun::new(target.as_mut(), vec![source.as_mut()], &job_opts, &mut tap)
                            .and_then(PhaseRun::run_part);
                    // The ring is closed on the thread that drove it.
                    drop(target);
                    departure.send(result);
                });
            if let Err(e) = spawned {
                abort.store(true, Ordering::Relaxed);
                return Err(EngineError::Invalid(format!(
                    "starting the thread of job {j}: {e}"
                )));
            }
        }
        drop(up_tx);
        let mut c = Coordinator {
            observer,
            downs,
            up: up_rx,
            alive: vec![true; n],
            arrived: (0..n).map(|_| None).collect(),
            parts: (0..n).map(|_| None).collect(),
            series: Vec::new(),
            done: vec![0; n],
            elapsed_ns: 0,
            error: None,
            abort: abort.clone(),
            user_stop: opts.stop.clone(),
            pacing: opts.pacing,
            start_ns,
            backend,
        };
        c.run();
        c.finish()
    })
}

/// CPUs to pin `jobs` jobs to, one each: the process's allowed CPUs in order, when it
/// has at least that many and more than one; none otherwise.
fn job_cpus(jobs: usize) -> Vec<usize> {
    let Ok(set) = rustix::thread::sched_getaffinity(None) else {
        return Vec::new();
    };
    let cpus: Vec<usize> = (0..rustix::thread::CpuSet::MAX_CPU)
        .filter(|&c| set.is_set(c))
        .collect();
    if cpus.len() < 2 || cpus.len() < jobs {
        return Vec::new();
    }
    cpus[..jobs].to_vec()
}

/// Pin the calling thread to `cpu`; a kernel that refuses leaves it where it is.
fn pin_to(cpu: usize) {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    let _ = rustix::thread::sched_setaffinity(None, &set);
}

/// Tells the coordinator that a job ended, even when its thread panics (then as an
/// error), so the coordinator never waits for a job that is gone.
struct Departure {
    up: SyncSender<Up>,
    job: usize,
    sent: bool,
}

impl Departure {
    fn send(&mut self, result: Result<JobPart, EngineError>) {
        self.sent = true;
        let _ = self.up.send(Up::Done {
            job: self.job,
            result,
        });
    }
}

impl Drop for Departure {
    fn drop(&mut self) {
        if !self.sent {
            let _ = self.up.send(Up::Done {
                job: self.job,
                result: Err(EngineError::Invalid(format!(
                    "job {} ended without a result (its thread panicked)",
                    self.job
                ))),
            });
        }
    }
}

/// A job's observer: forwards everything to the coordinator, and at each whole second
/// waits for it.
struct Tap {
    job: usize,
    up: SyncSender<Up>,
    down: Receiver<Down>,
}

impl Observer for Tap {
    fn on_io(&mut self, io: &IoRecord) {
        let _ = self.up.send(Up::Io(*io));
    }

    fn on_tick(&mut self, elapsed_ns: u64, done: u64, _series: &[SecondSample]) {
        let _ = self.up.send(Up::Tick {
            job: self.job,
            elapsed_ns,
            done,
        });
    }

    fn on_second(&mut self, mark: &SecondMark<'_>) -> Flow {
        let (errors, first_error) = mark.errors();
        let at = Arrival {
            k: mark.elapsed_ns / NS_PER_S,
            window: *mark.series().last().expect("a window ends at the mark"),
            errors,
            first_error: first_error.map(str::to_owned),
            submitted: mark.submitted_ios(),
        };
        if self.up.send(Up::Second { job: self.job, at }).is_err() {
            return Flow::Stop;
        }
        loop {
            match self.down.recv() {
                Ok(Down::Part) => {
                    let part = Up::Part {
                        job: self.job,
                        part: mark.part(),
                        in_flight: mark.in_flight(),
                    };
                    if self.up.send(part).is_err() {
                        return Flow::Stop;
                    }
                }
                Ok(Down::Go(flow)) => return flow,
                Err(_) => return Flow::Stop,
            }
        }
    }
}

/// The calling thread while the jobs run.
struct Coordinator<'o> {
    observer: &'o mut dyn Observer,
    downs: Vec<SyncSender<Down>>,
    up: Receiver<Up>,
    alive: Vec<bool>,
    /// Jobs stopped at the current mark.
    arrived: Vec<Option<Arrival>>,
    /// The shares of the jobs that ended.
    parts: Vec<Option<JobPart>>,
    /// The phase's series: the jobs' windows merged, one per mark passed.
    series: Vec<SecondSample>,
    done: Vec<u64>,
    elapsed_ns: u64,
    error: Option<EngineError>,
    abort: Arc<AtomicBool>,
    user_stop: Option<Arc<AtomicBool>>,
    pacing: Pacing,
    start_ns: u64,
    backend: String,
}

impl Coordinator<'_> {
    fn run(&mut self) {
        while self.alive.iter().any(|&a| a) {
            match self.up.recv_timeout(STOP_POLL) {
                Ok(m) => self.handle(m),
                Err(RecvTimeoutError::Timeout) => {
                    if self
                        .user_stop
                        .as_ref()
                        .is_some_and(|s| s.load(Ordering::Relaxed))
                    {
                        self.abort.store(true, Ordering::Relaxed);
                    }
                }
                // Every job's sender is gone: each sent its departure first.
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
    }

    fn handle(&mut self, m: Up) {
        match m {
            Up::Io(io) => self.observer.on_io(&io),
            Up::Tick {
                job,
                elapsed_ns,
                done,
            } => {
                self.done[job] = done;
                self.elapsed_ns = self.elapsed_ns.max(elapsed_ns);
                let done = self.done.iter().sum();
                self.observer.on_tick(self.elapsed_ns, done, &self.series);
            }
            Up::Second { job, at } => {
                assert!(self.arrived[job].is_none(), "job {job} passed a mark twice");
                self.arrived[job] = Some(at);
                self.release();
            }
            Up::Part { job, .. } => panic!("job {job} handed over its share unasked"),
            Up::Done { job, result } => {
                assert!(self.arrived[job].is_none(), "job {job} ended at a mark");
                self.alive[job] = false;
                match result {
                    Ok(part) => {
                        self.done[job] = part.counts.done;
                        self.parts[job] = Some(part);
                    }
                    Err(e) => {
                        self.error.get_or_insert(e);
                        self.abort.store(true, Ordering::Relaxed);
                    }
                }
                self.release();
            }
        }
    }

    /// Once every running job has reached the mark: the window into the series, the
    /// observer shown the mark, every job told to go on or stop.
    fn release(&mut self) {
        let n = self.alive.len();
        let waiting: Vec<usize> = (0..n).filter(|&j| self.alive[j]).collect();
        if waiting.is_empty() || waiting.iter().any(|&j| self.arrived[j].is_none()) {
            return;
        }
        let k = self.arrived[waiting[0]].as_ref().map_or(0, |a| a.k);
        assert!(
            waiting
                .iter()
                .all(|&j| self.arrived[j].as_ref().is_some_and(|a| a.k == k)),
            "jobs at different marks"
        );
        assert_eq!(
            self.series.len() as u64 + 1,
            k,
            "a mark passed without all jobs"
        );
        let t = (k - 1) as usize;
        let windows: Vec<SecondSample> = (0..n)
            .filter_map(|j| match (&self.arrived[j], &self.parts[j]) {
                (Some(a), _) => Some(a.window),
                (None, Some(p)) => p.metrics.series.get(t).copied(),
                (None, None) => None,
            })
            .collect();
        if !windows.is_empty() {
            self.series.push(SecondSample::merge_jobs(&windows));
        } else {
            self.series.push(SecondSample {
                t_s: t as u64,
                window_ns: NS_PER_S,
                ..SecondSample::default()
            });
        }
        let deferred = RefCell::new(Vec::new());
        let flow = {
            let view = ThreadsAt {
                arrived: &self.arrived,
                parts: &self.parts,
                downs: &self.downs,
                up: &self.up,
                taken: RefCell::new(None),
                deferred: &deferred,
                pacing: self.pacing,
                start_ns: self.start_ns,
                backend: &self.backend,
            };
            let mark = SecondMark {
                elapsed_ns: k * NS_PER_S,
                at_ns: self.start_ns + k * NS_PER_S,
                series: &self.series,
                jobs: Jobs::Threads(&view),
            };
            self.observer.on_second(&mark)
        };
        for j in waiting {
            self.arrived[j] = None;
            // A job gone meanwhile (its thread panicked) has no one to tell.
            let _ = self.downs[j].send(Down::Go(flow));
        }
        for m in deferred.into_inner() {
            self.handle(m);
        }
    }

    /// The phase's outcome once every job has ended, or the first job's error.
    fn finish(self) -> Result<PhaseOutcome, EngineError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let parts: Vec<JobPart> = self
            .parts
            .into_iter()
            .enumerate()
            .map(|(j, p)| {
                p.ok_or_else(|| EngineError::Invalid(format!("job {j} ended without a result")))
            })
            .collect::<Result<_, _>>()?;
        let done = parts.iter().map(|p| p.counts.done).sum();
        let outcome = merge(parts, self.pacing, self.start_ns, &self.backend);
        let m = &outcome.metrics;
        self.observer.on_tick(m.elapsed_ns, done, &m.series);
        Ok(outcome)
    }
}

/// The jobs stopped at a mark, as the observer sees them: positions from what they
/// said on arrival, shares at the mark asked for the first time they are wanted.
struct ThreadsAt<'c> {
    arrived: &'c [Option<Arrival>],
    parts: &'c [Option<JobPart>],
    downs: &'c [SyncSender<Down>],
    up: &'c Receiver<Up>,
    /// Every job's share at the mark and its I/Os in flight, once asked.
    taken: RefCell<Option<Vec<Share>>>,
    /// Other messages that came while the shares were asked for.
    deferred: &'c RefCell<Vec<Up>>,
    pacing: Pacing,
    start_ns: u64,
    backend: &'c str,
}

impl ThreadsAt<'_> {
    /// Ask the jobs at the mark for their shares (once); the jobs that ended give
    /// their whole, which lies before the mark.
    fn take(&self) -> std::cell::Ref<'_, Vec<Share>> {
        if self.taken.borrow().is_none() {
            let n = self.arrived.len();
            let mut got: Vec<Option<Share>> = (0..n)
                .map(|j| match (&self.arrived[j], &self.parts[j]) {
                    (None, Some(p)) => Some((p.clone(), Vec::new())),
                    _ => None,
                })
                .collect();
            for (j, a) in self.arrived.iter().enumerate() {
                if a.is_some() && self.downs[j].send(Down::Part).is_err() {
                    panic!("job {j} is gone while stopped at a mark");
                }
            }
            while got.iter().any(Option::is_none) {
                match self.up.recv() {
                    Ok(Up::Part {
                        job,
                        part,
                        in_flight,
                    }) => got[job] = Some((part, in_flight)),
                    Ok(other) => self.deferred.borrow_mut().push(other),
                    Err(_) => panic!("the jobs are gone while stopped at a mark"),
                }
            }
            *self.taken.borrow_mut() =
                Some(got.into_iter().map(|g| g.expect("every share")).collect());
        }
        std::cell::Ref::map(self.taken.borrow(), |t| t.as_ref().expect("taken"))
    }
}

impl JobsAt for ThreadsAt<'_> {
    fn jobs(&self) -> usize {
        self.arrived.len()
    }

    fn errors(&self) -> (u64, Option<&str>) {
        let mut n = 0;
        let mut first = None;
        for (a, p) in self.arrived.iter().zip(self.parts) {
            let (e, f) = match (a, p) {
                (Some(a), _) => (a.errors, a.first_error.as_deref()),
                (None, Some(p)) => (p.metrics.errors, p.first_error.as_deref()),
                (None, None) => (0, None),
            };
            n += e;
            first = first.or(f);
        }
        (n, first)
    }

    fn submitted_ios(&self, job: usize) -> u64 {
        match (&self.arrived[job], &self.parts[job]) {
            (Some(a), _) => a.submitted,
            (None, Some(p)) => p.counts.submitted,
            (None, None) => 0,
        }
    }

    fn in_flight(&self, job: usize) -> Vec<InFlightIo> {
        self.take()[job].1.clone()
    }

    fn outcome(&self) -> PhaseOutcome {
        let parts = self.take().iter().map(|(p, _)| p.clone()).collect();
        merge(parts, self.pacing, self.start_ns, self.backend)
    }
}
