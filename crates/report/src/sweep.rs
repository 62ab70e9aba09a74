//! A sweep's dataset (`DIR/sweep.parquet`, one row per point: its parameters and
//! headline figures) and the report's sweep section (a heat map and a line chart of
//! each figure over two axes), self-contained: inline SVG, no chart code.
//!
//! The dataset is written by one function whatever ran the points (the local runner or
//! a Ray cluster), from rows that carry no wall-clock or host-dependent field, so the
//! same plan gives the same file, byte for byte. Column roles (key, parameter, figure),
//! the plan's title, its size and the report's preferred axes are in the file's
//! key-value metadata under [`META_KEY`], as JSON.

use crate::html::page::esc;
use crate::result::ReportError;
use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray,
};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub const SWEEP_FILE: &str = "sweep.parquet";
/// Key of the dataset's description in the Parquet key-value metadata.
pub const META_KEY: &str = "storbench.sweep";

/// One value of a row. JSON: null, an integer, a float (always written with a point
/// or exponent by serde_json, so it reads back as a float), a boolean or a string.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Cell {
    Null,
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
}

impl Cell {
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Cell::Int(i) => Some(*i as f64),
            Cell::Float(f) => Some(*f),
            Cell::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        }
    }

    /// The value as text (the report's axis labels, the dry run).
    pub fn text(&self) -> String {
        match self {
            Cell::Null => "-".into(),
            Cell::Int(i) => i.to_string(),
            Cell::Float(f) => f.to_string(),
            Cell::Bool(b) => b.to_string(),
            Cell::Text(s) => s.clone(),
        }
    }
}

/// A column's type in the dataset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Int,
    Float,
    Bool,
    Text,
}

impl Kind {
    fn data_type(self) -> DataType {
        match self {
            Kind::Int => DataType::Int64,
            Kind::Float => DataType::Float64,
            Kind::Bool => DataType::Boolean,
            Kind::Text => DataType::Utf8,
        }
    }

    /// The narrowest kind holding all these values (null fits every kind; integers
    /// widen to floats; anything else mixed becomes text).
    pub fn of<'a>(values: impl IntoIterator<Item = &'a Cell>) -> Kind {
        let mut k: Option<Kind> = None;
        for v in values {
            let this = match v {
                Cell::Null => continue,
                Cell::Int(_) => Kind::Int,
                Cell::Float(_) => Kind::Float,
                Cell::Bool(_) => Kind::Bool,
                Cell::Text(_) => Kind::Text,
            };
            k = Some(match (k, this) {
                (None, t) => t,
                (Some(a), b) if a == b => a,
                (Some(Kind::Int), Kind::Float) | (Some(Kind::Float), Kind::Int) => Kind::Float,
                _ => Kind::Text,
            });
        }
        k.unwrap_or(Kind::Float)
    }
}

/// What a column is to the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Identifies the point (id, procedure, target, workload, seed).
    Key,
    /// A plan axis.
    Param,
    /// A headline figure.
    Figure,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Column {
    pub name: String,
    pub role: Role,
    pub kind: Kind,
}

/// The dataset's description, stored in the file's metadata.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SweepMeta {
    pub title: String,
    /// Points the plan has (rows are the finished ones).
    pub points_planned: u64,
    /// Preferred report axes (plan's `[report]`).
    #[serde(default)]
    pub x: Option<String>,
    #[serde(default)]
    pub y: Option<String>,
    /// Role and kind of every column, in file order.
    #[serde(default)]
    pub columns: Vec<Column>,
}

/// A sweep's dataset in memory: columns and rows in plan order.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepTable {
    pub meta: SweepMeta,
    pub rows: Vec<Vec<Cell>>,
}

impl SweepTable {
    pub fn column(&self, name: &str) -> Option<usize> {
        self.meta.columns.iter().position(|c| c.name == name)
    }
}

fn pq_err(path: &Path, e: impl std::error::Error + 'static) -> ReportError {
    ReportError::parquet(path, e)
}

fn array(kind: Kind, rows: &[Vec<Cell>], i: usize) -> ArrayRef {
    let cells = rows.iter().map(|r| &r[i]);
    match kind {
        Kind::Int => Arc::new(Int64Array::from_iter(cells.map(|c| match c {
            Cell::Int(v) => Some(*v),
            _ => None,
        }))),
        Kind::Float => Arc::new(Float64Array::from_iter(cells.map(Cell::as_f64))),
        Kind::Bool => Arc::new(BooleanArray::from_iter(cells.map(|c| match c {
            Cell::Bool(b) => Some(*b),
            _ => None,
        }))),
        Kind::Text => Arc::new(StringArray::from_iter(cells.map(|c| match c {
            Cell::Null => None,
            other => Some(other.text()),
        }))),
    }
}

/// Write the dataset to `path` atomically (tmp + rename). Same table, same bytes.
pub fn write_sweep(path: &Path, t: &SweepTable) -> Result<(), ReportError> {
    let out = storbench_trace::atomic::AtomicFile::create(path)
        .map_err(|e| ReportError::io(path, "create", e))?;
    write_sweep_to(out, t)
}

/// [`write_sweep`] into `DIR/sweep.parquet` of a sweep directory storbench owns.
pub fn write_sweep_in(
    dir: &storbench_trace::atomic::OutputDir,
    t: &SweepTable,
) -> Result<PathBuf, ReportError> {
    let path = dir.join(SWEEP_FILE);
    let out = dir
        .replace(SWEEP_FILE)
        .map_err(|e| ReportError::io(&path, "create", e))?;
    write_sweep_to(out, t)?;
    Ok(path)
}

fn write_sweep_to(
    mut out: storbench_trace::atomic::AtomicFile,
    t: &SweepTable,
) -> Result<(), ReportError> {
    let path = &out.path().to_path_buf();
    let n = t.meta.columns.len();
    assert!(
        t.rows.iter().all(|r| r.len() == n),
        "every row has one cell per column"
    );
    let schema = Arc::new(Schema::new(
        t.meta
            .columns
            .iter()
            .map(|c| Field::new(&c.name, c.kind.data_type(), true))
            .collect::<Vec<_>>(),
    ));
    let cols: Vec<ArrayRef> = (0..n)
        .map(|i| array(t.meta.columns[i].kind, &t.rows, i))
        .collect();
    let meta = serde_json::to_string(&t.meta).expect("sweep metadata serializes");
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(1).expect("zstd level 1"),
        ))
        .set_created_by(format!("storbench {}", env!("CARGO_PKG_VERSION")))
        .set_key_value_metadata(Some(vec![KeyValue::new(META_KEY.to_string(), meta)]))
        .build();
    // Written whole or not at all (storbench_trace::atomic), as every output is.
    let tmp = out.temp();
    let file = out.take_file();
    let mut w =
        ArrowWriter::try_new(file, schema.clone(), Some(props)).map_err(|e| pq_err(&tmp, e))?;
    let batch = RecordBatch::try_new(schema, cols).map_err(|e| pq_err(&tmp, e))?;
    w.write(&batch).map_err(|e| pq_err(&tmp, e))?;
    let file = w.into_inner().map_err(|e| pq_err(&tmp, e))?;
    file.sync_all()
        .map_err(|e| ReportError::io(&tmp, "fsync", e))?;
    drop(file);
    out.commit()
        .map_err(|e| ReportError::io(path, "rename into place", e))
}

fn invalid(path: &Path, message: String) -> ReportError {
    ReportError::Invalid {
        path: path.to_path_buf(),
        message,
        hint: "sweep.parquet files are written by `storbench sweep`; was this one edited?",
    }
}

/// Read a dataset written by [`write_sweep`].
pub fn read_sweep(path: &Path) -> Result<SweepTable, ReportError> {
    let file = std::fs::File::open(path).map_err(|e| ReportError::io(path, "open", e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| pq_err(path, e))?;
    let text = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == META_KEY))
        .and_then(|k| k.value.clone())
        .ok_or_else(|| invalid(path, format!("no `{META_KEY}` metadata")))?;
    let meta: SweepMeta = serde_json::from_str(&text)
        .map_err(|e| invalid(path, format!("metadata `{META_KEY}`: {e}")))?;
    let reader = builder.build().map_err(|e| pq_err(path, e))?;
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| pq_err(path, e))?;
        let base = rows.len();
        rows.extend((0..batch.num_rows()).map(|_| Vec::with_capacity(meta.columns.len())));
        for c in &meta.columns {
            let a = batch
                .column_by_name(&c.name)
                .ok_or_else(|| invalid(path, format!("column {:?} is missing", c.name)))?;
            let wrong = || invalid(path, format!("column {:?} is not {:?}", c.name, c.kind));
            for (i, row) in rows[base..].iter_mut().enumerate() {
                let cell = if a.is_null(i) {
                    Cell::Null
                } else {
                    match c.kind {
                        Kind::Int => Cell::Int(
                            a.as_any()
                                .downcast_ref::<Int64Array>()
                                .ok_or_else(wrong)?
                                .value(i),
                        ),
                        Kind::Float => Cell::Float(
                            a.as_any()
                                .downcast_ref::<Float64Array>()
                                .ok_or_else(wrong)?
                                .value(i),
                        ),
                        Kind::Bool => Cell::Bool(
                            a.as_any()
                                .downcast_ref::<BooleanArray>()
                                .ok_or_else(wrong)?
                                .value(i),
                        ),
                        Kind::Text => Cell::Text(
                            a.as_any()
                                .downcast_ref::<StringArray>()
                                .ok_or_else(wrong)?
                                .value(i)
                                .to_owned(),
                        ),
                    }
                };
                row.push(cell);
            }
        }
    }
    Ok(SweepTable { meta, rows })
}

/// Directories under `dir` (itself included) that hold a sweep dataset. A sweep's
/// own directory is not searched further (its points are the sweep).
pub fn discover(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if d.join(SWEEP_FILE).is_file() {
            out.push(d);
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut subs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect();
        subs.sort();
        stack.extend(subs.into_iter().rev());
    }
    out
}

// ---------------------------------------------------------------- report section

/// Rows shown in a sweep's table; a larger sweep says how many more its dataset has.
pub const TABLE_ROWS_SHOWN: usize = 200;

/// One figure over two axes: the mean of every row that falls in each cell.
struct Grid {
    xs: Vec<Cell>,
    ys: Vec<Cell>,
    /// mean[y][x]
    mean: Vec<Vec<Option<f64>>>,
    per_cell: usize,
}

fn distinct(rows: &[&Vec<Cell>], i: usize) -> Vec<Cell> {
    let mut v: Vec<Cell> = Vec::new();
    for r in rows {
        if !v.contains(&r[i]) {
            v.push(r[i].clone());
        }
    }
    let numeric = v.iter().all(|c| c.as_f64().is_some());
    if numeric {
        v.sort_by(|a, b| a.as_f64().unwrap().total_cmp(&b.as_f64().unwrap()));
    }
    v
}

fn grid(rows: &[&Vec<Cell>], x: usize, y: Option<usize>, fig: usize) -> Grid {
    let xs = distinct(rows, x);
    let ys = y.map_or(vec![Cell::Null], |y| distinct(rows, y));
    let mut sum = vec![vec![(0.0, 0usize); xs.len()]; ys.len()];
    for r in rows {
        let Some(v) = r[fig].as_f64() else { continue };
        let xi = xs.iter().position(|c| *c == r[x]).expect("x value listed");
        let yi = y.map_or(0, |y| ys.iter().position(|c| *c == r[y]).expect("y listed"));
        sum[yi][xi].0 += v;
        sum[yi][xi].1 += 1;
    }
    let per_cell = sum.iter().flatten().map(|s| s.1).max().unwrap_or(0);
    let mean = sum
        .iter()
        .map(|row| {
            row.iter()
                .map(|&(s, n)| (n > 0).then(|| s / n as f64))
                .collect()
        })
        .collect();
    Grid {
        xs,
        ys,
        mean,
        per_cell,
    }
}

/// Three significant digits, no exponent for ordinary magnitudes.
fn fmt3(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.001 {
        format!("{v:.3}")
    } else {
        format!("{v:.2e}")
    }
}

/// Viridis at t in [0, 1], from five stops.
fn viridis(t: f64) -> (u8, u8, u8) {
    const STOPS: [(f64, f64, f64); 5] = [
        (68.0, 1.0, 84.0),
        (59.0, 82.0, 139.0),
        (33.0, 145.0, 140.0),
        (94.0, 201.0, 98.0),
        (253.0, 231.0, 37.0),
    ];
    let t = t.clamp(0.0, 1.0) * 4.0;
    let i = (t.floor() as usize).min(3);
    let f = t - i as f64;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    let m = |p: f64, q: f64| (p + (q - p) * f).round() as u8;
    (m(a.0, b.0), m(a.1, b.1), m(a.2, b.2))
}

const PALETTE: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

fn heat_map(g: &Grid, xname: &str, yname: &str, fig: &str) -> String {
    let (cw, ch, left, top) = (56.0, 26.0, 110.0, 10.0);
    let w = left + cw * g.xs.len() as f64 + 10.0;
    let h = top + ch * g.ys.len() as f64 + 46.0;
    let vals: Vec<f64> = g.mean.iter().flatten().flatten().copied().collect();
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut s = format!(
        "<svg class=\"heat\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" role=\"img\"><title>{} over {} and {}</title>",
        esc(fig),
        esc(xname),
        esc(yname)
    );
    for (yi, yv) in g.ys.iter().enumerate() {
        let y0 = top + ch * yi as f64;
        let _ = write!(
            s,
            "<text class=\"tick\" x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            y0 + ch * 0.65,
            esc(&yv.text())
        );
        for (xi, v) in g.mean[yi].iter().enumerate() {
            let x0 = left + cw * xi as f64;
            match v {
                Some(v) => {
                    let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
                    let (r, gg, b) = viridis(t);
                    let ink = if t > 0.6 { "#000" } else { "#fff" };
                    let _ = write!(
                        s,
                        "<rect x=\"{x0:.0}\" y=\"{y0:.0}\" width=\"{cw:.0}\" height=\"{ch:.0}\" fill=\"rgb({r},{gg},{b})\"><title>{} = {}, {} = {}: {}</title></rect>\
                         <text class=\"value\" x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"middle\" fill=\"{ink}\">{}</text>",
                        esc(xname),
                        esc(&g.xs[xi].text()),
                        esc(yname),
                        esc(&yv.text()),
                        fmt3(*v),
                        x0 + cw / 2.0,
                        y0 + ch * 0.65,
                        fmt3(*v)
                    );
                }
                None => {
                    let _ = write!(
                        s,
                        "<rect x=\"{x0:.0}\" y=\"{y0:.0}\" width=\"{cw:.0}\" height=\"{ch:.0}\" fill=\"#eee\"/>"
                    );
                }
            }
        }
    }
    let yb = top + ch * g.ys.len() as f64;
    for (xi, xv) in g.xs.iter().enumerate() {
        let _ = write!(
            s,
            "<text class=\"tick\" x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"middle\">{}</text>",
            left + cw * (xi as f64 + 0.5),
            yb + 16.0,
            esc(&xv.text())
        );
    }
    let _ = write!(
        s,
        "<text class=\"label\" x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"middle\">{}</text>\
         <text class=\"label\" x=\"4\" y=\"{:.0}\">{}</text></svg>",
        left + cw * g.xs.len() as f64 / 2.0,
        yb + 36.0,
        esc(xname),
        yb + 36.0,
        esc(yname)
    );
    s
}

fn line_chart(g: &Grid, xname: &str, yname: &str, fig: &str) -> String {
    let (w, h, left, right, top, bottom) = (440.0, 260.0, 64.0, 12.0, 10.0, 40.0);
    let xpos = x_positions(g);
    let vals: Vec<f64> = g.mean.iter().flatten().flatten().copied().collect();
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min).min(0.0);
    let hi = if hi > lo { hi * 1.05 } else { lo + 1.0 };
    let px = |t: f64| left + t * (w - left - right);
    let py = |v: f64| top + (1.0 - (v - lo) / (hi - lo)) * (h - top - bottom);
    let mut s = format!(
        "<svg class=\"lines\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" role=\"img\"><title>{} over {}, one line per {}</title>\
         <line x1=\"{left}\" y1=\"{:.0}\" x2=\"{:.0}\" y2=\"{:.0}\" stroke=\"#999\"/><line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{:.0}\" stroke=\"#999\"/>",
        esc(fig),
        esc(xname),
        esc(yname),
        h - bottom,
        w - right,
        h - bottom,
        h - bottom
    );
    for k in 0..=4 {
        let v = lo + (hi - lo) * f64::from(k) / 4.0;
        let _ = write!(
            s,
            "<text class=\"tick\" x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"end\">{}</text>",
            left - 4.0,
            py(v) + 4.0,
            fmt3(v)
        );
    }
    for (i, xv) in g.xs.iter().enumerate() {
        let _ = write!(
            s,
            "<text class=\"tick\" x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"middle\">{}</text>",
            px(xpos[i]),
            h - bottom + 16.0,
            esc(&xv.text())
        );
    }
    let _ = write!(
        s,
        "<text class=\"label\" x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"middle\">{}</text>",
        px(0.5),
        h - 4.0,
        esc(xname)
    );
    for (yi, row) in g.mean.iter().enumerate() {
        let color = PALETTE[yi % PALETTE.len()];
        let pts: Vec<String> = row
            .iter()
            .enumerate()
            .filter_map(|(xi, v)| v.map(|v| format!("{:.1},{:.1}", px(xpos[xi]), py(v))))
            .collect();
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"><title>{} = {}</title></polyline>",
            pts.join(" "),
            esc(yname),
            esc(&g.ys[yi].text())
        );
        for p in &pts {
            let (x, y) = p.split_once(',').expect("x,y");
            let _ = write!(
                s,
                "<circle cx=\"{x}\" cy=\"{y}\" r=\"3\" fill=\"{color}\"/>"
            );
        }
    }
    s.push_str("</svg>");
    if g.ys.len() > 1 {
        s += &legend(g, yname);
    }
    s
}

/// Where each x value sits, 0 to 1: by value when all are numbers, evenly otherwise.
fn x_positions(g: &Grid) -> Vec<f64> {
    let numeric_x = g.xs.iter().all(|c| c.as_f64().is_some());
    if numeric_x && g.xs.len() > 1 {
        let v: Vec<f64> = g.xs.iter().map(|c| c.as_f64().unwrap()).collect();
        let (a, b) = (v[0], v[v.len() - 1]);
        v.iter().map(|x| (x - a) / (b - a)).collect()
    } else {
        let n = g.xs.len().max(2) - 1;
        (0..g.xs.len()).map(|i| i as f64 / n as f64).collect()
    }
}

/// The line chart's legend: one colour per y value.
fn legend(g: &Grid, yname: &str) -> String {
    let mut s = String::from("<div class=\"legend\">");
    for (yi, yv) in g.ys.iter().enumerate() {
        let _ = write!(
            s,
            "<span><i style=\"background:{}\"></i>{} = {}</span>",
            PALETTE[yi % PALETTE.len()],
            esc(yname),
            esc(&yv.text())
        );
    }
    s + "</div>"
}

/// The axes of one procedure's rows: parameters (and workload, preset) that take more
/// than one value there, in plan order; the seed is averaged over, never an axis.
fn axes(t: &SweepTable, rows: &[&Vec<Cell>]) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, c) in t.meta.columns.iter().enumerate() {
        let candidate = c.role == Role::Param || c.name == "workload" || c.name == "preset";
        if candidate && c.name != "seed" && !out.contains(&i) && distinct(rows, i).len() > 1 {
            out.push(i);
        }
    }
    let pick = |name: &Option<String>| {
        name.as_ref()
            .and_then(|n| t.column(n))
            .filter(|i| out.contains(i))
    };
    let (hx, hy) = (pick(&t.meta.x), pick(&t.meta.y));
    // The hinted axes take their places; the others follow in plan order.
    let mut rest = out
        .iter()
        .copied()
        .filter(|i| Some(*i) != hx && Some(*i) != hy);
    let mut ordered = Vec::new();
    if let Some(x) = hx.or_else(|| rest.next()) {
        ordered.push(x);
    }
    if let Some(y) = hy.filter(|y| !ordered.contains(y)).or_else(|| rest.next()) {
        ordered.push(y);
    }
    ordered.extend(rest);
    ordered
}

fn table_html(t: &SweepTable) -> String {
    let mut s = String::from("<table class=\"sweep\"><tr>");
    for c in &t.meta.columns {
        if c.name == "target" {
            continue;
        }
        let _ = write!(s, "<th>{}</th>", esc(&c.name));
    }
    s.push_str("</tr>\n");
    for r in t.rows.iter().take(TABLE_ROWS_SHOWN) {
        s.push_str("<tr>");
        for (c, v) in t.meta.columns.iter().zip(r) {
            if c.name == "target" {
                continue;
            }
            match v {
                Cell::Float(f) => {
                    let _ = write!(s, "<td class=\"num\">{}</td>", fmt3(*f));
                }
                Cell::Int(_) => {
                    let _ = write!(s, "<td class=\"num\">{}</td>", v.text());
                }
                _ => {
                    let _ = write!(s, "<td>{}</td>", esc(&v.text()));
                }
            }
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    if t.rows.len() > TABLE_ROWS_SHOWN {
        let _ = writeln!(
            s,
            "<p class=\"note\">First {TABLE_ROWS_SHOWN} of {} rows; the dataset holds them all.</p>",
            t.rows.len()
        );
    }
    s
}

/// One procedure's figures in a sweep: a heat map (two axes) and a line chart per
/// figure column, over the rows whose `procedure` column (index `pc`) is `p`.
fn procedure_html(s: &mut String, t: &SweepTable, pc: usize, p: &str) {
    let rows: Vec<&Vec<Cell>> = t.rows.iter().filter(|r| r[pc].text() == p).collect();
    let ax = axes(t, &rows);
    let figures: Vec<usize> = t
        .meta
        .columns
        .iter()
        .enumerate()
        .filter(|(i, c)| {
            c.role == Role::Figure
                && c.kind != Kind::Text
                && rows.iter().any(|r| r[*i].as_f64().is_some())
        })
        .map(|(i, _)| i)
        .collect();
    let _ = writeln!(s, "<h4>{} ({} points)</h4>", esc(p), rows.len());
    let Some(&x) = ax.first() else {
        s.push_str("<p class=\"note\">No axis varies among these points: see the table.</p>\n");
        return;
    };
    let y = ax.get(1).copied();
    let name = |i: usize| t.meta.columns[i].name.clone();
    if ax.len() > 2 {
        let rest: Vec<String> = ax[2..].iter().map(|&i| name(i)).collect();
        let _ = writeln!(
            s,
            "<p class=\"note\">Also averaged over: {}.</p>",
            esc(&rest.join(", "))
        );
    }
    let yname = y.map_or("-".to_string(), name);
    for f in figures {
        let g = grid(&rows, x, y, f);
        let fname = name(f);
        let _ = writeln!(
            s,
            "<div class=\"sweepfig\" id=\"sweep-{}-{}\"><div><b>{}</b> <span class=\"note\">(mean of up to {} point(s) per cell)</span><br>{}</div><div>{}</div></div>",
            esc(p),
            esc(&fname),
            esc(&fname),
            g.per_cell,
            if y.is_some() {
                heat_map(&g, &name(x), &yname, &fname)
            } else {
                String::new()
            },
            line_chart(&g, &name(x), &yname, &fname)
        );
    }
}

/// The report's sweep section for these datasets (`dir`, table), or an empty string.
pub fn section_html(sweeps: &[(PathBuf, SweepTable)]) -> String {
    if sweeps.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<style>.sweepfig{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start;margin:6px 0 20px}\
         .sweepfig svg .tick{font-size:11px;fill:#555}.sweepfig svg .label{font-size:12px;fill:#333}\
         .sweepfig svg .value{font-size:10px}</style>\n\
         <p>A sweep runs one plan's points (the cartesian product of its axes) on the simulated drive. \
         Each heat map cell and line point is the mean of the points that share its two axis values \
         (over seeds, and over any further axis the note names).</p>\n",
    );
    for (dir, t) in sweeps {
        let _ = write!(
            s,
            "<h3>{}</h3>\n<p class=\"note\">{} of {} points finished · dataset {}</p>\n",
            esc(&t.meta.title),
            t.rows.len(),
            t.meta.points_planned,
            esc(&dir.join(SWEEP_FILE).display().to_string())
        );
        let Some(pc) = t.column("procedure") else {
            continue;
        };
        let mut procs: Vec<String> = Vec::new();
        for r in &t.rows {
            let p = r[pc].text();
            if !procs.contains(&p) {
                procs.push(p);
            }
        }
        for p in procs {
            procedure_html(&mut s, t, pc, &p);
        }
        s.push_str(&table_html(t));
    }
    s
}

/// Read every sweep found under `dirs` (see [`discover`]), in the order given.
pub fn load_all(dirs: &[PathBuf]) -> Result<Vec<(PathBuf, SweepTable)>, ReportError> {
    let mut out = Vec::new();
    for d in dirs {
        for s in discover(d) {
            let t = read_sweep(&s.join(SWEEP_FILE))?;
            out.push((s, t));
        }
    }
    Ok(out)
}

/// `name = value` counts of each parameter, for the dry run and the report's summary.
pub fn axis_values(t: &SweepTable) -> BTreeMap<String, usize> {
    let all: Vec<&Vec<Cell>> = t.rows.iter().collect();
    t.meta
        .columns
        .iter()
        .enumerate()
        .filter(|(_, c)| c.role == Role::Param)
        .map(|(i, c)| (c.name.clone(), distinct(&all, i).len()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> SweepTable {
        let col = |name: &str, role, kind| Column {
            name: name.into(),
            role,
            kind,
        };
        let mut rows = Vec::new();
        for (i, op) in [0.07, 0.28].iter().enumerate() {
            for (j, v) in ["greedy", "fifo"].iter().enumerate() {
                rows.push(vec![
                    Cell::Text(format!("p{i}{j}")),
                    Cell::Text("consistency".into()),
                    Cell::Float(*op),
                    Cell::Text((*v).into()),
                    Cell::Int(1),
                    Cell::Float(1000.0 * (1.0 + op) + j as f64),
                    if i == 0 { Cell::Null } else { Cell::Bool(true) },
                ]);
            }
        }
        SweepTable {
            meta: SweepMeta {
                title: "t".into(),
                points_planned: 5,
                x: None,
                y: Some("victim".into()),
                columns: vec![
                    col("point", Role::Key, Kind::Text),
                    col("procedure", Role::Key, Kind::Text),
                    col("op", Role::Param, Kind::Float),
                    col("victim", Role::Param, Kind::Text),
                    col("seed", Role::Key, Kind::Int),
                    col("steady_iops", Role::Figure, Kind::Float),
                    col("reached", Role::Figure, Kind::Bool),
                ],
            },
            rows,
        }
    }

    #[test]
    fn dataset_round_trips_with_nulls_and_same_bytes() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a.parquet"), d.path().join("b.parquet"));
        let t = table();
        write_sweep(&a, &t).unwrap();
        write_sweep(&b, &t).unwrap();
        assert_eq!(read_sweep(&a).unwrap(), t);
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    }

    #[test]
    fn cells_round_trip_through_json_exactly() {
        let cells = vec![
            Cell::Null,
            Cell::Int(-3),
            Cell::Float(20042.0),
            Cell::Float(0.1 + 0.2),
            Cell::Bool(false),
            Cell::Text("7".into()),
        ];
        let back: Vec<Cell> =
            serde_json::from_str(&serde_json::to_string(&cells).unwrap()).unwrap();
        assert_eq!(back, cells);
    }

    #[test]
    fn section_draws_a_heat_map_per_figure_with_the_hinted_axes() {
        let t = table();
        let html = section_html(&[(PathBuf::from("s"), t)]);
        // y hinted as victim, so x is the other axis, op.
        assert!(html.contains("steady_iops over op and victim"), "{html}");
        assert!(html.contains("reached over op and victim"));
        // op=0.28, victim=fifo: 1000*1.28+1 = 1281.
        assert!(html.contains(">1281<"), "{html}");
        // op=0.07 has no `reached` value: an empty (grey) cell, not a zero.
        assert!(html.contains("fill=\"#eee\""));
        assert!(html.contains("4 of 5 points finished"));
    }

    #[test]
    fn kinds_widen_ints_to_floats_and_mixed_to_text() {
        assert_eq!(
            Kind::of(&[Cell::Int(1), Cell::Null, Cell::Float(0.5)]),
            Kind::Float
        );
        assert_eq!(
            Kind::of(&[Cell::Int(1), Cell::Text("a".into())]),
            Kind::Text
        );
        assert_eq!(Kind::of(&[Cell::Int(1), Cell::Int(2)]), Kind::Int);
    }
}
