//! Checkpoints change nothing, and an interrupted run resumes to exactly the result of
//! an uninterrupted one (issue 21). On a simulated drive, `consistency` with
//! checkpoints every 1 s, 20 s or 60 s of the drive's clock, a run killed with SIGKILL
//! and resumed, and a run stopped by a signal (which rolls back to the checkpoint it
//! takes at the next whole second) and resumed all give the same result.json (apart
//! from times, the command line and the resume count) and the same series files,
//! byte for byte.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use storbench_suite::consistency::ConsistencyConfig;
use storbench_suite::state::{read_state, PhaseStatus};
use storbench_suite::{execute, Control, PhaseRecord, SeriesRow, Start, SuiteError};

const NS: u64 = 1_000_000_000;
const CHILD_ENV: &str = "STORBENCH_SUITE_RESUME_CHILD_DIR";
const DURATION_S: u64 = 40;

fn ctl(every_s: u64) -> Control {
    Control {
        checkpoint_interval: Duration::from_secs(every_s),
        ..Control::default()
    }
}

fn config() -> ConsistencyConfig {
    let mut c = ConsistencyConfig::quick("sim:client-7op,capacity=256m,seed=9");
    c.duration_ns = DURATION_S * NS;
    c
}

/// Runs in the child only (the parent re-executes this binary with `--ignored`).
#[test]
#[ignore = "helper: the child process of kill_9_mid_phase_then_resume"]
fn resume_child_process() {
    let dir = std::env::var(CHILD_ENV).expect("run by kill_9_mid_phase_then_resume");
    execute(Path::new(&dir), Start::New(config()), &ctl(1)).unwrap();
}

fn journal_rows(dir: &Path) -> Vec<SeriesRow> {
    let text = std::fs::read_to_string(dir.join("journal/random-write.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// result.json without what differs between two runs of the same work: wall times,
/// timestamps, the command line, resume counts and notes about resuming.
fn measured(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("result.json")).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    let o = v.as_object_mut().unwrap();
    for k in [
        "created_unix_ms",
        "finished_unix_ms",
        "command_line",
        "resumes",
    ] {
        o.remove(k);
    }
    for k in ["health_before", "health_after"] {
        o[k].as_object_mut().unwrap().remove("taken_unix_ms");
    }
    let notes: Vec<Value> = o["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| {
            !n.as_str().unwrap().contains("resumed") && !n.as_str().unwrap().contains("rebuilt")
        })
        .cloned()
        .collect();
    o.insert("notes".into(), Value::Array(notes));
    for p in o["phases"].as_array_mut().unwrap() {
        let p = p.as_object_mut().unwrap();
        p.remove("wall_ms");
        p.remove("segments");
        if let Some(pr) = p.get_mut("purge").and_then(|x| x.as_object_mut()) {
            pr.remove("wall_ms");
        }
    }
    v
}

/// Every series file of a run (Parquet and fio-style logs), name and bytes.
fn series_files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut names: Vec<PathBuf> = vec![dir.join("series.parquet")];
    for d in [dir.to_path_buf(), dir.join("series")] {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            if n.ends_with(".log") || (d != dir && n.ends_with(".parquet")) {
                names.push(p);
            }
        }
    }
    names.sort();
    names
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p.strip_prefix(dir).unwrap().to_owned(), bytes)
        })
        .collect()
}

fn assert_same_run(a: &Path, b: &Path) {
    assert_eq!(
        measured(a),
        measured(b),
        "{} against {}",
        a.display(),
        b.display()
    );
    let (fa, fb) = (series_files(a), series_files(b));
    assert_eq!(
        fa.iter().map(|f| &f.0).collect::<Vec<_>>(),
        fb.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for (x, y) in fa.iter().zip(&fb) {
        assert!(
            x.1 == y.1,
            "{} differs between {} and {}",
            x.0.display(),
            a.display(),
            b.display()
        );
    }
    assert_eq!(journal_rows(a), journal_rows(b));
}

#[test]
fn checkpoint_interval_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    for s in [1, 20, 60] {
        execute(
            &tmp.path().join(format!("every{s}")),
            Start::New(config()),
            &ctl(s),
        )
        .unwrap();
    }
    assert_same_run(&tmp.path().join("every60"), &tmp.path().join("every20"));
    assert_same_run(&tmp.path().join("every60"), &tmp.path().join("every1"));
    // Every row is a whole second of the phase, and with a checkpoint at every second
    // no second is a dip: none below 90% of the median of the seconds around it.
    let mut rows = journal_rows(&tmp.path().join("every1"));
    // 40 whole seconds, then the drain of the I/Os in flight at the time limit.
    let drain = rows.pop().unwrap();
    assert_eq!(rows.len() as u64, DURATION_S);
    assert_eq!((drain.t_ms, drain.s.t_s), (DURATION_S * 1000, DURATION_S));
    assert!(drain.s.window_ns < NS, "{drain:?}");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.t_ms, i as u64 * 1000);
        assert_eq!(r.s.t_s, i as u64);
        assert_eq!(r.s.window_ns, NS);
    }
    let iops: Vec<f64> = rows.iter().map(|r| r.s.iops()).collect();
    for i in 1..iops.len() - 1 {
        let mut around: Vec<f64> = iops[i.saturating_sub(3)..(i + 4).min(iops.len())]
            .iter()
            .enumerate()
            .filter(|(j, _)| *j + i.saturating_sub(3) != i)
            .map(|(_, v)| *v)
            .collect();
        around.sort_by(f64::total_cmp);
        let median = around[around.len() / 2];
        assert!(
            iops[i] >= 0.9 * median,
            "second {i}: {:.0} IOPS against {median:.0} around it",
            iops[i]
        );
    }
}

#[test]
fn kill_9_mid_phase_then_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "resume_child_process",
            "--ignored",
            "--nocapture",
        ])
        .env(CHILD_ENV, &dir)
        .spawn()
        .unwrap();
    // Wait until the random-write phase has checkpointed a few seconds.
    let t0 = Instant::now();
    let rows_at_kill = loop {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "the child never reached the random-write phase"
        );
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the child ended ({status}) before it could be killed; make the phase longer");
        }
        if let Ok(st) = read_state(&dir) {
            let p = st.phase("random-write");
            if p.status == PhaseStatus::Running {
                if let Some(cp) = &p.checkpoint {
                    if cp.series_rows >= 10 {
                        break cp.series_rows;
                    }
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let st = read_state(&dir).unwrap();
    assert!(!st.finished);
    let pre_before: PhaseRecord = st.phase("precondition").result.clone().unwrap();
    let cp = st.phase("random-write").checkpoint.clone().unwrap();
    assert!(cp.series_rows >= rows_at_kill);
    assert_eq!(
        cp.phase_elapsed_ns % NS,
        0,
        "checkpoints are at whole seconds"
    );
    let kept_before: Vec<SeriesRow> = journal_rows(&dir)[..cp.series_rows as usize].to_vec();

    // Resume in this process, with another checkpoint interval: it changes nothing.
    let r = execute::<ConsistencyConfig>(&dir, Start::Resume, &ctl(60)).unwrap();
    assert_eq!(r.resumes, 1);
    let pre_after = r.phases.iter().find(|p| p.name == "precondition").unwrap();
    assert_eq!(pre_after, &pre_before, "a finished phase is kept as it was");
    let rw = r.phases.iter().find(|p| p.name == "random-write").unwrap();
    assert_eq!(
        rw.segments, 2,
        "the random-write phase ran in two processes"
    );
    assert_eq!(rw.ended, "time-limit");
    // The rows recorded before the kill are the first rows of the final series.
    let rows_after = journal_rows(&dir);
    assert_eq!(&rows_after[..kept_before.len()], &kept_before[..]);
    let row_writes: u64 = rows_after.iter().map(|r| r.s.write_ios).sum();
    assert_eq!(row_writes, rw.metrics.write_ios);

    // The same run without the kill ends with the same figures and files.
    let whole = tmp.path().join("whole");
    execute(&whole, Start::New(config()), &ctl(60)).unwrap();
    assert_same_run(&whole, &dir);
}

#[test]
fn signal_rolls_back_to_the_next_whole_second_and_resumes_identically() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let c = ctl(60);
    // A signal handler sets the stop flag; here a thread does once 12 rows are in.
    let stop = c.stop.clone();
    let journal = dir.join("journal/random-write.jsonl");
    let watcher = std::thread::spawn(move || {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(120) {
            let n = std::fs::read_to_string(&journal).map_or(0, |t| t.lines().count());
            if n >= 12 {
                stop.store(true, Ordering::Relaxed);
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    let e = execute(&dir, Start::New(config()), &c).unwrap_err();
    watcher.join().unwrap();
    assert!(matches!(e, SuiteError::Interrupted { .. }), "{e}");
    assert!(
        e.to_string().contains("rolled back to the last checkpoint"),
        "{e}"
    );
    // What ran is kept: a result marked incomplete, the phase up to its checkpoint.
    let st = read_state(&dir).unwrap();
    let cp = st.phase("random-write").checkpoint.clone().unwrap();
    assert_eq!(cp.phase_elapsed_ns % NS, 0);
    assert!(cp.series_rows >= 12);
    let partial: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(partial["complete"], false);
    let rw = &partial["phases"][2];
    assert_eq!(rw["ended"], "interrupted");
    assert_eq!(rw["metrics"]["elapsed_ns"], cp.phase_elapsed_ns);
    assert_eq!(journal_rows(&dir).len() as u64, cp.series_rows);

    execute::<ConsistencyConfig>(&dir, Start::Resume, &ctl(1)).unwrap();
    let whole = tmp.path().join("whole");
    execute(&whole, Start::New(config()), &ctl(20)).unwrap();
    assert_same_run(&whole, &dir);
}
