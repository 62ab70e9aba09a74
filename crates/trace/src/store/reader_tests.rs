//! The reader on files of every shape and writer setting: the values written come back,
//! bad values are refused naming the file and value, corrupt pages are errors naming
//! the file (never a panic). Kept from the tests of the page decoder removed by issue
//! 22, pointed at the one reader.

use super::*;
use crate::test_rng::XorShift;
use parquet::file::properties::{
    DeltaBinaryPackedEncoderOptions, WriterPropertiesBuilder, WriterVersion,
};

/// Everything the reader hands out, row by row (name slots: 0 a null, u32::MAX the
/// batch had no such column).
#[derive(Debug, PartialEq, Default)]
struct Rows {
    issue: Vec<i64>,
    complete: Vec<Option<i64>>,
    offset: Vec<i64>,
    len: Vec<i64>,
    ops: Vec<Op>,
    streams: Vec<u32>,
    devices: Vec<u32>,
}

fn read(path: &Path, columns: Columns, batch_rows: usize) -> Result<Rows, TraceError> {
    let mut r = TraceReader::open_columns_batched(path, columns, batch_rows)?;
    let mut rows = Rows::default();
    while let Some(b) = r.next_columns()? {
        let n = b.len();
        assert!(n > 0 && n <= batch_rows);
        rows.issue.extend(b.issue_ns.iter());
        rows.complete
            .extend((0..n).map(|i| b.complete_at(i).map(|c| c as i64)));
        rows.offset.extend(b.offset_bytes.iter());
        rows.len.extend(b.len_bytes.iter());
        assert_eq!(b.ops.len(), n);
        rows.ops.extend(&b.ops);
        for (slots, out) in [
            (&b.stream_slots, &mut rows.streams),
            (&b.device_slots, &mut rows.devices),
        ] {
            match slots {
                Some(s) => {
                    assert_eq!(s.len(), n);
                    out.extend(s);
                }
                None => out.extend(std::iter::repeat_n(u32::MAX, n)),
            }
        }
    }
    assert_eq!(rows.issue.len() as u64, r.num_rows());
    Ok(rows)
}

struct Shape {
    rows: u64,
    /// Completions: 0 none known, 1 all, 2 some.
    complete: u8,
    /// Devices: 0 none, 1 one for all rows, 2 some rows, 3 many names.
    device: u8,
    /// Lengths: few distinct (a dictionary) or many (it overflows to PLAIN).
    many_lens: bool,
    /// Times and offsets near i64::MAX.
    huge: bool,
}

/// A trace of `shape` written by [`TraceWriter`]; returns the records.
fn write_trace(path: &Path, shape: &Shape, rng: &mut XorShift) -> Vec<IoRecord> {
    let mut w = TraceWriter::create(path, &TraceMeta::default()).unwrap();
    let streams: Vec<StreamId> = (0..3).map(|i| w.intern_stream(&format!("s{i}"))).collect();
    let devices: Vec<DeviceId> = (0..if shape.device == 3 { 300 } else { 2 })
        .map(|i| w.intern_device(&format!("8,{i}")))
        .collect();
    let base: u64 = if shape.huge {
        i64::MAX as u64 - (shape.rows + 10) * 1_000_000
    } else {
        0
    };
    let mut t = base;
    let mut recs = Vec::new();
    let mut next_off = 0u64;
    for i in 0..shape.rows {
        t += rng.below(1_000_000);
        let len = if shape.many_lens {
            rng.below(1 << 40)
        } else {
            [0, 512, 4096, 65536][rng.below(4) as usize]
        };
        let off = match rng.below(3) {
            0 => next_off,
            _ if shape.huge => i64::MAX as u64 - len - rng.below(1 << 40),
            _ => rng.below(1 << 62),
        };
        next_off = off.saturating_add(len).min(i64::MAX as u64 - (1 << 41));
        let mut r = IoRecord::new(Op::ALL[rng.below(4) as usize], off, len, t);
        r.complete_ns = match shape.complete {
            0 => None,
            1 => Some(t + rng.below(1_000_000)),
            // Long runs with and without, and single nulls.
            _ => (((i / 5000) % 2 == 0) || rng.below(10) > 0).then(|| t + rng.below(100)),
        };
        r.stream = (rng.below(5) > 0).then(|| streams[rng.below(3) as usize]);
        r.device = match shape.device {
            0 => None,
            1 => Some(devices[0]),
            2 => (i % 7 != 0).then(|| devices[rng.below(2) as usize]),
            _ => Some(devices[rng.below(devices.len() as u64) as usize]),
        };
        w.write(&r).unwrap();
        recs.push(r);
    }
    assert_eq!(w.finish().unwrap(), shape.rows);
    recs
}

#[test]
fn traces_of_every_shape_read_back_their_records() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = XorShift(0x5EED_0FDE_C0DE);
    let mut cases = vec![
        (0, 1, 1, false, false),
        (1, 0, 0, false, false),
        (33, 2, 2, false, true),
        (70_000, 2, 2, false, false),
        // The length dictionary overflows its page limit: PLAIN pages after it.
        (200_000, 1, 3, true, false),
        (9_000, 0, 3, true, true),
        (ROW_GROUP_ROWS as u64 * 2 + 4321, 2, 2, false, false),
    ];
    for _ in 0..3 {
        cases.push((
            rng.below(40_000),
            rng.below(3) as u8,
            rng.below(4) as u8,
            rng.below(2) == 0,
            rng.below(2) == 0,
        ));
    }
    for (k, &(rows, complete, device, many_lens, huge)) in cases.iter().enumerate() {
        let shape = Shape {
            rows,
            complete,
            device,
            many_lens,
            huge,
        };
        let path = dir.path().join(format!("t{k}.parquet"));
        let recs = write_trace(&path, &shape, &mut rng);
        for (columns, batch) in [(Columns::NoStream, 8192), (Columns::All, 997)] {
            let got = read(&path, columns, batch).unwrap();
            assert_eq!(got.issue.len(), recs.len());
            for (i, r) in recs.iter().enumerate() {
                let want = (r.issue_ns, r.complete_ns, r.offset_bytes, r.len_bytes, r.op);
                let row = (
                    got.issue[i] as u64,
                    got.complete[i].map(|c| c as u64),
                    got.offset[i] as u64,
                    got.len[i] as u64,
                    got.ops[i],
                );
                assert_eq!(row, want, "case {k} row {i}");
                let no_device = got.devices[i] == 0 || got.devices[i] == u32::MAX;
                assert_eq!(no_device, r.device.is_none(), "case {k} row {i}");
            }
        }
    }
}

/// The trace schema with nullable integer columns (so a writer can put nulls there).
fn loose_schema() -> Arc<Schema> {
    let s = arrow_schema();
    Arc::new(Schema::new(
        s.fields()
            .iter()
            .map(|f| Field::new(f.name(), f.data_type().clone(), true))
            .collect::<Vec<_>>(),
    ))
}

/// Column values of a raw file (no check of ours on the way in).
struct Raw {
    issue: Vec<Option<i64>>,
    complete: Vec<Option<i64>>,
    offset: Vec<Option<i64>>,
    len: Vec<Option<i64>>,
    op: Vec<Option<String>>,
    stream: Vec<Option<String>>,
    device: Vec<Option<String>>,
}

fn raw_rows(rng: &mut XorShift, n: usize) -> Raw {
    let mut t = 0i64;
    let mut raw = Raw {
        issue: vec![],
        complete: vec![],
        offset: vec![],
        len: vec![],
        op: vec![],
        stream: vec![],
        device: vec![],
    };
    for i in 0..n {
        t += rng.below(10_000) as i64;
        raw.issue.push(Some(t));
        raw.complete
            .push((rng.below(4) > 0).then(|| t + rng.below(1000) as i64));
        raw.offset.push(Some(rng.below(1 << 50) as i64));
        raw.len.push(Some(match i % 3 {
            0 => rng.below(1 << 30) as i64,
            _ => 4096,
        }));
        raw.op
            .push(Some(Op::ALL[rng.below(4) as usize].as_str().into()));
        // Many distinct names: a small dictionary limit makes pages fall back to PLAIN.
        raw.stream
            .push((rng.below(3) > 0).then(|| format!("proc-{}", rng.below(3000))));
        raw.device
            .push((rng.below(5) > 0).then(|| format!("dev{}", rng.below(4))));
    }
    raw
}

/// Writes `raw` with `props` in writes of random sizes.
fn write_raw(path: &Path, raw: &Raw, props: WriterProperties, rng: &mut XorShift) {
    let schema = loose_schema();
    let mut w =
        ArrowWriter::try_new(File::create(path).unwrap(), schema.clone(), Some(props)).unwrap();
    let n = raw.issue.len();
    let mut a = 0;
    while a < n {
        let b = (a + 1 + rng.below(20_000) as usize).min(n);
        let ints = |v: &[Option<i64>]| -> ArrayRef { Arc::new(Int64Array::from(v[a..b].to_vec())) };
        let names = |v: &[Option<String>]| -> ArrayRef {
            Arc::new(
                v[a..b]
                    .iter()
                    .map(|s| s.as_deref())
                    .collect::<DictionaryArray<Int32Type>>(),
            )
        };
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                ints(&raw.issue),
                ints(&raw.complete),
                ints(&raw.offset),
                ints(&raw.len),
                names(&raw.op),
                names(&raw.stream),
                names(&raw.device),
            ],
        )
        .unwrap();
        w.write(&batch).unwrap();
        a = b;
    }
    w.close().unwrap();
}

/// Asserts the reader hands out `raw`'s values (names by presence).
fn assert_reads_raw(path: &Path, raw: &Raw, what: &str) {
    for (columns, batch) in [(Columns::All, 8192), (Columns::NoNames, 997)] {
        let got = read(path, columns, batch).unwrap();
        let n = raw.issue.len();
        assert_eq!(got.issue.len(), n, "{what}");
        for i in 0..n {
            let want = (
                raw.issue[i],
                raw.complete[i],
                raw.offset[i],
                raw.len[i],
                raw.op[i].as_deref(),
            );
            let row = (
                Some(got.issue[i]),
                got.complete[i],
                Some(got.offset[i]),
                Some(got.len[i]),
                Some(got.ops[i].as_str()),
            );
            assert_eq!(row, want, "{what}: row {i}");
            if columns == Columns::All {
                let no_stream = got.streams[i] == 0 || got.streams[i] == u32::MAX;
                assert_eq!(no_stream, raw.stream[i].is_none(), "{what}: row {i}");
            }
        }
    }
}

fn zstd() -> Compression {
    Compression::ZSTD(ZstdLevel::try_new(1).unwrap())
}

/// Writer settings other writers use.
fn other_settings() -> Vec<(&'static str, WriterPropertiesBuilder)> {
    let ints = [COL_ISSUE, COL_COMPLETE, COL_OFFSET, COL_LEN];
    let delta = |mut b: WriterPropertiesBuilder| {
        for c in ints {
            b = b
                .set_column_dictionary_enabled(ColumnPath::from(c), false)
                .set_column_encoding(ColumnPath::from(c), Encoding::DELTA_BINARY_PACKED);
        }
        b
    };
    vec![
        ("defaults", WriterProperties::builder()),
        (
            "zstd, dictionaries everywhere",
            WriterProperties::builder().set_compression(zstd()),
        ),
        (
            "PLAIN, no dictionaries",
            WriterProperties::builder()
                .set_dictionary_enabled(false)
                .set_encoding(Encoding::PLAIN),
        ),
        (
            "page v2, delta, zstd",
            delta(
                WriterProperties::builder()
                    .set_writer_version(WriterVersion::PARQUET_2_0)
                    .set_compression(zstd()),
            ),
        ),
        (
            // v2 falls back from a full dictionary to DELTA_BYTE_ARRAY for strings.
            "page v2 uncompressed, small pages and dictionaries",
            WriterProperties::builder()
                .set_writer_version(WriterVersion::PARQUET_2_0)
                .set_data_page_row_count_limit(100)
                .set_write_batch_size(37)
                .set_data_page_size_limit(700)
                .set_dictionary_page_size_limit(200),
        ),
        (
            "delta of other block layouts, small pages",
            delta(WriterProperties::builder())
                .set_data_page_row_count_limit(1000)
                .set_write_batch_size(129)
                .set_delta_binary_packed_encoder_options(
                    DeltaBinaryPackedEncoderOptions::try_new(256, 2).unwrap(),
                ),
        ),
    ]
}

#[test]
fn files_of_other_writer_settings_read_back_their_values() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = XorShift(0xA11_5E77);
    for (k, (name, props)) in other_settings().into_iter().enumerate() {
        for rows in [0, 5, 30_000] {
            let path = dir.path().join(format!("raw{k}-{rows}.parquet"));
            let raw = raw_rows(&mut rng, rows);
            let rg = 1 + rng.below(12_000) as usize;
            let props = props.clone().set_max_row_group_row_count(Some(rg)).build();
            write_raw(&path, &raw, props, &mut rng);
            assert_reads_raw(
                &path,
                &raw,
                &format!("{name}: {rows} rows, row groups of {rg}"),
            );
        }
    }
}

/// A raw file with one value changed: the reader's error.
fn error_of(change: impl Fn(&mut Raw)) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.parquet");
    let mut rng = XorShift(77);
    let mut raw = raw_rows(&mut rng, 30_000);
    change(&mut raw);
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(7000))
        .build();
    write_raw(&path, &raw, props, &mut rng);
    read(&path, Columns::All, 8192)
        .expect_err("the reader refuses")
        .to_string()
}

#[test]
fn bad_values_are_refused_naming_the_file_and_the_value() {
    type Change = Box<dyn Fn(&mut Raw)>;
    let cases: Vec<(&str, Change)> = vec![
        (
            "(negative, or above 2^63)",
            Box::new(|r| r.issue[20_000] = Some(-1)),
        ),
        (
            "(negative, or above 2^63)",
            Box::new(|r| r.len[9] = Some(i64::MIN)),
        ),
        (
            "before issue_ns",
            Box::new(|r| r.complete[12_345] = Some(r.issue[12_345].unwrap() - 1)),
        ),
        (
            "overflows",
            Box::new(|r| {
                r.offset[29_999] = Some(i64::MAX - 10);
                r.len[29_999] = Some(11);
            }),
        ),
        (
            "`op` has value",
            Box::new(|r| r.op[15_000] = Some("frob".into())),
        ),
        ("`op` has nulls", Box::new(|r| r.op[15_001] = None)),
        (
            "`offset_bytes` has nulls",
            Box::new(|r| r.offset[8191] = None),
        ),
    ];
    for (want, change) in cases {
        let e = error_of(change);
        assert!(e.contains(want) && e.contains("bad.parquet"), "{e}");
    }
}

/// Byte ranges of the data of each column chunk of `path` (leaf order).
fn chunk_ranges(path: &Path) -> Vec<(usize, usize)> {
    let md = parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(&File::open(path).unwrap())
        .unwrap();
    let mut out = Vec::new();
    for rg in md.row_groups() {
        for c in rg.columns() {
            let (start, len) = c.byte_range();
            out.push((start as usize, len as usize));
        }
    }
    out
}

#[test]
fn corrupt_pages_are_errors_naming_the_file_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.parquet");
    let mut rng = XorShift(0xBAD_F00D);
    let shape = Shape {
        rows: 30_000,
        complete: 2,
        device: 2,
        many_lens: false,
        huge: false,
    };
    write_trace(&good, &shape, &mut rng);
    let bytes = std::fs::read(&good).unwrap();
    let ranges = chunk_ranges(&good);
    let path = dir.path().join("corrupt.parquet");
    let (mut errors, mut oks) = (0, 0);
    for round in 0..400 {
        let (start, len) = ranges[rng.below(ranges.len() as u64) as usize];
        let mut b = bytes.clone();
        // Garbage, zeros or all ones over a stretch of a column chunk.
        let at = start + rng.below(len as u64) as usize;
        let end = (at + 1 + rng.below(64) as usize).min(start + len);
        for x in &mut b[at..end] {
            *x = match round % 3 {
                0 => rng.next() as u8,
                1 => 0,
                _ => 0xFF,
            };
        }
        std::fs::write(&path, &b).unwrap();
        let r = TraceReader::open(&path).and_then(|mut r| {
            while r.next_columns()?.is_some() {}
            Ok(())
        });
        match r {
            Ok(()) => oks += 1,
            Err(e) => {
                assert!(e.to_string().contains("corrupt.parquet"), "{e}");
                errors += 1;
            }
        }
    }
    assert!(errors > 100, "{errors} errors, {oks} decoded");
}

/// Issue 34: what pandas, Polars and pyarrow write back from a trace they read: text
/// columns as Dictionary(Int8|Int16|UInt32, Utf8|LargeUtf8|Utf8View), Utf8View or
/// LargeUtf8, integer columns of any width and signedness, and an integer column with
/// nulls as float64 (pandas). Every shape reads as the trace it holds.
#[test]
#[allow(
    clippy::too_many_lines,
    reason = "a table of Arrow column shapes, each with the trace it must read as"
)]
fn columns_of_other_arrow_types_read_as_the_values_they_hold() {
    use arrow_array::types::{Int16Type, Int8Type, UInt32Type};
    use arrow_array::{
        Float64Array, Int32Array, LargeStringArray, PrimitiveArray, StringViewArray, UInt32Array,
        UInt64Array,
    };
    let mut rng = XorShift(34);
    let mut raw = raw_rows(&mut rng, 3000);
    for (i, s) in raw.stream.iter_mut().enumerate() {
        *s = s.as_ref().map(|_| format!("proc-{}", i % 40));
    }
    for v in raw.issue.iter_mut().chain(raw.offset.iter_mut()) {
        *v = v.map(|x| x % (1 << 31));
    }
    for v in raw.complete.iter_mut() {
        *v = v.map(|x| x % (1 << 31) + 2000);
    }
    for v in raw.len.iter_mut() {
        *v = v.map(|x| x % (1 << 30));
    }
    raw.issue.sort();
    // Dictionaries of any key type over any text type, keys of the entries as met.
    fn dict<K: arrow_array::types::ArrowDictionaryKeyType>(
        v: &[Option<String>],
        values_of: fn(Vec<String>) -> ArrayRef,
    ) -> ArrayRef
    where
        K::Native: TryFrom<usize>,
    {
        let mut entries: Vec<String> = Vec::new();
        let keys: PrimitiveArray<K> = v
            .iter()
            .map(|s| {
                s.as_ref().map(|s| {
                    let k = match entries.iter().position(|e| e == s) {
                        Some(k) => k,
                        None => {
                            entries.push(s.clone());
                            entries.len() - 1
                        }
                    };
                    K::Native::try_from(k).ok().unwrap()
                })
            })
            .collect();
        Arc::new(DictionaryArray::<K>::try_new(keys, values_of(entries)).unwrap())
    }
    let utf8: fn(Vec<String>) -> ArrayRef = |e| Arc::new(StringArray::from(e));
    let large: fn(Vec<String>) -> ArrayRef = |e| Arc::new(LargeStringArray::from(e));
    let view: fn(Vec<String>) -> ArrayRef = |e| Arc::new(StringViewArray::from_iter_values(e));
    type Shape = (&'static str, Vec<ArrayRef>);
    let u32s = |v: &[Option<i64>]| -> ArrayRef {
        Arc::new(UInt32Array::from_iter(
            v.iter().map(|x| x.map(|x| x as u32)),
        ))
    };
    let i32s = |v: &[Option<i64>]| -> ArrayRef {
        Arc::new(Int32Array::from_iter(v.iter().map(|x| x.map(|x| x as i32))))
    };
    let u64s = |v: &[Option<i64>]| -> ArrayRef {
        Arc::new(UInt64Array::from_iter(
            v.iter().map(|x| x.map(|x| x as u64)),
        ))
    };
    let f64s = |v: &[Option<i64>]| -> ArrayRef {
        Arc::new(Float64Array::from_iter(
            v.iter().map(|x| x.map(|x| x as f64)),
        ))
    };
    let shapes: Vec<Shape> = vec![
        (
            "pandas: categorical as Dictionary(Int8, Utf8), float64 with nulls",
            vec![
                u64s(&raw.issue),
                f64s(&raw.complete),
                u64s(&raw.offset),
                u64s(&raw.len),
                dict::<Int8Type>(&raw.op, utf8),
                dict::<Int8Type>(&raw.stream, utf8),
                dict::<Int8Type>(&raw.device, utf8),
            ],
        ),
        (
            "polars: Dictionary(UInt32, LargeUtf8), Utf8View, 32-bit integers",
            vec![
                u32s(&raw.issue),
                i32s(&raw.complete),
                i32s(&raw.offset),
                u32s(&raw.len),
                dict::<UInt32Type>(&raw.op, large),
                Arc::new(StringViewArray::from_iter(
                    raw.stream.iter().map(|s| s.as_deref()),
                )),
                dict::<Int16Type>(&raw.device, view),
            ],
        ),
        (
            "plain LargeUtf8 text",
            vec![
                i32s(&raw.issue),
                u32s(&raw.complete),
                u32s(&raw.offset),
                i32s(&raw.len),
                Arc::new(LargeStringArray::from_iter(
                    raw.op.iter().map(|s| s.as_deref()),
                )),
                Arc::new(LargeStringArray::from_iter(
                    raw.stream.iter().map(|s| s.as_deref()),
                )),
                Arc::new(StringArray::from_iter(
                    raw.device.iter().map(|s| s.as_deref()),
                )),
            ],
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (what, cols) in shapes {
        let schema = Arc::new(Schema::new(
            [
                COL_ISSUE,
                COL_COMPLETE,
                COL_OFFSET,
                COL_LEN,
                COL_OP,
                COL_STREAM,
                COL_DEVICE,
            ]
            .iter()
            .zip(&cols)
            .map(|(n, c)| Field::new(*n, c.data_type().clone(), true))
            .collect::<Vec<_>>(),
        ));
        let path = dir.path().join("other.parquet");
        let batch = RecordBatch::try_new(schema.clone(), cols).unwrap();
        let mut w = ArrowWriter::try_new(File::create(&path).unwrap(), schema, None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        assert_reads_raw(&path, &raw, what);
        // Names come back as written.
        let (_, recs, streams, devices) = read_all(&path).unwrap();
        for (i, r) in recs.iter().enumerate() {
            assert_eq!(
                r.stream.map(|s| streams.get(s.0).unwrap().to_owned()),
                raw.stream[i],
                "{what}: row {i}"
            );
            assert_eq!(
                r.device.map(|s| devices.get(s.0).unwrap().to_owned()),
                raw.device[i],
                "{what}: row {i}"
            );
        }
    }
    // A float that is not a whole number, and a negative 32-bit value: refused, named.
    let bad = |col: ArrayRef, name: &str| -> String {
        let path = dir.path().join("bad.parquet");
        let schema = Arc::new(Schema::new(vec![
            Field::new(COL_ISSUE, col.data_type().clone(), true),
            Field::new(COL_OFFSET, DataType::Int64, false),
            Field::new(COL_LEN, DataType::Int64, false),
            Field::new(COL_OP, DataType::Utf8, false),
        ]));
        let n = col.len();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                col,
                Arc::new(Int64Array::from(vec![0; n])),
                Arc::new(Int64Array::from(vec![4096; n])),
                Arc::new(StringArray::from(vec!["read"; n])),
            ],
        )
        .unwrap();
        let mut w = ArrowWriter::try_new(File::create(&path).unwrap(), schema, None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let e = read(&path, Columns::All, 1000).unwrap_err().to_string();
        assert!(e.contains(name), "{e}");
        e
    };
    let e = bad(Arc::new(Float64Array::from(vec![1.0, 2.5])), "issue_ns");
    assert!(e.contains("row 1") && e.contains("2.5"), "{e}");
    let e = bad(Arc::new(Int32Array::from(vec![5, -3])), "issue_ns");
    assert!(e.contains("row 1") && e.contains("-3"), "{e}");
}
