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
    pub fn from_data(h: &HistogramData) -> Result<ServiceHistogram, String> {
        if h.buckets.is_empty() {
            return Ok(ServiceHistogram::new());
        }
        if h.sigfig != HISTOGRAM_SIGFIG || h.high_ns != HISTOGRAM_HIGH_NS {
            return Err(format!(
                "histogram layout sigfig={} high_ns={} differs from this build's sigfig={} high_ns={}",
                h.sigfig, h.high_ns, HISTOGRAM_SIGFIG, HISTOGRAM_HIGH_NS
            ));
        }
        let mut s = ServiceHistogram::new();
        for &(value_ns, count) in &h.buckets {
            s.hist
                .record_n(value_ns.max(1), count)
                .map_err(|e| format!("histogram bucket {value_ns} ns: {e:?}"))?;
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
    use super::{HISTOGRAM_HIGH_NS, HISTOGRAM_SIGFIG};
    use base64::Engine;
    use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
    use hdrhistogram::Histogram;
    use serde::de::Error as _;
    use serde::Deserialize;

    const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

    /// An empty histogram is encoded too (a valid V2 encoding of no values): `""`
    /// is no encoding HdrHistogram's libraries decode (issue 34).
    pub fn encode(buckets: &[(u64, u64)]) -> Result<String, String> {
        let high = buckets.last().map_or(0, |b| b.0).max(HISTOGRAM_HIGH_NS);
        let mut h = Histogram::<u64>::new_with_bounds(1, high, HISTOGRAM_SIGFIG)
            .map_err(|e| format!("histogram bounds: {e:?}"))?;
        for &(value_ns, count) in buckets {
            h.record_n(value_ns.max(1), count)
                .map_err(|e| format!("histogram bucket {value_ns} ns: {e:?}"))?;
        }
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&h, &mut bytes)
            .map_err(|e| format!("histogram encoding: {e:?}"))?;
        Ok(B64.encode(bytes))
    }

    pub fn decode(text: &str) -> Result<Vec<(u64, u64)>, String> {
        // Results written before issue 34 give an empty histogram as "".
        if text.is_empty() {
            return Ok(Vec::new());
        }
        let bytes = B64
            .decode(text)
            .map_err(|e| format!("histogram: not base64: {e}"))?;
        let h: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| format!("histogram: not an HdrHistogram V2 encoding: {e:?}"))?;
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
    pub fn merged(&self, other: &LatencyStats) -> Result<LatencyStats, String> {
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
    /// Append a later part of the same phase (a phase resumed after an interruption,
    /// possibly on a restarted clock): counts, bytes, busy times and QD time add;
    /// service-time statistics merge exactly; rates, IOPS and averages are recomputed;
    /// the later series follows this one, renumbered (a short last window of this part
    /// stays in place, marked by its `window_ns`). `end_ns` becomes
    /// `start_ns + elapsed_ns` of the whole.
    pub fn append(&mut self, later: &PhaseMetrics) -> Result<(), String> {
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
        let add = |a: &mut Vec<u64>, b: &[u64]| {
            if a.len() < b.len() {
                a.resize(b.len(), 0);
            }
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        };
        add(&mut self.qd.time_by_qd_ns, &later.qd.time_by_qd_ns);
        add(&mut self.qd.submits_by_qd, &later.qd.submits_by_qd);
        self.qd.max = self.qd.max.max(later.qd.max);
        let busy: u64 = self.qd.time_by_qd_ns.iter().skip(1).sum();
        let weighted: u128 = self
            .qd
            .time_by_qd_ns
            .iter()
            .enumerate()
            .map(|(q, &t)| q as u128 * u128::from(t))
            .sum();
        self.qd.mean_over_busy = if busy == 0 {
            0.0
        } else {
            weighted as f64 / busy as f64
        };
        let submits: u64 = self.qd.submits_by_qd.iter().sum();
        self.qd.submitted_at_qd1_pct = if submits == 0 {
            0.0
        } else {
            100.0 * self.qd.submits_by_qd.get(1).copied().unwrap_or(0) as f64 / submits as f64
        };
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
