//! The recorder and the rest of the machine's tracing: it works in a private instance
//! and leaves the top-level buffer and other tools' instances as they were, removes its
//! instance when recording ends in an error or a panic, mounts tracefs when nobody has,
//! and counts the events the kernel drops when the reader falls behind. Needs root,
//! tracefs and a loop device; skips with a printed reason otherwise.

mod common;

use common::{record_with, record_with_sink, rig, run, DiskStat};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use storbench_record::tracefs::{read_text, Tracefs, INSTANCE_PREFIX};
use storbench_record::{device_info, RecordError, RecordOptions, Recorder};
use storbench_testkit::wait_until;

const TRACEFS: &str = "/sys/kernel/tracing";

/// The settings of a tracing directory (top level or instance) that a recorder could
/// change: what is traced, how, into how large a buffer.
fn settings(dir: &Path) -> BTreeMap<String, String> {
    let mut files = vec![
        "tracing_on".to_owned(),
        "trace_clock".into(),
        "buffer_size_kb".into(),
        "current_tracer".into(),
        "set_event".into(),
        "tracing_cpumask".into(),
        "options/overwrite".into(),
        "trace_options".into(),
    ];
    for ev in ["block_rq_issue", "block_rq_complete", "block_rq_requeue"] {
        files.push(format!("events/block/{ev}/enable"));
        files.push(format!("events/block/{ev}/filter"));
    }
    files.push("events/block/enable".into());
    files
        .into_iter()
        .filter_map(|f| Some((f.clone(), read_text(&dir.join(&f)).ok()?)))
        .collect()
}

/// Another tool's instance, removed on drop.
struct Foreign(PathBuf);

impl Drop for Foreign {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0.join("tracing_on"), "0");
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn storbench_instances(tracefs: &Path) -> Vec<String> {
    std::fs::read_dir(tracefs.join("instances"))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with(INSTANCE_PREFIX))
                .collect()
        })
        .unwrap_or_default()
}

/// While another tool traces the same block events in its own instance (another clock,
/// overwrite mode, its own filter), a recording leaves that instance's settings and the
/// top level's as they were, and takes no event away from it: it sees every request
/// the recorder saw.
///
/// Regression (flaky audit after CI stop 12): the two instances' event counts were
/// compared whole, but the other instance is on before the recording starts and after
/// it ends, so a request outside the recording (udev probing the device when fio closes
/// it) made them differ. Now fio's requests are compared one by one, and for all the
/// other instance must have at least as many events as the recorder.
#[test]
#[allow(
    clippy::too_many_lines,
    reason = "one end-to-end scenario on one device or directory; its steps share state and read in order"
)]
fn leaves_other_tracing_untouched_and_sees_the_same_requests() {
    let Some(rig) = rig(&["fio"], 32 << 20) else {
        return;
    };
    // The other tool mounts tracefs where nobody had, as the recorder would (regression:
    // a fresh machine without it mounted failed to create the instance); unmounted on
    // drop, after the instance.
    let host = Tracefs::open().expect("tracefs");
    let lo = &rig.lo;
    let info = device_info(lo.path()).expect("device info");
    let top = host.root().to_owned();
    let foreign = Foreign(top.join(format!("instances/other-tool-{}", std::process::id())));
    std::fs::create_dir(&foreign.0).expect("create another tool's instance");
    let w = |rel: &str, v: &str| {
        std::fs::write(foreign.0.join(rel), v).unwrap_or_else(|e| panic!("{rel}: {e}"))
    };
    w("trace_clock", "global");
    w("buffer_size_kb", "2048");
    w("options/overwrite", "1");
    let filter = format!("dev == {}", info.kernel_dev);
    for ev in ["block_rq_issue", "block_rq_complete"] {
        w(&format!("events/block/{ev}/filter"), &filter);
        w(&format!("events/block/{ev}/enable"), "1");
    }
    w("trace", "");
    let top_before = settings(&top);
    let foreign_before = settings(&foreign.0);
    assert!(top_before.len() >= 8 && foreign_before.len() >= 8);

    let (ios, summary, _, _) = record_with(lo.path(), RecordOptions::default(), || {
        run(Command::new("fio")
            .arg("--name=both")
            .arg(format!("--filename={}", lo.path().display()))
            .args([
                "--direct=1",
                "--rw=randwrite",
                "--bs=4k",
                "--size=16m",
                "--number_ios=300",
                "--randrepeat=1",
            ]));
    });
    assert_eq!(settings(&top), top_before, "top-level settings changed");
    assert_eq!(
        settings(&foreign.0),
        foreign_before,
        "the other instance's settings changed"
    );
    w("tracing_on", "0");
    let text = read_text(&foreign.0.join("trace")).expect("other instance's trace");
    let seen = |ev: &str| text.lines().filter(|l| l.contains(ev)).count() as u64;
    eprintln!(
        "recorder: {} I/Os, {} issues, {} completes; other instance: {} issues, {} completes",
        ios.len(),
        summary.pair.issues,
        summary.pair.completes,
        seen("block_rq_issue:"),
        seen("block_rq_complete:")
    );
    assert_eq!(summary.lost_events_kernel(), 0);
    // fio's requests, (sector, sectors) each: fio's random writes touch each block once.
    let mut recorded: Vec<(u64, u64)> = ios
        .iter()
        .filter(|io| io.comm.as_bytes().starts_with(b"fio"))
        .map(|io| (io.offset_bytes / 512, io.len_bytes / 512))
        .collect();
    recorded.sort_unstable();
    assert_eq!(recorded.len(), 300, "fio's 300 writes recorded");
    let mut other_issued: Vec<(u64, u64)> = text
        .lines()
        .filter_map(|l| sectors_of(l, "block_rq_issue: "))
        .filter(|(_, comm)| comm.starts_with("[fio"))
        .map(|(req, _)| req)
        .collect();
    other_issued.sort_unstable();
    assert_eq!(
        other_issued, recorded,
        "fio's requests, other instance vs recorder"
    );
    let other_completed = text
        .lines()
        .filter_map(|l| sectors_of(l, "block_rq_complete: "))
        .filter(|(req, _)| recorded.binary_search(req).is_ok())
        .count();
    let completed = ios
        .iter()
        .filter(|io| io.comm.as_bytes().starts_with(b"fio") && io.complete_ns.is_some())
        .count();
    assert_eq!(
        (other_completed, completed),
        (300, 300),
        "fio's completions"
    );
    // Nothing taken away: the other instance traced from before the recording started
    // to after it ended.
    assert!(seen("block_rq_issue:") >= summary.pair.issues);
    assert!(seen("block_rq_complete:") >= summary.pair.completes);
}

/// `(sector, sectors)` and the last field (`[comm]` of an issue) of a trace line of
/// `event` (`block_rq_issue: 7,0 WS 4096 () 120 + 8 be,0,4 [fio]`).
fn sectors_of<'a>(line: &'a str, event: &str) -> Option<((u64, u64), &'a str)> {
    let f: Vec<&str> = line.split(event).nth(1)?.split_whitespace().collect();
    let plus = f.iter().position(|w| *w == "+")?;
    let sector = f[plus.checked_sub(1)?].parse().ok()?;
    let sectors = f.get(plus + 1)?.parse().ok()?;
    Some(((sector, sectors), f.last()?))
}

/// A recording that ends in an error (the sink fails) or a panic (in the sink, on the
/// recording thread) removes its instance: nothing of it is left in tracefs.
#[test]
fn removes_its_instance_on_error_and_on_panic() {
    let Some(rig) = rig(&["fio"], 16 << 20) else {
        return;
    };
    // Held mounted so the instance list read below is the live one (without it the
    // recorder would mount tracefs itself and unmount it with its instance).
    let host = Tracefs::open().expect("tracefs");
    let lo = &rig.lo;
    let info = device_info(lo.path()).expect("device info");
    let workload = || {
        run(Command::new("fio")
            .arg("--name=w")
            .arg(format!("--filename={}", lo.path().display()))
            .args(["--direct=1", "--rw=write", "--bs=4k", "--size=400k"]));
    };
    let opts = RecordOptions {
        duration: Some(Duration::from_secs(1)),
        ..RecordOptions::default()
    };
    assert!(storbench_instances(host.root())
        .iter()
        .all(|n| !n.starts_with(&format!("{INSTANCE_PREFIX}{}-", std::process::id()))));

    // The sink fails: the error comes back, the instance is gone.
    let rec = Recorder::start(info.clone(), opts.clone()).expect("start");
    let dir = rec.instance_dir().to_owned();
    assert!(dir.is_dir());
    workload();
    let err = rec
        .run(&AtomicBool::new(false), |_| Err("disk full".into()))
        .expect_err("the sink's error");
    assert!(
        matches!(&err, RecordError::Sink(e) if e.to_string() == "disk full"),
        "{err:?}"
    );
    assert!(!dir.exists(), "{} left after an error", dir.display());

    // The sink panics on the recording thread: unwinding removes the instance.
    let rec = Recorder::start(info.clone(), opts.clone()).expect("start");
    let dir = rec.instance_dir().to_owned();
    workload();
    let t = std::thread::spawn(move || {
        rec.run(&AtomicBool::new(false), |_| panic!("sink bug"))
            .map(|_| ())
    });
    assert!(t.join().is_err(), "the recording thread panicked");
    assert!(!dir.exists(), "{} left after a panic", dir.display());

    // Dropped before running (an error between start and run): gone too.
    let rec = Recorder::start(info, opts).expect("start");
    let dir = rec.instance_dir().to_owned();
    drop(rec);
    assert!(!dir.exists(), "{} left after drop", dir.display());
}

/// A reader that falls behind a small buffer (its sink stalls, as writing to a slow disk
/// would): the kernel drops events, the summary
/// counts them from the per-CPU stats (`dropped events`), and every request fio issued
/// is either recorded or accounted for by a lost event.
///
/// Regression (CI, stop 12): the stall began at the first I/O handed to the sink, which
/// comes only after the merge slack (100 ms); on a fast machine fio's 4000 reads were all
/// read out of the ring before that, so nothing was lost. Now one `dd` read starts the
/// stall and fio runs only once the sink is stalled.
///
/// Regression (flaky audit after stop 12): the stall lasted a fixed 3 s, so on a slow
/// enough machine fio's reads could have come after the reader resumed. Now the sink
/// stays stalled until fio has exited: every fio read happens while nobody reads.
#[test]
fn counts_the_events_the_kernel_drops() {
    let Some(rig) = rig(&["fio", "dd"], 32 << 20) else {
        return;
    };
    let lo = &rig.lo;
    const IOS: u64 = 4000;
    let opts = RecordOptions {
        // The smallest buffer (a few pages per CPU).
        buffer_kib_per_cpu: 8,
        ..RecordOptions::default()
    };
    // The first I/O handed over stalls the sink (and so the reader) until fio is done;
    // the timeout only bounds a hang.
    let stalling = Arc::new(AtomicBool::new(false));
    let fio_done = Arc::new(AtomicBool::new(false));
    let (stalling_sink, fio_done_sink) = (Arc::clone(&stalling), Arc::clone(&fio_done));
    let sink = move |_: &storbench_record::pair::PairedIo| {
        if !stalling_sink.swap(true, Ordering::SeqCst) {
            wait_until(Duration::from_secs(120), "fio to finish", || {
                fio_done_sink.load(Ordering::SeqCst)
            });
        }
    };
    let (ios, summary, _, _) = record_with_sink(lo.path(), opts, sink, || {
        // Also when this closure panics: the sink must not hold the recorder for 120 s.
        let _done = SetOnDrop(Arc::clone(&fio_done));
        run(Command::new("dd")
            .arg(format!("if={}", lo.path().display()))
            .args(["of=/dev/null", "bs=4k", "count=1", "iflag=direct"]));
        wait_until(
            Duration::from_secs(30),
            "the recorder to hand dd's read to the sink",
            || stalling.load(Ordering::SeqCst),
        );
        run(Command::new("fio")
            .arg("--name=flood")
            .arg(format!("--filename={}", lo.path().display()))
            .args(["--direct=1", "--rw=randread", "--bs=4k", "--randrepeat=1"])
            .arg(format!("--number_ios={IOS}")));
    });
    let fio = ios
        .iter()
        .filter(|i| i.comm.as_bytes().starts_with(b"fio"))
        .count() as u64;
    let lost = summary.lost_events_kernel();
    eprintln!("recorded {fio} of {IOS} fio reads, lost {lost} events; {summary:?}");
    assert!(lost > 0, "a 8 KiB buffer overflows while the sink stalls");
    assert!(fio < IOS, "some I/Os are missing");
    assert!(
        summary
            .cpu_stats
            .iter()
            .map(|s| s.dropped_events)
            .sum::<u64>()
            > 0,
        "no-overwrite mode drops new events"
    );
    assert!(
        fio + lost >= IOS,
        "each missing I/O lost at least its issue event: {fio} + {lost} < {IOS}"
    );
}

/// Sets its flag when dropped (at the end of a scope, or while unwinding from a panic).
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// In a private mount namespace without tracefs, the recorder mounts it, records, and
/// unmounts it again. The test re-runs itself under `unshare --mount`.
#[test]
fn mounts_tracefs_when_nobody_has() {
    const CHILD: &str = "STORBENCH_RECORD_MOUNT_CHILD";
    if std::env::var_os(CHILD).is_some() {
        return mount_child();
    }
    let Some(rig) = rig(&["unshare", "umount"], 8 << 20) else {
        return;
    };
    let host_mounts = tracefs_mounts();
    let exe = std::env::current_exe().expect("test binary");
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private"])
        .arg(exe)
        .args(["--exact", "mounts_tracefs_when_nobody_has", "--nocapture"])
        .env(CHILD, rig.lo.path())
        .output()
        .expect("unshare");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "child failed:\n{text}");
    assert!(
        text.contains("mounted tracefs and removed it again"),
        "{text}"
    );
    // The host's namespace ends as it began (regression: the test assumed the host had
    // tracefs mounted, and a fresh machine has not).
    assert_eq!(
        tracefs_mounts(),
        host_mounts,
        "the host's tracefs mounts changed"
    );
}

fn tracefs_mounts() -> Vec<String> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|l| {
            l.split(" - ")
                .nth(1)
                .is_some_and(|r| r.starts_with("tracefs "))
        })
        .map(|l| l.split_whitespace().nth(4).unwrap().to_owned())
        .collect()
}

/// Runs inside the private mount namespace.
fn mount_child() {
    let dev = PathBuf::from(std::env::var_os("STORBENCH_RECORD_MOUNT_CHILD").unwrap());
    for mp in tracefs_mounts() {
        run(Command::new("umount").arg("-l").arg(&mp));
    }
    assert_eq!(tracefs_mounts(), Vec::<String>::new());
    let tfs = Tracefs::open().expect("mount tracefs");
    assert!(tfs.mounted_by_us());
    assert_eq!(tfs.root(), Path::new(TRACEFS));
    drop(tfs);
    assert_eq!(tracefs_mounts(), Vec::<String>::new(), "unmounted on drop");

    let info = device_info(&dev).expect("device info");
    let rec = Recorder::start(
        info,
        RecordOptions {
            duration: Some(Duration::from_millis(300)),
            ..RecordOptions::default()
        },
    )
    .expect("start without tracefs mounted");
    assert_eq!(tracefs_mounts(), vec![TRACEFS.to_owned()]);
    let summary = rec
        .run(&AtomicBool::new(false), |_| Ok(()))
        .expect("record");
    assert!(summary.duration_ns() >= 300_000_000);
    assert_eq!(
        tracefs_mounts(),
        Vec::<String>::new(),
        "unmounted at the end"
    );
    println!("mounted tracefs and removed it again");
}

/// The reader does not sleep its whole poll interval when the events come faster than
/// that would allow: with a 2 s poll interval and a 1 MiB buffer per CPU, 40K events/s
/// (about 3 MB/s) would overflow it, yet nothing is lost. The recording lasts 4 s, so a
/// reader whose nap only doubled up to the poll interval would sleep about 2 s once.
///
/// Regression (flaky audit after CI stop 12): the recorder started after a blind 500 ms
/// for fio to start, and the test asked for more than 25K recorded I/Os, a rate a slow
/// or busy machine might not reach. Now recording starts once fio's reads show in the
/// disk's counters, fio runs until the recording is over, and the load is checked
/// against what the test needs: the busiest CPU's events, at the rate recorded, fill
/// the buffer within one poll interval.
#[test]
fn reads_a_small_buffer_before_it_fills() {
    let Some(rig) = rig(&["fio"], 32 << 20) else {
        return;
    };
    let lo = &rig.lo;
    const BUFFER_KIB: u32 = 1024;
    // 5,000 reads a second fill a CPU's 1 MiB in about 1.6 s, and a poll every 4 s
    // would let it overflow: the reader must read on the buffer's watermark, and has
    // 1.6 s (not 0.4 s, as at 20,000) to get a CPU on a loaded host.
    const POLL: Duration = Duration::from_secs(4);
    let before = DiskStat::of(lo.path());
    // Runs until it is interrupted below; the runtime only bounds a hang.
    let fio = Command::new("fio")
        .arg("--name=steady")
        .arg(format!("--filename={}", lo.path().display()))
        .args([
            "--direct=1",
            "--ioengine=io_uring",
            "--iodepth=4",
            "--rw=randread",
            "--bs=4k",
            "--rate_iops=5000",
            "--time_based",
            "--runtime=120",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start fio");
    let mut fio = BackgroundFio(Some(fio));
    wait_until(Duration::from_secs(60), "fio's first 1000 reads", || {
        if let Some(status) = fio.ended() {
            panic!("fio ended before the recording: {status}");
        }
        DiskStat::of(lo.path()).since(&before).reads >= 1000
    });
    let opts = RecordOptions {
        buffer_kib_per_cpu: BUFFER_KIB,
        poll_interval: POLL,
        duration: Some(Duration::from_secs(8)),
        ..RecordOptions::default()
    };
    let info = device_info(lo.path()).expect("device info");
    // Regression (flaky audit after CI stop 12): with both CPUs saturated by other work
    // (two `yes`), about 1 run in 10 lost ~10K events: the reading thread did not get a
    // CPU back within the ~0.4 s of events that 1 MiB holds at this rate. The test is
    // about when the reader reads, not about winning a CPU from other work, so it reads
    // at nice -10 (the recorder runs on this thread).
    let _niced = Niced::to(-10);
    let rec = Recorder::start(info, opts).expect("start");
    let mut n = 0u64;
    let summary = rec
        .run(&AtomicBool::new(false), |_| {
            n += 1;
            Ok(())
        })
        .expect("record");
    assert_eq!(fio.ended(), None, "fio ended during the recording");
    fio.interrupt();
    eprintln!("recorded {n} I/Os in 8 s; {summary:?}");
    assert_eq!(summary.lost_events_kernel(), 0);
    assert_eq!(summary.lost_events_pages, 0);
    // The load was enough to prove something: without reading early, the busiest
    // CPU's buffer would have overflowed within one poll interval.
    let busiest = summary.cpu_stats.iter().map(|s| s.read_events).max();
    let busiest = busiest.expect("per-CPU stats") as f64;
    let bytes_per_event = summary.bytes_read as f64 / summary.events_decoded.max(1) as f64;
    let per_poll_bytes =
        busiest / (summary.duration_ns() as f64 / 1e9) * POLL.as_secs_f64() * bytes_per_event;
    assert!(
        per_poll_bytes > f64::from(BUFFER_KIB) * 1024.0,
        "fio's load ({n} I/Os) fills only {per_poll_bytes:.0} bytes of a CPU's buffer per \
         poll interval: this machine did not load the reader enough to test it"
    );
}

/// The calling thread's nice value lowered (a higher priority) until drop. On Linux the
/// nice value is per thread, and only root may lower it (this test runs as root).
struct Niced(i32);

impl Niced {
    fn to(nice: i32) -> Niced {
        let before = rustix::process::getpriority_process(None).expect("getpriority");
        rustix::process::setpriority_process(None, nice).expect("setpriority (root)");
        Niced(before)
    }
}

impl Drop for Niced {
    fn drop(&mut self) {
        let _ = rustix::process::setpriority_process(None, self.0);
    }
}

/// fio running in the background, killed (and reaped) on drop, so a failing test
/// leaves no fio behind.
struct BackgroundFio(Option<std::process::Child>);

impl BackgroundFio {
    /// `None` while it runs, else how it ended.
    fn ended(&mut self) -> Option<std::process::ExitStatus> {
        let child = self.0.as_mut().expect("fio");
        child.try_wait().expect("fio")
    }

    /// Stops fio with SIGINT, as a user would; fio then exits with status 128.
    fn interrupt(mut self) {
        let child = self.0.take().expect("fio");
        run(Command::new("kill").args(["-INT", &child.id().to_string()]));
        let out = child.wait_with_output().expect("wait for fio");
        assert_eq!(
            out.status.code(),
            Some(128),
            "fio after SIGINT: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for BackgroundFio {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
