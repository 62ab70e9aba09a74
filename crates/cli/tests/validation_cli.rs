//! Procedures check every option and input before they touch the drive (issue 19):
//! options as `run` checks them, zero-work runs refused, and a bad trace refused
//! before the purge and seasoning of `bench --state seasoned`, the target's bytes
//! unchanged.
//! Buffers are sized from the trace. All on simulated drives and files the test makes.

use std::path::Path;
use std::process::Output;
use storbench_trace::{IoRecord, Op, TraceMeta, TraceWriter};

mod common;
use common::{ok, storbench};

const SIM: &str = "sim:client-7op,capacity=256m,seed=3";

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

fn hash(path: &Path) -> u64 {
    use std::hash::Hasher;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    h.write(&std::fs::read(path).unwrap());
    h.finish()
}

fn refused(o: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(err.contains(needle), "{needle:?} not in {err}");
}

/// Issue 19: `consistency --bs 3k` on a 4 KiB-sector drive aligned every I/O and
/// reported "4 KB random writes"; `run` refuses a size that is not a whole number of
/// sectors (the simulated drive has 512-byte sectors since issue 20, so 3000 here). Zero-length phases exited 0.
#[test]
fn procedures_check_options_as_run_does() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let o = storbench(&[
        "consistency",
        "--quick",
        "--target",
        SIM,
        "--bs",
        "3000",
        "-q",
        "-o",
        s(&out),
    ]);
    refused(&o, "not a multiple of the target's logical block size");
    let o = storbench(&[
        "consistency",
        "--quick",
        "--target",
        SIM,
        "--time",
        "0",
        "-q",
        "-o",
        s(&out),
    ]);
    // The flag's canonical name, not its alias `--duration` (issue 22).
    refused(&o, "--time 0");
    let o = storbench(&[
        "trim-check",
        "--target",
        SIM,
        "--dirty-for",
        "0",
        "-q",
        "-o",
        s(&out),
    ]);
    refused(&o, "--dirty-for 0");
    let o = storbench(&[
        "consistency",
        "--quick",
        "--target",
        SIM,
        "--qd",
        "0",
        "-q",
        "-o",
        s(&out),
    ]);
    refused(&o, "--qd 0");
    assert!(!out.exists(), "a refused run left a directory");
}

/// A file target storbench made and filled with data: (path, hash of its bytes).
fn filled_target(dir: &Path) -> (std::path::PathBuf, u64) {
    let t = dir.join("target.dat");
    ok(&storbench(&[
        "run",
        "--target",
        s(&t),
        "--size",
        "32m",
        "--rw",
        "write",
        "--bs",
        "1m",
        "-o",
        s(&dir.join("fill")),
    ]));
    let h = hash(&t);
    (t, h)
}

fn write_trace(path: &Path, recs: impl IntoIterator<Item = IoRecord>) {
    let mut w = TraceWriter::create(path, &TraceMeta::default()).unwrap();
    for r in recs {
        w.write(&r).unwrap();
    }
    w.finish().unwrap();
}

/// Issue 19: `bench --season` (now `--state seasoned`) with a bad trace failed only after purging and
/// seasoning the drive. A corrupt trace and one with an I/O larger than the target
/// are refused first, naming the trace, and the target keeps every byte.
#[test]
fn bench_with_a_bad_trace_fails_before_touching_the_drive() {
    let tmp = tempfile::tempdir().unwrap();
    let (target, before) = filled_target(tmp.path());

    // An I/O of 1 GiB on a 32 MiB target, at row 7.
    let big = tmp.path().join("big.parquet");
    write_trace(
        &big,
        (0..20u64).map(|i| {
            IoRecord::new(
                Op::Read,
                i * 4096,
                if i == 7 { 1 << 30 } else { 4096 },
                i * 1000,
            )
        }),
    );
    let o = storbench(&[
        "bench",
        s(&big),
        "--target",
        s(&target),
        "--state",
        "seasoned",
        "-q",
        "-o",
        s(&tmp.path().join("a")),
    ]);
    refused(&o, "row 7");
    assert_eq!(hash(&target), before, "the target was purged or seasoned");

    // A corrupt page in the middle of a trace whose footer is fine.
    let bad = tmp.path().join("bad.parquet");
    write_trace(
        &bad,
        (0..50_000u64).map(|i| IoRecord::new(Op::Write, (i * 7919 % 8000) * 4096, 4096, i * 1000)),
    );
    let mut bytes = std::fs::read(&bad).unwrap();
    let mid = bytes.len() / 3;
    bytes[mid] ^= 0x10;
    std::fs::write(&bad, &bytes).unwrap();
    let o = storbench(&[
        "bench",
        s(&bad),
        "--target",
        s(&target),
        "--state",
        "seasoned",
        "-q",
        "-o",
        s(&tmp.path().join("b")),
    ]);
    refused(&o, "bad.parquet");
    assert_eq!(hash(&target), before, "the target was purged or seasoned");
}

/// Issue 19: replay buffers were fixed (the bench: 128 of 1 MiB, so a trace of 4 MiB
/// I/Os failed after seasoning); now sized from the trace, within --buffer-memory,
/// and an I/O larger than the cap is refused naming its row.
#[test]
fn bench_sizes_buffers_from_the_trace_within_the_cap() {
    let tmp = tempfile::tempdir().unwrap();
    let (target, _) = filled_target(tmp.path());
    let tr = tmp.path().join("big-ios.parquet");
    write_trace(
        &tr,
        (0..40u64).map(|i| {
            IoRecord::new(
                if i % 2 == 0 { Op::Read } else { Op::Write },
                (i % 6) * (4 << 20),
                4 << 20,
                i * 1000,
            )
        }),
    );
    let out = tmp.path().join("ok");
    let stdout = ok(&storbench(&[
        "bench",
        s(&tr),
        "--target",
        s(&target),
        "-q",
        "-o",
        s(&out),
    ]));
    assert!(
        stdout.contains("20 reads") && stdout.contains("20 writes"),
        "{stdout}"
    );
    let o = storbench(&[
        "bench",
        s(&tr),
        "--target",
        s(&target),
        "--buffer-memory",
        "1m",
        "-q",
        "-o",
        s(&tmp.path().join("capped")),
    ]);
    refused(&o, "--buffer-memory");
    refused(&o, "row 0");
}

/// Issue 19: `replay` took 256 buffers of the largest I/O (16 MiB reads: 4.2 GB of
/// RSS). Buffers now follow what the trace keeps in flight, within --buffer-memory:
/// past the cap the replay keeps fewer in flight and says so; an I/O larger than the
/// cap is refused naming its row, before the target is opened.
#[test]
fn replay_of_16mib_reads_sizes_buffers_within_the_cap() {
    let tmp = tempfile::tempdir().unwrap();
    let (target, before) = filled_target(tmp.path());
    let tr = tmp.path().join("16m-reads.parquet");
    write_trace(
        &tr,
        (0..8u64).map(|i| IoRecord::new(Op::Read, (i % 2) * (16 << 20), 16 << 20, i * 1000)),
    );
    let replay = |cap: &str, out: &str| {
        storbench(&[
            "replay",
            s(&tr),
            "--target",
            s(&target),
            "--buffer-memory",
            cap,
            "-q",
            "-o",
            s(&tmp.path().join(out)),
        ])
    };
    let o = replay("64m", "capped");
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let r: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("capped/result.json")).unwrap(),
    )
    .unwrap();
    let note = r["notes"].to_string();
    assert!(
        note.contains("up to 32 I/Os") && note.contains("only 4 of 16777216 bytes"),
        "{note}"
    );
    let m = &r["phases"][0]["metrics"];
    assert_eq!(m["read_ios"].as_u64(), Some(8), "{m}");
    assert_eq!(m["qd"]["max"].as_u64(), Some(4), "{m}");
    let o = replay("8m", "refused");
    refused(&o, "--buffer-memory");
    refused(&o, "row 0");
    assert_eq!(hash(&target), before);
}
