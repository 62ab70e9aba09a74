//! The online recorder the engine loop feeds.
//!
//! Events (submissions and completions) arrive in non-decreasing time order on the
//! target's clock. Between two events the number outstanding is constant, so busy
//! time, per-op busy time and the time-weighted QD histogram are integrated exactly
//! from the event stream, with no per-I/O state. Per-second windows are by event time:
//! a completion counts in the window that contains its completion time.

use crate::calc::data_rate_mb_per_s;
use crate::stats::{PhaseMetrics, QdStats, SecondSample, ServiceHistogram};
use crate::NS_PER_S;
use storbench_core::{IoRecord, Op};

/// Initial capacity of the QD vectors; they grow only when a new maximum QD is seen,
/// so their size is bounded by the largest queue depth, not by the run length.
const QD_INITIAL: usize = 256;

/// Accumulators of the open per-second window.
#[derive(Clone, Debug, Default)]
struct Window {
    sample: SecondSample,
    latency_sum_ns: u64,
    latency_count: u64,
    read_latency_sum_ns: u64,
    write_latency_sum_ns: u64,
    latency_max_ns: u64,
    /// Integral of the outstanding count over time (count × ns).
    qd_integral: u128,
}

/// Online metrics of one phase. O(1) per event, no allocation per event (the series
/// grows by one entry per second; the QD vectors grow only on a new maximum QD).
#[derive(Clone, Debug)]
pub struct Recorder {
    start_ns: u64,
    /// Time of the last event (or of the last window boundary crossed).
    last_ns: u64,
    /// End of the open window.
    window_end_ns: u64,
    window: Window,
    series: Vec<SecondSample>,
    outstanding: u64,
    outstanding_by_op: [u64; 4],
    busy_ns: u64,
    busy_by_op_ns: [u64; 4],
    ios_by_op: [u64; 4],
    bytes_by_op: [u64; 4],
    errors: u64,
    service_by_op: [ServiceHistogram; 4],
    qd_time_ns: Vec<u64>,
    qd_submits: Vec<u64>,
    qd_max: u64,
}

impl Recorder {
    /// A recorder for a phase starting at `start_ns` on the target's clock.
    pub fn new(start_ns: u64) -> Recorder {
        let qd_time_ns = vec![0; QD_INITIAL];
        let qd_submits = vec![0; QD_INITIAL];
        Recorder {
            start_ns,
            last_ns: start_ns,
            window_end_ns: start_ns + NS_PER_S,
            window: Window::default(),
            series: Vec::new(),
            outstanding: 0,
            outstanding_by_op: [0; 4],
            busy_ns: 0,
            busy_by_op_ns: [0; 4],
            ios_by_op: [0; 4],
            bytes_by_op: [0; 4],
            errors: 0,
            service_by_op: std::array::from_fn(|_| ServiceHistogram::new()),
            qd_time_ns,
            qd_submits,
            qd_max: 0,
        }
    }

    /// Number of I/Os outstanding now.
    pub fn outstanding(&self) -> u64 {
        self.outstanding
    }

    /// Failed I/Os so far.
    pub fn errors(&self) -> u64 {
        self.errors
    }

    /// Finished 1-second windows so far (live progress, checkpoints).
    pub fn series(&self) -> &[SecondSample] {
        &self.series
    }

    /// An I/O of kind `op` was submitted at `now_ns`.
    #[inline]
    pub fn on_submit(&mut self, now_ns: u64, op: Op) {
        self.advance_to(now_ns);
        self.outstanding += 1;
        self.outstanding_by_op[op.index()] += 1;
        let qd = self.outstanding as usize;
        if qd >= self.qd_submits.len() {
            // Rare: a new maximum QD beyond the preallocated range (doubling).
            let len = (qd + 1).next_power_of_two();
            self.qd_submits.resize(len, 0);
            self.qd_time_ns.resize(len, 0);
        }
        self.qd_submits[qd] += 1;
        self.qd_max = self.qd_max.max(self.outstanding);
    }

    /// An I/O completed: `io.issue_ns` is its submission time and `io.complete_ns` its
    /// completion time (required). Failed I/Os (`ok == false`) count in `errors` and in
    /// busy time and QD, not in counts, bytes or service time.
    #[inline]
    pub fn on_complete(&mut self, io: &IoRecord, ok: bool) {
        let complete_ns = io
            .complete_ns
            .expect("on_complete needs the completion time");
        assert!(
            complete_ns >= io.issue_ns,
            "completion at {complete_ns} ns before its submission at {} ns",
            io.issue_ns
        );
        assert!(
            io.issue_ns >= self.start_ns,
            "I/O submitted at {} ns before the phase start {} ns",
            io.issue_ns,
            self.start_ns
        );
        let i = io.op.index();
        assert!(
            self.outstanding_by_op[i] > 0,
            "completion of a {} with none outstanding",
            io.op
        );
        self.advance_to(complete_ns);
        self.outstanding -= 1;
        self.outstanding_by_op[i] -= 1;
        let w = &mut self.window;
        if !ok {
            self.errors += 1;
            w.sample.errors += 1;
            return;
        }
        let service_ns = complete_ns - io.issue_ns;
        self.ios_by_op[i] += 1;
        self.bytes_by_op[i] += io.len_bytes;
        self.service_by_op[i].record(service_ns);
        match io.op {
            Op::Read => {
                w.sample.read_ios += 1;
                w.sample.read_bytes += io.len_bytes;
                w.read_latency_sum_ns += service_ns;
            }
            Op::Write => {
                w.sample.write_ios += 1;
                w.sample.write_bytes += io.len_bytes;
                w.write_latency_sum_ns += service_ns;
            }
            Op::Trim => {
                w.sample.trim_ios += 1;
                w.sample.trim_bytes += io.len_bytes;
            }
            Op::Flush => w.sample.flush_ios += 1,
        }
        if io.op.is_data() {
            w.latency_sum_ns += service_ns;
            w.latency_count += 1;
            w.latency_max_ns = w.latency_max_ns.max(service_ns);
        }
    }

    /// Move the clock to `now_ns`, closing every window that ends on the way.
    #[inline]
    fn advance_to(&mut self, now_ns: u64) {
        assert!(
            now_ns >= self.last_ns,
            "event at {now_ns} ns before the previous event at {} ns (events must be in time order)",
            self.last_ns
        );
        while now_ns >= self.window_end_ns {
            self.integrate_to(self.window_end_ns);
            self.close_window(NS_PER_S);
        }
        self.integrate_to(now_ns);
    }

    /// Attribute the time since `last_ns` to the current outstanding counts.
    #[inline]
    fn integrate_to(&mut self, t_ns: u64) {
        debug_assert!(t_ns >= self.last_ns && t_ns <= self.window_end_ns);
        let dt = t_ns - self.last_ns;
        if dt == 0 {
            return;
        }
        self.qd_time_ns[self.outstanding as usize] += dt;
        if self.outstanding > 0 {
            self.busy_ns += dt;
            self.window.sample.busy_ns += dt;
            self.window.qd_integral += u128::from(self.outstanding) * u128::from(dt);
            for (busy, &out) in self.busy_by_op_ns.iter_mut().zip(&self.outstanding_by_op) {
                if out > 0 {
                    *busy += dt;
                }
            }
        }
        self.last_ns = t_ns;
    }

    /// Push the open window (of length `window_ns`) to the series and open the next.
    fn close_window(&mut self, window_ns: u64) {
        let w = std::mem::take(&mut self.window);
        let mut s = w.sample;
        s.t_s = self.series.len() as u64;
        s.window_ns = window_ns;
        let mean_us = |sum_ns: u64, n: u64| {
            if n == 0 {
                0.0
            } else {
                sum_ns as f64 / n as f64 / 1_000.0
            }
        };
        s.latency_us_mean = mean_us(w.latency_sum_ns, w.latency_count);
        s.latency_us_max = w.latency_max_ns as f64 / 1_000.0;
        s.read_latency_us_mean = mean_us(w.read_latency_sum_ns, s.read_ios);
        s.write_latency_us_mean = mean_us(w.write_latency_sum_ns, s.write_ios);
        s.qd_mean = if window_ns == 0 {
            0.0
        } else {
            w.qd_integral as f64 / window_ns as f64
        };
        self.series.push(s);
        self.window_end_ns += NS_PER_S;
    }

    /// Move the clock to `t_ns` without an event (every event before it already fed),
    /// closing each window that ends on the way. Splitting time there changes no figure:
    /// a checkpoint at a second boundary leaves the run exactly as it was.
    pub fn close_to(&mut self, t_ns: u64) {
        self.advance_to(t_ns);
    }

    /// The phase's metrics as if it ended at `end_ns` (>= the last event); the
    /// recorder goes on. A checkpoint's partial result.
    pub fn snapshot(&self, end_ns: u64) -> PhaseMetrics {
        self.clone().finish(end_ns)
    }

    /// End the phase at `end_ns` (>= the last event) and compute the aggregates. The
    /// last window is included when it is shorter than 1 s but not empty in time.
    pub fn finish(mut self, end_ns: u64) -> PhaseMetrics {
        self.advance_to(end_ns);
        let window_start_ns = self.window_end_ns - NS_PER_S;
        if end_ns > window_start_ns {
            self.close_window(end_ns - window_start_ns);
        }
        let [r, w, t, f] = [Op::Read, Op::Write, Op::Trim, Op::Flush].map(Op::index);
        let mut data = self.service_by_op[r].clone();
        data.merge(&self.service_by_op[w]);
        let elapsed_ns = end_ns - self.start_ns;
        let total_ios: u64 = self.ios_by_op.iter().sum();
        let qd_len = self.qd_max as usize + 1;
        let time_by_qd_ns = self.qd_time_ns[..qd_len].to_vec();
        let submits_by_qd = self.qd_submits[..qd_len].to_vec();
        let weighted: u128 = time_by_qd_ns
            .iter()
            .enumerate()
            .map(|(q, &t)| q as u128 * u128::from(t))
            .sum();
        debug_assert_eq!(time_by_qd_ns[1..].iter().sum::<u64>(), self.busy_ns);
        let submits: u64 = submits_by_qd.iter().sum();
        let qd = QdStats {
            mean_over_busy: if self.busy_ns == 0 {
                0.0
            } else {
                weighted as f64 / self.busy_ns as f64
            },
            max: self.qd_max,
            submitted_at_qd1_pct: if submits == 0 {
                0.0
            } else {
                100.0 * submits_by_qd.get(1).copied().unwrap_or(0) as f64 / submits as f64
            },
            time_by_qd_ns,
            submits_by_qd,
        };
        PhaseMetrics {
            start_ns: self.start_ns,
            end_ns,
            elapsed_ns,
            read_ios: self.ios_by_op[r],
            write_ios: self.ios_by_op[w],
            trim_ios: self.ios_by_op[t],
            flush_ios: self.ios_by_op[f],
            read_bytes: self.bytes_by_op[r],
            write_bytes: self.bytes_by_op[w],
            trim_bytes: self.bytes_by_op[t],
            errors: self.errors,
            unfinished_ios: self.outstanding,
            busy_ns: self.busy_ns,
            busy_read_ns: self.busy_by_op_ns[r],
            busy_write_ns: self.busy_by_op_ns[w],
            busy_trim_ns: self.busy_by_op_ns[t],
            busy_flush_ns: self.busy_by_op_ns[f],
            data_rate_mb_per_s: data_rate_mb_per_s(
                self.bytes_by_op[r] + self.bytes_by_op[w],
                self.busy_ns,
            ),
            read_rate_mb_per_s: data_rate_mb_per_s(self.bytes_by_op[r], self.busy_by_op_ns[r]),
            write_rate_mb_per_s: data_rate_mb_per_s(self.bytes_by_op[w], self.busy_by_op_ns[w]),
            iops: if elapsed_ns == 0 {
                0.0
            } else {
                total_ios as f64 / (elapsed_ns as f64 / 1e9)
            },
            service: data.stats(),
            service_read: self.service_by_op[r].stats(),
            service_write: self.service_by_op[w].stats(),
            service_trim: self.service_by_op[t].stats(),
            service_flush: self.service_by_op[f].stats(),
            qd,
            series: self.series,
        }
    }
}
