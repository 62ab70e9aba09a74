//! `TraceWriter`: batches built on the caller's thread, encoded on one `trace-encode` thread (queue of 2), the file finished with page checksums.

#[allow(unused_imports)]
use super::*;

pub(super) type FileWriter = ArrowWriter<BufWriter<File>>;

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
pub(super) struct Cols {
    pub(super) issue: Vec<i64>,
    pub(super) complete: Vec<i64>,
    pub(super) complete_nulls: usize,
    pub(super) offset: Vec<i64>,
    pub(super) len: Vec<i64>,
    pub(super) op: Vec<i32>,
    pub(super) stream: Vec<i32>,
    pub(super) stream_nulls: usize,
    pub(super) device: Vec<i32>,
    pub(super) device_nulls: usize,
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
pub(super) struct Job {
    pub(super) cols: Cols,
    pub(super) stream_values: ArrayRef,
    pub(super) device_values: ArrayRef,
}

/// The null buffer of a column whose nulls are stored as -1 (None when it has none);
/// the -1s become 0, as a column without the -1 trick would hold.
pub(super) fn nulls_of<T: Copy + Ord + Default>(
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
pub(super) fn encode_batch(
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
pub(super) struct Encoder {
    /// None once closed.
    pub(super) tx: Option<std::sync::mpsc::SyncSender<Job>>,
    /// Emptied batches back from the encoder thread (at most [`SPARE_BATCHES`]).
    pub(super) spare: std::sync::mpsc::Receiver<Cols>,
    pub(super) thread: Option<std::thread::JoinHandle<Result<FileWriter, TraceError>>>,
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
    pub(super) path: PathBuf,
    /// Where the encoder writes (removed when dropped): [`TraceWriter::finish`] copies
    /// it with page checksums into the final file.
    pub(super) staging: crate::atomic::AtomicFile,
    pub(super) encoder: Encoder,
    pub(super) meta: TraceMeta,
    pub(super) streams: Names,
    pub(super) devices: Names,
    /// Dictionary values cached between batches, rebuilt only when names were added.
    pub(super) stream_values: Option<ArrayRef>,
    pub(super) device_values: Option<ArrayRef>,
    /// The batch being filled.
    pub(super) cols: Cols,
    pub(super) rows: u64,
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
pub(super) fn writer_properties() -> WriterProperties {
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

pub(super) fn to_i64(path: &Path, what: &str, v: u64) -> Result<i64, TraceError> {
    i64::try_from(v).map_err(|_| TraceError::InvalidRecord {
        path: path.to_path_buf(),
        message: format!("{what} = {v} exceeds i64::MAX"),
    })
}

impl TraceWriter {
    /// A trace at `path`, replacing nothing storbench did not write (see
    /// [`crate::atomic`]).
    pub fn create(path: &Path, meta: &TraceMeta) -> Result<TraceWriter, TraceError> {
        TraceWriter::create_with(path, meta, &crate::atomic::Rule::default())
    }

    /// A trace at the output `path`, under `rule` (`--overwrite`, the inputs).
    pub fn create_with(
        path: &Path,
        meta: &TraceMeta,
        rule: &crate::atomic::Rule,
    ) -> Result<TraceWriter, TraceError> {
        let staging = crate::atomic::AtomicFile::create_with(path, rule)
            .map_err(|e| TraceError::io(path, "create", e))?;
        TraceWriter::start(staging, meta)
    }

    /// A trace named `name` in a directory storbench owns (a run directory).
    pub fn create_in(
        dir: &crate::atomic::OutputDir,
        name: &str,
        meta: &TraceMeta,
    ) -> Result<TraceWriter, TraceError> {
        let staging = dir
            .replace(name)
            .map_err(|e| TraceError::io(&dir.join(name), "create", e))?;
        TraceWriter::start(staging, meta)
    }

    fn start(
        mut staging: crate::atomic::AtomicFile,
        meta: &TraceMeta,
    ) -> Result<TraceWriter, TraceError> {
        let path = staging.path().to_path_buf();
        let path = path.as_path();
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

    /// Another writer of this one's output, judged as this one was (same directory,
    /// same rule) and with its metadata: an import that starts sorting externally
    /// moves what this one wrote aside and writes the output anew. Not for an output
    /// written in place (a device or FIFO cannot be written twice).
    pub fn restart(&self) -> Result<TraceWriter, TraceError> {
        let staging = self.staging.sibling().map_err(|e| {
            TraceError::io(
                &self.path,
                "write again (input out of order is sorted into a regular file, not a device or pipe)",
                e,
            )
        })?;
        TraceWriter::start(staging, &self.meta)
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
    pub fn finish(self) -> Result<u64, TraceError> {
        self.finish_to(None)
    }

    /// [`TraceWriter::finish`] into a new file at `path` instead of the output, which
    /// stays as it was.
    pub fn finish_at(self, path: &Path) -> Result<u64, TraceError> {
        self.finish_to(Some(path))
    }

    fn finish_to(mut self, aside: Option<&Path>) -> Result<u64, TraceError> {
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
            assert!(aside.is_none(), "a writer in place finishes in place");
            return Ok(self.rows);
        }
        let staged = self
            .staging
            .reopen()
            .map_err(|e| TraceError::io(&self.path, "reopen the staged file", e))?;
        let mut out = match aside {
            None => self.staging.sibling(),
            Some(p) => crate::atomic::AtomicFile::create(p),
        }
        .map_err(|e| TraceError::io(aside.unwrap_or(&self.path), "create", e))?;
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
