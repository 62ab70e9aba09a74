//! `storbench export IN.parquet --format fio-iolog-v3|csv -o OUT [--filename NAME]
//! [--span SIZE [--align BYTES]]`

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
    /// Fold every I/O onto the first SIZE bytes (1g, 512m; k, m, g, t are powers of
    /// 1024) as replay --span does, so the log replays on a file of that size
    #[arg(long, value_name = "SIZE")]
    pub span: Option<String>,
    /// With --span: align I/O to this block size, as replay aligns to the target's
    /// logical block (512, 4k)
    #[arg(long, value_name = "BYTES", default_value = "512", requires = "span")]
    pub align: String,
}

fn size(flag: &str, s: &str) -> anyhow::Result<u64> {
    storbench_workload::generator::parse_size(s).map_err(|e| {
        UserError {
            message: format!("{flag}: {e}"),
            hint: Some("e.g. 1g, 512m, 4k (powers of 1024)".into()),
        }
        .into()
    })
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let format = ExportFormat::parse(&args.format).ok_or_else(|| UserError {
        message: format!("unknown export format {:?}", args.format),
        hint: Some("one of: fio-iolog-v3, csv".into()),
    })?;
    let align_bytes = size("--align", &args.align)?;
    let span_bytes = match &args.span {
        None => None,
        Some(s) => {
            let span = size("--span", s)?;
            if align_bytes == 0 || span < align_bytes || !span.is_multiple_of(align_bytes) {
                return Err(UserError {
                    message: format!(
                        "--span {s} is not a whole, non-zero number of {align_bytes}-byte blocks"
                    ),
                    hint: Some("give a span that is a multiple of --align".into()),
                }
                .into());
            }
            Some(span)
        }
    };
    let opts = ExportOptions {
        filename: args.filename,
        span_bytes,
        align_bytes,
    };
    let sum = export(&args.input, &args.output, format, &opts)
        .map_err(super::import::trace_input_error)?;
    println!(
        "exported {} records to {}",
        sum.records,
        args.output.display()
    );
    if let Some(span) = span_bytes {
        println!(
            "folded {} records onto the first {span} bytes; widened {} to {align_bytes}-byte blocks",
            sum.folded, sum.aligned
        );
    }
    Ok(())
}
