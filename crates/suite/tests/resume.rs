//! Resume after kill -9: a child process (this test binary, re-executed) runs a
//! consistency procedure on a simulated drive with checkpoints every 100 ms of the
//! drive's clock; the parent kills it with SIGKILL in the middle of the random-write
//! phase, then resumes the run and checks that the finished phases were not redone,
//! that the per-second rows recorded before the kill were kept, not recomputed, and
//! that the resumed run ends exactly as the same run without a kill.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use storbench_suite::consistency::{ConsistencyConfig, ConsistencySummary};
use storbench_suite::state::{read_state, PhaseStatus};
use storbench_suite::{execute, Control, PhaseRecord, SeriesRow, Start};

const NS: u64 = 1_000_000_000;
const CHILD_ENV: &str = "STORBENCH_SUITE_RESUME_CHILD_DIR";
const DURATION_S: u64 = 40;

fn ctl() -> Control {
    Control {
        checkpoint_interval: Duration::from_millis(100),
        ..Control::default()
    }
}

/// Runs in the child only (the parent re-executes this binary with `--ignored`).
#[test]
#[ignore = "helper: the child process of kill_9_mid_phase_then_resume"]
fn resume_child_process() {
    let dir = std::env::var(CHILD_ENV).expect("run by kill_9_mid_phase_then_resume");
    execute(Path::new(&dir), Start::New(config()), &ctl()).unwrap();
}

fn config() -> ConsistencyConfig {
    let mut c = ConsistencyConfig::quick("sim:client-7op,capacity=256m,seed=9");
    c.duration_ns = DURATION_S * NS;
    c
}

fn journal_rows(dir: &Path) -> Vec<SeriesRow> {
    let text = std::fs::read_to_string(dir.join("journal/random-write.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
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
    // Wait until the random-write phase has checkpointed a few chunks.
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
    let pre_before: PhaseRecord =
        serde_json::from_value(st.phase("precondition").result.clone().unwrap()).unwrap();
    let cp = st.phase("random-write").checkpoint.clone().unwrap();
    assert!(cp.series_rows >= rows_at_kill);
    let rows_before = journal_rows(&dir);
    assert!(rows_before.len() as u64 >= cp.series_rows);
    let kept_before: Vec<SeriesRow> = rows_before[..cp.series_rows as usize].to_vec();

    // Resume in this process, with the default checkpoint interval: the run keeps the
    // one it started with (on a simulated drive it decides where chunks drain).
    let r = execute::<ConsistencyConfig>(&dir, Start::Resume, &Control::default()).unwrap();
    assert_eq!(r.resumes, 1);
    let pre_after = r.phases.iter().find(|p| p.name == "precondition").unwrap();
    assert_eq!(pre_after, &pre_before, "a finished phase is kept as it was");
    assert_eq!(pre_after.segments, 1);
    let rw = r.phases.iter().find(|p| p.name == "random-write").unwrap();
    assert_eq!(
        rw.segments, 2,
        "the random-write phase ran in two processes"
    );
    assert_eq!(rw.ended, "time-limit");
    // The rows recorded before the kill are the first rows of the final series.
    let rows_after = journal_rows(&dir);
    assert_eq!(&rows_after[..kept_before.len()], &kept_before[..]);
    assert!(rows_after.len() > kept_before.len());
    // One timeline: window starts increase and the phase lasted its duration.
    for w in rows_after.windows(2) {
        assert!(
            w[1].t_ms > w[0].t_ms,
            "{:?} then {:?}",
            w[0].t_ms,
            w[1].t_ms
        );
    }
    let m = &rw.metrics;
    let elapsed_s = m.elapsed_ns as f64 / 1e9;
    assert!(
        (elapsed_s - DURATION_S as f64).abs() < 1.0,
        "phase time {elapsed_s} s over both segments"
    );
    let last = rows_after.last().unwrap();
    assert!((last.t_ms + last.s.window_ns / 1_000_000) as f64 / 1000.0 > DURATION_S as f64 - 1.5);
    // The merged counts equal the sum of the per-second rows (nothing lost or doubled
    // inside the kept chunks plus the resumed segment).
    let row_writes: u64 = rows_after.iter().map(|r| r.s.write_ios).sum();
    assert_eq!(row_writes, m.write_ios);
    assert_eq!(
        m.end_ns - m.start_ns,
        m.elapsed_ns,
        "chunks append end to end"
    );
    // The fio-style log has one write line per row, at the row's exact end time
    // (chunks end in short windows, so these are not whole seconds).
    let log = std::fs::read_to_string(dir.join("random-write_iops.1.log")).unwrap();
    let ends: Vec<u64> = log
        .lines()
        .map(|l| l.split(", ").next().unwrap().parse().unwrap())
        .collect();
    let want: Vec<u64> = rows_after
        .iter()
        .map(|r| r.t_ms + r.s.window_ns / 1_000_000)
        .collect();
    assert_eq!(ends, want);
    assert!(
        ends.iter().any(|e| e % 1000 != 0),
        "some chunk ended mid-second"
    );
    let s: ConsistencySummary = serde_json::from_value(r.summary.clone()).unwrap();
    assert!(s.scores.clone().unwrap().avg > 0.0);

    // The same run without the kill ends with the same figures, bit for bit: chunks
    // end by the simulated drive's clock (not the host's), and on resume the drive was
    // rebuilt chunk by chunk to exactly the state of the checkpoint.
    let whole = tmp.path().join("whole");
    let w = execute(&whole, Start::New(config()), &ctl()).unwrap();
    assert_eq!(w.resumes, 0);
    for (a, b) in w.phases.iter().zip(&r.phases) {
        assert_eq!(a.metrics, b.metrics, "phase {}", a.name);
        assert_eq!(a.ios_issued, b.ios_issued, "phase {}", a.name);
        assert_eq!(a.chunk_ios, b.chunk_ios, "phase {}", a.name);
    }
    let whole_rows: Vec<SeriesRow> = {
        let text = std::fs::read_to_string(whole.join("journal/random-write.jsonl")).unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    assert_eq!(whole_rows, rows_after);
    assert_eq!(
        w.health_after.nand_write_bytes,
        r.health_after.nand_write_bytes
    );
    let ws: ConsistencySummary = serde_json::from_value(w.summary).unwrap();
    assert_eq!(ws, s);
    eprintln!(
        "killed with {} rows checkpointed; resumed run: {} rows, {} write I/Os, {:.0} s of phase time",
        cp.series_rows,
        rows_after.len(),
        m.write_ios,
        elapsed_s
    );
}
