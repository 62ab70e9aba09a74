//! `TraceReader`: the file read as bounded batches through parquet's Arrow reader, every value checked (docs/trace-format.md, "Reading").

#[allow(unused_imports)]
use super::*;

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
    pub(super) path: PathBuf,
    /// The opened file (an output must never be it: `crate::atomic::Rule::inputs`).
    pub(super) key: crate::atomic::FileKey,
    pub(super) meta: TraceMeta,
    pub(super) num_rows: u64,
    pub(super) reader: ParquetRecordBatchReader,
    pub(super) streams: Names,
    pub(super) devices: Names,
    /// Column positions in the projected batches.
    pub(super) idx: ColumnIdx,
    /// Scratch: dictionary value -> global id for the current batch.
    pub(super) map_scratch: Vec<Option<u32>>,
    /// Rows handed out so far: at the end they must be the footer's count.
    pub(super) rows_read: u64,
    /// The last row's issue time (rows must not go back in time), unless `any_order`.
    pub(super) last_issue_ns: Option<i64>,
    pub(super) any_order: bool,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct ColumnIdx {
    pub(super) issue: usize,
    pub(super) complete: Option<usize>,
    pub(super) offset: usize,
    pub(super) len: usize,
    pub(super) op: usize,
    pub(super) stream: Option<usize>,
    pub(super) device: Option<usize>,
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
        let key = crate::atomic::FileKey::of(&*file_for_chunks)
            .map_err(|e| TraceError::io(path, "stat", e))?;
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
            key,
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

    /// The opened trace file, by device and inode.
    pub fn file_key(&self) -> crate::atomic::FileKey {
        self.key
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
pub(super) fn open_parquet(
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
pub(super) fn check_writer(path: &Path, file_md: &FileMetaData) -> Result<(), TraceError> {
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
pub(super) fn project_columns(
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
pub(super) fn name_columns(
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
pub(super) fn dictionary_column_all_null(
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
pub(super) fn is_string_like(t: &DataType) -> bool {
    let text =
        |t: &DataType| matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
    match t {
        DataType::Dictionary(k, v) => k.is_integer() && text(v),
        t => text(t),
    }
}

/// An integer array of any width and signedness as i64 values (None for another
/// type); a UInt64 value above i64::MAX becomes -1, refused as negative.
pub(super) fn ints_as_i64(col: &dyn Array) -> Option<Vec<i64>> {
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
    widen!(Int8Type, Int16Type, Int32Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type);
    if let Some(a) = col.as_any().downcast_ref::<Int64Array>() {
        return Some(a.values().to_vec());
    }
    None
}

/// The largest integer a float holds exactly (2^53).
pub(super) const FLOAT_EXACT: f64 = 9_007_199_254_740_992.0;

/// A float column's values as i64 (pandas turns an integer column with nulls into
/// float64): each valid value must be a whole number from 0 to 2^53, which a float
/// holds exactly; the error names the first row that is not.
pub(super) fn floats_as_i64(
    path: &Path,
    name: &str,
    col: &dyn Array,
) -> Option<Result<Vec<i64>, TraceError>> {
    let vals: Vec<f64> = if let Some(a) = col.as_any().downcast_ref::<PrimitiveArray<Float64Type>>()
    {
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
pub(super) fn int_column(
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
pub(super) fn trace_row(message: &str, base: u64) -> Option<String> {
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

pub(super) fn string_at(values: &ArrayRef, i: usize) -> Option<&str> {
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
pub(super) fn any_dictionary(col: &ArrayRef) -> Option<(Vec<i64>, &ArrayRef)> {
    let d = col.as_any_dictionary_opt()?;
    let keys = ints_as_i64(d.keys())?;
    Some((keys, d.values()))
}

pub(super) fn op_values(path: &Path, col: &ArrayRef) -> Result<Vec<Op>, TraceError> {
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

/// The name slot of dictionary entry `k` (any key type), interned on first use and
/// remembered in `scratch`.
fn dictionary_slot<K: TryInto<usize>>(
    path: &Path,
    name: &str,
    values: &ArrayRef,
    k: K,
    names: &mut Names,
    scratch: &mut [Option<u32>],
) -> Result<u32, TraceError> {
    let k = k
        .try_into()
        .ok()
        .filter(|&k| k < values.len())
        .ok_or_else(|| bad_key_error(path, name))?;
    if let Some(id) = scratch[k] {
        return Ok(id);
    }
    let s = string_at(values, k).ok_or_else(|| {
        TraceError::schema(path, format!("column `{name}`: bad dictionary value"))
    })?;
    let id = name_slot(path, name, names.intern(s))?;
    scratch[k] = Some(id);
    Ok(id)
}

/// Per-row name slots for a stream/device column: 0 for null, else the global name
/// id + 1 (names interned into `names`).
pub(super) fn name_slots(
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
            out.push(dictionary_slot(path, name, values, k, names, scratch)?);
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
            out.push(dictionary_slot(path, name, values, k, names, scratch)?);
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
pub(super) fn check_footer(
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
            // A chunk of no values may hold a dictionary page only, its data page offset
            // 0 (pyarrow's 0-row row group, issue 30): nothing is read at that offset.
            let data_page_ok =
                c.data_page_offset() >= start || (c.num_values() == 0 && c.data_page_offset() == 0);
            let inside = start >= 4
                && data_page_ok
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
