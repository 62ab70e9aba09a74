//! `storbench report` and `storbench compare`.

use super::out::{errln, out};
use super::UserError;
use anyhow::Context;
use std::path::{Path, PathBuf};
use storbench_report::html::{self, load, RunView};
use storbench_trace::atomic::Rule;

#[derive(clap::Args)]
pub struct Args {
    /// Result directories (each holding a result.json), or directories of them
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Where to write the self-contained HTML report
    #[arg(short, long, default_value = "report.html", value_name = "FILE")]
    pub output: PathBuf,
    /// Also write every chart as SVG and PNG and every table as Markdown and CSV here
    #[arg(long, value_name = "DIR")]
    pub images: Option<PathBuf>,
    /// Name one run yourself instead of the label built from what differs (repeatable)
    #[arg(long, value_name = "DIR=NAME", value_parser = parse_label)]
    pub label: Vec<(PathBuf, String)>,
    /// Draw the runs with this label (or drive) highlighted in the bar charts
    #[arg(long, value_name = "LABEL")]
    pub highlight: Vec<String>,
    /// Replace an existing report or image storbench did not write
    #[arg(long)]
    pub overwrite: bool,
}

/// A `--label` that is not `DIR=NAME` (the value given).
#[derive(Debug)]
pub struct LabelError(String);

impl std::fmt::Display for LabelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}`: expected DIR=NAME, e.g. --label results/ssd1=\"Drive A, fresh\"",
            self.0
        )
    }
}

impl std::error::Error for LabelError {}

/// `DIR=NAME` of `--label`.
fn parse_label(s: &str) -> Result<(PathBuf, String), LabelError> {
    match s.split_once('=') {
        Some((d, n)) if !d.is_empty() && !n.trim().is_empty() => {
            Ok((PathBuf::from(d), n.trim().to_string()))
        }
        _ => Err(LabelError(s.to_owned())),
    }
}

/// Names every run (labels from what differs, `--label` overrides) and marks the
/// `--highlight`ed ones. A label or highlight that matches no run is a user error.
pub fn name_runs(
    runs: &mut [RunView],
    labels: &[(PathBuf, String)],
    highlight: &[String],
) -> anyhow::Result<()> {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut overrides = Vec::new();
    for (dir, name) in labels {
        let want = canon(dir);
        let Some(r) = runs.iter().find(|r| canon(Path::new(&r.source)) == want) else {
            return Err(UserError {
                message: format!(
                    "--label {}={name}: no result directory {} among the runs",
                    dir.display(),
                    dir.display()
                ),
                hint: Some("give DIR as one of the result directories the report reads".into()),
            }
            .into());
        };
        overrides.push((r.source.clone(), name.clone()));
    }
    storbench_report::html::view::name_runs(runs, &overrides);
    for h in highlight {
        let mut found = false;
        for r in runs.iter_mut().filter(|r| &r.name == h || &r.drive == h) {
            r.highlight = true;
            found = true;
        }
        if !found {
            let names: Vec<&str> = runs.iter().map(|r| r.name.as_str()).collect();
            return Err(UserError {
                message: format!("--highlight {h}: no run has this label or drive"),
                hint: Some(format!("the labels are: {}", names.join("; "))),
            }
            .into());
        }
    }
    Ok(())
}

#[derive(clap::Args)]
pub struct CompareArgs {
    /// Result directories (each holding a result.json), or directories of them
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
}

/// Loads every result under `dirs`, in the order given.
pub fn load_runs(dirs: &[PathBuf]) -> anyhow::Result<Vec<RunView>> {
    Ok(load_all(dirs)?.0)
}

type Sweeps = Vec<(PathBuf, storbench_report::sweep::SweepTable)>;

/// Every result and every sweep under `dirs`. A sweep's points are shown by its own
/// section (heat maps over its axes), not as one run each.
pub fn load_all(dirs: &[PathBuf]) -> anyhow::Result<(Vec<RunView>, Sweeps)> {
    let sweeps = storbench_report::sweep::load_all(dirs)?;
    let in_sweep = |d: &Path| sweeps.iter().any(|(s, _)| d.starts_with(s));
    let mut runs = Vec::new();
    for d in dirs {
        if !d.exists() {
            return Err(UserError {
                message: format!("{}: no such directory", d.display()),
                hint: Some("give the directory a procedure wrote (its --out), e.g. `storbench consistency --target sim:... --out DIR`".into()),
            }
            .into());
        }
        let found: Vec<PathBuf> = load::discover(d)?
            .into_iter()
            .filter(|r| !in_sweep(r))
            .collect();
        if found.is_empty() && !sweeps.iter().any(|(s, _)| s.starts_with(d)) {
            return Err(UserError {
                message: format!(
                    "{}: no {} here or in its subdirectories",
                    d.display(),
                    load::RESULT_FILE
                ),
                hint: Some(
                    "run a procedure first (consistency, trim-check, bench), or `storbench demo`"
                        .into(),
                ),
            }
            .into());
        }
        for dir in found {
            let (view, _) = load::load(&dir)?;
            runs.push(view);
        }
    }
    storbench_report::html::view::name_runs(&mut runs, &[]);
    Ok((runs, sweeps))
}

/// What a report may replace: `--overwrite`, and never a file it read (every run's
/// result.json and series, every sweep's dataset).
pub fn report_rule(
    overwrite: bool,
    runs: &[RunView],
    sweeps: &[(PathBuf, storbench_report::sweep::SweepTable)],
) -> Rule {
    let mut rule = Rule::overwrite(overwrite);
    for r in runs {
        let dir = Path::new(&r.source);
        rule = rule
            .input_path(&dir.join(load::RESULT_FILE))
            .input_path(&dir.join(storbench_report::SERIES_FILE));
        if let Ok(entries) = std::fs::read_dir(dir.join("series")) {
            for e in entries.flatten() {
                rule = rule.input_path(&e.path());
            }
        }
    }
    for (dir, _) in sweeps {
        rule = rule.input_path(&dir.join(storbench_report::sweep::SWEEP_FILE));
    }
    rule
}

/// Writes the HTML report (and images when asked) for `runs` under `rule`; prints
/// where.
pub fn write_report(
    runs: &[RunView],
    output: &Path,
    images: Option<&Path>,
    rule: &Rule,
) -> anyhow::Result<()> {
    write_report_with(runs, &[], output, images, rule)
}

/// [`write_report`] with a sweep section.
pub fn write_report_with(
    runs: &[RunView],
    sweeps: &[(PathBuf, storbench_report::sweep::SweepTable)],
    output: &Path,
    images: Option<&Path>,
    rule: &Rule,
) -> anyhow::Result<()> {
    let generator = format!("storbench {}", env!("CARGO_PKG_VERSION"));
    let page = html::render_html_with_sweeps(runs, sweeps, &generator);
    storbench_trace::atomic::write_atomic_with(output, page.as_bytes(), rule)
        .with_context(|| format!("writing {}", output.display()))?;
    if sweeps.is_empty() {
        errln!("report: {} ({} result(s))", output.display(), runs.len());
    } else {
        errln!(
            "report: {} ({} result(s), {} sweep(s))",
            output.display(),
            runs.len(),
            sweeps.len()
        );
    }
    if let Some(dir) = images {
        let w = storbench_report::images::write_images(
            dir,
            &html::charts(runs),
            &html::tables(runs),
            rule,
        )?;
        errln!("images: {} files in {}", w.files.len(), dir.display());
        for warning in &w.warnings {
            errln!("warning: {warning}");
        }
    }
    Ok(())
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let (mut runs, sweeps) = load_all(&args.dirs)?;
    name_runs(&mut runs, &args.label, &args.highlight)?;
    let rule = report_rule(args.overwrite, &runs, &sweeps);
    write_report_with(&runs, &sweeps, &args.output, args.images.as_deref(), &rule)
}

pub fn run_compare(args: CompareArgs) -> anyhow::Result<()> {
    let runs = load_runs(&args.dirs)?;
    out!("{}", storbench_report::compare::compare_text(&runs))?;
    Ok(())
}
