//! Importers (one module per public format) and exporters.
//!
//! Every importer reads its input line by line (bounded memory) and hands records to a
//! [`Sink`], which writes them into a [`TraceWriter`] in exact issue order (sorting
//! what arrives out of order, in bounded memory: [`spill`]) with times rebased to the
//! smallest; the import returns an [`ImportSummary`] saying what was dropped or
//! reclassified and why. Input may be compressed or a tar archive ([`input`]).
//! Grammars: METHODOLOGY section 5.
//!
//! A format is one module with a [`FormatSpec`] (its name, its detection test, its
//! importer) and one line in the [`importers!`] list below: that line declares the
//! module and registers the spec, so `--format`, detection and the help text know it.

/// Declares each format module and registers its specs, in this order (the order of
/// `--format`'s list and of detection: the first format whose test accepts the sample
/// wins); `Format::NAME` is each spec's constant.
macro_rules! importers {
    ($($module:ident: [$($spec:ident),+]),+ $(,)?) => {
        $(pub mod $module;)+
        /// Every format storbench imports, in the registry's order.
        const REGISTRY: &[&FormatSpec] = &[$($(&$module::$spec),+),+];
        #[allow(missing_docs)]
        impl Format {
            $($(pub const $spec: Format = Format(&$module::$spec);)+)+
        }
    };
}

importers! {
    fio: [FIO_IOLOG_V2, FIO_IOLOG_V3],
    ftrace: [FTRACE],
    blkparse: [BLKPARSE],
    msr: [MSR],
    alibaba: [ALIBABA],
    vscsi: [VSCSI],
    tencent: [TENCENT],
    spc: [SPC],
    csv: [CSV],
    mqsim: [MQSIM],
}

pub mod block;
pub mod detect;
pub mod device_csv;
pub mod events;
pub mod export;
pub mod header;
pub mod input;
pub mod lines;
pub mod pair;
pub mod rwbs;
pub mod sink;
pub mod spill;

pub use detect::{detect, detect_lines, detect_reader};
pub use sink::{Sink, SinkDone, REORDER_WINDOW};

use crate::error::TraceError;
use crate::model::TraceMeta;
use crate::store::TraceWriter;
use lines::LineReader;
use serde::{Deserialize, Serialize};
use spill::SortLimits;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// What a format is to storbench: one entry of the registry ([`importers!`]).
pub struct FormatSpec {
    /// The name used on the command line and in `storbench.source_format`.
    pub name: &'static str,
    /// Known header lines (lower case, fields joined by `,`): a file of only a header
    /// still names its format.
    pub headers: &'static [&'static str],
    /// Whether the first lines are this format's ([`detect`]).
    pub detect: fn(&detect::Sample) -> bool,
    /// Keep the source's times as written instead of rebasing them to the smallest
    /// (storbench CSV: a lossless round trip).
    pub keep_times: bool,
    /// The importer of one import (its state lives across the import's files).
    pub importer: fn(&ImportOptions) -> Box<dyn Importer>,
}

/// Reads one format: the parts of an import (files, archive members) one after another
/// into one sink, then `finish`.
pub trait Importer {
    /// Imports one file or archive member.
    fn part(
        &mut self,
        ctx: &mut Ctx,
        lr: &mut LineReader,
        sink: &mut Sink,
    ) -> Result<(), TraceError>;

    /// After the last part: writes whatever the importer still holds.
    fn finish(&mut self, _ctx: &mut Ctx, _sink: &mut Sink) -> Result<(), TraceError> {
        Ok(())
    }
}

/// An importer with no state between parts: one function per part.
pub struct EachPart(pub fn(&mut Ctx, &mut LineReader, &mut Sink) -> Result<(), TraceError>);

impl Importer for EachPart {
    fn part(
        &mut self,
        ctx: &mut Ctx,
        lr: &mut LineReader,
        sink: &mut Sink,
    ) -> Result<(), TraceError> {
        (self.0)(ctx, lr, sink)
    }
}

/// A text format storbench imports (an entry of the registry).
#[derive(Clone, Copy)]
pub struct Format(&'static FormatSpec);

impl Format {
    /// Every format, in the registry's order.
    pub fn all() -> impl Iterator<Item = Format> {
        REGISTRY.iter().map(|s| Format(s))
    }

    /// The name used on the command line and in `storbench.source_format`.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    pub fn spec(self) -> &'static FormatSpec {
        self.0
    }

    pub fn parse(s: &str) -> Option<Format> {
        Format::all().find(|f| f.name() == s)
    }

    /// Names of every format, for help and error hints.
    pub fn names() -> String {
        Format::all()
            .map(Format::name)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Formats are told apart by name (a `const` spec may live at several addresses).
impl PartialEq for Format {
    fn eq(&self, o: &Self) -> bool {
        self.0.name == o.0.name
    }
}
impl Eq for Format {}
impl std::hash::Hash for Format {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.name.hash(h)
    }
}
impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Format({})", self.0.name)
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
    /// Counts `n` more records kept but changed for `reason` (nothing when `n` is 0).
    pub fn note_reclassify_n(&mut self, reason: &str, n: u64) {
        if n > 0 {
            *self.reclassified.entry(reason.to_owned()).or_default() += n;
        }
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
        importer: None,
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
    importer: Option<Box<dyn Importer>>,
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
        if let (Some(imp), Some(sink)) = (self.importer.as_mut(), self.sink.as_mut()) {
            imp.finish(&mut self.ctx, sink)?;
        }
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
        summary.sorted = sink.sorting();
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
            self.sink = Some(Sink::new(
                writer,
                self.output,
                !format.spec().keep_times,
                self.opts.sort_limits,
            ));
            self.importer = Some((format.spec().importer)(self.opts));
        }
        let sink = self.sink.as_mut().expect("created above");
        let ctx = &mut self.ctx;
        ctx.path = name.to_path_buf();
        ctx.time.start_part();
        ctx.summary.parts += 1;
        let mut lr = LineReader::from_reader(name, reader);
        let importer = self.importer.as_mut().expect("created with the sink");
        let r = importer.part(ctx, &mut lr, sink);
        ctx.summary.lines += lr.line_no();
        r
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
