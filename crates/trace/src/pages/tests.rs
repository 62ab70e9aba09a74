//! The page decoder against Arrow's path: the same rows, values, nulls, ops and name
//! slots for traces of every shape and writer setting, the same errors for bad values,
//! and an error (never a panic) for corrupt pages.

use super::*;
use crate::model::{DeviceId, IoRecord, StreamId, TraceMeta};
use crate::store::{arrow_schema, Columns, TraceReader, TraceWriter};
use crate::test_rng::XorShift;
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, DictionaryArray, RecordBatch};
use arrow_schema::Field;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{
    DeltaBinaryPackedEncoderOptions, WriterProperties, WriterPropertiesBuilder, WriterVersion,
};
use parquet::schema::types::ColumnPath;

/// Everything a reader hands out, row by row (u32::MAX: the batch had no such column).
#[derive(Debug, PartialEq, Default)]
struct Rows {
    issue: Vec<i64>,
    complete: Vec<Option<i64>>,
    offset: Vec<i64>,
    len: Vec<i64>,
    ops: Vec<Op>,
    streams: Vec<u32>,
    devices: Vec<u32>,
    stream_names: Vec<String>,
    device_names: Vec<String>,
}

fn read(path: &Path, columns: Columns, batch_rows: usize, pages: bool) -> Result<Rows, TraceError> {
    let mut r = TraceReader::open_with(path, columns, batch_rows, pages)?;
    assert_eq!(
        r.uses_page_decoder(),
        pages,
        "the page decoder takes this file"
    );
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
    rows.stream_names = r.streams().iter().map(str::to_owned).collect();
    rows.device_names = r.devices().iter().map(str::to_owned).collect();
    Ok(rows)
}

/// Reads `path` through both paths; asserts they hand out the same; returns it.
fn same(path: &Path, columns: Columns, batch_rows: usize) -> Rows {
    let want = read(path, columns, batch_rows, false).unwrap();
    let got = read(path, columns, batch_rows, true).unwrap();
    if got != want {
        let fields: [(&str, bool); 7] = [
            ("issue", got.issue == want.issue),
            ("complete", got.complete == want.complete),
            ("offset", got.offset == want.offset),
            ("len", got.len == want.len),
            ("ops", got.ops == want.ops),
            ("streams", got.streams == want.streams),
            ("devices", got.devices == want.devices),
        ];
        let first = |a: &[i64], b: &[i64]| a.iter().zip(b).position(|(x, y)| x != y);
        panic!(
            "{}: {columns:?} batch {batch_rows}: differ in {:?}; first issue row {:?}, \
             offset row {:?}; names {:?}/{:?}",
            path.display(),
            fields
                .iter()
                .filter(|f| !f.1)
                .map(|f| f.0)
                .collect::<Vec<_>>(),
            first(&got.issue, &want.issue),
            first(&got.offset, &want.offset),
            (&got.stream_names, &want.stream_names),
            (&got.device_names, &want.device_names),
        );
    }
    got
}

/// Both paths, every column projection, several batch sizes (a prime one splits
/// bit-packed groups and pages anywhere).
fn same_all(path: &Path, rows: usize) {
    for (columns, batch) in [
        (Columns::All, 8192),
        (Columns::NoStream, 8192),
        (Columns::NoNames, 65536),
        (Columns::All, 997),
        (Columns::NoStream, 1),
    ] {
        if batch == 1 && rows > 5000 {
            continue;
        }
        let got = same(path, columns, batch);
        assert_eq!(got.issue.len(), rows);
    }
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
fn traces_of_every_shape_read_the_same_through_both_paths() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = XorShift(0x5EED_0FDE_C0DE);
    let mut cases = vec![
        Shape {
            rows: 0,
            complete: 1,
            device: 1,
            many_lens: false,
            huge: false,
        },
        Shape {
            rows: 1,
            complete: 0,
            device: 0,
            many_lens: false,
            huge: false,
        },
        Shape {
            rows: 33,
            complete: 2,
            device: 2,
            many_lens: false,
            huge: true,
        },
        Shape {
            rows: 20_001,
            complete: 1,
            device: 1,
            many_lens: false,
            huge: false,
        },
        Shape {
            rows: 70_000,
            complete: 2,
            device: 2,
            many_lens: false,
            huge: false,
        },
        // The length dictionary overflows its page limit: PLAIN pages after it.
        Shape {
            rows: 200_000,
            complete: 1,
            device: 3,
            many_lens: true,
            huge: false,
        },
        Shape {
            rows: 9_000,
            complete: 0,
            device: 3,
            many_lens: true,
            huge: true,
        },
    ];
    for _ in 0..4 {
        cases.push(Shape {
            rows: rng.below(40_000),
            complete: rng.below(3) as u8,
            device: rng.below(4) as u8,
            many_lens: rng.below(2) == 0,
            huge: rng.below(2) == 0,
        });
    }
    for (k, shape) in cases.iter().enumerate() {
        let path = dir.path().join(format!("t{k}.parquet"));
        let recs = write_trace(&path, shape, &mut rng);
        same_all(&path, recs.len());
        // And the rows are the records written.
        let got = same(&path, Columns::NoStream, 8192);
        for (i, r) in recs.iter().enumerate() {
            assert_eq!(got.issue[i] as u64, r.issue_ns, "case {k} row {i}");
            assert_eq!(
                got.complete[i].map(|c| c as u64),
                r.complete_ns,
                "case {k} row {i}"
            );
            assert_eq!(got.offset[i] as u64, r.offset_bytes, "case {k} row {i}");
            assert_eq!(got.len[i] as u64, r.len_bytes, "case {k} row {i}");
            assert_eq!(got.ops[i], r.op, "case {k} row {i}");
        }
    }
}

#[test]
fn a_trace_of_several_row_groups_reads_the_same_through_both_paths() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.parquet");
    let mut rng = XorShift(0xB16_B16);
    let shape = Shape {
        rows: crate::store::ROW_GROUP_ROWS as u64 * 2 + 4321,
        complete: 2,
        device: 2,
        many_lens: false,
        huge: false,
    };
    write_trace(&path, &shape, &mut rng);
    same(&path, Columns::NoStream, 8192);
    same(&path, Columns::All, 65536 + 3);
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

fn zstd() -> Compression {
    Compression::ZSTD(ZstdLevel::try_new(1).unwrap())
}

/// Writer settings other writers use: each file must take the page decoder.
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
            "page v2 uncompressed, small pages and dictionaries",
            WriterProperties::builder()
                .set_writer_version(WriterVersion::PARQUET_2_0)
                .set_data_page_row_count_limit(100)
                .set_write_batch_size(37)
                .set_data_page_size_limit(700)
                .set_dictionary_page_size_limit(200)
                // Falling back to PLAIN (v2's default fallback for strings,
                // DELTA_BYTE_ARRAY, is not read here: see the next test).
                .set_encoding(Encoding::PLAIN),
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
        (
            "delta, one miniblock per block",
            delta(WriterProperties::builder()).set_delta_binary_packed_encoder_options(
                DeltaBinaryPackedEncoderOptions::try_new(128, 1).unwrap(),
            ),
        ),
    ]
}

#[test]
fn files_of_other_writer_settings_read_the_same_through_both_paths() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = XorShift(0xA11_5E77);
    for (k, (name, props)) in other_settings().into_iter().enumerate() {
        for rows in [0, 5, 30_000] {
            let path = dir.path().join(format!("raw{k}-{rows}.parquet"));
            let raw = raw_rows(&mut rng, rows);
            let rg = 1 + rng.below(12_000) as usize;
            let props = props.clone().set_max_row_group_row_count(Some(rg)).build();
            write_raw(&path, &raw, props, &mut rng);
            eprintln!("{name}: {rows} rows, row groups of {rg}");
            same_all(&path, rows);
        }
    }
}

#[test]
fn a_file_with_an_encoding_not_read_here_goes_through_arrow() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dba.parquet");
    let mut rng = XorShift(5);
    let raw = raw_rows(&mut rng, 3000);
    // v2 falls back from a full dictionary to DELTA_BYTE_ARRAY for strings.
    let props = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_2_0)
        .set_dictionary_page_size_limit(200)
        .build();
    write_raw(&path, &raw, props, &mut rng);
    let r = TraceReader::open_with(&path, Columns::All, 8192, true).unwrap();
    assert!(!r.uses_page_decoder());
    let got = read(&path, Columns::All, 8192, false).unwrap();
    assert_eq!(got.issue.len(), 3000);
    assert_eq!(
        got.streams.iter().filter(|&&s| s != 0).count(),
        raw.stream.iter().flatten().count()
    );
}

/// A raw file with one value changed, read through both paths: the errors.
fn errors_of(change: impl Fn(&mut Raw)) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.parquet");
    let mut rng = XorShift(77);
    let mut raw = raw_rows(&mut rng, 30_000);
    change(&mut raw);
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(7000))
        .build();
    write_raw(&path, &raw, props, &mut rng);
    let arrow = read(&path, Columns::All, 8192, false).expect_err("arrow refuses");
    let pages = read(&path, Columns::All, 8192, true).expect_err("pages refuse");
    (arrow.to_string(), pages.to_string())
}

#[test]
fn bad_values_are_refused_alike_by_both_paths() {
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
        let (arrow, pages) = errors_of(change);
        assert_eq!(arrow, pages);
        assert!(
            arrow.contains(want) && arrow.contains("bad.parquet"),
            "{arrow}"
        );
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
        // Past the page header mostly (the page reader checks headers): garbage, zeros
        // or all ones over a stretch of page data.
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
        let r = TraceReader::open_with(&path, Columns::All, 8192, true).and_then(|mut r| {
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

/// The first data page of column `name` in `path`.
fn first_data_page(path: &Path, name: &str) -> Page {
    let file = Arc::new(File::open(path).unwrap());
    let md = parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(file.as_ref())
        .unwrap();
    let rg = &md.row_groups()[0];
    let leaf = md
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .position(|c| c.name() == name)
        .unwrap();
    let rows = rg.num_rows() as usize;
    let mut pages = SerializedPageReader::new(file, rg.column(leaf), rows, None).unwrap();
    loop {
        let p = pages.get_next_page().unwrap().unwrap();
        if p.is_data_page() {
            return p;
        }
    }
}

#[test]
fn truncated_pages_are_errors_or_their_values() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    let mut rng = XorShift(0x7E57);
    let shape = Shape {
        rows: 3000,
        complete: 1,
        device: 1,
        many_lens: false,
        huge: true,
    };
    let recs = write_trace(&path, &shape, &mut rng);
    // issue_ns: DELTA_BINARY_PACKED after its definition levels (none: required).
    let page = first_data_page(&path, COL_ISSUE);
    assert_eq!(page.encoding(), Encoding::DELTA_BINARY_PACKED);
    let full: &[u8] = page.buffer();
    let n = page.num_values() as usize;
    let want: Vec<i64> = recs[..n].iter().map(|r| r.issue_ns as i64).collect();
    let mut ok = 0;
    for cut in (0..=full.len()).rev().step_by(7) {
        let buf = &full[..cut];
        let r = Delta::new(buf, 0, cut).and_then(|mut d| {
            let mut out = Vec::new();
            // Uneven takes: through the pending group.
            let mut left = n;
            while left > 0 {
                let k = left.min(13);
                d.take(buf, k, &mut out)?;
                left -= k;
            }
            Ok(out)
        });
        match r {
            Ok(v) => {
                assert_eq!(v, want, "cut at {cut} of {}", full.len());
                ok += 1;
            }
            Err(e) => assert!(!e.is_empty()),
        }
    }
    assert!(ok >= 1, "the whole page decodes");
    // op: dictionary keys, bit-packed (4 ops at random).
    let page = first_data_page(&path, COL_OP);
    assert!(matches!(
        page.encoding(),
        Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY
    ));
    let full: &[u8] = page.buffer();
    let n = page.num_values() as usize;
    let mut whole = None;
    // The keys themselves: a table mapping each key of the width to itself.
    let width = u32::from(full[0]);
    assert!(width <= 8, "op keys are a few bits wide");
    let keys_of_width: Vec<u32> = (0..1u32 << width).collect();
    for cut in (1..=full.len()).rev() {
        let buf = &full[..cut];
        let r = Hybrid::new(1, cut, width as usize).and_then(|mut h| {
            let mut out = Vec::new();
            h.take_mapped(buf, n, &keys_of_width, &mut out)?;
            Ok(out)
        });
        match (r, &whole) {
            (Ok(v), None) => whole = Some(v),
            (Ok(v), Some(w)) => assert_eq!(&v, w, "cut at {cut}"),
            (Err(e), _) => assert!(!e.is_empty()),
        }
    }
    let keys = whole.expect("the whole page decodes");
    assert_eq!(keys.len(), n);
    assert!(keys.iter().all(|&k| k < 4));
}

#[test]
fn unpack32_reads_every_width() {
    let mut rng = XorShift(99);
    for w in 0..=64usize {
        let vals: Vec<u64> = (0..32)
            .map(|_| match w {
                0 => 0,
                64 => rng.next(),
                _ => rng.next() & ((1u64 << w) - 1),
            })
            .collect();
        let mut bytes = vec![0u8; 4 * w];
        for (i, &v) in vals.iter().enumerate() {
            for b in 0..w {
                if v >> b & 1 == 1 {
                    let bit = i * w + b;
                    bytes[bit / 8] |= 1 << (bit % 8);
                }
            }
        }
        let mut out = [0u64; 32];
        unpack32(w, &bytes, &mut out);
        assert_eq!(out.to_vec(), vals, "width {w}");
    }
}

/// 32 values of `w` bits packed LSB first (4 * w bytes).
fn pack32(vals: &[u64], w: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; 4 * w];
    for (i, &v) in vals.iter().enumerate() {
        for b in 0..w {
            if v >> b & 1 == 1 {
                let bit = i * w + b;
                bytes[bit / 8] |= 1 << (bit % 8);
            }
        }
    }
    bytes
}

fn delta32_vec(simd: Simd, w: usize, input: &[u8], md: i64, last: i64) -> Vec<i64> {
    let mut out = [MaybeUninit::new(i64::MIN); 32];
    delta32(simd, w, input, md, last, &mut out);
    // SAFETY: initialised above (and overwritten by `delta32`).
    out.iter().map(|v| unsafe { v.assume_init() }).collect()
}

#[test]
fn delta32_decodes_every_width_at_every_level() {
    let mut rng = XorShift(0xDE17A);
    let levels = [Simd::Portable, Simd::detect()];
    eprintln!("levels: {levels:?}");
    for w in 0..=64usize {
        for round in 0..20 {
            let vals: Vec<u64> = (0..32)
                .map(|_| match w {
                    0 => 0,
                    64 => rng.next(),
                    _ if round == 0 => (1u64 << w) - 1,
                    _ => rng.next() & ((1u64 << w) - 1),
                })
                .collect();
            let md = match round {
                0 => i64::MIN,
                1 => i64::MAX,
                _ => rng.next() as i64 >> (rng.next() % 64),
            };
            let last = rng.next() as i64 >> (rng.next() % 64);
            let mut acc = last;
            let want: Vec<i64> = vals
                .iter()
                .map(|&d| {
                    acc = acc.wrapping_add((d as i64).wrapping_add(md));
                    acc
                })
                .collect();
            let packed = pack32(&vals, w);
            // Followed by other bytes (read, masked off), or the page ends right there.
            let mut longer = packed.clone();
            longer.extend((0..70).map(|_| rng.next() as u8));
            for simd in levels {
                assert_eq!(
                    delta32_vec(simd, w, &longer, md, last),
                    want,
                    "w {w} {simd:?}"
                );
                assert_eq!(
                    delta32_vec(simd, w, &packed, md, last),
                    want,
                    "w {w} {simd:?}"
                );
            }
            // A page cut inside the group: missing bytes read as zeros, at every level.
            let cuts = [0, 1, packed.len() / 2, packed.len().saturating_sub(1)];
            for cut in cuts.into_iter().filter(|&c| c <= packed.len()) {
                let mut cut_longer = packed[..cut].to_vec();
                cut_longer.resize(packed.len(), 0);
                cut_longer.extend_from_slice(&longer[packed.len()..]);
                let expect = delta32_vec(Simd::Portable, w, &cut_longer, md, last);
                for simd in levels {
                    let got = delta32_vec(simd, w, &packed[..cut], md, last);
                    assert_eq!(got, expect, "w {w} cut {cut} {simd:?}");
                }
            }
        }
    }
}

#[test]
fn unpack32_u32_matches_unpack32_up_to_32_bits() {
    let mut rng = XorShift(0x5EED);
    for w in 0..=32usize {
        let bytes: Vec<u8> = (0..4 * w + 3).map(|_| rng.next() as u8).collect();
        let (mut wide, mut narrow) = ([0u64; 32], [0u32; 32]);
        unpack32(w, &bytes, &mut wide);
        unpack32_u32(w, &bytes, &mut narrow);
        let wide: Vec<u32> = wide.iter().map(|&v| u32::try_from(v).unwrap()).collect();
        assert_eq!(narrow.to_vec(), wide, "width {w}");
    }
}

/// A bit-packed run of `keys` (a multiple of 8) at `width` bits, after its header.
fn hybrid_run(keys: &[u64], width: usize) -> Vec<u8> {
    assert!(keys.len().is_multiple_of(8) && keys.len() <= 32);
    let mut buf = vec![((keys.len() / 8) << 1 | 1) as u8];
    let mut padded = keys.to_vec();
    padded.resize(32, 0);
    let bytes = pack32(&padded, width);
    buf.extend_from_slice(&bytes[..keys.len() * width / 8]);
    buf
}

#[test]
fn dictionary_keys_past_the_table_are_errors_naming_the_largest() {
    let table: Vec<i64> = (0..5).map(|k| 100 + k).collect();
    let mut keys: Vec<u64> = (0..32).map(|i| i % 5).collect();
    let buf = hybrid_run(&keys, 3);
    let mut h = Hybrid::new(0, buf.len(), 3).unwrap();
    let mut out = Vec::new();
    h.take_mapped(&buf, 32, &table, &mut out).unwrap();
    assert_eq!(
        out,
        keys.iter().map(|&k| 100 + k as i64).collect::<Vec<_>>()
    );
    for (bad, max) in [(vec![5], 5), (vec![7, 6], 7), (vec![6], 6)] {
        for (i, &b) in bad.iter().enumerate() {
            keys[3 + 11 * i] = b;
        }
        let buf = hybrid_run(&keys, 3);
        let mut h = Hybrid::new(0, buf.len(), 3).unwrap();
        let e = h
            .take_mapped(&buf, 32, &table, &mut Vec::new())
            .unwrap_err();
        assert_eq!(e, format!("dictionary key {max} of 5 entries"));
    }
    // A table of 2^width entries takes every key.
    let table: Vec<i64> = (0..8).collect();
    let keys: Vec<u64> = (0..32).map(|i| 7 - i % 8).collect();
    let buf = hybrid_run(&keys, 3);
    let mut h = Hybrid::new(0, buf.len(), 3).unwrap();
    let mut out = Vec::new();
    h.take_mapped(&buf, 32, &table, &mut out).unwrap();
    assert_eq!(out, keys.iter().map(|&k| k as i64).collect::<Vec<_>>());
}
