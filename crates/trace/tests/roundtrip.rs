//! Property: import -> export -> import gives the same records (CSV: every field; fio
//! iolog v3: what the format carries, i.e. op, offset, length, device, issue time in µs).

use proptest::prelude::*;
use storbench_trace::formats::export::{export, ExportFormat, ExportOptions};
use storbench_trace::formats::{import, Format, ImportOptions};
use storbench_trace::{read_all, IoRecord, Op, TraceMeta, TraceWriter};

#[derive(Clone, Debug)]
struct R {
    gap_us: u64,
    sub_us_ns: u64,
    svc_ns: Option<u64>,
    op: Op,
    offset: u64,
    len: u64,
    stream: Option<usize>,
    device: usize,
}

const STREAMS: [&str; 4] = ["fio", "kworker/0:1H", "a,b \"q\"", ""];
const DEVICES: [&str; 3] = ["/dev/loop0", "8,16", "/tmp/x.dat"];

fn rec() -> impl Strategy<Value = R> {
    (
        0u64..5_000,
        0u64..1000,
        proptest::option::of(0u64..10_000_000),
        0usize..4,
        0u64..(1 << 40),
        1u64..(1 << 21),
        proptest::option::of(0usize..4),
        0usize..3,
    )
        .prop_map(
            |(gap_us, sub_us_ns, svc_ns, op, offset, len, stream, device)| R {
                gap_us,
                sub_us_ns,
                svc_ns,
                op: Op::ALL[op],
                offset,
                len,
                stream,
                device,
            },
        )
}

/// (op, offset, len, issue, complete, stream name, device name)
type Flat = (
    Op,
    u64,
    u64,
    u64,
    Option<u64>,
    Option<String>,
    Option<String>,
);

/// Writes the records; `fio_exact` builds the subset fio iolog v3 represents exactly.
fn write(path: &std::path::Path, rs: &[R], fio_exact: bool) -> Vec<Flat> {
    let mut w = TraceWriter::create(path, &TraceMeta::default()).unwrap();
    let mut t_us = 0;
    let mut last_issue = 0;
    let mut want = Vec::new();
    for (i, r) in rs.iter().enumerate() {
        if i > 0 {
            t_us += r.gap_us;
        }
        // Trace files are in issue order: never before the previous record.
        let issue = if fio_exact {
            t_us * 1000
        } else {
            (t_us * 1000 + r.sub_us_ns).max(last_issue)
        };
        last_issue = issue;
        let (off, len) = if r.op == Op::Flush && fio_exact {
            (0, 0)
        } else {
            (r.offset, r.len)
        };
        let mut rec = IoRecord::new(r.op, off, len, issue);
        let mut sname = None;
        if !fio_exact {
            rec.complete_ns = r.svc_ns.map(|s| issue + s);
            if let Some(s) = r.stream {
                rec.stream = Some(w.intern_stream(STREAMS[s]));
                sname = Some(STREAMS[s].to_owned());
            }
        }
        let dname = DEVICES[r.device];
        rec.device = Some(w.intern_device(dname));
        w.write(&rec).unwrap();
        want.push((
            rec.op,
            off,
            len,
            issue,
            rec.complete_ns,
            sname,
            Some(dname.to_owned()),
        ));
    }
    w.finish().unwrap();
    want
}

fn reimport(src: &std::path::Path, fmt: ExportFormat, import_fmt: Format) -> Vec<Flat> {
    let dir = src.parent().unwrap();
    let text = dir.join("exported.txt");
    export(src, &text, fmt, &ExportOptions::default()).unwrap();
    let back = dir.join("back.parquet");
    let opts = ImportOptions {
        format: Some(import_fmt),
        ..Default::default()
    };
    import(&text, &back, &opts).unwrap();
    let (_, recs, streams, devices) = read_all(&back).unwrap();
    recs.iter()
        .map(|r| {
            (
                r.op,
                r.offset_bytes,
                r.len_bytes,
                r.issue_ns,
                r.complete_ns,
                r.stream.map(|s| streams.get(s.0).unwrap().to_owned()),
                r.device.map(|d| devices.get(d.0).unwrap().to_owned()),
            )
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn csv_round_trip_is_lossless(rs in proptest::collection::vec(rec(), 0..300)) {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src.parquet");
        let want = write(&src, &rs, false);
        let got = reimport(&src, ExportFormat::Csv, Format::CSV);
        prop_assert_eq!(got, want);
    }

    #[test]
    fn fio_v3_round_trip(rs in proptest::collection::vec(rec(), 1..300)) {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src.parquet");
        let want = write(&src, &rs, true);
        let got = reimport(&src, ExportFormat::FioIologV3, Format::FIO_IOLOG_V3);
        prop_assert_eq!(got, want);
    }
}
