//! Each importer on a fixture with known answers (tests/fixtures/traces).

use std::path::{Path, PathBuf};
use storbench_trace::formats::{detect, import, Format, ImportOptions, ImportSummary};
use storbench_trace::{read_all, IoRecord, Names, Op, TraceError};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/traces")
        .join(name)
}

struct Imported {
    summary: ImportSummary,
    recs: Vec<IoRecord>,
    streams: Names,
    devices: Names,
    _dir: tempfile::TempDir,
}

fn run(name: &str, opts: ImportOptions) -> Imported {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    let summary = import(&fixture(name), &out, &opts).unwrap();
    let (meta, recs, streams, devices) = read_all(&out).unwrap();
    assert_eq!(
        meta.extra.get("import.records").unwrap(),
        &recs.len().to_string()
    );
    assert_eq!(summary.records, recs.len() as u64);
    // Every importer writes issue order.
    assert!(recs.windows(2).all(|w| w[0].issue_ns <= w[1].issue_ns));
    Imported {
        summary,
        recs,
        streams,
        devices,
        _dir: dir,
    }
}

fn key(r: &IoRecord) -> (Op, u64, u64, u64, Option<u64>) {
    (r.op, r.offset_bytes, r.len_bytes, r.issue_ns, r.complete_ns)
}

fn n(m: &std::collections::BTreeMap<String, u64>, pat: &str) -> u64 {
    m.iter()
        .filter(|(k, _)| k.contains(pat))
        .map(|(_, v)| v)
        .sum()
}

#[test]
fn detects_every_fixture_format() {
    for (f, want) in [
        ("ftrace_messy.txt", Format::FTRACE),
        ("trace_cmd_report.txt", Format::FTRACE),
        ("blkparse.txt", Format::BLKPARSE),
        ("fio_v2.log", Format::FIO_IOLOG_V2),
        ("fio_v3.log", Format::FIO_IOLOG_V3),
        ("msr.csv", Format::MSR),
        ("alibaba.csv", Format::ALIBABA),
        ("tencent.csv", Format::TENCENT),
        ("spc.csv", Format::SPC),
    ] {
        assert_eq!(detect(&fixture(f)).unwrap(), want, "{f}");
    }
}

#[test]
fn ftrace_messy_capture() {
    let i = run("ftrace_messy.txt", ImportOptions::default());
    let got: Vec<_> = i.recs.iter().map(key).collect();
    assert_eq!(
        got,
        vec![
            (Op::Write, 0, 4096, 0, Some(100_000)),
            (Op::Read, 32768, 8192, 10_000, Some(300_000)),
            (Op::Flush, 0, 0, 400_000, Some(500_000)),
            (Op::Flush, 0, 0, 410_000, Some(550_000)),
            (Op::Trim, 1_048_576, 1_048_576, 600_000, Some(800_000)),
            (Op::Write, 0, 4096, 900_000, Some(1_000_000)),
            (Op::Write, 131_072, 8192, 1_900_000, None),
        ]
    );
    let s = &i.summary;
    assert_eq!(n(&s.dropped, "completions without an issue"), 1);
    assert_eq!(n(&s.dropped, "letter N"), 1);
    assert_eq!(n(&s.dropped, "LOST"), 1);
    assert_eq!(
        n(&s.reclassified, "writes with no data: recorded as flush"),
        1
    );
    assert_eq!(n(&s.reclassified, "completed in parts"), 1);
    assert_eq!(n(&s.reclassified, "never completed"), 1);
    assert_eq!(n(&s.ignored, "other trace events"), 1);
    assert_eq!(n(&s.ignored, "comment"), 7);
    assert_eq!(s.lines, 26);
    let names: Vec<&str> = i
        .recs
        .iter()
        .map(|r| i.streams.get(r.stream.unwrap().0).unwrap())
        .collect();
    assert_eq!(names[0], "fio");
    assert_eq!(names[3], "jbd2/loop0-8");
    assert_eq!(i.devices.get(i.recs[5].device.unwrap().0), Some("8,16"));
    // Filtered to one device.
    let i = run(
        "ftrace_messy.txt",
        ImportOptions {
            device: Some((7, 0)),
            ..Default::default()
        },
    );
    assert_eq!(i.recs.len(), 6);
    assert_eq!(n(&i.summary.ignored, "other devices"), 2);
    assert!(i
        .recs
        .iter()
        .all(|r| i.devices.get(r.device.unwrap().0) == Some("7,0")));
}

#[test]
fn trace_cmd_report_nanosecond_timestamps() {
    let i = run("trace_cmd_report.txt", ImportOptions::default());
    let got: Vec<_> = i.recs.iter().map(key).collect();
    assert_eq!(
        got,
        vec![
            (Op::Read, 0, 131072, 0, Some(50_000)),
            (Op::Read, 131072, 131072, 100, Some(60_100)),
        ]
    );
}

#[test]
fn ftrace_bad_line_names_file_line_field_and_skip_counts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.parquet");
    let e = import(&fixture("ftrace_bad.txt"), &out, &ImportOptions::default()).unwrap_err();
    assert!(
        matches!(
            e,
            TraceError::Parse {
                line: 3,
                field: "nsectors",
                ..
            }
        ),
        "{e}"
    );
    assert!(!out.exists(), "a failed import leaves no half-written file");
    let msg = e.to_string();
    assert!(
        msg.contains("ftrace_bad.txt:3") && msg.contains("nsectors"),
        "{msg}"
    );
    let opts = ImportOptions {
        skip_bad_lines: true,
        ..Default::default()
    };
    let s = import(&fixture("ftrace_bad.txt"), &out, &opts).unwrap();
    assert_eq!((s.bad_lines_skipped, s.records), (1, 1));
    assert!(s.to_text().contains("skipped 1 malformed lines"));
}

#[test]
fn blkparse_d_and_c() {
    let i = run("blkparse.txt", ImportOptions::default());
    let got: Vec<_> = i.recs.iter().map(key).collect();
    assert_eq!(
        got,
        vec![
            (Op::Write, 3417048 * 512, 4096, 0, Some(266_083)),
            (Op::Read, 2000 * 512, 131072, 534, Some(490_534)),
            (Op::Flush, 0, 0, 290_534, Some(390_534)),
            (Op::Trim, 4096 * 512, 1024 * 512, 590_534, Some(790_534)),
            (Op::Write, 8192 * 512, 4096, 690_534, None),
        ]
    );
    let s = &i.summary;
    assert_eq!(n(&s.dropped, "completions without an issue"), 1);
    // Q, G and P lines, each skipped by its own rule.
    assert_eq!(n(&s.ignored, "(queued) events"), 1);
    assert_eq!(n(&s.ignored, "(get request) events"), 1);
    assert_eq!(n(&s.ignored, "(plug) events"), 1);
    assert_eq!(n(&s.ignored, "closing statistics"), 9);
    assert_eq!(n(&s.reclassified, "never completed"), 1);
    assert_eq!(
        i.streams.get(i.recs[0].stream.unwrap().0),
        Some("kworker/3:1H")
    );
}

#[test]
fn fio_iolog_v2_and_v3() {
    let i = run("fio_v2.log", ImportOptions::default());
    let got: Vec<_> = i.recs.iter().map(key).collect();
    assert_eq!(
        got,
        vec![
            (Op::Write, 0, 4096, 0, None),
            (Op::Write, 4096, 4096, 100_000, None),
            (Op::Read, 0, 8192, 100_000, None),
            (Op::Trim, 8192, 65536, 150_000, None),
            (Op::Flush, 0, 0, 150_000, None),
        ]
    );
    assert_eq!(
        i.devices.get(i.recs[0].device.unwrap().0),
        Some("/dev/loop0")
    );
    assert_eq!(n(&i.summary.ignored, "add/open/close"), 3);
    let i = run("fio_v3.log", ImportOptions::default());
    let got: Vec<_> = i.recs.iter().map(key).collect();
    assert_eq!(
        got,
        vec![
            (Op::Write, 0, 4096, 0, None),
            (Op::Read, 4096, 16384, 10_000, None),
            (Op::Flush, 0, 0, 500_000, None),
            (Op::Trim, 0, 4096, 1_000_000, None),
        ]
    );
    // A v2 log given as v3 is refused on its header.
    let dir = tempfile::tempdir().unwrap();
    let e = import(
        &fixture("fio_v2.log"),
        &dir.path().join("o.parquet"),
        &ImportOptions {
            format: Some(Format::FIO_IOLOG_V3),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            TraceError::Parse {
                line: 1,
                field: "header",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn msr_cambridge() {
    let i = run("msr.csv", ImportOptions::default());
    let got: Vec<_> = i.recs.iter().map(key).collect();
    // The last line is stamped 100 ms before the first: it is sorted into place and
    // times are rebased to it (it used to be set to time 0, then moved after the
    // records already written).
    assert_eq!(
        got,
        vec![
            (Op::Read, 0, 512, 0, Some(10_000)),
            (Op::Read, 383496192, 32768, 100_000_000, Some(100_117_900)),
            (Op::Write, 1000, 4096, 101_000_000, Some(101_050_000)),
        ]
    );
    assert_eq!(n(&i.summary.dropped, "zero-length"), 1);
    assert_eq!(i.summary.out_of_order, 1);
    assert!(
        i.summary.reclassified.is_empty(),
        "{:?}",
        i.summary.reclassified
    );
    assert_eq!(i.devices.get(i.recs[0].device.unwrap().0), Some("hm_1"));
}

#[test]
fn alibaba_with_and_without_device_filter() {
    let i = run("alibaba.csv", ImportOptions::default());
    assert_eq!(i.recs.len(), 3);
    assert_eq!(i.devices.len(), 2);
    let i = run(
        "alibaba.csv",
        ImportOptions {
            device_id: Some(419),
            ..Default::default()
        },
    );
    let got: Vec<_> = i.recs.iter().map(key).collect();
    assert_eq!(
        got,
        vec![
            (Op::Write, 8448000, 4096, 0, None),
            (Op::Read, 0, 8192, 100_000, None)
        ]
    );
    assert_eq!(n(&i.summary.ignored, "other devices"), 1);
    assert_eq!(n(&i.summary.dropped, "zero-length"), 1);
}

#[test]
fn tencent_volume_filter() {
    let i = run(
        "tencent.csv",
        ImportOptions {
            volume: Some(1063),
            ..Default::default()
        },
    );
    let got: Vec<_> = i.recs.iter().map(key).collect();
    assert_eq!(
        got,
        vec![
            (Op::Write, 51200, 4096, 0, None),
            (Op::Write, 55296, 4096, 0, None),
            (Op::Read, 102400, 4096, 2_000_000_000, None),
        ]
    );
    assert_eq!(n(&i.summary.ignored, "other volumes"), 1);
}

#[test]
fn spc_umass_and_bad_line() {
    let i = run("spc.csv", ImportOptions::default());
    let got: Vec<_> = i.recs.iter().map(key).collect();
    assert_eq!(
        got,
        vec![
            (Op::Write, 20941264 * 512, 8192, 0, None),
            (Op::Write, 20939840 * 512, 8192, 2_335_000, None),
            (Op::Read, 1234 * 512, 512, 48_294_000, None),
        ]
    );
    assert_eq!(i.devices.get(i.recs[2].device.unwrap().0), Some("1"));
    let dir = tempfile::tempdir().unwrap();
    let e = import(
        &fixture("spc_bad.csv"),
        &dir.path().join("o.parquet"),
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            TraceError::Parse {
                line: 2,
                field: "opcode",
                ..
            }
        ),
        "{e}"
    );
}

/// Converting a format's units (sectors, seconds, µs) to bytes and ns can overflow; the
/// error names the field whose value overflowed, in each device-keyed CSV format.
#[test]
fn unit_overflow_names_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let huge = u64::MAX / 4;
    for (format, line, field) in [
        (Format::TENCENT, format!("1,{huge},8,0,7"), "offset"),
        (Format::TENCENT, format!("1,0,{huge},0,7"), "size"),
        (
            Format::TENCENT,
            format!("1,0,8,0,7\n{huge},0,8,0,7"),
            "timestamp",
        ),
        (Format::SPC, format!("0,{huge},4096,r,0.5"), "LBA"),
        (
            Format::ALIBABA,
            format!("3,R,0,4096,1\n3,R,0,4096,{huge}"),
            "timestamp",
        ),
        (
            Format::ALIBABA,
            format!("3,R,{huge},{},1", u64::MAX / 2),
            "offset",
        ),
    ] {
        let input = dir.path().join("in.csv");
        std::fs::write(&input, format!("{line}\n")).unwrap();
        let opts = ImportOptions {
            format: Some(format),
            ..Default::default()
        };
        let e = import(&input, &dir.path().join("o.parquet"), &opts).unwrap_err();
        match e {
            TraceError::Parse { field: f, .. } => assert_eq!(f, field, "{format:?} {line}: {e}"),
            other => panic!("{format:?} {line}: {other}"),
        }
    }
}

/// Real kernels print a flush's sector as 0 at issue and 2^64-1 at completion, then
/// complete the zero-length write that asked for the flush (captured on a loop device).
#[test]
fn ftrace_kernel_flush_sequence() {
    let i = run("ftrace_flush_seq.txt", ImportOptions::default());
    let got: Vec<_> = i.recs.iter().map(key).collect();
    assert_eq!(
        got,
        vec![
            (Op::Flush, 0, 0, 0, Some(2_471_000)),
            (Op::Read, 0, 16384, 380_000, Some(450_000)),
        ]
    );
    assert!(i.summary.dropped.is_empty(), "{:?}", i.summary.dropped);
    assert_eq!(n(&i.summary.ignored, "ending a flush sequence"), 1);
}

/// A reader handing out at most 7 bytes per read, as a pipe may.
struct Trickle(std::io::Cursor<Vec<u8>>);
impl std::io::Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(7);
        self.0.read(&mut buf[..n])
    }
}

#[test]
fn stdin_stream_detects_format_and_imports_the_same_records_as_the_file() {
    use storbench_trace::formats::import_stream;
    // A long input too: detection stops after its sample and the rest still imports.
    let dir = tempfile::tempdir().unwrap();
    let long = dir.path().join("long_msr.csv");
    let mut text = String::new();
    for i in 0..5000u64 {
        text += &format!(
            "{},hm,1,Read,{},4096,10\n",
            128166372003061629 + i * 100,
            i * 4096
        );
    }
    std::fs::write(&long, &text).unwrap();
    for f in [
        "ftrace_messy.txt",
        "blkparse.txt",
        "fio_v3.log",
        "msr.csv",
        "spc.csv",
    ] {
        let from_file = run(f, ImportOptions::default());
        let out = dir.path().join(format!("{f}.parquet"));
        let data = std::fs::read(fixture(f)).unwrap();
        let s = import_stream(
            Path::new("<stdin>"),
            Box::new(Trickle(std::io::Cursor::new(data))),
            &out,
            &ImportOptions::default(),
        )
        .unwrap();
        assert_eq!(s.format, from_file.summary.format, "{f}");
        assert_eq!(s.lines, from_file.summary.lines, "{f}");
        let (meta, recs, _, _) = read_all(&out).unwrap();
        assert_eq!(meta.source_file.as_deref(), Some("<stdin>"));
        let k: Vec<_> = recs.iter().map(key).collect();
        let want: Vec<_> = from_file.recs.iter().map(key).collect();
        assert_eq!(k, want, "{f}");
    }
    let out = dir.path().join("long.parquet");
    let s = import_stream(
        Path::new("<stdin>"),
        Box::new(Trickle(std::io::Cursor::new(text.into_bytes()))),
        &out,
        &ImportOptions::default(),
    )
    .unwrap();
    assert_eq!((s.format.as_str(), s.records, s.lines), ("msr", 5000, 5000));
    // Undetectable input names the stream and says to give --format.
    let e = import_stream(
        Path::new("<stdin>"),
        Box::new(std::io::Cursor::new(b"hello\nworld\n".to_vec())),
        &out,
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("<stdin>: cannot tell"), "{e}");
    assert!(e.to_string().contains("--format"), "{e}");
}
