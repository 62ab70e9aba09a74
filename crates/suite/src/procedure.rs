//! What every procedure shares: start or resume a run in a directory, open the target,
//! rebuild a simulated drive's state after a resume, run the phases, record drive
//! health before and after, and write the results.

use crate::health::{self, HealthSnapshot};
use crate::output;
use crate::phase::{Control, PhasePlan, PhaseRecord, Runner, SuiteError};
use crate::state::{RunDir, RunState};
use crate::targets::{is_sim_spec, RealOpen, SuiteTarget};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::{Path, PathBuf};
use storbench_engine::{BufferPlan, TargetIdentity, TargetInfo};
use storbench_results::RunResult;
use storbench_trace::atomic::OutputDir;
use storbench_workload::replay::TraceScan;

/// A procedure: its options, its configuration (stored in the run state, so a resume
/// needs only the directory), its phases, and what it computes from their records.
pub trait Procedure: Serialize + DeserializeOwned + Clone {
    /// Command name (`consistency`, `season`, `trim-check`, `bench`).
    const NAME: &'static str;
    /// Its own options, declared once: the CLI's subcommand flattens them and a sweep
    /// plan's keys are parsed through them ([`crate::args::parse_options`]).
    type Args: clap::Args + clap::FromArgMatches + Clone + std::fmt::Debug;
    /// Its own section of result.json, typed (in `storbench-results`, where the report
    /// reads it back as this type).
    type Summary: Serialize + DeserializeOwned + Clone + std::fmt::Debug;
    /// The configuration of a new run from its options, on `target`; every check that
    /// needs no open target is made here, before anything is created.
    fn configure(
        args: &Self::Args,
        target: &crate::args::TargetChoice,
    ) -> Result<Configured<Self>, SuiteError>;
    fn target_spec(&self) -> &str;
    /// How to open a real target (size of a file, data-destruction consent).
    fn real_open(&self) -> crate::targets::RealOpen;
    /// The phases, from the configuration and the opened target.
    fn plans(&self, dir: &Path, info: &TargetInfo) -> Result<Vec<PhasePlan>, SuiteError>;
    /// Work before the first phase (the trace bench synthesizes its trace into the run
    /// directory, which it writes only through `dir`). Must be idempotent: it runs
    /// again on resume.
    fn prepare(&self, _dir: &OutputDir, _info: &TargetInfo) -> Result<(), SuiteError> {
        Ok(())
    }
    /// The trace the procedure replays, for result.json's `trace`.
    fn trace(&self) -> Option<storbench_results::TraceSummary> {
        None
    }
    /// Notes of the procedure's own for result.json and the terminal (what it left out
    /// or changed), from the finished phases.
    fn notes(&self, _dir: &Path, _records: &[PhaseRecord]) -> Vec<String> {
        Vec::new()
    }
    /// The procedure's own section of result.json, from the finished phases.
    fn summarize(
        &self,
        dir: &Path,
        runner: &Runner<'_>,
        records: &[PhaseRecord],
    ) -> Result<Self::Summary, SuiteError>;
}

/// A configuration made from options, what the user should know about how they were
/// read (an older spelling mapped onto its new one), and the traces read whole and
/// checked while making it ([`TraceScan::of`]), which the run does not read again.
#[derive(Clone, Debug)]
pub struct Configured<P> {
    pub config: P,
    pub notes: Vec<String>,
    pub scanned: Scans,
}

impl<P> Configured<P> {
    pub fn new(config: P) -> Self {
        Configured {
            config,
            notes: Vec::new(),
            scanned: Vec::new(),
        }
    }

    /// With a trace read whole and checked while configuring.
    pub fn with_scan(mut self, path: PathBuf, scan: TraceScan) -> Self {
        self.scanned.push((path, scan));
        self
    }

    /// The start of a new run of it.
    pub fn start(self) -> Start<P> {
        Start::Scanned(self.config, self.scanned)
    }
}

/// Start a new run or continue one.
pub enum Start<P> {
    New(P),
    /// A new run, with the traces already read whole and checked ([`Configured`]).
    Scanned(P, Scans),
    Resume,
    /// Continue with the consent to destroy the target's data given again
    /// (`--resume DIR --destroy-data=/dev/EXACT`): needed when the device no longer
    /// holds at its ends what it held at the run's last checkpoint (`crate::trust`).
    ResumeWithConsent(PathBuf),
}

/// The complete result of a run of procedure `P` (result.json): the one result type
/// with `P`'s configuration and summary.
pub type SuiteResult<P> = RunResult<P, <P as Procedure>::Summary>;

/// The identity to record at the start of a run: the target's, plus, for a block
/// device, the strong signatures of the disk images the run will restore on it (after
/// a restore the device carries them by storbench's own doing, and a resume must not
/// take them for someone else's data).
fn recorded_identity(
    target: &SuiteTarget,
    plans: &[crate::phase::PhasePlan],
) -> Result<Option<TargetIdentity>, SuiteError> {
    let Some(mut id) = target.identity().cloned() else {
        return Ok(None);
    };
    if let TargetIdentity::BlockDevice(d) = &mut id {
        for p in plans {
            if let crate::phase::Work::FileImage { path, .. } = &p.work {
                let keys = storbench_engine::safety::signature_keys(path)
                    .map_err(|e| SuiteError::Invalid(format!("--image {}: {e}", path.display())))?;
                d.signatures.extend(keys);
            }
        }
    }
    Ok(Some(id))
}

/// Traces read whole and checked, by path.
pub type Scans = Vec<(PathBuf, TraceScan)>;

/// The traces a run replays, read whole (every row checked, page checksums too) and
/// checked against the target before the run writes anything: a bad trace must not
/// surface after hours of purging and seasoning. `existing_only`: skip traces not made
/// yet (a profile is synthesized by `prepare`, into the run directory). `known`:
/// traces this process already scanned (a new run's first check), not read again.
fn scan_replays(
    plans: &[crate::phase::PhasePlan],
    info: &TargetInfo,
    existing_only: bool,
    known: Vec<(PathBuf, TraceScan)>,
) -> Result<Vec<(PathBuf, TraceScan)>, SuiteError> {
    let mut out = Vec::new();
    for p in plans {
        let crate::phase::Work::Replay { path, .. } = &p.work else {
            continue;
        };
        if existing_only && !path.exists() {
            continue;
        }
        let invalid = |e: String| {
            SuiteError::Invalid(format!(
                "phase {}: {e}; nothing was written to the target",
                p.name
            ))
        };
        let refused = |e: String, hint: &str| SuiteError::Refused {
            message: format!("phase {}: {e}; nothing was written to the target", p.name),
            hint: hint.into(),
        };
        // A trace scanned already is not read again, unless `prepare` rewrote it since
        // (its size changed); it is checked against this target all the same (issue 30:
        // a 1 TiB read was folded onto a 1 GiB simulated drive, an empty trace replayed).
        let len = std::fs::metadata(path).map(|m| m.len()).ok();
        let scan = match known.iter().find(|(k, _)| k == path) {
            Some((_, k)) if len == Some(k.file_bytes) => k.clone(),
            _ => TraceScan::of(path).map_err(|e| invalid(e.to_string()))?,
        };
        if scan.rows == 0 {
            return Err(refused(
                format!(
                    "{}: the trace holds no I/O, so the replay would do no work",
                    path.display()
                ),
                "give a trace with I/O in it (`storbench characterize` counts them)",
            ));
        }
        let span = p.fold_span_bytes.unwrap_or(info.capacity_bytes);
        scan.check_fits(path, span).map_err(|e| {
            refused(
                e.to_string(),
                "every I/O must fit in the target (or its --span): replay on a larger target or span",
            )
        })?;
        out.push((path.clone(), scan));
    }
    Ok(out)
}

/// Slots and buffer size a real target is opened with by default
/// (`storbench_engine::OpenOptions`), enough for every generator phase.
const DEFAULT_SLOTS: usize = 128;
const DEFAULT_SLOT_BYTES: u64 = 1 << 20;

/// Queue depth and largest I/O of a phase's generator (0 for phases without one).
fn phase_needs(w: &crate::phase::Work) -> (usize, u64) {
    use crate::phase::Work;
    match w {
        Work::SeqWrite {
            qd, block_bytes, ..
        }
        | Work::RandWrite {
            qd, block_bytes, ..
        } => (*qd as usize, *block_bytes),
        Work::Trim { qd, .. } => (*qd as usize, 0),
        Work::GeneratedImage { qd, .. }
        | Work::FileImage { qd, .. }
        | Work::TraceImage { qd, .. } => (*qd as usize, crate::image::RESTORE_IO_BYTES),
        Work::Generate { spec } => (spec.qd as usize, spec.block_bytes),
        Work::Replay { default_qd, .. } => (*default_qd as usize, 0),
        Work::Purge | Work::Idle { .. } => (0, 0),
    }
}

/// `--buffer-memory`, or its default.
fn buffer_cap(real: &crate::targets::RealOpen) -> u64 {
    real.buffer_memory_bytes
        .unwrap_or(storbench_engine::DEFAULT_BUFFER_MEMORY_BYTES)
}

/// Buffers for the traces a run replays on a target of `block_bytes` logical blocks:
/// as many slots as the most I/Os any trace (or phase) has in flight and as large as
/// the largest I/O once widened to whole blocks (issue 30: 4 KiB at byte 512 moves
/// 8 KiB on a 4Kn drive), within `--buffer-memory`; `None` when the buffers `real`
/// opens the target with (the defaults unless it says) hold the traces. Fewer slots
/// when the cap is hit (a note says so), an error naming the trace row when one I/O
/// alone is over it.
fn buffer_plan(
    plans: &[crate::phase::PhasePlan],
    scans: &[(PathBuf, TraceScan)],
    real: &crate::targets::RealOpen,
    block_bytes: u64,
    notes: &mut Vec<String>,
) -> Result<Option<BufferPlan>, SuiteError> {
    let Some((path, big)) = scans
        .iter()
        .max_by_key(|(_, s)| s.max_io_bytes_on(block_bytes))
    else {
        return Ok(None);
    };
    let trace_io = big.max_io_bytes_on(block_bytes);
    let trace_qd = scans
        .iter()
        .map(|(_, s)| s.max_in_flight as usize)
        .max()
        .unwrap_or(1);
    let (phase_qd, phase_io) = plans
        .iter()
        .map(|p| phase_needs(&p.work))
        .fold((0, 0), |(q, b), (pq, pb)| (q.max(pq), b.max(pb)));
    let want = trace_qd.max(phase_qd);
    let max_io = trace_io.max(phase_io);
    let have_slots = real.max_in_flight.unwrap_or(DEFAULT_SLOTS);
    let have_bytes = real.buffer_bytes.map_or(DEFAULT_SLOT_BYTES, |b| b as u64);
    if max_io <= have_bytes && want <= have_slots {
        return Ok(None);
    }
    let cap_bytes = buffer_cap(real);
    let plan = BufferPlan::new(want, max_io, cap_bytes).map_err(|e| {
        SuiteError::Invalid(format!(
            "{}: row {}: {e}; nothing was written to the target",
            path.display(),
            big.max_len_row
        ))
    })?;
    if let Some(w) = plan.capped_from {
        notes.push(format!(
            "up to {w} I/Os were to be in flight, but buffers for only {} of {} bytes fit in --buffer-memory ({cap_bytes} bytes): the run kept at most that many in flight",
            plan.slots, plan.slot_bytes
        ));
    }
    Ok(Some(plan))
}

/// Open the run: a new one in `dir` (its configuration stored) or the one there.
/// With it, the traces a new run checked (see [`scan_replays`]), how the target was
/// opened (a resume's consent given again replaces the stored) and the buffers it was
/// opened with for the traces (`None`: the configuration's).
fn open_run<P: Procedure>(
    dir: &Path,
    start: Start<P>,
    ctl: &Control,
) -> Result<Opened<P>, SuiteError> {
    let consent = match start {
        Start::New(cfg) => return open_new(dir, cfg, Vec::new(), ctl),
        Start::Scanned(cfg, known) => return open_new(dir, cfg, known, ctl),
        Start::Resume => None,
        Start::ResumeWithConsent(c) => Some(c),
    };
    let rd = RunDir::resume(dir, P::NAME)?;
    let cfg: P = serde_json::from_value(rd.state.config.clone()).map_err(|e| {
        SuiteError::Invalid(format!(
            "{}: the stored configuration does not read back: {e}",
            dir.join(crate::state::STATE_FILE).display()
        ))
    })?;
    let recorded = recorded_in(&rd)?;
    let mut real = cfg.real_open();
    if recorded.is_none() && real.destroy_data.is_some() {
        return Err(SuiteError::Invalid(format!(
            "{}: the run was started by a storbench that did not record which device you agreed to destroy, \
             so a resume cannot check that {} is still that device; hint: start a new run",
            dir.display(),
            cfg.target_spec()
        )));
    }
    if consent.is_some() {
        real.destroy_data.clone_from(&consent);
    }
    // The guard runs again, against the identity recorded at the start: the consent
    // stored with the run is for that device, not for whatever now has its name. Then
    // the device must hold what it held at the last checkpoint, or the consent must be
    // given again.
    let target = SuiteTarget::open(cfg.target_spec(), &real, recorded.as_ref())?;
    crate::trust::check_ends(&rd, &target, cfg.target_spec(), consent.as_deref())?;
    Ok((rd, cfg, target, Vec::new(), real, None))
}

/// What [`open_run`] gives: the run directory, the configuration, the opened target,
/// the traces checked, how the target was opened and the buffers it was sized with.
type Opened<P> = (RunDir, P, SuiteTarget, Scans, RealOpen, Option<BufferPlan>);

/// The target identity the run recorded when it started (`None`: a simulated drive, or
/// a run by an older storbench).
fn recorded_in(rd: &RunDir) -> Result<Option<TargetIdentity>, SuiteError> {
    Ok(rd.state.target_identity.clone())
}

/// A new run in `dir`: the target opened, the inputs that exist checked, then the run
/// directory made with the configuration, the target's identity and the digest of its
/// ends.
fn open_new<P: Procedure>(
    dir: &Path,
    cfg: P,
    known: Scans,
    ctl: &Control,
) -> Result<Opened<P>, SuiteError> {
    // A run that replays traces learns the target's size first, opened for reading
    // with one small buffer: no buffer for an I/O larger than the target (or span) is
    // allocated before the traces are checked against it (issue 30: a 1 TiB read with
    // --buffer-memory=2t aborted in the allocator). Read-only, so closing it leaves a
    // block device free: udev probes a device closed after writing, and holds it
    // exclusively while it does.
    let real = cfg.real_open();
    let probe = !known.is_empty() && !is_sim_spec(cfg.target_spec());
    let mut target = if probe {
        let look = RealOpen {
            write: false,
            ..real.clone()
        };
        SuiteTarget::open_sized(cfg.target_spec(), &look, None, Some(BufferPlan::probe()))?
    } else {
        SuiteTarget::open(cfg.target_spec(), &real, None)?
    };
    let plans = cfg.plans(dir, target.info())?;
    // Inputs that exist are checked before the run directory is made.
    let scans = scan_replays(&plans, target.info(), true, known)?;
    let mut sized = None;
    if probe {
        let block = u64::from(target.info().logical_block_bytes);
        sized = buffer_plan(&plans, &scans, &real, block, &mut Vec::new())?;
        drop(target);
        target = SuiteTarget::open_sized(cfg.target_spec(), &real, None, sized)?;
    }
    let names: Vec<&str> = plans.iter().map(|p| p.name.as_str()).collect();
    let state = RunState::new(
        P::NAME,
        cfg.target_spec(),
        serde_json::to_value(&cfg).expect("config serializes"),
        &names,
    );
    let mut rd = RunDir::create_in(dir, state, ctl.replace)?;
    rd.state.health_before = Some(target.health());
    rd.state.target_info = Some(target.info().clone());
    rd.state.target_identity = recorded_identity(&target, &plans)?;
    crate::trust::note_target_ends(&mut rd, &target);
    rd.save()?;
    Ok((rd, cfg, target, scans, real, sized))
}

/// Run a procedure in `dir` to the end. A run that stops early (a signal, or a failed
/// I/O in a phase that stops on one) writes what it measured, marked incomplete, and
/// returns the error; an interrupted run continues with [`Start::Resume`].
pub fn execute<P: Procedure>(
    dir: &Path,
    start: Start<P>,
    ctl: &Control,
) -> Result<SuiteResult<P>, SuiteError> {
    let (mut rd, cfg, mut target, scanned, real, sized) = open_run(dir, start, ctl)?;
    rd.set_checkpoint_interval(ctl.checkpoint_interval);
    let plans = cfg.plans(dir, target.info())?;
    let names: Vec<&str> = plans.iter().map(|p| p.name.as_str()).collect();
    let stored: Vec<&str> = rd.state.phases.iter().map(|p| p.name.as_str()).collect();
    if names != stored {
        return Err(SuiteError::Invalid(format!(
            "{}: the run's phases {stored:?} differ from this storbench's {names:?}; finish it with the version that started it",
            dir.display()
        )));
    }
    cfg.prepare(rd.out(), target.info())?;
    // Every input checked, and the buffers sized, before the first phase writes.
    let scans = scan_replays(&plans, target.info(), false, scanned)?;
    let mut input_notes = Vec::new();
    let block = u64::from(target.info().logical_block_bytes);
    let plan = buffer_plan(&plans, &scans, &real, block, &mut input_notes)?;
    // Not again when a new run's check opened it so already.
    if plan.is_some() && plan != sized && target.identity().is_some() {
        let recorded = recorded_in(&rd)?;
        // Closed first: the device is opened exclusively.
        drop(target);
        target = SuiteTarget::open_sized(cfg.target_spec(), &real, recorded.as_ref(), plan)?;
    }
    let mut runner = Runner::new(&mut rd, &mut target, ctl);
    let rebuilt = runner.rebuild(&plans)?;
    if rebuilt > 0 && ctl.verbose {
        // Dropped when stderr is closed: a message must not stop the run.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "simulated drive state rebuilt ({rebuilt} I/Os re-simulated)"
        );
    }
    let mut records = Vec::with_capacity(plans.len());
    let mut stopped = None;
    for plan in &plans {
        match runner.run(plan) {
            Ok(r) => records.push(r),
            Err(e @ (SuiteError::Interrupted { .. } | SuiteError::IoErrors { .. })) => {
                stopped = Some(e);
                break;
            }
            Err(e) => return Err(e),
        }
    }
    let summary = match &stopped {
        None => Some(cfg.summarize(dir, &runner, &records)?),
        Some(_) => None,
    };
    records.extend(runner.unfinished.take());
    let mut notes = input_notes;
    notes.extend(run_notes(&runner, &records));
    if stopped.is_none() {
        notes.extend(cfg.notes(dir, &records));
    }
    if let Some(e) = &stopped {
        notes.insert(
            0,
            format!("incomplete: {e}; the results cover what ran up to there"),
        );
    }
    // A phase that counts failed I/Os and goes on (run, replay) ran to its end, but its
    // figures are not those of the work asked for: marked as a stopped run is.
    let failed = if stopped.is_none() {
        failed_ios_note(&records)
    } else {
        None
    };
    let complete = stopped.is_none() && failed.is_none();
    if let Some(n) = failed {
        notes.insert(0, n);
    }
    let mut result = assemble(&cfg, &runner, ctl, records, summary, notes, complete);
    result.trace = cfg.trace();
    let out = runner.rd.out().clone();
    output::write_all(&out, &result, &runner)?;
    if let Some(e) = stopped {
        return Err(e);
    }
    rd.finish_run()?;
    Ok(result)
}

/// The first note of a result whose phases ran to their end with failed I/Os (`run`
/// and `replay` count them and go on): which phase, how many of its I/Os, the first.
fn failed_ios_note(records: &[PhaseRecord]) -> Option<String> {
    let r = records.iter().find(|r| r.metrics.errors > 0)?;
    let m = &r.metrics;
    let done = m.read_ios + m.write_ios + m.trim_ios + m.flush_ios;
    Some(format!(
        "incomplete: phase {}: {} of {} I/Os failed (the first: {}); the figures cover only the I/Os that completed",
        r.name,
        m.errors,
        done + m.errors,
        r.first_error.as_deref().unwrap_or("no detail")
    ))
}

/// Notes every result carries: resumes, folded I/Os, what a purge did instead.
fn run_notes(runner: &Runner<'_>, records: &[PhaseRecord]) -> Vec<String> {
    let mut notes = Vec::new();
    if runner.rd.state.resumes > 0 {
        notes.push(format!(
            "the run was interrupted and resumed {} time(s); finished phases were kept",
            runner.rd.state.resumes
        ));
        if !runner.target.persistent() {
            notes.push(
                "the simulated drive keeps its state in memory: on resume it was rebuilt by re-simulating the finished I/O (same seeds, same order)".into(),
            );
        }
    }
    for r in records {
        if r.folded_ios > 0 {
            notes.push(format!(
                "phase {}: {} I/Os lay beyond the tested span and were folded onto it",
                r.name, r.folded_ios
            ));
        }
        if r.aligned_ios > 0 {
            notes.push(format!(
                "phase {}: {} I/Os were not aligned to the target's logical block ({} bytes) and were widened to whole blocks: {} bytes moved beyond what they asked for",
                r.name, r.aligned_ios, runner.target.info().logical_block_bytes, r.aligned_extra_bytes
            ));
        }
        if let Some(p) = &r.purge {
            if let Some(n) = &p.note {
                notes.push(format!("phase {}: {n}", r.name));
            }
        }
    }
    notes
}

/// The result of the run from its records.
fn assemble<P: Procedure>(
    cfg: &P,
    runner: &Runner<'_>,
    ctl: &Control,
    phases: Vec<PhaseRecord>,
    summary: Option<P::Summary>,
    notes: Vec<String>,
    complete: bool,
) -> SuiteResult<P> {
    let before: HealthSnapshot = runner
        .rd
        .state
        .health_before
        .clone()
        .unwrap_or_else(|| HealthSnapshot::unavailable("state", "not recorded"));
    let after = runner.target.health();
    let delta = health::delta(&before, &after);
    let options = match serde_json::to_value(cfg).expect("config serializes") {
        serde_json::Value::Object(m) => m
            .into_iter()
            .map(|(k, v)| {
                let text = match v {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                };
                (k, text)
            })
            .collect(),
        _ => Default::default(),
    };
    SuiteResult {
        format: storbench_results::RESULT_FORMAT.into(),
        schema_version: storbench_results::SCHEMA_VERSION,
        command_line: ctl.command_line.clone(),
        options,
        complete,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        procedure: P::NAME.into(),
        target: runner.target.info().clone(),
        config: cfg.clone(),
        phases,
        summary,
        trace: None,
        health_before: before,
        health_after: after,
        health_delta: delta,
        resumes: runner.rd.state.resumes,
        notes,
        created_unix_ms: runner.rd.state.created_unix_ms,
        finished_unix_ms: crate::state::unix_ms(),
    }
}

/// Read a finished run's result.json, as procedure `P` wrote it.
pub fn read_result<P: Procedure>(dir: &Path) -> Result<SuiteResult<P>, SuiteError> {
    storbench_report::read_result(dir).map_err(output::report_err)
}
