//! `storbench export IN.parquet --format fio-iolog-v3|csv -o OUT [--filename NAME]`

use super::UserError;
use std::path::PathBuf;
use storbench_trace::formats::export::{export, ExportFormat, ExportOptions};

#[derive(clap::Args)]
pub struct Args {
    /// Parquet trace to export
    pub input: PathBuf,
    /// fio-iolog-v3 or csv
    #[arg(long)]
    pub format: String,
    /// File to write
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// fio iolog: file name for every I/O (default: each record's device name)
    #[arg(long)]
    pub filename: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let format = ExportFormat::parse(&args.format).ok_or_else(|| UserError {
        message: format!("unknown export format {:?}", args.format),
        hint: Some("one of: fio-iolog-v3, csv".into()),
    })?;
    let opts = ExportOptions {
        filename: args.filename,
    };
    let n = export(&args.input, &args.output, format, &opts)
        .map_err(super::import::trace_input_error)?;
    println!("exported {n} records to {}", args.output.display());
    Ok(())
}
