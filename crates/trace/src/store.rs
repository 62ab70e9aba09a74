//! The native trace file: Parquet, one row per I/O, written and read as a stream of
//! bounded row groups so memory stays flat for any trace length.
//!
//! Schema (documented for users in `docs/trace-format.md`):
//!
//! | column | Arrow type | Parquet | meaning |
//! |---|---|---|---|
//! | `issue_ns` | Int64, not null | INT64 | submission, ns since trace start |
//! | `complete_ns` | Int64, nullable | INT64 | completion, ns since trace start (null: unknown) |
//! | `offset_bytes` | Int64, not null | INT64 | byte offset on the device |
//! | `len_bytes` | Int64, not null | INT64 | length in bytes (0 for most flushes) |
//! | `op` | Dictionary(Int32, Utf8), not null | BYTE_ARRAY dict | `read`, `write`, `trim`, `flush` |
//! | `stream` | Dictionary(Int32, Utf8), nullable | BYTE_ARRAY dict | process or scenario name |
//! | `device` | Dictionary(Int32, Utf8), nullable | BYTE_ARRAY dict | device name, e.g. `8,16` |
//!
//! Signed 64-bit integers are used (not unsigned) because every consumer (pandas,
//! DuckDB, Polars, Spark) reads them natively; the writer refuses values above
//! `i64::MAX` and the reader refuses negative values.
//!
//! Metadata lives in the Parquet key/value metadata, one flat key per field:
//! `storbench.trace_format_version` (= [`FORMAT_VERSION`]), `storbench.source_format`,
//! `storbench.source_file`, `storbench.capacity_bytes`, `storbench.logical_block_bytes`,
//! `storbench.tool_version`, and `storbench.extra.<key>` for each free key/value.

use crate::error::TraceError;
use crate::model::{DeviceId, IoRecord, Names, Op, StreamId, TraceMeta};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int8Type, UInt16Type, UInt32Type, UInt64Type,
    UInt8Type,
};
use arrow_array::{
    Array, ArrayRef, DictionaryArray, Int32Array, Int64Array, LargeStringArray, PrimitiveArray,
    RecordBatch, StringArray, StringViewArray,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::column::page::{Page, PageReader};
use parquet::file::metadata::{FileMetaData, KeyValue, ParquetMetaData};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::serialized_reader::SerializedPageReader;
use parquet::schema::types::ColumnPath;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Version of the column layout and metadata keys; bumped on incompatible change.
pub const FORMAT_VERSION: u32 = 1;
/// Rows per Parquet row group (the writer's in-memory bound: one encoded row group).
pub const ROW_GROUP_ROWS: usize = 1 << 20;
/// Rows per `next_batch` of the reader.
pub const BATCH_ROWS: usize = 1 << 16;
/// Rows per batch the writer gathers and hands to its encoder thread (44 bytes a row).
/// It divides [`ROW_GROUP_ROWS`], so row groups are whole batches. The nullable columns'
/// pages split where batches do: a different size writes the same values in other
/// bytes (1 << 14 measured no faster), so it stays what earlier files were written with.
pub const WRITE_BATCH_ROWS: usize = 1 << 16;
const _: () = assert!(ROW_GROUP_ROWS.is_multiple_of(WRITE_BATCH_ROWS));

pub const COL_ISSUE: &str = "issue_ns";
pub const COL_COMPLETE: &str = "complete_ns";
pub const COL_OFFSET: &str = "offset_bytes";
pub const COL_LEN: &str = "len_bytes";
pub const COL_OP: &str = "op";
pub const COL_STREAM: &str = "stream";
pub const COL_DEVICE: &str = "device";

const KEY_PREFIX: &str = "storbench.";
const KEY_EXTRA_PREFIX: &str = "storbench.extra.";

fn dict_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

/// The Arrow schema of a trace file.
pub fn arrow_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new(COL_ISSUE, DataType::Int64, false),
        Field::new(COL_COMPLETE, DataType::Int64, true),
        Field::new(COL_OFFSET, DataType::Int64, false),
        Field::new(COL_LEN, DataType::Int64, false),
        Field::new(COL_OP, dict_type(), false),
        Field::new(COL_STREAM, dict_type(), true),
        Field::new(COL_DEVICE, dict_type(), true),
    ]))
}

/// Flat key/value pairs for the Parquet footer.
pub fn meta_to_kv(meta: &TraceMeta) -> Vec<(String, String)> {
    let mut kv = vec![(
        format!("{KEY_PREFIX}trace_format_version"),
        FORMAT_VERSION.to_string(),
    )];
    let mut put = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            kv.push((format!("{KEY_PREFIX}{k}"), v));
        }
    };
    put("source_format", meta.source_format.clone());
    put("source_file", meta.source_file.clone());
    put("capacity_bytes", meta.capacity_bytes.map(|v| v.to_string()));
    put(
        "logical_block_bytes",
        meta.logical_block_bytes.map(|v| v.to_string()),
    );
    put("tool_version", meta.tool_version.clone());
    for (k, v) in &meta.extra {
        kv.push((format!("{KEY_EXTRA_PREFIX}{k}"), v.clone()));
    }
    let crc = meta_crc(kv.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    kv.push((KEY_META_CRC.to_owned(), format!("{crc:08x}")));
    kv
}

/// The footer's key-value pairs are not covered by the page checksums: this key holds
/// the CRC-32 of the `storbench.` pairs before it, so a flipped byte in the metadata
/// (a capacity, a block size) is an error, not a changed figure.
const KEY_META_CRC: &str = "storbench.meta_crc32";

/// CRC-32 of `key=value\n` of every `storbench.` pair but the checksum itself, in order.
fn meta_crc<'a>(kv: impl IntoIterator<Item = (&'a str, &'a str)>) -> u32 {
    let mut h = crc32fast::Hasher::new();
    for (k, v) in kv {
        if k.starts_with(KEY_PREFIX) && k != KEY_META_CRC {
            h.update(k.as_bytes());
            h.update(b"=");
            h.update(v.as_bytes());
            h.update(b"\n");
        }
    }
    h.finalize()
}

/// Inverse of [`meta_to_kv`]; keys without the `storbench.` prefix are ignored.
pub fn meta_from_kv<'a>(
    path: &Path,
    kv: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<TraceMeta, TraceError> {
    let kv: Vec<(&str, &str)> = kv.into_iter().collect();
    // The checksum's own key with one byte changed: the footer is corrupt.
    if let Some((k, _)) = kv.iter().find(|(k, _)| {
        k.len() == KEY_META_CRC.len()
            && k.bytes()
                .zip(KEY_META_CRC.bytes())
                .filter(|(a, b)| a != b)
                .count()
                == 1
    }) {
        return Err(TraceError::schema(
            path,
            format!("metadata key {k:?} is a corrupt {KEY_META_CRC:?}: the file is corrupt"),
        ));
    }
    if let Some((_, want)) = kv.iter().find(|(k, _)| *k == KEY_META_CRC) {
        let got = format!("{:08x}", meta_crc(kv.iter().copied()));
        if got != *want {
            return Err(TraceError::schema(
                path,
                format!(
                    "the footer's storbench metadata does not match its checksum ({want} stored, {got} computed): the file is corrupt"
                ),
            ));
        }
    }
    let mut meta = TraceMeta::default();
    for (k, v) in kv {
        if k == KEY_META_CRC {
            continue;
        }
        if let Some(extra) = k.strip_prefix(KEY_EXTRA_PREFIX) {
            meta.extra.insert(extra.to_owned(), v.to_owned());
            continue;
        }
        let Some(key) = k.strip_prefix(KEY_PREFIX) else {
            continue;
        };
        let bad = |what: &str| TraceError::schema(path, format!("metadata `{k}`: {what}: {v:?}"));
        match key {
            "trace_format_version" => {
                let ver: u32 = v.parse().map_err(|_| bad("not an integer"))?;
                if ver > FORMAT_VERSION {
                    return Err(TraceError::schema(
                        path,
                        format!(
                            "trace format version {ver} is newer than this storbench reads \
                             ({FORMAT_VERSION}); upgrade storbench"
                        ),
                    ));
                }
            }
            "source_format" => meta.source_format = Some(v.to_owned()),
            "source_file" => meta.source_file = Some(v.to_owned()),
            "capacity_bytes" => {
                meta.capacity_bytes = Some(v.parse().map_err(|_| bad("not an integer"))?)
            }
            "logical_block_bytes" => {
                meta.logical_block_bytes = Some(v.parse().map_err(|_| bad("not an integer"))?)
            }
            "tool_version" => meta.tool_version = Some(v.to_owned()),
            _ => {
                // A key from a newer minor version: keep it so nothing is lost on rewrite.
                meta.extra.insert(format!("unknown.{key}"), v.to_owned());
            }
        }
    }
    Ok(meta)
}

type FileWriter = ArrowWriter<BufWriter<File>>;

/// Batches handed to the encoder thread that are not yet encoded: the writer's memory
/// bound is this many batches plus the one being filled, the one being encoded and
/// [`SPARE_BATCHES`] emptied ones waiting for reuse.
pub const ENCODE_QUEUE_BATCHES: usize = 2;
/// Emptied batches the encoder thread hands back for reuse (their memory is already
/// paged in: a fresh 2 MB batch cost the caller's thread ~500 page faults).
pub const SPARE_BATCHES: usize = 2;

/// One batch of rows, column by column, as the caller's thread gathers them. A null
/// completion, stream or device is stored as -1 (real values are never negative) and
/// counted, so no per-row validity is kept unless a column has nulls; the encoder
/// thread turns the -1s into null buffers.
struct Cols {
    issue: Vec<i64>,
    complete: Vec<i64>,
    complete_nulls: usize,
    offset: Vec<i64>,
    len: Vec<i64>,
    op: Vec<i32>,
    stream: Vec<i32>,
    stream_nulls: usize,
    device: Vec<i32>,
    device_nulls: usize,
}

impl Cols {
    fn with_capacity(n: usize) -> Cols {
        Cols {
            issue: Vec::with_capacity(n),
            complete: Vec::with_capacity(n),
            complete_nulls: 0,
            offset: Vec::with_capacity(n),
            len: Vec::with_capacity(n),
            op: Vec::with_capacity(n),
            stream: Vec::with_capacity(n),
            stream_nulls: 0,
            device: Vec::with_capacity(n),
            device_nulls: 0,
        }
    }

    fn len(&self) -> usize {
        self.issue.len()
    }
}

/// A batch on its way to the encoder thread, with the dictionaries its keys index.
struct Job {
    cols: Cols,
    stream_values: ArrayRef,
    device_values: ArrayRef,
}

/// The null buffer of a column whose nulls are stored as -1 (None when it has none);
/// the -1s become 0, as a column without the -1 trick would hold.
fn nulls_of<T: Copy + Ord + Default>(
    values: &mut [T],
    nulls: usize,
    null: T,
) -> Option<NullBuffer> {
    match nulls {
        0 => None,
        n if n == values.len() => {
            values.fill(T::default());
            Some(NullBuffer::new_null(n))
        }
        _ => {
            let valid = BooleanBuffer::collect_bool(values.len(), |i| values[i] != null);
            for v in values.iter_mut() {
                if *v == null {
                    *v = T::default();
                }
            }
            let nb = NullBuffer::new(valid);
            assert_eq!(nb.null_count(), nulls);
            Some(nb)
        }
    }
}

/// Encodes one batch into the Parquet writer; returns its emptied column vectors for
/// reuse (fresh ones if Arrow still held a buffer, which it does not: it copies what
/// it encodes).
fn encode_batch(
    writer: &mut FileWriter,
    path: &Path,
    schema: &SchemaRef,
    op_values: &ArrayRef,
    job: Job,
) -> Result<Cols, TraceError> {
    let Job {
        mut cols,
        stream_values,
        device_values,
    } = job;
    let n = cols.len();
    assert!(n > 0 && n <= WRITE_BATCH_ROWS);
    for l in [
        cols.complete.len(),
        cols.offset.len(),
        cols.len.len(),
        cols.op.len(),
        cols.stream.len(),
        cols.device.len(),
    ] {
        assert_eq!(l, n, "columns of one batch have one length");
    }
    let complete_nulls = nulls_of(&mut cols.complete, cols.complete_nulls, -1);
    let stream_nulls = nulls_of(&mut cols.stream, cols.stream_nulls, -1);
    let device_nulls = nulls_of(&mut cols.device, cols.device_nulls, -1);
    // The arrays share these buffers; once the batch is dropped each is unique again
    // and comes back as its Vec.
    let issue = Buffer::from_vec(std::mem::take(&mut cols.issue));
    let complete = Buffer::from_vec(std::mem::take(&mut cols.complete));
    let offset = Buffer::from_vec(std::mem::take(&mut cols.offset));
    let len = Buffer::from_vec(std::mem::take(&mut cols.len));
    let op = Buffer::from_vec(std::mem::take(&mut cols.op));
    let stream = Buffer::from_vec(std::mem::take(&mut cols.stream));
    let device = Buffer::from_vec(std::mem::take(&mut cols.device));
    let int64 = |b: &Buffer, nb: Option<NullBuffer>| -> ArrayRef {
        Arc::new(Int64Array::new(ScalarBuffer::new(b.clone(), 0, n), nb))
    };
    let dict = |b: &Buffer, nb: Option<NullBuffer>, values: ArrayRef| {
        let keys = Int32Array::new(ScalarBuffer::new(b.clone(), 0, n), nb);
        DictionaryArray::<Int32Type>::try_new(keys, values)
            .map(|d| Arc::new(d) as ArrayRef)
            .map_err(|e| TraceError::arrow(path, e))
    };
    let columns: Vec<ArrayRef> = vec![
        int64(&issue, None),
        int64(&complete, complete_nulls),
        int64(&offset, None),
        int64(&len, None),
        dict(&op, None, op_values.clone())?,
        dict(&stream, stream_nulls, stream_values)?,
        dict(&device, device_nulls, device_values)?,
    ];
    let batch =
        RecordBatch::try_new(schema.clone(), columns).map_err(|e| TraceError::arrow(path, e))?;
    assert_eq!(batch.num_rows(), n);
    writer
        .write(&batch)
        .map_err(|e| TraceError::parquet(path, e))?;
    drop(batch);
    fn back<T: arrow_buffer::ArrowNativeType>(b: Buffer) -> Vec<T> {
        let mut v = b
            .into_vec::<T>()
            .unwrap_or_else(|_| Vec::with_capacity(WRITE_BATCH_ROWS));
        v.clear();
        v
    }
    Ok(Cols {
        issue: back(issue),
        complete: back(complete),
        complete_nulls: 0,
        offset: back(offset),
        len: back(len),
        op: back(op),
        stream: back(stream),
        stream_nulls: 0,
        device: back(device),
        device_nulls: 0,
    })
}

/// The Parquet encoder on its own thread: records are gathered into column batches on
/// the caller's thread and built into Arrow batches and encoded (delta bit-packing,
/// dictionaries, zstd) on this one, so generating or parsing overlaps with encoding.
/// The same batches reach the same `ArrowWriter` in the same order: the file is the
/// one a single thread writes. Emptied column vectors travel back for reuse.
struct Encoder {
    /// None once closed.
    tx: Option<std::sync::mpsc::SyncSender<Job>>,
    /// Emptied batches back from the encoder thread (at most [`SPARE_BATCHES`]).
    spare: std::sync::mpsc::Receiver<Cols>,
    thread: Option<std::thread::JoinHandle<Result<FileWriter, TraceError>>>,
}

impl Encoder {
    fn start(path: &Path, mut writer: FileWriter) -> Result<Encoder, TraceError> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(ENCODE_QUEUE_BATCHES);
        let (spare_tx, spare) = std::sync::mpsc::sync_channel::<Cols>(SPARE_BATCHES);
        let p = path.to_path_buf();
        let schema = arrow_schema();
        let op_values: ArrayRef = Arc::new(StringArray::from_iter_values(
            Op::ALL.iter().map(|o| o.as_str()),
        ));
        let thread = std::thread::Builder::new()
            .name("trace-encode".into())
            .spawn(move || {
                // Ends when the sender is dropped (finish, or the writer dropped).
                for job in rx {
                    let cols = encode_batch(&mut writer, &p, &schema, &op_values, job)?;
                    // Spares full (or the writer gone): let this one go.
                    let _ = spare_tx.try_send(cols);
                }
                Ok(writer)
            })
            .map_err(|e| TraceError::io(path, "start the encoder thread", e))?;
        Ok(Encoder {
            tx: Some(tx),
            spare,
            thread: Some(thread),
        })
    }

    /// An emptied batch to fill, reused when the encoder thread has handed one back.
    fn empty_cols(&self) -> Cols {
        self.spare
            .try_recv()
            .unwrap_or_else(|_| Cols::with_capacity(WRITE_BATCH_ROWS))
    }

    /// Queues a batch (blocks while the queue is full); a failed encoder's error.
    fn send(&mut self, path: &Path, job: Job) -> Result<(), TraceError> {
        let Some(tx) = self.tx.as_ref() else {
            return Err(TraceError::io(
                path,
                "write",
                std::io::Error::other("an earlier write to this trace failed"),
            ));
        };
        if tx.send(job).is_err() {
            // The thread stopped: it failed, and says why on join.
            return match self.join(path) {
                Err(e) => Err(e),
                Ok(_) => panic!("the encoder thread stopped without an error"),
            };
        }
        Ok(())
    }

    /// Closes the queue, waits for the encoder, returns its writer.
    fn join(&mut self, path: &Path) -> Result<FileWriter, TraceError> {
        self.tx = None;
        let Some(thread) = self.thread.take() else {
            return Err(TraceError::io(
                path,
                "write",
                std::io::Error::other("an earlier write to this trace failed"),
            ));
        };
        match thread.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

impl Drop for Encoder {
    fn drop(&mut self) {
        // A writer dropped without finish (an import failed): stop the thread here
        // rather than leave it writing behind the caller's back.
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Streams [`IoRecord`]s into a Parquet trace file. The file appears at its path, whole
/// and with a CRC in every page header, only when [`TraceWriter::finish`] returns; a
/// writer dropped before (a failed import) leaves nothing behind.
pub struct TraceWriter {
    path: PathBuf,
    /// Where the encoder writes (removed when dropped): [`TraceWriter::finish`] copies
    /// it with page checksums into the final file.
    staging: crate::atomic::AtomicFile,
    encoder: Encoder,
    meta: TraceMeta,
    streams: Names,
    devices: Names,
    /// Dictionary values cached between batches, rebuilt only when names were added.
    stream_values: Option<ArrayRef>,
    device_values: Option<ArrayRef>,
    /// The batch being filled.
    cols: Cols,
    rows: u64,
}

/// Writer settings, chosen by measurement (`trace_bench encodings`, see
/// docs/trace-format.md "Encodings"): the integer columns are encoded so that zstd has
/// little left to remove (delta bit-packing for times and offsets, a dictionary for
/// lengths and ops), and are stored without zstd, which there saved under 8% of the
/// file but tripled decode time; the name columns (stream, device) stay zstd.
/// Statistics per column chunk only (readers use row-group statistics; page indexes
/// cost write time and bytes), and none on the name columns (op, stream, device):
/// min/max of names prune nothing, and computing them compared every row's string
/// twice, a quarter of the encoder's time.
fn writer_properties() -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(1).expect("zstd level 1"),
        ))
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        // No page index: the page checksums are added by rewriting the file
        // (`checksum`), which would have to move every index entry too.
        .set_offset_index_disabled(true)
        .set_created_by(format!("storbench {}", env!("CARGO_PKG_VERSION")));
    for c in [COL_OP, COL_LEN, COL_STREAM, COL_DEVICE] {
        b = b.set_column_dictionary_enabled(ColumnPath::from(c), true);
    }
    for c in [COL_OP, COL_STREAM, COL_DEVICE] {
        b = b.set_column_statistics_enabled(ColumnPath::from(c), EnabledStatistics::None);
    }
    // Times grow (issue order) and offsets often run sequentially: delta bit-packing
    // stores the small differences.
    for c in [COL_ISSUE, COL_COMPLETE, COL_OFFSET] {
        b = b.set_column_encoding(ColumnPath::from(c), Encoding::DELTA_BINARY_PACKED);
    }
    for c in [COL_ISSUE, COL_COMPLETE, COL_OFFSET, COL_LEN, COL_OP] {
        b = b.set_column_compression(ColumnPath::from(c), Compression::UNCOMPRESSED);
    }
    b.build()
}

fn to_i64(path: &Path, what: &str, v: u64) -> Result<i64, TraceError> {
    i64::try_from(v).map_err(|_| TraceError::InvalidRecord {
        path: path.to_path_buf(),
        message: format!("{what} = {v} exceeds i64::MAX"),
    })
}

impl TraceWriter {
    pub fn create(path: &Path, meta: &TraceMeta) -> Result<TraceWriter, TraceError> {
        let mut staging = crate::atomic::AtomicFile::create(path)
            .map_err(|e| TraceError::io(path, "create", e))?;
        let file = staging.take_file();
        let writer = ArrowWriter::try_new(
            BufWriter::with_capacity(1 << 20, file),
            arrow_schema(),
            Some(writer_properties()),
        )
        .map_err(|e| TraceError::parquet(path, e))?;
        let encoder = Encoder::start(path, writer)?;
        Ok(TraceWriter {
            path: path.to_path_buf(),
            staging,
            encoder,
            meta: meta.clone(),
            streams: Names::default(),
            devices: Names::default(),
            stream_values: None,
            device_values: None,
            cols: Cols::with_capacity(WRITE_BATCH_ROWS),
            rows: 0,
        })
    }

    pub fn intern_stream(&mut self, name: &str) -> StreamId {
        let before = self.streams.len();
        let id = self.streams.intern(name);
        if self.streams.len() != before {
            self.stream_values = None;
        }
        StreamId(id)
    }

    pub fn intern_device(&mut self, name: &str) -> DeviceId {
        let before = self.devices.len();
        let id = self.devices.intern(name);
        if self.devices.len() != before {
            self.device_values = None;
        }
        DeviceId(id)
    }

    /// The stream names interned so far.
    pub fn streams(&self) -> &Names {
        &self.streams
    }

    /// The device names interned so far.
    pub fn devices(&self) -> &Names {
        &self.devices
    }

    /// Rows written so far (including buffered ones).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Buffers one record; a full batch goes to the Parquet writer, which closes a row
    /// group every [`ROW_GROUP_ROWS`] rows.
    #[inline]
    pub fn write(&mut self, rec: &IoRecord) -> Result<(), TraceError> {
        const MAX: u64 = i64::MAX as u64;
        let bad_complete = matches!(rec.complete_ns, Some(c) if c < rec.issue_ns || c > MAX);
        if rec.issue_ns > MAX
            || rec.offset_bytes > MAX
            || rec.len_bytes > MAX
            || rec.offset_bytes.checked_add(rec.len_bytes).is_none()
            || bad_complete
        {
            return Err(self.invalid(rec));
        }
        let (issue, offset, len) = (
            rec.issue_ns as i64,
            rec.offset_bytes as i64,
            rec.len_bytes as i64,
        );
        let complete = match rec.complete_ns {
            Some(c) => c as i64,
            None => {
                self.cols.complete_nulls += 1;
                -1
            }
        };
        let stream = match rec.stream {
            Some(StreamId(id)) => {
                assert!(
                    (id as usize) < self.streams.len(),
                    "stream id {id} was not interned by this writer"
                );
                id as i32
            }
            None => {
                self.cols.stream_nulls += 1;
                -1
            }
        };
        let device = match rec.device {
            Some(DeviceId(id)) => {
                assert!(
                    (id as usize) < self.devices.len(),
                    "device id {id} was not interned by this writer"
                );
                id as i32
            }
            None => {
                self.cols.device_nulls += 1;
                -1
            }
        };
        let c = &mut self.cols;
        c.issue.push(issue);
        c.complete.push(complete);
        c.offset.push(offset);
        c.len.push(len);
        c.op.push(rec.op.index() as i32);
        c.stream.push(stream);
        c.device.push(device);
        self.rows += 1;
        if c.issue.len() >= WRITE_BATCH_ROWS {
            self.flush_batch()?;
        }
        Ok(())
    }

    /// Why `write` refuses `rec` (the first problem, in column order).
    #[cold]
    fn invalid(&self, rec: &IoRecord) -> TraceError {
        let check = || -> Result<(), TraceError> {
            to_i64(&self.path, "issue_ns", rec.issue_ns)?;
            to_i64(&self.path, "offset_bytes", rec.offset_bytes)?;
            to_i64(&self.path, "len_bytes", rec.len_bytes)?;
            if rec.offset_bytes.checked_add(rec.len_bytes).is_none() {
                return Err(TraceError::InvalidRecord {
                    path: self.path.clone(),
                    message: format!(
                        "offset_bytes {} + len_bytes {} overflows",
                        rec.offset_bytes, rec.len_bytes
                    ),
                });
            }
            if let Some(c) = rec.complete_ns {
                if c < rec.issue_ns {
                    return Err(TraceError::InvalidRecord {
                        path: self.path.clone(),
                        message: format!("complete_ns {c} is before issue_ns {}", rec.issue_ns),
                    });
                }
                to_i64(&self.path, "complete_ns", c)?;
            }
            Ok(())
        };
        check().expect_err("write() found this record invalid")
    }

    pub fn set_meta(&mut self, meta: TraceMeta) {
        self.meta = meta;
    }

    pub fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    /// Hands the batch being filled to the encoder thread.
    fn flush_batch(&mut self) -> Result<(), TraceError> {
        let n = self.cols.len();
        if n == 0 {
            return Ok(());
        }
        assert!(n <= WRITE_BATCH_ROWS);
        fn names_array(names: &Names) -> ArrayRef {
            Arc::new(StringArray::from_iter_values(names.iter()))
        }
        let stream_values = self
            .stream_values
            .get_or_insert_with(|| names_array(&self.streams))
            .clone();
        let device_values = self
            .device_values
            .get_or_insert_with(|| names_array(&self.devices))
            .clone();
        let cols = std::mem::replace(&mut self.cols, self.encoder.empty_cols());
        let job = Job {
            cols,
            stream_values,
            device_values,
        };
        self.encoder.send(&self.path, job)
    }

    /// Flushes the last batch, writes the metadata and the footer; returns the row count.
    pub fn finish(mut self) -> Result<u64, TraceError> {
        self.flush_batch()?;
        let mut writer = self.encoder.join(&self.path)?;
        for (k, v) in meta_to_kv(&self.meta) {
            writer.append_key_value_metadata(KeyValue::new(k, v));
        }
        let md = writer
            .close()
            .map_err(|e| TraceError::parquet(&self.path, e))?;
        let written = u64::try_from(md.file_metadata().num_rows()).unwrap_or(0);
        assert_eq!(
            written, self.rows,
            "parquet row count differs from rows written"
        );
        if self.staging.in_place() {
            // A device or FIFO (not a regular file): written as encoded, in place, with
            // no page checksums (they need a second pass over the file).
            return Ok(self.rows);
        }
        let staged = File::open(self.staging.temp())
            .map_err(|e| TraceError::io(&self.path, "reopen the staged file", e))?;
        let mut out = crate::atomic::AtomicFile::create(&self.path)
            .map_err(|e| TraceError::io(&self.path, "create", e))?;
        {
            let mut w = BufWriter::with_capacity(1 << 20, out.file());
            crate::checksum::add_page_checksums(&staged, &mut w)
                .map_err(|e| TraceError::io(&self.path, "write with page checksums", e))?;
        }
        out.commit()
            .map_err(|e| TraceError::io(&self.path, "write", e))?;
        Ok(self.rows)
    }
}

/// Which columns a [`TraceReader`] decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Columns {
    /// Every column.
    All,
    /// Skip `stream` and `device` (records get `None`): faster.
    NoNames,
    /// Skip `stream` only (characterize judges sequentiality per device).
    NoStream,
}

/// One decoded batch, column by column: what tight loops (characterize) run over
/// without building an [`IoRecord`] per row. Checked like records: times and offsets
/// are non-negative, `offset + len` fits, a known completion is not before its issue.
pub struct ColumnBatch {
    pub issue_ns: ScalarBuffer<i64>,
    /// Completion times; null where unknown (null slots hold arbitrary values).
    pub complete_ns: Option<Int64Array>,
    pub offset_bytes: ScalarBuffer<i64>,
    pub len_bytes: ScalarBuffer<i64>,
    pub ops: Vec<Op>,
    /// Per row: 0 for no device, else the reader's device id + 1 (None when the
    /// column was not read or is absent).
    pub device_slots: Option<Vec<u32>>,
    /// As `device_slots`, for streams.
    pub stream_slots: Option<Vec<u32>>,
}

impl ColumnBatch {
    pub fn len(&self) -> usize {
        self.issue_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.issue_ns.is_empty()
    }

    /// The completion of row `i`, when known.
    #[inline]
    pub fn complete_at(&self, i: usize) -> Option<u64> {
        match &self.complete_ns {
            None => None,
            Some(c) if c.is_null(i) => None,
            Some(c) => Some(c.value(i) as u64),
        }
    }
}

/// Reads a Parquet trace as a stream of bounded batches of [`IoRecord`]s.
pub struct TraceReader {
    path: PathBuf,
    meta: TraceMeta,
    num_rows: u64,
    reader: ParquetRecordBatchReader,
    streams: Names,
    devices: Names,
    /// Column positions in the projected batches.
    idx: ColumnIdx,
    /// Scratch: dictionary value -> global id for the current batch.
    map_scratch: Vec<Option<u32>>,
    /// Rows handed out so far: at the end they must be the footer's count.
    rows_read: u64,
    /// The last row's issue time (rows must not go back in time), unless `any_order`.
    last_issue_ns: Option<i64>,
    any_order: bool,
}

#[derive(Clone, Copy, Debug)]
struct ColumnIdx {
    issue: usize,
    complete: Option<usize>,
    offset: usize,
    len: usize,
    op: usize,
    stream: Option<usize>,
    device: Option<usize>,
}

impl TraceReader {
    pub fn open(path: &Path) -> Result<TraceReader, TraceError> {
        Self::open_columns(path, Columns::All)
    }

    /// Opens decoding only the columns asked for.
    pub fn open_columns(path: &Path, columns: Columns) -> Result<TraceReader, TraceError> {
        Self::open_columns_batched(path, columns, BATCH_ROWS)
    }

    /// As [`TraceReader::open_columns`], with batches of at most `batch_rows` rows. A
    /// reader that goes over each batch once wants them small enough to stay in L2
    /// (characterize: 8K rows, 5% less CPU than 64K; the decoded buffers are reused
    /// warm instead of fresh ones being zeroed).
    ///
    /// A `stream` or `device` column holding only nulls is not decoded at all (see
    /// `dictionary_column_all_null`): characterize of a 1 M-I/O synthesized trace
    /// (no device names) went from 0.21 to 0.07 CPU-s. Where reading costs otherwise
    /// (characterize, 10 M bench trace, perf samples of the whole run): parquet-rs
    /// delta decoding 3.2% plus bit unpacking 1.5%, dictionary keys 1.9%, `read`
    /// copies from the page cache 1.8%, buffer zeroing about 1%; the checks and
    /// per-batch vectors here about 3.5%. A decoder of our own for the column chunks
    /// was removed (issue 22): it won 1.067x on a whole `characterize`, under the 1.5x a
    /// hand-written replacement must win (docs/benchmarks.md, "trace: hand-written
    /// code").
    pub fn open_columns_batched(
        path: &Path,
        columns: Columns,
        batch_rows: usize,
    ) -> Result<TraceReader, TraceError> {
        assert!(batch_rows > 0);
        let (builder, file_for_chunks) = open_parquet(path)?;
        let file_md = builder.metadata().file_metadata();
        let num_rows = u64::try_from(file_md.num_rows())
            .map_err(|_| TraceError::schema(path, "negative row count"))?;
        let meta = meta_from_kv(
            path,
            file_md
                .key_value_metadata()
                .into_iter()
                .flatten()
                .filter_map(|kv| kv.value.as_deref().map(|v| (kv.key.as_str(), v))),
        )?;
        check_writer(path, file_md)?;
        let (projected, idx) = project_columns(path, &builder, &file_for_chunks, columns)?;
        let mask = ProjectionMask::roots(builder.parquet_schema(), projected);
        let reader = builder
            .with_projection(mask)
            .with_batch_size(batch_rows)
            .build()
            .map_err(|e| TraceError::parquet(path, e))?;
        Ok(TraceReader {
            path: path.to_path_buf(),
            meta,
            num_rows,
            reader,
            streams: Names::default(),
            devices: Names::default(),
            idx,
            map_scratch: Vec::new(),
            rows_read: 0,
            last_issue_ns: None,
            any_order: false,
        })
    }

    pub fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    pub fn num_rows(&self) -> u64 {
        self.num_rows
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Names of the stream ids handed out so far.
    pub fn streams(&self) -> &Names {
        &self.streams
    }

    /// Names of the device ids handed out so far.
    pub fn devices(&self) -> &Names {
        &self.devices
    }

    /// Clears `out` and fills it with the next batch (at most [`BATCH_ROWS`] records).
    /// Returns false, with `out` empty, at the end of the trace.
    pub fn next_batch(&mut self, out: &mut Vec<IoRecord>) -> Result<bool, TraceError> {
        out.clear();
        let Some(b) = self.next_columns()? else {
            return Ok(false);
        };
        out.reserve(b.len());
        let slot = |s: &Option<Vec<u32>>, i: usize| s.as_ref().and_then(|v| v[i].checked_sub(1));
        for i in 0..b.len() {
            out.push(IoRecord {
                issue_ns: b.issue_ns[i] as u64,
                complete_ns: b.complete_at(i),
                offset_bytes: b.offset_bytes[i] as u64,
                len_bytes: b.len_bytes[i] as u64,
                op: b.ops[i],
                stream: slot(&b.stream_slots, i).map(StreamId),
                device: slot(&b.device_slots, i).map(DeviceId),
            });
        }
        Ok(true)
    }

    /// The next batch (at most [`BATCH_ROWS`] rows) as checked columns; None at the end.
    pub fn next_columns(&mut self) -> Result<Option<ColumnBatch>, TraceError> {
        let b = self.next_columns_unchecked().map_err(|e| match e {
            // Name the row in the trace, not in the batch.
            TraceError::Schema { path, message } => TraceError::Schema {
                message: trace_row(&message, self.rows_read).unwrap_or(message),
                path,
            },
            e => e,
        })?;
        match &b {
            Some(b) => self.rows_read += b.len() as u64,
            None if self.rows_read != self.num_rows => {
                // The footer and the pages disagree: a corrupt file, not a short trace.
                return Err(TraceError::schema(
                    &self.path,
                    format!(
                        "the footer counts {} rows but the pages hold {}: the file is corrupt",
                        self.num_rows, self.rows_read
                    ),
                ));
            }
            None => {}
        }
        Ok(b)
    }

    fn next_columns_unchecked(&mut self) -> Result<Option<ColumnBatch>, TraceError> {
        loop {
            let batch = match self.reader.next() {
                None => return Ok(None),
                Some(b) => b.map_err(|e| TraceError::arrow(&self.path, e))?,
            };
            if batch.num_rows() == 0 {
                continue;
            }
            return self.decode(&batch).map(Some);
        }
    }

    /// Reads rows in whatever order they are (the sort of an unsorted trace does);
    /// otherwise a row issued before the row before it is an error
    /// ([`TraceError::Unsorted`]).
    pub fn any_order(mut self) -> Self {
        self.any_order = true;
        self
    }

    /// Rows in non-decreasing issue order, within the batch and after the last one.
    fn check_order(&mut self, issue: &[i64]) -> Result<(), TraceError> {
        let Some(&first) = issue.first() else {
            return Ok(());
        };
        let prev = self.last_issue_ns.unwrap_or(first);
        // Both are >= 0 (checked): a difference is negative exactly when a row goes
        // back; an OR of them vectorises.
        let back = issue
            .windows(2)
            .fold(first.wrapping_sub(prev), |a, w| a | w[1].wrapping_sub(w[0]));
        if back < 0 {
            let (row, before) = if first < prev {
                (0, prev)
            } else {
                let i = (1..issue.len())
                    .find(|&i| issue[i] < issue[i - 1])
                    .expect("a row goes back");
                (i, issue[i - 1])
            };
            return Err(TraceError::Unsorted {
                path: self.path.clone(),
                row: self.rows_read + row as u64,
                issue_ns: issue[row] as u64,
                previous_ns: before as u64,
            });
        }
        self.last_issue_ns = issue.last().copied();
        Ok(())
    }

    fn decode(&mut self, batch: &RecordBatch) -> Result<ColumnBatch, TraceError> {
        let path = self.path.clone();
        let issue = int_column(&path, COL_ISSUE, batch.column(self.idx.issue), false)?;
        let offset = int_column(&path, COL_OFFSET, batch.column(self.idx.offset), false)?;
        let len = int_column(&path, COL_LEN, batch.column(self.idx.len), false)?;
        let complete = match self.idx.complete.map(|i| batch.column(i)) {
            Some(c) if c.null_count() == c.len() => None,
            Some(c) => {
                let values = int_column(&path, COL_COMPLETE, c, true)?;
                Some(Int64Array::new(values, c.logical_nulls()))
            }
            None => None,
        };
        check_rows(&path, &issue, &offset, &len, complete.as_ref())?;
        if !self.any_order {
            self.check_order(&issue)?;
        }
        let ops = op_values(&path, batch.column(self.idx.op))?;
        let stream_slots = match self.idx.stream {
            Some(i) => Some(name_slots(
                &path,
                COL_STREAM,
                batch.column(i),
                &mut self.streams,
                &mut self.map_scratch,
            )?),
            None => None,
        };
        let device_slots = match self.idx.device {
            Some(i) => Some(name_slots(
                &path,
                COL_DEVICE,
                batch.column(i),
                &mut self.devices,
                &mut self.map_scratch,
            )?),
            None => None,
        };
        Ok(ColumnBatch {
            issue_ns: issue,
            complete_ns: complete,
            offset_bytes: offset,
            len_bytes: len,
            ops,
            device_slots,
            stream_slots,
        })
    }
}

/// The checks across columns of one batch (both readers): `offset + len` fits, and no
/// known completion is before its issue. All values are >= 0 (checked per column).
pub(crate) fn check_rows(
    path: &Path,
    issue_v: &[i64],
    offset: &[i64],
    len: &[i64],
    complete: Option<&Int64Array>,
) -> Result<(), TraceError> {
    // Both are >= 0: the sum overflows exactly when it wraps negative.
    let overflow = offset
        .iter()
        .zip(len.iter())
        .fold(0i64, |a, (&o, &l)| a | o.wrapping_add(l));
    if overflow < 0 {
        let row = (0..offset.len())
            .find(|&i| offset[i].checked_add(len[i]).is_none())
            .expect("an overflowing row exists");
        return Err(TraceError::schema(
            path,
            format!(
                "{BATCH_ROW}{row}: offset_bytes {} + len_bytes {} overflows",
                offset[row], len[row]
            ),
        ));
    }
    if let Some(c) = complete {
        let cv: &[i64] = c.values();
        let before = match c.nulls() {
            // Both are >= 0 (checked above), so `c - i` cannot overflow and is negative
            // exactly when c < i: an OR of differences vectorises, where an `any` with
            // its early exit took half of this function's time.
            None => {
                issue_v
                    .iter()
                    .zip(cv)
                    .fold(0i64, |a, (&i, &c)| a | c.wrapping_sub(i))
                    < 0
            }
            Some(nb) => issue_v
                .iter()
                .zip(cv)
                .enumerate()
                .any(|(r, (&i, &c))| c < i && nb.is_valid(r)),
        };
        if before {
            let row = (0..cv.len())
                .find(|&r| cv[r] < issue_v[r] && c.is_valid(r))
                .expect("a row completing before its issue exists");
            return Err(TraceError::schema(
                path,
                format!(
                    "{BATCH_ROW}{row}: complete_ns {} before issue_ns {}",
                    cv[row], issue_v[row]
                ),
            ));
        }
    }
    Ok(())
}

/// Opens `path` as a Parquet file with a sound footer; with a second handle to the
/// file, for reading column chunks directly.
fn open_parquet(
    path: &Path,
) -> Result<(ParquetRecordBatchReaderBuilder<File>, Arc<File>), TraceError> {
    let file = File::open(path).map_err(|e| TraceError::io(path, "open", e))?;
    let file_len = file
        .metadata()
        .map_err(|e| TraceError::io(path, "stat", e))?
        .len();
    let file_for_chunks = Arc::new(
        file.try_clone()
            .map_err(|e| TraceError::io(path, "open", e))?,
    );
    // A file without a readable Parquet footer is the user's input, not a failure of
    // ours: say what it is not (a text trace passed where a Parquet one belongs).
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| TraceError::Format {
            path: path.to_path_buf(),
            message: format!("not a Parquet trace file ({e})"),
        })?;
    check_footer(path, builder.metadata(), file_len)?;
    Ok((builder, file_for_chunks))
}

/// Refuses a footer that lost what its writer always puts there (a corrupt footer).
fn check_writer(path: &Path, file_md: &FileMetaData) -> Result<(), TraceError> {
    // storbench always writes its format version: a storbench file without it lost
    // its key-value list to a corrupt footer (the list is skipped, not refused).
    let ours = file_md
        .created_by()
        .is_some_and(|c| c.starts_with("storbench"));
    let has_version = file_md.key_value_metadata().is_some_and(|kv| {
        kv.iter()
            .any(|kv| kv.key == format!("{KEY_PREFIX}trace_format_version"))
    });
    // A footer naming no writer and holding no key-value pairs: every common
    // writer (pyarrow, DuckDB, Polars, Spark, storbench) sets both, and a flipped
    // byte in a storbench footer can make the parser skip both.
    let anonymous = file_md.created_by().is_none()
        && file_md.key_value_metadata().is_none_or(|kv| kv.is_empty());
    if anonymous {
        return Err(TraceError::schema(
            path,
            "the footer names no writer (created_by) and holds no metadata: a corrupt footer, \
             or a writer storbench does not know (rewrite the file with pyarrow or DuckDB)",
        ));
    }
    if ours && !has_version {
        return Err(TraceError::schema(
            path,
            "written by storbench but without its metadata (storbench.trace_format_version): the footer is corrupt",
        ));
    }
    Ok(())
}

/// The columns to read, in file order, and where each lands in a projected batch
/// (which keeps the file's column order). Checks their types.
fn project_columns(
    path: &Path,
    builder: &ParquetRecordBatchReaderBuilder<File>,
    file_for_chunks: &Arc<File>,
    columns: Columns,
) -> Result<(Vec<usize>, ColumnIdx), TraceError> {
    let schema = builder.schema();
    let find = |name: &str| schema.fields().iter().position(|f| f.name() == name);
    let need = |name: &str| {
        find(name).ok_or_else(|| {
            TraceError::schema(
                path,
                format!("missing column `{name}` (see docs/trace-format.md)"),
            )
        })
    };
    let mut wanted = vec![
        need(COL_ISSUE)?,
        need(COL_OFFSET)?,
        need(COL_LEN)?,
        need(COL_OP)?,
    ];
    let opt_complete = find(COL_COMPLETE);
    wanted.extend(opt_complete);
    let (opt_stream, opt_device) = name_columns(path, builder, file_for_chunks, columns)?;
    wanted.extend(opt_stream);
    wanted.extend(opt_device);
    for &i in &wanted {
        let f = schema.field(i);
        let ok = match f.name().as_str() {
            COL_OP | COL_STREAM | COL_DEVICE => is_string_like(f.data_type()),
            _ => f.data_type().is_integer() || f.data_type().is_floating(),
        };
        if !ok {
            return Err(TraceError::schema(
                path,
                format!("column `{}` has type {}", f.name(), f.data_type()),
            ));
        }
    }
    wanted.sort_unstable();
    let pos = |i: usize| wanted.iter().position(|&x| x == i).expect("projected");
    let idx = ColumnIdx {
        issue: pos(need(COL_ISSUE)?),
        complete: opt_complete.map(pos),
        offset: pos(need(COL_OFFSET)?),
        len: pos(need(COL_LEN)?),
        op: pos(need(COL_OP)?),
        stream: opt_stream.map(pos),
        device: opt_device.map(pos),
    };
    Ok((wanted, idx))
}

/// The stream and device name columns to read: those `columns` asks for that the file
/// has, unless they hold only nulls.
fn name_columns(
    path: &Path,
    builder: &ParquetRecordBatchReaderBuilder<File>,
    file_for_chunks: &Arc<File>,
    columns: Columns,
) -> Result<(Option<usize>, Option<usize>), TraceError> {
    let schema = builder.schema();
    let find = |name: &str| schema.fields().iter().position(|f| f.name() == name);
    let (opt_stream, opt_device) = match columns {
        Columns::All => (find(COL_STREAM), find(COL_DEVICE)),
        Columns::NoNames => (None, None),
        Columns::NoStream => (None, find(COL_DEVICE)),
    };
    // A name column that holds only nulls reads as no column: same rows, but
    // parquet turns an all-null dictionary column into per-row values that it
    // hashes back into a dictionary, batch by batch (measured: 56% of the CPU time
    // of characterize on a synthesized trace, whose device column is all null).
    let all_null = |name: &str| -> Result<bool, TraceError> {
        let leaf = builder
            .parquet_schema()
            .columns()
            .iter()
            .position(|c| c.path().parts() == [name]);
        match leaf {
            Some(leaf) => {
                dictionary_column_all_null(path, file_for_chunks, builder.metadata(), leaf)
            }
            None => Ok(false),
        }
    };
    let opt_stream = match opt_stream {
        Some(_) if all_null(COL_STREAM)? => None,
        o => o,
    };
    let opt_device = match opt_device {
        Some(_) if all_null(COL_DEVICE)? => None,
        o => o,
    };
    Ok((opt_stream, opt_device))
}

/// Whether parquet leaf column `leaf` can hold nothing but nulls in any row group:
/// each chunk starts with a dictionary page of no entries and all its data pages are
/// dictionary-encoded, so no row can have a value (parquet-rs decodes such a chunk as
/// all null without looking at the keys). Reads only that column's pages, and stops at
/// the first chunk with a dictionary entry (one page).
fn dictionary_column_all_null(
    path: &Path,
    file: &Arc<File>,
    md: &ParquetMetaData,
    leaf: usize,
) -> Result<bool, TraceError> {
    for rg in md.row_groups() {
        let chunk = rg.column(leaf);
        let rows = usize::try_from(rg.num_rows())
            .map_err(|_| TraceError::schema(path, "negative row count in a row group"))?;
        let mut pages = SerializedPageReader::new(Arc::clone(file), chunk, rows, None)
            .map_err(|e| TraceError::parquet(path, e))?;
        let first = pages
            .get_next_page()
            .map_err(|e| TraceError::parquet(path, e))?;
        if !matches!(first, Some(Page::DictionaryPage { num_values: 0, .. })) {
            return Ok(false);
        }
        while let Some(page) = pages
            .get_next_page()
            .map_err(|e| TraceError::parquet(path, e))?
        {
            let dict_keys = matches!(
                page.encoding(),
                Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY
            );
            if !page.is_data_page() || !dict_keys {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// A text column: Utf8, LargeUtf8 or Utf8View, plain or as a dictionary with keys of
/// any integer type (pandas writes Dictionary(Int8, Utf8) for a categorical, Polars
/// Dictionary(UInt32, LargeUtf8) or Utf8View).
fn is_string_like(t: &DataType) -> bool {
    let text = |t: &DataType| matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
    match t {
        DataType::Dictionary(k, v) => k.is_integer() && text(v),
        t => text(t),
    }
}

/// An integer array of any width and signedness as i64 values (None for another
/// type); a UInt64 value above i64::MAX becomes -1, refused as negative.
fn ints_as_i64(col: &dyn Array) -> Option<Vec<i64>> {
    macro_rules! widen {
        ($($t:ty),+) => {$(
            if let Some(a) = col.as_any().downcast_ref::<PrimitiveArray<$t>>() {
                return Some(
                    a.values()
                        .iter()
                        .map(|&v| i64::try_from(v).unwrap_or(-1))
                        .collect(),
                );
            }
        )+};
    }
    widen!(
        Int8Type, Int16Type, Int32Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type
    );
    if let Some(a) = col.as_any().downcast_ref::<Int64Array>() {
        return Some(a.values().to_vec());
    }
    None
}

/// The largest integer a float holds exactly (2^53).
const FLOAT_EXACT: f64 = 9_007_199_254_740_992.0;

/// A float column's values as i64 (pandas turns an integer column with nulls into
/// float64): each valid value must be a whole number from 0 to 2^53, which a float
/// holds exactly; the error names the first row that is not.
fn floats_as_i64(path: &Path, name: &str, col: &dyn Array) -> Option<Result<Vec<i64>, TraceError>> {
    let vals: Vec<f64> = if let Some(a) = col.as_any().downcast_ref::<PrimitiveArray<Float64Type>>() {
        a.values().to_vec()
    } else if let Some(a) = col.as_any().downcast_ref::<PrimitiveArray<Float32Type>>() {
        a.values().iter().map(|&v| f64::from(v)).collect()
    } else {
        return None;
    };
    let mut out = Vec::with_capacity(vals.len());
    for (i, &v) in vals.iter().enumerate() {
        if col.is_null(i) {
            out.push(0);
        } else if v.fract() == 0.0 && (0.0..=FLOAT_EXACT).contains(&v) {
            out.push(v as i64);
        } else {
            return Some(Err(TraceError::schema(
                path,
                format!(
                    "{BATCH_ROW}{i}: column `{name}` holds {v}, not a whole number from 0 to 2^53 \
                     (a float column must hold integers exactly)"
                ),
            )));
        }
    }
    Some(Ok(out))
}

/// Values of an integer column (any width or signedness, or a float column holding
/// whole numbers) as i64, all valid ones >= 0 (negative values, or values above
/// i64::MAX, are an error; nulls are only allowed when `nullable`, and null slots may
/// hold anything). The format's own Int64 is taken as it is, without a copy.
fn int_column(
    path: &Path,
    name: &str,
    col: &ArrayRef,
    nullable: bool,
) -> Result<ScalarBuffer<i64>, TraceError> {
    if !nullable && col.null_count() > 0 {
        return Err(nulls_error(path, name));
    }
    if let Some(a) = col.as_any().downcast_ref::<Int64Array>() {
        check_non_negative(path, name, a.values(), a.nulls())?;
        return Ok(a.values().clone());
    }
    let vals = match ints_as_i64(col.as_ref()) {
        Some(v) => v,
        None => match floats_as_i64(path, name, col.as_ref()) {
            Some(v) => v?,
            None => {
                return Err(TraceError::schema(
                    path,
                    format!("column `{name}` has type {}", col.data_type()),
                ))
            }
        },
    };
    check_non_negative(path, name, &vals, col.logical_nulls().as_ref())?;
    Ok(ScalarBuffer::from(vals))
}

/// A column that must not have nulls has some (both readers).
pub(crate) fn nulls_error(path: &Path, name: &str) -> TraceError {
    TraceError::schema(path, format!("column `{name}` has nulls"))
}

/// Every valid value of column `name` is >= 0 (both readers).
pub(crate) fn check_non_negative(
    path: &Path,
    name: &str,
    vals: &[i64],
    nulls: Option<&NullBuffer>,
) -> Result<(), TraceError> {
    let bad = match nulls {
        // OR of all values: negative iff any value is (vectorises).
        None => vals.iter().fold(0i64, |x, &v| x | v) < 0,
        Some(nb) => vals
            .iter()
            .enumerate()
            .any(|(i, &v)| v < 0 && nb.is_valid(i)),
    };
    if bad {
        let row = (0..vals.len())
            .find(|&i| vals[i] < 0 && nulls.is_none_or(|nb| nb.is_valid(i)))
            .expect("a negative value exists");
        return Err(TraceError::schema(
            path,
            format!(
                "{BATCH_ROW}{row}: column `{name}` holds {} (negative, or above 2^63)",
                vals[row]
            ),
        ));
    }
    Ok(())
}

/// Errors about one row of a batch start with this and the row's index in the batch;
/// [`TraceReader::next_columns`] turns it into the row's number in the trace.
pub(crate) const BATCH_ROW: &str = "batch row ";

/// `message` with a leading `batch row N` made `row BASE+N` (0-based in the trace).
fn trace_row(message: &str, base: u64) -> Option<String> {
    let rest = message.strip_prefix(BATCH_ROW)?;
    let end = rest.find(|c: char| !c.is_ascii_digit())?;
    let local: u64 = rest[..end].parse().ok()?;
    Some(format!("row {}{}", base + local, &rest[end..]))
}

/// The op named `s` (None: no string), or the error both readers give.
pub(crate) fn parse_op(path: &Path, s: Option<&str>) -> Result<Op, TraceError> {
    s.and_then(Op::parse).ok_or_else(|| {
        TraceError::schema(
            path,
            format!("column `op` has value {s:?}; expected read, write, trim or flush"),
        )
    })
}

/// The slot of name id `id` in column `name`: id + 1 (both readers).
pub(crate) fn name_slot(path: &Path, name: &str, id: u32) -> Result<u32, TraceError> {
    id.checked_add(1)
        .ok_or_else(|| TraceError::schema(path, format!("column `{name}`: too many names")))
}

/// A dictionary key of name column `name` that names no entry (both readers).
pub(crate) fn bad_key_error(path: &Path, name: &str) -> TraceError {
    TraceError::schema(path, format!("column `{name}`: bad key"))
}

fn string_at(values: &ArrayRef, i: usize) -> Option<&str> {
    if values.is_null(i) {
        return None;
    }
    if let Some(s) = values.as_any().downcast_ref::<StringArray>() {
        return Some(s.value(i));
    }
    if let Some(s) = values.as_any().downcast_ref::<LargeStringArray>() {
        return Some(s.value(i));
    }
    if let Some(s) = values.as_any().downcast_ref::<StringViewArray>() {
        return Some(s.value(i));
    }
    None
}

/// A dictionary column of any key type: its keys as i64 (a key that names no entry is
/// caught where it is used) and its values. None for a column that is no dictionary.
fn any_dictionary(col: &ArrayRef) -> Option<(Vec<i64>, &ArrayRef)> {
    let d = col.as_any_dictionary_opt()?;
    let keys = ints_as_i64(d.keys())?;
    Some((keys, d.values()))
}

fn op_values(path: &Path, col: &ArrayRef) -> Result<Vec<Op>, TraceError> {
    if col.null_count() > 0 {
        return Err(nulls_error(path, COL_OP));
    }
    let parse = |s: Option<&str>| parse_op(path, s);
    if let Some(d) = col.as_any().downcast_ref::<DictionaryArray<Int32Type>>() {
        let values = d.values();
        let mut table = Vec::with_capacity(values.len());
        for i in 0..values.len() {
            // Unused dictionary entries may be anything; fail only when referenced.
            table.push(parse(string_at(values, i)).ok());
        }
        let keys: &[i32] = d.keys().values();
        // Fast path: every key names a valid entry, so no row can fail: a plain lookup.
        let (lo, hi) = keys
            .iter()
            .fold((i32::MAX, i32::MIN), |(lo, hi), &k| (lo.min(k), hi.max(k)));
        if lo >= 0 && (hi as usize) < table.len() && table.iter().all(Option::is_some) {
            if table.len() <= 4 {
                // The usual dictionary (at most the four ops): a fixed table indexed by
                // the key's low bits, no bounds check per row.
                let mut ops = [Op::Read; 4];
                for (o, t) in ops.iter_mut().zip(&table) {
                    *o = t.expect("checked");
                }
                return Ok(keys.iter().map(|&k| ops[k as usize & 3]).collect());
            }
            let ops: Vec<Op> = table.iter().map(|o| o.expect("checked")).collect();
            return Ok(keys.iter().map(|&k| ops[k as usize]).collect());
        }
        let mut out = Vec::with_capacity(d.len());
        for &k in keys {
            let op = usize::try_from(k)
                .ok()
                .and_then(|k| table.get(k).copied().flatten());
            match op {
                Some(op) => out.push(op),
                None => {
                    return Err(
                        parse(usize::try_from(k).ok().and_then(|k| string_at(values, k)))
                            .err()
                            .unwrap_or_else(|| TraceError::schema(path, "bad op dictionary key")),
                    );
                }
            }
        }
        return Ok(out);
    }
    if let Some((keys, values)) = any_dictionary(col) {
        // Another key type (pandas' Int8, Polars' UInt32): entry by entry.
        let mut table: Vec<Option<Op>> = Vec::with_capacity(values.len());
        for i in 0..values.len() {
            table.push(parse(string_at(values, i)).ok());
        }
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            let entry = usize::try_from(k).ok().filter(|&k| k < values.len());
            match entry.and_then(|k| table[k]) {
                Some(op) => out.push(op),
                None => {
                    return Err(parse(entry.and_then(|k| string_at(values, k)))
                        .err()
                        .unwrap_or_else(|| TraceError::schema(path, "bad op dictionary key")))
                }
            }
        }
        return Ok(out);
    }
    let mut out = Vec::with_capacity(col.len());
    for i in 0..col.len() {
        out.push(parse(string_at(col, i))?);
    }
    Ok(out)
}

/// Per-row name slots for a stream/device column: 0 for null, else the global name
/// id + 1 (names interned into `names`).
fn name_slots(
    path: &Path,
    name: &str,
    col: &ArrayRef,
    names: &mut Names,
    scratch: &mut Vec<Option<u32>>,
) -> Result<Vec<u32>, TraceError> {
    let slot = |id: u32| name_slot(path, name, id);
    if let Some(d) = col.as_any().downcast_ref::<DictionaryArray<Int32Type>>() {
        let values = d.values();
        scratch.clear();
        // Intern lazily: only dictionary entries that rows reference become names.
        scratch.resize(values.len(), None);
        let nulls = d.logical_nulls();
        let keys: &[i32] = d.keys().values();
        // Fast path: one name for the whole batch (one device, typically).
        let no_nulls = nulls.as_ref().is_none_or(|nb| nb.null_count() == 0);
        if let (true, Some(&k0)) = (no_nulls, keys.first()) {
            // An OR of differences vectorises; an early-exit `all` did not.
            if keys.iter().fold(0, |a, &k| a | (k ^ k0)) == 0 {
                if let Some(s) = usize::try_from(k0)
                    .ok()
                    .filter(|&k| k < values.len())
                    .and_then(|k| string_at(values, k))
                {
                    return Ok(vec![slot(names.intern(s))?; keys.len()]);
                }
            }
        }
        let mut out = Vec::with_capacity(d.len());
        for (row, &k) in keys.iter().enumerate() {
            if nulls.as_ref().is_some_and(|nb| nb.is_null(row)) {
                out.push(0);
                continue;
            }
            let k = usize::try_from(k)
                .ok()
                .filter(|&k| k < values.len())
                .ok_or_else(|| bad_key_error(path, name))?;
            let id = match scratch[k] {
                Some(id) => id,
                None => {
                    let s = string_at(values, k).ok_or_else(|| {
                        TraceError::schema(path, format!("column `{name}`: bad dictionary value"))
                    })?;
                    let id = slot(names.intern(s))?;
                    scratch[k] = Some(id);
                    id
                }
            };
            out.push(id);
        }
        return Ok(out);
    }
    if let Some((keys, values)) = any_dictionary(col) {
        // Another key type (pandas' Int8, Polars' UInt32): entry by entry.
        scratch.clear();
        scratch.resize(values.len(), None);
        let nulls = col.logical_nulls();
        let mut out = Vec::with_capacity(keys.len());
        for (row, k) in keys.into_iter().enumerate() {
            if nulls.as_ref().is_some_and(|nb| nb.is_null(row)) {
                out.push(0);
                continue;
            }
            let k = usize::try_from(k)
                .ok()
                .filter(|&k| k < values.len())
                .ok_or_else(|| bad_key_error(path, name))?;
            let id = match scratch[k] {
                Some(id) => id,
                None => {
                    let s = string_at(values, k).ok_or_else(|| {
                        TraceError::schema(path, format!("column `{name}`: bad dictionary value"))
                    })?;
                    let id = slot(names.intern(s))?;
                    scratch[k] = Some(id);
                    id
                }
            };
            out.push(id);
        }
        return Ok(out);
    }
    let mut out = Vec::with_capacity(col.len());
    for i in 0..col.len() {
        out.push(match string_at(col, i) {
            Some(s) => slot(names.intern(s))?,
            None => 0,
        });
    }
    Ok(out)
}

/// Every column chunk of the footer lies inside the file, with sizes and counts that
/// are not negative: a corrupt footer is an error here, not a panic in parquet (which
/// asserts on negative offsets) or a read at a wild offset.
fn check_footer(
    path: &Path,
    md: &parquet::file::metadata::ParquetMetaData,
    file_len: u64,
) -> Result<(), TraceError> {
    let corrupt = |what: String| TraceError::schema(path, format!("corrupt footer: {what}"));
    if md.file_metadata().num_rows() < 0 {
        return Err(corrupt("negative row count".into()));
    }
    let mut rows = 0i64;
    for (g, rg) in md.row_groups().iter().enumerate() {
        if rg.num_rows() < 0 {
            return Err(corrupt(format!("row group {g} has a negative row count")));
        }
        rows = rows.saturating_add(rg.num_rows());
        for c in rg.columns() {
            let start = c.dictionary_page_offset().unwrap_or(c.data_page_offset());
            let len = c.compressed_size();
            let inside = start >= 4
                && c.data_page_offset() >= start
                && len >= 0
                && c.num_values() >= 0
                && (start as u64)
                    .checked_add(len as u64)
                    .is_some_and(|end| end <= file_len);
            if !inside {
                return Err(corrupt(format!(
                    "row group {g}, column {}: chunk at byte {start}, {len} bytes, outside the file ({file_len} bytes)",
                    c.column_path()
                )));
            }
        }
    }
    if rows != md.file_metadata().num_rows() {
        return Err(corrupt(format!(
            "the row groups hold {rows} rows, the file says {}",
            md.file_metadata().num_rows()
        )));
    }
    Ok(())
}

/// Reads a whole trace into memory (tests and small traces only).
pub fn read_all(path: &Path) -> Result<(TraceMeta, Vec<IoRecord>, Names, Names), TraceError> {
    let mut r = TraceReader::open(path)?;
    let mut all = Vec::new();
    let mut batch = Vec::new();
    while r.next_batch(&mut batch)? {
        all.extend_from_slice(&batch);
    }
    assert_eq!(
        all.len() as u64,
        r.num_rows(),
        "rows read differ from footer row count"
    );
    Ok((r.meta.clone(), all, r.streams.clone(), r.devices.clone()))
}

#[cfg(test)]
mod reader_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(op: Op, off: u64, len: u64, t: u64, c: Option<u64>) -> IoRecord {
        IoRecord {
            complete_ns: c,
            ..IoRecord::new(op, off, len, t)
        }
    }

    #[test]
    fn round_trip_records_names_and_meta() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut meta = TraceMeta {
            source_format: Some("fio-iolog-v3".into()),
            capacity_bytes: Some(1 << 30),
            ..Default::default()
        };
        let mut w = TraceWriter::create(&path, &meta).unwrap();
        let a = w.intern_stream("fio");
        let b = w.intern_stream("kworker/0:1");
        let d = w.intern_device("8,16");
        let mut want = Vec::new();
        for i in 0..(BATCH_ROWS as u64 * 2 + 17) {
            let mut r = rec(Op::ALL[(i % 4) as usize], i * 4096, 4096, i * 100, None);
            if i % 3 == 0 {
                r.complete_ns = Some(i * 100 + 50);
            }
            r.stream = match i % 5 {
                0 => None,
                1 | 2 => Some(a),
                _ => Some(b),
            };
            r.device = (i % 2 == 0).then_some(d);
            w.write(&r).unwrap();
            want.push(r);
        }
        meta.extra.insert("import.dropped".into(), "3".into());
        w.set_meta(meta.clone());
        assert_eq!(w.finish().unwrap(), want.len() as u64);
        let (got_meta, got, streams, devices) = read_all(&path).unwrap();
        assert_eq!(got_meta, meta);
        assert_eq!(got.len(), want.len());
        // Ids may be renumbered by the reader: compare through names.
        for (g, w_) in got.iter().zip(&want) {
            assert_eq!(g.issue_ns, w_.issue_ns);
            assert_eq!(g.complete_ns, w_.complete_ns);
            assert_eq!(
                (g.offset_bytes, g.len_bytes, g.op),
                (w_.offset_bytes, w_.len_bytes, w_.op)
            );
            let sname = |s: Option<StreamId>, n: &Names| s.map(|s| n.get(s.0).unwrap().to_owned());
            let wn: Vec<String> = ["fio", "kworker/0:1"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            assert_eq!(
                sname(g.stream, &streams),
                w_.stream.map(|s| wn[s.0 as usize].clone())
            );
            assert_eq!(
                g.device.map(|d| devices.get(d.0).unwrap()),
                w_.device.map(|_| "8,16")
            );
        }
    }

    #[test]
    fn batches_with_no_some_and_all_nulls_round_trip() {
        // Batch by batch a column has no nulls, only nulls, or some: the writer keeps
        // nulls as counted -1s and reuses emptied batches, so each case must reset.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut w = TraceWriter::create(&path, &TraceMeta::default()).unwrap();
        let s = w.intern_stream("app");
        let d = w.intern_device("259,0");
        let mut want = Vec::new();
        let n = WRITE_BATCH_ROWS as u64;
        for i in 0..(n * 6 + 5) {
            let batch = i / n;
            let mut r = rec(Op::Write, i * 512, 512, i * 10, None);
            let some = |k: u64| match batch % 3 {
                0 => true,
                1 => false,
                _ => (i + k) % 7 < 3,
            };
            r.complete_ns = some(0).then_some(i * 10 + 3);
            r.stream = some(1).then_some(s);
            r.device = (!some(2)).then_some(d);
            w.write(&r).unwrap();
            want.push(r);
        }
        assert_eq!(w.finish().unwrap(), want.len() as u64);
        let (_, got, streams, devices) = read_all(&path).unwrap();
        assert_eq!(got.len(), want.len());
        for (i, (g, w_)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g.complete_ns, w_.complete_ns, "row {i}");
            assert_eq!(
                g.stream.map(|x| streams.get(x.0).unwrap()),
                w_.stream.map(|_| "app"),
                "row {i}"
            );
            assert_eq!(
                g.device.map(|x| devices.get(x.0).unwrap()),
                w_.device.map(|_| "259,0"),
                "row {i}"
            );
            assert_eq!((g.issue_ns, g.offset_bytes), (w_.issue_ns, w_.offset_bytes));
        }
    }

    #[test]
    fn reader_batches_are_bounded_and_projection_drops_names() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut w = TraceWriter::create(&path, &TraceMeta::default()).unwrap();
        let s = w.intern_stream("x");
        for i in 0..(BATCH_ROWS as u64 + 5) {
            let mut r = rec(Op::Read, i, 1, i, Some(i + 1));
            r.stream = Some(s);
            w.write(&r).unwrap();
        }
        w.finish().unwrap();
        let mut r = TraceReader::open_columns(&path, Columns::NoNames).unwrap();
        assert_eq!(r.num_rows(), BATCH_ROWS as u64 + 5);
        let mut out = Vec::new();
        let mut total = 0;
        while r.next_batch(&mut out).unwrap() {
            assert!(out.len() <= BATCH_ROWS);
            assert!(out.iter().all(|r| r.stream.is_none()));
            total += out.len();
        }
        assert!(out.is_empty());
        assert_eq!(total, BATCH_ROWS + 5);
    }

    #[test]
    fn writer_rejects_values_beyond_i64_and_completion_before_issue() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut w = TraceWriter::create(&path, &TraceMeta::default()).unwrap();
        let e = w.write(&rec(Op::Read, u64::MAX, 1, 0, None)).unwrap_err();
        assert!(e.to_string().contains("offset_bytes"), "{e}");
        assert!(e.to_string().contains("t.parquet"), "{e}");
        let e = w.write(&rec(Op::Read, 0, 1, 10, Some(5))).unwrap_err();
        assert!(e.to_string().contains("before issue_ns"), "{e}");
        assert_eq!(w.finish().unwrap(), 0);
    }

    #[test]
    fn open_names_the_file_when_not_parquet() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bogus.parquet");
        std::fs::write(&path, b"fio version 3 iolog\n").unwrap();
        let e = TraceReader::open(&path).err().unwrap();
        assert!(e.to_string().contains("bogus.parquet"), "{e}");
    }

    /// Writes `rows` rows of the native schema in row groups of `rg_rows` with a plain
    /// `ArrowWriter` (dictionary encoding on, no check of ours on the way in): issue
    /// `i * 10`, completion `complete(i)`, stream all null, device `device(i)`.
    fn write_raw_with(
        path: &Path,
        rows: u64,
        rg_rows: usize,
        device: impl Fn(u64) -> Option<&'static str>,
        complete: &dyn Fn(u64) -> i64,
    ) {
        let schema = arrow_schema();
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(rg_rows))
            .build();
        let file = File::create(path).unwrap();
        let mut w = ArrowWriter::try_new(file, schema.clone(), Some(props)).unwrap();
        let i64s = |f: &dyn Fn(u64) -> i64| -> ArrayRef {
            Arc::new(Int64Array::from_iter_values((0..rows).map(f)))
        };
        let names = |f: &dyn Fn(u64) -> Option<&'static str>| -> ArrayRef {
            Arc::new((0..rows).map(f).collect::<DictionaryArray<Int32Type>>())
        };
        let batch = RecordBatch::try_new(
            schema,
            vec![
                i64s(&|i| i as i64 * 10),
                i64s(complete),
                // Runs of 3 sequential I/Os, then a jump.
                i64s(&|i| (i % 3 + (i / 3) * 97) as i64 * 4096),
                i64s(&|_| 4096),
                names(&|i| Some(if i % 4 == 0 { "write" } else { "read" })),
                names(&|_| None),
                names(&device),
            ],
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    }

    /// As [`write_raw_with`], each completion 25 ns after its issue.
    fn write_raw(
        path: &Path,
        rows: u64,
        rg_rows: usize,
        device: impl Fn(u64) -> Option<&'static str>,
    ) {
        write_raw_with(path, rows, rg_rows, device, &|i| i as i64 * 10 + 25);
    }

    /// Rows whose completion is `complete(i)` for issue `i * 10` ([`write_raw_with`]),
    /// read back: the number of rows, or the reader's error.
    fn read_completions(rows: u64, complete: &dyn Fn(u64) -> i64) -> Result<u64, TraceError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("raw.parquet");
        write_raw_with(&path, rows, rows as usize, |_| None, complete);
        let mut r = TraceReader::open(&path)?;
        let mut n = 0;
        while let Some(b) = r.next_columns()? {
            n += b.len() as u64;
        }
        Ok(n)
    }

    #[test]
    fn reader_refuses_a_completion_before_its_issue_in_any_row() {
        let rows = 3 * BATCH_ROWS as u64 + 7;
        // At its issue is fine (zero service time), in every row.
        assert_eq!(read_completions(rows, &|i| i as i64 * 10).unwrap(), rows);
        // One row 1 ns early, in the first, a middle and the last batch (row 0 would
        // be negative, another error).
        for bad in [1, BATCH_ROWS as u64 + 3, rows - 1] {
            let e = read_completions(rows, &|i| i as i64 * 10 + 5 - 6 * i64::from(i == bad))
                .unwrap_err()
                .to_string();
            let want = format!("complete_ns {} before issue_ns {}", bad * 10 - 1, bad * 10);
            assert!(
                e.contains(&want) && e.contains("raw.parquet"),
                "row {bad}: {e}"
            );
        }
    }

    /// Records and characterization read back, and whether `device` was projected.
    fn read_back(path: &Path) -> (Vec<IoRecord>, Names, bool) {
        let mut r = TraceReader::open(path).unwrap();
        let projected = r.idx.device.is_some();
        assert!(
            r.idx.stream.is_none(),
            "the all-null stream column is not read"
        );
        let mut out = Vec::new();
        let mut all = Vec::new();
        while r.next_batch(&mut out).unwrap() {
            all.append(&mut out);
        }
        (all, r.devices().clone(), projected)
    }

    #[test]
    fn all_null_name_columns_are_not_decoded_and_read_as_null() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nulls.parquet");
        write_raw(&path, 10_000, 3000, |_| None);
        let (recs, _, projected) = read_back(&path);
        assert!(!projected);
        assert_eq!(recs.len(), 10_000);
        assert!(recs
            .iter()
            .all(|r| r.device.is_none() && r.stream.is_none()));
        // The op dictionary is in order of appearance ("write" is key 0), not Op's.
        for (i, r) in recs.iter().enumerate() {
            let want = if i % 4 == 0 { Op::Write } else { Op::Read };
            assert_eq!(r.op, want, "row {i}");
        }
        // characterize through the file equals the per-record path.
        let mut c = crate::Characterizer::new();
        for r in &recs {
            c.push(r);
        }
        let want = c.finish();
        assert!(want.sequential_ios > 0);
        assert_eq!(crate::characterize_file(&path).unwrap(), want);
    }

    #[test]
    fn a_name_column_with_values_in_a_later_row_group_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("late.parquet");
        // Row group 0 (rows 0..3000) has no device; the later ones some.
        write_raw(&path, 10_000, 3000, |i| {
            (i >= 3000 && i % 2 == 0).then_some("8,16")
        });
        let (recs, devices, projected) = read_back(&path);
        assert!(projected);
        for (i, r) in recs.iter().enumerate() {
            let want = (i >= 3000 && i % 2 == 0).then_some("8,16");
            assert_eq!(r.device.map(|d| devices.get(d.0).unwrap()), want, "row {i}");
        }
    }

    #[test]
    fn a_corrupt_name_column_chunk_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("corrupt.parquet");
        write_raw(&path, 10_000, 3000, |_| None);
        let md = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap())
            .unwrap()
            .metadata()
            .clone();
        let leaf = md
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .position(|c| c.name() == COL_DEVICE)
            .unwrap();
        // Garbage over the device chunk's first page header, in the last row group.
        let (start, _) = md.row_groups().last().unwrap().column(leaf).byte_range();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[start as usize..start as usize + 6].fill(0xFF);
        std::fs::write(&path, &bytes).unwrap();
        let e = TraceReader::open(&path)
            .err()
            .expect("corrupt chunk refused");
        assert!(e.to_string().contains("corrupt.parquet"), "{e}");
    }

    #[test]
    fn newer_format_version_is_refused() {
        let e = meta_from_kv(
            Path::new("x.parquet"),
            [("storbench.trace_format_version", "99")],
        )
        .unwrap_err();
        assert!(e.to_string().contains("newer"), "{e}");
    }
}
