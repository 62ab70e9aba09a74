//! `storbench import IN -o OUT.parquet [--format F] [--device MAJ,MIN] [--device-id N]
//! [--volume N] [--skip-bad-lines]`; IN `-` reads stdin (format given, or detected from
//! the first lines).

use super::UserError;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use storbench_trace::formats::{import, import_stream, Format, ImportOptions};
use storbench_trace::TraceError;

#[derive(clap::Args)]
pub struct Args {
    /// Trace to import (text: fio iolog, ftrace, blkparse, MSR, Alibaba, Tencent, SPC,
    /// storbench CSV); `-` reads stdin (e.g. `cat /sys/kernel/tracing/trace_pipe | ...`)
    pub input: PathBuf,
    /// Parquet trace to write
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Input format (default: detected from content): fio-iolog-v2, fio-iolog-v3, ftrace,
    /// blkparse, msr, alibaba, tencent, spc, csv
    #[arg(long)]
    pub format: Option<String>,
    /// ftrace/blkparse: keep only this device, as MAJ,MIN (e.g. 8,16)
    #[arg(long, value_name = "MAJ,MIN")]
    pub device: Option<String>,
    /// Alibaba: keep only this device_id
    #[arg(long = "device-id")]
    pub device_id: Option<u64>,
    /// Tencent CBS: keep only this volume id
    #[arg(long)]
    pub volume: Option<u64>,
    /// Count and skip malformed lines instead of stopping at the first
    #[arg(long = "skip-bad-lines")]
    pub skip_bad_lines: bool,
}

/// Maps bad-input errors to user errors (exit status 2) with a hint.
pub fn user_error(e: TraceError, hint: &str) -> anyhow::Error {
    match e {
        TraceError::Parse { .. } | TraceError::Format { .. } | TraceError::Schema { .. } => {
            anyhow::Error::new(UserError {
                message: e.to_string(),
                hint: Some(hint.to_owned()),
            })
        }
        other => anyhow::Error::new(other),
    }
}

/// [`user_error`] for a trace the user gave to read (characterize, export, replay, bench).
pub fn trace_input_error(e: TraceError) -> anyhow::Error {
    // A trace that is not Parquet, corrupt (a page checksum, a footer) or holds a bad
    // value is the user's input (exit 2); only failing to read it is an I/O failure.
    if matches!(e, TraceError::Io { .. }) {
        return anyhow::Error::new(e);
    }
    anyhow::Error::new(UserError {
        message: e.to_string(),
        hint: Some("is the input a storbench Parquet trace? (storbench import makes one)".into()),
    })
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let format = match &args.format {
        None => None,
        Some(f) => Some(Format::parse(f).ok_or_else(|| UserError {
            message: format!("unknown trace format {f:?}"),
            hint: Some(format!("one of: {}", Format::names())),
        })?),
    };
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
        skip_bad_lines: args.skip_bad_lines,
        progress: Some(Arc::new(AtomicU64::new(0))),
    };
    let stdin = args.input.as_os_str() == "-";
    // Progress bar on a terminal (indicatif hides it when stderr is not one); stdin has
    // no known length, so it shows bytes and rate only.
    let total = if stdin {
        None
    } else {
        Some(std::fs::metadata(&args.input).map(|m| m.len()).unwrap_or(0))
    };
    let bar =
        indicatif::ProgressBar::with_draw_target(total, indicatif::ProgressDrawTarget::stderr());
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
            import(&args.input, &args.output, &opts)
        };
        done.store(true, Ordering::Relaxed);
        r
    });
    bar.finish_and_clear();
    let summary = result.map_err(|e| {
        user_error(
            e,
            "fix the input, give --format if detection guessed wrong, or pass --skip-bad-lines to count and skip malformed lines",
        )
    })?;
    print!("{}", summary.to_text());
    println!("wrote {}", args.output.display());
    Ok(())
}
