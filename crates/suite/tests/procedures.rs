//! The seeds' findings on simulated presets, through the full procedures (purge,
//! precondition, phases, results on disk). Small drives and short phases keep the
//! whole file to seconds; the figures each test prints are the evidence.

use std::path::Path;
use storbench_suite::bench::{BenchConfig, BenchSummary, DriveState, Workload};
use storbench_suite::consistency::{ConsistencyConfig, ConsistencySummary};
use storbench_suite::trimcheck::{TrimCheckConfig, TrimTable};
use storbench_suite::{execute, read_result, Control, Start};

const NS: u64 = 1_000_000_000;

/// The 7% OP client preset, small.
const SIM_7OP: &str = "sim:client-7op,capacity=512m,seed=5";

fn consistency(dir: &Path, span: f64) -> ConsistencySummary {
    let mut c = ConsistencyConfig::quick(SIM_7OP);
    c.span_fraction = span;
    c.duration_ns = 40 * NS;
    c.round_ns = 4 * NS;
    c.score_last_s = 10;
    let r = execute(dir, Start::New(c), &Control::default()).unwrap();
    assert_eq!(r.phases.len(), 3);
    r.summary.unwrap()
}

#[test]
fn spare_area_raises_steady_state_iops_by_half_or_more() {
    let tmp = tempfile::tempdir().unwrap();
    let full = consistency(&tmp.path().join("full"), 1.0);
    let spare = consistency(&tmp.path().join("spare"), 0.75);
    let f = full.scores.clone().unwrap();
    let s = spare.scores.clone().unwrap();
    eprintln!(
        "7% OP preset, last 10 s: full span {:.0} IOPS (sd {:.0}), 25% spare area {:.0} IOPS (sd {:.0}), ratio {:.2}; steady state at {:?} / {:?} s",
        f.avg,
        f.stddev,
        s.avg,
        s.stddev,
        s.avg / f.avg,
        full.steady_state_at_s,
        spare.steady_state_at_s
    );
    assert_eq!(full.iops_per_s.len(), 40);
    assert!((spare.spare_area_pct - 25.0).abs() < 0.5);
    assert!(f.avg > 0.0);
    assert!(
        s.avg >= 1.5 * f.avg,
        "spare {:.0} vs full {:.0}",
        s.avg,
        f.avg
    );
    // The result directory holds what the issue asks for.
    let d = tmp.path().join("full");
    for f in [
        "result.json",
        "random-write_iops.1.log",
        "random-write_bw.1.log",
        "series/random-write.parquet",
        "series/precondition.parquet",
    ] {
        assert!(d.join(f).is_file(), "missing {f}");
    }
    let log = std::fs::read_to_string(d.join("random-write_iops.1.log")).unwrap();
    let first: Vec<&str> = log.lines().next().unwrap().split(", ").collect();
    assert_eq!(first.len(), 5, "time_ms,value,ddir,bs,offset");
    assert_eq!(first[0], "1000");
    assert_eq!(first[2], "1");
    let pq = storbench_report::html::load::read_parquet_f64(
        &d.join("series/random-write.parquet"),
        "iops",
    )
    .unwrap();
    // Every window, the short last one (the drain after the time limit) included.
    assert_eq!(pq.len(), 41);
    assert!((pq[20] - full.iops_per_s[20]).abs() < 1e-9);
    let r = read_result::<ConsistencyConfig>(&d).unwrap();
    assert!(r.health_delta.available);
    let wa = r.health_delta.write_amplification.unwrap();
    assert!(wa > 1.0, "random writes on a full drive amplify: WA {wa}");
}

#[test]
fn trim_restores_sequential_write_speed() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = TrimCheckConfig::quick(SIM_7OP);
    c.dirty_for_ns = 20 * NS;
    let r = execute(&tmp.path().join("trim"), Start::New(c), &Control::default()).unwrap();
    let t: TrimTable = r.summary.unwrap();
    eprintln!(
        "TRIM check, 7% OP preset: clean {:.1} MB/s, dirty {:.1} MB/s ({:.0}%), after TRIM {:.1} MB/s ({:.0}%)",
        t.clean_mb_per_s,
        t.dirty_mb_per_s,
        t.dirty_of_clean_pct,
        t.after_trim_mb_per_s,
        t.after_trim_of_clean_pct
    );
    assert!(t.clean_mb_per_s > 0.0);
    assert!(t.after_trim_of_clean_pct >= 90.0);
    assert!(t.note.is_none(), "{:?}", t.note);
    assert!(t.dirty_of_clean_pct < 75.0, "dirty should be clearly lower");
}

fn bench(dir: &Path, season: bool) -> BenchSummary {
    let mut c = BenchConfig::new(
        SIM_7OP,
        Workload::Profile {
            name: "heavy-2011".into(),
            scale: 0.002,
            seed: 1,
        },
    );
    // The 2009 article's states: fresh = purge, then the trace's image; seasoned = purge,
    // one 128 KB sequential pass, then the same image.
    c.state = if season {
        DriveState::Seasoned
    } else {
        DriveState::Fresh
    };
    let r = execute(dir, Start::New(c), &Control::default()).unwrap();
    r.summary.unwrap()
}

#[test]
fn seasoned_drive_benches_slower_than_fresh() {
    let tmp = tempfile::tempdir().unwrap();
    let fresh = bench(&tmp.path().join("fresh"), false);
    let seasoned = bench(&tmp.path().join("seasoned"), true);
    eprintln!(
        "heavy-2011 x0.002 on the 7% OP preset: fresh {:.1} MB/s (mean service {:.0} us), seasoned {:.1} MB/s (mean service {:.0} us)",
        fresh.data_rate_mb_per_s,
        fresh.service.mean_us,
        seasoned.data_rate_mb_per_s,
        seasoned.service.mean_us
    );
    assert_eq!(fresh.reads + fresh.writes, seasoned.reads + seasoned.writes);
    assert!(fresh.reads > 0 && fresh.writes > 0);
    assert!(seasoned.data_rate_mb_per_s < fresh.data_rate_mb_per_s);
    assert!(seasoned.image_bytes > 0 && seasoned.image_bytes == fresh.image_bytes);
    assert!(seasoned.seq_pass_mb_per_s.is_some() && fresh.seq_pass_mb_per_s.is_none());
}
