//! Tests of the synthesizer. Every figure is measured by `storbench_trace::Characterizer`
//! (the code behind `storbench characterize`), not by the generator's own counters.

use super::*;
use storbench_trace::{
    Characterization, Characterizer, IoRecord, StreamId, TraceError, TraceWriter,
};

/// Feeds every record to a Characterizer, checks the order invariants and counts I/Os
/// per stream.
struct CharSink {
    c: Characterizer,
    names: Vec<String>,
    per_stream: Vec<u64>,
    last_issue: Option<u64>,
    /// Records issued while an I/O of another stream was still outstanding.
    overlapping: u64,
    last_stream_end: Option<(StreamId, u64)>,
    max_end_bytes: u64,
}

impl CharSink {
    fn new() -> Self {
        CharSink {
            c: Characterizer::new(),
            names: Vec::new(),
            per_stream: Vec::new(),
            last_issue: None,
            overlapping: 0,
            last_stream_end: None,
            max_end_bytes: 0,
        }
    }
}

impl Sink for CharSink {
    fn intern_stream(&mut self, name: &str) -> StreamId {
        self.names.push(name.to_owned());
        self.per_stream.push(0);
        StreamId(self.names.len() as u32 - 1)
    }
    fn write(&mut self, rec: &IoRecord) -> Result<(), TraceError> {
        if let Some(prev) = self.last_issue {
            assert!(rec.issue_ns > prev, "issue times strictly increase");
        }
        let c = rec
            .complete_ns
            .expect("synthesized records carry completions");
        assert!(c > rec.issue_ns);
        assert!(rec.len_bytes > 0);
        self.last_issue = Some(rec.issue_ns);
        let s = rec.stream.expect("synthesized records name their stream");
        self.per_stream[s.0 as usize] += 1;
        if let Some((ps, pend)) = self.last_stream_end {
            if ps != s && pend > rec.issue_ns {
                self.overlapping += 1;
            }
        }
        self.last_stream_end = Some((s, c));
        self.max_end_bytes = self.max_end_bytes.max(rec.end_bytes());
        self.c.push(rec);
        Ok(())
    }
}

fn run(profile: &Profile, opts: &SynthOptions) -> (SynthSummary, Characterization, CharSink) {
    let mut sink = CharSink::new();
    let summary = generate(profile, opts, &mut sink, &mut |_, _| {}).expect("generates");
    let c = std::mem::take(&mut sink.c);
    (summary, c.finish(), sink)
}

#[track_caller]
fn close(what: &str, measured: f64, target: f64, rel: f64) {
    let err = (measured - target).abs() / target.abs().max(1e-12);
    assert!(
        err <= rel,
        "{what}: measured {measured:.5}, target {target:.5} ({:.2}% off, allowed {:.1}%)",
        err * 100.0,
        rel * 100.0
    );
}

/// The figures one profile's published table (and its stated assumptions) ask for,
/// at a small scale: counts scale exactly, every ratio within 2%.
#[allow(
    clippy::too_many_lines,
    reason = "the published table's figures, checked row by row"
)]
fn check_profile(name: &str, scale: f64) -> (Characterization, CharSink) {
    let p = builtin(name).expect("built-in");
    let opts = SynthOptions {
        scale,
        ..SynthOptions::default()
    };
    let (sum, ch, sink) = run(&p, &opts);
    let t = &p.targets;
    let reads = (t.reads.unwrap() as f64 * scale).round() as u64;
    let writes = (t.writes.unwrap() as f64 * scale).round() as u64;
    assert_eq!(ch.reads, reads, "{name}: reads");
    assert_eq!(ch.writes, writes, "{name}: writes");
    assert_eq!(ch.trims + ch.flushes, 0);
    close(
        &format!("{name} GB read"),
        ch.gb_read / scale,
        t.gb_read.unwrap(),
        0.02,
    );
    close(
        &format!("{name} GB written"),
        ch.gb_written / scale,
        t.gb_written.unwrap(),
        0.02,
    );
    let sizes = t.sizes.as_ref().unwrap().fractions();
    assert_eq!(ch.sizes.len(), 7);
    for (j, want) in sizes.iter().enumerate() {
        assert_eq!(ch.sizes[j].len_bytes, BUCKET_BYTES.get(j).copied());
        close(
            &format!("{name} size {}", BUCKET_NAMES[j]),
            ch.sizes[j].pct / 100.0,
            *want,
            0.02,
        );
    }
    close(
        &format!("{name} sequential"),
        ch.sequential_pct / 100.0,
        t.sequential.unwrap(),
        0.02,
    );
    let qd = ch.qd.as_ref().expect("completions known");
    close(
        &format!("{name} average QD"),
        qd.avg_qd,
        t.avg_qd.unwrap(),
        0.02,
    );
    close(
        &format!("{name} % at QD1"),
        qd.qd1_pct / 100.0,
        t.qd1.unwrap(),
        0.02,
    );
    // The generator's own measurement agrees with characterize's.
    assert_eq!(sum.bytes_read, ch.bytes_read);
    assert_eq!(sum.bytes_written, ch.bytes_written);
    assert_eq!(sum.sequential, ch.sequential_ios);
    assert_eq!(sum.qd1_ios, qd.ios_at_qd1);
    assert_eq!(Some(sum.busy_ns), ch.busy_ns);
    close("generator's average QD", sum.avg_qd(), qd.avg_qd, 1e-9);
    // Every published figure's relation holds (counts and bytes per unit scale).
    for f in &p.published {
        let m = match f.metric.as_str() {
            "reads" => ch.reads as f64 / scale,
            "writes" => ch.writes as f64 / scale,
            "total_ios" => (ch.reads + ch.writes) as f64 / scale,
            "gb_read" => ch.gb_read / scale,
            "gb_written" => ch.gb_written / scale,
            "sequential" => ch.sequential_pct / 100.0,
            "avg_qd" => qd.avg_qd,
            "qd1" => qd.qd1_pct / 100.0,
            "size_rest" => {
                let listed: Vec<&str> = p
                    .published
                    .iter()
                    .filter_map(|g| g.metric.strip_prefix("size_"))
                    .filter(|b| *b != "rest")
                    .collect();
                ch.sizes
                    .iter()
                    .zip(BUCKET_NAMES)
                    .filter(|(_, n)| !listed.contains(n))
                    .map(|(b, _)| b.pct / 100.0)
                    .sum()
            }
            other => {
                let b = other.strip_prefix("size_").expect("known metric");
                let j = BUCKET_NAMES.iter().position(|n| *n == b).expect("bucket");
                ch.sizes[j].pct / 100.0
            }
        };
        match f.relation.as_str() {
            "eq" | "approx" => close(&format!("{name} published {}", f.metric), m, f.value, 0.02),
            "gt" => assert!(
                m > f.value,
                "{name} published {}: {m} not > {}",
                f.metric,
                f.value
            ),
            "range" => assert!(
                m >= f.value && m <= f.value_hi.unwrap(),
                "{name} published {}: {m} outside range",
                f.metric
            ),
            r => panic!("relation {r}"),
        }
    }
    // Every scenario stream shows up, the trace stays inside its footprint, it has
    // idle time and deep-queue peaks, and it lasts about the profile's duration.
    for (s, n) in sink.names.iter().zip(&sink.per_stream) {
        assert!(*n > 0, "{name}: stream {s} issued nothing");
    }
    assert!(sink.max_end_bytes <= sum.footprint_bytes);
    assert!(sum.footprint_bytes <= opts.capacity_bytes);
    assert!(
        qd.max_qd >= 16,
        "{name}: deepest queue {} (want peaks)",
        qd.max_qd
    );
    assert!(ch.idle_ns.unwrap() > ch.busy_ns.unwrap());
    close(
        &format!("{name} duration"),
        ch.duration_ns as f64 / 1e9,
        p.duration_s * scale,
        0.25,
    );
    (ch, sink)
}

#[test]
fn heavy_2011_matches_its_published_table() {
    check_profile("heavy-2011", 0.01);
}

#[test]
fn light_2011_matches_its_published_table() {
    check_profile("light-2011", 0.05);
}

#[test]
fn destroyer_2013_matches_its_published_table() {
    let (_, sink) = check_profile("destroyer-2013", 0.001);
    // Backups run while other scenarios work: I/Os of different streams overlap.
    assert!(sink.overlapping > 100, "overlapping {}", sink.overlapping);
}

#[test]
fn storage_bench_v1_matches_its_published_table() {
    check_profile("storage-bench-v1", 0.005);
}

#[test]
fn ratios_hold_across_scales() {
    let p = builtin("heavy-2011").unwrap();
    let mut seen = Vec::new();
    for scale in [0.004, 0.02] {
        let (_, ch, _) = run(
            &p,
            &SynthOptions {
                scale,
                ..SynthOptions::default()
            },
        );
        seen.push((
            ch.sequential_pct,
            ch.qd.unwrap().avg_qd,
            ch.gb_written / scale,
        ));
    }
    close("sequential across scales", seen[0].0, seen[1].0, 0.02);
    close("average QD across scales", seen[0].1, seen[1].1, 0.02);
    close("GB written per unit scale", seen[0].2, seen[1].2, 0.02);
}

fn write_file(p: &Profile, opts: &SynthOptions, path: &std::path::Path) -> Vec<u8> {
    let meta = trace_meta(p, opts);
    let mut w = TraceWriter::create(path, &meta).unwrap();
    generate(p, opts, &mut w, &mut |_, _| {}).unwrap();
    w.finish().unwrap();
    std::fs::read(path).unwrap()
}

#[test]
fn same_seed_same_file_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let p = builtin("destroyer-2013").unwrap();
    let opts = SynthOptions {
        scale: 0.0004,
        seed: 7,
        ..SynthOptions::default()
    };
    let a = write_file(&p, &opts, &dir.path().join("a.parquet"));
    let b = write_file(&p, &opts, &dir.path().join("b.parquet"));
    assert!(a.len() > 10_000);
    assert!(a == b, "same seed, different bytes");
    let c = write_file(
        &p,
        &SynthOptions {
            seed: 8,
            ..opts.clone()
        },
        &dir.path().join("c.parquet"),
    );
    assert!(a != c, "different seeds gave the same file");
    // The file reads back with the records and metadata written.
    let (meta, recs, streams, _) =
        storbench_trace::read_all(&dir.path().join("a.parquet")).unwrap();
    assert_eq!(recs.len() as u64, (49_810_000.0 * 0.0004f64).round() as u64);
    assert_eq!(meta.source_format.as_deref(), Some("synth:destroyer-2013"));
    assert_eq!(meta.extra.get("synth.seed").map(String::as_str), Some("7"));
    assert!(streams.iter().any(|s| s == "backup"));
}

#[test]
fn footprint_follows_capacity() {
    let p = builtin("light-2011").unwrap();
    for cap in [32u64 << 30, 1 << 40] {
        let opts = SynthOptions {
            scale: 0.005,
            capacity_bytes: cap,
            ..SynthOptions::default()
        };
        let (sum, ch, sink) = run(&p, &opts);
        assert_eq!(
            sum.footprint_bytes,
            (cap as f64 * p.footprint) as u64 / (1 << 20) * (1 << 20)
        );
        assert!(sink.max_end_bytes <= sum.footprint_bytes);
        // Offsets spread over the footprint, not a corner of it.
        assert!(
            sink.max_end_bytes > sum.footprint_bytes / 2,
            "max end {}",
            sink.max_end_bytes
        );
        assert!(ch.footprint_bytes > 0);
    }
    let tiny = SynthOptions {
        capacity_bytes: 64 << 20,
        ..SynthOptions::default()
    };
    let err = generate(&p, &tiny, &mut CharSink::new(), &mut |_, _| {}).unwrap_err();
    // Typed, so each caller can name its own option that sets the footprint.
    assert!(matches!(err, SynthError::FootprintTooSmall { .. }), "{err}");
}

#[test]
fn example_user_profile_reaches_its_targets() {
    let text = include_str!("../../../../docs/profiles/example.toml");
    let p = Profile::from_toml_str("docs/profiles/example.toml", text).unwrap();
    let scale = 0.2;
    let (_, ch, sink) = run(
        &p,
        &SynthOptions {
            scale,
            ..SynthOptions::default()
        },
    );
    assert_eq!(ch.reads + ch.writes, 40_000);
    let t = &p.targets;
    let sizes = t.sizes.as_ref().unwrap().fractions();
    for (j, want) in sizes.iter().enumerate() {
        close(
            &format!("size {}", BUCKET_NAMES[j]),
            ch.sizes[j].pct / 100.0,
            *want,
            0.03,
        );
    }
    close(
        "sequential",
        ch.sequential_pct / 100.0,
        t.sequential.unwrap(),
        0.03,
    );
    let qd = ch.qd.unwrap();
    close("average QD", qd.avg_qd, t.avg_qd.unwrap(), 0.03);
    close("% at QD1", qd.qd1_pct / 100.0, t.qd1.unwrap(), 0.03);
    assert_eq!(sink.names, ["editor", "compiler", "backup"]);
    // No read/write target: the streams' read fractions decide (0.5 .. 0.7).
    let read_share = ch.reads as f64 / 40_000.0;
    assert!((0.45..0.7).contains(&read_share), "read share {read_share}");
}

#[test]
fn profile_without_targets_follows_its_streams() {
    let text = r#"
name = "plain"
ios = 20000
duration_s = 60
[[stream]]
name = "seq-reader"
read_fraction = 1.0
sequential = 0.9
burst = 0.0
run_len = 50
read_sizes = { "128k" = 1 }
write_sizes = { "4k" = 1 }
"#;
    let p = Profile::from_toml_str("plain.toml", text).unwrap();
    let (_, ch, _) = run(&p, &SynthOptions::default());
    assert_eq!(ch.reads, 20_000);
    assert_eq!(ch.sizes[5].count, 20_000);
    let qd = ch.qd.unwrap();
    // No bursts: every I/O is issued alone.
    assert_eq!(qd.ios_at_qd1, 20_000);
    assert!((qd.avg_qd - 1.0).abs() < 1e-9);
    assert!(
        (ch.sequential_pct - 90.0).abs() < 2.0,
        "{}",
        ch.sequential_pct
    );
}

#[test]
fn bad_profiles_name_file_and_field() {
    let base = include_str!("../../../../docs/profiles/example.toml");
    let cases = [
        (
            base.replace("mixing = 0.1", "mixing = 0.1\nmixng = 2"),
            "mixng",
        ),
        (
            base.replace("read_fraction = 0.5", "read_fraction = 1.5"),
            "read_fraction",
        ),
        (
            base.replace("windows = [[0.0, 1.0]]", "windows = [[0.0, 0.1]]"),
            "no stream is active",
        ),
        (
            base.replace("\"4k\" = 0.45", "\"4k\" = -1"),
            "targets.sizes.4k",
        ),
        (
            base.replace("avg_qd = 3.0", "avg_qd = 40.0"),
            "targets.avg_qd",
        ),
        (base.replace("ios = 200000", ""), "ios"),
        (
            base.replace("region = [0.1, 0.4]", "region = [0.8, 0.4]"),
            "region",
        ),
    ];
    for (text, needle) in cases {
        let err = Profile::from_toml_str("my.toml", &text)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("my.toml"), "{err}");
        assert!(err.contains(needle), "want {needle:?} in: {err}");
    }
    let err = load("no-such-profile").unwrap_err();
    assert_eq!(err.to_string(), "unknown profile `no-such-profile`");
    let hint = err.hint().expect("an unknown profile has a hint");
    assert!(
        hint.contains("heavy-2011") && !hint.contains("hint:"),
        "{hint}"
    );
    let p = builtin("heavy-2011").unwrap();
    let bad = SynthOptions {
        scale: 0.0,
        ..SynthOptions::default()
    };
    let err = generate(&p, &bad, &mut CharSink::new(), &mut |_, _| {}).unwrap_err();
    assert!(err.to_string().contains("--scale"), "{err}");
}

#[test]
fn builtin_profiles_parse_and_state_their_assumptions() {
    for (name, _) in BUILTIN {
        let p = builtin(name).unwrap();
        assert_eq!(p.name, name);
        assert!(!p.assumptions.is_empty(), "{name} states no assumption");
        assert!(!p.published.is_empty());
        assert!(p.streams.len() >= 6, "{name}: scenario streams");
    }
    assert_eq!(builtin("destroyer-2013").unwrap().total_ios(), 49_810_000);
}
