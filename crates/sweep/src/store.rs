//! A sweep's output directory:
//!
//! ```text
//! DIR/plan.toml             the plan as last run
//! DIR/sweep.lock            held while a sweep writes here (one writer at a time)
//! DIR/sweep.parquet         the dataset: one row per finished point, in plan order
//! DIR/points/ID/            each point's own result directory (result.json, series, ...)
//! DIR/points/ID/point.json  written last, atomically: the point is finished
//! ```
//!
//! A point is finished when its point.json holds the same [`RunSpec`] (its directory
//! name is a hash of it), so a second run skips it, whichever runner wrote it and
//! whichever plan it came from. point.json also keeps the wall time the point took and
//! what ran it: host facts that never enter the dataset.

use crate::plan::{Plan, Point, RunSpec};
use crate::point::{self, Row};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::{Component, Path, PathBuf};
use storbench_report::sweep::{
    write_sweep, Cell, Column, Kind, Role, SweepMeta, SweepTable, SWEEP_FILE,
};

pub const POINTS_DIR: &str = "points";
pub const POINT_FILE: &str = "point.json";
pub const PLAN_FILE: &str = "plan.toml";
pub const LOCK_FILE: &str = "sweep.lock";
pub const POINT_FORMAT: &str = "storbench-sweep-point/1";

/// A point's result files: path relative to its directory, and contents.
pub type Files = Vec<(String, Vec<u8>)>;

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Plan(#[from] crate::plan::PlanError),
    #[error("{path}: {context}: {source}")]
    Io {
        path: PathBuf,
        context: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}\n  hint: {hint}")]
    Invalid {
        path: PathBuf,
        message: String,
        hint: &'static str,
    },
    #[error("{0}")]
    Busy(String),
    /// A point that failed or was stopped (runners that run one point at a time).
    #[error("{0}")]
    Point(String),
    #[error(transparent)]
    Report(#[from] storbench_report::ReportError),
}

fn io<'a>(path: &'a Path, context: &'static str) -> impl FnOnce(std::io::Error) -> SweepError + 'a {
    move |source| SweepError::Io {
        path: path.to_path_buf(),
        context,
        source,
    }
}

/// A finished point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointRecord {
    pub format: String,
    pub id: String,
    pub run: RunSpec,
    pub row: Row,
    /// Host facts, kept out of the dataset: the wall time the point took, and what ran
    /// it (`local`, `ray`).
    pub wall_ms: u64,
    pub ran_by: String,
}

/// Write `path` atomically: a temporary file beside it, fsync, rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), SweepError> {
    use std::io::Write;
    let tmp = path.with_extension("tmp");
    let mut f = File::create(&tmp).map_err(io(&tmp, "creating"))?;
    f.write_all(bytes).map_err(io(&tmp, "writing"))?;
    f.sync_all().map_err(io(&tmp, "fsync"))?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(io(path, "renaming into place"))
}

/// An open sweep directory (locked for this process while it lives).
pub struct SweepDir {
    dir: PathBuf,
    _lock: File,
}

impl SweepDir {
    /// Create or reopen `dir` for `plan`: take its lock, keep the plan beside the results.
    pub fn open(dir: &Path, plan: &Plan) -> Result<SweepDir, SweepError> {
        std::fs::create_dir_all(dir.join(POINTS_DIR))
            .map_err(io(dir, "creating the sweep directory"))?;
        let lock_path = dir.join(LOCK_FILE);
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io(&lock_path, "opening the lock"))?;
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive).map_err(|_| {
            SweepError::Busy(format!(
                "{}: another sweep is writing there (its lock {} is held)\n  hint: wait for it, or give another -o",
                dir.display(),
                lock_path.display()
            ))
        })?;
        write_atomic(&dir.join(PLAN_FILE), plan.text.as_bytes())?;
        Ok(SweepDir {
            dir: dir.to_path_buf(),
            _lock: lock,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The plan's unfinished points, refused when they would write more than this
    /// directory's filesystem has free (see [`Plan::check_room`]): checked before the
    /// first point runs.
    pub fn pending<'p>(&self, plan: &'p Plan) -> Result<Vec<&'p Point>, SweepError> {
        let mut pending = Vec::new();
        for p in &plan.points {
            if self.finished(p)?.is_none() {
                pending.push(p);
            }
        }
        let st = rustix::fs::statvfs(&self.dir).map_err(|e| SweepError::Io {
            path: self.dir.clone(),
            context: "reading the free space (statvfs)",
            source: e.into(),
        })?;
        let free = st.f_bavail.saturating_mul(st.f_frsize);
        plan.check_room(&pending, free, &self.dir)?;
        Ok(pending)
    }

    pub fn point_dir(&self, p: &Point) -> PathBuf {
        self.dir.join(POINTS_DIR).join(&p.id)
    }

    /// The point's record if it finished.
    pub fn finished(&self, p: &Point) -> Result<Option<PointRecord>, SweepError> {
        let path = self.point_dir(p).join(POINT_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(&path, "reading")(e)),
        };
        let rec: PointRecord = serde_json::from_str(&text).map_err(|e| SweepError::Invalid {
            path: path.clone(),
            message: format!("line {}, column {}: {e}", e.line(), e.column()),
            hint:
                "point.json is written by storbench; remove the point's directory to run it again",
        })?;
        if rec.run != p.run {
            return Err(SweepError::Invalid {
                path,
                message: format!(
                    "holds another run than point {} of the plan (same id {})",
                    p.index, p.id
                ),
                hint: "remove the point's directory to run it again",
            });
        }
        Ok(Some(rec))
    }

    /// Mark a point finished with its row.
    pub fn record(
        &self,
        p: &Point,
        row: Row,
        wall_ms: u64,
        ran_by: &str,
    ) -> Result<PointRecord, SweepError> {
        let rec = PointRecord {
            format: POINT_FORMAT.into(),
            id: p.id.clone(),
            run: p.run.clone(),
            row,
            wall_ms,
            ran_by: ran_by.into(),
        };
        let dir = self.point_dir(p);
        std::fs::create_dir_all(&dir).map_err(io(&dir, "creating the point directory"))?;
        let text = serde_json::to_string_pretty(&rec).expect("point record serializes");
        write_atomic(&dir.join(POINT_FILE), text.as_bytes())?;
        Ok(rec)
    }

    /// Put a point's result files, computed elsewhere, into its directory (relative
    /// paths only, each written atomically).
    pub fn write_files(&self, p: &Point, files: &[(String, Vec<u8>)]) -> Result<(), SweepError> {
        let dir = self.point_dir(p);
        for (rel, bytes) in files {
            let r = Path::new(rel);
            if rel.is_empty()
                || !r.components().all(|c| matches!(c, Component::Normal(_)))
                || rel == POINT_FILE
            {
                return Err(SweepError::Invalid {
                    path: dir.clone(),
                    message: format!("refusing result file name {rel:?}"),
                    hint: "result files are relative paths inside the point's directory",
                });
            }
            let path = dir.join(r);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(io(parent, "creating"))?;
            }
            write_atomic(&path, bytes)?;
        }
        Ok(())
    }

    /// Write the dataset of the plan's finished points; returns its path and rows.
    pub fn write_dataset(&self, plan: &Plan) -> Result<(PathBuf, usize), SweepError> {
        let mut records = Vec::with_capacity(plan.points.len());
        for p in &plan.points {
            records.push(self.finished(p)?);
        }
        let table = dataset(plan, &records);
        let path = self.dir.join(SWEEP_FILE);
        write_sweep(&path, &table)?;
        Ok((path, table.rows.len()))
    }
}

/// The dataset of `plan` from its points' records (`None`: not finished). Its columns
/// follow from the plan alone: keys, then the plan's axes, then every figure of the
/// plan's procedures.
pub fn dataset(plan: &Plan, records: &[Option<PointRecord>]) -> SweepTable {
    assert_eq!(
        plan.points.len(),
        records.len(),
        "one record slot per point"
    );
    let col = |name: &str, role, kind| Column {
        name: name.to_owned(),
        role,
        kind,
    };
    let mut columns = vec![
        col("point", Role::Key, Kind::Text),
        col("index", Role::Key, Kind::Int),
        col("procedure", Role::Key, Kind::Text),
        col("preset", Role::Key, Kind::Text),
        col("target", Role::Key, Kind::Text),
        col("workload", Role::Key, Kind::Text),
        col("seed", Role::Key, Kind::Int),
    ];
    let params: Vec<&str> = plan
        .axes
        .iter()
        .filter(|a| a.name != "preset")
        .map(|a| a.name.as_str())
        .collect();
    for a in plan.axes.iter().filter(|a| a.name != "preset") {
        columns.push(col(&a.name, Role::Param, Kind::of(&a.values)));
    }
    let mut figures: Vec<(&str, Kind)> = Vec::new();
    for p in &plan.procedures {
        for f in point::figures(p) {
            if !figures.iter().any(|(n, _)| *n == f.0) {
                figures.push(f);
            }
        }
    }
    columns.extend(figures.iter().map(|(n, k)| col(n, Role::Figure, *k)));
    let mut rows = Vec::new();
    for (p, rec) in plan.points.iter().zip(records) {
        let Some(rec) = rec else { continue };
        let mut row = vec![
            Cell::Text(p.id.clone()),
            Cell::Int(p.index as i64),
            Cell::Text(p.run.procedure.clone()),
            Cell::Text(p.preset.clone()),
            Cell::Text(p.run.target.clone()),
            p.run
                .workload
                .as_ref()
                .map_or(Cell::Null, |w| Cell::Text(w.label())),
            Cell::Int(p.run.seed as i64),
        ];
        for name in &params {
            row.push(
                p.params
                    .iter()
                    .find(|(k, _)| k == name)
                    .map_or(Cell::Null, |(_, c)| c.clone()),
            );
        }
        for (name, _) in &figures {
            row.push(
                rec.row
                    .iter()
                    .find(|(k, _)| k == name)
                    .map_or(Cell::Null, |(_, c)| c.clone()),
            );
        }
        rows.push(row);
    }
    SweepTable {
        meta: SweepMeta {
            title: plan.title.clone(),
            points_planned: plan.points.len() as u64,
            x: plan.report_x.clone(),
            y: plan.report_y.clone(),
            columns,
        },
        rows,
    }
}

/// Every file of a point's directory (relative path, bytes), sorted, but its lock.
pub fn collect_files(dir: &Path) -> Result<Files, SweepError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).map_err(io(&d, "listing"))? {
            let e = e.map_err(io(&d, "listing"))?;
            let path = e.path();
            let t = e.file_type().map_err(io(&path, "stat"))?;
            if t.is_dir() {
                stack.push(path);
            } else if t.is_file() {
                let rel = path
                    .strip_prefix(dir)
                    .expect("under dir")
                    .to_string_lossy()
                    .into_owned();
                if rel == storbench_suite::state::LOCK_FILE || rel == POINT_FILE {
                    continue;
                }
                let bytes = std::fs::read(&path).map_err(io(&path, "reading"))?;
                out.push((rel, bytes));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}
