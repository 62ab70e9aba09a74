//! The generator: scenario streams stitched into episodes (queued bursts and runs of
//! QD1 I/Os), a deterministic reference drive that gives each I/O its completion
//! time, and small controllers that steer the running totals towards the profile's
//! targets.
//!
//! Every controller works the same way: the active stream proposes (its own read
//! fraction, size mix, sequentiality, burstiness), and the proposal stands while the
//! running total is within a band of its target; outside the band the controller
//! picks what closes the gap. The band is wide in the middle of the trace (streams
//! keep their character, windows differ) and narrows to a few I/Os at the end, so the
//! totals land on their targets at any scale. The queue-depth figures are measured
//! exactly as `characterize` measures them (from issue and completion times), and the
//! depth of each burst is chosen to bring the time-weighted average to its target.

use super::profile::{size_bucket, Profile, ProfileError, StreamSpec, BUCKET_BYTES, OTHER};
use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use storbench_trace::{IoRecord, Op, StreamId, TraceError, TraceMeta, TraceWriter};

/// Where generated records go: a trace file, or anything that counts them.
pub trait Sink {
    fn intern_stream(&mut self, name: &str) -> StreamId;
    fn write(&mut self, rec: &IoRecord) -> Result<(), TraceError>;
}

impl Sink for TraceWriter {
    fn intern_stream(&mut self, name: &str) -> StreamId {
        TraceWriter::intern_stream(self, name)
    }
    fn write(&mut self, rec: &IoRecord) -> Result<(), TraceError> {
        TraceWriter::write(self, rec)
    }
}

/// 256 GiB, the default `--capacity`.
pub const DEFAULT_CAPACITY_BYTES: u64 = 256 << 30;
/// Deepest queue a burst reaches (SATA NCQ's 32).
pub const MAX_QD: usize = 32;

/// How to synthesize a profile.
#[derive(Clone, Debug, PartialEq)]
pub struct SynthOptions {
    /// Multiplies counts, bytes and duration; ratios stay. In (0, 100].
    pub scale: f64,
    /// Capacity of the drive the footprint is mapped onto.
    pub capacity_bytes: u64,
    pub seed: u64,
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            scale: 1.0,
            capacity_bytes: DEFAULT_CAPACITY_BYTES,
            seed: 1,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error("{0}")]
    Options(String),
    /// The footprint (`SynthOptions::capacity_bytes`) leaves a stream too little room;
    /// the caller knows which of its options sets the footprint, so it gives the hint.
    #[error("profile {profile}: stream `{stream}` gets {bytes} bytes of the footprint, too little for its I/Os")]
    FootprintTooSmall {
        profile: String,
        stream: String,
        bytes: u64,
    },
    #[error(transparent)]
    Trace(#[from] TraceError),
}

/// What was generated, measured as `characterize` measures it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SynthSummary {
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// I/Os per size bucket (4K, 8K, 16K, 32K, 64K, 128K, other).
    pub size_counts: [u64; 7],
    pub sequential: u64,
    /// I/Os issued when no other I/O was outstanding.
    pub qd1_ios: u64,
    pub busy_ns: u64,
    /// Sum of service times (the integral of queue depth over time).
    pub service_ns_sum: u128,
    /// Completion of the last I/O.
    pub end_ns: u64,
    pub footprint_bytes: u64,
}

impl SynthSummary {
    pub fn total(&self) -> u64 {
        self.reads + self.writes
    }
    pub fn avg_qd(&self) -> f64 {
        if self.busy_ns == 0 {
            0.0
        } else {
            self.service_ns_sum as f64 / self.busy_ns as f64
        }
    }
    pub fn sequential_fraction(&self) -> f64 {
        self.sequential as f64 / self.total().max(1) as f64
    }
    pub fn qd1_fraction(&self) -> f64 {
        self.qd1_ios as f64 / self.total().max(1) as f64
    }
    pub fn size_fraction(&self, bucket: usize) -> f64 {
        self.size_counts[bucket] as f64 / self.total().max(1) as f64
    }
}

/// The trace metadata of a synthesized trace.
pub fn trace_meta(profile: &Profile, opts: &SynthOptions) -> TraceMeta {
    let mut meta = TraceMeta {
        source_format: Some(format!("synth:{}", profile.name)),
        source_file: None,
        capacity_bytes: Some(opts.capacity_bytes),
        logical_block_bytes: Some(512),
        tool_version: Some(format!("storbench {}", env!("CARGO_PKG_VERSION"))),
        ..TraceMeta::default()
    };
    meta.extra
        .insert("synth.profile".into(), profile.name.clone());
    meta.extra
        .insert("synth.scale".into(), opts.scale.to_string());
    meta.extra
        .insert("synth.seed".into(), opts.seed.to_string());
    meta.extra.insert(
        "synth.capacity_bytes".into(),
        opts.capacity_bytes.to_string(),
    );
    meta.extra.insert(
        "synth.footprint_bytes".into(),
        footprint_bytes(profile, opts).to_string(),
    );
    meta
}

fn footprint_bytes(profile: &Profile, opts: &SynthOptions) -> u64 {
    let f = (opts.capacity_bytes as f64 * profile.footprint) as u64;
    f / (1 << 20) * (1 << 20)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Tilt {
    None,
    Small,
    Large,
}

const READ: usize = 0;
const WRITE: usize = 1;
/// Gap between the first issues of a burst while its queue fills, ns.
const RAMP_NS: u64 = 2_000;
/// Host reaction time from a completion to the next issue of a burst, ns.
const HOST_NS: u64 = 4_000;
/// Chance the next episode is led by the same stream as the last one.
const STICKY: f64 = 0.5;
/// Width of the steering bands in the middle of the trace, as a share of I/Os so far.
const SLACK: f64 = 0.02;
/// How often the progress callback runs, I/Os.
const PROGRESS_EVERY: u64 = 1 << 16;

struct StreamState {
    id: StreamId,
    read_p: f64,
    seq_p: f64,
    locality: f64,
    near_bytes: u64,
    cdf: [[f64; 7]; 2],
    /// Geometric middle of the "other" size range, bytes.
    other_mid_bytes: f64,
    /// Each bucket's size for ordering, bytes: the bucket sizes, then `other_mid_bytes`.
    bucket_bytes: [f64; 7],
    /// "Other" sizes at the quantiles of the log-uniform range: the lower half, then
    /// the upper half.
    other_sizes: Box<[u64; 2 * OTHER_TABLE]>,
    burst_p: f64,
    burst_len: f64,
    run_len: f64,
    qd: f64,
    think_ns: f64,
    region_start: u64,
    region_len: u64,
    cursor: [u64; 2],
    weight: f64,
}

/// Entries per half of a stream's table of "other" sizes.
const OTHER_TABLE: usize = 256;

/// An "other" size near `x` bytes: 512-byte granules below 4 KiB, 4 KiB above, never
/// one of the bucket sizes.
fn other_size(x: f64) -> u64 {
    let mut len = if x < 4096.0 {
        ((x / 512.0) as u64).max(1) * 512
    } else {
        (x / 4096.0).round() as u64 * 4096
    };
    while size_bucket(len) != OTHER {
        len += 4096;
    }
    len
}

fn cdf(f: [f64; 7]) -> [f64; 7] {
    let mut c = [0.0; 7];
    let mut acc = 0.0;
    for i in 0..7 {
        acc += f[i];
        c[i] = acc;
    }
    c[6] = 1.0;
    c
}

struct Rand(Xoshiro256PlusPlus);

impl Rand {
    /// Uniform in [0, 1).
    #[inline]
    fn f(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform in [0, n).
    #[inline]
    fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0);
        ((self.0.next_u64() as u128 * n as u128) >> 64) as u64
    }
    /// Exponential with that mean.
    #[inline]
    fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.f()).ln()
    }
    /// Geometric on 1, 2, ... with that mean.
    #[inline]
    fn geom(&mut self, mean: f64) -> u64 {
        if mean <= 1.0 {
            return 1;
        }
        let u = 1.0 - self.f(); // (0, 1]
        1 + (u.ln() / (1.0 - 1.0 / mean).ln()).floor().min(1e12) as u64
    }
}

/// Even nanoseconds (issue times are even, completion times odd, so an issue never
/// coincides with a completion and queue depth at an issue is never ambiguous).
#[inline]
fn even(ns: f64) -> u64 {
    // Through i64: one instruction, and the same value below 2^63 ns (292 years; the
    // trace writer refuses anything later).
    ((ns.max(2.0) as i64 as u64) + 1) & !1
}

/// `x as f64` through i64: one instruction (u64 takes several), and the same value for
/// every count and byte total here, all below 2^63.
#[inline]
fn as_f64(x: u64) -> f64 {
    debug_assert!(x <= i64::MAX as u64);
    x as i64 as f64
}

struct Gen<'a, S: Sink> {
    sink: &'a mut S,
    rng: Rand,
    streams: Vec<StreamState>,
    /// Windows as I/O indices: (start, end, stream).
    windows: Vec<(u64, u64, usize)>,
    active: Vec<usize>,
    active_until: u64,
    total: u64,
    inv_total: f64,
    // targets
    read_target: Option<(u64, u64)>,
    mean_target: [Option<f64>; 2],
    size_target: Option<[f64; 7]>,
    seq_target: Option<f64>,
    qd_target: Option<f64>,
    qd1_target: Option<f64>,
    mixing: f64,
    idle_chance: f64,
    duration_ns: f64,
    // drive
    unit_free: Vec<u64>,
    lat_ns: [f64; 2],
    ns_per_byte: [f64; 2],
    // state
    sum: SynthSummary,
    count: [u64; 2],
    last_end: [u64; 2],
    last_stream: [usize; 2],
    last_issue: Option<u64>,
    cur_start: u64,
    cur_end: u64,
    busy_closed: u64,
    work_sum_burst: f64,
    work_n_burst: u64,
    work_sum_run: f64,
    work_n_run: u64,
    /// Predicted busy, measured busy, predicted integral, measured integral of bursts.
    burst_fit: [f64; 4],
    long_idle_ns: u64,
    episodes: u64,
    heap: BinaryHeap<Reverse<u64>>,
    next_progress: u64,
}

/// Synthesizes `profile` into `sink`; `progress(done, total)` is called now and then.
pub fn generate<S: Sink>(
    profile: &Profile,
    opts: &SynthOptions,
    sink: &mut S,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<SynthSummary, SynthError> {
    let mut g = Gen::new(profile, opts, sink)?;
    g.run(progress)?;
    Ok(g.finish())
}

/// How many I/Os to generate at `opts.scale`, and the (reads, writes) split when the
/// profile targets one.
fn io_counts(
    profile: &Profile,
    opts: &SynthOptions,
) -> Result<(u64, Option<(u64, u64)>), SynthError> {
    if !(opts.scale.is_finite() && opts.scale > 0.0 && opts.scale <= 100.0) {
        return Err(SynthError::Options(format!(
            "--scale {}: must be in (0, 100]",
            opts.scale
        )));
    }
    let t = &profile.targets;
    let (total, read_target) = match (t.reads, t.writes) {
        (Some(r), Some(w)) => {
            let r = (r as f64 * opts.scale).round() as u64;
            let w = (w as f64 * opts.scale).round() as u64;
            (r + w, Some((r, w)))
        }
        _ => {
            let n = profile.ios.expect("validated");
            ((n as f64 * opts.scale).round() as u64, None)
        }
    };
    if total == 0 {
        return Err(SynthError::Options(format!(
            "--scale {} leaves no I/O of profile {}",
            opts.scale, profile.name
        )));
    }
    Ok((total, read_target))
}

impl<'a, S: Sink> Gen<'a, S> {
    fn new(profile: &Profile, opts: &SynthOptions, sink: &'a mut S) -> Result<Self, SynthError> {
        let (total, read_target) = io_counts(profile, opts)?;
        let t = &profile.targets;
        let footprint = footprint_bytes(profile, opts);
        let mut streams = Vec::with_capacity(profile.streams.len());
        let mut windows = Vec::new();
        for (i, s) in profile.streams.iter().enumerate() {
            streams.push(stream_state(s, sink, footprint, profile)?);
            for w in &s.windows {
                let a = (w[0] * total as f64).round() as u64;
                let b = (w[1] * total as f64).round() as u64;
                windows.push((a, if w[1] >= 1.0 { u64::MAX } else { b }, i));
            }
        }
        let mean_target = match read_target {
            Some((r, w)) => [
                t.gb_read
                    .map(|gb| gb * 1e9 / (r.max(1) as f64 / opts.scale)),
                t.gb_written
                    .map(|gb| gb * 1e9 / (w.max(1) as f64 / opts.scale)),
            ],
            None => [None, None],
        };
        let d = &profile.drive;
        let units = d.units as usize;
        Ok(Gen {
            sink,
            rng: Rand(Xoshiro256PlusPlus::seed_from_u64(opts.seed)),
            streams,
            windows,
            active: Vec::new(),
            active_until: 0,
            total,
            inv_total: 1.0 / total as f64,
            read_target,
            mean_target,
            size_target: t.sizes.as_ref().map(|s| s.fractions()),
            seq_target: t.sequential,
            qd_target: t.avg_qd,
            qd1_target: t.qd1,
            mixing: profile.mixing,
            idle_chance: profile.idle_chance,
            duration_ns: profile.duration_s * opts.scale * 1e9,
            unit_free: vec![0; units],
            lat_ns: [d.read_latency_us * 1e3, d.write_latency_us * 1e3],
            ns_per_byte: [
                units as f64 * 1e3 / d.read_mb_s,
                units as f64 * 1e3 / d.write_mb_s,
            ],
            sum: SynthSummary {
                footprint_bytes: footprint,
                ..SynthSummary::default()
            },
            count: [0; 2],
            last_end: [u64::MAX; 2],
            last_stream: [usize::MAX; 2],
            last_issue: None,
            cur_start: 0,
            cur_end: 0,
            busy_closed: 0,
            work_sum_burst: 0.0,
            work_n_burst: 0,
            work_sum_run: 0.0,
            work_n_run: 0,
            burst_fit: [1.0; 4],
            long_idle_ns: 0,
            episodes: 0,
            heap: BinaryHeap::with_capacity(MAX_QD + 1),
            next_progress: PROGRESS_EVERY,
        })
    }

    #[inline]
    fn done(&self) -> u64 {
        self.count[READ] + self.count[WRITE]
    }

    /// Half-width of the steering band, in I/Os: wide mid-trace, a few I/Os at the end.
    #[inline]
    fn band(&self) -> f64 {
        let n = as_f64(self.done());
        let left = 1.0 - n * self.inv_total;
        2.0 + SLACK * n * left
    }

    fn refresh_active(&mut self) {
        let n = self.done();
        if n < self.active_until && !self.active.is_empty() {
            return;
        }
        self.active.clear();
        let mut until = u64::MAX;
        for &(a, b, i) in &self.windows {
            if a <= n && n < b {
                if !self.active.contains(&i) {
                    self.active.push(i);
                }
                until = until.min(b);
            } else if a > n {
                until = until.min(a);
            }
        }
        assert!(
            !self.active.is_empty(),
            "validated: a stream is active at every point"
        );
        self.active.sort_unstable();
        self.active_until = until;
    }

    fn pick_active(&mut self) -> usize {
        let total: f64 = self.active.iter().map(|&i| self.streams[i].weight).sum();
        let mut x = self.rng.f() * total;
        for &i in &self.active {
            x -= self.streams[i].weight;
            if x < 0.0 {
                return i;
            }
        }
        *self.active.last().expect("non-empty")
    }

    fn run(&mut self, progress: &mut dyn FnMut(u64, u64)) -> Result<(), SynthError> {
        let mut lead = usize::MAX;
        let mut start_ns = 0u64;
        progress(0, self.total);
        while self.done() < self.total {
            self.refresh_active();
            if lead == usize::MAX || !self.active.contains(&lead) || self.rng.f() >= STICKY {
                lead = self.pick_active();
            }
            let remaining = self.total - self.done();
            let burst = remaining >= 2 && self.want_burst(lead);
            if burst {
                let mut len = self.rng.geom(self.streams[lead].burst_len).max(2);
                if let Some(t1) = self.qd1_target {
                    // The burst's I/Os after its first are not at QD1: keep them within what is still owed.
                    let nonqd1_owed =
                        (1.0 - t1) * self.total as f64 - (self.done() - self.sum.qd1_ios) as f64;
                    len = len.min((nonqd1_owed.max(0.0) as u64 + 1).max(2));
                }
                let len = len.min(remaining);
                let depth = self.choose_depth(lead, len);
                let (busy0, int0, work0) = (
                    self.busy_now(),
                    self.sum.service_ns_sum,
                    self.work_sum_burst,
                );
                self.burst(lead, start_ns, len, depth)?;
                // Fit the depth model: predicted vs measured busy time and integral.
                let units = self.unit_free.len() as f64;
                let work = self.work_sum_burst - work0;
                let df = depth as f64;
                let pred_busy = work / df.min(units);
                self.burst_fit[0] += pred_busy;
                self.burst_fit[1] += (self.busy_now() - busy0) as f64;
                self.burst_fit[2] += pred_busy * df;
                self.burst_fit[3] += (self.sum.service_ns_sum - int0) as f64;
            } else {
                let mut len = self.rng.geom(self.streams[lead].run_len);
                if let Some(t1) = self.qd1_target {
                    let owed = t1 * self.total as f64 - self.sum.qd1_ios as f64;
                    len = len.min((owed.max(0.0) as u64).max(1));
                }
                let len = len.min(remaining);
                self.qd1_run(lead, start_ns, len)?;
            }
            self.episodes += 1;
            let gap = self.episode_gap(lead);
            start_ns = self.cur_end + 1 + gap;
            if self.done() >= self.next_progress {
                progress(self.done(), self.total);
                self.next_progress = self.done() + PROGRESS_EVERY;
            }
        }
        progress(self.total, self.total);
        Ok(())
    }

    fn want_burst(&mut self, lead: usize) -> bool {
        let prior = self.streams[lead].burst_p;
        match self.qd1_target {
            Some(t1) => {
                let owed = t1 * self.done() as f64 - self.sum.qd1_ios as f64;
                let band = self.band();
                if owed > band {
                    false
                } else if owed < -band {
                    true
                } else {
                    self.rng.f() < prior
                }
            }
            None => self.rng.f() < prior,
        }
    }

    fn busy_now(&self) -> u64 {
        if self.last_issue.is_none() {
            0
        } else {
            self.busy_closed + (self.cur_end - self.cur_start)
        }
    }

    fn choose_depth(&mut self, lead: usize, len: u64) -> usize {
        let units = self.unit_free.len() as f64;
        let Some(target) = self.qd_target else {
            let qd = self.streams[lead].qd * (0.5 + self.rng.f());
            return (qd.round() as usize).clamp(2, MAX_QD);
        };
        let w = if self.work_n_burst > 0 {
            self.work_sum_burst / self.work_n_burst as f64
        } else {
            self.lat_ns[READ] + 32768.0 * self.ns_per_byte[READ]
        };
        // Owed queue-depth integral: positive when the average is below target. The
        // QD1 I/Os expected before the next burst will add to it; count them now, so
        // the error swings around zero instead of trailing it (and the trace's last
        // QD1 runs do not leave it short).
        let mut owed = target * self.busy_now() as f64 - self.sum.service_ns_sum as f64;
        if let (Some(t1), true) = (self.qd1_target, self.work_n_run > 0) {
            let left = (t1 * self.total as f64 - self.sum.qd1_ios as f64 - 1.0).max(0.0);
            let paired = t1 / (1.0 - t1).max(1e-3) * len as f64;
            let w_run = self.work_sum_run / self.work_n_run as f64;
            owed += (target - 1.0) * w_run * left.min(paired);
        }
        // Learned ratios of measured to predicted busy time and QD integral of bursts
        // (ramp-up and drain make a burst's queue shallower than its depth).
        let busy_k = self.burst_fit[1] / self.burst_fit[0];
        let int_k = self.burst_fit[3] / self.burst_fit[2];
        let mut best = (f64::INFINITY, 2usize);
        for d in 2..=MAX_QD {
            let df = d as f64;
            let busy = len as f64 * w / df.min(units);
            let after = owed + target * busy * busy_k - df * busy * int_k;
            if after.abs() < best.0 {
                best = (after.abs(), d);
            }
        }
        // A little variety around the best depth.
        let jitter = self.rng.below(5) as isize - 2;
        (best.1 as isize + jitter).clamp(2, MAX_QD as isize) as usize
    }

    fn episode_gap(&mut self, lead: usize) -> u64 {
        if self.rng.f() < self.idle_chance {
            let n = self.done().max(1) as f64;
            let remaining = (self.total - self.done()) as f64;
            let active_ns = self.cur_end.saturating_sub(self.long_idle_ns) as f64;
            let budget = self.duration_ns - self.cur_end as f64 - remaining * active_ns / n;
            let per_episode = n / self.episodes.max(1) as f64;
            let gaps_left = (remaining / per_episode * self.idle_chance).max(1.0);
            let mean = (budget / gaps_left).max(1e6);
            let gap = even(self.rng.exp(mean));
            self.long_idle_ns += gap;
            gap
        } else {
            even(self.rng.exp(self.streams[lead].think_ns))
        }
    }

    fn qd1_run(&mut self, lead: usize, start_ns: u64, len: u64) -> Result<(), SynthError> {
        let mut t = start_ns;
        for k in 0..len {
            if k > 0 {
                t = self.cur_end + 1 + even(self.rng.exp(self.streams[lead].think_ns * 0.25));
            }
            self.one(lead, t, false)?;
        }
        Ok(())
    }

    fn burst(
        &mut self,
        lead: usize,
        start_ns: u64,
        len: u64,
        depth: usize,
    ) -> Result<(), SynthError> {
        self.heap.clear();
        let mut t = start_ns;
        for k in 0..len {
            if k > 0 {
                t += RAMP_NS;
                while matches!(self.heap.peek(), Some(&Reverse(c)) if c < t) {
                    self.heap.pop();
                }
                if self.heap.len() >= depth {
                    let Reverse(c) = *self.heap.peek().expect("non-empty");
                    t = t.max(c + 1 + HOST_NS);
                    while matches!(self.heap.peek(), Some(&Reverse(c)) if c < t) {
                        self.heap.pop();
                    }
                }
            }
            let s = if self.active.len() > 1 && self.rng.f() < self.mixing {
                self.pick_active()
            } else {
                lead
            };
            let c = self.one(s, t, true)?;
            self.heap.push(Reverse(c));
            assert!(self.heap.len() <= depth);
        }
        Ok(())
    }

    fn choose_dir(&mut self, s: usize, band: f64) -> usize {
        let prior = self.streams[s].read_p;
        let Some((r, w)) = self.read_target else {
            return if self.rng.f() < prior { READ } else { WRITE };
        };
        if self.count[READ] >= r {
            return WRITE;
        }
        if self.count[WRITE] >= w {
            return READ;
        }
        let owed = as_f64(r) * self.inv_total * as_f64(self.done()) - as_f64(self.count[READ]);
        if owed > band {
            READ
        } else if owed < -band {
            WRITE
        } else if self.rng.f() < prior {
            READ
        } else {
            WRITE
        }
    }

    /// A bucket from stream `s`'s mix for `dir`.
    #[inline]
    fn draw_bucket(&mut self, s: usize, dir: usize) -> usize {
        let u = self.rng.f();
        // The first bucket whose cumulative share exceeds u: the cdf rises, so that is
        // the number of entries at or below u (counted without a branch per entry; u
        // is below the last entry, 1.0, so the count is at most OTHER).
        self.streams[s].cdf[dir]
            .iter()
            .map(|&x| (x <= u) as usize)
            .sum()
    }

    /// Bucket sizes for ordering; "other" counts as its stream's middle size.
    #[inline]
    fn bucket_size(&self, s: usize, b: usize) -> f64 {
        self.streams[s].bucket_bytes[b]
    }

    fn choose_len(&mut self, s: usize, dir: usize, tilt: Tilt, band: f64) -> u64 {
        let mut b = self.draw_bucket(s, dir);
        // QD1 runs lean to small I/Os and bursts to large ones (as in real traces:
        // single random reads and writes between file copies and loads).
        if tilt != Tilt::None {
            let b2 = self.draw_bucket(s, dir);
            let (x, y) = (self.bucket_size(s, b), self.bucket_size(s, b2));
            if (tilt == Tilt::Small) == (y < x) {
                b = b2;
            }
        }
        if let Some(m) = self.mean_target[dir] {
            // Bytes of this direction off target by more than the band: trade the
            // bucket for one on the right side of the target mean.
            let owed = m * as_f64(self.count[dir] + 1) - as_f64(self.sum_bytes(dir));
            let band_bytes = m * band;
            let size = self.bucket_size(s, b);
            if (owed < -band_bytes && size > m) || (owed > band_bytes && size < m) {
                let want_large = owed > 0.0;
                if let Some(tgt) = self.size_target {
                    let n1 = as_f64(self.done() + 1);
                    let mut best = (f64::NEG_INFINITY, b);
                    for (j, share) in tgt.iter().enumerate() {
                        let sz = self.bucket_size(s, j);
                        if (sz > m) == want_large {
                            let o = share * n1 - as_f64(self.sum.size_counts[j]);
                            if o > best.0 {
                                best = (o, j);
                            }
                        }
                    }
                    b = best.1;
                } else {
                    b = if want_large { OTHER } else { 0 };
                }
            }
        }
        if let Some(tgt) = self.size_target {
            let n1 = as_f64(self.done() + 1);
            let owed = |j: usize, sum: &SynthSummary| tgt[j] * n1 - as_f64(sum.size_counts[j]);
            if owed(b, &self.sum) < -band {
                // Over its share: take an under-represented bucket instead, the one
                // that also helps this direction's bytes most (else the most owed).
                let bytes_owed = self.mean_target[dir]
                    .map(|m| m * as_f64(self.count[dir] + 1) - as_f64(self.sum_bytes(dir)))
                    .unwrap_or(0.0);
                let key = |j: usize, g: &Self| -> f64 {
                    let o = owed(j, &g.sum);
                    if o <= 0.0 {
                        f64::NEG_INFINITY
                    } else if bytes_owed < 0.0 {
                        -g.bucket_size(s, j)
                    } else if bytes_owed > 0.0 {
                        g.bucket_size(s, j)
                    } else {
                        o
                    }
                };
                b = (0..7)
                    .max_by(|&x, &y| key(x, self).total_cmp(&key(y, self)))
                    .expect("seven buckets");
            }
        }
        if b < OTHER {
            return BUCKET_BYTES[b];
        }
        // The lower or upper half of the stream's "other" range (log-uniform),
        // whichever brings this direction's bytes towards target.
        let half = match self.mean_target[dir] {
            Some(m) => {
                let owed = m * as_f64(self.count[dir] + 1) - as_f64(self.sum_bytes(dir));
                if owed > self.streams[s].other_mid_bytes {
                    OTHER_TABLE
                } else {
                    0
                }
            }
            None => self.rng.below(2) as usize * OTHER_TABLE,
        };
        let i = self.rng.below(OTHER_TABLE as u64) as usize;
        self.streams[s].other_sizes[half + i]
    }

    #[inline]
    fn sum_bytes(&self, dir: usize) -> u64 {
        if dir == READ {
            self.sum.bytes_read
        } else {
            self.sum.bytes_written
        }
    }

    fn choose_offset(&mut self, s: usize, dir: usize, len: u64, band: f64) -> u64 {
        let can_seq = self.last_stream[dir] == s;
        let prior = self.streams[s].seq_p;
        let (want, forced) = match self.seq_target {
            Some(t) => {
                let owed = t * as_f64(self.done() + 1) - as_f64(self.sum.sequential);
                if owed > band {
                    (true, true)
                } else if owed < -band {
                    (false, true)
                } else {
                    (self.rng.f() < prior, false)
                }
            }
            None => (self.rng.f() < prior, false),
        };
        let st = &self.streams[s];
        let (rs, rl) = (st.region_start, st.region_len);
        let mut adopted = false;
        let mut off = if want {
            if can_seq {
                self.last_end[dir]
            } else if forced && self.last_end[dir] != u64::MAX {
                adopted = true;
                self.last_end[dir]
            } else {
                st.cursor[dir]
            }
        } else if self.rng.f() < st.locality {
            let near = st.near_bytes;
            let cur = st.cursor[dir].clamp(rs, rs + rl - len);
            let delta = self.rng.below(near / 4096 + 1) * 4096;
            if self.rng.f() < 0.5 {
                cur.saturating_sub(delta).max(rs)
            } else {
                (cur + delta).min(rs + rl - len)
            }
        } else {
            rs + self.rng.below((rl - len) / 4096 + 1) * 4096
        };
        let cap_end = if adopted {
            // A sequential continuation may run past the stream's region (it adopted
            // another stream's position); it only wraps at the footprint's end.
            self.sum.footprint_bytes
        } else {
            rs + rl
        };
        if off + len > cap_end {
            off = rs;
        }
        if !want && off == self.last_end[dir] {
            off = if off + 4096 + len <= rs + rl {
                off + 4096
            } else {
                rs
            };
            if off == self.last_end[dir] {
                off += 4096;
            }
        }
        assert!(
            off + len <= self.sum.footprint_bytes,
            "offset inside the footprint"
        );
        off
    }

    /// Chooses and issues one I/O of stream `s` at `t`; returns its completion time.
    #[inline]
    fn one(&mut self, s: usize, t: u64, in_burst: bool) -> Result<u64, SynthError> {
        let band = self.band();
        let dir = self.choose_dir(s, band);
        let tilt = if in_burst { Tilt::Large } else { Tilt::Small };
        let len = self.choose_len(s, dir, tilt, band);
        let off = self.choose_offset(s, dir, len, band);
        // Reference drive: the earliest free unit, FIFO.
        let (u, free) = self
            .unit_free
            .iter()
            .copied()
            .enumerate()
            .min_by_key(|&(_, f)| f)
            .expect("at least one unit");
        let work = even(self.lat_ns[dir] + as_f64(len) * self.ns_per_byte[dir]);
        let done = t.max(free) + work;
        self.unit_free[u] = done;
        let complete = done + 1;
        if in_burst {
            self.work_sum_burst += as_f64(work);
            self.work_n_burst += 1;
        } else {
            self.work_sum_run += as_f64(work);
            self.work_n_run += 1;
        }
        // Measure as characterize does.
        assert!(t.is_multiple_of(2) && !complete.is_multiple_of(2));
        match self.last_issue {
            Some(prev) => {
                assert!(t > prev, "issue times strictly increase");
                if t > self.cur_end {
                    self.busy_closed += self.cur_end - self.cur_start;
                    self.cur_start = t;
                    self.sum.qd1_ios += 1;
                }
            }
            None => {
                self.cur_start = t;
                self.sum.qd1_ios += 1;
            }
        }
        self.last_issue = Some(t);
        self.cur_end = self.cur_end.max(complete);
        self.sum.service_ns_sum += (complete - t) as u128;
        if self.last_end[dir] == off {
            self.sum.sequential += 1;
        }
        self.sum.size_counts[size_bucket(len)] += 1;
        if dir == READ {
            self.sum.reads += 1;
            self.sum.bytes_read += len;
        } else {
            self.sum.writes += 1;
            self.sum.bytes_written += len;
        }
        self.count[dir] += 1;
        self.last_end[dir] = off + len;
        self.last_stream[dir] = s;
        self.streams[s].cursor[dir] = off + len;
        let rec = IoRecord {
            issue_ns: t,
            complete_ns: Some(complete),
            offset_bytes: off,
            len_bytes: len,
            op: if dir == READ { Op::Read } else { Op::Write },
            stream: Some(self.streams[s].id),
            device: None,
        };
        self.sink.write(&rec)?;
        Ok(complete)
    }

    fn finish(mut self) -> SynthSummary {
        self.sum.busy_ns = self.busy_now();
        self.sum.end_ns = self.cur_end;
        assert_eq!(self.sum.total(), self.total);
        self.sum
    }
}

fn stream_state<S: Sink>(
    s: &StreamSpec,
    sink: &mut S,
    footprint: u64,
    profile: &Profile,
) -> Result<StreamState, SynthError> {
    let start = (s.region[0] * footprint as f64) as u64 / 4096 * 4096;
    let mut len = (s.region[1] * footprint as f64) as u64 / 4096 * 4096;
    len = len.min(footprint - start);
    let max_len = (s.other_kib[1] * 1024.0) as u64 + 8192;
    if len < 4 * max_len.max(1 << 20) {
        return Err(SynthError::FootprintTooSmall {
            profile: profile.name.clone(),
            stream: s.name.clone(),
            bytes: len,
        });
    }
    let lo = (s.other_kib[0] * 1024.0).ln();
    let hi = (s.other_kib[1] * 1024.0).ln();
    let mut other_sizes = Box::new([0u64; 2 * OTHER_TABLE]);
    for (i, v) in other_sizes.iter_mut().enumerate() {
        let q = (i as f64 + 0.5) / (2 * OTHER_TABLE) as f64;
        *v = other_size((lo + q * (hi - lo)).exp());
    }
    let other_mid_bytes = ((lo + hi) / 2.0).exp();
    let mut bucket_bytes = [other_mid_bytes; 7];
    for (b, v) in bucket_bytes.iter_mut().enumerate().take(OTHER) {
        *v = BUCKET_BYTES[b] as f64;
    }
    Ok(StreamState {
        id: sink.intern_stream(&s.name),
        read_p: s.read_fraction,
        seq_p: s.sequential,
        locality: s.locality,
        near_bytes: (s.near_kib * 1024.0) as u64,
        cdf: [
            cdf(s.read_sizes.fractions()),
            cdf(s.write_sizes.fractions()),
        ],
        other_mid_bytes,
        bucket_bytes,
        other_sizes,
        burst_p: s.burst,
        burst_len: s.burst_len,
        run_len: s.run_len,
        qd: s.qd,
        think_ns: s.think_us * 1e3,
        region_start: start,
        region_len: len,
        cursor: [start, start + len / 2],
        weight: s.weight,
    })
}
