//! Helpers shared by the recording tests on loop devices: one recording at a time, a
//! loop device or the reason to skip, a recording around a piece of work, fio's iolog,
//! the kernel's own request counters of a device.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use storbench_record::pair::PairedIo;
use storbench_record::recorder::monotonic_ns;
use storbench_record::{device_info, RecordOptions, RecordSummary, Recorder};
use storbench_testkit::{KitError, LoopDevice};
use storbench_trace::Op;

/// One recording at a time in this process: two recorders would race on mounting and
/// unmounting tracefs.
pub static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Why the recording tests cannot run here (besides what the loop device needs).
pub fn no_tracefs() -> Option<String> {
    if !Path::new("/sys/kernel/tracing").exists() && !Path::new("/sys/kernel/debug").exists() {
        return Some("no tracefs in this kernel".into());
    }
    None
}

pub fn run(cmd: &mut Command) -> String {
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
pub struct Rig {
    pub lo: LoopDevice,
    _one: std::sync::MutexGuard<'static, ()>,
}

/// A loop device over a fresh `size_bytes` image, or `None` (with the reason printed)
/// when root, tracefs or one of `tools` is missing.
pub fn rig(tools: &[&str], size_bytes: u64) -> Option<Rig> {
    let one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let lo = match no_tracefs().map_or_else(
        || LoopDevice::new(size_bytes, tools),
        |why| Err(KitError::Skip(why)),
    ) {
        Ok(lo) => lo,
        Err(why) => {
            eprintln!("skipped: {why}");
            return None;
        }
    };
    Some(Rig { lo, _one: one })
}

/// Records the device with `opts` while `work` runs; returns the I/Os, the summary and
/// the monotonic times just before and after the work.
pub fn record_with(
    dev: &Path,
    opts: RecordOptions,
    work: impl FnOnce(),
) -> (Vec<PairedIo>, RecordSummary, u64, u64) {
    record_with_sink(dev, opts, |_| {}, work)
}

/// [`record_with`], calling `sink` with every I/O before keeping it.
pub fn record_with_sink(
    dev: &Path,
    opts: RecordOptions,
    mut sink: impl FnMut(&PairedIo) + Send + 'static,
    work: impl FnOnce(),
) -> (Vec<PairedIo>, RecordSummary, u64, u64) {
    let info = device_info(dev).expect("device info");
    let recorder = Recorder::start(info, opts).expect("start recording");
    let instance = recorder.instance_dir().to_owned();
    assert!(instance.is_dir());
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = Arc::clone(&stop);
    let handle = std::thread::spawn(move || {
        let mut ios = Vec::new();
        let summary = recorder
            .run(&stop2, |io| {
                sink(io);
                ios.push(*io);
                Ok(())
            })
            .expect("recording");
        (ios, summary)
    });
    let before = monotonic_ns();
    work();
    let after = monotonic_ns();
    // Regression (flaky audit after CI stop 12): a program that wrote to the device
    // (fio, mkfs) makes udev probe it when it closes it; let those reads finish inside
    // the recording rather than straddle its end (an incomplete request).
    storbench_testkit::udev_settle();
    stop.store(true, Ordering::SeqCst);
    let (ios, summary) = handle.join().expect("recorder thread");
    assert!(
        !instance.exists(),
        "instance {} left behind",
        instance.display()
    );
    (ios, summary, before, after)
}

/// [`record_with`] the default options.
pub fn record_during(dev: &Path, work: impl FnOnce()) -> (Vec<PairedIo>, RecordSummary, u64, u64) {
    record_with(dev, RecordOptions::default(), work)
}

pub fn by_op<'a>(ios: impl IntoIterator<Item = &'a PairedIo>) -> BTreeMap<Op, (u64, u64)> {
    let mut m = BTreeMap::new();
    for io in ios {
        let e = m.entry(io.op).or_insert((0, 0));
        e.0 += 1;
        e.1 += io.len_bytes;
    }
    m
}

/// fio's own list of the I/Os it issued (iolog v2: `file read|write offset length`).
pub fn fio_iolog(path: &Path) -> Vec<(Op, u64, u64)> {
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

/// The kernel's request counters of a whole disk (`/sys/block/NAME/stat`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskStat {
    pub reads: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub writes: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub discards: u64,
    pub discard_sectors: u64,
    pub flushes: u64,
}

impl DiskStat {
    pub fn of(dev: &Path) -> DiskStat {
        let name = dev.file_name().expect("device name").to_string_lossy();
        let p = format!("/sys/block/{name}/stat");
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"));
        let f: Vec<u64> = text
            .split_whitespace()
            .map(|w| w.parse().expect("number"))
            .collect();
        assert!(f.len() >= 17, "{p}: {text}");
        DiskStat {
            reads: f[0],
            read_merges: f[1],
            read_sectors: f[2],
            writes: f[4],
            write_merges: f[5],
            write_sectors: f[6],
            discards: f[11],
            discard_sectors: f[13],
            flushes: f[15],
        }
    }

    pub fn since(&self, before: &DiskStat) -> DiskStat {
        DiskStat {
            reads: self.reads - before.reads,
            read_merges: self.read_merges - before.read_merges,
            read_sectors: self.read_sectors - before.read_sectors,
            writes: self.writes - before.writes,
            write_merges: self.write_merges - before.write_merges,
            write_sectors: self.write_sectors - before.write_sectors,
            discards: self.discards - before.discards,
            discard_sectors: self.discard_sectors - before.discard_sectors,
            flushes: self.flushes - before.flushes,
        }
    }
}
