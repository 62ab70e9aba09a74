//! Importers (one module per public format) and exporters.
//!
//! Every importer reads its input line by line (bounded memory), writes records in
//! issue order into a [`TraceWriter`] and returns an [`ImportSummary`] saying what was
//! dropped or reclassified and why. Grammars: METHODOLOGY section 5.

pub mod alibaba;
pub mod blkparse;
pub mod block;
pub mod csv;
pub mod device_csv;
pub mod export;
pub mod fio;
pub mod ftrace;
pub mod lines;
pub mod msr;
pub mod pair;
pub mod rwbs;
pub mod spc;
pub mod tencent;

use crate::error::TraceError;
use crate::model::{IoRecord, TraceMeta};
use crate::store::TraceWriter;
use lines::LineReader;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::io::Read as _;
use std::path::Path;

/// A text format storbench imports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Format {
    FioIologV2,
    FioIologV3,
    Ftrace,
    Blkparse,
    Msr,
    Alibaba,
    Tencent,
    Spc,
    /// storbench's own CSV (what `export --format csv` writes).
    Csv,
}

impl Format {
    pub const ALL: [Format; 9] = [
        Format::FioIologV2,
        Format::FioIologV3,
        Format::Ftrace,
        Format::Blkparse,
        Format::Msr,
        Format::Alibaba,
        Format::Tencent,
        Format::Spc,
        Format::Csv,
    ];

    /// The name used on the command line and in `storbench.source_format`.
    pub fn name(self) -> &'static str {
        match self {
            Format::FioIologV2 => "fio-iolog-v2",
            Format::FioIologV3 => "fio-iolog-v3",
            Format::Ftrace => "ftrace",
            Format::Blkparse => "blkparse",
            Format::Msr => "msr",
            Format::Alibaba => "alibaba",
            Format::Tencent => "tencent",
            Format::Spc => "spc",
            Format::Csv => "csv",
        }
    }

    pub fn parse(s: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == s)
    }

    /// Names of every format, for help and error hints.
    pub fn names() -> String {
        Format::ALL.map(|f| f.name()).join(", ")
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Options of `storbench import`.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// None: detect from content.
    pub format: Option<Format>,
    /// ftrace / blkparse: keep only this device (major, minor).
    pub device: Option<(u32, u32)>,
    /// Alibaba: keep only this device_id.
    pub device_id: Option<u64>,
    /// Tencent CBS: keep only this volume id.
    pub volume: Option<u64>,
    /// Count and skip malformed lines instead of failing on the first.
    pub skip_bad_lines: bool,
    /// Bytes of input read so far, published every MiB (for a progress bar).
    pub progress: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
}

/// What an import did, beyond the records it wrote.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ImportSummary {
    pub format: String,
    pub lines: u64,
    pub records: u64,
    /// Malformed lines skipped (only with `skip_bad_lines`).
    pub bad_lines_skipped: u64,
    /// The first skipped line's error, to show the user.
    pub first_bad_line: Option<String>,
    /// Reason -> number of events/lines dropped (not in the trace).
    pub dropped: BTreeMap<String, u64>,
    /// Reason -> number of records kept but changed (op reclassified, time clamped, ...).
    pub reclassified: BTreeMap<String, u64>,
    /// Reason -> lines ignored on purpose (comments, other events, headers).
    pub ignored: BTreeMap<String, u64>,
}

impl ImportSummary {
    pub fn note_drop(&mut self, reason: &str) {
        bump(&mut self.dropped, reason);
    }
    pub fn note_reclassify(&mut self, reason: &str) {
        bump(&mut self.reclassified, reason);
    }
    pub fn note_ignore(&mut self, reason: &str) {
        bump(&mut self.ignored, reason);
    }

    /// Human summary, one fact per line.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "imported {} records from {} lines ({})\n",
            self.records, self.lines, self.format
        );
        if self.bad_lines_skipped > 0 {
            s += &format!("skipped {} malformed lines", self.bad_lines_skipped);
            if let Some(f) = &self.first_bad_line {
                s += &format!(" (first: {f})");
            }
            s.push('\n');
        }
        for (title, m) in [
            ("dropped", &self.dropped),
            ("kept, changed", &self.reclassified),
            ("ignored", &self.ignored),
        ] {
            for (reason, n) in m {
                s += &format!("{title}: {n} {reason}\n");
            }
        }
        s
    }

    /// Flat key/values for the trace metadata (`import.*`).
    pub fn to_extra(&self, extra: &mut BTreeMap<String, String>) {
        extra.insert("import.lines".into(), self.lines.to_string());
        extra.insert("import.records".into(), self.records.to_string());
        extra.insert(
            "import.bad_lines_skipped".into(),
            self.bad_lines_skipped.to_string(),
        );
        for (pfx, m) in [
            ("dropped", &self.dropped),
            ("reclassified", &self.reclassified),
        ] {
            for (k, v) in m {
                extra.insert(
                    format!("import.{pfx}.{}", k.replace(' ', "_")),
                    v.to_string(),
                );
            }
        }
    }
}

/// Counts one more `reason`; allocates the key only the first time (this runs per line).
#[inline]
fn bump(m: &mut BTreeMap<String, u64>, reason: &str) {
    match m.get_mut(reason) {
        Some(n) => *n += 1,
        None => {
            m.insert(reason.to_owned(), 1);
        }
    }
}

/// Bound on records held to restore issue order (completions arrive out of issue order).
pub const REORDER_WINDOW: usize = 1 << 18;

/// The sink every importer writes to: restores issue order within [`REORDER_WINDOW`]
/// records, rebases times so the first issue is at 0 when asked, counts records.
///
/// Held records are written in (issue_ns, arrival) order. Most arrive in issue order
/// or a few places off it (completions of a queue of requests), so they are kept in a
/// sorted run, appended at the back or inserted a few places before it; the rest go to
/// a heap. Writing out takes the smaller head of the two: the same order a single heap
/// gives, without a heap's log-time sift of every record.
pub struct Sink<'w> {
    pub writer: &'w mut TraceWriter,
    /// Sorted by (issue_ns, seq).
    run: VecDeque<Held>,
    heap: BinaryHeap<std::cmp::Reverse<Held>>,
    seq: u64,
    last_out_ns: u64,
    pub written: u64,
    pub clamped: u64,
}

/// A record held for ordering: sorted by (issue_ns, seq) only (seq is unique).
#[derive(Clone, Copy, Debug)]
struct Held {
    issue_ns: u64,
    seq: u64,
    rec: IoRecord,
}
impl Held {
    #[inline]
    fn key(&self) -> (u64, u64) {
        (self.issue_ns, self.seq)
    }
}
impl PartialEq for Held {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Held {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key().cmp(&o.key())
    }
}

/// How far before the back of the sorted run a record is inserted; further out of
/// order, it goes to the heap (bounds the shifting per record).
const RUN_INSERT_REACH: usize = 64;

impl<'w> Sink<'w> {
    pub fn new(writer: &'w mut TraceWriter) -> Self {
        Sink {
            writer,
            run: VecDeque::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            last_out_ns: 0,
            written: 0,
            clamped: 0,
        }
    }

    /// Records held (both structures); at most [`REORDER_WINDOW`] between calls.
    #[inline]
    fn held(&self) -> usize {
        self.run.len() + self.heap.len()
    }

    /// Accepts one record (any order within the window).
    pub fn push(&mut self, rec: IoRecord) -> Result<(), TraceError> {
        let h = Held {
            issue_ns: rec.issue_ns,
            seq: self.seq,
            rec,
        };
        self.seq += 1;
        // seq is the largest yet: h goes after every held record issued at or before it.
        let n = self.run.len();
        let mut at = n;
        while at > 0 && n - at < RUN_INSERT_REACH && self.run[at - 1].issue_ns > h.issue_ns {
            at -= 1;
        }
        if at == 0 || self.run[at - 1].issue_ns <= h.issue_ns {
            self.run.insert(at, h);
        } else {
            self.heap.push(std::cmp::Reverse(h));
        }
        if self.held() > REORDER_WINDOW {
            self.pop_one()?;
        }
        debug_assert!(self.held() <= REORDER_WINDOW);
        Ok(())
    }

    /// Writes directly when the caller guarantees order (fast path for sorted formats);
    /// falls back to the window when the record is out of order.
    #[inline]
    pub fn push_ordered(&mut self, rec: IoRecord) -> Result<(), TraceError> {
        if self.held() == 0 && rec.issue_ns >= self.last_out_ns {
            self.last_out_ns = rec.issue_ns;
            self.written += 1;
            return self.writer.write(&rec);
        }
        self.push(rec)
    }

    /// The earliest held record's issue time.
    #[inline]
    fn first_issue_ns(&self) -> Option<u64> {
        match (self.run.front(), self.heap.peek()) {
            (Some(a), Some(std::cmp::Reverse(b))) => Some(a.issue_ns.min(b.issue_ns)),
            (Some(a), None) => Some(a.issue_ns),
            (None, Some(std::cmp::Reverse(b))) => Some(b.issue_ns),
            (None, None) => None,
        }
    }

    /// Writes out every held record issued at or before `t_ns` (the caller knows no
    /// later record will be issued before it): keeps the held records few.
    pub fn release_upto(&mut self, t_ns: u64) -> Result<(), TraceError> {
        while let Some(t) = self.first_issue_ns() {
            if t > t_ns {
                break;
            }
            self.pop_one()?;
        }
        Ok(())
    }

    fn pop_one(&mut self) -> Result<(), TraceError> {
        let from_run = match (self.run.front(), self.heap.peek()) {
            (Some(a), Some(std::cmp::Reverse(b))) => a.key() < b.key(),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return Ok(()),
        };
        let mut rec = if from_run {
            self.run.pop_front().expect("non-empty").rec
        } else {
            self.heap.pop().expect("non-empty").0.rec
        };
        if rec.issue_ns < self.last_out_ns {
            // Later than the window can repair: keep it, at the earliest time allowed.
            let shift = self.last_out_ns - rec.issue_ns;
            rec.issue_ns += shift;
            rec.complete_ns = rec.complete_ns.map(|c| c + shift);
            self.clamped += 1;
        }
        self.last_out_ns = rec.issue_ns;
        self.written += 1;
        self.writer.write(&rec)
    }

    /// Writes everything still held.
    pub fn finish(&mut self) -> Result<(), TraceError> {
        while self.held() > 0 {
            self.pop_one()?;
        }
        Ok(())
    }
}

/// State shared by importers: the line reader, options, summary, error policy.
pub struct Ctx<'a> {
    pub path: &'a Path,
    pub opts: &'a ImportOptions,
    pub summary: ImportSummary,
}

impl Ctx<'_> {
    /// Handles a malformed line: error, or count and skip with `skip_bad_lines`.
    pub fn bad_line(&mut self, e: TraceError) -> Result<(), TraceError> {
        if !self.opts.skip_bad_lines {
            return Err(e);
        }
        self.summary.bad_lines_skipped += 1;
        if self.summary.first_bad_line.is_none() {
            self.summary.first_bad_line = Some(e.to_string());
        }
        Ok(())
    }

    /// The row a line parsed to, or `None` for a malformed line that `skip_bad_lines`
    /// counted and skipped (without it, the error naming file, line and field).
    pub fn row<T>(
        &mut self,
        line: u64,
        parsed: Result<T, (&'static str, String)>,
    ) -> Result<Option<T>, TraceError> {
        match parsed {
            Ok(row) => Ok(Some(row)),
            Err((field, message)) => {
                let e = self.err(line, field, message);
                self.bad_line(e)?;
                Ok(None)
            }
        }
    }

    pub fn err(&self, line: u64, field: &'static str, message: impl Into<String>) -> TraceError {
        TraceError::Parse {
            path: self.path.to_path_buf(),
            line,
            field,
            message: message.into(),
        }
    }
}

/// Lines looked at to detect a format, and the most bytes read for them.
const DETECT_LINES: usize = 64;
const DETECT_BYTES: usize = 1 << 20;

fn undetected(path: &Path) -> TraceError {
    TraceError::Format {
        path: path.to_path_buf(),
        message: format!(
            "cannot tell the trace format from its first lines; give --format (one of {})",
            Format::names()
        ),
    }
}

/// Detects the format from the first non-empty, non-comment lines.
pub fn detect(path: &Path) -> Result<Format, TraceError> {
    let mut lr = LineReader::open(path)?;
    let mut sample: Vec<String> = Vec::new();
    while sample.len() < DETECT_LINES {
        let Some(line) = lr.next_line()? else { break };
        let s = String::from_utf8_lossy(line).trim().to_owned();
        if !s.is_empty() {
            sample.push(s);
        }
    }
    detect_lines(&sample).ok_or_else(|| undetected(path))
}

/// Detects the format of a stream (stdin) from its first lines; returns it with a
/// reader that yields the whole input again (the sample read, then the rest).
pub fn detect_reader(
    name: &Path,
    mut reader: Box<dyn std::io::Read>,
) -> Result<(Format, Box<dyn std::io::Read>), TraceError> {
    let mut buf: Vec<u8> = Vec::with_capacity(64 << 10);
    let mut chunk = vec![0u8; 64 << 10];
    let mut eof = false;
    // Read until enough non-empty lines, the byte bound, or the end.
    loop {
        let complete = match memchr::memrchr(b'\n', &buf) {
            Some(i) => &buf[..i],
            None => &[][..],
        };
        let lines = complete
            .split(|&b| b == b'\n')
            .filter(|l| !l.trim_ascii().is_empty())
            .count();
        if lines >= DETECT_LINES || buf.len() >= DETECT_BYTES || eof {
            break;
        }
        let n = match reader.read(&mut chunk) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(TraceError::io(name, "read", e)),
        };
        eof = n == 0;
        buf.extend_from_slice(&chunk[..n]);
    }
    // The last line counts only when the input ended (it may be cut otherwise).
    let upto = if eof {
        buf.len()
    } else {
        memchr::memrchr(b'\n', &buf).unwrap_or(0)
    };
    let sample: Vec<String> = buf[..upto]
        .split(|&b| b == b'\n')
        .map(|l| String::from_utf8_lossy(l).trim().to_owned())
        .filter(|l| !l.is_empty())
        .take(DETECT_LINES)
        .collect();
    let format = detect_lines(&sample).ok_or_else(|| undetected(name))?;
    Ok((format, Box::new(std::io::Cursor::new(buf).chain(reader))))
}

/// Format detection on sample lines (trimmed, non-empty).
pub fn detect_lines(lines: &[String]) -> Option<Format> {
    let first = lines.first()?;
    if first.starts_with("fio version 2 iolog") {
        return Some(Format::FioIologV2);
    }
    if first.starts_with("fio version 3 iolog") {
        return Some(Format::FioIologV3);
    }
    if first.starts_with(csv::HEADER) {
        return Some(Format::Csv);
    }
    if lines
        .iter()
        .any(|l| l.contains("block_rq_issue:") || l.contains("block_rq_complete:"))
        || lines.iter().any(|l| l.starts_with("# tracer:"))
    {
        return Some(Format::Ftrace);
    }
    if lines.iter().any(|l| blkparse::looks_like(l)) {
        return Some(Format::Blkparse);
    }
    // CSV formats: decide on the first data line.
    let data = lines.iter().find(|l| !l.starts_with('#'))?;
    let f: Vec<&str> = data.split(',').map(str::trim).collect();
    let is_int = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let is_num = |s: &str| !s.is_empty() && s.parse::<f64>().is_ok();
    match f.len() {
        7 if is_int(f[0])
            && (f[3].eq_ignore_ascii_case("read") || f[3].eq_ignore_ascii_case("write")) =>
        {
            Some(Format::Msr)
        }
        5 if is_int(f[0]) && (f[1] == "R" || f[1] == "W") && is_int(f[2]) && is_int(f[4]) => {
            Some(Format::Alibaba)
        }
        5 if is_int(f[0])
            && is_int(f[1])
            && is_int(f[2])
            && (f[3] == "0" || f[3] == "1")
            && is_int(f[4]) =>
        {
            Some(Format::Tencent)
        }
        n if n >= 5
            && is_int(f[0])
            && is_int(f[1])
            && is_int(f[2])
            && (f[3].eq_ignore_ascii_case("r") || f[3].eq_ignore_ascii_case("w"))
            && is_num(f[4]) =>
        {
            Some(Format::Spc)
        }
        _ => None,
    }
}

/// Imports `input` into a new Parquet trace at `output`.
pub fn import(
    input: &Path,
    output: &Path,
    opts: &ImportOptions,
) -> Result<ImportSummary, TraceError> {
    let format = match opts.format {
        Some(f) => f,
        None => detect(input)?,
    };
    let lr = LineReader::open(input)?;
    import_lines(input, lr, output, opts, format)
}

/// Imports from any reader (`name` is used in errors and metadata) in a known format;
/// for fuzzing.
pub fn import_reader(
    name: &Path,
    reader: Box<dyn std::io::Read>,
    output: &Path,
    opts: &ImportOptions,
    format: Format,
) -> Result<ImportSummary, TraceError> {
    import_lines(
        name,
        LineReader::from_reader(name, reader),
        output,
        opts,
        format,
    )
}

/// Imports from a stream such as stdin (`name` is used in errors and metadata); the
/// format is `opts.format`, or detected from the first lines.
pub fn import_stream(
    name: &Path,
    reader: Box<dyn std::io::Read>,
    output: &Path,
    opts: &ImportOptions,
) -> Result<ImportSummary, TraceError> {
    let (format, reader) = match opts.format {
        Some(f) => (f, reader),
        None => detect_reader(name, reader)?,
    };
    import_reader(name, reader, output, opts, format)
}

/// Runs one import; on failure removes the half-written output (it has no Parquet
/// footer, so nothing could read it) before returning the error.
fn import_lines(
    input: &Path,
    lr: LineReader,
    output: &Path,
    opts: &ImportOptions,
    format: Format,
) -> Result<ImportSummary, TraceError> {
    let mut created = false;
    let r = import_lines_inner(input, lr, output, opts, format, &mut created);
    // Only a file this import created is removed (never one it failed to open).
    if r.is_err() && created {
        let _ = std::fs::remove_file(output);
    }
    r
}

fn import_lines_inner(
    input: &Path,
    mut lr: LineReader,
    output: &Path,
    opts: &ImportOptions,
    format: Format,
    created: &mut bool,
) -> Result<ImportSummary, TraceError> {
    let meta = TraceMeta {
        source_format: Some(format.name().to_owned()),
        source_file: Some(input.display().to_string()),
        tool_version: Some(format!("storbench {}", env!("CARGO_PKG_VERSION"))),
        ..Default::default()
    };
    let mut writer = TraceWriter::create(output, &meta)?;
    *created = true;
    lr.set_progress(opts.progress.clone());
    let mut ctx = Ctx {
        path: input,
        opts,
        summary: ImportSummary {
            format: format.name().to_owned(),
            ..Default::default()
        },
    };
    let mut meta_out = meta;
    {
        let mut sink = Sink::new(&mut writer);
        match format {
            Format::FioIologV2 => fio::import(&mut ctx, &mut lr, &mut sink, 2)?,
            Format::FioIologV3 => fio::import(&mut ctx, &mut lr, &mut sink, 3)?,
            Format::Ftrace => ftrace::import(&mut ctx, &mut lr, &mut sink)?,
            Format::Blkparse => blkparse::import(&mut ctx, &mut lr, &mut sink)?,
            Format::Msr => msr::import(&mut ctx, &mut lr, &mut sink)?,
            Format::Alibaba => alibaba::import(&mut ctx, &mut lr, &mut sink)?,
            Format::Tencent => tencent::import(&mut ctx, &mut lr, &mut sink)?,
            Format::Spc => spc::import(&mut ctx, &mut lr, &mut sink)?,
            Format::Csv => csv::import(&mut ctx, &mut lr, &mut sink, &mut meta_out)?,
        }
        sink.finish()?;
        if sink.clamped > 0 {
            *ctx.summary
                .reclassified
                .entry("records out of issue order beyond the reorder window, moved later".into())
                .or_default() += sink.clamped;
        }
        ctx.summary.records = sink.written;
    }
    ctx.summary.lines = lr.line_no();
    ctx.summary.to_extra(&mut meta_out.extra);
    writer.set_meta(meta_out);
    let rows = writer.finish()?;
    assert_eq!(rows, ctx.summary.records);
    Ok(ctx.summary)
}

/// Rebases source timestamps so the first record is at 0; earlier ones clamp to 0.
#[derive(Default)]
pub struct TimeBase {
    base: Option<u64>,
}

impl TimeBase {
    pub fn rel(&mut self, ctx: &mut Ctx, t: u64) -> u64 {
        let b = *self.base.get_or_insert(t);
        if t < b {
            ctx.summary
                .note_reclassify("records stamped before the first record: time set to 0");
            0
        } else {
            t - b
        }
    }
}

/// Checks that a byte range fits the store (below 2^63).
pub fn check_range(
    ctx: &Ctx,
    line: u64,
    field: &'static str,
    offset: u64,
    len: u64,
) -> Result<(), TraceError> {
    match offset.checked_add(len) {
        Some(e) if e <= i64::MAX as u64 => Ok(()),
        _ => Err(ctx.err(
            line,
            field,
            format!("offset {offset} + length {len} is beyond 2^63 bytes"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Op;

    /// The order the sink used to write in: one heap of (issue_ns, arrival), the
    /// smallest out first, clamped to the last time written.
    struct Reference {
        heap: BinaryHeap<std::cmp::Reverse<(u64, u64, u64)>>,
        seq: u64,
        last: u64,
        out: Vec<(u64, u64)>,
    }
    impl Reference {
        fn pop(&mut self) {
            let std::cmp::Reverse((t, _, off)) = self.heap.pop().unwrap();
            self.last = self.last.max(t);
            self.out.push((self.last, off));
        }
    }

    #[test]
    fn sink_writes_in_the_order_of_one_heap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut w = TraceWriter::create(&path, &TraceMeta::default()).unwrap();
        let mut reference = Reference {
            heap: BinaryHeap::new(),
            seq: 0,
            last: 0,
            out: Vec::new(),
        };
        let mut rng = crate::test_rng::XorShift(0x9E37_79B9_7F4A_7C15);
        let mut rand = move |n: u64| rng.below(n);
        {
            let mut sink = Sink::new(&mut w);
            let mut t = 1_000_000u64;
            for i in 0..200_000u64 {
                t += rand(50);
                // Mostly in order, some a few places off, some far off; equal times too.
                let issue = match rand(10) {
                    0..=5 => t,
                    6 | 7 => t.saturating_sub(rand(200)),
                    8 => t.saturating_sub(rand(100_000)),
                    _ => t - t % 64,
                };
                // The offset identifies the record.
                let rec = IoRecord::new(Op::Read, i * 4096, 4096, issue);
                sink.push(rec).unwrap();
                reference
                    .heap
                    .push(std::cmp::Reverse((issue, reference.seq, i * 4096)));
                reference.seq += 1;
                if reference.heap.len() > REORDER_WINDOW {
                    reference.pop();
                }
                if rand(100) == 0 {
                    let upto = t.saturating_sub(rand(5_000));
                    sink.release_upto(upto).unwrap();
                    while matches!(reference.heap.peek(), Some(std::cmp::Reverse((u, _, _))) if *u <= upto)
                    {
                        reference.pop();
                    }
                }
            }
            sink.finish().unwrap();
            while !reference.heap.is_empty() {
                reference.pop();
            }
            assert_eq!(sink.written, 200_000);
        }
        w.finish().unwrap();
        let (_, got, _, _) = crate::store::read_all(&path).unwrap();
        let got: Vec<(u64, u64)> = got.iter().map(|r| (r.issue_ns, r.offset_bytes)).collect();
        assert_eq!(got.len(), reference.out.len());
        assert!(got == reference.out, "records written in another order");
    }
}
