//! Exporters: fio iolog v3 and storbench CSV, streaming from a Parquet trace; with a
//! span, offsets are folded onto it the way replay folds them ([`fold_align`]), so a
//! trace of a 2 TB volume replays on a small file.

use super::csv::{quote, HEADER};
use crate::error::TraceError;
use crate::model::{IoRecord, Op};
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

#[derive(Clone, Debug)]
pub struct ExportOptions {
    /// fio iolog: the file name every I/O goes to (default: the record's device name,
    /// or `storbench.dat` when it has none).
    pub filename: Option<String>,
    /// Fold every I/O onto `[0, span)` as replay does (None: offsets as recorded).
    pub span_bytes: Option<u64>,
    /// Block size I/O is aligned to when folding (replay aligns to the target's
    /// logical block size).
    pub align_bytes: u64,
    /// What the output may replace (`--overwrite`); the input trace is added to its
    /// inputs.
    pub output: crate::atomic::Rule,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            filename: None,
            span_bytes: None,
            align_bytes: 512,
            output: crate::atomic::Rule::default(),
        }
    }
}

/// What an export wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportSummary {
    pub records: u64,
    /// Records whose range was moved onto the span (or cut to it).
    pub folded: u64,
    /// Records whose range was widened to the block size.
    pub aligned: u64,
}

/// Folds `[offset, offset+len)` onto `[0, span)` and aligns it to `block`, the one rule
/// replay (storbench-engine) and export share: the range is widened to whole blocks, cut to
/// the span when longer, and its start taken modulo the span (then moved back so it
/// ends inside it) when it would end past the span. Returns (offset, len, folded,
/// aligned).
pub fn fold_align(offset: u64, len: u64, span: u64, block: u64) -> (u64, u64, bool, bool) {
    assert!(block > 0 && span >= block && span.is_multiple_of(block));
    let mut aligned = false;
    let mut start = offset;
    let mut end = offset.saturating_add(len);
    if !start.is_multiple_of(block) || !end.is_multiple_of(block) {
        aligned = true;
        start = start / block * block;
        end = end.div_ceil(block) * block;
    }
    let mut l = end - start;
    let mut folded = false;
    if l > span {
        l = span;
        folded = true;
    }
    if start + l > span {
        folded = true;
        start %= span;
        if start + l > span {
            start = span - l;
        }
    }
    debug_assert!(start.is_multiple_of(block) && l.is_multiple_of(block) && start + l <= span);
    (start, l, folded, aligned)
}

pub const DEFAULT_FIO_FILE: &str = "storbench.dat";

/// Exports `input` (Parquet) to `output`.
pub fn export(
    input: &Path,
    output: &Path,
    format: ExportFormat,
    opts: &ExportOptions,
) -> Result<ExportSummary, TraceError> {
    check_span(output, opts)?;
    let mut reader = TraceReader::open(input)?;
    let mut rule = opts.output.clone();
    rule.inputs.push(reader.file_key());
    // Written whole or not at all (crate::atomic): a full disk leaves no torn export.
    let mut out = crate::atomic::AtomicFile::create_with(output, &rule)
        .map_err(|e| TraceError::io(output, "create", e))?;
    let mut w = BufWriter::with_capacity(1 << 20, out.file());
    let mut sum = ExportSummary::default();
    match format {
        ExportFormat::Csv => write_csv(&mut reader, &mut w, output, opts, &mut sum)?,
        ExportFormat::FioIologV3 => write_fio(&mut reader, &mut w, output, opts, &mut sum)?,
    }
    let werr = |e| TraceError::io(output, "write", e);
    w.flush().map_err(werr)?;
    drop(w);
    out.commit().map_err(werr)?;
    Ok(sum)
}

/// A span to fold onto must be a whole, non-zero number of blocks.
fn check_span(output: &Path, opts: &ExportOptions) -> Result<(), TraceError> {
    let Some(span) = opts.span_bytes else {
        return Ok(());
    };
    let b = opts.align_bytes;
    if b == 0 || span < b || !span.is_multiple_of(b) {
        return Err(TraceError::Format {
            path: output.to_path_buf(),
            message: format!(
                "the span ({span} bytes) must be a whole, non-zero number of {b}-byte blocks"
            ),
        });
    }
    Ok(())
}

/// Folds a batch in place onto the span, if there is one (flushes carry no range).
fn fold_batch(batch: &mut [IoRecord], opts: &ExportOptions, sum: &mut ExportSummary) {
    let Some(span) = opts.span_bytes else { return };
    for r in batch.iter_mut().filter(|r| r.op != Op::Flush) {
        let (o, l, folded, aligned) =
            fold_align(r.offset_bytes, r.len_bytes, span, opts.align_bytes);
        r.offset_bytes = o;
        r.len_bytes = l;
        sum.folded += u64::from(folded);
        sum.aligned += u64::from(aligned);
    }
}

/// Writes every record as a line of storbench CSV.
fn write_csv(
    reader: &mut TraceReader,
    w: &mut impl Write,
    output: &Path,
    opts: &ExportOptions,
    sum: &mut ExportSummary,
) -> Result<(), TraceError> {
    let werr = |e| TraceError::io(output, "write", e);
    writeln!(w, "{HEADER}").map_err(werr)?;
    let mut batch = Vec::new();
    let mut line = String::with_capacity(128);
    while reader.next_batch(&mut batch)? {
        fold_batch(&mut batch, opts, sum);
        for r in &batch {
            csv_line(&mut line, r, reader);
            w.write_all(line.as_bytes()).map_err(werr)?;
            sum.records += 1;
        }
    }
    Ok(())
}

/// `line` set to record `r`'s CSV line (names quoted, newline included).
fn csv_line(line: &mut String, r: &IoRecord, reader: &TraceReader) {
    use std::fmt::Write as _;
    line.clear();
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
}

/// Writes a fio iolog v3: each file added and opened before its first I/O, all closed
/// at the end.
fn write_fio(
    reader: &mut TraceReader,
    w: &mut impl Write,
    output: &Path,
    opts: &ExportOptions,
    sum: &mut ExportSummary,
) -> Result<(), TraceError> {
    let werr = |e| TraceError::io(output, "write", e);
    // Names seen so far get their add/open when first used (fio needs them before the
    // first I/O on the file); all are closed at the end.
    let mut opened: Vec<String> = Vec::new();
    let mut last_ts_us = 0u64;
    writeln!(w, "fio version 3 iolog").map_err(werr)?;
    let mut batch = Vec::new();
    while reader.next_batch(&mut batch)? {
        fold_batch(&mut batch, opts, sum);
        for r in &batch {
            let name = fio_file_name(r, reader, output, opts)?;
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
            sum.records += 1;
        }
    }
    for name in &opened {
        writeln!(w, "{last_ts_us} {name} close").map_err(werr)?;
    }
    Ok(())
}

/// The file a record's I/O goes to in a fio iolog: `--filename`, else the record's
/// device name, else [`DEFAULT_FIO_FILE`]; an error if fio could not read it back.
fn fio_file_name<'a>(
    r: &IoRecord,
    reader: &'a TraceReader,
    output: &Path,
    opts: &'a ExportOptions,
) -> Result<&'a str, TraceError> {
    let name: &str = match (&opts.filename, r.device) {
        (Some(f), _) => f.as_str(),
        (None, Some(d)) => reader.devices().get(d.0).expect("device id from reader"),
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
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one fold-and-align rule replay and export share.
    #[test]
    fn folds_and_aligns_as_replay() {
        assert_eq!(
            fold_align(4096, 4096, 1 << 20, 512),
            (4096, 4096, false, false)
        );
        assert_eq!(fold_align(100, 1000, 1 << 20, 512), (0, 1536, false, true));
        assert_eq!(
            fold_align((1 << 20) + 8192, 4096, 1 << 20, 512),
            (8192, 4096, true, false)
        );
        // Crossing the end after the modulo: moved back to end at the span.
        assert_eq!(
            fold_align((1 << 20) - 4096, 8192, 1 << 20, 512),
            ((1 << 20) - 8192, 8192, true, false)
        );
        // Straddling the end after the modulo (replay's case): moved back to fit.
        assert_eq!(
            fold_align((2 << 20) - 1024, 4096, 1 << 20, 512),
            ((1 << 20) - 4096, 4096, true, false)
        );
        // Longer than the span: cut to it.
        assert_eq!(
            fold_align(0, 4 << 20, 1 << 20, 512),
            (0, 1 << 20, true, false)
        );
        // Far beyond: 1.76 TB onto 1 GiB.
        let (o, l, f, _) = fold_align(1_760_000_000_000, 65536, 1 << 30, 4096);
        assert!(f && o + l <= 1 << 30 && o.is_multiple_of(4096));
        assert_eq!(o, 1_760_000_000_000 % (1 << 30) / 4096 * 4096);
    }
}
