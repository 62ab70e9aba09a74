//! fio's own `--write_iolog` (v3) imports with the op counts and bytes fio's JSON
//! reports, and our exported iolog replays in fio (`--read_iolog`) with the same totals.
//! Skips when fio is missing.

use std::path::Path;
use std::process::Command;
use storbench_trace::formats::export::{export, ExportFormat, ExportOptions};
use storbench_trace::formats::{import, Format, ImportOptions};
use storbench_trace::{characterize_file, Op};

/// (reads, read bytes, writes, write bytes, syncs) from fio JSON output.
fn fio_totals(json: &Path) -> (u64, u64, u64, u64, u64) {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let j = &v["jobs"][0];
    let g = |d: &str, k: &str| j[d][k].as_u64().unwrap_or(0);
    (
        g("read", "total_ios"),
        g("read", "io_bytes"),
        g("write", "total_ios"),
        g("write", "io_bytes"),
        g("sync", "total_ios"),
    )
}

fn fio(args: &[&str], dir: &Path) -> bool {
    let out = Command::new("fio")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    if !out.status.success() {
        panic!(
            "fio {:?} failed: {}{}",
            args,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    true
}

#[test]
fn fio_write_iolog_imports_and_export_replays_with_same_totals() {
    if Command::new("fio").arg("--version").output().is_err() {
        eprintln!("skipped: fio not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fio(
        &[
            "--name=rec",
            "--filename=data.bin",
            "--size=8M",
            "--rw=randrw",
            "--rwmixread=60",
            "--bssplit=4k/50:16k/30:64k/20",
            "--ioengine=psync",
            "--number_ios=600",
            "--fsync=7",
            "--write_iolog=rec.iolog",
            "--output-format=json",
            "--output=rec.json",
        ],
        d,
    );
    let (r, rb, w, wb, s) = fio_totals(&d.join("rec.json"));
    assert!(r > 0 && w > 0 && s > 0, "fio did little: {r} {w} {s}");
    let trace = d.join("rec.parquet");
    let sum = import(&d.join("rec.iolog"), &trace, &ImportOptions::default()).unwrap();
    assert_eq!(
        sum.format,
        Format::FioIologV3.name(),
        "detected from content"
    );
    let c = characterize_file(&trace).unwrap();
    assert_eq!(
        (c.reads, c.bytes_read, c.writes, c.bytes_written, c.flushes),
        (r, rb, w, wb, s)
    );
    assert_eq!(c.trims, 0);

    // Export and replay on the same file; fio must do the same work.
    let exported = d.join("exported.iolog");
    let n = export(
        &trace,
        &exported,
        ExportFormat::FioIologV3,
        &ExportOptions::default(),
    )
    .unwrap();
    assert_eq!(n, r + w + s);
    let redirect = d.join("data.bin");
    fio(
        &[
            "--name=replay",
            "--read_iolog=exported.iolog",
            &format!("--replay_redirect={}", redirect.display()),
            "--replay_no_stall=1",
            "--ioengine=psync",
            "--output-format=json",
            "--output=replay.json",
        ],
        d,
    );
    let replay = fio_totals(&d.join("replay.json"));
    assert_eq!(replay, (r, rb, w, wb, s), "replay of exported iolog");
    let _ = Op::Read;
}
