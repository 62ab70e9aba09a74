//! Exporters: fio iolog v3 and storbench CSV, streaming from a Parquet trace.

use super::csv::{quote, HEADER};
use crate::error::TraceError;
use crate::model::Op;
use crate::store::TraceReader;
use std::io::{BufWriter, Write};
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    FioIologV3,
    Csv,
}

impl ExportFormat {
    pub fn parse(s: &str) -> Option<ExportFormat> {
        match s {
            "fio-iolog-v3" => Some(ExportFormat::FioIologV3),
            "csv" => Some(ExportFormat::Csv),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct ExportOptions {
    /// fio iolog: the file name every I/O goes to (default: the record's device name,
    /// or `storbench.dat` when it has none).
    pub filename: Option<String>,
}

pub const DEFAULT_FIO_FILE: &str = "storbench.dat";

/// Exports `input` (Parquet) to `output`; returns the number of records written.
pub fn export(
    input: &Path,
    output: &Path,
    format: ExportFormat,
    opts: &ExportOptions,
) -> Result<u64, TraceError> {
    let mut reader = TraceReader::open(input)?;
    // Written whole or not at all (crate::atomic): a full disk leaves no torn export.
    let mut out = crate::atomic::AtomicFile::create(output)
        .map_err(|e| TraceError::io(output, "create", e))?;
    let mut w = BufWriter::with_capacity(1 << 20, out.file());
    let werr = |e| TraceError::io(output, "write", e);
    let mut n = 0u64;
    let mut batch = Vec::new();
    match format {
        ExportFormat::Csv => {
            writeln!(w, "{HEADER}").map_err(werr)?;
            let mut line = String::with_capacity(128);
            while reader.next_batch(&mut batch)? {
                for r in &batch {
                    line.clear();
                    use std::fmt::Write as _;
                    let _ = write!(line, "{},", r.issue_ns);
                    if let Some(c) = r.complete_ns {
                        let _ = write!(line, "{c}");
                    }
                    let _ = write!(
                        line,
                        ",{},{},{},",
                        r.offset_bytes,
                        r.len_bytes,
                        r.op.as_str()
                    );
                    if let Some(s) = r.stream {
                        line.push_str(&quote(
                            reader.streams().get(s.0).expect("stream id from reader"),
                        ));
                    }
                    line.push(',');
                    if let Some(d) = r.device {
                        line.push_str(&quote(
                            reader.devices().get(d.0).expect("device id from reader"),
                        ));
                    }
                    line.push('\n');
                    w.write_all(line.as_bytes()).map_err(werr)?;
                    n += 1;
                }
            }
        }
        ExportFormat::FioIologV3 => {
            // Names seen so far get their add/open when first used (fio needs them
            // before the first I/O on the file); all are closed at the end.
            let mut opened: Vec<String> = Vec::new();
            let mut last_ts_us = 0u64;
            writeln!(w, "fio version 3 iolog").map_err(werr)?;
            while reader.next_batch(&mut batch)? {
                for r in &batch {
                    let name: &str = match (&opts.filename, r.device) {
                        (Some(f), _) => f.as_str(),
                        (None, Some(d)) => {
                            reader.devices().get(d.0).expect("device id from reader")
                        }
                        (None, None) => DEFAULT_FIO_FILE,
                    };
                    if name.is_empty() || name.contains(char::is_whitespace) {
                        return Err(TraceError::Format {
                            path: output.to_path_buf(),
                            message: format!(
                                "fio iolog file names cannot be empty or hold spaces: {name:?}; give --filename"
                            ),
                        });
                    }
                    let ts_us = r.issue_ns / 1000;
                    last_ts_us = last_ts_us.max(ts_us);
                    if !opened.iter().any(|o| o == name) {
                        writeln!(w, "{ts_us} {name} add\n{ts_us} {name} open").map_err(werr)?;
                        opened.push(name.to_owned());
                        assert!(opened.len() <= 1 << 16, "more than 65536 distinct files");
                    }
                    let (action, off, len) = match r.op {
                        Op::Read => ("read", r.offset_bytes, r.len_bytes),
                        Op::Write => ("write", r.offset_bytes, r.len_bytes),
                        Op::Trim => ("trim", r.offset_bytes, r.len_bytes),
                        Op::Flush => ("sync", 0, 0),
                    };
                    writeln!(w, "{ts_us} {name} {action} {off} {len}").map_err(werr)?;
                    n += 1;
                }
            }
            for name in &opened {
                writeln!(w, "{last_ts_us} {name} close").map_err(werr)?;
            }
        }
    }
    w.flush().map_err(werr)?;
    drop(w);
    out.commit().map_err(werr)?;
    Ok(n)
}
