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
        Format::FIO_IOLOG_V3.name(),
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
    assert_eq!(n.records, r + w + s);
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

/// A trace of a 2 TB volume exported with `--span 16m`: every I/O lands in the first
/// 16 MiB, aligned as replay aligns it, and fio replays it on a 16 MiB file doing the
/// same work (without the span, fio needs a file past 1.76 TB).
#[test]
fn export_span_folds_offsets_so_fio_replays_on_a_small_file() {
    if Command::new("fio").arg("--version").output().is_err() {
        eprintln!("skipped: fio not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut text = String::from("issue_ns,complete_ns,offset_bytes,len_bytes,op,stream,device\n");
    let (mut reads, mut writes, mut rbytes, mut wbytes) = (0u64, 0u64, 0u64, 0u64);
    for i in 0..200u64 {
        let off = 1_760_000_000_000 - (i * 7_777_777 % 400_000_000) * 4096;
        let len = [4096u64, 16384, 65536][(i % 3) as usize];
        let op = if i % 4 == 0 { "write" } else { "read" };
        if i % 4 == 0 {
            writes += 1;
            wbytes += len;
        } else {
            reads += 1;
            rbytes += len;
        }
        text += &format!("{},,{off},{len},{op},,\n", i * 1000);
    }
    std::fs::write(d.join("t.csv"), text).unwrap();
    let trace = d.join("t.parquet");
    import(&d.join("t.csv"), &trace, &ImportOptions::default()).unwrap();
    let span = 16u64 << 20;
    let opts = ExportOptions {
        filename: Some("small.bin".into()),
        span_bytes: Some(span),
        align_bytes: 4096,
        ..ExportOptions::default()
    };
    let sum = export(
        &trace,
        &d.join("folded.iolog"),
        ExportFormat::FioIologV3,
        &opts,
    )
    .unwrap();
    assert_eq!(sum.records, 200);
    assert_eq!(sum.folded, 200, "every offset was past 16 MiB");
    assert_eq!(sum.aligned, 0, "the trace's I/O is 4 KiB aligned");
    let log = std::fs::read_to_string(d.join("folded.iolog")).unwrap();
    for l in log
        .lines()
        .filter(|l| l.contains(" read ") || l.contains(" write "))
    {
        let f: Vec<u64> = l.split(' ').skip(3).map(|x| x.parse().unwrap()).collect();
        assert!(f[0] + f[1] <= span && f[0].is_multiple_of(4096), "{l}");
    }
    std::fs::File::create(d.join("small.bin"))
        .unwrap()
        .set_len(span)
        .unwrap();
    fio(
        &[
            "--name=replay",
            "--read_iolog=folded.iolog",
            "--replay_no_stall=1",
            "--ioengine=psync",
            "--output-format=json",
            "--output=replay.json",
        ],
        d,
    );
    let (r, rb, w, wb, _) = fio_totals(&d.join("replay.json"));
    assert_eq!((r, rb, w, wb), (reads, rbytes, writes, wbytes));
    assert_eq!(std::fs::metadata(d.join("small.bin")).unwrap().len(), span);
}
