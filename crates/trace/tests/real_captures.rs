//! Issue 34: block captures recorded on a real kernel and printed by the real tools
//! (`tests/fixtures/traces/captures/capture.sh`: ext4 with journal commits on one loop
//! device, fio's direct reads and writes on another; blkparse 1.2.0's text of the blk
//! tracer's events, and tracefs per-CPU files). Each test fails on the importer before
//! the issue: blkparse's timer unplugs (`UT`) stopped the import at line 4, an
//! issue-only capture lost its repeated reads as "requeues", and a capture printed CPU
//! by CPU lost every completion printed before its issue.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use storbench_trace::formats::spill::SortLimits;
use storbench_trace::formats::{import, import_files, ImportOptions, ImportSummary};
use storbench_trace::{characterize_file, read_all, IoRecord, Op, TraceError};

fn capture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/traces/captures")
        .join(name)
}

/// A record with its device name: (op, offset, len, issue, complete, device).
type Rec = (Op, u64, u64, u64, Option<u64>, Option<String>);

struct Imported {
    recs: Vec<Rec>,
    summary: ImportSummary,
    out: PathBuf,
    _dir: tempfile::TempDir,
}

fn try_import_all(inputs: &[PathBuf], opts: &ImportOptions) -> Result<Imported, TraceError> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    let summary = import_files(inputs, &out, opts)?;
    let (_, recs, _, devices) = read_all(&out).unwrap();
    assert_eq!(summary.records, recs.len() as u64);
    let recs = recs
        .iter()
        .map(|r: &IoRecord| {
            (
                r.op,
                r.offset_bytes,
                r.len_bytes,
                r.issue_ns,
                r.complete_ns,
                r.device.map(|d| devices.get(d.0).unwrap().to_owned()),
            )
        })
        .collect();
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 1, "temporary files left: {left:?}");
    Ok(Imported {
        recs,
        summary,
        out,
        _dir: dir,
    })
}

fn imported(path: &Path, opts: &ImportOptions) -> Imported {
    try_import_all(&[path.to_path_buf()], opts)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn count(m: &BTreeMap<String, u64>, pat: &str) -> u64 {
    m.iter()
        .filter(|(k, _)| k.contains(pat))
        .map(|(_, v)| v)
        .sum()
}

/// blkparse's own closing statistics: per device, the number after each label
/// (`Reads Completed`, `Write Dispatches`, ...) of its `Total (MAJ,MIN)` section, or of
/// its one `CPUn (MAJ,MIN)` section when only one CPU had events.
fn blkparse_totals(text: &str) -> BTreeMap<(String, String), u64> {
    let mut out = BTreeMap::new();
    let mut dev = None;
    for line in text.lines() {
        let section = line.strip_suffix("):").and_then(|l| {
            let (head, d) = l.split_once(" (")?;
            (head == "Total" || head.starts_with("CPU")).then_some(d)
        });
        if let Some(d) = section {
            dev = Some(d.to_owned());
            continue;
        }
        let Some(d) = &dev else { continue };
        if line.trim().is_empty() {
            dev = None;
            continue;
        }
        for part in line.split('\t') {
            if let Some((label, rest)) = part.split_once(':') {
                let n = rest.trim().split(',').next().unwrap().trim();
                if let Ok(n) = n.parse::<u64>() {
                    out.insert((d.clone(), label.trim().to_owned()), n);
                }
            }
        }
    }
    out
}

/// A device's (reads, writes, bytes read, bytes written, flushes).
fn ops_of(recs: &[Rec], dev: &str) -> (u64, u64, u64, u64, u64) {
    let mine = recs.iter().filter(|r| r.5.as_deref() == Some(dev));
    let (mut r, mut w, mut rb, mut wb, mut f) = (0, 0, 0, 0, 0);
    for rec in mine {
        match rec.0 {
            Op::Read => {
                r += 1;
                rb += rec.2;
            }
            Op::Write => {
                w += 1;
                wb += rec.2;
            }
            Op::Flush => f += 1,
            Op::Trim => {}
        }
    }
    (r, w, rb, wb, f)
}

/// blkparse prints timer unplugs as `UT` (every capture with plugging has them); the
/// import reads the whole capture, and fio's device comes out as blkparse counted it.
#[test]
fn blkparse_capture_with_timer_unplugs_matches_blkparse_totals() {
    let text = std::fs::read_to_string(capture("blkparse_loop.txt")).unwrap();
    assert!(text.contains(" UT   N ["), "the fixture has timer unplugs");
    let i = imported(&capture("blkparse_loop.txt"), &ImportOptions::default());
    let s = &i.summary;
    assert_eq!(s.bad_lines_skipped, 0);
    assert_eq!(
        count(&s.ignored, "UT (unplug by timer)"),
        text.lines()
            .filter(|l| l.split_whitespace().nth(5) == Some("UT"))
            .count() as u64
    );
    let totals = blkparse_totals(&text);
    let t = |dev: &str, label: &str| totals[&(dev.to_owned(), label.to_owned())];
    // fio's direct 4 KiB I/O on 7,1: every request issued and completed whole.
    let (r, w, rb, wb, _) = ops_of(&i.recs, "7,1");
    assert_eq!(
        (r, w),
        (t("7,1", "Reads Completed"), t("7,1", "Writes Completed"))
    );
    assert_eq!((rb / 1024, wb / 1024), (572, 628));
    // ext4 on 7,0: its reads and flushes as blkparse dispatched them (blkparse counts
    // a flush, which has no write bit, among the reads).
    let (r, _, _, _, f) = ops_of(&i.recs, "7,0");
    assert!(r > 0 && f > 0);
    assert_eq!(r + f, t("7,0", "Read Dispatches"));
    // Nothing lost in pairing: every record of fio's device has its completion.
    assert!(i
        .recs
        .iter()
        .filter(|r| r.5.as_deref() == Some("7,1"))
        .all(|r| r.4.is_some()));
    assert_eq!(count(&s.dropped, "completions without an issue"), 0);
}

/// The same capture with its lines grouped by CPU (what per-CPU outputs printed one
/// after another give): the same records as the capture in time order, in memory and
/// through the event sort's runs on disk. It used to drop every completion printed
/// (on a lower-numbered CPU) before its issue.
#[test]
fn blkparse_capture_grouped_by_cpu_imports_as_in_time_order() {
    let sorted = imported(&capture("blkparse_loop.txt"), &ImportOptions::default());
    for limits in [
        SortLimits::default(),
        SortLimits {
            run_records: 97,
            fan_in: 3,
        },
    ] {
        let opts = ImportOptions {
            sort_limits: limits,
            ..Default::default()
        };
        let grouped = imported(&capture("blkparse_loop_by_cpu.txt"), &opts);
        assert!(
            grouped.recs == sorted.recs,
            "records differ from the time-ordered capture ({limits:?})"
        );
        assert!(grouped.summary.out_of_order > 0);
        assert_eq!(
            count(&grouped.summary.dropped, "completions without an issue"),
            0,
            "{:?}",
            grouped.summary.dropped
        );
        // And so do the figures characterize derives from the completions.
        let (a, b) = (
            characterize_file(&sorted.out).unwrap(),
            characterize_file(&grouped.out).unwrap(),
        );
        assert_eq!(a, b);
    }
}

/// tracefs per-CPU files joined (cpu0's events, then cpu1's), as one file and as two
/// files given together: the records the same lines sorted by time give.
#[test]
fn ftrace_per_cpu_files_pair_as_the_merged_trace() {
    let text = std::fs::read_to_string(capture("ftrace_per_cpu.txt")).unwrap();
    let ts = |l: &str| -> Option<f64> {
        let i = l.find(": block_rq_")?;
        l[..i].split_whitespace().last()?.parse().ok()
    };
    let mut events: Vec<&str> = text.lines().filter(|l| ts(l).is_some()).collect();
    events.sort_by(|a, b| ts(a).partial_cmp(&ts(b)).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let merged = dir.path().join("merged.txt");
    std::fs::write(&merged, events.join("\n") + "\n").unwrap();
    let want = imported(&merged, &ImportOptions::default());
    assert_eq!(
        count(&want.summary.dropped, "completions without an issue"),
        0
    );
    let got = imported(&capture("ftrace_per_cpu.txt"), &ImportOptions::default());
    assert!(got.recs == want.recs, "per-CPU files pair differently");
    assert_eq!(
        count(&got.summary.dropped, "completions without an issue"),
        0,
        "{:?}",
        got.summary.dropped
    );
    // The CPUs' files as two inputs.
    let second = text.match_indices("# tracer:").nth(1).unwrap().0;
    let (a, b) = (dir.path().join("cpu0"), dir.path().join("cpu1"));
    std::fs::write(&a, &text[..second]).unwrap();
    std::fs::write(&b, &text[second..]).unwrap();
    let two = try_import_all(&[a, b], &ImportOptions::default()).unwrap();
    assert!(two.recs == want.recs, "two per-CPU files pair differently");
}

/// `blktrace -a issue`: D events only. A block read again is another read (blkparse
/// marks requeues with R; without completions nothing is pending): all 161 of fio's
/// reads are records, as blkparse counted them. It used to keep 16 of them.
#[test]
fn issue_only_capture_keeps_every_repeated_read() {
    let text = std::fs::read_to_string(capture("blkparse_issue_only.txt")).unwrap();
    let i = imported(
        &capture("blkparse_issue_only.txt"),
        &ImportOptions::default(),
    );
    let totals = blkparse_totals(&text);
    let reads = ops_of(&i.recs, "7,1").0;
    assert_eq!(reads, 161);
    assert_eq!(
        reads,
        totals[&("7,1".to_owned(), "Read Dispatches".to_owned())]
    );
    let d_lines = text
        .lines()
        .filter(|l| l.split_whitespace().nth(5) == Some("D"))
        .count() as u64;
    assert_eq!(i.recs.len() as u64, d_lines);
    assert!(i.summary.dropped.is_empty(), "{:?}", i.summary.dropped);
    assert_eq!(
        count(
            &i.summary.reclassified,
            "the capture has no completion events"
        ),
        d_lines
    );
    // fio read a 64 KiB region: reads of the same block, many times each.
    let mut per_block = BTreeMap::new();
    for r in i.recs.iter().filter(|r| r.0 == Op::Read) {
        *per_block.entry(r.1).or_insert(0) += 1;
    }
    assert_eq!(per_block.len(), 16);
    assert!(per_block.values().all(|&n| n > 1));
    let c = characterize_file(&i.out).unwrap();
    assert_eq!(c.reads, 161);
    assert_eq!(c.ios_with_completion, 0);
}

/// `--device` naming a device the capture lacks: an error listing those it has (it
/// used to write an empty trace and exit 0).
#[test]
fn device_not_in_the_capture_is_an_error_listing_the_devices() {
    for name in ["blkparse_loop.txt", "ftrace_per_cpu.txt"] {
        let opts = ImportOptions {
            device: Some((8, 0)),
            ..Default::default()
        };
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("o.parquet");
        let e = import(&capture(name), &out, &opts).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("--device 8,0") && msg.contains("it has 7,0, 7,1"),
            "{name}: {msg}"
        );
        assert!(e.hint().unwrap().contains("--device 7,0"), "{e:?}");
        assert!(!out.exists(), "no trace written");
        // A device it has: only that device's records.
        let opts = ImportOptions {
            device: Some((7, 1)),
            ..Default::default()
        };
        let i = imported(&capture(name), &opts);
        assert!(!i.recs.is_empty());
        assert!(i.recs.iter().all(|r| r.5.as_deref() == Some("7,1")));
    }
}
