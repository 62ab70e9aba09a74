//! `storbench._native`: the Rust side of the Python package. Plans, points and the
//! dataset go through `storbench-sweep` exactly as the CLI's `storbench sweep` does;
//! traces come to Python as Arrow record batches through the C data interface.
//!
//! Rows cross into Python as JSON text and come back as the same text, so a float
//! never passes through another parser on its way from a Ray worker to the dataset.

use arrow_array::builder::{Int64Builder, StringDictionaryBuilder};
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_pyarrow::{IntoPyArrow, Table};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use storbench_sweep::{LocalOptions, Plan, Point, SweepDir, SweepError};

fn plan_err(e: storbench_sweep::PlanError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn sweep_err(e: SweepError) -> PyErr {
    match e {
        SweepError::Plan(p) => plan_err(p),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// A plan from a file (`path`) or from TOML text (`text`, trace paths relative to `base`).
fn load_plan(path: Option<&str>, text: Option<&str>, base: Option<&str>) -> PyResult<Plan> {
    match (path, text) {
        (Some(p), None) => Plan::load(Path::new(p)).map_err(plan_err),
        (None, Some(t)) => {
            Plan::parse(t, "<plan>", Path::new(base.unwrap_or("."))).map_err(plan_err)
        }
        _ => Err(PyValueError::new_err(
            "give the plan as a path or as text, not both",
        )),
    }
}

fn point_from_json(point_json: &str) -> PyResult<Point> {
    serde_json::from_str(point_json).map_err(|e| PyValueError::new_err(format!("point: {e}")))
}

fn row_from_json(row_json: &str) -> PyResult<storbench_sweep::Row> {
    serde_json::from_str(row_json).map_err(|e| PyValueError::new_err(format!("row: {e}")))
}

/// Run `work` on a helper thread with the GIL released, checking for Ctrl-C every
/// 100 ms; on KeyboardInterrupt raise `stop` and wait for the work to save and end.
fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    stop: Arc<AtomicBool>,
    work: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let handle = std::thread::Builder::new()
        .name("storbench-py".into())
        .spawn(move || {
            let _ = tx.send(work());
        })
        .map_err(|e| PyRuntimeError::new_err(format!("starting the worker thread: {e}")))?;
    let mut interrupted: Option<PyErr> = None;
    let mut rx = Some(rx);
    loop {
        let r = rx.take().expect("receiver held between waits");
        let (got, r) = py.detach(move || (r.recv_timeout(Duration::from_millis(100)), r));
        rx = Some(r);
        match got {
            Ok(v) => {
                let _ = handle.join();
                return match interrupted {
                    Some(e) => Err(e),
                    None => Ok(v),
                };
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if interrupted.is_none() {
                    if let Err(e) = py.check_signals() {
                        stop.store(true, Ordering::Relaxed);
                        interrupted = Some(e);
                    }
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                let _ = handle.join();
                return Err(PyRuntimeError::new_err("the worker thread panicked"));
            }
        }
    }
}

/// The plan's dry run: its size, axes and one line per point.
#[pyfunction]
#[pyo3(signature = (path=None, text=None, base=None))]
fn describe(path: Option<&str>, text: Option<&str>, base: Option<&str>) -> PyResult<String> {
    Ok(load_plan(path, text, base)?.describe())
}

/// Run a plan on this machine's cores (the CLI's `storbench sweep`); returns a dict
/// of counts, the dataset path and the failures.
#[pyfunction]
#[pyo3(signature = (out, path=None, text=None, base=None, jobs=None, progress=false))]
fn run_local(
    py: Python<'_>,
    out: &str,
    path: Option<&str>,
    text: Option<&str>,
    base: Option<&str>,
    jobs: Option<usize>,
    progress: bool,
) -> PyResult<Py<PyAny>> {
    let plan = load_plan(path, text, base)?;
    let mut o = LocalOptions::all_cores();
    if let Some(j) = jobs {
        o.jobs = j.max(1);
    }
    o.progress = progress;
    let stop = o.stop.clone();
    let out = PathBuf::from(out);
    let r = interruptible(py, stop, move || {
        storbench_sweep::run_local(&plan, &out, &o)
    })?
    .map_err(sweep_err)?;
    let d = pyo3::types::PyDict::new(py);
    d.set_item("planned", r.planned)?;
    d.set_item("rows", r.rows)?;
    d.set_item("ran", r.ran)?;
    d.set_item("already_done", r.already_done)?;
    d.set_item("interrupted", r.interrupted)?;
    d.set_item("dataset", r.dataset.display().to_string())?;
    let failed: Vec<(usize, String, String)> = r
        .failed
        .into_iter()
        .map(|f| (f.index, f.id, f.message))
        .collect();
    d.set_item("failed", failed)?;
    Ok(d.into_any().unbind())
}

/// A sweep directory held open (and locked) by a driver that hands points to other
/// workers (Ray) and records what they return.
#[pyclass(module = "storbench._native")]
struct Sweep {
    plan: Plan,
    dir: SweepDir,
}

#[pymethods]
impl Sweep {
    #[new]
    #[pyo3(signature = (out, path=None, text=None, base=None))]
    fn new(
        out: &str,
        path: Option<&str>,
        text: Option<&str>,
        base: Option<&str>,
    ) -> PyResult<Sweep> {
        let plan = load_plan(path, text, base)?;
        let dir = SweepDir::open(Path::new(out), &plan).map_err(sweep_err)?;
        // Refused before any point runs when they would not fit on the disk.
        dir.pending(&plan).map_err(sweep_err)?;
        Ok(Sweep { plan, dir })
    }

    #[getter]
    fn title(&self) -> String {
        self.plan.title.clone()
    }

    #[getter]
    fn planned(&self) -> usize {
        self.plan.points.len()
    }

    /// The unfinished points, as JSON text (what a worker runs).
    fn pending(&self) -> PyResult<Vec<String>> {
        let mut out = Vec::new();
        for p in &self.plan.points {
            if self.dir.finished(p).map_err(sweep_err)?.is_none() {
                out.push(serde_json::to_string(p).expect("point serializes"));
            }
        }
        Ok(out)
    }

    /// The directory a point runs in when every worker sees this one (a shared filesystem).
    fn point_dir(&self, point_json: &str) -> PyResult<String> {
        Ok(self
            .dir
            .point_dir(&point_from_json(point_json)?)
            .map_err(sweep_err)?
            .display()
            .to_string())
    }

    /// Record a point a worker finished: its files (relative path, bytes) go into its
    /// directory, then its row marks it finished.
    #[pyo3(signature = (point_json, row_json, files, wall_ms, ran_by="ray"))]
    fn record(
        &self,
        point_json: &str,
        row_json: &str,
        files: Vec<(String, Bound<'_, PyBytes>)>,
        wall_ms: u64,
        ran_by: &str,
    ) -> PyResult<()> {
        let p = point_from_json(point_json)?;
        if !self
            .plan
            .points
            .iter()
            .any(|q| q.id == p.id && q.run == p.run)
        {
            return Err(PyValueError::new_err(format!(
                "point {} is not in this plan",
                p.id
            )));
        }
        let files: Vec<(String, Vec<u8>)> = files
            .into_iter()
            .map(|(n, b)| (n, b.as_bytes().to_vec()))
            .collect();
        self.dir.write_files(&p, &files).map_err(sweep_err)?;
        self.dir
            .record(&p, row_from_json(row_json)?, wall_ms, ran_by)
            .map_err(sweep_err)?;
        Ok(())
    }

    /// Write the dataset of the finished points; returns (path, rows).
    fn write_dataset(&self) -> PyResult<(String, usize)> {
        let (p, n) = self.dir.write_dataset(&self.plan).map_err(sweep_err)?;
        Ok((p.display().to_string(), n))
    }
}

/// A point run elsewhere: row JSON, files (relative path, bytes), wall ms.
type Shipped = (String, Vec<(String, Py<PyBytes>)>, u64);

/// Run one point (JSON) in a private temporary directory; returns (row JSON, files as
/// (relative path, bytes), wall ms). What a Ray task calls.
#[pyfunction]
fn run_point_detached(py: Python<'_>, point_json: &str) -> PyResult<Shipped> {
    let p = point_from_json(point_json)?;
    // A sweep's point always runs to its end (see storbench_sweep::local).
    let (row, files, wall_ms) = interruptible(py, Arc::new(AtomicBool::new(false)), move || {
        storbench_sweep::run_detached(&p)
    })?
    .map_err(sweep_err)?;
    let files = files
        .into_iter()
        .map(|(n, b)| (n, PyBytes::new(py, &b).unbind()))
        .collect();
    Ok((
        serde_json::to_string(&row).expect("row serializes"),
        files,
        wall_ms,
    ))
}

/// Run one point (JSON) in `dir` (continuing it if killed there); returns (row JSON,
/// wall ms). A sweep's point runs to its end; a notebook's `run` (`interrupt=True`)
/// stops at its next checkpoint on Ctrl-C, as the CLI's procedures do.
#[pyfunction]
#[pyo3(signature = (point_json, dir, interrupt=false))]
fn run_point_in(
    py: Python<'_>,
    point_json: &str,
    dir: &str,
    interrupt: bool,
) -> PyResult<(String, u64)> {
    let p = point_from_json(point_json)?;
    let dir = PathBuf::from(dir);
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = if interrupt {
        stop.clone()
    } else {
        Arc::new(AtomicBool::new(false))
    };
    let t0 = std::time::Instant::now();
    let row = interruptible(py, stop, move || {
        storbench_sweep::run_point(&p.run, &dir, s2)
    })?
    .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok((
        serde_json::to_string(&row).expect("row serializes"),
        t0.elapsed().as_millis() as u64,
    ))
}

/// Run the single point of a one-point plan in `dir`; returns (point JSON, row JSON).
/// The notebook's `storbench.run`.
#[pyfunction]
#[pyo3(signature = (text, dir, base=None))]
fn run_single(
    py: Python<'_>,
    text: &str,
    dir: &str,
    base: Option<&str>,
) -> PyResult<(String, String)> {
    let plan = load_plan(None, Some(text), base)?;
    let [p] = plan.points.as_slice() else {
        return Err(PyValueError::new_err(format!(
            "{} points; one expected",
            plan.points.len()
        )));
    };
    let pj = serde_json::to_string(p).expect("point serializes");
    let (row, _) = run_point_in(py, &pj, dir, true)?;
    Ok((pj, row))
}

/// Characterize a Parquet trace; the figures as JSON text.
#[pyfunction]
fn characterize(py: Python<'_>, path: &str) -> PyResult<String> {
    let p = PathBuf::from(path);
    if !p.exists() {
        return Err(pyo3::exceptions::PyFileNotFoundError::new_err(format!(
            "{path}: no such file"
        )));
    }
    let c = py
        .detach(|| storbench_trace::characterize_file(&p))
        .map_err(|e| PyValueError::new_err(trace_err(e)))?;
    Ok(serde_json::to_string(&c).expect("characterization serializes"))
}

/// The error of a trace the user gave: its message, with its hint when it has one.
fn trace_err(e: storbench_trace::TraceError) -> String {
    match e.hint() {
        Some(h) => format!("{e}\n  hint: {h}"),
        None => e.to_string(),
    }
}

/// Opens a Parquet trace (its footer and metadata checked, nothing decoded): fails at
/// once for a missing file or one that is no trace. Returns the rows in its footer.
#[pyfunction]
fn open_trace(py: Python<'_>, path: &str) -> PyResult<u64> {
    let p = PathBuf::from(path);
    if !p.exists() {
        return Err(pyo3::exceptions::PyFileNotFoundError::new_err(format!(
            "{path}: no such file"
        )));
    }
    py.detach(move || storbench_trace::TraceReader::open(&p).map(|r| r.num_rows()))
        .map_err(|e| PyValueError::new_err(trace_err(e)))
}

/// Read a Parquet trace through storbench's reader (its value checks, its errors that
/// name the row and field) into a `pyarrow.Table` of the trace format's own types
/// (Int64, Dictionary(Int32, Utf8): docs/trace-format.md), so the table written back
/// with pyarrow, pandas or Polars is a trace: one record batch per reader batch, handed
/// over through the Arrow C stream interface without a copy.
#[pyfunction]
fn read_trace(py: Python<'_>, path: &str) -> PyResult<Py<PyAny>> {
    let p = PathBuf::from(path);
    let batches = py.detach(move || -> Result<Vec<RecordBatch>, String> {
        let mut r = storbench_trace::TraceReader::open(&p).map_err(trace_err)?;
        let schema = storbench_trace::store::arrow_schema();
        let mut out = Vec::new();
        let mut recs = Vec::new();
        // The reader hands out values below 2^63 only.
        let i = |v: u64| v as i64;
        while r.next_batch(&mut recs).map_err(trace_err)? {
            let n = recs.len();
            let mut issue = Int64Builder::with_capacity(n);
            let mut complete = Int64Builder::with_capacity(n);
            let mut offset = Int64Builder::with_capacity(n);
            let mut len = Int64Builder::with_capacity(n);
            let mut op = StringDictionaryBuilder::<Int32Type>::new();
            let mut stream = StringDictionaryBuilder::<Int32Type>::new();
            let mut device = StringDictionaryBuilder::<Int32Type>::new();
            for rec in &recs {
                issue.append_value(i(rec.issue_ns));
                complete.append_option(rec.complete_ns.map(i));
                offset.append_value(i(rec.offset_bytes));
                len.append_value(i(rec.len_bytes));
                op.append_value(rec.op.as_str());
                match rec.stream.and_then(|s| r.streams().get(s.0)) {
                    Some(s) => stream.append_value(s),
                    None => stream.append_null(),
                }
                match rec.device.and_then(|d| r.devices().get(d.0)) {
                    Some(d) => device.append_value(d),
                    None => device.append_null(),
                }
            }
            let cols: Vec<ArrayRef> = vec![
                Arc::new(issue.finish()),
                Arc::new(complete.finish()),
                Arc::new(offset.finish()),
                Arc::new(len.finish()),
                Arc::new(op.finish()),
                Arc::new(stream.finish()),
                Arc::new(device.finish()),
            ];
            out.push(RecordBatch::try_new(schema.clone(), cols).map_err(|e| e.to_string())?);
            recs.clear();
        }
        Ok(out)
    });
    let batches = batches.map_err(PyValueError::new_err)?;
    let table = Table::try_new(batches, storbench_trace::store::arrow_schema())
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(table.into_pyarrow(py)?.unbind())
}

/// The simulator's presets: (name, description).
#[pyfunction]
fn presets() -> Vec<(String, String)> {
    storbench_sim::presets()
        .into_iter()
        .map(|p| (p.name.to_string(), p.description.to_string()))
        .collect()
}

/// A drive's digital twin (issue 33, docs/twin.md): the measurement of `source` (a
/// `twin measure` result directory, or a `sim:` spec measured here, in process, with
/// the quick or the full plan), a simulated drive fitted to it; twin.json's text.
/// Nothing is written.
#[pyfunction]
#[pyo3(signature = (source, quick=true, presets=None, eval_capacity=None, max_iterations=None, starts=None, jobs=None))]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments, one per fit option
fn twin(
    py: Python<'_>,
    source: &str,
    quick: bool,
    presets: Option<Vec<String>>,
    eval_capacity: Option<&str>,
    max_iterations: Option<usize>,
    starts: Option<usize>,
    jobs: Option<usize>,
) -> PyResult<String> {
    use storbench_results::twin::{Measurement, PlanShape, TwinMeasureConfig};
    let bad = |e: String| PyValueError::new_err(e);
    let mut opts = storbench_twin::FitOptions::default();
    if let Some(p) = presets {
        opts.presets = p;
    }
    if let Some(c) = eval_capacity {
        opts.eval_capacity_bytes = storbench_core::units::parse_size("eval_capacity", c)
            .map_err(|e| bad(e.to_string()))?;
    }
    if let Some(n) = max_iterations {
        opts.max_iterations = n;
    }
    if let Some(n) = starts {
        opts.starts = n;
    }
    if let Some(j) = jobs {
        opts.jobs = j.max(1);
    }
    let source = source.to_owned();
    // Ctrl-C in the notebook stops the fit within an evaluation (about 40 ms).
    let stop = Arc::new(AtomicBool::new(false));
    opts.stop = Some(stop.clone());
    interruptible(py, stop, move || {
        let m: Measurement = if source.starts_with("sim:") {
            let cfg = storbench_sim::SimConfig::parse(&source)
                .map_err(|e| bad(format!("{source}: {e}")))?;
            let shape = if quick {
                PlanShape::quick()
            } else {
                PlanShape::full()
            };
            storbench_twin::measure_sim(cfg, &shape).map_err(|e| bad(e.to_string()))?
        } else {
            let dir = Path::new(&source);
            let kind = storbench_report::read_result::<serde_json::Value, serde_json::Value>(dir)
                .map_err(|e| bad(e.to_string()))?;
            if kind.procedure != "twin-measure" {
                return Err(bad(format!(
                    "{source}: a `{}` result, not a twin measurement (storbench twin measure)",
                    kind.procedure
                )));
            }
            let r = storbench_report::read_result::<TwinMeasureConfig, Measurement>(dir)
                .map_err(|e| bad(e.to_string()))?;
            r.summary.ok_or_else(|| {
                bad(format!(
                    "{source}: the measurement has no figures (it stopped before its summary)"
                ))
            })?
        };
        let t = storbench_twin::fit(&m, &opts).map_err(|e| bad(format!("{source}: {e}")))?;
        Ok(serde_json::to_string(&t).expect("twin.json serializes"))
    })?
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Sweep>()?;
    m.add_function(wrap_pyfunction!(describe, m)?)?;
    m.add_function(wrap_pyfunction!(run_local, m)?)?;
    m.add_function(wrap_pyfunction!(run_point_detached, m)?)?;
    m.add_function(wrap_pyfunction!(run_point_in, m)?)?;
    m.add_function(wrap_pyfunction!(run_single, m)?)?;
    m.add_function(wrap_pyfunction!(characterize, m)?)?;
    m.add_function(wrap_pyfunction!(read_trace, m)?)?;
    m.add_function(wrap_pyfunction!(open_trace, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(twin, m)?)?;
    Ok(())
}
