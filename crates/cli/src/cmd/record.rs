//! `storbench record`: record the block I/O of one device through tracefs into a
//! Parquet trace.
//!
//! Streams are named `comm:pid` (the issuing task's name and thread id as the
//! `block_rq_issue` event saw them; I/O issued from a kernel worker is named after the
//! worker, e.g. `kworker/0:1H:44`). The device is named `major,minor`. Times are ns
//! from the moment tracing was switched on, so idle time stays in the trace.

use super::out::{errln, outln};
use super::UserError;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use storbench_record::sink::{trace_meta, TraceSink};
use storbench_record::{
    device_info, DeviceInfo, RecordError, RecordOptions, RecordSummary, Recorder,
};
use storbench_trace::{Op, TraceWriter};

#[derive(clap::Args)]
pub struct Args {
    /// Block device to record: a whole disk (/dev/nvme0n1, /dev/loop0) or a partition
    /// (its requests, offsets from its start, and every flush of its disk)
    #[arg(long, required_unless_present = "cleanup")]
    pub device: Option<PathBuf>,
    /// Stop after this long (250us, 500ms, 60s, 5min, 1h; a bare number is seconds).
    /// Without it, record until Ctrl-C or SIGTERM
    #[arg(long, visible_alias = "duration", value_name = "TIME", value_parser = positive_duration)]
    pub time: Option<Duration>,
    /// Output trace (Parquet); it appears only when the recording ends
    #[arg(short, long, required_unless_present = "cleanup")]
    pub output: Option<PathBuf>,
    /// Replace an existing file storbench did not write
    #[arg(long, conflicts_with = "cleanup")]
    pub overwrite: bool,
    /// Kernel ring buffer per CPU, KiB (raise it if events are lost)
    #[arg(long, default_value_t = 16384)]
    pub buffer_kib: u32,
    /// Only remove tracing instances left by recorders that were killed (kill -9,
    /// a crash): their block events stay on and their ring buffers allocated. A
    /// recording does this itself when it starts, and says so
    #[arg(long, conflicts_with_all = ["device", "output", "time"])]
    pub cleanup: bool,
    /// No progress bar
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

/// A recording length: a positive duration.
fn positive_duration(text: &str) -> Result<Duration, storbench_suite::args::ValueError> {
    match super::values::duration(text)? {
        d if d.is_zero() => Err(storbench_suite::args::ValueError::NoWork(
            "a recording of no time records nothing; give e.g. 60s",
        )),
        d => Ok(d),
    }
}

fn user_error(e: RecordError) -> anyhow::Error {
    let hint = match &e {
        RecordError::NotRoot => {
            Some("tracefs block events need root: `sudo storbench record ...`".to_owned())
        }
        RecordError::NotBlockDevice { .. } | RecordError::NoSuchDevice { .. } => {
            Some("pass a block device such as /dev/sdb or /dev/loop0 (see lsblk)".to_owned())
        }
        _ => None,
    };
    match hint {
        Some(hint) => anyhow::Error::new(UserError {
            message: e.to_string(),
            hint: Some(hint),
        }),
        None => anyhow::Error::new(e),
    }
}

fn run_cleanup() -> anyhow::Result<()> {
    if !storbench_record::tracefs::is_root() {
        return Err(user_error(RecordError::NotRoot));
    }
    let lines = storbench_record::tracefs::cleanup().map_err(user_error)?;
    if lines.is_empty() {
        outln!("no tracing instance left by a killed recorder: nothing to clean up")?;
    }
    for l in lines {
        outln!("{l}")?;
    }
    Ok(())
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.cleanup {
        return run_cleanup();
    }
    let (Some(device_path), Some(output)) = (args.device.clone(), args.output.clone()) else {
        unreachable!("clap requires --device and --output without --cleanup");
    };
    let quiet = args.quiet;
    let rule = storbench_trace::atomic::Rule::overwrite(args.overwrite);
    let args = Resolved {
        device: device_path,
        output,
        duration: args.time,
        buffer_kib: args.buffer_kib,
    };
    if args.buffer_kib == 0 {
        return Err(UserError {
            message: "--buffer-kib must be at least 1".into(),
            hint: None,
        }
        .into());
    }
    let device = device_info(&args.device).map_err(user_error)?;
    if !storbench_record::tracefs::is_root() {
        return Err(user_error(RecordError::NotRoot));
    }
    // The trace appears at its path only when it is finished (a temporary file until
    // then, removed if recording fails): an earlier trace at that path stays whole.
    let writer = TraceWriter::create_with(&args.output, &trace_meta(&device), &rule)
        .with_context(|| format!("creating {}", args.output.display()))?;

    let stop = stop_on_signals()?;

    let opts = RecordOptions {
        duration: args.duration,
        buffer_kib_per_cpu: args.buffer_kib,
        ..RecordOptions::default()
    };
    let recorder = Recorder::start(device.clone(), opts).map_err(user_error)?;
    for line in recorder.cleaned_up() {
        errln!("note: {line}");
    }
    let mut sink = TraceSink::new(writer, &device, recorder.start_mono_ns());

    let bar = progress_bar(args.duration, quiet);
    announce(&args, &device);

    let summary = recorder.run(&stop, |io| {
        let rec = sink.write(io)?;
        if sink.rows() % 1024 == 1 {
            bar.set_message(format!("{} I/Os", sink.rows()));
            bar.set_position((rec.issue_ns / 1_000_000_000).min(bar.length().unwrap_or(u64::MAX)));
        }
        Ok(())
    });
    bar.finish_and_clear();
    let summary = summary.map_err(user_error)?;
    let (counts, bytes) = (sink.counts, sink.bytes);
    let rows = sink
        .finish(&summary)
        .with_context(|| format!("finishing {}", args.output.display()))?;
    assert_eq!(
        rows, summary.ios_written,
        "rows written differ from I/Os recorded"
    );
    eprint!("{}", summary_text(&summary, &counts, &bytes));
    Ok(())
}

/// A flag that Ctrl-C, SIGTERM, SIGHUP and SIGQUIT (Ctrl-\) set; the recording loop
/// sees it within one poll.
fn stop_on_signals() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGQUIT,
    ] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).context("installing signal handler")?;
    }
    Ok(stop)
}

/// Seconds of a timed recording, or a spinner without a time; hidden when stderr is
/// not a terminal or with --quiet.
fn progress_bar(duration: Option<Duration>, quiet: bool) -> ProgressBar {
    if !std::io::stderr().is_terminal() || quiet {
        return ProgressBar::hidden();
    }
    let b = match duration {
        Some(d) => ProgressBar::new(d.as_secs().max(1)).with_style(
            ProgressStyle::with_template("recording {wide_bar} {pos}/{len}s, ETA {eta}  {msg}")
                .expect("valid template"),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{spinner} recording {elapsed}  {msg}  (Ctrl-C stops)")
                .expect("valid template"),
        ),
    };
    b.enable_steady_tick(Duration::from_millis(200));
    b
}

/// The line that says what is recorded, from where (a partition: of which disk), and
/// into which file.
fn announce(args: &Resolved, device: &DeviceInfo) {
    let part = device.partition.as_ref().map_or(String::new(), |p| {
        format!(
            ", partition of {} from byte {}",
            p.disk.display(),
            p.start_sector * 512
        )
    });
    errln!(
        "recording {} ({}{part}) into {}",
        args.device.display(),
        device.name(),
        args.output.display()
    );
}

/// The arguments of a recording (not `--cleanup`).
struct Resolved {
    device: PathBuf,
    output: PathBuf,
    duration: Option<Duration>,
    buffer_kib: u32,
}

/// What a recording saw, as printed at its end (one line each).
fn summary_text(s: &RecordSummary, counts: &[u64; 4], bytes: &[u64; 4]) -> String {
    let mut lines = Vec::new();
    let secs = s.duration_ns() as f64 / 1e9;
    lines.push(format!(
        "recorded {} I/Os in {secs:.1} s ({} events, {} pages from {} CPUs)",
        s.ios_written, s.events_decoded, s.pages_read, s.cpus
    ));
    lines.push(format!(
        "  recorder CPU {:.3} s, {:.0} ns per event",
        s.process_cpu_ns as f64 / 1e9,
        s.process_cpu_ns as f64 / s.events_decoded.max(1) as f64
    ));
    for op in Op::ALL {
        let i = op.index();
        if counts[i] > 0 {
            lines.push(format!(
                "  {:<6} {:>10} I/Os {:>14} bytes",
                op.as_str(),
                counts[i],
                bytes[i]
            ));
        }
    }
    let lost = s.lost_events_kernel() + s.lost_events_pages;
    if lost > 0 || s.lost_marks_without_count > 0 {
        lines.push(format!(
            "warning: the kernel lost {lost} events{} (raise --buffer-kib); their I/Os are missing or incomplete",
            if s.lost_marks_without_count > 0 { " or more" } else { "" }
        ));
    } else {
        lines.push("  lost events: 0".into());
    }
    if s.pair.incomplete > 0 {
        lines.push(format!(
            "  {} I/Os without completion (in flight at the end or timed out)",
            s.pair.incomplete
        ));
    }
    if s.pair.unmatched_completes > 0 {
        lines.push(format!(
            "  {} completions without their issue (issued before recording began)",
            s.pair.unmatched_completes
        ));
    }
    if s.pair.write_zeroes > 0 {
        lines.push(format!(
            "  {} write-zeroes requests ({} bytes) left out: the trace has no write-zeroes op",
            s.pair.write_zeroes, s.pair.write_zeroes_bytes
        ));
    }
    let other = s.pair.skipped_other - s.pair.write_zeroes;
    if other > 0 {
        lines.push(format!(
            "  {other} requests without data or of other ops (zone, driver commands) left out"
        ));
    }
    if s.pair.errors > 0 {
        lines.push(format!("  {} I/Os completed with an error", s.pair.errors));
    }
    if s.page_errors > 0 {
        lines.push(format!(
            "warning: {} ring buffer pages did not decode cleanly",
            s.page_errors
        ));
    }
    lines.push(String::new());
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_warns_of_lost_events_and_names_what_was_left_out() {
        let mut s = RecordSummary {
            end_mono_ns: 2_000_000_000,
            events_decoded: 1000,
            ios_written: 480,
            cpus: 2,
            process_cpu_ns: 500_000,
            ..RecordSummary::default()
        };
        s.pair.incomplete = 3;
        s.pair.unmatched_completes = 2;
        s.pair.skipped_other = 5;
        s.pair.write_zeroes = 4;
        s.pair.write_zeroes_bytes = 4 << 20;
        let counts = [400, 80, 0, 0];
        let bytes = [400 * 4096, 80 * 8192, 0, 0];
        let clean = summary_text(&s, &counts, &bytes);
        assert!(
            clean.starts_with("recorded 480 I/Os in 2.0 s (1000 events"),
            "{clean}"
        );
        assert!(clean.contains("500 ns per event"), "{clean}");
        assert!(clean.contains("lost events: 0"), "{clean}");
        assert!(clean.contains("3 I/Os without completion"), "{clean}");
        assert!(
            clean.contains("2 completions without their issue"),
            "{clean}"
        );
        assert!(
            clean.contains("4 write-zeroes requests (4194304 bytes) left out"),
            "{clean}"
        );
        assert!(
            clean.contains("1 requests without data or of other ops"),
            "{clean}"
        );
        assert!(!clean.contains("warning"), "{clean}");

        s.cpu_stats = vec![
            storbench_record::tracefs::CpuStats {
                dropped_events: 7,
                ..Default::default()
            },
            storbench_record::tracefs::CpuStats {
                overrun: 1,
                ..Default::default()
            },
        ];
        s.lost_events_pages = 2;
        let lossy = summary_text(&s, &counts, &bytes);
        assert!(
            lossy.contains("warning: the kernel lost 10 events (raise --buffer-kib)"),
            "{lossy}"
        );
        assert!(!lossy.contains("lost events: 0"), "{lossy}");
        s.lost_marks_without_count = 1;
        assert!(summary_text(&s, &counts, &bytes).contains("lost 10 events or more"));
    }
}
