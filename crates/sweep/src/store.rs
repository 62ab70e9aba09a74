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
use std::os::fd::AsFd;
use std::path::{Component, Path, PathBuf};
use storbench_report::sweep::{write_sweep_in, Cell, Column, Kind, Role, SweepMeta, SweepTable};
use storbench_trace::atomic::OutputDir;

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
    /// A file of the output that is not what this sweep wrote; [`SweepError::hint`].
    #[error("{path}: {message}")]
    Invalid {
        path: PathBuf,
        message: String,
        hint: &'static str,
    },
    /// Another sweep holds the output's lock; [`SweepError::hint`].
    #[error("{}: another sweep is writing there (its lock {} is held)", dir.display(), lock.display())]
    Busy { dir: PathBuf, lock: PathBuf },
    /// A point that failed or was stopped (runners that run one point at a time).
    #[error("{0}")]
    Point(String),
    #[error(transparent)]
    Report(#[from] storbench_report::ReportError),
}

impl SweepError {
    /// What the user can do about it, printed on its own line by the CLI. A plan
    /// error carries its hint in its own message.
    pub fn hint(&self) -> Option<&str> {
        match self {
            SweepError::Invalid { hint, .. } => Some(hint),
            SweepError::Busy { .. } => Some("wait for it, or give another -o"),
            _ => None,
        }
    }
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

/// An open sweep directory (locked for this process while it lives). Its files are
/// opened only through the directory's descriptor (`storbench_trace::atomic`):
/// never through a link, written atomically.
pub struct SweepDir {
    out: OutputDir,
    points: OutputDir,
    _lock: File,
}

impl SweepDir {
    /// Create or reopen `dir` for `plan`: take its lock, keep the plan beside the results.
    pub fn open(dir: &Path, plan: &Plan) -> Result<SweepDir, SweepError> {
        let out = OutputDir::create(dir).map_err(io(dir, "creating the sweep directory"))?;
        let points = out
            .subdir(POINTS_DIR)
            .map_err(io(dir, "creating the sweep directory"))?;
        let lock_path = out.join(LOCK_FILE);
        let lock = out
            .open_in_place(LOCK_FILE, true)
            .map_err(io(&lock_path, "opening the lock"))?
            .expect("created when missing");
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive).map_err(
            |_| SweepError::Busy {
                dir: dir.to_path_buf(),
                lock: lock_path.clone(),
            },
        )?;
        out.write(PLAN_FILE, plan.text.as_bytes())
            .map_err(io(&out.join(PLAN_FILE), "writing"))?;
        Ok(SweepDir {
            out,
            points,
            _lock: lock,
        })
    }

    pub fn dir(&self) -> &Path {
        self.out.path()
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
        let st = rustix::fs::fstatvfs(self.out.as_fd()).map_err(|e| SweepError::Io {
            path: self.out.path().to_path_buf(),
            context: "reading the free space (statvfs)",
            source: e.into(),
        })?;
        let free = st.f_bavail.saturating_mul(st.f_frsize);
        plan.check_room(&pending, free, self.out.path())?;
        Ok(pending)
    }

    /// The point's directory, made if missing (a link there is refused): where its
    /// run writes.
    pub fn point_dir(&self, p: &Point) -> Result<PathBuf, SweepError> {
        Ok(self.point_out(p)?.path().to_path_buf())
    }

    fn point_out(&self, p: &Point) -> Result<OutputDir, SweepError> {
        self.points
            .subdir(&p.id)
            .map_err(io(&self.points.join(&p.id), "creating the point directory"))
    }

    /// The point's record if it finished.
    pub fn finished(&self, p: &Point) -> Result<Option<PointRecord>, SweepError> {
        use std::io::Read;
        let dir = self.points.join(&p.id);
        let path = dir.join(POINT_FILE);
        let Some(out) = self
            .points
            .existing_subdir(&p.id)
            .map_err(io(&dir, "opening"))?
        else {
            return Ok(None);
        };
        let Some(mut f) = out.read(POINT_FILE).map_err(io(&path, "opening"))? else {
            return Ok(None);
        };
        let mut text = String::new();
        f.read_to_string(&mut text).map_err(io(&path, "reading"))?;
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
        let out = self.point_out(p)?;
        let text = serde_json::to_string_pretty(&rec).expect("point record serializes");
        out.write(POINT_FILE, text.as_bytes())
            .map_err(io(&out.join(POINT_FILE), "writing"))?;
        Ok(rec)
    }

    /// Put a point's result files, computed elsewhere, into its directory (relative
    /// paths only, each written atomically, never through a link).
    pub fn write_files(&self, p: &Point, files: &[(String, Vec<u8>)]) -> Result<(), SweepError> {
        let top = self.point_out(p)?;
        for (rel, bytes) in files {
            let r = Path::new(rel);
            let names: Option<Vec<&str>> = r
                .components()
                .map(|c| match c {
                    Component::Normal(n) => n.to_str(),
                    _ => None,
                })
                .collect();
            let names = match names {
                Some(n) if !n.is_empty() && rel != POINT_FILE => n,
                _ => {
                    return Err(SweepError::Invalid {
                        path: top.path().to_path_buf(),
                        message: format!("refusing result file name {rel:?}"),
                        hint: "result files are relative paths inside the point's directory",
                    })
                }
            };
            let (file, dirs) = names.split_last().expect("not empty");
            let mut dir = top.clone();
            for d in dirs {
                dir = dir.subdir(d).map_err(io(&dir.join(d), "creating"))?;
            }
            dir.write(file, bytes)
                .map_err(io(&dir.join(file), "writing"))?;
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
        let path = write_sweep_in(&self.out, &table)?;
        Ok((path, table.rows.len()))
    }
}

/// Every figure of the plan's procedures, once each, in the procedures' order.
fn plan_figures(plan: &Plan) -> Vec<(&'static str, Kind)> {
    let mut figures: Vec<(&'static str, Kind)> = Vec::new();
    for p in &plan.procedures {
        for f in point::figures(p) {
            if !figures.iter().any(|(n, _)| *n == f.0) {
                figures.push(f);
            }
        }
    }
    figures
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
    let figures = plan_figures(plan);
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
            // A point recorded before result schema 3 names some figures the older way.
            let old = crate::point::old_figure_name(name);
            row.push(
                rec.row
                    .iter()
                    .find(|(k, _)| k == name || Some(k.as_str()) == old)
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
