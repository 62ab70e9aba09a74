//! Importers (one module per public format) and exporters.
//!
//! Every importer reads its input line by line (bounded memory) and hands records to a
//! [`Sink`], which writes them into a [`TraceWriter`] in exact issue order (sorting
//! what arrives out of order, in bounded memory: [`spill`]) with times rebased to the
//! smallest; the import returns an [`ImportSummary`] saying what was dropped or
//! reclassified and why. Input may be compressed or a tar archive ([`input`]).
//! Grammars: METHODOLOGY section 5.

pub mod alibaba;
pub mod blkparse;
pub mod block;
pub mod csv;
pub mod device_csv;
pub mod export;
pub mod fio;
pub mod ftrace;
pub mod header;
pub mod input;
pub mod lines;
pub mod msr;
pub mod pair;
pub mod rwbs;
pub mod spc;
pub mod spill;
pub mod tencent;

use crate::error::TraceError;
use crate::model::{IoRecord, TraceMeta};
use crate::store::TraceWriter;
use lines::LineReader;
use serde::{Deserialize, Serialize};
use spill::{SortLimits, Spill};
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::io::Read;
use std::path::{Path, PathBuf};

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
    /// SPC: keep only this ASU.
    pub asu: Option<u64>,
    /// Tar input: import only this member (its path in the archive, or its file name);
    /// None imports every member.
    pub member: Option<String>,
    /// Count and skip malformed lines instead of failing on the first.
    pub skip_bad_lines: bool,
    /// Bytes of input read so far (before decompression; for a progress bar).
    pub progress: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// Bounds of the sort of out-of-order input (tests lower them).
    pub sort_limits: SortLimits,
    /// What the output may replace (`--overwrite`, and inputs the caller opened, such
    /// as stdin); the files [`import_files`] opens are added to its inputs.
    pub output: crate::atomic::Rule,
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
    /// Records stamped before a record on an earlier line of the same file or member
    /// (they were sorted into place: the trace is in exact issue order).
    #[serde(default)]
    pub out_of_order: u64,
    /// Sorted runs the external sort wrote to disk (0: the input was in order, or the
    /// reorder window was enough).
    #[serde(default)]
    pub sort_runs: u64,
    /// Whether the output went through the external sort.
    #[serde(default)]
    pub sorted: bool,
    /// Compressions decoded (gzip, zstd, xz, bzip2).
    #[serde(default)]
    pub decompressed: Vec<String>,
    /// Files and tar members imported.
    #[serde(default)]
    pub parts: u64,
    /// Tar entries skipped (directories, empty files, members other than `--member`).
    #[serde(default)]
    pub members_skipped: u64,
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
        let mut input = Vec::new();
        if self.parts > 1 {
            input.push(format!("{} files or archive members", self.parts));
        }
        if !self.decompressed.is_empty() {
            input.push(format!("decompressed {}", self.decompressed.join(", ")));
        }
        if self.members_skipped > 0 {
            input.push(format!(
                "{} archive entries skipped (directories, empty files, other members)",
                self.members_skipped
            ));
        }
        if !input.is_empty() {
            s += &format!("input: {}\n", input.join(", "));
        }
        if self.out_of_order > 0 || self.sorted {
            s += &format!(
                "{} records out of order in the input (stamped before an earlier line's): \
                 sorted into exact issue order",
                self.out_of_order
            );
            if self.sort_runs > 0 {
                s += &format!(" ({} sorted runs merged from disk)", self.sort_runs);
            }
            s.push('\n');
        }
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
        extra.insert("import.out_of_order".into(), self.out_of_order.to_string());
        if !self.decompressed.is_empty() {
            extra.insert("import.decompressed".into(), self.decompressed.join(","));
        }
        if self.parts > 1 {
            extra.insert("import.parts".into(), self.parts.to_string());
        }
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

/// The sink every importer writes to: writes records in exact issue order, with times
/// rebased so the smallest issue time is 0 (unless told to keep them: storbench CSV),
/// and counts them.
///
/// Records mostly arrive in issue order or a few places off it (completions of a queue
/// of requests): those are written straight out, or restored to order within
/// [`REORDER_WINDOW`] records. Held records are kept in a sorted run, appended at the
/// back or inserted a few places before it, and the rest in a heap; writing out takes
/// the smaller head of the two: the order a single heap of (issue_ns, arrival) gives,
/// without a heap's log-time sift of every record.
///
/// A record issued before one already written (shuffled lines, concatenated per-volume
/// files) cannot be put in order there: the sink then finishes what it wrote as a
/// sorted prefix and sorts the rest externally ([`spill`]), merging everything into the
/// output at the end. Ties keep input order throughout.
pub struct Sink {
    pub writer: TraceWriter,
    output: PathBuf,
    limits: SortLimits,
    /// Subtract the smallest issue time from every time.
    rebase: bool,
    /// The issue time of the first record written straight out: the smallest so far.
    base_ns: Option<u64>,
    /// Sorted by (issue_ns, seq).
    run: VecDeque<Held>,
    heap: BinaryHeap<std::cmp::Reverse<Held>>,
    seq: u64,
    /// Issue time of the last record written straight out (u64::MAX once sorting
    /// externally, so every record takes the slow path).
    last_out_ns: u64,
    /// Records written straight out.
    pub written: u64,
    spill: Option<Spill>,
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

/// What [`Sink::finish`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SinkDone {
    pub records: u64,
    /// The output went through the external sort.
    pub sorted: bool,
    /// Sorted runs written to disk.
    pub runs: u64,
}

impl Sink {
    /// A sink writing to `writer`, which writes `output` (the sort's temporary directory
    /// goes next to it).
    pub fn new(writer: TraceWriter, output: &Path, rebase: bool, limits: SortLimits) -> Self {
        Sink {
            writer,
            output: output.to_path_buf(),
            limits,
            rebase,
            base_ns: None,
            run: VecDeque::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            last_out_ns: 0,
            written: 0,
            spill: None,
        }
    }

    /// Records accepted so far (written, held, or in the external sort).
    pub fn records(&self) -> u64 {
        match &self.spill {
            Some(s) => s.records(),
            None => self.written + self.held() as u64,
        }
    }

    /// Records held (both structures); at most [`REORDER_WINDOW`] between calls.
    #[inline]
    fn held(&self) -> usize {
        self.run.len() + self.heap.len()
    }

    /// Accepts one record (any order).
    pub fn push(&mut self, rec: IoRecord) -> Result<(), TraceError> {
        if rec.issue_ns < self.last_out_ns {
            // Before what was written already (or sorting externally).
            return self.spill_out(rec);
        }
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
    /// falls back to the window, or the external sort, when the record is out of order.
    #[inline]
    pub fn push_ordered(&mut self, rec: IoRecord) -> Result<(), TraceError> {
        if self.held() == 0 && rec.issue_ns >= self.last_out_ns {
            return self.write_out(rec);
        }
        self.push(rec)
    }

    /// Writes one record straight to the output, rebased.
    #[inline(always)]
    fn write_out(&mut self, mut rec: IoRecord) -> Result<(), TraceError> {
        debug_assert!(rec.issue_ns >= self.last_out_ns && self.spill.is_none());
        self.last_out_ns = rec.issue_ns;
        if self.rebase {
            let b = *self.base_ns.get_or_insert(rec.issue_ns);
            rec.issue_ns -= b;
            rec.complete_ns = rec.complete_ns.map(|c| c.saturating_sub(b));
        }
        self.written += 1;
        self.writer.write(&rec)
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

    /// Removes and returns the held record with the smallest (issue_ns, seq).
    fn take_first(&mut self) -> Option<Held> {
        let from_run = match (self.run.front(), self.heap.peek()) {
            (Some(a), Some(std::cmp::Reverse(b))) => a.key() < b.key(),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        if from_run {
            self.run.pop_front()
        } else {
            self.heap.pop().map(|r| r.0)
        }
    }

    fn pop_one(&mut self) -> Result<(), TraceError> {
        match self.take_first() {
            // Every held record was at or after the last one written when it came.
            Some(h) => self.write_out(h.rec),
            None => Ok(()),
        }
    }

    /// Hands `rec` to the external sort, starting it first if needed: what was written
    /// so far becomes the sorted prefix, held records and `rec` the first run's start.
    #[cold]
    fn spill_out(&mut self, rec: IoRecord) -> Result<(), TraceError> {
        if let Some(s) = &mut self.spill {
            return s.push(rec);
        }
        let mut spill = Spill::new(&self.output, self.limits)?;
        // The output is written anew, judged as the first writer was (its rule, its
        // directory); names keep their ids.
        let mut next = self.writer.restart()?;
        for name in self.writer.devices().iter() {
            next.intern_device(name);
        }
        for name in self.writer.streams().iter() {
            next.intern_stream(name);
        }
        let prefix = std::mem::replace(&mut self.writer, next);
        // Finished aside, in the sort's directory: the output is written once, whole.
        let rows = prefix.finish_at(spill.prefix_path())?;
        spill.take_prefix(self.base_ns.unwrap_or(0), rows);
        // Held records, then `rec`: in arrival order for equal times (held ones are in
        // (issue, arrival) order, and `rec` came after all of them).
        while let Some(h) = self.take_first() {
            spill.push(h.rec)?;
        }
        self.run = VecDeque::new();
        self.heap = BinaryHeap::new();
        self.last_out_ns = u64::MAX;
        spill.push(rec)?;
        self.spill = Some(spill);
        Ok(())
    }

    /// Writes everything still held, sets `meta` and finishes the output.
    pub fn finish(mut self, meta: TraceMeta) -> Result<SinkDone, TraceError> {
        while self.held() > 0 {
            self.pop_one()?;
        }
        let mut done = SinkDone {
            records: self.written,
            ..Default::default()
        };
        let spill = self.spill.take();
        if let Some(spill) = &spill {
            done.sorted = true;
            done.runs = spill.runs_written;
        }
        let mut dir = None;
        if let Some(spill) = spill {
            let (records, d) = spill.finish(&mut self.writer, self.rebase)?;
            done.records = records;
            dir = Some(d);
        }
        self.writer.set_meta(meta);
        let rows = self.writer.finish()?;
        assert_eq!(rows, done.records);
        drop(dir);
        Ok(done)
    }
}

/// State shared by importers: the input's name, options, summary, error policy and
/// time base (shared by every file and member of one import).
pub struct Ctx<'a> {
    /// The file or member being read (in errors).
    pub path: PathBuf,
    pub opts: &'a ImportOptions,
    pub summary: ImportSummary,
    pub time: TimeBase,
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

/// Detects the format of a file (decompressed, or its first tar member) from its first
/// lines.
pub fn detect(path: &Path) -> Result<Format, TraceError> {
    let f = std::fs::File::open(path).map_err(|e| TraceError::io(path, "open", e))?;
    let mut found = None;
    let mut opened = input::Opened::default();
    let r = input::for_each_part(path, Box::new(f), None, &mut opened, &mut |name, r| {
        let (format, _) = detect_reader(name, r)?;
        found = Some(format);
        // Only the first part: stop here (the error is never shown).
        Err(undetected(name))
    });
    match found {
        Some(f) => Ok(f),
        None => Err(r.expect_err("no part was detected")),
    }
}

/// Detects the format of a stream from its first lines; returns it with a reader that
/// yields the whole input again (the sample read, then the rest).
pub fn detect_reader<'r>(
    name: &Path,
    mut reader: Box<dyn Read + 'r>,
) -> Result<(Format, Box<dyn Read + 'r>), TraceError> {
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
        .map(|l| {
            String::from_utf8_lossy(lines::strip_bom(l))
                .trim()
                .to_owned()
        })
        .filter(|l| !l.is_empty())
        .take(DETECT_LINES)
        .collect();
    let format = detect_lines(&sample).ok_or_else(|| undetected(name))?;
    Ok((format, Box::new(std::io::Cursor::new(buf).chain(reader))))
}

/// Known header lines of the CSV formats (compared case-insensitively), so a file of
/// only a header, or whose first data lines are ambiguous, still names its format.
const KNOWN_HEADERS: [(&str, Format); 6] = [
    (
        "timestamp,hostname,disknumber,type,offset,size,responsetime",
        Format::Msr,
    ),
    ("device_id,opcode,offset,length,timestamp", Format::Alibaba),
    ("timestamp,offset,size,iotype,volumeid", Format::Tencent),
    ("timestamp,offset,size,iotype,volume_id", Format::Tencent),
    ("asu,lba,size,opcode,timestamp", Format::Spc),
    ("asu,lba,size,opcode,timestamp,ignored", Format::Spc),
];

/// Format detection on sample lines (trimmed, non-empty; a byte order mark is skipped).
pub fn detect_lines(lines: &[String]) -> Option<Format> {
    let first = lines.first()?;
    let first = first.strip_prefix('\u{feff}').unwrap_or(first).trim();
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
    // CSV formats: decide on the first data line, after any header lines.
    let strip = |l: &str| l.strip_prefix('\u{feff}').unwrap_or(l).trim().to_owned();
    let data = lines
        .iter()
        .map(|l| strip(l))
        .find(|l| !l.starts_with('#') && !header::looks_like_header(l.as_bytes()));
    let Some(data) = data else {
        // Headers only: a known one names the format.
        let norm = |l: &str| -> String {
            l.split(',')
                .map(|f| f.trim().trim_matches('"').to_ascii_lowercase())
                .collect::<Vec<_>>()
                .join(",")
        };
        return lines.iter().find_map(|l| {
            let n = norm(&strip(l));
            KNOWN_HEADERS.iter().find(|(h, _)| *h == n).map(|(_, f)| *f)
        });
    };
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

/// Imports `input` (plain, compressed or a tar archive) into a new Parquet trace at
/// `output`.
pub fn import(
    input: &Path,
    output: &Path,
    opts: &ImportOptions,
) -> Result<ImportSummary, TraceError> {
    import_files(&[input.to_path_buf()], output, opts)
}

/// Imports several inputs (per-volume files, or the members of archives) into one
/// trace, in the order given; their records are merged into issue order.
pub fn import_files(
    inputs: &[PathBuf],
    output: &Path,
    opts: &ImportOptions,
) -> Result<ImportSummary, TraceError> {
    let source = inputs
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" ");
    // Every input opened before the output is made: the output must be none of them.
    let mut files = Vec::with_capacity(inputs.len());
    let mut opts = opts.clone();
    for p in inputs {
        let f = std::fs::File::open(p).map_err(|e| TraceError::io(p, "open", e))?;
        opts.output = opts
            .output
            .input(&f)
            .map_err(|e| TraceError::io(p, "stat", e))?;
        files.push((p, f));
    }
    let mut files = files.into_iter();
    run_import(&source, output, &opts, opts.format, &mut |each| {
        for (p, f) in files.by_ref() {
            each(p, Box::new(f))?;
        }
        Ok(())
    })
}

/// Imports from any reader (`name` is used in errors and metadata) in a known format;
/// compressed and tar input is decoded as from a file.
pub fn import_reader(
    name: &Path,
    reader: Box<dyn Read>,
    output: &Path,
    opts: &ImportOptions,
    format: Format,
) -> Result<ImportSummary, TraceError> {
    let mut reader = Some(reader);
    run_import(
        &name.display().to_string(),
        output,
        opts,
        Some(format),
        &mut |each| each(name, reader.take().expect("one reader")),
    )
}

/// Imports from a stream such as stdin (`name` is used in errors and metadata); the
/// format is `opts.format`, or detected from the first lines.
pub fn import_stream(
    name: &Path,
    reader: Box<dyn Read>,
    output: &Path,
    opts: &ImportOptions,
) -> Result<ImportSummary, TraceError> {
    let mut reader = Some(reader);
    run_import(
        &name.display().to_string(),
        output,
        opts,
        opts.format,
        &mut |each| each(name, reader.take().expect("one reader")),
    )
}

/// Calls the given function with each input's name and reader.
type Inputs<'f> = dyn FnMut(&mut dyn FnMut(&Path, Box<dyn Read>) -> Result<(), TraceError>) -> Result<(), TraceError>
    + 'f;

/// Runs one import. The output appears only when the import succeeds
/// (`crate::atomic`): a failed one leaves what was at its path as it was, and its
/// temporary file is removed when the writer is dropped.
fn run_import(
    source: &str,
    output: &Path,
    opts: &ImportOptions,
    format: Option<Format>,
    inputs: &mut Inputs,
) -> Result<ImportSummary, TraceError> {
    let mut state = Import {
        opts,
        output,
        source,
        format,
        sink: None,
        ctx: Ctx {
            path: PathBuf::new(),
            opts,
            summary: ImportSummary::default(),
            time: TimeBase::default(),
        },
        opened: input::Opened::default(),
    };
    state.run(inputs)
}

/// One import in progress: the format once known, the sink once the output exists.
struct Import<'a> {
    opts: &'a ImportOptions,
    output: &'a Path,
    source: &'a str,
    format: Option<Format>,
    sink: Option<Sink>,
    ctx: Ctx<'a>,
    opened: input::Opened,
}

impl Import<'_> {
    fn run(&mut self, inputs: &mut Inputs) -> Result<ImportSummary, TraceError> {
        inputs(&mut |name, raw| {
            let raw = Box::new(input::Counting {
                inner: raw,
                counter: self.opts.progress.clone(),
            });
            let member = self.opts.member.as_deref();
            let mut opened = std::mem::take(&mut self.opened);
            let r = input::for_each_part(name, raw, member, &mut opened, &mut |part, r| {
                self.part(part, r)
            });
            self.opened = opened;
            r
        })?;
        let Some(sink) = self.sink.take() else {
            // No part at all (an empty file list).
            return Err(TraceError::Format {
                path: self.output.to_path_buf(),
                message: "no input to import".into(),
            });
        };
        let format = self.format.expect("known once a part was read");
        let mut summary = std::mem::take(&mut self.ctx.summary);
        summary.format = format.name().to_owned();
        summary.out_of_order = self.ctx.time.out_of_order;
        summary.decompressed = self
            .opened
            .codecs
            .iter()
            .map(|c| c.name().to_owned())
            .collect();
        summary.members_skipped = self.opened.members_skipped;
        summary.records = sink.records();
        summary.sorted = sink.spill.is_some();
        let mut meta = sink.writer.meta().clone();
        summary.to_extra(&mut meta.extra);
        let done = sink.finish(meta)?;
        summary.records = done.records;
        summary.sorted = done.sorted;
        summary.sort_runs = done.runs;
        Ok(summary)
    }

    /// Imports one file or archive member.
    fn part(&mut self, name: &Path, reader: Box<dyn Read + '_>) -> Result<(), TraceError> {
        let (format, reader) = match self.format {
            Some(f) => (f, reader),
            None => {
                let (f, r) = detect_reader(name, reader)?;
                self.format = Some(f);
                (f, r)
            }
        };
        if self.sink.is_none() {
            let meta = TraceMeta {
                source_format: Some(format.name().to_owned()),
                source_file: Some(self.source.to_owned()),
                tool_version: Some(format!("storbench {}", env!("CARGO_PKG_VERSION"))),
                ..Default::default()
            };
            let writer = TraceWriter::create_with(self.output, &meta, &self.opts.output)?;
            // storbench CSV keeps its times as written (a lossless round trip).
            let rebase = format != Format::Csv;
            self.sink = Some(Sink::new(
                writer,
                self.output,
                rebase,
                self.opts.sort_limits,
            ));
        }
        let sink = self.sink.as_mut().expect("created above");
        let ctx = &mut self.ctx;
        ctx.path = name.to_path_buf();
        ctx.time.start_part();
        ctx.summary.parts += 1;
        let mut lr = LineReader::from_reader(name, reader);
        let r = match format {
            Format::FioIologV2 => fio::import(ctx, &mut lr, sink, 2),
            Format::FioIologV3 => fio::import(ctx, &mut lr, sink, 3),
            Format::Ftrace => ftrace::import(ctx, &mut lr, sink),
            Format::Blkparse => blkparse::import(ctx, &mut lr, sink),
            Format::Msr => msr::import(ctx, &mut lr, sink),
            Format::Alibaba => alibaba::import(ctx, &mut lr, sink),
            Format::Tencent => tencent::import(ctx, &mut lr, sink),
            Format::Spc => spc::import(ctx, &mut lr, sink),
            Format::Csv => csv::import(ctx, &mut lr, sink),
        };
        ctx.summary.lines += lr.line_no();
        r
    }
}

/// Rebases source timestamps and counts records out of order.
///
/// Times go to the sink as nanoseconds from the first record's timestamp, offset by
/// [`TIME_BIAS`] so a record stamped before the first one needs no clamping; the sink
/// rebases them to the smallest. Order is judged within each file or member (per-volume
/// files each in order are not counted as out of order against each other).
#[derive(Debug, Default)]
pub struct TimeBase {
    base: Option<u64>,
    max_seen: u64,
    /// Records stamped before a record on an earlier line of the same part.
    pub out_of_order: u64,
}

/// Added to times relative to the first record (see [`TimeBase`]): records up to 292
/// years before or after it are representable.
pub const TIME_BIAS: u64 = 1 << 63;

impl TimeBase {
    /// A new file or member starts.
    pub fn start_part(&mut self) {
        self.max_seen = 0;
    }

    /// Counts `t` as out of order when a record on an earlier line was stamped later.
    #[inline]
    pub fn note_order(&mut self, t: u64) {
        if t < self.max_seen {
            self.out_of_order += 1;
        } else {
            self.max_seen = t;
        }
    }

    /// The sink's time of source timestamp `t` (in units of `ns_per_unit` ns); None
    /// when it is more than 2^63 ns from the first record's.
    #[inline]
    pub fn rel(&mut self, t: u64, ns_per_unit: u64) -> Option<u64> {
        self.note_order(t);
        let b = *self.base.get_or_insert(t);
        if t >= b {
            (t - b).checked_mul(ns_per_unit)?.checked_add(TIME_BIAS)
        } else {
            TIME_BIAS.checked_sub((b - t).checked_mul(ns_per_unit)?)
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

    /// Pushes `n` records with the mix of order the importers give (mostly in order,
    /// some a few places off, some far off, equal times), releasing now and then as
    /// the block importers do; returns what was written and the records in arrival
    /// order.
    fn run_sink(
        n: u64,
        limits: SortLimits,
        rebase: bool,
    ) -> (Vec<IoRecord>, Vec<IoRecord>, SinkDone) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let w = TraceWriter::create(&path, &TraceMeta::default()).unwrap();
        let mut rng = crate::test_rng::XorShift(0x9E37_79B9_7F4A_7C15);
        let mut rand = move |n: u64| rng.below(n);
        let mut sent = Vec::new();
        let mut sink = Sink::new(w, &path, rebase, limits);
        let mut t = 1_000_000u64;
        for i in 0..n {
            t += rand(50);
            let issue = match rand(10) {
                0..=5 => t,
                6 | 7 => t.saturating_sub(rand(200)),
                8 => t.saturating_sub(rand(100_000)),
                _ => t - t % 64,
            };
            // The offset identifies the record.
            let mut rec = IoRecord::new(Op::Read, i * 4096, 4096, issue);
            rec.complete_ns = Some(issue + 7);
            sink.push(rec).unwrap();
            sent.push(rec);
            if rand(100) == 0 {
                sink.release_upto(t.saturating_sub(rand(5_000))).unwrap();
            }
        }
        assert_eq!(sink.records(), n);
        let done = sink.finish(TraceMeta::default()).unwrap();
        let (_, got, _, _) = crate::store::read_all(&path).unwrap();
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "the sort's temporary files are gone");
        (got, sent, done)
    }

    #[test]
    fn sink_writes_exact_issue_order_keeping_input_order_of_ties() {
        for limits in [
            SortLimits::default(),
            // Small runs: many spilled, merged in several passes.
            SortLimits {
                run_records: 1000,
                fan_in: 4,
            },
        ] {
            let (got, mut want, done) = run_sink(200_000, limits, false);
            assert!(done.sorted && done.runs > 0 || limits == SortLimits::default());
            want.sort_by_key(|r| r.issue_ns);
            assert_eq!(got.len(), want.len());
            assert!(got == want, "records written in another order ({limits:?})");
        }
        // Rebased: the smallest issue time is 0, service times kept.
        let (got, mut want, _) = run_sink(20_000, SortLimits::default(), true);
        want.sort_by_key(|r| r.issue_ns);
        let base = want[0].issue_ns;
        assert_eq!(got[0].issue_ns, 0);
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(
                (g.issue_ns + base, g.complete_ns.map(|c| c + base)),
                (w.issue_ns, w.complete_ns)
            );
            assert_eq!(g.offset_bytes, w.offset_bytes);
        }
    }

    #[test]
    fn sink_in_order_input_is_written_straight_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let w = TraceWriter::create(&path, &TraceMeta::default()).unwrap();
        let mut sink = Sink::new(w, &path, true, SortLimits::default());
        for i in 0..1000u64 {
            sink.push_ordered(IoRecord::new(Op::Write, 0, 512, 5_000 + i))
                .unwrap();
        }
        let done = sink.finish(TraceMeta::default()).unwrap();
        assert_eq!(
            done,
            SinkDone {
                records: 1000,
                sorted: false,
                runs: 0
            }
        );
        let (_, got, _, _) = crate::store::read_all(&path).unwrap();
        assert_eq!((got[0].issue_ns, got[999].issue_ns), (0, 999));
    }
}
