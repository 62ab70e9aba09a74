//! `storbench synth` (write a synthesized profile as a Parquet trace) and
//! `storbench profiles` (list the built-in profiles with their published figures).

use super::out::outln;
use super::UserError;
use anyhow::Context;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;
use storbench_trace::atomic::Rule;
use storbench_trace::TraceWriter;
use storbench_workload::synth::{
    self, Profile, SynthError, SynthOptions, SynthSummary, BUCKET_NAMES,
};

#[derive(clap::Args)]
pub struct Args {
    /// A built-in profile (see `storbench profiles`) or a profile TOML file (see docs/profiles/example.toml)
    pub profile: String,
    /// Multiplies counts, bytes and duration; ratios stay the same
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Capacity of the drive the footprint is mapped onto (k, m, g, t are powers of 1024)
    #[arg(long, default_value = "256g", value_name = "SIZE", value_parser = super::values::size)]
    pub capacity: u64,
    /// Seed: the same seed gives the same file, byte for byte
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The Parquet trace to write
    #[arg(short = 'o', long = "output", value_name = "TRACE.parquet")]
    pub output: PathBuf,
    /// Print the summary as JSON on stdout
    #[arg(long)]
    pub json: bool,
    /// Replace an existing file storbench did not write
    #[arg(long)]
    pub overwrite: bool,
    /// No progress bar
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

#[derive(clap::Args)]
pub struct ProfilesArgs {
    /// Also print each profile's assumptions and streams
    #[arg(long, short)]
    pub verbose: bool,
    /// Print name, published figures, targets and assumptions of each profile as JSON
    #[arg(long)]
    pub json: bool,
}

fn user(message: String, hint: Option<&str>) -> anyhow::Error {
    anyhow::Error::new(UserError {
        message,
        hint: hint.map(str::to_owned),
    })
}

fn synth_error(e: SynthError) -> anyhow::Error {
    match e {
        SynthError::Trace(t) => anyhow::Error::new(t),
        e @ SynthError::FootprintTooSmall { .. } => {
            user(e.to_string(), Some("give a larger --capacity"))
        }
        other => user(other.to_string(), None),
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let capacity_bytes = args.capacity;
    if capacity_bytes == 0 {
        return Err(user(
            "--capacity 0: no drive holds a footprint".into(),
            Some("give a size like 256g, 512g, 1t (k, m, g, t are powers of 1024)"),
        ));
    }
    let profile =
        synth::load(&args.profile).map_err(|e| user(e.to_string(), e.hint().as_deref()))?;
    let opts = SynthOptions {
        scale: args.scale,
        capacity_bytes,
        seed: args.seed,
    };
    let meta = synth::trace_meta(&profile, &opts);
    // A profile read from a file is an input: never the output.
    let rule = Rule::overwrite(args.overwrite).input_path(std::path::Path::new(&args.profile));
    let mut writer = TraceWriter::create_with(&args.output, &meta, &rule)
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    let bar = if std::io::stderr().is_terminal() && !args.quiet {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg} [{bar:40}] {human_pos}/{human_len} I/Os  {per_sec}  ETA {eta}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        b.set_message(format!("synth {}", profile.name));
        Some(b)
    } else {
        None
    };
    let t0 = Instant::now();
    let summary = synth::generate(&profile, &opts, &mut writer, &mut |done, total| {
        if let Some(b) = &bar {
            b.set_length(total);
            b.set_position(done);
        }
    })
    .map_err(synth_error)?;
    writer
        .finish()
        .with_context(|| format!("cannot finish {}", args.output.display()))?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let secs = t0.elapsed().as_secs_f64();
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&summary_json(&profile, &opts, &summary, secs))?
        )?;
    } else {
        print_summary(&profile, &opts, &summary, secs, &args.output)?;
    }
    Ok(())
}

fn summary_json(
    profile: &Profile,
    opts: &SynthOptions,
    s: &SynthSummary,
    secs: f64,
) -> serde_json::Value {
    let sizes: serde_json::Map<String, serde_json::Value> = BUCKET_NAMES
        .iter()
        .enumerate()
        .map(|(i, n)| (n.to_string(), s.size_fraction(i).into()))
        .collect();
    serde_json::json!({
        "profile": profile.name,
        "scale": opts.scale,
        "seed": opts.seed,
        "capacity_bytes": opts.capacity_bytes,
        "footprint_bytes": s.footprint_bytes,
        "reads": s.reads,
        "writes": s.writes,
        "bytes_read": s.bytes_read,
        "bytes_written": s.bytes_written,
        "sizes": sizes,
        "sequential_fraction": s.sequential_fraction(),
        "avg_qd": s.avg_qd(),
        "qd1_fraction": s.qd1_fraction(),
        "duration_ns": s.end_ns,
        "busy_ns": s.busy_ns,
        "generate_seconds": secs,
    })
}

fn print_summary(
    profile: &Profile,
    opts: &SynthOptions,
    s: &SynthSummary,
    secs: f64,
    out: &std::path::Path,
) -> Result<(), super::out::StdoutError> {
    outln!(
        "wrote {} ({} scale {}, seed {}, capacity {} GiB, footprint {:.1} GB)",
        out.display(),
        profile.name,
        opts.scale,
        opts.seed,
        opts.capacity_bytes >> 30,
        s.footprint_bytes as f64 / 1e9
    )?;
    outln!(
        "  reads {}  writes {}  GB read {:.2}  GB written {:.2}",
        s.reads,
        s.writes,
        s.bytes_read as f64 / 1e9,
        s.bytes_written as f64 / 1e9
    )?;
    let sizes: Vec<String> = BUCKET_NAMES
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{n} {:.1}%", 100.0 * s.size_fraction(i)))
        .collect();
    outln!("  sizes: {}", sizes.join(", "))?;
    outln!(
        "  sequential {:.1}%  average QD {:.3}  at QD1 {:.1}%  duration {:.0} s  busy {:.0} s",
        100.0 * s.sequential_fraction(),
        s.avg_qd(),
        100.0 * s.qd1_fraction(),
        s.end_ns as f64 / 1e9,
        s.busy_ns as f64 / 1e9
    )?;
    outln!(
        "  generated in {:.2} s ({:.1} M I/Os per second)",
        secs,
        s.total() as f64 / secs.max(1e-9) / 1e6
    )
}

pub fn run_profiles(args: ProfilesArgs) -> anyhow::Result<()> {
    if args.json {
        let all: Vec<serde_json::Value> = synth::BUILTIN
            .iter()
            .map(|(name, _)| {
                let p = synth::builtin(name).expect("built-in");
                serde_json::json!({
                    "name": p.name,
                    "title": p.title,
                    "source": p.source,
                    "total_ios": p.total_ios(),
                    "published": p.published,
                    "targets": p.targets,
                    "assumptions": p.assumptions,
                    "streams": p.streams.iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
                })
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&all)?)?;
        return Ok(());
    }
    for (name, _) in synth::BUILTIN {
        let p = synth::builtin(name).expect("built-in");
        outln!("{name}: {}", p.title)?;
        outln!("  source: {}", p.source)?;
        outln!("  I/Os at scale 1: {}", p.total_ios())?;
        for f in &p.published {
            let rel = match f.relation.as_str() {
                "approx" => " (approximate)",
                "gt" => " (lower bound)",
                "range" => " (range)",
                _ => "",
            };
            outln!("  published {:<12} {}{rel}", f.metric, f.text)?;
        }
        if args.verbose {
            for a in &p.assumptions {
                outln!("  assumes: {a}")?;
            }
            let names: Vec<&str> = p.streams.iter().map(|s| s.name.as_str()).collect();
            outln!("  streams: {}", names.join(", "))?;
        }
        outln!()?;
    }
    if !args.verbose {
        outln!("(--verbose prints each profile's assumptions and streams)")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_small_a_footprint_is_a_user_error_naming_capacity() {
        let e = synth_error(SynthError::FootprintTooSmall {
            profile: "heavy-2011".into(),
            stream: "system".into(),
            bytes: 4096,
        });
        let u = e.downcast_ref::<UserError>().expect("a user error");
        assert_eq!(u.hint.as_deref(), Some("give a larger --capacity"));
    }
}
