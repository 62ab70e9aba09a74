//! `storbench demo`: the main job on the embedded defaults, in about a minute on two
//! cores with no device and no root. Synthesizes a scaled Heavy 2011 trace, then on
//! two simulated presets runs the trace bench on a fresh and on a seasoned drive (the
//! 2009 article's states: purge, then the trace's image; purge, one sequential pass,
//! then the image), and
//! a performance-consistency test at full span and with 25% spare area on a drive large
//! enough (and a run long enough) that the fresh plateau, the drop and steady state
//! are all visible, and writes a self-contained report.html comparing them.

use super::out::{errln, outln};
use super::UserError;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::time::Instant;
use storbench_suite::bench::{BenchConfig, DriveState, Workload};
use storbench_suite::consistency::ConsistencyConfig;
use storbench_suite::{execute, Control, Start};

/// Marks a directory `storbench demo` made, so a second demo may replace it.
const MARKER: &str = ".storbench-demo";

#[derive(clap::Args)]
pub struct Args {
    /// Directory for the results and report.html (replaced if an earlier demo made it)
    #[arg(
        long = "output",
        short = 'o',
        visible_alias = "out",
        default_value = "storbench-demo",
        value_name = "DIR"
    )]
    pub out: PathBuf,
    /// The two simulated presets to compare (`storbench sim` lists them)
    #[arg(
        long,
        default_value = "client-7op,enterprise-28op",
        value_delimiter = ','
    )]
    pub presets: Vec<String>,
    /// Capacity of each simulated drive (512m, 1g, 4g)
    #[arg(long, default_value = "1g", value_name = "SIZE", value_parser = super::values::size)]
    pub capacity: u64,
    /// Scale of the Heavy 2011 trace (1 = the published 3.95 million I/Os)
    #[arg(long, default_value_t = 0.005)]
    pub scale: f64,
    /// Capacity of each simulated drive in the consistency runs: large enough that
    /// its spare area takes seconds of random writes to use up (the fresh plateau)
    #[arg(long, default_value = "32g", value_name = "SIZE", value_parser = super::values::size)]
    pub consistency_capacity: u64,
    /// Seconds of random writes in each consistency run
    #[arg(long, default_value_t = 150)]
    pub consistency_s: u64,
    /// No step lines
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

fn prepare_out(out: &Path) -> anyhow::Result<()> {
    if out.exists() {
        // The marker itself, never a link named like it (a link would make a directory
        // of the user's pass for a demo's, to be removed whole).
        let ours = std::fs::symlink_metadata(out.join(MARKER)).is_ok_and(|m| m.is_file());
        let empty = std::fs::read_dir(out)
            .with_context(|| format!("reading {}", out.display()))?
            .next()
            .is_none();
        if !ours && !empty {
            return Err(UserError {
                message: format!(
                    "{}: exists and was not made by storbench demo",
                    out.display()
                ),
                hint: Some("choose another directory with --out".into()),
            }
            .into());
        }
        if ours {
            std::fs::remove_dir_all(out).with_context(|| format!("clearing {}", out.display()))?;
        }
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    std::fs::write(out.join(MARKER), "made by storbench demo\n")
        .with_context(|| format!("writing {}", out.join(MARKER).display()))?;
    Ok(())
}

pub fn run(a: Args) -> anyhow::Result<()> {
    if a.presets.is_empty() {
        return Err(UserError {
            message: "--presets: give at least one preset".into(),
            hint: Some("`storbench sim` lists them".into()),
        }
        .into());
    }
    let t0 = Instant::now();
    prepare_out(&a.out)?;
    let demo = Demo {
        ctl: Control {
            command_line: std::env::args().collect(),
            ..Control::default()
        },
        a,
        t0,
    };
    let trace = demo.synthesize()?;
    let mut lines = Vec::new();
    for preset in &demo.a.presets {
        lines.extend(demo.bench(preset, &trace)?);
        lines.extend(demo.consistency(preset)?);
    }
    demo.report(&lines)
}

/// One demo's options, start time and run control, shared by its steps.
struct Demo {
    a: Args,
    t0: Instant,
    ctl: Control,
}

impl Demo {
    /// A step line on stderr, with the time since the start (unless --quiet).
    fn step(&self, what: &str) {
        if !self.a.quiet {
            errln!("[{:5.1}s] {what}", self.t0.elapsed().as_secs_f64())
        }
    }

    /// One trace for every drive: Heavy 2011, scaled, sized for the drives.
    fn synthesize(&self) -> anyhow::Result<PathBuf> {
        let a = &self.a;
        self.step(&format!("synthesizing Heavy 2011 at scale {}", a.scale));
        let trace = a.out.join("heavy-2011.parquet");
        let profile = storbench_workload::synth::load("heavy-2011")?;
        let opts = storbench_workload::synth::SynthOptions {
            scale: a.scale,
            capacity_bytes: a.capacity,
            seed: 1,
        };
        let meta = storbench_workload::synth::trace_meta(&profile, &opts);
        let mut w = storbench_trace::TraceWriter::create(&trace, &meta)?;
        let synth = storbench_workload::synth::generate(&profile, &opts, &mut w, &mut |_, _| {})?;
        w.finish()?;
        self.step(&format!(
            "trace: {} I/Os ({:.0}% reads), average QD {:.2}",
            synth.total(),
            100.0 * synth.reads as f64 / synth.total().max(1) as f64,
            synth.avg_qd()
        ));
        Ok(trace)
    }

    /// The trace bench on a fresh and on a seasoned drive; a summary line each.
    fn bench(&self, preset: &str, trace: &Path) -> anyhow::Result<Vec<String>> {
        let spec = format!("sim:{preset},capacity={},seed=1", self.a.capacity);
        let mut lines = Vec::new();
        for state in [DriveState::Fresh, DriveState::Seasoned] {
            self.step(&format!(
                "{preset}: replay the trace on a {} drive",
                state.name()
            ));
            let mut b = BenchConfig::new(
                &spec,
                Workload::Trace {
                    path: std::fs::canonicalize(trace)?,
                },
            );
            b.state = state;
            let state = state.name();
            let r = execute(
                &self.a.out.join(format!("bench-{preset}-{state}")),
                Start::New(b),
                &self.ctl,
            )
            .with_context(|| format!("trace bench on {spec}"))?;
            let s = r.summary.context("the bench's result has no summary")?;
            lines.push(format!(
                "{preset:>18}  bench {state:>8}: {:7.1} MB/s, mean service {:7.1} us (std dev {:.1})",
                s.data_rate_mb_per_s, s.service.mean_us, s.service.stddev_us
            ));
        }
        Ok(lines)
    }

    /// Performance consistency at full span and with 25% spare area, on the larger
    /// drive; a summary line each.
    fn consistency(&self, preset: &str) -> anyhow::Result<Vec<String>> {
        let a = &self.a;
        let cons_spec = format!("sim:{preset},capacity={},seed=1", a.consistency_capacity);
        let mut lines = Vec::new();
        for (span, tag) in [(1.0, "full"), (0.75, "spare25")] {
            self.step(&format!(
                "{preset}: consistency, {} span, {} s of 4 KB random writes",
                if span < 1.0 { "75%" } else { "full" },
                a.consistency_s
            ));
            let mut c = ConsistencyConfig::quick(&cons_spec);
            c.span_fraction = span;
            c.duration_ns = a.consistency_s * 1_000_000_000;
            // Scored over the last third: steady state, past the drop.
            c.score_last_s = (a.consistency_s as usize / 3).max(5);
            let r = execute(
                &a.out.join(format!("consistency-{preset}-{tag}")),
                Start::New(c),
                &self.ctl,
            )
            .with_context(|| format!("consistency on {cons_spec}"))?;
            if let Some(sc) = r.summary.and_then(|s| s.scores) {
                lines.push(format!(
                    "{preset:>18}  consistency {:>5}: {:7.0} IOPS avg, std dev {:.0}, min {:.0}",
                    if span < 1.0 { "25%SA" } else { "full" },
                    sc.avg,
                    sc.stddev,
                    sc.min
                ));
            }
        }
        Ok(lines)
    }

    /// Writes report.html and prints the summary lines and where the report is.
    fn report(&self, lines: &[String]) -> anyhow::Result<()> {
        self.step("writing the report");
        let out = &self.a.out;
        let runs = super::report::load_runs(std::slice::from_ref(out))?;
        let report = out.join("report.html");
        super::report::write_report(&runs, &report, None, &Default::default())?;
        outln!()?;
        for l in lines {
            outln!("{l}")?;
        }
        let shown = std::fs::canonicalize(&report).unwrap_or(report);
        outln!(
            "\ndone in {:.0} s. Open the report: {}",
            self.t0.elapsed().as_secs_f64(),
            shown.display()
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory of the user's holding a link named like the demo's marker passed
    /// for a demo's and was removed whole by the next demo.
    #[test]
    fn a_link_named_like_the_marker_does_not_make_a_directory_the_demos() {
        let tmp = tempfile::tempdir().unwrap();
        let mine = tmp.path().join("mine");
        std::fs::create_dir(&mine).unwrap();
        std::fs::write(mine.join("notes.txt"), "keep").unwrap();
        let somewhere = tmp.path().join("somewhere");
        std::fs::write(&somewhere, "a file").unwrap();
        std::os::unix::fs::symlink(&somewhere, mine.join(MARKER)).unwrap();
        let e = prepare_out(&mine).unwrap_err();
        assert!(e.to_string().contains("not made by storbench demo"), "{e}");
        assert!(mine.join("notes.txt").is_file());
    }

    fn small(out: &Path) -> Args {
        Args {
            out: out.to_owned(),
            presets: vec!["client-7op".into(), "enterprise-28op".into()],
            capacity: 512 << 20,
            scale: 0.002,
            consistency_capacity: 512 << 20,
            consistency_s: 8,
            quiet: true,
        }
    }

    #[test]
    fn demo_writes_a_report_comparing_both_drives_and_spare_area() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("demo");
        run(small(&out)).unwrap();
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        for needle in [
            "client-7op",
            "enterprise-28op",
            "25% spare area",
            "Trace bench",
        ] {
            assert!(html.contains(needle), "report lacks {needle:?}");
        }
        let iops = |dir: &str| {
            let r = storbench_suite::read_result::<ConsistencyConfig>(&out.join(dir)).unwrap();
            r.summary.unwrap().scores.unwrap().avg
        };
        let (full, spare) = (
            iops("consistency-client-7op-full"),
            iops("consistency-client-7op-spare25"),
        );
        assert!(spare > full, "25% spare area {spare} vs full span {full}");
        // The article's states: both purge and restore the trace's image; only the
        // seasoned drive takes the sequential pass first.
        let names = |dir: &str| -> Vec<String> {
            let r = storbench_suite::read_result::<BenchConfig>(&out.join(dir)).unwrap();
            r.phases.iter().map(|p| p.name.clone()).collect()
        };
        assert_eq!(
            names("bench-client-7op-seasoned"),
            ["purge", "seq-pass", "image", "replay"]
        );
        assert_eq!(
            names("bench-client-7op-fresh"),
            ["purge", "image", "replay"]
        );
        assert!(
            html.contains("seasoned") && html.contains("fresh"),
            "runs named by state"
        );
        // A second demo replaces the first; a directory it did not make is refused.
        run(Args {
            presets: vec!["client-7op".into()],
            ..small(&out)
        })
        .unwrap();
        assert!(!out.join("bench-enterprise-28op-fresh").exists());
        let other = tmp.path().join("mine");
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join("notes.txt"), "keep").unwrap();
        let e = run(small(&other)).unwrap_err();
        assert!(e.to_string().contains("not made by storbench demo"), "{e}");
        assert!(other.join("notes.txt").is_file());
    }
}
