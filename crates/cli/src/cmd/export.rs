//! `storbench export IN.parquet --format fio-iolog-v3|csv -o OUT [--filename NAME]
//! [--span SIZE [--align BYTES]]`

use super::out::outln;
use super::UserError;
use std::path::PathBuf;
use storbench_trace::formats::export::{export, ExportFormat, ExportOptions};

#[derive(clap::Args)]
pub struct Args {
    /// Parquet trace to export
    pub input: PathBuf,
    /// Output format
    #[arg(long, value_enum)]
    pub format: FormatArg,
    /// File to write
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// fio iolog: file name for every I/O (default: each record's device name)
    #[arg(long)]
    pub filename: Option<String>,
    /// Fold every I/O onto the first SIZE bytes (1g, 512m; k, m, g, t are powers of
    /// 1024) as replay --span does, so the log replays on a file of that size
    #[arg(long, value_name = "SIZE", value_parser = super::values::size)]
    pub span: Option<u64>,
    /// With --span: align I/O to this block size, as replay aligns to the target's
    /// logical block (512, 4k)
    #[arg(long, value_name = "SIZE", default_value = "512", requires = "span",
        value_parser = super::values::size)]
    pub align: u64,
    /// Replace an existing file storbench did not write (never the input)
    #[arg(long)]
    pub overwrite: bool,
}

/// The export formats, as `--format` spells them.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatArg {
    /// fio's iolog version 3 (replay with `fio --read_iolog`)
    #[value(name = "fio-iolog-v3")]
    FioIologV3,
    /// storbench CSV (one row per I/O, `import --format csv` reads it back)
    Csv,
}

impl From<FormatArg> for ExportFormat {
    fn from(f: FormatArg) -> ExportFormat {
        match f {
            FormatArg::FioIologV3 => ExportFormat::FioIologV3,
            FormatArg::Csv => ExportFormat::Csv,
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let format = ExportFormat::from(args.format);
    let align_bytes = args.align;
    let span_bytes = match args.span {
        None => None,
        Some(span) => {
            if align_bytes == 0 || span < align_bytes || !span.is_multiple_of(align_bytes) {
                return Err(UserError {
                    message: format!(
                        "--span {span} is not a whole, non-zero number of {align_bytes}-byte blocks"
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
        output: storbench_trace::atomic::Rule::overwrite(args.overwrite),
    };
    let sum = export(&args.input, &args.output, format, &opts)
        .map_err(super::import::trace_input_error)?;
    outln!(
        "exported {} records to {}",
        sum.records,
        args.output.display()
    )?;
    if let Some(span) = span_bytes {
        outln!(
            "folded {} records onto the first {span} bytes; widened {} to {align_bytes}-byte blocks",
            sum.folded, sum.aligned
        )?;
    }
    Ok(())
}
