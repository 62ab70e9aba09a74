//! Recording real block I/O on loop devices. Needs root, tracefs, losetup and fio (and
//! mkfs.ext4/fstrim/mount for the filesystem test); skips with a printed reason
//! otherwise. Every loop device and mount is undone by a guard, also on failure.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use storbench_record::pair::PairedIo;
use storbench_record::recorder::monotonic_ns;
use storbench_record::{device_info, RecordOptions, RecordSummary, Recorder};
use storbench_testkit::{LoopDevice, Mounted};
use storbench_trace::Op;

/// One recording at a time in this process: two recorders would race on mounting and
/// unmounting tracefs.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Why the recording tests cannot run here (besides what the loop device needs).
fn no_tracefs() -> Option<String> {
    if !Path::new("/sys/kernel/tracing").exists() && !Path::new("/sys/kernel/debug").exists() {
        return Some("no tracefs in this kernel".into());
    }
    None
}

fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Everything a loop-device test needs, torn down in field order: the loop device is
/// detached (and its image directory removed) before the recording lock is released.
struct Rig {
    lo: LoopDevice,
    _one: std::sync::MutexGuard<'static, ()>,
}

/// A loop device over a fresh `size_bytes` image, or `None` (with the reason printed)
/// when root, tracefs or one of `tools` is missing.
fn rig(tools: &[&str], size_bytes: u64) -> Option<Rig> {
    let one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let lo = match no_tracefs().map_or_else(|| LoopDevice::new(size_bytes, tools), Err) {
        Ok(lo) => lo,
        Err(why) => {
            eprintln!("skipped: {why}");
            return None;
        }
    };
    Some(Rig { lo, _one: one })
}

/// Records the device while `work` runs; returns the I/Os, the summary and the
/// monotonic times just before and after the work.
fn record_during(dev: &Path, work: impl FnOnce()) -> (Vec<PairedIo>, RecordSummary, u64, u64) {
    let info = device_info(dev).expect("device info");
    let recorder = Recorder::start(info, RecordOptions::default()).expect("start recording");
    let instance = recorder.instance_dir().to_owned();
    assert!(instance.is_dir());
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = Arc::clone(&stop);
    let handle = std::thread::spawn(move || {
        let mut ios = Vec::new();
        let summary = recorder
            .run(&stop2, |io| {
                ios.push(*io);
                Ok(())
            })
            .expect("recording");
        (ios, summary)
    });
    let before = monotonic_ns();
    work();
    let after = monotonic_ns();
    stop.store(true, Ordering::SeqCst);
    let (ios, summary) = handle.join().expect("recorder thread");
    assert!(
        !instance.exists(),
        "instance {} left behind",
        instance.display()
    );
    (ios, summary, before, after)
}

fn by_op(ios: &[PairedIo]) -> BTreeMap<Op, (u64, u64)> {
    let mut m = BTreeMap::new();
    for io in ios {
        let e = m.entry(io.op).or_insert((0, 0));
        e.0 += 1;
        e.1 += io.len_bytes;
    }
    m
}

/// fio's own list of the I/Os it issued (iolog v2: `file read|write offset length`).
fn fio_iolog(path: &Path) -> Vec<(Op, u64, u64)> {
    let text = std::fs::read_to_string(path).expect("fio iolog");
    let mut v = Vec::new();
    for line in text.lines() {
        // v2: `file op offset len`; v3 puts a timestamp first.
        let f: Vec<&str> = line.split_whitespace().collect();
        let Some(i) = f.iter().position(|w| *w == "read" || *w == "write") else {
            continue;
        };
        if f.len() != i + 3 {
            continue;
        }
        let op = if f[i] == "read" { Op::Read } else { Op::Write };
        v.push((
            op,
            f[i + 1].parse().expect("offset"),
            f[i + 2].parse().expect("length"),
        ));
    }
    v
}

#[test]
fn records_a_known_fio_workload() {
    let Some(rig) = rig(&["fio"], 64 << 20) else {
        return;
    };
    let lo = &rig.lo;
    let iolog = lo.dir().join("fio.iolog");
    const IOS: usize = 600;
    let (ios, summary, before, after) = record_during(lo.path(), || {
        run(Command::new("fio")
            .arg("--name=known")
            .arg(format!("--filename={}", lo.path().display()))
            .args([
                "--direct=1",
                "--ioengine=psync",
                "--rw=randrw",
                "--rwmixread=50",
                "--bsrange=4k-64k",
                "--size=32m",
                "--randrepeat=1",
                "--randseed=42",
            ])
            .arg(format!("--number_ios={IOS}"))
            .arg(format!("--write_iolog={}", iolog.display())));
    });
    let expected = fio_iolog(&iolog);
    assert_eq!(expected.len(), IOS, "fio issued {IOS} I/Os");
    // fio's I/Os, as recorded (udev or blkid may probe a new loop device too).
    let fio: Vec<&PairedIo> = ios
        .iter()
        .filter(|io| io.comm.as_bytes().starts_with(b"fio"))
        .collect();
    let mut got: Vec<(Op, u64, u64)> = fio
        .iter()
        .map(|io| (io.op, io.offset_bytes, io.len_bytes))
        .collect();
    let mut want = expected.clone();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(
        got.len(),
        want.len(),
        "recorded {} fio I/Os, fio issued {}",
        got.len(),
        want.len()
    );
    assert_eq!(
        got, want,
        "recorded ops/offsets/lengths differ from fio's iolog"
    );
    let fio_ios: Vec<PairedIo> = fio.iter().map(|io| **io).collect();
    let ops = by_op(&fio_ios);
    let want_ops = {
        let mut m = BTreeMap::new();
        for (op, _, len) in &expected {
            let e = m.entry(*op).or_insert((0u64, 0u64));
            e.0 += 1;
            e.1 += len;
        }
        m
    };
    assert_eq!(ops, want_ops, "counts and bytes by op");
    assert!(ops[&Op::Read].0 > 100 && ops[&Op::Write].0 > 100);
    for io in &fio {
        let c = io.complete_ns.expect("every fio I/O completed");
        assert!(
            io.issue_ns >= before && c <= after,
            "times inside the workload window"
        );
        let service = c - io.issue_ns;
        assert!(
            service > 0 && service < 1_000_000_000,
            "service time {service} ns"
        );
        assert!(io.pid > 0);
    }
    // In issue order.
    assert!(ios.windows(2).all(|w| w[0].issue_ns <= w[1].issue_ns));
    assert_eq!(summary.lost_events_kernel(), 0);
    assert_eq!(summary.lost_events_pages, 0);
    assert_eq!(summary.page_errors, 0);
    assert_eq!(summary.pair.incomplete, 0);
    assert_eq!(summary.ios_written, ios.len() as u64);
    assert!(summary.kernel_filter, "the kernel accepted the dev filter");
    assert_eq!(
        summary.events_other_device, 0,
        "the dev filter kept other devices out"
    );
    eprintln!("recorded {} I/Os: {ops:?}; summary {summary:?}", ios.len());
}

#[test]
fn records_discards_and_flushes_of_a_filesystem() {
    let Some(rig) = rig(&["mkfs.ext4", "fstrim", "mount", "umount"], 128 << 20) else {
        return;
    };
    let lo = &rig.lo;
    let discard = std::fs::read_to_string(format!(
        "/sys/block/{}/queue/discard_max_bytes",
        lo.path().file_name().unwrap().to_string_lossy()
    ))
    .unwrap_or_default();
    if discard.trim() == "0" {
        eprintln!("skipped: the loop device does not support discard here");
        return;
    }
    let mnt = lo.dir().join("mnt");
    let payload = lo.dir().join("payload");
    std::fs::write(&payload, vec![0x5a; 8 << 20]).expect("payload");
    let (ios, summary, _, _) = record_during(lo.path(), || {
        run(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(lo.path()));
        let _m = Mounted::new(lo.path(), &mnt, &[]).expect("mount");
        run(Command::new("cp").arg(&payload).arg(mnt.join("copy")));
        run(&mut Command::new("sync"));
        run(Command::new("rm").arg(mnt.join("copy")));
        run(&mut Command::new("sync"));
        run(Command::new("fstrim").arg(&mnt));
    });
    let ops = by_op(&ios);
    eprintln!("filesystem workload: {ops:?}; summary {summary:?}");
    let (trims, trim_bytes) = ops.get(&Op::Trim).copied().unwrap_or_default();
    assert!(
        trims > 0 && trim_bytes >= 8 << 20,
        "mkfs and fstrim discard: {ops:?}"
    );
    assert!(
        ops.get(&Op::Flush).is_some_and(|f| f.0 > 0),
        "journal commits flush: {ops:?}"
    );
    let (writes, write_bytes) = ops.get(&Op::Write).copied().unwrap_or_default();
    assert!(
        writes > 0 && write_bytes >= 8 << 20,
        "the 8 MiB copy was written: {ops:?}"
    );
    assert!(ios
        .iter()
        .filter(|i| i.op == Op::Flush)
        .all(|i| i.len_bytes == 0));
    assert!(ios
        .iter()
        .all(|i| i.offset_bytes + i.len_bytes <= 128 << 20));
    assert!(ios
        .iter()
        .all(|i| i.complete_ns.is_some_and(|c| c >= i.issue_ns)));
    // Flush sequences pair: every completion found its issue, every issue completed.
    assert_eq!(summary.pair.unmatched_completes, 0);
    assert_eq!(summary.pair.incomplete, 0);
    assert_eq!(summary.lost_events_kernel(), 0);
}

#[test]
fn writes_a_parquet_trace_with_streams_and_idle_time() {
    use storbench_record::sink::{trace_meta, TraceSink};
    use storbench_trace::TraceWriter;
    let Some(rig) = rig(&["fio"], 32 << 20) else {
        return;
    };
    let lo = &rig.lo;
    let out = lo.dir().join("trace.parquet");
    let info = device_info(lo.path()).expect("device info");
    assert_eq!(info.capacity_bytes, Some(32 << 20));
    let opts = RecordOptions {
        duration: Some(std::time::Duration::from_secs(3)),
        ..RecordOptions::default()
    };
    let recorder = Recorder::start(info.clone(), opts).expect("start");
    let writer = TraceWriter::create(&out, &trace_meta(&info)).expect("writer");
    let mut sink = TraceSink::new(writer, &info, recorder.start_mono_ns());
    let dev = lo.path().to_owned();
    let idle_ms = 400;
    let fio = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(idle_ms));
        run(Command::new("fio")
            .arg("--name=seq")
            .arg(format!("--filename={}", dev.display()))
            .args([
                "--direct=1",
                "--ioengine=psync",
                "--rw=write",
                "--bs=4k",
                "--size=400k",
            ]));
    });
    let never = AtomicBool::new(false);
    let summary = recorder
        .run(&never, |io| {
            sink.write(io)?;
            Ok(())
        })
        .expect("recording");
    fio.join().expect("fio thread");
    assert!(summary.duration_ns() >= 3_000_000_000, "ran for --duration");
    let rows = sink.finish(&summary).expect("finish");
    assert_eq!(rows, summary.ios_written);

    let (meta, recs, streams, devices) = storbench_trace::read_all(&out).expect("read back");
    assert_eq!(recs.len() as u64, rows);
    assert_eq!(meta.source_format.as_deref(), Some("tracefs-block"));
    assert_eq!(meta.capacity_bytes, Some(32 << 20));
    assert_eq!(
        meta.extra
            .get("record.lost_events_kernel")
            .map(String::as_str),
        Some("0")
    );
    assert_eq!(
        devices.iter().collect::<Vec<_>>(),
        vec![info.name().as_str()]
    );
    let fio_stream = |r: &storbench_trace::IoRecord| {
        let name = streams.get(r.stream.expect("stream").0).expect("interned");
        let (comm, pid) = name.rsplit_once(':').expect("comm:pid");
        comm == "fio" && pid.parse::<u32>().is_ok()
    };
    let fio_writes: Vec<_> = recs.iter().filter(|r| fio_stream(r)).collect();
    assert_eq!(fio_writes.len(), 100, "400 KiB in 4 KiB writes");
    assert!(fio_writes
        .iter()
        .all(|r| r.op == Op::Write && r.len_bytes == 4096));
    let offsets: Vec<u64> = fio_writes.iter().map(|r| r.offset_bytes).collect();
    assert_eq!(
        offsets,
        (0..100).map(|i| i * 4096).collect::<Vec<_>>(),
        "sequential, in issue order"
    );
    // Idle time before the workload stays in the trace.
    assert!(
        fio_writes[0].issue_ns >= idle_ms * 1_000_000,
        "first write at {} ns",
        fio_writes[0].issue_ns
    );
    assert!(recs.iter().all(|r| r
        .complete_ns
        .is_some_and(|c| c >= r.issue_ns && c < 4_000_000_000)));
}
