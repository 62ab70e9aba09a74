//! The engine loop on a virtual-time target: each pacing mode, limits, stop, data.

mod common;
use common::run_to_end;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use storbench_engine::testing::{DelayTarget, VecSource};
use storbench_engine::{
    idle, run_phase, DataKind, NoObserver, Observer, Pacing, RunOptions, Target,
};
use storbench_metrics::SecondSample;
use storbench_trace::{IoRecord, Op};
use storbench_workload::generator::{GenSpec, Generator};
use storbench_workload::NextIo;

const GIB: u64 = 1 << 30;

fn io(op: Op, offset: u64, len: u64, at: Option<u64>, qd: Option<u32>) -> NextIo {
    NextIo {
        at_ns: at,
        trace_qd: qd,
        ..common::io(op, offset, len)
    }
}

/// In flight at each submission just before it was added (itself included), from
/// submission times and the target's fixed delay.
fn in_flight_at_submissions(t: &DelayTarget, delay: u64) -> Vec<usize> {
    let subs = &t.submissions;
    (0..subs.len())
        .map(|i| {
            let ti = subs[i].0;
            subs[..i].iter().filter(|(tj, _)| tj + delay > ti).count() + 1
        })
        .collect()
}

#[test]
fn queue_depth_keeps_in_flight_at_most_trace_qd() {
    let delay = 10_000;
    let qds: Vec<u32> = (0..400)
        .map(|i| [1, 2, 4, 8, 3, 16][(i / 37) % 6])
        .collect();
    let ios: Vec<NextIo> = qds
        .iter()
        .enumerate()
        .map(|(i, &q)| io(Op::Read, i as u64 * 4096, 4096, None, Some(q)))
        .collect();
    let mut t = DelayTarget::new(GIB, delay, 64);
    let mut src = VecSource::new(ios).with_trace_avg_qd(5.5);
    let out = run_to_end(&mut t, &mut src, Pacing::QueueDepth { default_qd: 1 });
    assert!(out.complete);
    assert_eq!(out.metrics.read_ios, 400);
    assert_eq!(out.submitted_ios, 400);
    let inflight = in_flight_at_submissions(&t, delay);
    for (i, (&n, &q)) in inflight.iter().zip(&qds).enumerate() {
        assert!(n <= q as usize, "I/O {i}: {n} in flight, trace QD {q}");
    }
    // The order of the source is kept.
    for (i, (_, r)) in t.submissions.iter().enumerate() {
        assert_eq!(r.offset_bytes, i as u64 * 4096);
    }
    // QD 16 was reached (the limit is not just QD1).
    assert_eq!(t.max_seen_in_flight, 16);
    assert_eq!(out.fidelity.mode, "queue-depth");
    assert_eq!(out.fidelity.trace_avg_qd, Some(5.5));
    let r = out.fidelity.replayed_avg_qd.unwrap();
    assert!(r > 1.0 && r <= 16.0, "replayed avg QD {r}");
}

#[test]
fn queue_depth_without_trace_qd_uses_default() {
    let delay = 1_000;
    let ios: Vec<NextIo> = (0..100)
        .map(|i| io(Op::Write, i * 4096, 4096, None, None))
        .collect();
    let mut t = DelayTarget::new(GIB, delay, 32);
    let out = run_to_end(
        &mut t,
        &mut VecSource::new(ios),
        Pacing::QueueDepth { default_qd: 4 },
    );
    assert_eq!(t.max_seen_in_flight, 4);
    // 100 I/Os, 4 at a time, 1 µs each: exactly 25 µs of virtual time, all busy.
    assert_eq!(out.metrics.elapsed_ns, 25 * delay);
    assert_eq!(out.metrics.busy_ns, 25 * delay);
    assert!((out.metrics.qd.mean_over_busy - 4.0).abs() < 1e-9);
}

#[test]
fn fixed_qd_keeps_n_in_flight() {
    let delay = 50_000;
    // Trace QDs and times are ignored in fixed-qd mode.
    let ios: Vec<NextIo> = (0..1000)
        .map(|i| io(Op::Read, i * 4096, 4096, Some(i * 1_000_000), Some(1)))
        .collect();
    let mut t = DelayTarget::new(GIB, delay, 128);
    let out = run_to_end(&mut t, &mut VecSource::new(ios), Pacing::FixedQd(8));
    assert_eq!(t.max_seen_in_flight, 8);
    // At every submission instant, exactly 8 are in flight once its batch is in.
    let subs = &t.submissions;
    for &(ti, _) in subs {
        let n = subs
            .iter()
            .filter(|(tj, _)| *tj <= ti && ti < tj + delay)
            .count();
        assert_eq!(n, 8, "at {ti} ns");
    }
    assert_eq!(out.metrics.elapsed_ns, 1000 / 8 * delay);
    assert_eq!(out.metrics.read_ios, 1000);
    // Completions of one instant are reaped and refilled in one batch.
    assert_eq!(t.submit_calls, 1000 / 8);
    // More than the target accepts is refused.
    let mut t2 = DelayTarget::new(GIB, delay, 4);
    assert!(run_phase(
        &mut t2,
        &mut VecSource::new(vec![]),
        &RunOptions::new(Pacing::FixedQd(8)),
        &mut NoObserver
    )
    .is_err());
}

#[test]
fn timed_issues_at_trace_time_over_speed_with_idle_cut() {
    let delay = 3_000;
    // Trace times (ns): three due together at 1_000_000, a 10 s idle gap, then more.
    let at = [
        500_000u64,
        1_000_000,
        1_000_000,
        1_000_000,
        1_200_000,
        11_200_000_000,
        11_200_050_000,
    ];
    let ios: Vec<NextIo> = at
        .iter()
        .enumerate()
        .map(|(i, &a)| io(Op::Read, i as u64 * 8192, 8192, Some(a), Some(1)))
        .collect();
    let start = 777_000;
    let mut t = DelayTarget::new(GIB, delay, 16).with_start(start);
    let opts = RunOptions::new(Pacing::Timed {
        speed: 2.0,
        max_idle_ns: Some(1_000_000_000),
    });
    let out = run_phase(&mut t, &mut VecSource::new(ios), &opts, &mut NoObserver).unwrap();
    // Expected: (trace time since first, gaps cut to 1 s) / 2 after the phase start.
    let cut: [u64; 7] = [
        0,
        500_000,
        500_000,
        500_000,
        700_000,
        700_000 + 1_000_000_000,
        750_000 + 1_000_000_000,
    ];
    let got: Vec<u64> = t.submissions.iter().map(|(s, _)| *s).collect();
    let want: Vec<u64> = cut.iter().map(|c| start + c / 2).collect();
    assert_eq!(got, want);
    // The three due together went in one submission: 7 I/Os, 5 distinct times.
    assert_eq!(t.submit_calls, 5);
    assert_eq!(out.metrics.start_ns, start);
    assert_eq!(out.fidelity.mode, "timed");
    // Virtual time: no issue error, no drift (the histogram's floor is 1 ns).
    assert!(out.fidelity.issue_error_p99_ns.unwrap() <= 1);
    assert_eq!(out.fidelity.issue_error_max_ns, Some(0));
    assert_eq!(out.fidelity.drift_ns, Some(0));
    assert_eq!(out.fidelity.drift_pct, Some(0.0));
}

#[test]
fn timed_without_idle_cut_keeps_gaps_and_reports_slot_starvation() {
    let ios: Vec<NextIo> = (0..10)
        .map(|i| io(Op::Read, 0, 4096, Some(i * 3_000_000_000), None))
        .collect();
    let mut t = DelayTarget::new(GIB, 100, 4);
    let opts = RunOptions::new(Pacing::Timed {
        speed: 1.0,
        max_idle_ns: None,
    });
    let out = run_phase(&mut t, &mut VecSource::new(ios), &opts, &mut NoObserver).unwrap();
    assert_eq!(t.submissions.last().unwrap().0, 27_000_000_000);
    assert_eq!(out.metrics.elapsed_ns, 27_000_000_100);
    assert_eq!(out.metrics.busy_ns, 1000);

    // 8 I/Os due at once on a target that takes 2: the rest go late.
    let ios: Vec<NextIo> = (0..8)
        .map(|i| io(Op::Read, i * 4096, 4096, Some(0), None))
        .collect();
    let mut t = DelayTarget::new(GIB, 1_000, 2);
    let out = run_phase(&mut t, &mut VecSource::new(ios), &opts, &mut NoObserver).unwrap();
    assert!(out.fidelity.slot_starved_ios > 0);
    assert_eq!(out.fidelity.issue_error_max_ns, Some(3_000));
    assert_eq!(out.fidelity.drift_ns, Some(3_000));
}

#[test]
fn timed_needs_issue_times() {
    let mut g = Generator::new(GenSpec::rand_write_4k_qd32(0, GIB, 1)).unwrap();
    let mut t = DelayTarget::new(GIB, 1_000, 32);
    let err = run_phase(
        &mut t,
        &mut g,
        &RunOptions::new(Pacing::Timed {
            speed: 1.0,
            max_idle_ns: None,
        }),
        &mut NoObserver,
    )
    .unwrap_err();
    assert!(err.to_string().contains("issue times"), "{err}");
}

#[test]
fn generator_with_time_limit_runs_that_long_at_qd32() {
    let delay = 100_000; // 100 µs per I/O, QD32 -> 320k IOPS
    let mut g = Generator::new(GenSpec::rand_write_4k_qd32(0, GIB, 9)).unwrap();
    let mut t = DelayTarget::new(GIB, delay, 64);
    let mut opts = RunOptions::new(Pacing::QueueDepth { default_qd: 1 });
    opts.time_limit_ns = Some(2_000_000_000);
    let out = run_phase(&mut t, &mut g, &opts, &mut NoObserver).unwrap();
    assert!(out.complete);
    assert_eq!(t.max_seen_in_flight, 32);
    // Submissions stop at the limit, the last ones drain within one delay.
    assert!(t.submissions.iter().all(|(s, _)| *s < 2_000_000_000));
    assert!(out.metrics.elapsed_ns >= 2_000_000_000);
    assert!(out.metrics.elapsed_ns <= 2_000_000_000 + delay);
    let iops = out.metrics.write_ios as f64 / 2.0;
    assert!((iops - 320_000.0).abs() < 1_000.0, "iops {iops}");
    let full: Vec<f64> = out.metrics.iops_per_s();
    assert_eq!(full.len(), 2);
    assert!(
        full.iter().all(|&x| (x - 320_000.0).abs() < 1_000.0),
        "{full:?}"
    );
}

#[test]
fn byte_limited_sequential_fill_writes_the_span_once() {
    let span = 64 << 20;
    let mut g = Generator::new(GenSpec::seq_fill(0, span, 3)).unwrap();
    let mut t = DelayTarget::new(GIB, 200_000, 64);
    let out = run_to_end(&mut t, &mut g, Pacing::QueueDepth { default_qd: 1 });
    assert_eq!(out.metrics.write_bytes, span);
    assert_eq!(out.metrics.write_ios, span / (128 << 10));
    let mut offs: Vec<u64> = t.submissions.iter().map(|(_, r)| r.offset_bytes).collect();
    offs.sort_unstable();
    offs.dedup();
    assert_eq!(offs.len() as u64, span / (128 << 10));
}

/// Sets the stop flag once `after_ios` have completed, like a Ctrl-C handler.
struct StopAfter {
    flag: Arc<AtomicBool>,
    after_ios: u64,
    seen: Vec<IoRecord>,
}

impl Observer for StopAfter {
    fn on_io(&mut self, io: &IoRecord) {
        self.seen.push(*io);
        if self.seen.len() as u64 >= self.after_ios {
            self.flag.store(true, Ordering::Relaxed);
        }
    }
}

#[test]
fn stop_flag_drains_and_marks_incomplete() {
    let flag = Arc::new(AtomicBool::new(false));
    let mut g = Generator::new(GenSpec::rand_write_4k_qd32(0, GIB, 5)).unwrap();
    let mut t = DelayTarget::new(GIB, 10_000, 64);
    let mut opts = RunOptions::new(Pacing::FixedQd(16));
    opts.stop = Some(flag.clone());
    opts.log_ios = true;
    let mut obs = StopAfter {
        flag,
        after_ios: 1000,
        seen: Vec::new(),
    };
    let out = run_phase(&mut t, &mut g, &opts, &mut obs).unwrap();
    assert!(!out.complete);
    // Everything submitted completed (drained), and was logged.
    assert_eq!(t.in_flight(), 0);
    assert_eq!(out.metrics.write_ios, out.submitted_ios);
    assert_eq!(obs.seen.len() as u64, out.submitted_ios);
    assert!(out.submitted_ios >= 1000 && out.submitted_ios < 1000 + 32);
    assert_eq!(out.metrics.unfinished_ios, 0);
    // Logged I/Os are in completion order with correct service times.
    assert!(obs
        .seen
        .windows(2)
        .all(|w| w[0].complete_ns <= w[1].complete_ns));
    assert!(obs.seen.iter().all(|r| r.service_ns() == Some(10_000)));
}

#[test]
fn folding_and_alignment_are_counted() {
    let cap = 1 << 20;
    let ios = vec![
        io(Op::Read, 0, 4096, None, None),
        io(Op::Read, cap + 4096, 4096, None, None), // folded
        io(Op::Write, 100, 1000, None, None),       // aligned
        io(Op::Write, 3 * cap + 1, 10, None, None), // both
        io(Op::Flush, 0, 0, None, None),
        io(Op::Trim, 0, 2 * cap, None, None), // clipped to the span: folded
    ];
    let mut t = DelayTarget::new(cap, 1_000, 8);
    let out = run_to_end(
        &mut t,
        &mut VecSource::new(ios),
        Pacing::QueueDepth { default_qd: 1 },
    );
    assert_eq!(out.folded_ios, 3);
    assert_eq!(out.aligned_ios, 2);
    let r: Vec<(u64, u64)> = t
        .submissions
        .iter()
        .map(|(_, r)| (r.offset_bytes, r.len_bytes))
        .collect();
    assert_eq!(
        r,
        vec![
            (0, 4096),
            (4096, 4096),
            (0, 1536),
            (0, 512),
            (0, 0),
            (0, cap)
        ]
    );
    assert_eq!(out.metrics.flush_ios, 1);
    assert_eq!(out.metrics.trim_ios, 1);

    // A smaller fold span (replaying a big trace on 1/4 of the target).
    let ios = vec![io(Op::Read, 300 << 10, 4096, None, None)];
    let mut t = DelayTarget::new(cap, 1_000, 8);
    let mut opts = RunOptions::new(Pacing::QueueDepth { default_qd: 1 });
    opts.fold_span_bytes = Some(256 << 10);
    let out = run_phase(&mut t, &mut VecSource::new(ios), &opts, &mut NoObserver).unwrap();
    assert_eq!(out.folded_ios, 1);
    assert_eq!(t.submissions[0].1.offset_bytes, 44 << 10);
}

#[test]
fn writes_carry_fresh_data_of_the_chosen_kind() {
    let ios: Vec<NextIo> = (0..64)
        .map(|i| io(Op::Write, i * 4096, 4096, None, None))
        .collect();
    let mut t = DelayTarget::new(GIB, 1_000, 4).with_buffers(4096);
    run_to_end(&mut t, &mut VecSource::new(ios.clone()), Pacing::FixedQd(4));
    let mut w = t.written.clone();
    assert_eq!(w.len(), 64);
    w.sort();
    w.dedup();
    assert_eq!(w.len(), 64, "a write buffer was repeated");

    let mut t = DelayTarget::new(GIB, 1_000, 4).with_buffers(4096);
    let mut opts = RunOptions::new(Pacing::FixedQd(4));
    opts.data = DataKind::Zeros;
    run_phase(
        &mut t,
        &mut VecSource::new(ios.clone()),
        &opts,
        &mut NoObserver,
    )
    .unwrap();
    assert!(t.written.iter().all(|b| b.iter().all(|&x| x == 0)));

    // An I/O larger than the target's buffers is a clear error.
    let mut t = DelayTarget::new(GIB, 1_000, 4).with_buffers(1024);
    let err = run_phase(
        &mut t,
        &mut VecSource::new(ios),
        &RunOptions::new(Pacing::FixedQd(4)),
        &mut NoObserver,
    )
    .unwrap_err();
    assert!(err.to_string().contains("larger than the target's buffers"));
}

struct Ticks(Vec<(u64, u64, usize)>);
impl Observer for Ticks {
    fn on_tick(&mut self, elapsed_ns: u64, done_ios: u64, series: &[SecondSample]) {
        self.0.push((elapsed_ns, done_ios, series.len()));
    }
}

#[test]
fn ticks_follow_target_time() {
    let mut g = Generator::new(GenSpec::rand_write_4k_qd32(0, GIB, 1)).unwrap();
    let mut t = DelayTarget::new(GIB, 1_000_000, 64);
    let mut opts = RunOptions::new(Pacing::QueueDepth { default_qd: 1 });
    opts.time_limit_ns = Some(3_000_000_000);
    let mut ticks = Ticks(Vec::new());
    run_phase(&mut t, &mut g, &opts, &mut ticks).unwrap();
    // Every 250 ms for 3 s, plus the final one.
    assert!((12..=14).contains(&ticks.0.len()), "{}", ticks.0.len());
    assert!(ticks
        .0
        .windows(2)
        .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
    // The final tick sees the whole series: at least the three full seconds.
    let last = ticks.0.last().unwrap();
    assert!(last.2 >= 3, "{last:?}");
}

#[test]
fn idle_lets_virtual_time_pass() {
    let mut t = DelayTarget::new(GIB, 1_000, 4);
    idle(&mut t, 5_000_000_000).unwrap();
    assert_eq!(t.now_ns(), 5_000_000_000);
}

/// Keeps what each whole second showed, and stops at `stop_at_s` if set.
struct Marks {
    marks: Vec<(
        u64,
        storbench_engine::PhaseOutcome,
        Vec<storbench_engine::InFlightIo>,
    )>,
    stop_at_s: Option<u64>,
}

impl Observer for Marks {
    fn on_second(&mut self, m: &storbench_engine::SecondMark<'_>) -> storbench_engine::Flow {
        let o = m.outcome();
        assert_eq!(m.submitted_ios(), o.submitted_ios);
        assert_eq!(m.series().len() as u64, m.elapsed_ns / 1_000_000_000);
        self.marks.push((m.elapsed_ns, o, m.in_flight()));
        if self.stop_at_s == Some(m.elapsed_ns / 1_000_000_000) {
            storbench_engine::Flow::Stop
        } else {
            storbench_engine::Flow::Continue
        }
    }
}

#[test]
fn second_marks_see_the_run_at_each_whole_second_and_change_nothing() {
    // 150 µs per I/O at QD32 over 3.5 s.
    let run = |obs: &mut dyn Observer| {
        let mut g = Generator::new(GenSpec::rand_write_4k_qd32(0, GIB, 4)).unwrap();
        let mut t = DelayTarget::new(GIB, 150_000, 64);
        let mut opts = RunOptions::new(Pacing::QueueDepth { default_qd: 1 });
        opts.time_limit_ns = Some(3_500_000_000);
        run_phase(&mut t, &mut g, &opts, obs).unwrap()
    };
    let plain = run(&mut NoObserver);
    let mut marks = Marks {
        marks: Vec::new(),
        stop_at_s: None,
    };
    let watched = run(&mut marks);
    assert_eq!(plain, watched, "watching at each second changed the run");
    let secs: Vec<u64> = marks.marks.iter().map(|m| m.0).collect();
    assert_eq!(secs, [1_000_000_000, 2_000_000_000, 3_000_000_000]);
    for (t, o, flying) in &marks.marks {
        let n = (t / 1_000_000_000) as usize;
        // The metrics at the mark are the whole run's first n seconds.
        assert_eq!(o.metrics.series, plain.metrics.series[..n]);
        assert_eq!(o.metrics.elapsed_ns, *t);
        let rows: u64 = plain.metrics.series[..n].iter().map(|s| s.write_ios).sum();
        assert_eq!(o.metrics.write_ios, rows);
        // What was submitted before the mark either completed before it or was in
        // flight at it.
        assert_eq!(o.submitted_ios, o.metrics.write_ios + flying.len() as u64);
        assert_eq!(flying.len(), 32);
        assert!(flying.windows(2).all(|w| w[0].issue_ns <= w[1].issue_ns));
        assert!(flying.iter().all(|f| f.issue_ns + 150_000 >= *t));
    }

    // Stop at a mark: nothing more is submitted, what flies drains.
    let mut stop = Marks {
        marks: Vec::new(),
        stop_at_s: Some(2),
    };
    let stopped = run(&mut stop);
    assert!(!stopped.complete);
    let at_2 = &stop.marks[1].1;
    assert_eq!(stopped.submitted_ios, at_2.submitted_ios);
    assert_eq!(stopped.metrics.write_ios, stopped.submitted_ios);
}
