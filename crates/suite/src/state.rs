//! Resumable run state: a small JSON file `DIR/state.json`, written atomically
//! (temporary file, fsync, rename, fsync of the directory) at phase boundaries and at
//! checkpoints inside long phases, plus one append-only journal per phase holding the
//! per-second series already recorded.
//!
//! Crash model: the process may die at any instant (kill -9). The state file is
//! always either the previous or the next complete version. A journal may end in a
//! torn line or hold rows recorded after the last checkpoint; on resume it is cut back
//! to exactly the rows the checkpoint counted, and the phase continues from the
//! checkpoint's cursor, so no second is counted twice and none recorded before the
//! checkpoint is lost.
//!
//! One run per directory at a time: an exclusive `flock` on `DIR/state.lock`, which
//! the kernel releases when the process dies, so a killed run never leaves a stale lock.
//!
//! Every file of the directory is opened through its descriptor
//! (`storbench_trace::atomic::OutputDir`): never through a symbolic link, new files
//! with `O_EXCL`, a journal or lock written in place only when it has no other name.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use storbench_engine::safety::scan::EndsDigest;
use storbench_engine::{TargetIdentity, TargetInfo};
use storbench_results::{HealthSnapshot, PhaseRecord};
use storbench_trace::atomic::OutputDir;

pub const STATE_FILE: &str = "state.json";
pub const LOCK_FILE: &str = "state.lock";
pub const JOURNAL_DIR: &str = "journal";
/// Version of the state file's layout (2: the run's values as typed fields, a phase's
/// stored result as its record). A resume refuses another version.
pub const STATE_VERSION: u32 = 2;

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("{path}: {context}: {source}")]
    Io {
        path: PathBuf,
        context: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// A file of the run directory storbench will not open (a link, a device, a
    /// file with other names).
    #[error("{0}")]
    Refused(#[source] std::io::Error),
    #[error("{path}: not a storbench run state: {message}")]
    Corrupt { path: PathBuf, message: String },
    #[error("{path}: the run was started by another storbench (state version {found}; this one reads version {STATE_VERSION}), so it cannot be continued here; hint: finish it with the storbench that started it, or start a new run (--replace discards it)")]
    Version { path: PathBuf, found: u32 },
    #[error("{dir}: already holds a run ({procedure}); hint: continue an unfinished one with `--resume {dir}`, choose another directory, or pass --replace to discard it")]
    Exists { dir: PathBuf, procedure: String },
    #[error("{dir}: holds {name}, which the run would replace; hint: choose another directory, or pass --replace to discard it")]
    Occupied { dir: PathBuf, name: String },
    #[error("{dir}: holds no run state ({STATE_FILE} missing); hint: start a run there first, without --resume")]
    Missing { dir: PathBuf },
    #[error("{dir}: another storbench process is running in this directory")]
    Locked { dir: PathBuf },
    #[error("{dir}: the run there is a `{found}` run, not `{expected}`; hint: resume it with `storbench {found} --resume {dir}`")]
    WrongProcedure {
        dir: PathBuf,
        found: String,
        expected: String,
    },
    #[error("{path}: {message}; hint: if its content is yours, give it back to your user and take write access from others (chown, chmod go-w), or start a new run")]
    Untrusted { path: PathBuf, message: String },
    #[error("{path}: line {line}: {message}")]
    Journal {
        path: PathBuf,
        line: u64,
        message: String,
    },
}

/// An I/O error on `path`, or the refusal of a file in the run directory (a link, a
/// device: `storbench_trace::atomic`), which names its path itself.
fn io_err<'a>(
    path: &'a Path,
    context: &'static str,
) -> impl FnOnce(std::io::Error) -> StateError + 'a {
    move |source| match storbench_trace::atomic::refusal(&source) {
        Some(_) => StateError::Refused(source),
        None => StateError::Io {
            path: path.to_owned(),
            context,
            source,
        },
    }
}

pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PhaseStatus {
    Pending,
    Running,
    Done,
}

/// Where a running phase stood at its last checkpoint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Phase time done, on the target's clock, summed over all segments (ns).
    pub phase_elapsed_ns: u64,
    /// I/Os completed in the phase so far.
    pub ios_done: u64,
    /// Bytes completed in the phase so far.
    pub bytes_done: u64,
    /// Source position to continue from (next offset of a pass, records consumed of a
    /// replay, I/Os issued by a generator; the phase's source defines it).
    pub cursor: u64,
    /// Per-second rows committed to the phase journal.
    pub series_rows: u64,
    pub wall_unix_ms: u64,
    /// Phase-specific partial results (aggregates of finished segments, ...).
    #[serde(default)]
    pub carry: serde_json::Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseState {
    pub name: String,
    pub status: PhaseStatus,
    /// How many times this phase was started (1 + resumes inside it).
    pub segments: u32,
    pub checkpoint: Option<Checkpoint>,
    /// The drive's counters when the phase first began (a resumed phase keeps them).
    #[serde(default)]
    pub health_before: Option<HealthSnapshot>,
    /// The phase's result once done.
    pub result: Option<PhaseRecord>,
}

/// The last rebuild of a simulated drive's state on a resume.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Rebuild {
    /// I/Os re-simulated.
    pub ios: u64,
    pub wall_ms: u64,
}

/// The whole run state, as stored in `DIR/state.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub version: u32,
    pub procedure: String,
    pub target: String,
    /// The procedure's configuration; a resume runs with exactly this.
    pub config: serde_json::Value,
    pub phases: Vec<PhaseState>,
    /// Drive health when the run started.
    #[serde(default)]
    pub health_before: Option<HealthSnapshot>,
    /// The target as the run found it when it started.
    #[serde(default)]
    pub target_info: Option<TargetInfo>,
    /// Who the target was when the run started (`storbench_engine::safety::identity`):
    /// every resume must find the same target (`None`: a simulated drive).
    #[serde(default)]
    pub target_identity: Option<TargetIdentity>,
    /// A block device target's size and the CRC of its ends at the last checkpoint
    /// (`crate::trust`): a resume that finds them changed asks for the consent again.
    #[serde(default)]
    pub target_ends: Option<EndsDigest>,
    /// The last rebuild of a simulated drive (resumes).
    #[serde(default)]
    pub last_rebuild: Option<Rebuild>,
    pub created_unix_ms: u64,
    pub updated_unix_ms: u64,
    /// How many times the run was resumed.
    pub resumes: u32,
    pub finished: bool,
}

impl RunState {
    pub fn new(procedure: &str, target: &str, config: serde_json::Value, phases: &[&str]) -> Self {
        let now = unix_ms();
        let mut seen = std::collections::BTreeSet::new();
        for p in phases {
            assert!(seen.insert(*p), "duplicate phase name {p}");
            assert!(
                p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
                "phase names are file-name safe: {p}"
            );
        }
        RunState {
            version: STATE_VERSION,
            procedure: procedure.to_owned(),
            target: target.to_owned(),
            config,
            phases: phases
                .iter()
                .map(|p| PhaseState {
                    name: (*p).to_owned(),
                    status: PhaseStatus::Pending,
                    segments: 0,
                    checkpoint: None,
                    health_before: None,
                    result: None,
                })
                .collect(),
            health_before: None,
            target_info: None,
            target_identity: None,
            target_ends: None,
            last_rebuild: None,
            created_unix_ms: now,
            updated_unix_ms: now,
            resumes: 0,
            finished: false,
        }
    }

    pub fn phase(&self, name: &str) -> &PhaseState {
        self.phases
            .iter()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("no phase {name} in this run"))
    }

    pub(crate) fn phase_mut(&mut self, name: &str) -> &mut PhaseState {
        self.phases
            .iter_mut()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("no phase {name} in this run"))
    }
}

/// An open run directory: the state, its lock, and the checkpoint clock. Its files
/// are opened only through [`RunDir::out`] and [`RunDir::journal`].
pub struct RunDir {
    dir: PathBuf,
    out: OutputDir,
    journal: OutputDir,
    pub state: RunState,
    _lock: File,
    checkpoint_interval: Duration,
    last_save: Instant,
}

fn lock_dir(out: &OutputDir) -> Result<File, StateError> {
    let path = out.join(LOCK_FILE);
    let f = out
        .open_in_place(LOCK_FILE, true)
        .map_err(io_err(&path, "opening the lock file"))?
        .expect("created when missing");
    match rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(f),
        Err(rustix::io::Errno::WOULDBLOCK) => Err(StateError::Locked {
            dir: out.path().to_owned(),
        }),
        Err(e) => Err(StateError::Io {
            path,
            context: "locking",
            source: e.into(),
        }),
    }
}

/// Read `DIR/state.json` without locking (for reports and status).
pub fn read_state(dir: &Path) -> Result<RunState, StateError> {
    let path = dir.join(STATE_FILE);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(StateError::Missing {
                dir: dir.to_owned(),
            })
        }
        Err(e) => return Err(io_err(&path, "reading")(e)),
    };
    parse_state(&text, path)
}

/// Read the state of the run directory `out` (never through a link).
fn read_state_in(out: &OutputDir) -> Result<RunState, StateError> {
    use std::io::Read;
    let path = out.join(STATE_FILE);
    let Some(mut f) = out.read(STATE_FILE).map_err(io_err(&path, "opening"))? else {
        return Err(StateError::Missing {
            dir: out.path().to_owned(),
        });
    };
    let mut text = String::new();
    f.read_to_string(&mut text)
        .map_err(io_err(&path, "reading"))?;
    parse_state(&text, path)
}

/// The run state in `text`, read from `path`.
pub(crate) fn parse_state(text: &str, path: PathBuf) -> Result<RunState, StateError> {
    let corrupt = |e: serde_json::Error| StateError::Corrupt {
        path: path.clone(),
        message: format!("line {}, column {}: {e}", e.line(), e.column()),
    };
    // The version first: another version's layout is refused as that, not as corrupt.
    #[derive(Deserialize)]
    struct Version {
        version: u32,
    }
    let v: Version = serde_json::from_str(text).map_err(corrupt)?;
    if v.version != STATE_VERSION {
        return Err(StateError::Version {
            path,
            found: v.version,
        });
    }
    serde_json::from_str(text).map_err(corrupt)
}

/// Every name the run of `state` writes in its directory, and in `journal/` and
/// `series/`, checked before anything is written: a symbolic link, a device or a FIFO
/// at any of them is refused. Returns the first regular file found, if any.
fn check_run_names(out: &OutputDir, state: &RunState) -> Result<Option<String>, StateError> {
    let phases: Vec<&str> = state.phases.iter().map(|p| p.name.as_str()).collect();
    let names = crate::output::run_names(&phases);
    let mut found = None;
    let mut first = |name: &str| {
        found.get_or_insert_with(|| name.to_owned());
    };
    let entry = |out: &OutputDir, name: &str| {
        out.entry(name)
            .map_err(io_err(&out.join(name), "checking the run directory"))
    };
    for name in names.files {
        if entry(out, &name)? == storbench_trace::atomic::Entry::File {
            first(&name);
        }
    }
    for (sub, files) in names.dirs {
        let subdir = out
            .existing_subdir(sub)
            .map_err(io_err(&out.join(sub), "checking the run directory"))?;
        let Some(subdir) = subdir else { continue };
        for name in files {
            if entry(&subdir, &name)? == storbench_trace::atomic::Entry::File {
                first(&format!("{sub}/{name}"));
            }
        }
    }
    entry(out, LOCK_FILE)?;
    Ok(found)
}

impl RunDir {
    /// The run in `out` (locked by `lock`), with its journal directory; saves `state`.
    fn open(out: OutputDir, state: RunState, lock: File) -> Result<RunDir, StateError> {
        let jdir = out.join(JOURNAL_DIR);
        let journal = out
            .subdir(JOURNAL_DIR)
            .map_err(io_err(&jdir, "creating the journal directory"))?;
        let mut rd = RunDir {
            dir: out.path().to_owned(),
            out,
            journal,
            state,
            _lock: lock,
            checkpoint_interval: Duration::from_secs(60),
            last_save: Instant::now(),
        };
        rd.save()?;
        Ok(rd)
    }

    /// Start a new run in `dir` (created if missing). Fails if `dir` holds a run.
    pub fn create(dir: &Path, state: RunState) -> Result<RunDir, StateError> {
        RunDir::create_in(dir, state, false)
    }

    /// Start a new run in `dir` (created if missing). A directory holding another run,
    /// finished or not, or another run's results is refused unless `replace`: then,
    /// under the lock, that run's state and result files are removed first (no old
    /// file is left beside the new results).
    pub fn create_in(dir: &Path, state: RunState, replace: bool) -> Result<RunDir, StateError> {
        let out = OutputDir::create(dir).map_err(io_err(dir, "creating the run directory"))?;
        // Links first: a link at any name the run writes is refused, --replace or not.
        let other_files = check_run_names(&out, &state)?;
        let lock = lock_dir(&out)?;
        let held = match read_state_in(&out) {
            Ok(s) => Some(s.procedure),
            Err(StateError::Missing { .. }) => crate::output::results_in(&out),
            Err(e) if replace => Some(format!("unreadable state: {e}")),
            Err(e) => return Err(e),
        };
        if !replace {
            if let Some(procedure) = held {
                return Err(StateError::Exists {
                    dir: dir.to_owned(),
                    procedure,
                });
            }
            if let Some(name) = other_files {
                return Err(StateError::Occupied {
                    dir: dir.to_owned(),
                    name,
                });
            }
        } else if held.is_some() || other_files.is_some() {
            crate::output::remove_run(&out).map_err(io_err(dir, "removing the earlier run"))?;
        }
        RunDir::open(out, state, lock)
    }

    /// Reopen the run in `dir` to continue it: only a directory and state the user
    /// alone can change (`crate::trust`).
    pub fn resume(dir: &Path, procedure: &str) -> Result<RunDir, StateError> {
        if !dir.is_dir() {
            return Err(StateError::Missing {
                dir: dir.to_owned(),
            });
        }
        let out = OutputDir::open(dir).map_err(io_err(dir, "opening the run directory"))?;
        crate::trust::check_dir(&out)?;
        let lock = lock_dir(&out)?;
        let mut state = crate::trust::read_state(&out)?;
        check_run_names(&out, &state)?;
        if state.procedure != procedure {
            return Err(StateError::WrongProcedure {
                dir: dir.to_owned(),
                found: state.procedure,
                expected: procedure.to_owned(),
            });
        }
        state.resumes += 1;
        RunDir::open(out, state, lock)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The run directory, the only way its files are opened.
    pub fn out(&self) -> &OutputDir {
        &self.out
    }

    /// The run's `journal/` directory.
    pub fn journal(&self) -> &OutputDir {
        &self.journal
    }

    /// Wall time between checkpoints inside a phase (default and maximum 60 s).
    pub fn set_checkpoint_interval(&mut self, d: Duration) {
        assert!(
            d <= Duration::from_secs(60),
            "checkpoints at least every minute"
        );
        self.checkpoint_interval = d;
    }

    pub fn save(&mut self) -> Result<(), StateError> {
        self.state.updated_unix_ms = unix_ms();
        let mut text = serde_json::to_vec(&self.state).expect("state serializes");
        text.push(b'\n');
        let path = self.out.join(STATE_FILE);
        self.out
            .write(STATE_FILE, &text)
            .map_err(io_err(&path, "writing (atomically)"))?;
        self.last_save = Instant::now();
        Ok(())
    }

    /// The file name of `phase`'s journal in [`RunDir::journal`].
    pub fn journal_name(phase: &str) -> String {
        format!("{phase}.jsonl")
    }

    pub fn journal_path(&self, phase: &str) -> PathBuf {
        self.journal.join(&RunDir::journal_name(phase))
    }

    /// The first phase not done, if any.
    pub fn next_phase(&self) -> Option<&PhaseState> {
        self.state
            .phases
            .iter()
            .find(|p| p.status != PhaseStatus::Done)
    }

    pub fn is_done(&self, phase: &str) -> bool {
        self.state.phase(phase).status == PhaseStatus::Done
    }

    /// Mark `phase` running (a new segment) and save. Returns the checkpoint to
    /// continue from (`None` when the phase starts afresh).
    pub fn begin_phase(&mut self, phase: &str) -> Result<Option<Checkpoint>, StateError> {
        let p = self.state.phase_mut(phase);
        assert_ne!(p.status, PhaseStatus::Done, "phase {phase} is already done");
        p.status = PhaseStatus::Running;
        p.segments += 1;
        let cp = p.checkpoint.clone();
        self.save()?;
        Ok(cp)
    }

    /// Whether the checkpoint interval has passed since the last save.
    pub fn checkpoint_due(&self) -> bool {
        self.last_save.elapsed() >= self.checkpoint_interval
    }

    /// Record a checkpoint inside `phase` and save. The journal must already hold
    /// `cp.series_rows` rows, flushed (see [`Journal::sync`]).
    pub fn checkpoint(&mut self, phase: &str, mut cp: Checkpoint) -> Result<(), StateError> {
        let p = self.state.phase_mut(phase);
        assert_eq!(
            p.status,
            PhaseStatus::Running,
            "checkpoint of a phase not running"
        );
        if let Some(prev) = &p.checkpoint {
            assert!(
                cp.series_rows >= prev.series_rows,
                "series rows never go back"
            );
            assert!(
                cp.phase_elapsed_ns >= prev.phase_elapsed_ns,
                "phase time never goes back"
            );
        }
        cp.wall_unix_ms = unix_ms();
        p.checkpoint = Some(cp);
        self.save()
    }

    /// Mark `phase` done with its result, and save.
    pub fn finish_phase(&mut self, phase: &str, result: PhaseRecord) -> Result<(), StateError> {
        let p = self.state.phase_mut(phase);
        assert_eq!(
            p.status,
            PhaseStatus::Running,
            "finishing a phase not running"
        );
        p.status = PhaseStatus::Done;
        p.result = Some(result);
        self.save()
    }

    pub fn finish_run(&mut self) -> Result<(), StateError> {
        assert!(
            self.state
                .phases
                .iter()
                .all(|p| p.status == PhaseStatus::Done),
            "run finished with phases not done"
        );
        self.state.finished = true;
        self.save()
    }
}

/// Append-only journal of one phase's per-second rows (one JSON object per line).
pub struct Journal<T> {
    path: PathBuf,
    file: std::io::BufWriter<File>,
    rows: u64,
    _row: std::marker::PhantomData<T>,
}

impl<T: Serialize + DeserializeOwned> Journal<T> {
    /// Open the journal `name` in `dir`, keeping exactly its first `keep_rows` rows
    /// (the rows the last checkpoint counted) and cutting anything after them. Returns
    /// the journal, positioned for appending, and the kept rows. A new journal is
    /// created with `O_EXCL`; an existing one must be a regular file of one name.
    pub fn open(
        dir: &OutputDir,
        name: &str,
        keep_rows: u64,
    ) -> Result<(Journal<T>, Vec<T>), StateError> {
        let path = &dir.join(name);
        let Some(mut f) = dir
            .open_in_place(name, keep_rows == 0)
            .map_err(io_err(path, "opening"))?
        else {
            return Err(StateError::Journal {
                path: path.to_owned(),
                line: 0,
                message: format!("missing, but the checkpoint counts {keep_rows} rows"),
            });
        };
        let mut kept = Vec::new();
        let mut keep_len: u64 = 0;
        {
            let mut r = BufReader::new(&f);
            let mut line = String::new();
            while (kept.len() as u64) < keep_rows {
                line.clear();
                let n = r.read_line(&mut line).map_err(io_err(path, "reading"))?;
                if n == 0 || !line.ends_with('\n') {
                    return Err(StateError::Journal {
                        path: path.to_owned(),
                        line: kept.len() as u64 + 1,
                        message: format!(
                            "the checkpoint counts {keep_rows} rows but the journal ends after {}",
                            kept.len()
                        ),
                    });
                }
                let row: T =
                    serde_json::from_str(line.trim_end()).map_err(|e| StateError::Journal {
                        path: path.to_owned(),
                        line: kept.len() as u64 + 1,
                        message: e.to_string(),
                    })?;
                kept.push(row);
                keep_len += n as u64;
            }
        }
        f.set_len(keep_len)
            .map_err(io_err(path, "cutting back to the checkpoint"))?;
        f.seek(SeekFrom::End(0)).map_err(io_err(path, "seeking"))?;
        Ok((
            Journal {
                path: path.to_owned(),
                file: std::io::BufWriter::new(f),
                rows: keep_rows,
                _row: std::marker::PhantomData,
            },
            kept,
        ))
    }

    pub fn append(&mut self, row: &T) -> Result<(), StateError> {
        let mut line = serde_json::to_vec(row).expect("journal rows serialize");
        debug_assert!(!line.contains(&b'\n'));
        line.push(b'\n');
        self.file
            .write_all(&line)
            .map_err(io_err(&self.path, "appending"))?;
        self.rows += 1;
        Ok(())
    }

    /// Rows in the journal (kept + appended).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Flush buffered rows to the file (enough for kill -9) and fsync (power loss).
    pub fn sync(&mut self) -> Result<(), StateError> {
        self.file.flush().map_err(io_err(&self.path, "flushing"))?;
        self.file
            .get_ref()
            .sync_data()
            .map_err(io_err(&self.path, "syncing"))
    }

    /// Read every complete row of a journal (for reports of unfinished runs).
    pub fn read_all(path: &Path) -> Result<Vec<T>, StateError> {
        let f = File::open(path).map_err(io_err(path, "opening"))?;
        Journal::read_from(f, path)
    }

    /// Every complete row of the journal `name` in the run's `dir` (none when it does
    /// not exist), never read through a link.
    pub fn read_all_in(dir: &OutputDir, name: &str) -> Result<Vec<T>, StateError> {
        let path = dir.join(name);
        match dir.read(name).map_err(io_err(&path, "opening"))? {
            Some(f) => Journal::read_from(f, &path),
            None => Ok(Vec::new()),
        }
    }

    fn read_from(f: File, path: &Path) -> Result<Vec<T>, StateError> {
        let mut out = Vec::new();
        for (i, line) in BufReader::new(f).lines().enumerate() {
            let line = line.map_err(io_err(path, "reading"))?;
            match serde_json::from_str(&line) {
                Ok(row) => out.push(row),
                // A torn last line is what a kill leaves; anything else is corruption.
                Err(_) if line.is_empty() => break,
                Err(e) => {
                    return Err(StateError::Journal {
                        path: path.to_owned(),
                        line: i as u64 + 1,
                        message: e.to_string(),
                    })
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;

    #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
    struct Row {
        t: u64,
        iops: f64,
    }

    #[test]
    fn create_checkpoint_resume_cuts_journal_to_checkpoint() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let st = RunState::new(
            "consistency",
            "sim:x",
            serde_json::json!({"qd": 32}),
            &["a", "b"],
        );
        {
            let mut rd = RunDir::create(&dir, st).unwrap();
            assert!(rd.begin_phase("a").unwrap().is_none());
            rd.finish_phase("a", record("a")).unwrap();
            assert!(rd.begin_phase("b").unwrap().is_none());
            let (mut j, kept) = Journal::<Row>::open(rd.journal(), "b.jsonl", 0).unwrap();
            assert!(kept.is_empty());
            for t in 0..5 {
                j.append(&Row { t, iops: t as f64 }).unwrap();
            }
            j.sync().unwrap();
            rd.checkpoint(
                "b",
                Checkpoint {
                    series_rows: 5,
                    cursor: 77,
                    ..Default::default()
                },
            )
            .unwrap();
            // Rows after the checkpoint, then a torn line: what a kill -9 leaves.
            j.append(&Row { t: 5, iops: 5.0 }).unwrap();
            j.sync().unwrap();
            let mut f = OpenOptions::new()
                .append(true)
                .open(rd.journal_path("b"))
                .unwrap();
            f.write_all(b"{\"t\":6,\"io").unwrap();
            // The lock is held: a second process cannot open the run.
            assert!(matches!(
                RunDir::resume(&dir, "consistency"),
                Err(StateError::Locked { .. })
            ));
        }
        // Starting afresh in the same directory is refused.
        let st2 = RunState::new("consistency", "sim:x", serde_json::json!({}), &["a"]);
        assert!(matches!(
            RunDir::create(&dir, st2),
            Err(StateError::Exists { .. })
        ));
        assert!(matches!(
            RunDir::resume(&dir, "season"),
            Err(StateError::WrongProcedure { .. })
        ));
        let mut rd = RunDir::resume(&dir, "consistency").unwrap();
        assert_eq!(rd.state.resumes, 1);
        assert!(rd.is_done("a"));
        assert_eq!(rd.next_phase().unwrap().name, "b");
        let cp = rd.begin_phase("b").unwrap().unwrap();
        assert_eq!(cp.cursor, 77);
        assert_eq!(rd.state.phase("b").segments, 2);
        let (mut j, kept) = Journal::<Row>::open(rd.journal(), "b.jsonl", cp.series_rows).unwrap();
        assert_eq!(kept.len(), 5);
        assert_eq!(kept[4], Row { t: 4, iops: 4.0 });
        j.append(&Row { t: 5, iops: 50.0 }).unwrap();
        j.sync().unwrap();
        let all = Journal::<Row>::read_all(&rd.journal_path("b")).unwrap();
        assert_eq!(all.len(), 6);
        assert_eq!(all[5].iops, 50.0);
        rd.finish_phase("b", record("b")).unwrap();
        rd.finish_run().unwrap();
        assert!(read_state(&dir).unwrap().finished);
    }

    /// A finished phase's record.
    fn record(name: &str) -> PhaseRecord {
        let plan = crate::phase::PhasePlan::new(name, name, crate::phase::Work::Purge);
        crate::phase::without_io(&plan, 1, 0)
    }

    /// Issue 32: the run's values became typed fields (state version 2). A state of
    /// another version is refused as that, with what to do, not as a corrupt file.
    #[test]
    fn a_state_of_another_version_is_refused_saying_what_to_do() {
        let tmp = tempfile::tempdir().unwrap();
        let st = RunState::new("consistency", "sim:x", serde_json::json!({}), &["a"]);
        let mut v = serde_json::to_value(&st).unwrap();
        v["version"] = 1.into();
        v["extra"] = serde_json::json!({"health_before": {}});
        fs::write(tmp.path().join(STATE_FILE), v.to_string()).unwrap();
        let e = read_state(tmp.path()).unwrap_err();
        assert!(matches!(e, StateError::Version { found: 1, .. }), "{e}");
        let text = e.to_string();
        assert!(
            text.contains("state.json") && text.contains("version 1") && text.contains("hint:"),
            "{text}"
        );
    }

    #[test]
    fn journal_shorter_than_checkpoint_is_an_error_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("x.jsonl");
        fs::write(&p, "{\"t\":0,\"iops\":1.0}\n").unwrap();
        let dir = OutputDir::open(tmp.path()).unwrap();
        let e = Journal::<Row>::open(&dir, "x.jsonl", 3).err().unwrap();
        assert!(e.to_string().contains("x.jsonl"), "{e}");
    }

    #[test]
    fn corrupt_state_names_file_and_position() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join(STATE_FILE), "{ not json").unwrap();
        let e = read_state(tmp.path()).unwrap_err().to_string();
        assert!(e.contains("state.json") && e.contains("line 1"), "{e}");
    }
}
