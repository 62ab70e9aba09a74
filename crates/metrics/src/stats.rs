//! Result types: [`PhaseMetrics`], [`LatencyStats`], [`QdStats`], [`SecondSample`], and
//! the mergeable service-time accumulator [`ServiceHistogram`].
//!
//! Units are last in every name. Times inside the recorder are ns; service times in
//! results are µs (`f64`); data rates are MB/s with MB = 10^6 bytes.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Largest service time the histogram resolves (1 hour); longer ones are clamped into
/// the top bucket for percentiles (min, max, mean and std dev stay exact).
pub const HISTOGRAM_HIGH_NS: u64 = 3_600 * 1_000_000_000;
/// Significant decimal digits of the histogram: percentiles are within 0.1%.
pub const HISTOGRAM_SIGFIG: u8 = 3;

/// Mergeable service-time accumulator: an HDR histogram in ns (3 significant digits,
/// 1 ns .. 1 h, fixed size, ~0.3 MB) plus exact count, sum, sum of squares, min and max.
#[derive(Clone, Debug)]
pub struct ServiceHistogram {
    hist: Histogram<u64>,
    count: u64,
    sum_ns: u128,
    sum_sq_ns2: f64,
    min_ns: u64,
    max_ns: u64,
}

impl Default for ServiceHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl ServiceHistogram {
    pub fn new() -> Self {
        let mut hist = Histogram::new_with_bounds(1, HISTOGRAM_HIGH_NS, HISTOGRAM_SIGFIG)
            .expect("valid fixed histogram bounds");
        hist.auto(false);
        ServiceHistogram {
            hist,
            count: 0,
            sum_ns: 0,
            sum_sq_ns2: 0.0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }

    /// Record one service time. O(1), no allocation.
    #[inline]
    pub fn record(&mut self, service_ns: u64) {
        // 0 ns (a virtual target completing instantly) lands in the lowest bucket.
        self.hist.saturating_record(service_ns.max(1));
        self.count += 1;
        self.sum_ns += u128::from(service_ns);
        let v = service_ns as f64;
        self.sum_sq_ns2 += v * v;
        self.min_ns = self.min_ns.min(service_ns);
        self.max_ns = self.max_ns.max(service_ns);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Add every sample of `other` (exact: both use the same fixed bucket layout).
    pub fn merge(&mut self, other: &ServiceHistogram) {
        self.hist
            .add(&other.hist)
            .expect("same fixed histogram bounds");
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.sum_sq_ns2 += other.sum_sq_ns2;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    /// Service time (ns) at quantile `q` in [0, 1], nearest rank, clamped to the
    /// exact min and max. 0 when empty.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        assert!((0.0..=1.0).contains(&q), "quantile {q} outside [0, 1]");
        if self.count == 0 {
            return 0;
        }
        self.hist
            .value_at_quantile(q)
            .clamp(self.min_ns, self.max_ns)
    }

    /// The statistics, with the histogram in serializable form.
    pub fn stats(&self) -> LatencyStats {
        if self.count == 0 {
            return LatencyStats {
                histogram: HistogramData {
                    sigfig: HISTOGRAM_SIGFIG,
                    high_ns: HISTOGRAM_HIGH_NS,
                    ..HistogramData::default()
                },
                ..LatencyStats::default()
            };
        }
        let n = self.count as f64;
        let mean_ns = self.sum_ns as f64 / n;
        // Population variance; clamp the tiny negative values rounding can give.
        let var_ns2 = (self.sum_sq_ns2 / n - mean_ns * mean_ns).max(0.0);
        let us = |ns: u64| ns as f64 / 1_000.0;
        LatencyStats {
            count: self.count,
            mean_us: mean_ns / 1_000.0,
            stddev_us: var_ns2.sqrt() / 1_000.0,
            min_us: us(self.min_ns),
            max_us: us(self.max_ns),
            p50_us: us(self.quantile_ns(0.5)),
            p90_us: us(self.quantile_ns(0.9)),
            p99_us: us(self.quantile_ns(0.99)),
            p99_9_us: us(self.quantile_ns(0.999)),
            p99_99_us: us(self.quantile_ns(0.9999)),
            histogram: HistogramData {
                sigfig: HISTOGRAM_SIGFIG,
                high_ns: HISTOGRAM_HIGH_NS,
                sum_ns: u64::try_from(self.sum_ns).unwrap_or(u64::MAX),
                sum_sq_ns2: self.sum_sq_ns2,
                min_ns: self.min_ns,
                max_ns: self.max_ns,
                buckets: self
                    .hist
                    .iter_recorded()
                    .map(|v| (v.value_iterated_to(), v.count_at_value()))
                    .collect(),
            },
        }
    }

    /// Rebuild the accumulator from serialized statistics (for merging phases or runs).
    pub fn from_data(h: &HistogramData) -> Result<ServiceHistogram, HistogramError> {
        if h.buckets.is_empty() {
            return Ok(ServiceHistogram::new());
        }
        if h.sigfig != HISTOGRAM_SIGFIG || h.high_ns != HISTOGRAM_HIGH_NS {
            return Err(HistogramError::Layout {
                sigfig: h.sigfig,
                high_ns: h.high_ns,
            });
        }
        let mut s = ServiceHistogram::new();
        for &(value_ns, count) in &h.buckets {
            s.hist
                .record_n(value_ns.max(1), count)
                .map_err(|e| HistogramError::Bucket {
                    value_ns,
                    detail: format!("{e:?}"),
                })?;
            s.count += count;
        }
        s.sum_ns = u128::from(h.sum_ns);
        s.sum_sq_ns2 = h.sum_sq_ns2;
        if s.count > 0 {
            s.min_ns = h.min_ns;
            s.max_ns = h.max_ns;
        }
        Ok(s)
    }
}

/// A serialized histogram that does not rebuild: another build's layout, a bucket out
/// of its bounds, or an encoding that does not decode. (hdrhistogram's errors have no
/// `Display`: their `Debug` text is kept as the detail.)
#[derive(Debug, Clone, PartialEq)]
pub enum HistogramError {
    Layout { sigfig: u8, high_ns: u64 },
    Bounds(String),
    Bucket { value_ns: u64, detail: String },
    Encoding(String),
    NotBase64(base64::DecodeError),
    NotV2(String),
}

impl std::fmt::Display for HistogramError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HistogramError::Layout { sigfig, high_ns } => write!(
                f,
                "histogram layout sigfig={sigfig} high_ns={high_ns} differs from this build's \
                 sigfig={HISTOGRAM_SIGFIG} high_ns={HISTOGRAM_HIGH_NS}"
            ),
            HistogramError::Bounds(d) => write!(f, "histogram bounds: {d}"),
            HistogramError::Bucket { value_ns, detail } => {
                write!(f, "histogram bucket {value_ns} ns: {detail}")
            }
            HistogramError::Encoding(d) => write!(f, "histogram encoding: {d}"),
            // Shown here, so not returned as the source as well.
            HistogramError::NotBase64(e) => write!(f, "histogram: not base64: {e}"),
            HistogramError::NotV2(d) => {
                write!(f, "histogram: not an HdrHistogram V2 encoding: {d}")
            }
        }
    }
}

impl std::error::Error for HistogramError {}

/// The serialized histogram: enough to merge phases or runs exactly.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HistogramData {
    pub sigfig: u8,
    pub high_ns: u64,
    pub sum_ns: u64,
    pub sum_sq_ns2: f64,
    pub min_ns: u64,
    pub max_ns: u64,
    /// `(value_ns, count)` per non-empty bucket, ascending; `value_ns` is the highest
    /// value equivalent to the bucket. Serialized as `hdr`: the HdrHistogram V2
    /// compressed encoding in base64 (the `HISTF...` strings HdrHistogram's libraries
    /// in Java, Python, Go and C read), several times smaller than a `[value, count]`
    /// list (docs/benchmarks.md); `buckets` as that list is still read (issue 22).
    #[serde(rename = "hdr", alias = "buckets", with = "hdr_codec")]
    pub buckets: Vec<(u64, u64)>,
}

/// `HistogramData::buckets` as HdrHistogram's V2 deflate encoding in base64, read back
/// from that or from the `[[value_ns, count], ...]` list of earlier results.
mod hdr_codec {
    use super::{HistogramError, HISTOGRAM_HIGH_NS, HISTOGRAM_SIGFIG};
    use base64::Engine;
    use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
    use hdrhistogram::Histogram;
    use serde::de::Error as _;
    use serde::Deserialize;

    const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

    /// An empty histogram is encoded too (a valid V2 encoding of no values): `""`
    /// is no encoding HdrHistogram's libraries decode (issue 34).
    pub fn encode(buckets: &[(u64, u64)]) -> Result<String, HistogramError> {
        let high = buckets.last().map_or(0, |b| b.0).max(HISTOGRAM_HIGH_NS);
        let mut h = Histogram::<u64>::new_with_bounds(1, high, HISTOGRAM_SIGFIG)
            .map_err(|e| HistogramError::Bounds(format!("{e:?}")))?;
        for &(value_ns, count) in buckets {
            h.record_n(value_ns.max(1), count)
                .map_err(|e| HistogramError::Bucket {
                    value_ns,
                    detail: format!("{e:?}"),
                })?;
        }
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&h, &mut bytes)
            .map_err(|e| HistogramError::Encoding(format!("{e:?}")))?;
        Ok(B64.encode(bytes))
    }

    pub fn decode(text: &str) -> Result<Vec<(u64, u64)>, HistogramError> {
        // Results written before issue 34 give an empty histogram as "".
        if text.is_empty() {
            return Ok(Vec::new());
        }
        let bytes = B64.decode(text).map_err(HistogramError::NotBase64)?;
        let h: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| HistogramError::NotV2(format!("{e:?}")))?;
        Ok(h.iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect())
    }

    pub fn serialize<S: serde::Serializer>(b: &[(u64, u64)], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&encode(b).map_err(serde::ser::Error::custom)?)
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Form {
        Hdr(String),
        List(Vec<(u64, u64)>),
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<(u64, u64)>, D::Error> {
        match Form::deserialize(d)? {
            Form::Hdr(t) => decode(&t).map_err(D::Error::custom),
            Form::List(l) => Ok(l),
        }
    }
}

/// Service-time statistics of one population (µs). All zero when `count == 0`
/// (the histogram then has its layout and no buckets).
/// `stddev_us` is the population standard deviation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    pub count: u64,
    pub mean_us: f64,
    pub stddev_us: f64,
    pub min_us: f64,
    pub max_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
    pub p99_99_us: f64,
    pub histogram: HistogramData,
}

impl LatencyStats {
    /// Statistics of the union of two populations (exact counts, mean, std dev,
    /// min, max; percentiles from the merged histogram).
    pub fn merged(&self, other: &LatencyStats) -> Result<LatencyStats, HistogramError> {
        if self.count == 0 {
            return Ok(other.clone());
        }
        if other.count == 0 {
            return Ok(self.clone());
        }
        let mut a = ServiceHistogram::from_data(&self.histogram)?;
        a.merge(&ServiceHistogram::from_data(&other.histogram)?);
        Ok(a.stats())
    }
}

/// Why the jobs of a phase did not merge ([`PhaseMetrics::merge_jobs`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MergeError {
    #[error("a phase of no job")]
    NoJobs,
    /// A job's service-time histogram did not read back.
    #[error("a job's service-time histogram: {0}")]
    Histogram(HistogramError),
}

/// Queue-depth distribution of one phase.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QdStats {
    /// Time-weighted average number of I/Os outstanding over busy time.
    pub mean_over_busy: f64,
    /// Largest number of I/Os outstanding at once.
    pub max: u64,
    /// `time_by_qd_ns[q]` = time with exactly `q` I/Os outstanding; `[0]` is idle time.
    #[serde(alias = "time_ns_by_qd")]
    pub time_by_qd_ns: Vec<u64>,
    /// `submits_by_qd[q]` = submissions that made the count outstanding `q` (itself
    /// included): `[1]` counts I/Os submitted when none other was outstanding. `[0]` is 0.
    pub submits_by_qd: Vec<u64>,
    /// Percent of submissions made at QD1 (METHODOLOGY "% at QD1").
    pub submitted_at_qd1_pct: f64,
}

impl QdStats {
    /// Add another population's distributions (a later segment of the phase, or
    /// another job's): times and submissions at each depth add, the averages follow.
    fn add(&mut self, other: &QdStats) {
        let add = |a: &mut Vec<u64>, b: &[u64]| {
            if a.len() < b.len() {
                a.resize(b.len(), 0);
            }
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        };
        add(&mut self.time_by_qd_ns, &other.time_by_qd_ns);
        add(&mut self.submits_by_qd, &other.submits_by_qd);
        self.max = self.max.max(other.max);
        let busy: u64 = self.time_by_qd_ns.iter().skip(1).sum();
        let weighted: u128 = self
            .time_by_qd_ns
            .iter()
            .enumerate()
            .map(|(q, &t)| q as u128 * u128::from(t))
            .sum();
        self.mean_over_busy = if busy == 0 {
            0.0
        } else {
            weighted as f64 / busy as f64
        };
        let submits: u64 = self.submits_by_qd.iter().sum();
        self.submitted_at_qd1_pct = if submits == 0 {
            0.0
        } else {
            100.0 * self.submits_by_qd.get(1).copied().unwrap_or(0) as f64 / submits as f64
        };
    }
}

/// One window of the per-second series: `[t_s, t_s + 1)` seconds since the phase
/// start, by completion time. Windows with no completions are present, as zeros.
/// Every window is 1 s long except possibly the phase's last (`window_ns`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SecondSample {
    /// Window start, whole seconds since the phase start.
    pub t_s: u64,
    /// Window length (1e9 except possibly the last window of a phase).
    pub window_ns: u64,
    /// Successful completions per op in the window.
    pub read_ios: u64,
    pub write_ios: u64,
    pub trim_ios: u64,
    pub flush_ios: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub trim_bytes: u64,
    /// Failed completions in the window (any op).
    pub errors: u64,
    /// Mean and max service time of reads and writes completed in the window (0 if none).
    pub latency_us_mean: f64,
    pub latency_us_max: f64,
    pub read_latency_us_mean: f64,
    pub write_latency_us_mean: f64,
    /// Time in the window with at least one I/O outstanding.
    pub busy_ns: u64,
    /// Time-weighted average number outstanding over the whole window.
    pub qd_mean: f64,
}

impl SecondSample {
    /// The same window of several jobs that ran at once (one per job, the same `t_s`),
    /// as one: counts, bytes and errors add; means are weighted by the I/Os behind
    /// them; `qd_mean` is the mean number in flight over all jobs (their integrals
    /// add); `busy_ns` is the busiest job's (the time any job was busy is at least
    /// that: jobs' busy periods are not kept, only their lengths); `window_ns` is the
    /// longest (a job that ended inside the window has a short one). One sample is
    /// returned as it is.
    pub fn merge_jobs(samples: &[SecondSample]) -> SecondSample {
        assert!(!samples.is_empty(), "a window of no job");
        if let [one] = samples {
            return *one;
        }
        let t_s = samples[0].t_s;
        assert!(
            samples.iter().all(|s| s.t_s == t_s),
            "merging different windows"
        );
        let mut m = SecondSample {
            t_s,
            window_ns: samples.iter().map(|s| s.window_ns).max().unwrap_or(0),
            ..SecondSample::default()
        };
        let (mut lat, mut rlat, mut wlat, mut qd_integral) = (0.0, 0.0, 0.0, 0.0);
        for s in samples {
            m.read_ios += s.read_ios;
            m.write_ios += s.write_ios;
            m.trim_ios += s.trim_ios;
            m.flush_ios += s.flush_ios;
            m.read_bytes += s.read_bytes;
            m.write_bytes += s.write_bytes;
            m.trim_bytes += s.trim_bytes;
            m.errors += s.errors;
            m.busy_ns = m.busy_ns.max(s.busy_ns);
            m.latency_us_max = m.latency_us_max.max(s.latency_us_max);
            lat += s.latency_us_mean * (s.read_ios + s.write_ios) as f64;
            rlat += s.read_latency_us_mean * s.read_ios as f64;
            wlat += s.write_latency_us_mean * s.write_ios as f64;
            qd_integral += s.qd_mean * s.window_ns as f64;
        }
        let mean = |sum: f64, n: u64| if n == 0 { 0.0 } else { sum / n as f64 };
        m.latency_us_mean = mean(lat, m.read_ios + m.write_ios);
        m.read_latency_us_mean = mean(rlat, m.read_ios);
        m.write_latency_us_mean = mean(wlat, m.write_ios);
        m.qd_mean = if m.window_ns == 0 {
            0.0
        } else {
            qd_integral / m.window_ns as f64
        };
        m
    }

    fn window_s(&self) -> f64 {
        self.window_ns as f64 / 1e9
    }

    /// Completions (reads + writes + trims + flushes) per second.
    pub fn iops(&self) -> f64 {
        if self.window_ns == 0 {
            return 0.0;
        }
        (self.read_ios + self.write_ios + self.trim_ios + self.flush_ios) as f64 / self.window_s()
    }

    pub fn read_iops(&self) -> f64 {
        if self.window_ns == 0 {
            return 0.0;
        }
        self.read_ios as f64 / self.window_s()
    }

    pub fn write_iops(&self) -> f64 {
        if self.window_ns == 0 {
            return 0.0;
        }
        self.write_ios as f64 / self.window_s()
    }

    /// (read + write bytes) per second in MB/s (10^6).
    pub fn mb_per_s(&self) -> f64 {
        self.read_mb_per_s() + self.write_mb_per_s()
    }

    pub fn read_mb_per_s(&self) -> f64 {
        if self.window_ns == 0 {
            return 0.0;
        }
        self.read_bytes as f64 / 1e6 / self.window_s()
    }

    pub fn write_mb_per_s(&self) -> f64 {
        if self.window_ns == 0 {
            return 0.0;
        }
        self.write_bytes as f64 / 1e6 / self.window_s()
    }
}

/// The aggregates of one phase (METHODOLOGY section 2).
///
/// Counts and bytes are of successful completions; failed ones count in `errors` only
/// (they still count in busy time and queue depth: they were outstanding).
/// Busy time counts every op; per-op busy time counts only that op's I/Os.
/// The per-second series is not part of the JSON: storbench-report writes it to
/// `series.parquet` and reattaches it when reading a result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseMetrics {
    /// Phase start and end on the target's clock.
    pub start_ns: u64,
    pub end_ns: u64,
    pub elapsed_ns: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub trim_ios: u64,
    pub flush_ios: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub trim_bytes: u64,
    /// Completions that reported an error (any op).
    pub errors: u64,
    /// I/Os still outstanding when the phase ended (interrupted runs); their time
    /// up to `end_ns` counts as busy.
    pub unfinished_ios: u64,
    /// Time with at least one I/O (of any op) outstanding.
    pub busy_ns: u64,
    pub busy_read_ns: u64,
    pub busy_write_ns: u64,
    pub busy_trim_ns: u64,
    pub busy_flush_ns: u64,
    /// (read + write bytes) / busy time, MB/s (10^6).
    pub data_rate_mb_per_s: f64,
    /// Read bytes / read busy time.
    pub read_rate_mb_per_s: f64,
    /// Write bytes / write busy time.
    pub write_rate_mb_per_s: f64,
    /// All successful completions / elapsed time.
    pub iops: f64,
    /// Service time of reads and writes together.
    pub service: LatencyStats,
    pub service_read: LatencyStats,
    pub service_write: LatencyStats,
    pub service_trim: LatencyStats,
    pub service_flush: LatencyStats,
    pub qd: QdStats,
    /// Per-second series (not in JSON; see the type's doc).
    #[serde(skip)]
    pub series: Vec<SecondSample>,
}

impl PhaseMetrics {
    /// Total IOPS of each full 1-second window (the last window is left out when it is
    /// shorter than 1 s), for consistency scores and steady-state rounds.
    pub fn iops_per_s(&self) -> Vec<f64> {
        self.series
            .iter()
            .filter(|s| s.window_ns == crate::NS_PER_S)
            .map(SecondSample::iops)
            .collect()
    }
}

impl PhaseMetrics {
    /// One phase from several jobs that ran it at once on one clock from one start
    /// (`--jobs`): counts, bytes, errors and I/Os left in flight add; the service-time
    /// histograms merge exactly (percentiles of the union, never averaged); the phase
    /// ends when its last job does; IOPS and data rates follow from the sums. Busy
    /// times are the busiest job's, a lower bound of the time any job was busy (equal
    /// to it when the jobs keep I/O in flight over the same time, as generators do).
    /// The queue-depth distribution is per job, added over the jobs (as fio reports
    /// IO depths with numjobs): `time_by_qd_ns[q]` is job-time spent with `q` of that
    /// job's I/Os in flight. The per-second series is merged window by window
    /// ([`SecondSample::merge_jobs`]). One part is returned as it is.
    pub fn merge_jobs(parts: &[PhaseMetrics]) -> Result<PhaseMetrics, MergeError> {
        let Some((first, rest)) = parts.split_first() else {
            return Err(MergeError::NoJobs);
        };
        let mut m = first.clone();
        if rest.is_empty() {
            return Ok(m);
        }
        for p in rest {
            for (a, b) in [
                (&mut m.service, &p.service),
                (&mut m.service_read, &p.service_read),
                (&mut m.service_write, &p.service_write),
                (&mut m.service_trim, &p.service_trim),
                (&mut m.service_flush, &p.service_flush),
            ] {
                *a = a.merged(b).map_err(MergeError::Histogram)?;
            }
            m.start_ns = m.start_ns.min(p.start_ns);
            m.end_ns = m.end_ns.max(p.end_ns);
            for (a, b) in [
                (&mut m.read_ios, p.read_ios),
                (&mut m.write_ios, p.write_ios),
                (&mut m.trim_ios, p.trim_ios),
                (&mut m.flush_ios, p.flush_ios),
                (&mut m.read_bytes, p.read_bytes),
                (&mut m.write_bytes, p.write_bytes),
                (&mut m.trim_bytes, p.trim_bytes),
                (&mut m.errors, p.errors),
                (&mut m.unfinished_ios, p.unfinished_ios),
            ] {
                *a += b;
            }
            for (a, b) in [
                (&mut m.busy_ns, p.busy_ns),
                (&mut m.busy_read_ns, p.busy_read_ns),
                (&mut m.busy_write_ns, p.busy_write_ns),
                (&mut m.busy_trim_ns, p.busy_trim_ns),
                (&mut m.busy_flush_ns, p.busy_flush_ns),
            ] {
                *a = (*a).max(b);
            }
            m.qd.add(&p.qd);
        }
        m.elapsed_ns = m.end_ns - m.start_ns;
        m.data_rate_mb_per_s =
            crate::calc::data_rate_mb_per_s(m.read_bytes + m.write_bytes, m.busy_ns);
        m.read_rate_mb_per_s = crate::calc::data_rate_mb_per_s(m.read_bytes, m.busy_read_ns);
        m.write_rate_mb_per_s = crate::calc::data_rate_mb_per_s(m.write_bytes, m.busy_write_ns);
        let total_ios = m.read_ios + m.write_ios + m.trim_ios + m.flush_ios;
        m.iops = if m.elapsed_ns == 0 {
            0.0
        } else {
            total_ios as f64 / (m.elapsed_ns as f64 / 1e9)
        };
        let windows = parts.iter().map(|p| p.series.len()).max().unwrap_or(0);
        let mut at = Vec::with_capacity(parts.len());
        m.series = (0..windows)
            .map(|t| {
                at.clear();
                at.extend(parts.iter().filter_map(|p| p.series.get(t).copied()));
                SecondSample::merge_jobs(&at)
            })
            .collect();
        Ok(m)
    }

    /// Append a later part of the same phase (a phase resumed after an interruption,
    /// possibly on a restarted clock): counts, bytes, busy times and QD time add;
    /// service-time statistics merge exactly; rates, IOPS and averages are recomputed;
    /// the later series follows this one, renumbered (a short last window of this part
    /// stays in place, marked by its `window_ns`). `end_ns` becomes
    /// `start_ns + elapsed_ns` of the whole.
    pub fn append(&mut self, later: &PhaseMetrics) -> Result<(), HistogramError> {
        let merge = |a: &LatencyStats, b: &LatencyStats| a.merged(b);
        self.service = merge(&self.service, &later.service)?;
        self.service_read = merge(&self.service_read, &later.service_read)?;
        self.service_write = merge(&self.service_write, &later.service_write)?;
        self.service_trim = merge(&self.service_trim, &later.service_trim)?;
        self.service_flush = merge(&self.service_flush, &later.service_flush)?;
        self.elapsed_ns += later.elapsed_ns;
        self.end_ns = self.start_ns + self.elapsed_ns;
        for (a, b) in [
            (&mut self.read_ios, later.read_ios),
            (&mut self.write_ios, later.write_ios),
            (&mut self.trim_ios, later.trim_ios),
            (&mut self.flush_ios, later.flush_ios),
            (&mut self.read_bytes, later.read_bytes),
            (&mut self.write_bytes, later.write_bytes),
            (&mut self.trim_bytes, later.trim_bytes),
            (&mut self.errors, later.errors),
            (&mut self.unfinished_ios, later.unfinished_ios),
            (&mut self.busy_ns, later.busy_ns),
            (&mut self.busy_read_ns, later.busy_read_ns),
            (&mut self.busy_write_ns, later.busy_write_ns),
            (&mut self.busy_trim_ns, later.busy_trim_ns),
            (&mut self.busy_flush_ns, later.busy_flush_ns),
        ] {
            *a += b;
        }
        self.data_rate_mb_per_s =
            crate::calc::data_rate_mb_per_s(self.read_bytes + self.write_bytes, self.busy_ns);
        self.read_rate_mb_per_s =
            crate::calc::data_rate_mb_per_s(self.read_bytes, self.busy_read_ns);
        self.write_rate_mb_per_s =
            crate::calc::data_rate_mb_per_s(self.write_bytes, self.busy_write_ns);
        let total_ios = self.read_ios + self.write_ios + self.trim_ios + self.flush_ios;
        self.iops = if self.elapsed_ns == 0 {
            0.0
        } else {
            total_ios as f64 / (self.elapsed_ns as f64 / 1e9)
        };
        self.qd.add(&later.qd);
        let offset = self.series.len() as u64;
        self.series
            .extend(later.series.iter().map(|s| SecondSample {
                t_s: s.t_s + offset,
                ..*s
            }));
        Ok(())
    }
}

#[cfg(test)]
mod hdr_codec_tests {
    use super::*;

    fn sample() -> ServiceHistogram {
        let mut h = ServiceHistogram::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // 10 us .. 10 ms, a latency-like spread.
            h.record(10_000 + x % 10_000_000);
        }
        h.record(HISTOGRAM_HIGH_NS * 2); // clamped into the top bucket
        h
    }

    /// Issue 22: a 4-second run's result.json was 114 KB, nearly all of it two
    /// `[value, count]` bucket lists. The HdrHistogram V2 encoding gives the same
    /// buckets back exactly in a fraction of the space.
    #[test]
    fn result_histograms_are_hdr_v2_text_that_reads_back_exactly() {
        let stats = sample().stats();
        let json = serde_json::to_string(&stats).unwrap();
        let list = serde_json::to_string(&stats.histogram.buckets).unwrap();
        assert!(
            json.contains("\"hdr\":\"HISTF") || json.contains("\"hdr\":\"HIST"),
            "{}",
            &json[..200]
        );
        assert!(!json.contains("\"buckets\""));
        assert!(
            json.len() * 4 < list.len(),
            "{} bytes against a list of {}",
            json.len(),
            list.len()
        );
        let back: LatencyStats = serde_json::from_str(&json).unwrap();
        assert_eq!(back, stats);
        let merged = back.merged(&stats).unwrap();
        assert_eq!(merged.count, 2 * stats.count);
        assert_eq!(merged.p99_us, stats.p99_us);
    }

    #[test]
    fn histograms_of_earlier_results_as_bucket_lists_still_read() {
        let stats = sample().stats();
        let old = serde_json::to_value(&stats).unwrap();
        let mut old = old.as_object().unwrap().clone();
        let mut h = old["histogram"].as_object().unwrap().clone();
        h.remove("hdr");
        h.insert(
            "buckets".into(),
            serde_json::to_value(&stats.histogram.buckets).unwrap(),
        );
        old.insert("histogram".into(), h.into());
        let back: LatencyStats = serde_json::from_value(old.into()).unwrap();
        assert_eq!(back, stats);
    }

    /// Issue 34: an empty histogram was written as `""`, which HdrHistogram's
    /// libraries cannot decode; it is a valid V2 encoding of no values, which they
    /// (and this reader) decode to an empty histogram. `""` of older results still reads.
    #[test]
    fn empty_histogram_is_a_valid_empty_encoding_and_bad_text_is_an_error() {
        use base64::Engine;
        use hdrhistogram::serialization::Deserializer;
        let stats = ServiceHistogram::new().stats();
        let json = serde_json::to_string(&stats.histogram).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let text = v["hdr"].as_str().unwrap();
        assert!(text.starts_with("HISTF"), "{json}");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .unwrap();
        let h: hdrhistogram::Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .unwrap();
        assert_eq!(h.len(), 0);
        assert_eq!(
            serde_json::from_str::<HistogramData>(&json).unwrap(),
            stats.histogram
        );
        let old = json.replace(text, "");
        assert_eq!(
            serde_json::from_str::<HistogramData>(&old).unwrap(),
            stats.histogram
        );
        let bad = json.replace(text, "not base64!");
        let e = serde_json::from_str::<HistogramData>(&bad).unwrap_err();
        assert!(e.to_string().contains("base64"), "{e}");
    }
}
