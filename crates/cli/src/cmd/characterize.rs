//! `storbench characterize TRACE [--json]`

use super::out::{out, outln};
use std::path::PathBuf;
use storbench_trace::characterize::characterize_file_with_progress;

#[derive(clap::Args)]
pub struct Args {
    /// Parquet trace (from import, record or synth)
    pub trace: PathBuf,
    /// Print JSON (with schema_version) instead of the table
    #[arg(long)]
    pub json: bool,
    /// No progress bar
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let bar =
        indicatif::ProgressBar::with_draw_target(None, super::values::draw_target(args.quiet));
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "characterizing {bar:40} {human_pos}/{human_len} I/Os ETA {eta}",
        )
        .expect("static template"),
    );
    let c = characterize_file_with_progress(&args.trace, &mut |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    let c = c.map_err(super::import::trace_input_error)?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&c)?)?;
    } else {
        out!("{}", c.to_table())?;
    }
    Ok(())
}
