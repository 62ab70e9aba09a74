//! What every procedure shares: start or resume a run in a directory, open the target,
//! rebuild a simulated drive's state after a resume, run the phases, record drive
//! health before and after, and write the results.

use crate::health::{self, HealthDelta, HealthSnapshot};
use crate::output;
use crate::phase::{Control, PhasePlan, PhaseRecord, Runner, SuiteError};
use crate::state::{RunDir, RunState};
use crate::targets::SuiteTarget;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use storbench_engine::TargetInfo;

/// A procedure: its configuration (stored in the run state, so a resume needs only the
/// directory), its phases, and what it computes from their records.
pub trait Procedure: Serialize + DeserializeOwned + Clone {
    /// Command name (`consistency`, `season`, `trim-check`, `bench`).
    const NAME: &'static str;
    fn target_spec(&self) -> &str;
    /// How to open a real target (size of a file, data-destruction consent).
    fn real_open(&self) -> crate::targets::RealOpen;
    /// The phases, from the configuration and the opened target.
    fn plans(&self, dir: &Path, info: &TargetInfo) -> Result<Vec<PhasePlan>, SuiteError>;
    /// Work before the first phase (the trace bench synthesizes its trace). Must be
    /// idempotent: it runs again on resume.
    fn prepare(&self, _dir: &Path, _info: &TargetInfo) -> Result<(), SuiteError> {
        Ok(())
    }
    /// The trace the procedure replays, for result.json's `trace`.
    fn trace(&self) -> Option<crate::replay::TraceSummary> {
        None
    }
    /// The procedure's own section of result.json, from the finished phases.
    fn summarize(
        &self,
        dir: &Path,
        runner: &Runner<'_>,
        records: &[PhaseRecord],
    ) -> Result<serde_json::Value, SuiteError>;
}

/// Start a new run or continue one.
pub enum Start<P> {
    New(P),
    Resume,
}

/// The complete result of a procedure run (result.json).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SuiteResult {
    pub format: String,
    /// Also readable as a `storbench_report::RunResult` (same schema version).
    pub schema_version: u32,
    pub command_line: Vec<String>,
    /// The configuration as `name = value` text (RunResult's options).
    pub options: std::collections::BTreeMap<String, String>,
    pub complete: bool,
    pub tool_version: String,
    pub procedure: String,
    pub target: TargetInfo,
    pub config: serde_json::Value,
    pub phases: Vec<PhaseRecord>,
    /// The procedure's own figures (scores, tables).
    pub summary: serde_json::Value,
    /// The replayed trace (`replay`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::replay::TraceSummary>,
    pub health_before: HealthSnapshot,
    pub health_after: HealthSnapshot,
    pub health_delta: HealthDelta,
    /// Times the run was interrupted and resumed.
    pub resumes: u32,
    pub notes: Vec<String>,
    pub created_unix_ms: u64,
    pub finished_unix_ms: u64,
}

pub const RESULT_FORMAT: &str = "storbench-suite-result/1";

impl SuiteResult {
    /// The first phase with failed I/Os: (phase, failures, the first one).
    pub fn failed_ios(&self) -> Option<(&str, u64, &str)> {
        self.phases.iter().find(|p| p.metrics.errors > 0).map(|p| {
            (
                p.name.as_str(),
                p.metrics.errors,
                p.first_error.as_deref().unwrap_or("(no detail)"),
            )
        })
    }
}

/// Open the run: a new one in `dir` (its configuration stored) or the one there.
fn open_run<P: Procedure>(
    dir: &Path,
    start: Start<P>,
    ctl: &Control,
) -> Result<(RunDir, P, SuiteTarget), SuiteError> {
    match start {
        Start::New(cfg) => {
            let target = SuiteTarget::open(cfg.target_spec(), &cfg.real_open())?;
            let plans = cfg.plans(dir, target.info())?;
            let names: Vec<&str> = plans.iter().map(|p| p.name.as_str()).collect();
            let state = RunState::new(
                P::NAME,
                cfg.target_spec(),
                serde_json::to_value(&cfg).expect("config serializes"),
                &names,
            );
            let mut rd = RunDir::create_in(dir, state, ctl.replace)?;
            let before = target.health();
            rd.state.extra.insert(
                "health_before".into(),
                serde_json::to_value(&before).expect("health serializes"),
            );
            rd.state.extra.insert(
                "target_info".into(),
                serde_json::to_value(target.info()).expect("info serializes"),
            );
            rd.save()?;
            Ok((rd, cfg, target))
        }
        Start::Resume => {
            let rd = RunDir::resume(dir, P::NAME)?;
            let cfg: P = serde_json::from_value(rd.state.config.clone()).map_err(|e| {
                SuiteError::Invalid(format!(
                    "{}: the stored configuration does not read back: {e}",
                    dir.join(crate::state::STATE_FILE).display()
                ))
            })?;
            let target = SuiteTarget::open(cfg.target_spec(), &cfg.real_open())?;
            Ok((rd, cfg, target))
        }
    }
}

/// Run a procedure in `dir` to the end. A run that stops early (a signal, or a failed
/// I/O in a phase that stops on one) writes what it measured, marked incomplete, and
/// returns the error; an interrupted run continues with [`Start::Resume`].
pub fn execute<P: Procedure>(
    dir: &Path,
    start: Start<P>,
    ctl: &Control,
) -> Result<SuiteResult, SuiteError> {
    let (mut rd, cfg, mut target) = open_run(dir, start, ctl)?;
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
    cfg.prepare(dir, target.info())?;
    let mut runner = Runner::new(&mut rd, &mut target, ctl);
    let rebuilt = runner.rebuild(&plans)?;
    if rebuilt > 0 && ctl.verbose {
        eprintln!("simulated drive state rebuilt ({rebuilt} I/Os re-simulated)");
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
        None => cfg.summarize(dir, &runner, &records)?,
        Some(_) => serde_json::Value::Null,
    };
    records.extend(runner.unfinished.take());
    let mut notes = run_notes(&runner, &records);
    if let Some(e) = &stopped {
        notes.insert(
            0,
            format!("incomplete: {e}; the results cover what ran up to there"),
        );
    }
    let mut result = assemble::<P>(&runner, ctl, records, summary, notes, stopped.is_none());
    result.trace = cfg.trace();
    output::write_all(dir, &result, &runner)?;
    if let Some(e) = stopped {
        return Err(e);
    }
    rd.finish_run()?;
    Ok(result)
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
                "phase {}: {} I/Os were not aligned to the target's logical block and were widened to whole blocks",
                r.name, r.aligned_ios
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
    runner: &Runner<'_>,
    ctl: &Control,
    phases: Vec<PhaseRecord>,
    summary: serde_json::Value,
    notes: Vec<String>,
    complete: bool,
) -> SuiteResult {
    let before: HealthSnapshot = runner
        .rd
        .state
        .extra
        .get("health_before")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_else(|| HealthSnapshot::unavailable("state", "not recorded"));
    let after = runner.target.health();
    let delta = health::delta(&before, &after);
    let options = match &runner.rd.state.config {
        serde_json::Value::Object(m) => m
            .iter()
            .map(|(k, v)| {
                let text = match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), text)
            })
            .collect(),
        _ => Default::default(),
    };
    SuiteResult {
        format: RESULT_FORMAT.into(),
        schema_version: storbench_report::SCHEMA_VERSION,
        command_line: ctl.command_line.clone(),
        options,
        complete,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        procedure: P::NAME.into(),
        target: runner.target.info().clone(),
        config: runner.rd.state.config.clone(),
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

/// Read a finished run's result.json.
pub fn read_result(dir: &Path) -> Result<SuiteResult, SuiteError> {
    let path: PathBuf = dir.join(output::RESULT_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| SuiteError::Io {
        context: format!("reading {}", path.display()),
        source: e,
    })?;
    serde_json::from_str(&text).map_err(|e| {
        SuiteError::Invalid(format!(
            "{}: line {}, column {}: {e}",
            path.display(),
            e.line(),
            e.column()
        ))
    })
}
