//! Issue 23: real traces as they come. Captures with flush sequences and every blkparse
//! action, input out of order and split by volume, compressed and archived files,
//! header lines and byte order marks, and what characterize makes of them. The
//! fixtures are written by `tests/fixtures/traces/make_real_fixtures.py`, which also
//! writes the records its simulated captures issued (`*.expected.csv`).
//!
//! Every test here uses only the import API that existed before the issue (import,
//! import_stream, detect, characterize_file), so each can be run against the code
//! before the fix, where each fails.

use std::io::Write;
use std::path::{Path, PathBuf};
use storbench_trace::formats::{detect, import, import_stream, Format, ImportOptions};
use storbench_trace::{characterize_file, read_all, IoRecord, Op};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/traces")
        .join(name)
}

/// A record with its names: (op, offset, len, issue, complete, stream, device).
type Rec = (
    Op,
    u64,
    u64,
    u64,
    Option<u64>,
    Option<String>,
    Option<String>,
);

struct Imported {
    recs: Vec<Rec>,
    summary: storbench_trace::formats::ImportSummary,
    out: PathBuf,
    _dir: tempfile::TempDir,
}

fn named(path: &Path) -> Vec<Rec> {
    let (_, recs, streams, devices) = read_all(path).unwrap();
    assert!(
        recs.windows(2).all(|w| w[0].issue_ns <= w[1].issue_ns),
        "issue order"
    );
    recs.iter()
        .map(|r: &IoRecord| {
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

fn try_import(path: &Path, opts: &ImportOptions) -> Result<Imported, storbench_trace::TraceError> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    let summary = import(path, &out, opts)?;
    let recs = named(&out);
    assert_eq!(summary.records, recs.len() as u64);
    Ok(Imported {
        recs,
        summary,
        out,
        _dir: dir,
    })
}

fn imported(path: &Path, opts: &ImportOptions) -> Imported {
    try_import(path, opts).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn with_format(f: Format) -> ImportOptions {
    ImportOptions {
        format: Some(f),
        ..Default::default()
    }
}

fn count(m: &std::collections::BTreeMap<String, u64>, pat: &str) -> u64 {
    m.iter()
        .filter(|(k, _)| k.contains(pat))
        .map(|(_, v)| v)
        .sum()
}

fn write_tmp(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::File::create(&p).unwrap().write_all(data).unwrap();
    p
}

// --- blkparse -----------------------------------------------------------------------

/// A simulated capture of two disks: journal commits (flush, FUA write, then the
/// zero-length completion `C WS <sector> [0]`), merges, splits, requeues, remaps,
/// passthrough commands, plugs, messages. Imports to exactly the requests issued.
#[test]
fn blkparse_capture_imports_exactly_what_was_issued() {
    let got = imported(&fixture("blkparse_real.txt"), &ImportOptions::default());
    let want = imported(
        &fixture("blkparse_real.expected.csv"),
        &ImportOptions::default(),
    );
    assert_eq!(got.recs.len(), 65);
    assert!(
        got.recs == want.recs,
        "records differ from the simulation's"
    );
    let s = &got.summary;
    assert_eq!(s.bad_lines_skipped, 0);
    // The first issue of each requeued request gives way to its second.
    assert_eq!(count(&s.dropped, "issues of requeued requests (R"), 2);
    assert_eq!(s.dropped.len(), 1, "{:?}", s.dropped);
    // Every action is accounted for by its own rule, as many times as printed.
    for (rule, n) in [
        ("Q (queued)", 59),
        ("G (get request)", 60),
        ("I (inserted)", 28),
        ("M (back merge)", 1),
        ("F (front merge)", 2),
        ("S (sleep)", 7),
        ("P (plug)", 6),
        ("U (unplug)", 3),
        ("UT (unplug by timer)", 3),
        ("X (split)", 4),
        ("B (bounced)", 7),
        ("A (remap)", 6),
        ("m (message)", 8),
        ("passthrough", 8),
        ("ending a flush sequence", 5),
    ] {
        assert_eq!(count(&s.ignored, rule), n, "{rule}: {:?}", s.ignored);
    }
    assert!(s.reclassified.is_empty(), "{:?}", s.reclassified);
}

/// The line from the issue: blkparse prints the flush tail of a FUA/preflush write
/// without `+ n`; every ext4/jbd2 commit has one. It used to stop the import with
/// "field 'nsectors': expected '+'".
#[test]
fn blkparse_zero_length_completion_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_tmp(
        dir.path(),
        "b.txt",
        b"  8,16   5      322     3.832000000   311  D FWFS 1950885322 + 8 [jbd2/sdb1-8]
  8,16   5      323     3.832956000     0  C FWFS 1950885322 + 8 [0]
  8,16   5      324     3.832956675     0  C  WS 1950885322 [0]
",
    );
    let i = imported(&p, &ImportOptions::default());
    let rec: Vec<_> = i.recs.iter().map(|r| (r.0, r.1, r.2, r.3, r.4)).collect();
    assert_eq!(
        rec,
        vec![(Op::Write, 1950885322 * 512, 4096, 0, Some(956_000))]
    );
    assert_eq!(count(&i.summary.ignored, "ending a flush sequence"), 1);
}

/// One blkparse line of each action, the way `process_default` prints it, around a
/// D/C pair: D and C make the record, every other action is skipped under its own
/// rule (never an error, never lumped together).
macro_rules! blkparse_kind {
    ($name:ident, $line:expr, $rule:expr) => {
        #[test]
        fn $name() {
            let dir = tempfile::tempdir().unwrap();
            let text = format!(
                "  8,0    1        1     0.000100000  4242  D   W 2048 + 16 [fio]\n{}\n  8,0    1        9     0.000900000     0  C   W 2048 + 16 [0]\n",
                $line
            );
            let p = write_tmp(dir.path(), "b.txt", text.as_bytes());
            let i = imported(&p, &ImportOptions::default());
            let rec: Vec<_> = i.recs.iter().map(|r| (r.0, r.1, r.2, r.3, r.4)).collect();
            assert_eq!(rec, vec![(Op::Write, 2048 * 512, 8192, 0, Some(800_000))]);
            assert_eq!(count(&i.summary.ignored, $rule), 1, "{:?}", i.summary.ignored);
            assert_eq!(i.summary.lines, 3);
        }
    };
}

blkparse_kind!(
    blkparse_q_queued,
    "  8,0    1        2     0.000200000  4242  Q   R 9000 + 8 [fio]",
    "Q (queued)"
);
blkparse_kind!(
    blkparse_g_get_request,
    "  8,0    1        2     0.000200000  4242  G   R 9000 + 8 [fio]",
    "G (get request)"
);
blkparse_kind!(
    blkparse_i_inserted,
    "  8,0    1        2     0.000200000  4242  I   R 9000 + 8 [fio]",
    "I (inserted)"
);
blkparse_kind!(
    blkparse_m_back_merge,
    "  8,0    1        2     0.000200000  4242  M   W 2056 + 8 [fio]",
    "M (back merge)"
);
blkparse_kind!(
    blkparse_f_front_merge,
    "  8,0    1        2     0.000200000  4242  F   W 2040 + 8 [fio]",
    "F (front merge)"
);
blkparse_kind!(
    blkparse_p_plug,
    "  8,0    1        2     0.000200000  4242  P   N [fio]",
    "P (plug)"
);
blkparse_kind!(
    blkparse_u_unplug,
    "  8,0    1        2     0.000200000  4242  U   N [fio] 1",
    "U (unplug)"
);
blkparse_kind!(
    blkparse_ut_unplug_timer,
    "  8,0    1        2     0.000200000    57 UT   N [kworker/1:1H] 2",
    "UT (unplug by timer)"
);
blkparse_kind!(
    blkparse_zp_zone_plug,
    "  8,0    1        2     0.000200000  4242 ZP   N [fio]",
    "ZP (zone write plug)"
);
blkparse_kind!(
    blkparse_zu_zone_unplug,
    "  8,0    1        2     0.000200000  4242 ZU   N [fio] 1",
    "ZU (zone write unplug)"
);
blkparse_kind!(
    blkparse_x_split,
    "  8,0    1        2     0.000200000  4242  X   R 9000 / 9512 [fio]",
    "X (split)"
);
blkparse_kind!(
    blkparse_b_bounced,
    "  8,0    1        2     0.000200000  4242  B   R 9000 + 8 [fio]",
    "B (bounced)"
);
blkparse_kind!(
    blkparse_a_remap,
    "  8,0    1        2     0.000200000  4242  A   W 4096 + 8 <- (8,1) 2048",
    "A (remap)"
);
blkparse_kind!(
    blkparse_s_sleep,
    "  8,0    1        2     0.000200000  4242  S   R 9000 + 8 [fio]",
    "S (sleep)"
);
blkparse_kind!(
    blkparse_r_requeue_of_nothing_pending,
    "  8,0    1        2     0.000200000     0  R   R 9000 + 8 [0]",
    "requeues of requests not pending"
);
blkparse_kind!(
    blkparse_m_n_message,
    "  8,0    1        0     0.000200000  4242  m   N cfq4242S / set_active wl_class:0 wl_type:2",
    "m (message)"
);
blkparse_kind!(
    blkparse_passthrough_issue,
    "  8,0    1        2     0.000200000   999  D   R 36 (12 00 00 00 24 00 ..) [sg_inq]",
    "passthrough"
);
blkparse_kind!(
    blkparse_passthrough_completion,
    "  8,0    1        2     0.000200000     0  C   R (12 00 00 00 24 00 ..) [0]",
    "passthrough"
);

/// D and C: the record, also in the forms blkparse -t prints (elapsed time in
/// parentheses) and for a flush (no sectors at issue, `0 [0]` at completion).
#[test]
fn blkparse_d_and_c_in_every_printed_form() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_tmp(
        dir.path(),
        "b.txt",
        b"  8,0    1        1     0.000100000  4242  D   W 2048 + 16 (    1200) [fio]
  8,0    1        2     0.000200000    57  D  FN (     300) [kworker/1:1H]
  8,0    1        3     0.000300000     0  C  FN 0 (  100000) [0]
  8,0    1        4     0.000400000     0  C   W 2048 + 16 (  300000) [0]
  8,0    1        5     0.000500000    57  D  FN [kworker/1:1H]
  8,0    1        6     0.000600000     0  C  FN 0 [0]
  8,0    1        7     0.000700000     0  C   W 4096 (     100) [0]
",
    );
    let i = imported(&p, &ImportOptions::default());
    let rec: Vec<_> = i.recs.iter().map(|r| (r.0, r.1, r.2, r.3, r.4)).collect();
    assert_eq!(
        rec,
        vec![
            (Op::Write, 2048 * 512, 8192, 0, Some(300_000)),
            (Op::Flush, 0, 0, 100_000, Some(200_000)),
            (Op::Flush, 0, 0, 400_000, Some(500_000)),
        ]
    );
    assert_eq!(count(&i.summary.ignored, "ending a flush sequence"), 1);
}

/// An action letter blkparse never prints is a malformed line, named.
#[test]
fn blkparse_unknown_action_is_malformed() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_tmp(
        dir.path(),
        "b.txt",
        b"  8,0    1        1     0.000100000  4242  D   W 2048 + 16 [fio]\n  8,0    1        2     0.000200000  4242  Z   W 2048 + 16 [fio]\n",
    );
    let e = try_import(&p, &ImportOptions::default())
        .err()
        .expect("an unknown action fails");
    let msg = e.to_string();
    assert!(msg.contains("b.txt:2") && msg.contains("action"), "{msg}");
}

// --- ftrace -------------------------------------------------------------------------

/// Flushes as the kernel traces them: FF requests (sector 0 at issue, 2^64-1 at
/// completion), empty FUA writes (a flush where the device has no FUA), FUA data
/// writes followed by the zero-length completion of their sequence.
#[test]
fn ftrace_fua_and_empty_writes_are_flushes() {
    let got = imported(&fixture("ftrace_fua.txt"), &ImportOptions::default());
    let want = imported(
        &fixture("ftrace_fua.expected.csv"),
        &ImportOptions::default(),
    );
    assert!(
        got.recs == want.recs,
        "records differ from the simulation's"
    );
    let flushes = got.recs.iter().filter(|r| r.0 == Op::Flush).count();
    assert_eq!(flushes, 20);
    let s = &got.summary;
    assert!(s.dropped.is_empty(), "{:?}", s.dropped);
    assert_eq!(
        count(&s.reclassified, "writes with no data: recorded as flush"),
        10
    );
    assert_eq!(count(&s.ignored, "ending a flush sequence"), 10);
}

// --- order --------------------------------------------------------------------------

/// MSR lines sorted by their timestamp field (stable), as text.
fn sorted_lines(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_by_key(|l| l.split(',').next().unwrap().parse::<u64>().unwrap());
    lines.join("\n") + "\n"
}

/// The last 100 of 300 lines moved to the front: every record keeps its time (the
/// import used to set 199 of them to time 0 and shrink the duration).
#[test]
fn msr_out_of_order_imports_as_if_sorted() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("msr_shuffled.csv")).unwrap();
    let sorted = write_tmp(dir.path(), "sorted.csv", sorted_lines(&text).as_bytes());
    let got = imported(&fixture("msr_shuffled.csv"), &ImportOptions::default());
    let want = imported(&sorted, &ImportOptions::default());
    assert_eq!(got.recs.len(), 300);
    assert!(
        got.recs == want.recs,
        "out-of-order input imported differently"
    );
    assert!(
        got.summary.reclassified.is_empty(),
        "{:?}",
        got.summary.reclassified
    );
    let c = characterize_file(&got.out).unwrap();
    assert_eq!(
        c.duration_ns,
        characterize_file(&want.out).unwrap().duration_ns
    );
}

/// Four per-volume files (two with the standard header, CRLF line ends) joined with
/// `cat`: one trace of four devices, each device's records exactly as when imported
/// alone, shifted by the difference of the two files' first timestamps.
#[test]
fn msr_volumes_joined_import_as_one_multi_device_trace() {
    let dir = tempfile::tempdir().unwrap();
    let mut all = Vec::new();
    for k in 0..4 {
        all.extend(std::fs::read(fixture(&format!("msr_vol_{k}.csv"))).unwrap());
    }
    let joined = write_tmp(dir.path(), "all.csv", &all);
    let got = imported(&joined, &ImportOptions::default());
    assert_eq!(got.recs.len(), 320);
    assert_eq!(count(&got.summary.ignored, "header"), 2);
    let first_ts = |k: usize| -> u64 {
        let text = std::fs::read_to_string(fixture(&format!("msr_vol_{k}.csv"))).unwrap();
        text.lines()
            .filter_map(|l| l.split(',').next()?.parse::<u64>().ok())
            .next()
            .unwrap()
    };
    let base = (0..4).map(first_ts).min().unwrap();
    for k in 0..4 {
        let alone = imported(
            &fixture(&format!("msr_vol_{k}.csv")),
            &ImportOptions::default(),
        );
        let dev = alone.recs[0].6.clone();
        let shift = (first_ts(k) - base) * 100;
        let mine: Vec<Rec> = got.recs.iter().filter(|r| r.6 == dev).cloned().collect();
        let want: Vec<Rec> = alone
            .recs
            .iter()
            .map(|r| {
                let mut r = r.clone();
                r.3 += shift;
                r.4 = r.4.map(|c| c + shift);
                r
            })
            .collect();
        assert!(
            mine == want,
            "volume {k} ({dev:?}) differs in the joined trace"
        );
    }
    // The same volumes as a .tgz (one member itself gzip-compressed, a directory and
    // an empty one beside them): the same trace.
    let tgz = imported(
        &fixture("compressed/msr_volumes.tgz"),
        &ImportOptions::default(),
    );
    assert!(
        tgz.recs == got.recs,
        "the .tgz imports differently from the joined files"
    );
}

// --- compression --------------------------------------------------------------------

/// Every text format gzip-compressed imports as the plain file, format detected.
#[test]
fn every_format_gzipped_imports_as_plain() {
    for name in [
        "ftrace_messy.txt",
        "blkparse.txt",
        "fio_v2.log",
        "fio_v3.log",
        "msr.csv",
        "alibaba.csv",
        "tencent.csv",
        "spc.csv",
        "storbench.csv",
    ] {
        let plain = imported(&fixture(name), &ImportOptions::default());
        let gz = fixture(&format!("compressed/{name}.gz"));
        assert_eq!(
            detect(&gz).unwrap(),
            detect(&fixture(name)).unwrap(),
            "{name}"
        );
        let got = imported(&gz, &ImportOptions::default());
        assert!(got.recs == plain.recs, "{name}.gz");
        assert_eq!(got.summary.lines, plain.summary.lines, "{name}.gz");
        // And from stdin.
        let out = got._dir.path().join("stdin.parquet");
        let data = std::fs::read(&gz).unwrap();
        import_stream(
            Path::new("<stdin>"),
            Box::new(std::io::Cursor::new(data)),
            &out,
            &ImportOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{name}.gz on stdin: {e}"));
        assert!(named(&out) == plain.recs, "{name}.gz on stdin");
    }
}

/// gzip of two members, zstd of two frames, xz and bzip2 of two streams (what
/// `cat a.gz b.gz`, pigz and pzstd write), each made by the system's tool.
#[test]
fn every_codec_with_several_members_imports_as_plain() {
    let plain = imported(&fixture("msr_shuffled.csv"), &ImportOptions::default());
    for ext in ["gz", "zst", "xz", "bz2"] {
        let got = imported(
            &fixture(&format!("compressed/msr_shuffled.csv.{ext}")),
            &ImportOptions::default(),
        );
        assert_eq!(got.recs.len(), 300, "{ext}: both members read");
        assert!(got.recs == plain.recs, "{ext}");
    }
}

/// A binary file that is no known compression: a clear error naming the file, never
/// the bytes as a field value.
#[test]
fn binary_input_is_a_clear_error() {
    let p = fixture("compressed/not_a_trace.bin");
    for opts in [ImportOptions::default(), with_format(Format::MSR)] {
        let e = try_import(&p, &opts).err().expect("binary input fails");
        let msg = e.to_string();
        assert!(msg.contains("not_a_trace.bin"), "{msg}");
        assert!(msg.contains("binary data"), "{msg}");
        assert!(
            !msg.chars()
                .any(|c| c == '\u{fffd}' || (c.is_control() && c != '\n')),
            "binary garbage in the message: {msg:?}"
        );
    }
}

// --- headers and byte order marks ---------------------------------------------------

/// The standard MSR header behind a UTF-8 byte order mark: detected as MSR (format
/// detection used to fail on it) and skipped.
#[test]
fn msr_standard_header_and_bom_are_detected_and_skipped() {
    let p = fixture("msr_header_bom_zero_service.csv");
    assert_eq!(detect(&p).unwrap(), Format::MSR);
    let i = imported(&p, &ImportOptions::default());
    assert_eq!(i.recs.len(), 60);
    assert_eq!(count(&i.summary.ignored, "header"), 1);
    // Only the header: still MSR.
    let dir = tempfile::tempdir().unwrap();
    let h = write_tmp(
        dir.path(),
        "h.csv",
        b"\xef\xbb\xbfTimestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\r\n",
    );
    assert_eq!(detect(&h).unwrap(), Format::MSR);
}

/// Alibaba, Tencent (behind a byte order mark) and SPC files with a header line
/// import, detected or with `--format`.
#[test]
fn alibaba_tencent_spc_headers_are_skipped() {
    for (name, format, rows) in [
        ("alibaba_header.csv", Format::ALIBABA, 80),
        ("tencent_header.csv", Format::TENCENT, 80),
        ("spc_header.csv", Format::SPC, 90),
    ] {
        let p = fixture(name);
        assert_eq!(detect(&p).unwrap(), format, "{name}");
        for opts in [ImportOptions::default(), with_format(format)] {
            let i = imported(&p, &opts);
            assert_eq!(i.recs.len(), rows, "{name}");
            assert_eq!(count(&i.summary.ignored, "header"), 1, "{name}");
        }
    }
}

// --- characterize -------------------------------------------------------------------

/// Footprint is per device like % sequential: the same offsets on three devices are
/// three times the bytes (it used to count them once), and each device is listed.
#[test]
fn footprint_is_per_device_and_summed() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("issue_ns,complete_ns,offset_bytes,len_bytes,op,stream,device\n");
    let mut t = 0;
    for i in 0..100u64 {
        for dev in ["8,16", "8,32", "8,48"] {
            text += &format!("{t},{},{},8192,write,,\"{dev}\"\n", t + 50, i * 1_000_000);
            t += 100;
        }
    }
    let p = write_tmp(dir.path(), "t.csv", text.as_bytes());
    let i = imported(&p, &ImportOptions::default());
    let c = characterize_file(&i.out).unwrap();
    assert_eq!(c.footprint_bytes, 3 * 100 * 8192);
    let j = serde_json::to_value(&c).unwrap();
    let per = j["footprint_per_device"]
        .as_array()
        .expect("per-device footprints");
    let per: Vec<(String, u64)> = per
        .iter()
        .map(|d| {
            (
                d["device"].as_str().unwrap().to_owned(),
                d["footprint_bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        per,
        vec![
            ("8,16".to_owned(), 819_200),
            ("8,32".to_owned(), 819_200),
            ("8,48".to_owned(), 819_200)
        ]
    );
}

/// Every service time 0 (ResponseTime 0): how long I/Os took is unknown, so busy time
/// and the QD figures are n/a, as without completions (they used to print average QD
/// 0, max QD 1, 100% at QD1 beside a busy time of 0).
#[test]
fn all_service_times_zero_give_no_qd_figures() {
    let i = imported(
        &fixture("msr_header_bom_zero_service.csv"),
        &ImportOptions::default(),
    );
    let c = characterize_file(&i.out).unwrap();
    assert_eq!(c.ios_with_completion, 60);
    assert_eq!((c.busy_ns, c.idle_ns), (None, None));
    assert!(c.qd.is_none(), "{:?}", c.qd);
    assert!(c.service_time_us.is_none());
    let table = c.to_table();
    assert!(table.contains("n/a (every service time is 0"), "{table}");
    assert!(!table.contains("average QD"), "{table}");
}
