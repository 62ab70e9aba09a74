//! `--backend auto` on block devices: the plain io_uring ring, with the details naming
//! whether the device takes non-blocking I/O (zram does not; a loop device, blk-mq,
//! does); `--backend io_uring-async` marks every read and write IOSQE_ASYNC. Needs root and zram-control (`modprobe zram`) or losetup; skips otherwise.

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use storbench_engine::target::blockdev::{probe_nowait, Nowait};
use storbench_engine::{
    open_real, BackendChoice, DataKind, IoRequest, OpenOptions, RealTarget, Target, TargetSpec,
};
use storbench_trace::Op;

const BLOCK: u64 = 4096;
const SIZE: u64 = 16 << 20;

/// A zram device of our own (hot_add), reset and hot_removed on drop. Never
/// /dev/zram0 or any device this test did not add.
struct Zram {
    id: u32,
}

impl Zram {
    fn new(size_bytes: u64) -> Result<Zram, String> {
        if !storbench_testkit::is_root() {
            return Err("not root (zram-control needs root)".into());
        }
        let add = Path::new("/sys/class/zram-control/hot_add");
        if !add.exists() {
            return Err("no /sys/class/zram-control (zram module not loaded)".into());
        }
        let id: u32 = std::fs::read_to_string(add)
            .map_err(|e| format!("{}: {e}", add.display()))?
            .trim()
            .parse()
            .map_err(|e| format!("hot_add printed no device number: {e}"))?;
        let z = Zram { id };
        let disksize = format!("/sys/block/zram{id}/disksize");
        std::fs::write(&disksize, size_bytes.to_string())
            .map_err(|e| format!("{disksize}: {e}"))?;
        Ok(z)
    }

    fn path(&self) -> PathBuf {
        PathBuf::from(format!("/dev/zram{}", self.id))
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        // A ring that never ran (a test that failed early) lets go of the device only
        // when the kernel tears it down, a moment after its fd closes: reset says
        // EBUSY until then. Bounded: 5 s.
        let reset = format!("/sys/block/zram{}/reset", self.id);
        let start = std::time::Instant::now();
        while let Err(e) = std::fs::write(&reset, "1") {
            if start.elapsed() > std::time::Duration::from_secs(5) {
                eprintln!("warning: {reset}: {e}; zram{} left behind", self.id);
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        if let Err(e) = std::fs::write("/sys/class/zram-control/hot_remove", self.id.to_string()) {
            eprintln!("warning: hot_remove zram{}: {e}", self.id);
        }
    }
}

/// Block `i` holds bytes `i, i+1, ...` (mod 251): every block differs.
fn pattern(i: u64) -> Vec<u8> {
    (0..BLOCK).map(|j| ((i + j) % 251) as u8).collect()
}

fn fill(dev: &Path) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().write(true).open(dev).unwrap();
    for i in 0..SIZE / BLOCK {
        f.write_all(&pattern(i)).unwrap();
    }
    f.sync_all().unwrap();
}

fn open(dev: &Path, backend: BackendChoice) -> RealTarget {
    let o = OpenOptions {
        max_in_flight: 8,
        buffer_bytes: BLOCK as usize,
        backend,
        ..OpenOptions::default()
    };
    open_real(&TargetSpec::BlockDevice(dev.to_path_buf()), &o)
        .unwrap_or_else(|e| panic!("open {}: {e}", dev.display()))
}

fn detail<'a>(t: &'a RealTarget, k: &str) -> Option<&'a str> {
    t.info().details.get(k).map(String::as_str)
}

/// 32 reads of scattered blocks at 8 in flight; each must carry its block's pattern.
fn reads_come_back_right(t: &mut RealTarget) {
    let blocks: Vec<u64> = (0..32u64).map(|k| (k * 613) % (SIZE / BLOCK)).collect();
    let mut next = 0;
    let mut free: Vec<u32> = (0..8).collect();
    let mut slot_block = [0u64; 8];
    let mut done = 0;
    let mut out = Vec::new();
    while done < blocks.len() {
        let mut reqs = Vec::new();
        while next < blocks.len() {
            let Some(slot) = free.pop() else { break };
            slot_block[slot as usize] = blocks[next];
            reqs.push(IoRequest {
                slot,
                op: Op::Read,
                offset_bytes: blocks[next] * BLOCK,
                len_bytes: BLOCK,
                data: DataKind::Random,
            });
            next += 1;
        }
        t.submit(&reqs).unwrap();
        out.clear();
        t.advance(1, None, &mut out).unwrap();
        for c in &out {
            assert_eq!(c.result, Ok(BLOCK), "read of slot {}", c.slot);
            let b = slot_block[c.slot as usize];
            let got = &t.buffer(c.slot).unwrap()[..BLOCK as usize];
            assert!(got == pattern(b).as_slice(), "block {b} read back wrong");
            free.push(c.slot);
            done += 1;
        }
    }
}

#[test]
fn zram_is_named_as_refusing_nowait_and_io_uring_async_reads_right() {
    let z = match Zram::new(SIZE) {
        Ok(z) => z,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let dev = z.path();
    fill(&dev);

    let f = std::fs::File::open(&dev).unwrap();
    // Buffered here; the engine's probe runs on its own O_DIRECT fd below.
    assert_eq!(probe_nowait(f.as_fd(), 512, SIZE), Nowait::Unsupported);
    drop(f);

    // Auto: the plain ring (IOSQE_ASYNC measured no faster on a quiet machine), with
    // the reason naming the refusal.
    let mut t = open(&dev, BackendChoice::Auto);
    if t.info().backend != "io_uring" {
        return eprintln!(
            "skipped: io_uring unavailable here ({:?})",
            detail(&t, "io_uring_unavailable")
        );
    }
    assert_eq!(detail(&t, "io_uring_sqe_async"), Some("false"));
    let why = detail(&t, "backend_reason").expect("auto names its reason");
    assert!(
        why.contains("does not take non-blocking I/O") && why.contains("EOPNOTSUPP"),
        "{why}"
    );
    reads_come_back_right(&mut t);
    drop(t);

    // Asked for by name: every read marked IOSQE_ASYNC, no probe.
    let mut t = open(&dev, BackendChoice::UringAsync);
    assert_eq!(detail(&t, "io_uring_sqe_async"), Some("true"));
    assert_eq!(detail(&t, "backend_reason"), None);
    reads_come_back_right(&mut t);
    drop(t);

    // Asked for io_uring by name: the plain ring, no probe.
    let mut t = open(&dev, BackendChoice::Uring);
    assert_eq!(detail(&t, "io_uring_sqe_async"), Some("false"));
    assert_eq!(detail(&t, "backend_reason"), None);
    reads_come_back_right(&mut t);
}

#[test]
fn loop_device_keeps_the_plain_ring() {
    let lo = match storbench_testkit::LoopDevice::new(SIZE, &[]) {
        Ok(lo) => lo,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    fill(lo.path());
    let f = std::fs::File::open(lo.path()).unwrap();
    assert_eq!(probe_nowait(f.as_fd(), 512, SIZE), Nowait::Supported);
    drop(f);

    let mut t = open(lo.path(), BackendChoice::Auto);
    if t.info().backend != "io_uring" {
        return eprintln!("skipped: io_uring unavailable here");
    }
    assert_eq!(detail(&t, "io_uring_sqe_async"), Some("false"));
    let why = detail(&t, "backend_reason").expect("auto names its reason");
    assert!(why.contains("takes non-blocking I/O"), "{why}");
    reads_come_back_right(&mut t);
}

#[test]
fn files_are_not_probed() {
    let dir = tempfile::tempdir().unwrap();
    let o = OpenOptions {
        write: true,
        size_bytes: Some(1 << 20),
        max_in_flight: 4,
        buffer_bytes: BLOCK as usize,
        ..OpenOptions::default()
    };
    let t = open_real(&TargetSpec::File(dir.path().join("f")), &o).unwrap();
    if t.info().backend != "io_uring" {
        return eprintln!("skipped: io_uring unavailable here");
    }
    assert_eq!(detail(&t, "io_uring_sqe_async"), Some("false"));
    assert_eq!(detail(&t, "backend_reason"), None);
}
