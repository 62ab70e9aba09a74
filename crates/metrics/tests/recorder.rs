//! The recorder on hand-built completion sets with known answers, and against the pure
//! reference functions on random sets.

use proptest::prelude::*;
use storbench_core::{IoRecord, Op};
use storbench_metrics::{
    busy_ns, busy_ns_by_op, qd_time_ns, quantile_nearest_rank, PhaseMetrics, Recorder,
    ServiceHistogram,
};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

/// One hand-built I/O: op, submission, completion, length, ok.
#[derive(Clone, Copy, Debug)]
struct Io {
    op: Op,
    s: u64,
    e: u64,
    len: u64,
    ok: bool,
}

fn io(op: Op, s: u64, e: u64, len: u64) -> Io {
    Io {
        op,
        s,
        e,
        len,
        ok: true,
    }
}

/// Feed the I/Os to a recorder as a time-ordered event stream (at equal times,
/// completions before submissions, as an engine that reaps before it submits).
fn record(start: u64, ios: &[Io], end: u64) -> PhaseMetrics {
    let mut ev: Vec<(u64, u8, usize)> = Vec::new();
    for (i, x) in ios.iter().enumerate() {
        ev.push((x.s, 1, i));
        ev.push((x.e, 0, i));
    }
    ev.sort();
    let mut r = Recorder::new(start);
    for (t, kind, i) in ev {
        let x = ios[i];
        if kind == 1 {
            r.on_submit(t, x.op);
        } else {
            let mut rec = IoRecord::new(x.op, 0, x.len, x.s);
            rec.complete_ns = Some(x.e);
            r.on_complete(&rec, x.ok);
        }
    }
    r.finish(end)
}

#[test]
fn busy_time_overlapping_disjoint_and_per_direction() {
    let ios = [
        io(Op::Read, 0, 10 * MS, 4096),
        io(Op::Read, 5 * MS, 15 * MS, 4096),
        io(Op::Write, 12 * MS, 30 * MS, 1_000_000),
        io(Op::Write, 40 * MS, 50 * MS, 1_000_000),
    ];
    let m = record(0, &ios, 100 * MS);
    // union: [0, 30) + [40, 50)
    assert_eq!(m.busy_ns, 40 * MS);
    assert_eq!(m.busy_read_ns, 15 * MS);
    assert_eq!(m.busy_write_ns, 28 * MS);
    assert_eq!(m.busy_trim_ns, 0);
    assert_eq!(
        (m.read_ios, m.write_ios, m.read_bytes, m.write_bytes),
        (2, 2, 8192, 2_000_000)
    );
    // 2,008,192 bytes in 40 ms = 50.2048 MB/s; reads 8192 B in 15 ms; writes 2 MB in 28 ms.
    assert!((m.data_rate_mb_per_s - 50.2048).abs() < 1e-9);
    assert!((m.read_rate_mb_per_s - 8192.0 / 1e6 / 0.015).abs() < 1e-9);
    assert!((m.write_rate_mb_per_s - 2.0 / 0.028).abs() < 1e-9);
    assert_eq!(m.elapsed_ns, 100 * MS);
    assert!((m.iops - 40.0).abs() < 1e-9);
}

#[test]
fn qd_distribution_time_weighted_and_at_submission() {
    // [0,10) and [5,15) overlap on [5,10): QD1 for 10 ms, QD2 for 5 ms; idle [15, 20);
    // [20,30) alone. Busy 25 ms, mean QD over busy = (1*15 + 2*5) / 20... computed below.
    let ios = [
        io(Op::Read, 0, 10 * MS, 512),
        io(Op::Write, 5 * MS, 15 * MS, 512),
        io(Op::Read, 20 * MS, 30 * MS, 512),
    ];
    let m = record(0, &ios, 30 * MS);
    assert_eq!(m.qd.time_by_qd_ns, vec![5 * MS, 20 * MS, 5 * MS]);
    assert_eq!(m.busy_ns, 25 * MS);
    assert!((m.qd.mean_over_busy - (20.0 + 2.0 * 5.0) / 25.0).abs() < 1e-12);
    assert_eq!(m.qd.max, 2);
    // submissions: first alone (QD1), second made QD2, third alone.
    assert_eq!(m.qd.submits_by_qd, vec![0, 2, 1]);
    assert!((m.qd.submitted_at_qd1_pct - 200.0 / 3.0).abs() < 1e-12);
}

#[test]
fn empty_windows_are_zeros_and_the_last_partial_window_is_kept() {
    let ios = [
        io(Op::Read, 100 * MS, 500 * MS, 4096),
        io(Op::Write, 3_000 * MS, 3_200 * MS, 8192),
        io(Op::Write, 3_100 * MS, 3_900 * MS, 8192),
    ];
    let m = record(0, &ios, 4_500 * MS);
    let s = &m.series;
    assert_eq!(s.len(), 5);
    assert_eq!(
        s.iter().map(|w| w.t_s).collect::<Vec<_>>(),
        vec![0, 1, 2, 3, 4]
    );
    assert_eq!(
        s.iter()
            .map(|w| w.read_ios + w.write_ios)
            .collect::<Vec<_>>(),
        vec![1, 0, 0, 2, 0]
    );
    assert!(s[..4].iter().all(|w| w.window_ns == S));
    assert_eq!(s[4].window_ns, 500 * MS);
    assert_eq!(
        s[1],
        storbench_metrics::SecondSample {
            t_s: 1,
            window_ns: S,
            ..Default::default()
        }
    );
    assert_eq!(s[0].read_bytes, 4096);
    assert_eq!(s[3].write_bytes, 16384);
    // window 3: busy [3.0, 3.9) = 900 ms; QD integral 0.1 s at QD2 + 0.8 s at QD1 = 1.0
    assert_eq!(s[3].busy_ns, 900 * MS);
    assert!((s[3].qd_mean - 1.0).abs() < 1e-12);
    assert!((s[3].latency_us_mean - 500_000.0).abs() < 1e-9);
    assert!((s[3].latency_us_max - 800_000.0).abs() < 1e-9);
    assert!((s[3].write_latency_us_mean - 500_000.0).abs() < 1e-9);
    assert!((s[0].read_latency_us_mean - 400_000.0).abs() < 1e-9);
    assert_eq!(s[3].iops(), 2.0);
    assert_eq!(s[3].write_mb_per_s(), 0.016384);
    // full windows only for scores
    assert_eq!(m.iops_per_s(), vec![1.0, 0.0, 0.0, 2.0]);
    // an I/O spanning windows puts busy time in each: window 0 busy [0.1, 0.5)
    assert_eq!(s[0].busy_ns, 400 * MS);
}

#[test]
fn windows_are_by_completion_time_since_phase_start() {
    // Phase starts at 10 s on the target clock; completion at 11.999 s is window 1, at 12 s window 2.
    let ios = [
        io(Op::Read, 10 * S, 11 * S + 999 * MS, 1),
        io(Op::Read, 11 * S + 999 * MS, 12 * S, 1),
    ];
    let m = record(10 * S, &ios, 13 * S);
    let reads: Vec<u64> = m.series.iter().map(|w| w.read_ios).collect();
    assert_eq!(reads, vec![0, 1, 1]);
    assert!(m.series.iter().all(|w| w.window_ns == S));
}

#[test]
fn percentiles_mean_stddev_min_max_known_answers() {
    // QD1, service times 1..=1000 µs.
    let mut t = 0;
    let ios: Vec<Io> = (1..=1000u64)
        .map(|us| {
            let x = io(Op::Read, t, t + us * 1000, 4096);
            t += us * 1000 + 1000;
            x
        })
        .collect();
    let m = record(0, &ios, t);
    let l = &m.service;
    assert_eq!(l.count, 1000);
    assert_eq!(l.min_us, 1.0);
    assert_eq!(l.max_us, 1000.0);
    assert!((l.mean_us - 500.5).abs() < 1e-9);
    // population std dev of 1..=n is sqrt((n^2 - 1) / 12)
    assert!((l.stddev_us - (999_999.0f64 / 12.0).sqrt()).abs() < 1e-6);
    // nearest rank, within the histogram's 0.1%
    for (p, want) in [
        (l.p50_us, 500.0),
        (l.p90_us, 900.0),
        (l.p99_us, 990.0),
        (l.p99_9_us, 999.0),
        (l.p99_99_us, 1000.0),
    ] {
        assert!((p - want).abs() <= want * 0.001, "got {p}, want {want}");
    }
    assert_eq!(m.service_read, *l);
    assert_eq!(m.service_write.count, 0);
}

#[test]
fn trim_and_flush_are_reported_apart_from_reads_and_writes() {
    let ios = [
        io(Op::Read, 0, 100_000, 4096),
        io(Op::Trim, 200_000, 10_200_000, 1 << 30),
        io(Op::Flush, 20_000_000, 25_000_000, 0),
        io(Op::Write, 30_000_000, 30_300_000, 4096),
    ];
    let m = record(0, &ios, 31 * MS);
    assert_eq!(m.service.count, 2);
    assert_eq!(m.service.max_us, 300.0);
    assert_eq!(m.service_trim.count, 1);
    assert_eq!(m.service_trim.mean_us, 10_000.0);
    assert_eq!(m.service_flush.mean_us, 5_000.0);
    assert_eq!((m.trim_ios, m.trim_bytes, m.flush_ios), (1, 1 << 30, 1));
    assert_eq!(m.busy_trim_ns, 10 * MS);
    assert_eq!(m.busy_flush_ns, 5 * MS);
    // busy time counts every op; the data rate uses read + write bytes over it
    assert_eq!(m.busy_ns, 100_000 + 10 * MS + 5 * MS + 300_000);
    assert_eq!(m.series[0].trim_ios, 1);
    assert_eq!(m.series[0].latency_us_max, 300.0);
}

#[test]
fn errors_count_apart_but_keep_the_drive_busy() {
    let mut bad = io(Op::Write, 0, 10 * MS, 4096);
    bad.ok = false;
    let m = record(0, &[bad, io(Op::Write, 20 * MS, 30 * MS, 4096)], 40 * MS);
    assert_eq!(m.errors, 1);
    assert_eq!(m.write_ios, 1);
    assert_eq!(m.write_bytes, 4096);
    assert_eq!(m.busy_write_ns, 20 * MS);
    assert_eq!(m.service_write.count, 1);
    assert_eq!(m.series[0].errors, 1);
}

#[test]
fn unfinished_ios_are_counted_and_busy_until_the_end() {
    let mut r = Recorder::new(0);
    r.on_submit(5 * MS, Op::Read);
    let m = r.finish(10 * MS);
    assert_eq!(m.unfinished_ios, 1);
    assert_eq!(m.busy_ns, 5 * MS);
    assert_eq!(m.read_ios, 0);
}

#[test]
fn live_series_has_only_finished_windows() {
    let mut r = Recorder::new(0);
    r.on_submit(0, Op::Read);
    let mut rec = IoRecord::new(Op::Read, 0, 4096, 0);
    rec.complete_ns = Some(2 * S + 1);
    r.on_complete(&rec, true);
    assert_eq!(r.series().len(), 2);
    assert_eq!(r.series()[1].busy_ns, S);
    assert_eq!(r.series()[1].read_ios, 0);
    let m = r.finish(3 * S);
    assert_eq!(m.series.len(), 3);
    assert_eq!(m.series[2].read_ios, 1);
}

#[test]
fn empty_phase() {
    let m = Recorder::new(7).finish(7);
    assert!(m.series.is_empty());
    assert_eq!(m.busy_ns, 0);
    assert_eq!(m.data_rate_mb_per_s, 0.0);
    assert_eq!(m.service.count, 0);
    assert_eq!(m.service.p99_us, 0.0);
    assert!(m.service.histogram.buckets.is_empty());
    assert_eq!(
        ServiceHistogram::from_data(&m.service.histogram)
            .unwrap()
            .count(),
        0
    );
    assert_eq!(m.service.merged(&m.service_read).unwrap(), m.service);
    assert_eq!(m.qd.time_by_qd_ns, vec![0]);
}

#[test]
#[should_panic(expected = "time order")]
fn events_out_of_order_are_a_bug() {
    let mut r = Recorder::new(0);
    r.on_submit(10, Op::Read);
    r.on_submit(9, Op::Read);
}

#[test]
#[should_panic(expected = "none outstanding")]
fn completion_without_submission_is_a_bug() {
    let mut r = Recorder::new(0);
    let mut rec = IoRecord::new(Op::Read, 0, 1, 0);
    rec.complete_ns = Some(1);
    r.on_complete(&rec, true);
}

#[test]
fn metrics_survive_json_and_histograms_merge_exactly() {
    let ios: Vec<Io> = (0..500u64)
        .map(|i| io(Op::Read, i * MS, i * MS + (i % 37 + 1) * 10_000, 4096))
        .collect();
    let m = record(0, &ios, 600 * MS);
    let json = serde_json::to_string(&m).unwrap();
    let back: PhaseMetrics = serde_json::from_str(&json).unwrap();
    assert_eq!(back.series, vec![]);
    assert_eq!(back.service, m.service);
    assert_eq!(back.qd, m.qd);
    // two halves merged equal the whole
    let a = record(0, &ios[..200], 600 * MS);
    let b = record(0, &ios[200..], 600 * MS);
    let merged = a.service.merged(&b.service).unwrap();
    assert_eq!(merged.count, m.service.count);
    assert_eq!(
        (merged.min_us, merged.max_us, merged.p50_us, merged.p99_us),
        (
            m.service.min_us,
            m.service.max_us,
            m.service.p50_us,
            m.service.p99_us
        )
    );
    assert!((merged.mean_us - m.service.mean_us).abs() < 1e-9);
    assert!((merged.stddev_us - m.service.stddev_us).abs() < 1e-6);
    let h = ServiceHistogram::from_data(&m.service.histogram).unwrap();
    assert_eq!(h.stats(), m.service);
}

fn arb_ios() -> impl Strategy<Value = Vec<Io>> {
    prop::collection::vec(
        (
            0u8..4,
            0u64..3 * S,
            0u64..400 * MS,
            0u64..1 << 20,
            prop::bool::weighted(0.95),
        ),
        0..200,
    )
    .prop_map(|v| {
        v.into_iter()
            .map(|(o, s, d, len, ok)| Io {
                op: Op::ALL[o as usize],
                s,
                e: s + d,
                len,
                ok,
            })
            .collect()
    })
}

proptest! {
    #[test]
    fn recorder_matches_the_reference_definitions(ios in arb_ios(), tail in 0u64..2 * S) {
        let end = ios.iter().map(|x| x.e).max().unwrap_or(0) + tail;
        let m = record(0, &ios, end);
        let iv: Vec<(u64, u64)> = ios.iter().map(|x| (x.s, x.e)).collect();
        prop_assert_eq!(m.busy_ns, busy_ns(&iv));
        let by_op = busy_ns_by_op(&ios.iter().map(|x| (x.op, x.s, x.e)).collect::<Vec<_>>());
        prop_assert_eq!([m.busy_read_ns, m.busy_write_ns, m.busy_trim_ns, m.busy_flush_ns], by_op);
        // time-weighted QD, with idle before the first submission and after the last completion
        let mut q = qd_time_ns(&iv);
        let first = iv.iter().map(|x| x.0).min().unwrap_or(0);
        let last = iv.iter().map(|x| x.1).max().unwrap_or(0);
        q[0] += first + (end - last);
        prop_assert_eq!(&m.qd.time_by_qd_ns[..q.len()], &q[..]);
        prop_assert!(m.qd.time_by_qd_ns[q.len()..].iter().all(|&t| t == 0));
        // counts, and the series adds up to the totals
        let ok = |op: Op| ios.iter().filter(move |x| x.ok && x.op == op);
        prop_assert_eq!(m.read_ios, ok(Op::Read).count() as u64);
        prop_assert_eq!(m.write_bytes, ok(Op::Write).map(|x| x.len).sum::<u64>());
        prop_assert_eq!(m.errors, ios.iter().filter(|x| !x.ok).count() as u64);
        prop_assert_eq!(m.series.iter().map(|w| w.read_ios).sum::<u64>(), m.read_ios);
        prop_assert_eq!(m.series.iter().map(|w| w.write_bytes).sum::<u64>(), m.write_bytes);
        prop_assert_eq!(m.series.iter().map(|w| w.busy_ns).sum::<u64>(), m.busy_ns);
        prop_assert_eq!(m.series.iter().map(|w| w.window_ns).sum::<u64>(), end);
        // percentiles within the histogram's precision of the nearest rank
        let mut lat: Vec<u64> = ios.iter().filter(|x| x.ok && x.op.is_data()).map(|x| x.e - x.s).collect();
        lat.sort_unstable();
        for (q, got) in [(0.5, m.service.p50_us), (0.9, m.service.p90_us), (0.99, m.service.p99_us), (0.999, m.service.p99_9_us)] {
            let want = quantile_nearest_rank(&lat, q).unwrap_or(0) as f64 / 1000.0;
            prop_assert!((got - want).abs() <= want * 0.001 + 0.001, "q {} got {} want {}", q, got, want);
        }
        if !lat.is_empty() {
            let mean = lat.iter().sum::<u64>() as f64 / lat.len() as f64 / 1000.0;
            prop_assert!((m.service.mean_us - mean).abs() <= 1e-9 * mean.max(1.0));
        }
    }
}

#[test]
fn a_resumed_phase_appends_to_the_same_totals() {
    // I/Os in [0, 3 s) and [3 s, 5 s), none in flight at 3 s: recording the halves
    // separately and appending gives what one recorder gives.
    let ios: Vec<Io> = (0..400u64)
        .map(|i| {
            let s = i * 12 * MS + (i % 3) * MS;
            let op = [Op::Read, Op::Write, Op::Trim][(i % 7 % 3) as usize];
            io(op, s, s + (i % 11 + 1) * 700_000, 4096 * (i % 5 + 1))
        })
        .collect();
    assert!(ios.iter().all(|x| x.e < 3 * S || x.s >= 3 * S));
    let whole = record(0, &ios, 5 * S);
    let (a, b): (Vec<Io>, Vec<Io>) = ios.iter().partition(|x| x.s < 3 * S);
    let mut first = record(0, &a, 3 * S);
    // the later part runs on a restarted clock
    let shifted: Vec<Io> = b
        .iter()
        .map(|x| Io {
            s: x.s - 3 * S + 7,
            e: x.e - 3 * S + 7,
            ..*x
        })
        .collect();
    let second = record(7, &shifted, 2 * S + 7);
    first.append(&second).unwrap();
    assert_eq!(first.series, whole.series);
    assert_eq!(first.qd, whole.qd);
    assert_eq!(
        (
            first.busy_ns,
            first.busy_read_ns,
            first.busy_write_ns,
            first.busy_trim_ns
        ),
        (
            whole.busy_ns,
            whole.busy_read_ns,
            whole.busy_write_ns,
            whole.busy_trim_ns
        )
    );
    assert_eq!(
        (first.read_bytes, first.write_ios, first.trim_ios),
        (whole.read_bytes, whole.write_ios, whole.trim_ios)
    );
    assert_eq!(first.elapsed_ns, whole.elapsed_ns);
    assert_eq!(first.end_ns, whole.end_ns);
    assert!((first.data_rate_mb_per_s - whole.data_rate_mb_per_s).abs() < 1e-9);
    assert!((first.iops - whole.iops).abs() < 1e-9);
    assert_eq!(
        first.service.histogram.buckets,
        whole.service.histogram.buckets
    );
    assert_eq!(
        (first.service.p99_us, first.service.max_us),
        (whole.service.p99_us, whole.service.max_us)
    );
    assert!((first.service.mean_us - whole.service.mean_us).abs() < 1e-9);
    assert_eq!(first.service_trim.count, whole.service_trim.count);
}
