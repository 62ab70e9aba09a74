//! The sweep plan: a TOML file of targets, workloads, procedures and seeds whose
//! cartesian product is the list of points to run.
//!
//! ```toml
//! name = "client drive: OP x GC policy"
//! seeds = [1, 2]                      # or { from = 1, count = 4 }; default [1]
//! checkpoint_every = "60s"            # the simulated drive's chunk length (part of every point)
//!
//! [[target]]                          # one or more; each is a product of its own axes
//! preset = "client-7op"               # a list makes the preset an axis too
//! capacity = "16g"                    # a scalar: the same in every point
//! op = { from = 0.07, to = 0.5, count = 8 }     # a range: an axis (also from/to/step)
//! victim = ["greedy", "fifo", "random", "cost-benefit"]   # a list: an axis
//!
//! [[target]]                          # instead of `preset`: a full spec, or a twin
//! twin = "m/twin.json"                # `storbench twin fit`'s; or target = "sim:..."
//! op = [0.07, 0.28]                   # keys set on top of it replace the spec's own
//!
//! [[workload]]                        # for procedures that replay one (bench)
//! profile = "heavy-2011"              # or trace = "app.parquet", or generator = "randwrite"
//! scale = 0.01
//!
//! [[procedure]]
//! name = "consistency"                # consistency, trim-check, season, bench, twin-measure
//! time = "600s"                       # the command's options, as the CLI spells them
//! span = ["100%", "75%"]              # options can be axes too
//!
//! [report]                            # optional: the report's heat-map axes
//! x = "op"
//! y = "victim"
//! ```
//!
//! The plan is the union over `[[procedure]]` entries of targets x workloads (only for
//! a procedure that takes one) x the procedure's own option axes x seeds. A point's
//! seed is the procedure's seed (the random writes, the synthesized profile, the
//! generator) and the simulator's `seed` key, unless the target sets that key itself.
//! Every point is checked before anything runs: its simulated drive is built from its
//! spec and its options are parsed as the command would parse them.

use crate::point;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use storbench_report::sweep::Cell;
use toml::Spanned;

/// Largest plan accepted (each point is a few hundred bytes in memory; a bigger study
/// is several plans, or one plan per cluster job).
pub const MAX_POINTS: usize = 200_000;

/// A user mistake in a plan: file, line (when known), what and what to do.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}{}: {message}{}", line.map_or(String::new(), |l| format!(":{l}")), hint.as_ref().map_or(String::new(), |h| format!("\n  hint: {h}")))]
pub struct PlanError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
    pub hint: Option<String>,
}

/// What one point runs: everything that decides its result and nothing else. Its id
/// is a hash of this, so a point finished under one plan is found again under another.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    pub procedure: String,
    /// The simulated drive, `sim:PRESET,key=value,...`.
    pub target: String,
    pub workload: Option<WorkloadSpec>,
    /// Procedure options by their CLI names (`time`, `precondition-passes`).
    pub options: BTreeMap<String, Cell>,
    pub seed: u64,
    pub checkpoint_every_ns: u64,
}

/// A workload for a procedure that replays one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum WorkloadSpec {
    /// A published profile, synthesized for the point's drive (scale: 1, or 0.002 with
    /// the procedure's `quick`, as `storbench bench`).
    Profile { name: String, scale: Option<f64> },
    /// A Parquet trace (an absolute path: every machine that runs the point reads it).
    Trace { path: PathBuf },
    /// A fio-style generator, written as a trace (no times) and replayed at its QD.
    Generator {
        rw: String,
        bs: String,
        qd: u32,
        read_pct: u8,
        span: String,
        ios: Option<u64>,
        size: Option<String>,
    },
}

impl WorkloadSpec {
    /// The dataset's `workload` column.
    pub fn label(&self) -> String {
        match self {
            WorkloadSpec::Profile { name, scale } => match scale {
                Some(s) => format!("{name} x{s}"),
                None => name.clone(),
            },
            WorkloadSpec::Trace { path } => path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into(),
            ),
            WorkloadSpec::Generator {
                rw,
                bs,
                qd,
                read_pct,
                span,
                ios,
                size,
            } => {
                let mut s = format!("{rw} bs={bs} qd={qd}");
                if rw.contains("rw") {
                    s += &format!(" read={read_pct}%");
                }
                if span != "100%" {
                    s += &format!(" span={span}");
                }
                match (ios, size) {
                    (Some(n), _) => s += &format!(" ios={n}"),
                    (_, Some(b)) => s += &format!(" size={b}"),
                    _ => {}
                }
                s
            }
        }
    }
}

/// One point of the plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Position in the plan (the dataset's row order).
    pub index: usize,
    /// 16 hex digits: a hash of [`RunSpec`]; the point's directory name.
    pub id: String,
    pub run: RunSpec,
    pub preset: String,
    /// The value of each plan axis this point has, by column name.
    pub params: Vec<(String, Cell)>,
    /// What the point will write, estimated before anything runs (not part of its id).
    #[serde(default)]
    pub output: PointOutput,
}

/// A point's estimated output and the plan field that decides most of it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PointOutput {
    pub bytes: u64,
    /// The field (`ios`, `size`, `scale`, `duration`, ...) and its line in the plan.
    pub field: Option<String>,
    pub line: Option<usize>,
}

/// A plan axis: a key with more than one value somewhere in the plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub name: String,
    pub values: Vec<Cell>,
}

#[derive(Clone, Debug)]
pub struct Plan {
    pub title: String,
    /// The plan file (or `<text>`), for messages.
    pub file: String,
    /// The plan as given (kept beside the results).
    pub text: String,
    pub points: Vec<Point>,
    pub axes: Vec<Axis>,
    /// Procedure names in plan order (the dataset's figure columns follow it).
    pub procedures: Vec<String>,
    pub report_x: Option<String>,
    pub report_y: Option<String>,
}

type Entry = BTreeMap<String, Spanned<toml::Value>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: Option<String>,
    seeds: Option<Spanned<toml::Value>>,
    checkpoint_every: Option<Spanned<String>>,
    #[serde(default)]
    target: Vec<Entry>,
    #[serde(default)]
    workload: Vec<Entry>,
    #[serde(default)]
    procedure: Vec<Entry>,
    report: Option<RawReport>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReport {
    x: Option<String>,
    y: Option<String>,
}

/// 64-bit FNV-1a: stable across machines and versions (std's hashers are not).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl RunSpec {
    pub fn id(&self) -> String {
        let canon = serde_json::to_string(self).expect("run spec serializes");
        format!("{:016x}", fnv1a64(canon.as_bytes()))
    }
}

struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
}

impl Ctx<'_> {
    fn line(&self, span: std::ops::Range<usize>) -> usize {
        let end = span.start.min(self.text.len());
        self.text[..end].bytes().filter(|&b| b == b'\n').count() + 1
    }

    fn err(
        &self,
        span: Option<std::ops::Range<usize>>,
        message: String,
        hint: Option<&str>,
    ) -> PlanError {
        PlanError {
            file: self.file.to_owned(),
            line: span.map(|s| self.line(s)),
            message,
            hint: hint.map(str::to_owned),
        }
    }
}

/// A key's values in one entry: one (fixed) or several (an axis).
struct KeyValues {
    key: String,
    values: Vec<Cell>,
    axis: bool,
    span: std::ops::Range<usize>,
}

fn scalar(v: &toml::Value) -> Option<Cell> {
    match v {
        toml::Value::String(s) => Some(Cell::Text(s.clone())),
        toml::Value::Integer(i) => Some(Cell::Int(*i)),
        toml::Value::Float(f) if f.is_finite() => Some(Cell::Float(*f)),
        toml::Value::Boolean(b) => Some(Cell::Bool(*b)),
        _ => None,
    }
}

/// Values of a range table `{ from, to, step }` or `{ from, to, count }`.
fn range(
    ctx: &Ctx<'_>,
    key: &str,
    span: &std::ops::Range<usize>,
    t: &toml::Table,
) -> Result<Vec<Cell>, PlanError> {
    let bad = |m: String| {
        ctx.err(
            Some(span.clone()),
            format!("`{key}`: {m}"),
            Some("a range is { from = 0.07, to = 0.5, step = 0.01 } or { from = 0.07, to = 0.5, count = 8 }"),
        )
    };
    for k in t.keys() {
        if !["from", "to", "step", "count"].contains(&k.as_str()) {
            return Err(bad(format!("unknown range key `{k}`")));
        }
    }
    let num = |k: &str| -> Result<Option<(f64, bool)>, PlanError> {
        match t.get(k) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) => Ok(Some((*i as f64, true))),
            Some(toml::Value::Float(f)) if f.is_finite() => Ok(Some((*f, false))),
            Some(_) => Err(bad(format!("`{k}` must be a number"))),
        }
    };
    let (from, from_int) = num("from")?.ok_or_else(|| bad("`from` is missing".into()))?;
    let (to, to_int) = num("to")?.ok_or_else(|| bad("`to` is missing".into()))?;
    if to < from {
        return Err(bad(format!("`to` ({to}) is below `from` ({from})")));
    }
    let (count, all_int, step) = match (num("step")?, t.get("count")) {
        (Some(_), Some(_)) => return Err(bad("give `step` or `count`, not both".into())),
        (Some((step, step_int)), None) => {
            if step <= 0.0 {
                return Err(bad("`step` must be positive".into()));
            }
            // Inclusive of `to` when a step lands on it (within rounding).
            let n = ((to - from) / step + 1e-9).floor() as u64 + 1;
            (n, from_int && to_int && step_int, step)
        }
        (None, Some(toml::Value::Integer(c))) if *c >= 1 => {
            let c = *c as u64;
            let step = if c > 1 {
                (to - from) / (c - 1) as f64
            } else {
                0.0
            };
            let int = from_int && to_int && (c == 1 || ((to - from) as u64).is_multiple_of(c - 1));
            (c, int, step)
        }
        (None, Some(_)) => return Err(bad("`count` must be a positive integer".into())),
        (None, None) => return Err(bad("give `step` or `count`".into())),
    };
    if count as usize > MAX_POINTS {
        return Err(bad(format!(
            "{count} values: more than a plan may have ({MAX_POINTS})"
        )));
    }
    Ok((0..count)
        .map(|i| {
            let v = from + step * i as f64;
            if all_int {
                Cell::Int(v.round() as i64)
            } else {
                // 12 significant digits: 0.07 + 3 x 0.01 prints as 0.1, not 0.09999999999999999.
                let rounded: f64 = format!("{v:.12e}").parse().expect("formatted float parses");
                Cell::Float(rounded)
            }
        })
        .collect())
}

fn key_values(ctx: &Ctx<'_>, entry: &Entry) -> Result<Vec<KeyValues>, PlanError> {
    let mut out = Vec::new();
    for (key, v) in entry {
        let span = v.span();
        let (values, axis) = match v.get_ref() {
            toml::Value::Array(items) => {
                if items.is_empty() {
                    return Err(ctx.err(
                        Some(span),
                        format!("`{key}`: an empty list"),
                        Some("an axis needs at least one value"),
                    ));
                }
                let mut vals = Vec::with_capacity(items.len());
                for it in items {
                    let c = scalar(it).ok_or_else(|| {
                        ctx.err(
                            Some(span.clone()),
                            format!("`{key}`: list items must be strings, numbers or booleans"),
                            None,
                        )
                    })?;
                    if vals.contains(&c) {
                        return Err(ctx.err(
                            Some(span.clone()),
                            format!("`{key}`: {} is listed twice", c.text()),
                            None,
                        ));
                    }
                    vals.push(c);
                }
                (vals, true)
            }
            toml::Value::Table(t) => (range(ctx, key, &span, t)?, true),
            other => (
                vec![scalar(other).ok_or_else(|| {
                    ctx.err(
                        Some(span.clone()),
                        format!("`{key}`: dates are not plan values"),
                        None,
                    )
                })?],
                false,
            ),
        };
        out.push(KeyValues {
            key: key.clone(),
            values,
            axis,
            span,
        });
    }
    // File order, so axes and spec keys come out as written.
    out.sort_by_key(|k| k.span.start);
    Ok(out)
}

/// Every combination of the keys' values, in order (the last key varies fastest).
fn product(keys: &[KeyValues]) -> Vec<Vec<(usize, Cell)>> {
    let mut out: Vec<Vec<(usize, Cell)>> = vec![Vec::new()];
    for (i, k) in keys.iter().enumerate() {
        let mut next = Vec::with_capacity(out.len() * k.values.len());
        for combo in &out {
            for v in &k.values {
                let mut c = combo.clone();
                c.push((i, v.clone()));
                next.push(c);
            }
        }
        out = next;
    }
    out
}

/// One expansion of an entry: its values by key, and which keys are axes.
struct Variant {
    values: Vec<(String, Cell)>,
    axes: Vec<(String, Cell)>,
    line: usize,
}

fn expand(
    ctx: &Ctx<'_>,
    entry: &Entry,
    section: &str,
    limit: usize,
) -> Result<Vec<Variant>, PlanError> {
    let kv = key_values(ctx, entry)?;
    let n: usize = kv
        .iter()
        .map(|k| k.values.len())
        .try_fold(1usize, |a, b| a.checked_mul(b))
        .unwrap_or(usize::MAX);
    let line = kv.first().map_or(0, |k| ctx.line(k.span.clone()));
    if n > limit {
        return Err(ctx.err(kv.first().map(|k| k.span.clone()), format!("this [[{section}]] alone has {n} combinations; a plan may have at most {MAX_POINTS} points"), Some("split the study into several plans")));
    }
    Ok(product(&kv)
        .into_iter()
        .map(|combo| Variant {
            values: combo
                .iter()
                .map(|(i, c)| (kv[*i].key.clone(), c.clone()))
                .collect(),
            axes: combo
                .iter()
                .filter(|(i, _)| kv[*i].axis)
                .map(|(i, c)| (kv[*i].key.clone(), c.clone()))
                .collect(),
            line,
        })
        .collect())
}

fn text_of(c: &Cell) -> String {
    c.text()
}

struct TargetVariant {
    preset: String,
    spec: String,
    axes: Vec<(String, Cell)>,
    sets_seed: bool,
    line: usize,
}

/// The keys that name a target's base drive, one per `[[target]]`: a preset, a full
/// `sim:` spec, or a twin fitted by `storbench twin fit` (its `twin.json`).
const BASE_KEYS: [&str; 3] = ["preset", "target", "twin"];

fn targets(ctx: &Ctx<'_>, raw: &[Entry], base: &Path) -> Result<Vec<TargetVariant>, PlanError> {
    let mut out = Vec::new();
    for entry in raw {
        let given: Vec<&str> = BASE_KEYS
            .into_iter()
            .filter(|k| entry.contains_key(*k))
            .collect();
        let key = match given[..] {
            [k] => k,
            [] => {
                let span = entry.values().next().map(|v| v.span());
                return Err(ctx.err(
                    span,
                    "a [[target]] without `preset`, `target` or `twin`".into(),
                    Some("e.g. preset = \"client-7op\" (`storbench sim presets` lists them), target = \"sim:...\", or twin = \"DIR/twin.json\""),
                ));
            }
            _ => {
                return Err(ctx.err(
                    Some(entry[given[1]].span()),
                    format!("a [[target]] takes one of `preset`, `target`, `twin`; this one has {}", given.join(", ")),
                    Some("the other keys of a [[target]] set or vary the simulator's keys on top of it"),
                ));
            }
        };
        let span = entry[key].span();
        for v in expand(ctx, entry, "target", MAX_POINTS)? {
            let named = v
                .values
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, c)| c.clone());
            let Some(Cell::Text(named)) = named else {
                return Err(ctx.err(Some(span), format!("`{key}` must be a string"), None));
            };
            let mut spec = match key {
                "preset" => format!("sim:{named}"),
                "target" => named.clone(),
                _ => twin_target(ctx, base, &named, span.clone())?,
            };
            if !spec.starts_with("sim:") {
                return Err(ctx.err(
                    Some(span.clone()),
                    format!("`{key}`: {spec} is not a simulated drive (`sim:PRESET,...`)"),
                    Some("a sweep runs on the simulated drive"),
                ));
            }
            for (k, c) in &v.values {
                if k != key {
                    spec = with_key(&spec, k, &text_of(c));
                }
            }
            let preset = spec["sim:".len()..]
                .split(',')
                .next()
                .unwrap_or("")
                .trim()
                .to_owned();
            let sets_seed = spec
                .split(',')
                .skip(1)
                .any(|i| i.trim().starts_with("seed="));
            out.push(TargetVariant {
                preset,
                spec,
                axes: v.axes,
                sets_seed,
                line: v.line,
            });
        }
    }
    Ok(out)
}

/// The `target` of the twin in `twin.json` at `path` (relative to the plan's directory).
fn twin_target(
    ctx: &Ctx<'_>,
    base: &Path,
    path: &str,
    span: std::ops::Range<usize>,
) -> Result<String, PlanError> {
    let file = base.join(path);
    let bad = |e: String| {
        ctx.err(
            Some(span.clone()),
            format!("twin {}: {e}", file.display()),
            Some("twin paths are relative to the plan file; `storbench twin fit DIR` writes DIR/twin.json"),
        )
    };
    let text = std::fs::read_to_string(&file).map_err(|e| bad(e.to_string()))?;
    let twin: storbench_results::twin::TwinFile =
        serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    Ok(twin.target)
}

/// `spec` with `key=value`: replaced where the spec sets `key`, appended otherwise (a
/// `sim:` spec refuses a key given twice).
fn with_key(spec: &str, key: &str, value: &str) -> String {
    let mut items: Vec<String> = spec.split(',').map(str::to_owned).collect();
    let item = format!("{key}={value}");
    match items
        .iter_mut()
        .skip(1)
        .find(|i| i.split_once('=').is_some_and(|(k, _)| k.trim() == key))
    {
        Some(i) => *i = item,
        None => items.push(item),
    }
    items.join(",")
}

struct WorkloadVariant {
    spec: WorkloadSpec,
    axes: Vec<(String, Cell)>,
    /// Each key's line in the plan.
    lines: BTreeMap<String, usize>,
}

/// Each key of an entry with its line in the plan (`_` spelled `-`, as options are).
fn key_lines(ctx: &Ctx<'_>, entry: &Entry) -> BTreeMap<String, usize> {
    entry
        .iter()
        .map(|(k, v)| (k.replace('_', "-"), ctx.line(v.span())))
        .collect()
}

const PROFILE_KEYS: [&str; 2] = ["profile", "scale"];
const TRACE_KEYS: [&str; 1] = ["trace"];
const GENERATOR_KEYS: [&str; 7] = ["generator", "bs", "qd", "read_pct", "span", "ios", "size"];
const RW_KINDS: [&str; 7] = [
    "read",
    "write",
    "rw",
    "randread",
    "randwrite",
    "randrw",
    "trim",
];

fn workloads(ctx: &Ctx<'_>, raw: &[Entry], base: &Path) -> Result<Vec<WorkloadVariant>, PlanError> {
    let mut out = Vec::new();
    for entry in raw {
        let kind = workload_kind(ctx, entry)?;
        for v in expand(ctx, entry, "workload", MAX_POINTS)? {
            let w = WorkloadValues {
                ctx,
                entry,
                values: &v.values,
            };
            let spec = match kind {
                "profile" => w.profile()?,
                "trace" => w.trace(base)?,
                _ => w.generator()?,
            };
            out.push(WorkloadVariant {
                spec,
                axes: v.axes,
                lines: key_lines(ctx, entry),
            });
        }
    }
    Ok(out)
}

/// The one of `profile`, `trace` or `generator` a [[workload]] entry names, after
/// checking that its other keys belong to that kind.
fn workload_kind(ctx: &Ctx<'_>, entry: &Entry) -> Result<&'static str, PlanError> {
    let kinds: Vec<&'static str> = ["profile", "trace", "generator"]
        .into_iter()
        .filter(|k| entry.contains_key(*k))
        .collect();
    let kind = match kinds.as_slice() {
        [k] => *k,
        _ => return Err(ctx.err(
            first_span(entry),
            "a [[workload]] names exactly one of `profile`, `trace` or `generator`".into(),
            Some("profile = \"heavy-2011\", trace = \"app.parquet\" or generator = \"randwrite\""),
        )),
    };
    let allowed: &[&str] = match kind {
        "profile" => &PROFILE_KEYS,
        "trace" => &TRACE_KEYS,
        _ => &GENERATOR_KEYS,
    };
    for (k, v) in entry {
        if !allowed.contains(&k.as_str()) {
            return Err(ctx.err(
                Some(v.span()),
                format!("a {kind} workload has no key `{k}`"),
                Some(&format!("its keys: {}", allowed.join(", "))),
            ));
        }
    }
    Ok(kind)
}

/// The span of an entry's first key in the file (for errors about the whole entry).
fn first_span(entry: &Entry) -> Option<std::ops::Range<usize>> {
    entry.values().map(|v| v.span()).min_by_key(|s| s.start)
}

/// One expansion of a [[workload]] entry: its values, read as the types a workload
/// needs, with errors that point at the entry's line for the key.
struct WorkloadValues<'a> {
    ctx: &'a Ctx<'a>,
    entry: &'a Entry,
    values: &'a [(String, Cell)],
}

impl WorkloadValues<'_> {
    fn line_of(&self, k: &str) -> Option<std::ops::Range<usize>> {
        self.entry.get(k).map(|v| v.span())
    }

    fn get(&self, k: &str) -> Option<Cell> {
        self.values
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, c)| c.clone())
    }

    fn text(&self, k: &str) -> Result<Option<String>, PlanError> {
        match self.get(k) {
            None => Ok(None),
            Some(Cell::Text(s)) => Ok(Some(s)),
            Some(Cell::Int(i)) => Ok(Some(i.to_string())),
            Some(_) => Err(self
                .ctx
                .err(self.line_of(k), format!("`{k}` must be a string"), None)),
        }
    }

    fn int(&self, k: &str) -> Result<Option<i64>, PlanError> {
        match self.get(k) {
            None => Ok(None),
            Some(Cell::Int(i)) if i >= 0 => Ok(Some(i)),
            Some(_) => Err(self.ctx.err(
                self.line_of(k),
                format!("`{k}` must be a non-negative integer"),
                None,
            )),
        }
    }

    /// `profile = NAME` (a built-in or a .toml file), with an optional `scale`.
    fn profile(&self) -> Result<WorkloadSpec, PlanError> {
        let name = self.text("profile")?.expect("profile key present");
        if storbench_workload::synth::builtin(&name).is_none() && !name.ends_with(".toml") {
            return Err(self.ctx.err(
                self.line_of("profile"),
                format!("unknown profile `{name}`"),
                Some("`storbench profiles` lists them; a profile file ends in .toml"),
            ));
        }
        let scale = match self.get("scale") {
            None => None,
            Some(c) => match c.as_f64() {
                Some(s) if s > 0.0 && !matches!(c, Cell::Bool(_)) => Some(s),
                _ => {
                    return Err(self.ctx.err(
                        self.line_of("scale"),
                        "`scale` must be a positive number".into(),
                        None,
                    ))
                }
            },
        };
        Ok(WorkloadSpec::Profile { name, scale })
    }

    /// `trace = PATH`, relative to the plan's directory; it must exist.
    fn trace(&self, base: &Path) -> Result<WorkloadSpec, PlanError> {
        let given = self.text("trace")?.expect("trace key present");
        let path = base.join(&given);
        if !path.is_file() {
            return Err(self.ctx.err(self.line_of("trace"), format!("trace {}: no such file", path.display()), Some("trace paths are relative to the plan file; `storbench import` or `synth` makes one")));
        }
        let path = std::path::absolute(&path).unwrap_or(path);
        Ok(WorkloadSpec::Trace { path })
    }

    /// `generator = RW` with its fio-style keys; `ios` or `size`, not both.
    fn generator(&self) -> Result<WorkloadSpec, PlanError> {
        let rw = self.text("generator")?.expect("generator key present");
        if !RW_KINDS.contains(&rw.as_str()) {
            return Err(self.ctx.err(
                self.line_of("generator"),
                format!("generator `{rw}`: unknown"),
                Some(&format!("one of {}", RW_KINDS.join(", "))),
            ));
        }
        // The bench's queue depth (`--qd`), with its bounds.
        let qd = self.int("qd")?.unwrap_or(1);
        let bounded = u32::try_from(qd)
            .map_err(|_| ())
            .and_then(|q| storbench_suite::units::check_qd("`qd`", q).map_err(|_| ()));
        if bounded.is_err() {
            return Err(self.ctx.err(
                self.line_of("qd"),
                format!("`qd` {qd}: must be between 1 and 4096, as bench's --qd"),
                None,
            ));
        }
        let read_pct = self.read_pct(&rw)?;
        let ios = self.int("ios")?.map(|i| i as u64);
        let size = self.text("size")?;
        if ios.is_some() == size.is_some() {
            return Err(self.ctx.err(
                first_span(self.entry),
                "a generator workload needs `ios` (an I/O count) or `size` (bytes), not both"
                    .into(),
                Some(
                    "the trace bench replays a finite workload, e.g. ios = 100000 or size = \"4g\"",
                ),
            ));
        }
        Ok(WorkloadSpec::Generator {
            rw,
            bs: self.text("bs")?.unwrap_or_else(|| "4k".into()),
            qd: qd as u32,
            read_pct,
            span: self.text("span")?.unwrap_or_else(|| "100%".into()),
            ios,
            size,
        })
    }

    /// `read_pct`, at most 100; by default 100 for reads, 50 for mixed, 0 for writes.
    fn read_pct(&self, rw: &str) -> Result<u8, PlanError> {
        Ok(match self.int("read_pct")? {
            Some(p) if p <= 100 => p as u8,
            Some(p) => {
                return Err(self.ctx.err(
                    self.line_of("read_pct"),
                    format!("`read_pct` {p}: must be at most 100"),
                    None,
                ))
            }
            None if rw.contains("read") => 100,
            None if rw.contains("rw") => 50,
            None => 0,
        })
    }
}

struct ProcVariant {
    name: String,
    options: BTreeMap<String, Cell>,
    axes: Vec<(String, Cell)>,
    line: usize,
    /// Each key's line in the plan.
    lines: BTreeMap<String, usize>,
}

fn procedures(ctx: &Ctx<'_>, raw: &[Entry], base: &Path) -> Result<Vec<ProcVariant>, PlanError> {
    let mut out = Vec::new();
    for entry in raw {
        let first = entry.values().map(|v| v.span()).min_by_key(|s| s.start);
        let name = match entry.get("name").map(|v| (v.get_ref(), v.span())) {
            Some((toml::Value::String(s), span)) => {
                if !point::PROCEDURES.contains(&s.as_str()) {
                    return Err(ctx.err(
                        Some(span),
                        format!("procedure `{s}`: unknown"),
                        Some(&format!("one of {}", point::PROCEDURES.join(", "))),
                    ));
                }
                s.clone()
            }
            Some((_, span)) => {
                return Err(ctx.err(
                    Some(span),
                    "`name` must be one procedure's name (a string)".into(),
                    Some("write one [[procedure]] per procedure"),
                ))
            }
            None => {
                return Err(ctx.err(
                    first,
                    "a [[procedure]] without `name`".into(),
                    Some(&format!("one of {}", point::PROCEDURES.join(", "))),
                ))
            }
        };
        let known = point::options(&name);
        for (k, v) in entry {
            if k != "name" && !known.contains(&k.replace('_', "-")) {
                return Err(ctx.err(
                    Some(v.span()),
                    format!("{name} has no option `{k}`"),
                    Some(&format!("its options: {}", known.join(", "))),
                ));
            }
        }
        for v in expand(ctx, entry, "procedure", MAX_POINTS)? {
            out.push(ProcVariant {
                name: name.clone(),
                options: v
                    .values
                    .into_iter()
                    .filter(|(k, _)| k != "name")
                    .map(|(k, c)| (k.replace('_', "-"), c))
                    .map(|(k, c)| {
                        let c = if PATH_OPTIONS.contains(&k.as_str()) {
                            relative_to(base, c)
                        } else {
                            c
                        };
                        (k, c)
                    })
                    .collect(),
                axes: v.axes,
                line: v.line,
                lines: key_lines(ctx, entry),
            });
        }
    }
    Ok(out)
}

/// Options that name a file (`image`): relative to the plan's directory, as a trace
/// workload's path is, made absolute.
const PATH_OPTIONS: [&str; 1] = ["image"];

fn relative_to(base: &Path, c: Cell) -> Cell {
    match c {
        Cell::Text(t) => {
            let p = base.join(t);
            Cell::Text(std::path::absolute(&p).unwrap_or(p).display().to_string())
        }
        other => other,
    }
}

fn seeds(ctx: &Ctx<'_>, raw: Option<&Spanned<toml::Value>>) -> Result<Vec<u64>, PlanError> {
    let Some(s) = raw else { return Ok(vec![1]) };
    let bad = || {
        ctx.err(Some(s.span()), "`seeds` must be non-negative integers: a list, one integer, or { from = 1, count = 4 }".into(), None)
    };
    let cells = match s.get_ref() {
        toml::Value::Integer(i) => vec![Cell::Int(*i)],
        toml::Value::Array(a) => a
            .iter()
            .map(|v| scalar(v).ok_or_else(bad))
            .collect::<Result<_, _>>()?,
        toml::Value::Table(t) => {
            // Seeds step by one: { from, to } or { from, count }.
            let mut t = t.clone();
            if !t.contains_key("to") {
                let from = t
                    .get("from")
                    .and_then(toml::Value::as_integer)
                    .ok_or_else(bad)?;
                let count = t
                    .remove("count")
                    .and_then(|c| c.as_integer())
                    .ok_or_else(bad)?;
                t.insert("to".into(), toml::Value::Integer(from + count - 1));
            }
            if !t.contains_key("count") && !t.contains_key("step") {
                t.insert("step".into(), toml::Value::Integer(1));
            }
            range(ctx, "seeds", &s.span(), &t)?
        }
        _ => return Err(bad()),
    };
    let mut out = Vec::new();
    for c in cells {
        match c {
            Cell::Int(i) if i >= 0 && !out.contains(&(i as u64)) => out.push(i as u64),
            _ => return Err(bad()),
        }
    }
    Ok(out)
}

/// `checkpoint_every`: the simulated drive's chunk length, more than 0 and at most
/// 60 s (the default).
fn checkpoint_every(ctx: &Ctx<'_>, raw: Option<&Spanned<String>>) -> Result<u64, PlanError> {
    let Some(c) = raw else {
        return Ok(60_000_000_000);
    };
    let ns = storbench_suite::units::parse_duration_ns("checkpoint_every", c.get_ref())
        .map_err(|e| ctx.err(Some(c.span()), e.to_string(), None))?;
    if ns == 0 || ns > 60_000_000_000 {
        return Err(ctx.err(
            Some(c.span()),
            format!(
                "checkpoint_every {}: must be more than 0 and at most 60s",
                c.get_ref()
            ),
            None,
        ));
    }
    Ok(ns)
}

/// A plan's sections, each expanded: the factors of its points.
struct Sections {
    seeds: Vec<u64>,
    targets: Vec<TargetVariant>,
    workloads: Vec<WorkloadVariant>,
    procs: Vec<ProcVariant>,
}

impl Sections {
    /// Column names: a key that is an axis in two sections (or that names a column of
    /// its own) is named section.key.
    fn columns(&self) -> Columns {
        let mut sections: BTreeMap<String, Vec<&'static str>> = BTreeMap::new();
        let mut note = |k: &str, s: &'static str| {
            let e = sections.entry(k.to_owned()).or_default();
            if !e.contains(&s) {
                e.push(s);
            }
        };
        self.targets
            .iter()
            .flat_map(|t| &t.axes)
            .for_each(|(k, _)| note(k, "target"));
        self.workloads
            .iter()
            .flat_map(|w| &w.axes)
            .for_each(|(k, _)| note(k, "workload"));
        self.procs
            .iter()
            .flat_map(|p| &p.axes)
            .for_each(|(k, _)| note(k, "procedure"));
        Columns { sections }
    }

    /// The points: per procedure, targets x workloads (if it takes one) x seeds, in
    /// that order; none twice, at most [`MAX_POINTS`].
    fn points(&self, ctx: &Ctx<'_>, checkpoint_every_ns: u64) -> Result<Vec<Point>, PlanError> {
        let columns = self.columns();
        let mut points: Vec<Point> = Vec::new();
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for p in &self.procs {
            let ws: Vec<Option<&WorkloadVariant>> = if point::takes_workload(&p.name) {
                if self.workloads.is_empty() {
                    return Err(ctx.err(None, format!("procedure {} (line {}) replays a workload, and the plan has no [[workload]]", p.name, p.line), Some("add [[workload]] profile = \"heavy-2011\" (or trace = ..., generator = ...)")));
                }
                self.workloads.iter().map(Some).collect()
            } else {
                vec![None]
            };
            for t in &self.targets {
                for w in &ws {
                    for &seed in &self.seeds {
                        if points.len() >= MAX_POINTS {
                            return Err(ctx.err(
                                None,
                                format!("more than {MAX_POINTS} points"),
                                Some("split the study into several plans"),
                            ));
                        }
                        let run = RunSpec {
                            procedure: p.name.clone(),
                            target: t.spec_with_seed(seed),
                            workload: w.map(|w| w.spec.clone()),
                            options: p.options.clone(),
                            seed,
                            checkpoint_every_ns,
                        };
                        let id = run.id();
                        if let Some(prev) = seen.insert(id.clone(), points.len()) {
                            return Err(ctx.err(
                                None,
                                format!(
                                    "points {prev} and {} are the same run ({} on {})",
                                    points.len(),
                                    run.procedure,
                                    run.target
                                ),
                                Some("two [[target]] or [[workload]] entries overlap"),
                            ));
                        }
                        let output = output_of(&run, *w, p);
                        points.push(Point {
                            index: points.len(),
                            id,
                            run,
                            preset: t.preset.clone(),
                            params: columns.params(t, *w, p),
                            output,
                        });
                    }
                }
            }
        }
        Ok(points)
    }

    /// Checks every point now (its drive builds, its options parse): a bad value must
    /// not surface after hours of others.
    fn check_points(&self, file: &str, points: &[Point]) -> Result<(), PlanError> {
        for pt in points {
            if let Err(e) = storbench_sim::SimConfig::parse(&pt.run.target) {
                let line = self
                    .targets
                    .iter()
                    .find(|t| pt.run.target.starts_with(&t.spec))
                    .map(|t| t.line);
                return Err(PlanError {
                    file: file.to_owned(),
                    line,
                    message: format!("point {} ({}): {e}", pt.index, pt.run.target),
                    hint: e.hint(),
                });
            }
            if let Err(e) = point::check(&pt.run) {
                let line = self
                    .procs
                    .iter()
                    .find(|p| p.name == pt.run.procedure && p.options == pt.run.options)
                    .map(|p| flag_line(p, &e.to_string()).unwrap_or(p.line));
                return Err(PlanError {
                    file: file.to_owned(),
                    line,
                    message: format!(
                        "point {} ({} on {}): {e}",
                        pt.index, pt.run.procedure, pt.run.target
                    ),
                    hint: None,
                });
            }
        }
        Ok(())
    }
}

/// The line of the key a point's error names as the command line's flag (`invalid
/// value 'ten' for '--time <TIME>'`, `--qd 5000: ...`), if the plan spells it so.
fn flag_line(p: &ProcVariant, message: &str) -> Option<usize> {
    p.lines
        .iter()
        .find(|(k, _)| {
            [' ', '\'', ':']
                .iter()
                .any(|end| message.contains(&format!("--{k}{end}")))
        })
        .map(|(_, line)| *line)
}

/// A point's estimated output, named by the field that decides most of it: the
/// workload's size (`ios`, `size`, `scale` or `profile`) when its trace dominates,
/// else the procedure's timed option (`time` or its alias `duration`, `dirty-for`,
/// `settle`).
fn output_of(run: &RunSpec, w: Option<&WorkloadVariant>, p: &ProcVariant) -> PointOutput {
    let est = point::output_estimate(run);
    let field = if est.trace_bytes >= est.results_bytes {
        w.and_then(|w| {
            ["ios", "size", "scale", "profile"]
                .into_iter()
                .find_map(|k| w.lines.get(k).map(|l| (k, *l)))
        })
    } else if est.timed_s > 0 {
        ["time", "duration", "dirty-for", "settle"]
            .into_iter()
            .find_map(|k| p.lines.get(k).map(|l| (k, *l)))
    } else {
        None
    };
    PointOutput {
        bytes: est.total_bytes(),
        field: field.map(|(k, _)| k.to_owned()),
        line: field.map(|(_, l)| l),
    }
}

impl Plan {
    /// Refuses a sweep whose `pending` points would write more than `free_bytes` (the
    /// room on `dir`'s filesystem), checked before the first point runs (issue 30: a
    /// generator of `ios = 1e14` passed the plan check and wrote until the disk was
    /// full). The error names the field that decides the largest point's output.
    pub fn check_room(
        &self,
        pending: &[&Point],
        free_bytes: u64,
        dir: &Path,
    ) -> Result<(), PlanError> {
        let need = pending
            .iter()
            .fold(0u64, |a, p| a.saturating_add(p.output.bytes));
        if need <= free_bytes {
            return Ok(());
        }
        let big = pending
            .iter()
            .max_by_key(|p| p.output.bytes)
            .expect("a need above the free space has a point");
        let fmt = storbench_workload::units::fmt_bytes;
        let what = match &big.output.field {
            Some(f) => format!("`{f}` of point {} decides most of it", big.index),
            None => format!("point {} is the largest", big.index),
        };
        Err(PlanError {
            file: self.file.clone(),
            line: big.output.line,
            message: format!(
                "the sweep would write about {} ({} point{} to run, up to {} each: {what}), more than the {} free in {}",
                fmt(need),
                pending.len(),
                if pending.len() == 1 { "" } else { "s" },
                fmt(big.output.bytes),
                fmt(free_bytes),
                dir.display()
            ),
            hint: Some(match big.output.field.as_deref() {
                Some("ios" | "size") => "lower `ios` or `size` (a generator writes its whole trace before the point runs), or give -o a filesystem with room".into(),
                Some(f) => format!("lower `{f}`, or give -o a filesystem with room"),
                None => "run fewer points at once (split the plan), or give -o a filesystem with room".into(),
            }),
        })
    }
}

impl TargetVariant {
    /// The target's spec with the point's seed, unless the target sets its own.
    fn spec_with_seed(&self, seed: u64) -> String {
        if self.sets_seed {
            self.spec.clone()
        } else {
            format!("{},seed={seed}", self.spec)
        }
    }
}

/// Which sections each axis key appears in, to name the dataset's columns.
struct Columns {
    sections: BTreeMap<String, Vec<&'static str>>,
}

impl Columns {
    /// Key `k` of section `s` as a column name.
    fn name(&self, k: &str, s: &str) -> String {
        if self.sections.get(k).is_some_and(|v| v.len() > 1)
            || ["point", "index", "procedure", "target", "workload", "seed"].contains(&k)
        {
            format!("{s}.{k}")
        } else {
            k.to_owned()
        }
    }

    /// A point's axis values by column: target's, workload's, then procedure's.
    fn params(
        &self,
        t: &TargetVariant,
        w: Option<&WorkloadVariant>,
        p: &ProcVariant,
    ) -> Vec<(String, Cell)> {
        let mut params: Vec<(String, Cell)> = Vec::new();
        params.extend(
            t.axes
                .iter()
                .map(|(k, c)| (self.name(k, "target"), c.clone())),
        );
        if let Some(w) = w {
            params.extend(
                w.axes
                    .iter()
                    .map(|(k, c)| (self.name(k, "workload"), c.clone())),
            );
        }
        params.extend(
            p.axes
                .iter()
                .map(|(k, c)| (self.name(k, "procedure"), c.clone())),
        );
        params
    }
}

/// The plan's axes: every column with its values in order of first appearance.
fn axes_of(points: &[Point]) -> Vec<Axis> {
    let mut axes: Vec<Axis> = Vec::new();
    for pt in points {
        for (k, c) in &pt.params {
            match axes.iter_mut().find(|a| a.name == *k) {
                Some(a) => {
                    if !a.values.contains(c) {
                        a.values.push(c.clone());
                    }
                }
                None => axes.push(Axis {
                    name: k.clone(),
                    values: vec![c.clone()],
                }),
            }
        }
    }
    axes
}

/// `[report]`'s x and y, each an axis of the plan (or `preset`, `workload`).
fn report_axes(
    ctx: &Ctx<'_>,
    report: Option<RawReport>,
    axes: &[Axis],
) -> Result<(Option<String>, Option<String>), PlanError> {
    let (report_x, report_y) = match report {
        Some(r) => (r.x, r.y),
        None => (None, None),
    };
    for a in [&report_x, &report_y].into_iter().flatten() {
        if !axes.iter().any(|x| x.name == *a) && !["preset", "workload"].contains(&a.as_str()) {
            let names: Vec<&str> = axes.iter().map(|a| a.name.as_str()).collect();
            return Err(ctx.err(
                None,
                format!("[report] axis `{a}` is not an axis of the plan"),
                Some(&format!("axes: {}", names.join(", "))),
            ));
        }
    }
    Ok((report_x, report_y))
}

impl Plan {
    /// Read and expand a plan file. Relative trace paths are relative to its directory.
    pub fn load(path: &Path) -> Result<Plan, PlanError> {
        let text = std::fs::read_to_string(path).map_err(|e| PlanError {
            file: path.display().to_string(),
            line: None,
            message: format!("reading the plan: {e}"),
            hint: None,
        })?;
        let base = path
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        Plan::parse(&text, &path.display().to_string(), &base)
    }

    /// Expand a plan's text; `file` names it in errors, `base` resolves trace paths.
    pub fn parse(text: &str, file: &str, base: &Path) -> Result<Plan, PlanError> {
        let ctx = Ctx { file, text };
        let raw: Raw = toml::from_str(text).map_err(|e| PlanError {
            file: file.to_owned(),
            line: e.span().map(|s| ctx.line(s)),
            message: e.message().trim().to_owned(),
            hint: Some("top-level keys: name, seeds, checkpoint_every, [[target]], [[workload]], [[procedure]], [report]".into()),
        })?;
        if raw.target.is_empty() {
            return Err(ctx.err(
                None,
                "no [[target]]".into(),
                Some("add e.g. [[target]] preset = \"client-7op\""),
            ));
        }
        if raw.procedure.is_empty() {
            return Err(ctx.err(
                None,
                "no [[procedure]]".into(),
                Some("add e.g. [[procedure]] name = \"consistency\""),
            ));
        }
        let checkpoint_every_ns = checkpoint_every(&ctx, raw.checkpoint_every.as_ref())?;
        let sections = Sections {
            seeds: seeds(&ctx, raw.seeds.as_ref())?,
            targets: targets(&ctx, &raw.target, base)?,
            workloads: workloads(&ctx, &raw.workload, base)?,
            procs: procedures(&ctx, &raw.procedure, base)?,
        };
        let procs = &sections.procs;
        if !sections.workloads.is_empty() && !procs.iter().any(|p| point::takes_workload(&p.name)) {
            return Err(ctx.err(
                None,
                "[[workload]] entries but no procedure replays one".into(),
                Some("add [[procedure]] name = \"bench\", or remove the workloads"),
            ));
        }
        let points = sections.points(&ctx, checkpoint_every_ns)?;
        sections.check_points(file, &points)?;
        let axes = axes_of(&points);
        let mut procedures: Vec<String> = Vec::new();
        for p in procs {
            if !procedures.contains(&p.name) {
                procedures.push(p.name.clone());
            }
        }
        let (report_x, report_y) = report_axes(&ctx, raw.report, &axes)?;
        Ok(Plan {
            title: raw.name.unwrap_or_else(|| {
                file.rsplit('/')
                    .next()
                    .unwrap_or(file)
                    .trim_end_matches(".toml")
                    .to_owned()
            }),
            file: file.to_owned(),
            text: text.to_owned(),
            points,
            axes,
            procedures,
            report_x,
            report_y,
        })
    }

    /// The dry run: the plan's size, its axes, and one line per point.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "plan {}: {} point{}\n",
            self.title,
            self.points.len(),
            if self.points.len() == 1 { "" } else { "s" }
        );
        let seeds: Vec<u64> = {
            let mut v: Vec<u64> = Vec::new();
            for p in &self.points {
                if !v.contains(&p.run.seed) {
                    v.push(p.run.seed);
                }
            }
            v
        };
        s += &format!("  procedures: {}\n", self.procedures.join(", "));
        for a in &self.axes {
            let vals: Vec<String> = a.values.iter().map(Cell::text).collect();
            s += &format!(
                "  axis {} ({} values): {}\n",
                a.name,
                a.values.len(),
                vals.join(", ")
            );
        }
        s += &format!(
            "  seeds ({}): {}\n",
            seeds.len(),
            seeds
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        let total = self
            .points
            .iter()
            .fold(0u64, |a, p| a.saturating_add(p.output.bytes));
        if let Some(big) = self.points.iter().max_by_key(|p| p.output.bytes) {
            s += &format!(
                "  output: about {} (the largest point, {}, about {})\n",
                storbench_workload::units::fmt_bytes(total),
                big.index,
                storbench_workload::units::fmt_bytes(big.output.bytes)
            );
        }
        s += &format!(
            "{:>6}  {:<16}  {:<12}  {:<20}  {}\n",
            "#", "point", "procedure", "workload", "target"
        );
        for p in &self.points {
            let w = p
                .run
                .workload
                .as_ref()
                .map_or_else(|| "-".to_string(), WorkloadSpec::label);
            let mut line = format!(
                "{:>6}  {:<16}  {:<12}  {:<20}  {}",
                p.index, p.id, p.run.procedure, w, p.run.target
            );
            for (k, v) in &p.run.options {
                line += &format!(" {k}={}", v.text());
            }
            s += line.trim_end();
            s.push('\n');
        }
        s
    }
}
