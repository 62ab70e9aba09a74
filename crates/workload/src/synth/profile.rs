//! A synthesis profile: the TOML schema (built-in profiles and user profiles share it),
//! its validation, and the published figures it claims to reproduce.
//!
//! The schema is documented for users in `docs/profiles/example.toml`.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// The I/O size buckets `characterize` prints, in this order; the last one is "other".
pub const BUCKET_BYTES: [u64; 6] = [4096, 8192, 16384, 32768, 65536, 131072];
/// Names of the seven buckets, as used in TOML keys and reports.
pub const BUCKET_NAMES: [&str; 7] = ["4k", "8k", "16k", "32k", "64k", "128k", "other"];
/// Index of the "other" bucket.
pub const OTHER: usize = 6;

/// The size bucket of one I/O length: 0..6 for exactly 4K..128K, [`OTHER`] for the rest.
#[inline]
pub fn size_bucket(len_bytes: u64) -> usize {
    match len_bytes {
        4096 => 0,
        8192 => 1,
        16384 => 2,
        32768 => 3,
        65536 => 4,
        131072 => 5,
        _ => OTHER,
    }
}

/// A profile or option mistake, naming the file and the field.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: {violation}")]
    Rule { file: String, violation: Violation },
    /// Neither a built-in profile nor a path; [`ProfileError::hint`] lists the names.
    #[error("unknown profile `{name}`")]
    Unknown { name: String, known: String },
}

impl ProfileError {
    /// What the user can do about it, printed on its own line by the CLI.
    pub fn hint(&self) -> Option<String> {
        match self {
            ProfileError::Unknown { known, .. } => Some(format!(
                "built-in profiles are {known}; or give a path to a .toml profile (see docs/profiles/example.toml)"
            )),
            _ => None,
        }
    }
}

/// One rule of the profile schema that a profile breaks, naming the field.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Violation {
    /// A value outside its bounds.
    #[error("{field} = {value}: {rule}")]
    Bound {
        field: String,
        value: String,
        rule: String,
    },
    /// A field missing, repeated or at odds with another.
    #[error("{field}: {problem}")]
    Field { field: String, problem: String },
}

fn bound(
    field: impl Into<String>,
    value: impl std::fmt::Display,
    rule: impl Into<String>,
) -> Violation {
    Violation::Bound {
        field: field.into(),
        value: value.to_string(),
        rule: rule.into(),
    }
}

fn field(field: impl Into<String>, problem: impl Into<String>) -> Violation {
    Violation::Field {
        field: field.into(),
        problem: problem.into(),
    }
}

/// A share of I/Os per size bucket. Keys are `4k`, `8k`, `16k`, `32k`, `64k`, `128k`,
/// `other`; missing keys are 0. Weights are normalised (they need not sum to 1).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SizeMix {
    #[serde(rename = "4k", default)]
    pub k4: f64,
    #[serde(rename = "8k", default)]
    pub k8: f64,
    #[serde(rename = "16k", default)]
    pub k16: f64,
    #[serde(rename = "32k", default)]
    pub k32: f64,
    #[serde(rename = "64k", default)]
    pub k64: f64,
    #[serde(rename = "128k", default)]
    pub k128: f64,
    #[serde(default)]
    pub other: f64,
}

impl SizeMix {
    pub fn weights(&self) -> [f64; 7] {
        [
            self.k4, self.k8, self.k16, self.k32, self.k64, self.k128, self.other,
        ]
    }

    /// Weights normalised to sum to 1.
    pub fn fractions(&self) -> [f64; 7] {
        let w = self.weights();
        let sum: f64 = w.iter().sum();
        assert!(sum > 0.0, "size mix validated to have a positive sum");
        w.map(|x| x / sum)
    }

    fn validate(&self, what: &str) -> Result<(), Violation> {
        for (name, w) in BUCKET_NAMES.iter().zip(self.weights()) {
            if !(w.is_finite() && w >= 0.0) {
                return Err(bound(format!("{what}.{name}"), w, "must be a number >= 0"));
            }
        }
        if self.weights().iter().sum::<f64>() <= 0.0 {
            return Err(field(what, "at least one bucket needs a weight > 0"));
        }
        Ok(())
    }
}

/// Figures the whole trace must reach (at `--scale 1`). Every field is optional: a
/// missing target is not steered, the streams' own behaviour decides it.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Targets {
    /// Read count at scale 1.
    pub reads: Option<u64>,
    /// Write count at scale 1.
    pub writes: Option<u64>,
    /// GB (10^9 bytes) read at scale 1.
    pub gb_read: Option<f64>,
    /// GB (10^9 bytes) written at scale 1.
    pub gb_written: Option<f64>,
    /// Share of all I/Os per size bucket.
    pub sizes: Option<SizeMix>,
    /// Share of I/Os whose offset is the end of the previous I/O of the same direction.
    pub sequential: Option<f64>,
    /// Time-weighted average queue depth over busy time.
    pub avg_qd: Option<f64>,
    /// Share of I/Os issued when no other I/O was outstanding.
    pub qd1: Option<f64>,
}

/// The reference drive whose completion times the trace carries: `units` parallel
/// flash units, each taking `latency + len / (bandwidth / units)` per I/O, FIFO.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DriveSpec {
    pub units: u32,
    pub read_latency_us: f64,
    pub write_latency_us: f64,
    pub read_mb_s: f64,
    pub write_mb_s: f64,
}

impl Default for DriveSpec {
    fn default() -> Self {
        DriveSpec {
            units: 4,
            read_latency_us: 60.0,
            write_latency_us: 80.0,
            read_mb_s: 260.0,
            write_mb_s: 200.0,
        }
    }
}

fn default_weight() -> f64 {
    1.0
}
fn default_windows() -> Vec<[f64; 2]> {
    vec![[0.0, 1.0]]
}
fn default_region() -> [f64; 2] {
    [0.0, 1.0]
}
fn default_locality() -> f64 {
    0.5
}
fn default_near_kib() -> f64 {
    8192.0
}
fn default_other_kib() -> [f64; 2] {
    [0.5, 1024.0]
}
fn default_burst() -> f64 {
    0.3
}
fn default_burst_len() -> f64 {
    64.0
}
fn default_run_len() -> f64 {
    3.0
}
fn default_qd() -> f64 {
    8.0
}
fn default_think_us() -> f64 {
    200.0
}

/// One scenario stream (an application, a background task).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StreamSpec {
    /// Written in the trace's `stream` column.
    pub name: String,
    /// Relative share of the episodes (bursts or QD1 runs) this stream leads while active.
    #[serde(default = "default_weight")]
    pub weight: f64,
    /// Where in the trace the stream is active: `[start, end)` pairs as fractions of
    /// the trace's I/Os. Overlapping windows of different streams run concurrently.
    #[serde(default = "default_windows")]
    pub windows: Vec<[f64; 2]>,
    /// `[start, length]` of the stream's part of the footprint, as fractions of it.
    #[serde(default = "default_region")]
    pub region: [f64; 2],
    /// Chance an I/O of this stream is a read.
    pub read_fraction: f64,
    /// Chance the next I/O continues where the stream's previous I/O of the same direction ended.
    pub sequential: f64,
    /// Chance a jump lands within `near_kib` of the stream's last position (pseudo-random)
    /// rather than anywhere in its region (random).
    #[serde(default = "default_locality")]
    pub locality: f64,
    #[serde(default = "default_near_kib")]
    pub near_kib: f64,
    pub read_sizes: SizeMix,
    pub write_sizes: SizeMix,
    /// Range of the sizes of the "other" bucket, KiB (log-uniform, 512 B granules;
    /// never exactly one of the bucket sizes).
    #[serde(default = "default_other_kib")]
    pub other_kib: [f64; 2],
    /// Chance an episode this stream leads is a queued burst (else a run of QD1 I/Os).
    #[serde(default = "default_burst")]
    pub burst: f64,
    /// Mean I/Os in one of its bursts.
    #[serde(default = "default_burst_len")]
    pub burst_len: f64,
    /// Mean I/Os in one of its QD1 runs.
    #[serde(default = "default_run_len")]
    pub run_len: f64,
    /// Typical queue depth of its bursts (used as is when `targets.avg_qd` is absent).
    #[serde(default = "default_qd")]
    pub qd: f64,
    /// Mean host think time between I/Os of a QD1 run and between episodes, µs.
    #[serde(default = "default_think_us")]
    pub think_us: f64,
}

/// One figure a source published, for `storbench profiles` and the benchmark script.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Published {
    /// One of `reads`, `writes`, `total_ios`, `gb_read`, `gb_written`, `size_4k` ...
    /// `size_128k`, `size_other`, `size_rest` (share outside the listed buckets),
    /// `sequential`, `avg_qd`, `qd1`.
    pub metric: String,
    /// The figure as the source printed it.
    pub text: String,
    /// `eq` (to be matched within 1%), `approx` (a rounded "~" figure), `gt` (a lower
    /// bound), `range` (`value`..=`value_hi`).
    #[serde(default = "default_relation")]
    pub relation: String,
    pub value: f64,
    pub value_hi: Option<f64>,
}

fn default_relation() -> String {
    "eq".to_owned()
}

/// A synthesis profile, as read from TOML.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    #[serde(default)]
    pub title: String,
    /// Where the figures come from.
    #[serde(default)]
    pub source: String,
    /// What the profile assumes where the source is silent.
    #[serde(default)]
    pub assumptions: Vec<String>,
    /// Total I/Os at scale 1 when `targets.reads`/`writes` are not both given.
    pub ios: Option<u64>,
    /// Length of the trace in seconds at scale 1, idle time included.
    pub duration_s: f64,
    /// Share of `--capacity` the trace's offsets span.
    #[serde(default = "default_footprint")]
    pub footprint: f64,
    /// Chance an episode is followed by a long idle gap (the rest of `duration_s` is
    /// spread over those gaps).
    #[serde(default = "default_idle_chance")]
    pub idle_chance: f64,
    /// Chance an I/O of a burst comes from another active stream than the one leading it.
    #[serde(default = "default_mixing")]
    pub mixing: f64,
    #[serde(default)]
    pub targets: Targets,
    #[serde(default)]
    pub drive: DriveSpec,
    #[serde(default)]
    pub published: Vec<Published>,
    #[serde(rename = "stream")]
    pub streams: Vec<StreamSpec>,
}

fn default_footprint() -> f64 {
    0.5
}
fn default_idle_chance() -> f64 {
    0.02
}
fn default_mixing() -> f64 {
    0.1
}

/// The built-in profiles: name and TOML text (one file each under `synth/profiles/`).
pub const BUILTIN: [(&str, &str); 4] = [
    ("heavy-2011", include_str!("profiles/heavy-2011.toml")),
    ("light-2011", include_str!("profiles/light-2011.toml")),
    (
        "destroyer-2013",
        include_str!("profiles/destroyer-2013.toml"),
    ),
    (
        "storage-bench-v1",
        include_str!("profiles/storage-bench-v1.toml"),
    ),
];

/// The built-in profile of that name.
pub fn builtin(name: &str) -> Option<Profile> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(n, text)| {
        let file = format!("<built-in {n}>");
        Profile::from_toml_str(&file, text).expect("built-in profiles are valid (tested)")
    })
}

/// A built-in profile by name, else a TOML file by path.
pub fn load(name_or_path: &str) -> Result<Profile, ProfileError> {
    if let Some(p) = builtin(name_or_path) {
        return Ok(p);
    }
    let path = Path::new(name_or_path);
    if name_or_path.ends_with(".toml") || path.exists() {
        return Profile::from_file(path);
    }
    Err(ProfileError::Unknown {
        name: name_or_path.to_owned(),
        known: BUILTIN.map(|(n, _)| n).join(", "),
    })
}

fn in_unit(v: f64) -> bool {
    v.is_finite() && (0.0..=1.0).contains(&v)
}

impl Profile {
    pub fn from_file(path: &Path) -> Result<Profile, ProfileError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ProfileError::Io {
            file: file.clone(),
            source,
        })?;
        Profile::from_toml_str(&file, &text)
    }

    /// Parses and validates; `file` names the source in errors.
    pub fn from_toml_str(file: &str, text: &str) -> Result<Profile, ProfileError> {
        let p: Profile = toml::from_str(text).map_err(|e| ProfileError::Invalid {
            file: file.to_owned(),
            message: e.to_string(),
        })?;
        p.validate().map_err(|violation| ProfileError::Rule {
            file: file.to_owned(),
            violation,
        })?;
        Ok(p)
    }

    /// Total I/Os at scale 1.
    pub fn total_ios(&self) -> u64 {
        match (self.targets.reads, self.targets.writes) {
            (Some(r), Some(w)) => r + w,
            _ => self
                .ios
                .expect("validated: ios given when reads/writes are not"),
        }
    }

    fn validate(&self) -> Result<(), Violation> {
        if self.name.is_empty() {
            return Err(field("name", "must not be empty"));
        }
        self.validate_counts()?;
        self.validate_scalars()?;
        self.targets.validate()?;
        self.drive.validate()?;
        if self.streams.is_empty() {
            return Err(field("stream", "at least one [[stream]] is needed"));
        }
        for (i, s) in self.streams.iter().enumerate() {
            s.validate(i, &self.streams[..i])?;
        }
        self.validate_windows_cover()?;
        for (i, p) in self.published.iter().enumerate() {
            p.validate(i)?;
        }
        Ok(())
    }

    /// Either `ios` or both `targets.reads` and `targets.writes`, adding up to more
    /// than 0.
    fn validate_counts(&self) -> Result<(), Violation> {
        match (self.targets.reads, self.targets.writes, self.ios) {
            (Some(r), Some(w), _) if r + w == 0 => {
                Err(field("targets.reads + targets.writes", "must be > 0"))
            }
            (Some(_), Some(_), Some(_)) => Err(field(
                "ios",
                "give either `ios` or both `targets.reads` and `targets.writes`, not both",
            )),
            (Some(_), Some(_), None) => Ok(()),
            (_, _, Some(0)) => Err(field("ios", "must be > 0")),
            (None, None, Some(_)) => Ok(()),
            (_, _, _) => Err(field(
                "ios",
                "missing (give `ios`, or both `targets.reads` and `targets.writes`)",
            )),
        }
    }

    /// The profile's own numbers: duration, footprint, idle chance, mixing.
    fn validate_scalars(&self) -> Result<(), Violation> {
        if !(self.duration_s.is_finite() && self.duration_s > 0.0) {
            return Err(bound("duration_s", self.duration_s, "must be > 0"));
        }
        if !(self.footprint.is_finite() && self.footprint > 0.0 && self.footprint <= 1.0) {
            return Err(bound("footprint", self.footprint, "must be in (0, 1]"));
        }
        if !in_unit(self.idle_chance) {
            return Err(bound("idle_chance", self.idle_chance, "must be in [0, 1]"));
        }
        if !in_unit(self.mixing) {
            return Err(bound("mixing", self.mixing, "must be in [0, 1]"));
        }
        Ok(())
    }

    /// Every point of the trace needs an active stream.
    fn validate_windows_cover(&self) -> Result<(), Violation> {
        let mut edges: Vec<f64> = self
            .streams
            .iter()
            .flat_map(|s| s.windows.iter().flat_map(|w| [w[0], w[1]]))
            .chain([0.0, 1.0])
            .collect();
        edges.sort_by(f64::total_cmp);
        for pair in edges.windows(2) {
            let mid = (pair[0] + pair[1]) / 2.0;
            if pair[1] > pair[0]
                && !self
                    .streams
                    .iter()
                    .any(|s| s.windows.iter().any(|w| w[0] <= mid && mid < w[1]))
            {
                return Err(field(
                    "stream windows",
                    format!(
                        "no stream is active between {} and {} of the trace",
                        pair[0], pair[1]
                    ),
                ));
            }
        }
        Ok(())
    }
}

impl Targets {
    fn validate(&self) -> Result<(), Violation> {
        for (name, v) in [
            ("targets.sequential", self.sequential),
            ("targets.qd1", self.qd1),
        ] {
            if let Some(v) = v {
                if !in_unit(v) {
                    return Err(bound(name, v, "must be in [0, 1]"));
                }
            }
        }
        for (name, v) in [
            ("targets.gb_read", self.gb_read),
            ("targets.gb_written", self.gb_written),
        ] {
            if let Some(v) = v {
                if !(v.is_finite() && v >= 0.0) {
                    return Err(bound(name, v, "must be >= 0"));
                }
            }
        }
        if let Some(qd) = self.avg_qd {
            if !(qd.is_finite() && (1.0..=32.0).contains(&qd)) {
                return Err(bound("targets.avg_qd", qd, "must be in [1, 32]"));
            }
        }
        if let Some(s) = &self.sizes {
            s.validate("targets.sizes")?;
        }
        Ok(())
    }
}

impl DriveSpec {
    fn validate(&self) -> Result<(), Violation> {
        if self.units == 0 || self.units > 64 {
            return Err(bound("drive.units", self.units, "must be in 1..=64"));
        }
        for (name, v) in [
            ("drive.read_latency_us", self.read_latency_us),
            ("drive.write_latency_us", self.write_latency_us),
            ("drive.read_mb_s", self.read_mb_s),
            ("drive.write_mb_s", self.write_mb_s),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(bound(name, v, "must be > 0"));
            }
        }
        Ok(())
    }
}

impl StreamSpec {
    /// Stream `i`, after the streams `before` it.
    fn validate(&self, i: usize, before: &[StreamSpec]) -> Result<(), Violation> {
        let at = format!("stream[{i}] `{}`", self.name);
        if self.name.is_empty() {
            return Err(field(format!("stream[{i}].name"), "must not be empty"));
        }
        if before.iter().any(|o| o.name == self.name) {
            return Err(field(at, "name used twice"));
        }
        if !(self.weight.is_finite() && self.weight > 0.0) {
            return Err(bound(format!("{at}: weight"), self.weight, "must be > 0"));
        }
        self.validate_place(&at)?;
        for (name, v) in [
            ("read_fraction", self.read_fraction),
            ("sequential", self.sequential),
            ("locality", self.locality),
            ("burst", self.burst),
        ] {
            if !in_unit(v) {
                return Err(bound(format!("{at}: {name}"), v, "must be in [0, 1]"));
            }
        }
        self.read_sizes.validate(&format!("{at}: read_sizes"))?;
        self.write_sizes.validate(&format!("{at}: write_sizes"))?;
        self.validate_lengths(&at)
    }

    /// Where in time (windows) and space (region) the stream runs.
    fn validate_place(&self, at: &str) -> Result<(), Violation> {
        if self.windows.is_empty() {
            return Err(field(
                format!("{at}: windows"),
                "at least one [start, end) is needed",
            ));
        }
        for w in &self.windows {
            if !(in_unit(w[0]) && in_unit(w[1]) && w[0] < w[1]) {
                return Err(field(
                    format!("{at}: windows"),
                    format!("[{}, {}] must satisfy 0 <= start < end <= 1", w[0], w[1]),
                ));
            }
        }
        let [rs, rl] = self.region;
        if !(in_unit(rs) && rl > 0.0 && rl.is_finite() && rs + rl <= 1.0 + 1e-9) {
            return Err(bound(
                format!("{at}: region"),
                format!("[{rs}, {rl}]"),
                "need start >= 0, length > 0, start + length <= 1",
            ));
        }
        Ok(())
    }

    /// Sizes, distances, lengths, queue depth and think time.
    fn validate_lengths(&self, at: &str) -> Result<(), Violation> {
        let [lo, hi] = self.other_kib;
        if !(lo.is_finite() && hi.is_finite() && lo >= 0.5 && hi >= lo && hi <= 16384.0) {
            return Err(bound(
                format!("{at}: other_kib"),
                format!("[{lo}, {hi}]"),
                "need 0.5 <= low <= high <= 16384",
            ));
        }
        for (name, v, min) in [
            ("near_kib", self.near_kib, 4.0),
            ("burst_len", self.burst_len, 2.0),
            ("run_len", self.run_len, 1.0),
            ("qd", self.qd, 1.0),
            ("think_us", self.think_us, 0.0),
        ] {
            if !(v.is_finite() && v >= min) {
                return Err(bound(
                    format!("{at}: {name}"),
                    v,
                    format!("must be >= {min}"),
                ));
            }
        }
        if self.qd > 32.0 {
            return Err(bound(format!("{at}: qd"), self.qd, "must be <= 32"));
        }
        Ok(())
    }
}

impl Published {
    fn validate(&self, i: usize) -> Result<(), Violation> {
        if !matches!(self.relation.as_str(), "eq" | "approx" | "gt" | "range") {
            return Err(bound(
                format!("published[{i}].relation"),
                format!("`{}`", self.relation),
                "must be eq, approx, gt or range",
            ));
        }
        if self.relation == "range" && self.value_hi.is_none() {
            return Err(field(format!("published[{i}]"), "a range needs value_hi"));
        }
        Ok(())
    }
}
