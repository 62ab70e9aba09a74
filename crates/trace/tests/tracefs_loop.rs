//! A real capture: block_rq_issue/complete through a private tracefs instance while
//! mkfs.ext4, file copies, fio and fstrim run on a loop device over a file in a tempdir.
//! The import's counts and bytes per op must match an independent count of the raw
//! text, and characterize must give a sensible QD and service time.
//! Skips (with the reason) unless root, tracefs, a loop device, mkfs.ext4 and fio exist.

use std::path::{Path, PathBuf};
use storbench_testkit::{sh, skip_reason, LoopDevice, Mounted};
use storbench_trace::characterize_file;
use storbench_trace::formats::{import, Format, ImportOptions};

/// Cleans up the tracing set up, in reverse order, even when the test fails. (The loop
/// device and the mount have their own guards, declared later, so dropped first.)
#[derive(Default)]
struct Guard {
    instance: Option<PathBuf>,
    tracefs_mounted: Option<PathBuf>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(i) = self.instance.take() {
            let _ = std::fs::write(i.join("tracing_on"), "0");
            let _ = std::fs::remove_dir(&i);
        }
        if let Some(t) = self.tracefs_mounted.take() {
            let _ = sh("umount", &[t.to_str().unwrap()]);
        }
    }
}

fn find_tracefs() -> Option<PathBuf> {
    for p in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
        if Path::new(p).join("instances").is_dir() {
            return Some(PathBuf::from(p));
        }
    }
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(2) == Some(&"tracefs")).then(|| PathBuf::from(f[1]))
        })
        .find(|p| p.join("instances").is_dir())
}

#[test]
fn tracefs_capture_of_loop_device_matches_raw_text() {
    if let Err(why) = run() {
        eprintln!("skipped: {why}");
    }
}

/// Ok(()) when the test ran and passed; Err(reason) when the environment lacks
/// something (skip). Once the loop device exists, failures panic.
#[allow(
    clippy::too_many_lines,
    reason = "one end-to-end scenario on one device or directory; its steps share state and read in order"
)]
fn run() -> Result<(), String> {
    if let Some(why) = skip_reason(&["losetup", "mkfs.ext4", "fio", "fstrim", "mount"]) {
        return Err(why);
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut g = Guard::default();
    let tracefs = match find_tracefs() {
        Some(t) => t,
        None => {
            let t = dir.path().join("tracefs");
            std::fs::create_dir(&t).map_err(|e| e.to_string())?;
            sh("mount", &["-t", "tracefs", "nodev", t.to_str().unwrap()])
                .map_err(|e| format!("no tracefs: {e}"))?;
            g.tracefs_mounted = Some(t.clone());
            t
        }
    };
    // A private instance: its own buffer and event switches; others' tracing untouched.
    let inst = tracefs
        .join("instances")
        .join(format!("storbench-test-{}", std::process::id()));
    std::fs::create_dir(&inst).map_err(|e| format!("tracefs instance: {e}"))?;
    g.instance = Some(inst.clone());
    let lo = LoopDevice::new(96 << 20, &[]).map_err(|e| e.to_string())?;
    let loopdev = lo.path_str().to_owned();
    let dev = lo.maj_min();

    let w = |p: &str, v: &str| std::fs::write(inst.join(p), v).map_err(|e| format!("{p}: {e}"));
    w("buffer_size_kb", "16384")?;
    w("events/block/block_rq_issue/enable", "1")?;
    w("events/block/block_rq_complete/enable", "1")?;
    w("tracing_on", "1")?;

    // The workload.
    sh("mkfs.ext4", &["-q", "-F", &loopdev]).expect("mkfs.ext4 on the loop device");
    let mounted = Mounted::new(lo.path(), &dir.path().join("mnt"), &[]).expect("mount");
    let mnt = mounted.dir().to_owned();
    // "Copying files": four 2 MiB files of pseudo-random bytes.
    let mut x: u64 = 0x1234_5678_9abc_def1;
    let data: Vec<u8> = (0..2 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let src = dir.path().join("src.bin");
    std::fs::write(&src, &data).unwrap();
    for i in 0..4 {
        std::fs::copy(&src, mnt.join(format!("copy{i}"))).expect("copy a file");
    }
    sh("sync", &[]).unwrap();
    sh(
        "fio",
        &[
            "--name=w",
            &format!("--filename={}", mnt.join("fio.dat").display()),
            "--size=16M",
            "--rw=randrw",
            "--bs=4k",
            "--direct=1",
            "--ioengine=psync",
            "--iodepth=1",
            "--number_ios=400",
            "--fsync=16",
            "--output=/dev/null",
        ],
    )
    .expect("fio on the mounted file system");
    for i in 0..4 {
        std::fs::remove_file(mnt.join(format!("copy{i}"))).unwrap();
    }
    sh("sync", &[]).unwrap();
    sh("fstrim", &[mnt.to_str().unwrap()]).expect("fstrim");
    drop(mounted);
    w("tracing_on", "0")?;
    let raw = std::fs::read_to_string(inst.join("trace")).map_err(|e| e.to_string())?;
    let raw_path = dir.path().join("trace.txt");
    std::fs::write(&raw_path, &raw).unwrap();
    if let Ok(keep) = std::env::var("STORBENCH_KEEP_TRACE") {
        std::fs::write(keep, &raw).unwrap();
    }

    // Independent count of the raw text: issue lines of our device, by op letter.
    let mut want = [0u64; 4]; // read, write, trim, flush
    let mut want_bytes = [0u64; 4];
    let mut n_issue = 0;
    for line in raw.lines() {
        let Some(rest) = line.split("block_rq_issue: ").nth(1) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f[0] != dev {
            continue;
        }
        n_issue += 1;
        let rwbs = f[1];
        let plus = f.iter().position(|t| *t == "+").unwrap();
        let bytes: u64 = f[plus + 1].parse::<u64>().unwrap() * 512;
        let letters: Vec<char> = rwbs.chars().collect();
        let op = if letters[0] == 'F' && letters.len() > 1 && "WDRFN".contains(letters[1]) {
            letters[1]
        } else {
            letters[0]
        };
        let i = match (op, bytes) {
            ('R', _) => 0,
            ('W', 0) => 3,
            ('W', _) => 1,
            ('D', _) => 2,
            ('F', _) => 3,
            _ => continue, // N: not counted by either side
        };
        want[i] += 1;
        want_bytes[i] += if i == 3 { 0 } else { bytes };
    }
    assert!(
        !raw.contains("LOST"),
        "trace buffer overflowed; enlarge buffer_size_kb"
    );
    assert!(
        n_issue > 100,
        "too few issues captured ({n_issue}); is tracing working?"
    );
    assert!(want[2] > 0, "fstrim/mkfs produced no discards");

    let out = dir.path().join("t.parquet");
    let (maj, min) = dev.split_once(',').unwrap();
    let majmin_u: (u32, u32) = (maj.parse().unwrap(), min.parse().unwrap());
    let sum = import(
        &raw_path,
        &out,
        &ImportOptions {
            device: Some(majmin_u),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(sum.format, Format::FTRACE.name());
    eprintln!("{}", sum.to_text());
    let c = characterize_file(&out).unwrap();
    eprintln!("{}", c.to_table());
    assert_eq!(
        [c.reads, c.writes, c.trims, c.flushes],
        want,
        "records per op vs raw text"
    );
    assert_eq!(
        [c.bytes_read, c.bytes_written, c.bytes_trimmed],
        [want_bytes[0], want_bytes[1], want_bytes[2]]
    );
    // Sensible QD and service times: everything completed on a loop device.
    assert!(
        c.ios_with_completion * 100 >= c.ios_total * 95,
        "{} of {} completed",
        c.ios_with_completion,
        c.ios_total
    );
    let q = c.qd.as_ref().unwrap();
    assert!(q.avg_qd >= 1.0 && q.avg_qd < 256.0, "avg QD {}", q.avg_qd);
    assert!(q.qd1_pct > 0.0);
    let s = c.service_time_us.as_ref().unwrap();
    assert!(s.p50 > 0.0 && s.p50 < 1e6, "service p50 {} us", s.p50);
    assert!(c.busy_ns.unwrap() <= c.duration_ns);
    drop(g);
    Ok(())
}
