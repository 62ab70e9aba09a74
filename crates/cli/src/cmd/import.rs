//! `storbench import IN... -o OUT.parquet [--format F] [--member NAME] [--device MAJ,MIN]
//! [--device-id N] [--volume N] [--asu N] [--skip-bad-lines]`; IN `-` reads stdin
//! (format given, or detected from the first lines). Inputs may be compressed (gzip,
//! zstd, xz, bzip2) or tar archives; several inputs (per-volume files) make one trace.

use super::out::{out, outln};
use super::UserError;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use storbench_trace::formats::{import_files, import_stream, Format, ImportOptions};
use storbench_trace::TraceError;

#[derive(clap::Args)]
pub struct Args {
    /// Traces to import into one (text: fio iolog, ftrace, blkparse, MSR, Alibaba,
    /// CloudPhysics vscsi CSV, Tencent, SPC, storbench CSV, MQSim; plain, gzip, zstd, xz
    /// or bzip2, or a tar archive of them); `-` reads stdin (e.g. `zcat t.csv.gz | ...`)
    #[arg(required = true, num_args = 1..)]
    pub input: Vec<PathBuf>,
    /// Parquet trace to write
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Input format [default: detected from content]
    #[arg(long, value_parser = format_parser())]
    pub format: Option<Format>,
    /// ftrace/blkparse: keep only this device, as MAJ,MIN (e.g. 8,16)
    #[arg(long, value_name = "MAJ,MIN")]
    pub device: Option<String>,
    /// Alibaba: keep only this device_id
    #[arg(long = "device-id")]
    pub device_id: Option<u64>,
    /// Tencent CBS: keep only this volume id
    #[arg(long)]
    pub volume: Option<u64>,
    /// SPC: keep only this ASU
    #[arg(long)]
    pub asu: Option<u64>,
    /// Tar archives: import only this member (its path in the archive or its file
    /// name; default: every member, as one trace)
    #[arg(long, value_name = "NAME")]
    pub member: Option<String>,
    /// Count and skip malformed lines instead of stopping at the first
    #[arg(long = "skip-bad-lines")]
    pub skip_bad_lines: bool,
    /// Replace an existing file storbench did not write (never one of the inputs)
    #[arg(long)]
    pub overwrite: bool,
    /// No progress bar
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

/// Maps bad-input errors to user errors (exit status 2) with a hint: the error's own
/// when it has one (an archive, a Parquet file, a truncated download, a missing tar
/// member), else `hint`.
pub fn user_error(e: TraceError, hint: &str) -> anyhow::Error {
    match e {
        TraceError::Parse { .. }
        | TraceError::Format { .. }
        | TraceError::Schema { .. }
        | TraceError::Input { .. } => anyhow::Error::new(UserError {
            message: e.to_string(),
            hint: Some(e.hint().unwrap_or(hint).to_owned()),
        }),
        other => anyhow::Error::new(other),
    }
}

/// [`user_error`] for a trace the user gave to read (characterize, export, replay, bench).
pub fn trace_input_error(e: TraceError) -> anyhow::Error {
    // A trace that is not Parquet, corrupt (a page checksum, a footer) or holds a bad
    // value is the user's input (exit 2); only failing to read it (or to write an
    // output: a full disk under a Parquet writer) is an I/O failure.
    if matches!(e, TraceError::Io { .. }) || storbench_report::io_cause(&e).is_some() {
        return anyhow::Error::new(e);
    }
    let hint = e
        .hint()
        .unwrap_or("is the input a storbench Parquet trace? (storbench import makes one)")
        .to_owned();
    anyhow::Error::new(UserError {
        message: e.to_string(),
        hint: Some(hint),
    })
}

/// `--format`: the trace crate's format names, listed for help and completions.
fn format_parser() -> impl clap::builder::TypedValueParser<Value = Format> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Format::all().map(Format::name))
        .map(|name| Format::parse(&name).expect("a listed name"))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let format = args.format;
    let device = match &args.device {
        None => None,
        Some(d) => {
            let parsed = d
                .split_once(',')
                .and_then(|(a, b)| Some((a.trim().parse().ok()?, b.trim().parse().ok()?)));
            Some(parsed.ok_or_else(|| UserError {
                message: format!("--device {d:?} is not MAJ,MIN"),
                hint: Some("e.g. --device 8,16 (see `ls -l /dev/sdb` or /sys/block/*/dev)".into()),
            })?)
        }
    };
    let opts = ImportOptions {
        format,
        device,
        device_id: args.device_id,
        volume: args.volume,
        asu: args.asu,
        member: args.member.clone(),
        skip_bad_lines: args.skip_bad_lines,
        progress: Some(Arc::new(AtomicU64::new(0))),
        ..Default::default()
    };
    let stdin = args.input.iter().any(|p| p.as_os_str() == "-");
    let mut output = storbench_trace::atomic::Rule::overwrite(args.overwrite);
    if stdin {
        // `import - -o x.csv < x.csv`: stdin is an input too.
        output = output.input(std::io::stdin())?;
    }
    let opts = ImportOptions { output, ..opts };
    if stdin && args.input.len() > 1 {
        return Err(UserError {
            message: "`-` (stdin) cannot be given with other inputs".into(),
            hint: Some(
                "give the files, or join them on stdin (`cat a b | storbench import -`)".into(),
            ),
        }
        .into());
    }
    // Progress bar on a terminal (indicatif hides it when stderr is not one) against
    // the inputs' sizes as stored (compressed bytes for compressed input); stdin has no
    // known length, so it shows bytes and rate only.
    let total = if stdin {
        None
    } else {
        Some(
            args.input
                .iter()
                .map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
                .sum(),
        )
    };
    let bar =
        indicatif::ProgressBar::with_draw_target(total, super::values::draw_target(args.quiet));
    let template = if stdin {
        "importing stdin {spinner} {bytes} {bytes_per_sec}"
    } else {
        "importing {bar:40} {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}"
    };
    bar.set_style(indicatif::ProgressStyle::with_template(template).expect("static template"));
    let done = Arc::new(AtomicBool::new(false));
    let counter = opts.progress.clone().expect("set above");
    let result = std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                bar.set_position(counter.load(Ordering::Relaxed));
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        });
        let r = if stdin {
            import_stream(
                std::path::Path::new("<stdin>"),
                Box::new(std::io::stdin()),
                &args.output,
                &opts,
            )
        } else {
            import_files(&args.input, &args.output, &opts)
        };
        done.store(true, Ordering::Relaxed);
        r
    });
    bar.finish_and_clear();
    let summary = result.map_err(|e| {
        let hint = match &e {
            // A malformed line: the file, or the format detection, is wrong.
            TraceError::Parse { .. } => {
                "fix the input, give --format if detection guessed wrong, or pass --skip-bad-lines to count and skip malformed lines".to_owned()
            }
            _ => format!("give --format, one of: {}", Format::names()),
        };
        user_error(e, &hint)
    })?;
    out!("{}", summary.to_text())?;
    outln!("wrote {}", args.output.display())?;
    Ok(())
}
