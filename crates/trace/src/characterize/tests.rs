//! Characterizer tests: figures on small traces with known answers, and the columnar
//! loops against a per-record model of the definitions on random traces.

use super::*;

fn io(op: Op, off: u64, len: u64, issue: u64, complete: Option<u64>) -> IoRecord {
    IoRecord {
        complete_ns: complete,
        ..IoRecord::new(op, off, len, issue)
    }
}

/// Characterizes `recs` through the columnar loops.
fn run(recs: &[IoRecord]) -> Characterization {
    let mut c = Characterizer::new();
    for r in recs {
        c.push(r);
    }
    c.finish()
}

#[test]
fn the_edges_of_u64_match_the_per_record_model() {
    // Issue times 2^62 and 2^63 apart and near u64::MAX, service times past 2^32 and
    // past 2^53 (the histograms' integer way) and completions saturating at u64::MAX,
    // offsets and ends at u64::MAX.
    let mut rng = crate::test_rng::XorShift(0xED6E_0F64);
    for round in 0..40 {
        let mut t = rng.below(1 << 40);
        let recs: Vec<IoRecord> = (0..1 + rng.below(20_000))
            .map(|_| {
                t = t.saturating_add(match rng.below(8) {
                    0 => 1 << (62 + rng.below(2)),
                    1 => 0,
                    _ => rng.below(1 << (20 + round % 40)),
                });
                let svc = match rng.below(6) {
                    0 => 0,
                    1 => u64::MAX,
                    2 => 1 << 53,
                    3 => (1 << 32) + rng.below(1 << 40),
                    _ => rng.below(1 << (10 + round % 50)),
                };
                let op = [Op::Read, Op::Write, Op::Trim, Op::Flush][rng.below(4) as usize];
                let off = [0, 4096, u64::MAX - 4096, u64::MAX][rng.below(4) as usize];
                let len = [0, 4096, 1 << 20][rng.below(3) as usize];
                let len = len.min(u64::MAX - off);
                io(
                    op,
                    off,
                    len,
                    t,
                    (rng.below(10) > 0).then(|| t.saturating_add(svc)),
                )
            })
            .collect();
        let c = run(&recs);
        assert_eq!(c.ios_total as usize, recs.len(), "round {round}");
        let mut m = Model::new();
        recs.iter().for_each(|r| m.push(r));
        assert_eq!(c, m.finish(), "round {round}");
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9 * b.abs().max(1.0)
}

#[test]
fn overlapping_and_disjoint_intervals_give_busy_time_and_qd() {
    // A [0,100) and B [50,150) overlap; C [300,400) is alone.
    let c = run(&[
        io(Op::Read, 0, 4096, 0, Some(100)),
        io(Op::Write, 1 << 20, 4096, 50, Some(150)),
        io(Op::Read, 8192, 4096, 300, Some(400)),
    ]);
    assert_eq!(c.busy_ns, Some(250));
    assert_eq!(c.busy_read_ns, Some(200));
    assert_eq!(c.busy_write_ns, Some(100));
    assert_eq!(c.duration_ns, 400);
    assert_eq!(c.idle_ns, Some(150));
    let q = c.qd.unwrap();
    assert!(close(q.avg_qd, 300.0 / 250.0), "{}", q.avg_qd);
    assert_eq!(q.max_qd, 2);
    assert_eq!(q.ios_at_qd1, 2);
    assert!(close(q.qd1_pct, 200.0 / 3.0));
    // QD1 during [0,50) [100,150) [300,400) = 200 ns; QD2 during [50,100) = 50 ns.
    assert!(close(q.histogram[0].busy_pct, 80.0));
    assert!(close(q.histogram[1].busy_pct, 20.0));
    assert_eq!(q.histogram[0].issued_ios, 2);
    assert_eq!(q.histogram[1].issued_ios, 1);
    let sum: f64 = q.histogram.iter().map(|b| b.busy_pct).sum();
    assert!(close(sum, 100.0));
}

#[test]
fn completion_at_issue_instant_is_not_outstanding() {
    let c = run(&[
        io(Op::Read, 0, 4096, 0, Some(100)),
        io(Op::Read, 4096, 4096, 100, Some(200)),
        io(Op::Read, 8192, 4096, 150, Some(160)),
    ]);
    let q = c.qd.unwrap();
    assert_eq!(
        q.ios_at_qd1, 2,
        "second I/O issued as first completes is at QD1"
    );
    assert_eq!(c.busy_ns, Some(200));
    assert!(close(q.avg_qd, 210.0 / 200.0));
    assert_eq!(q.histogram[1].issued_ios, 1);
}

#[test]
fn deep_queue_histogram_buckets() {
    // 40 I/Os issued at t=0..39, all completing at 1000: QD climbs to 40.
    let recs: Vec<_> = (0..40)
        .map(|i| io(Op::Write, i * 4096, 4096, i, Some(1000)))
        .collect();
    let c = run(&recs);
    let q = c.qd.unwrap();
    assert_eq!(q.max_qd, 40);
    assert_eq!(c.busy_ns, Some(1000));
    let svc: u64 = (0..40).map(|i| 1000 - i).sum();
    assert!(close(q.avg_qd, svc as f64 / 1000.0));
    // Issued QDs 1..=40: buckets 1,2,3,4,5-8,9-16,17-32,33-64.
    let issued: Vec<u64> = q.histogram.iter().map(|b| b.issued_ios).collect();
    assert_eq!(issued, vec![1, 1, 1, 1, 4, 8, 16, 8, 0]);
    // At QD 40 from t=39 to t=1000 = 961 of 1000 ns.
    assert!(close(q.histogram[7].busy_pct, (961.0 + 7.0) / 10.0));
}

#[test]
fn sequential_is_per_direction() {
    let c = run(&[
        io(Op::Read, 0, 4096, 0, None),
        io(Op::Read, 4096, 4096, 1, None),   // seq (read)
        io(Op::Write, 8192, 4096, 2, None),  // first write: not seq
        io(Op::Read, 8192, 4096, 3, None),   // seq: previous read ended at 8192
        io(Op::Write, 12288, 8192, 4, None), // seq (write)
        io(Op::Trim, 20480, 4096, 5, None),  // not data
        io(Op::Write, 20480, 4096, 6, None), // seq: trim in between does not count
        io(Op::Read, 0, 4096, 7, None),      // not seq
    ]);
    assert_eq!(c.sequential_ios, 4);
    assert!(close(c.sequential_pct, 4.0 * 100.0 / 7.0));
    assert!(close(c.sequential_read_pct, 50.0));
    assert!(close(c.sequential_write_pct, 200.0 / 3.0));
    assert!(c.qd.is_none() && c.busy_ns.is_none() && c.idle_ns.is_none());
    assert_eq!(c.duration_ns, 7);
}

#[test]
fn sequential_is_per_device() {
    use crate::model::DeviceId;
    let on = |d: u32, op, off, t| IoRecord {
        device: Some(DeviceId(d)),
        ..io(op, off, 4096, t, None)
    };
    // Two devices interleaved, each reading sequentially: every I/O after each
    // device's first is sequential. Across devices the offsets are unrelated.
    let c = run(&[
        on(0, Op::Read, 0, 0),
        on(1, Op::Read, 1 << 30, 1),
        on(0, Op::Read, 4096, 2),
        on(1, Op::Read, (1 << 30) + 4096, 3),
        io(Op::Read, 8192, 4096, 4, None), // no device: its own sequence
        on(0, Op::Read, 8192, 5),
        on(1, Op::Write, 0, 6),
        on(0, Op::Write, 4096, 7), // first write on device 0
    ]);
    assert_eq!(c.sequential_ios, 3);
    assert!(close(c.sequential_read_pct, 50.0));
    assert!(close(c.sequential_write_pct, 0.0));
}

#[test]
fn counts_bytes_sizes_and_footprint() {
    let c = run(&[
        io(Op::Read, 0, 4096, 0, None),
        io(Op::Read, 2048, 4096, 1, None),
        io(Op::Write, 10_000, 1, 2, None),
        io(Op::Write, 1 << 30, 131072, 3, None),
        io(Op::Write, 0, 16384, 4, None),
        io(Op::Trim, 1 << 40, 1 << 30, 5, None),
        io(Op::Flush, 0, 0, 6, None),
    ]);
    assert_eq!(
        (c.reads, c.writes, c.trims, c.flushes, c.ios_total),
        (2, 3, 1, 1, 7)
    );
    assert_eq!(c.bytes_read, 8192);
    assert_eq!(c.bytes_written, 1 + 131072 + 16384);
    assert_eq!(c.bytes_trimmed, 1 << 30);
    assert!(close(c.gb_written, (1.0 + 131072.0 + 16384.0) / 1e9));
    let counts: Vec<u64> = c.sizes.iter().map(|b| b.count).collect();
    assert_eq!(counts, vec![2, 0, 1, 0, 0, 1, 1]);
    assert!(close(c.sizes[0].pct, 40.0));
    assert_eq!(c.sizes[6].label, "other");
    // [0,16384) covers the reads; plus 1 byte at 10000 (inside) and 128K at 1 GiB.
    assert_eq!(c.footprint_bytes, 16384 + 131072);
    assert_eq!(c.footprint_granularity_bytes, 1);
}

#[test]
fn inter_arrival_and_service_percentiles() {
    let recs: Vec<_> = (0..1000u64)
        .map(|i| {
            io(
                Op::Read,
                i * 4096,
                4096,
                i * 10_000,
                Some(i * 10_000 + 1000 + i),
            )
        })
        .collect();
    let c = run(&recs);
    let ia = c.inter_arrival_us.unwrap();
    assert_eq!(ia.count, 999);
    assert!(
        (ia.p50 - 10.0).abs() < 0.1 && (ia.p99 - 10.0).abs() < 0.1,
        "{ia:?}"
    );
    let s = c.service_time_us.unwrap();
    // Service 1000..1999 ns: p50 ~ 1.5 us, max 1.999 us, within the 0.8% bucket error.
    assert!((s.p50 - 1.4995).abs() < 0.015, "{s:?}");
    assert!((s.max - 1.999).abs() < 1e-9);
    assert!((s.mean - 1.4995).abs() < 1e-9);
    assert!(close(c.sequential_read_pct, 99.9));
}

#[test]
fn out_of_order_issue_is_counted_and_clamped() {
    let c = run(&[
        io(Op::Read, 0, 4096, 100, Some(200)),
        io(Op::Read, 0, 4096, 50, Some(120)),
    ]);
    assert_eq!(c.issue_order_violations, 1);
    // Second treated as issued at 100, complete at 170 (service kept at 70).
    assert_eq!(c.busy_ns, Some(100));
    assert_eq!(c.qd.unwrap().max_qd, 2);
}

#[test]
fn json_round_trip_has_schema_version() {
    let c = run(&[io(Op::Read, 0, 4096, 0, Some(10))]);
    let j = serde_json::to_string(&c).unwrap();
    assert!(j.contains("\"schema_version\":3"));
    let back: Characterization = serde_json::from_str(&j).unwrap();
    assert_eq!(back, c);
    assert!(c.to_table().contains("average QD"));
}

/// The definitions one record at a time (the characterizer before it went columnar):
/// the columnar loops must give exactly the same figures.
struct Model {
    counts: [u64; 4],
    bytes: [u64; 4],
    sizes: [u64; SIZE_BUCKETS_BYTES.len() + 1],
    prev_end: std::collections::HashMap<(usize, usize), u64>,
    seq: [u64; 2],
    first_issue_ns: Option<u64>,
    last_issue_ns: u64,
    last_event_ns: u64,
    order_violations: u64,
    inter_arrival: hist::LogHist,
    with_completion: u64,
    busy: [Option<(u64, u64)>; 3],
    busy_total: [u64; 3],
    service_sum_ns: u128,
    service: hist::LogHist,
    outstanding: Vec<u64>,
    sweep_ns: u64,
    qd_time_ns: [u64; QD_BUCKET_MIN.len()],
    qd_issued: [u64; QD_BUCKET_MIN.len()],
    max_qd: u32,
    at_qd1: u64,
    /// One footprint per device slot (0: no device).
    footprint: std::collections::BTreeMap<usize, Footprint>,
    /// Device names by id (None: shown as `device ID`).
    names: Option<Vec<String>>,
    /// The trace-wide model's per-device models, each fed that device's records with
    /// the trace-wide effective times (None in a per-device model).
    per_device: Option<std::collections::BTreeMap<usize, Model>>,
}

fn model_qd_bucket(qd: u32) -> usize {
    QD_BUCKET_MIN.iter().rposition(|&lo| lo <= qd).unwrap()
}

impl Model {
    fn new() -> Self {
        Model {
            counts: [0; 4],
            bytes: [0; 4],
            sizes: [0; SIZE_BUCKETS_BYTES.len() + 1],
            prev_end: Default::default(),
            seq: [0; 2],
            first_issue_ns: None,
            last_issue_ns: 0,
            last_event_ns: 0,
            order_violations: 0,
            inter_arrival: hist::LogHist::new(),
            with_completion: 0,
            busy: [None; 3],
            busy_total: [0; 3],
            service_sum_ns: 0,
            service: hist::LogHist::new(),
            outstanding: Vec::new(),
            sweep_ns: 0,
            qd_time_ns: [0; QD_BUCKET_MIN.len()],
            qd_issued: [0; QD_BUCKET_MIN.len()],
            max_qd: 0,
            at_qd1: 0,
            footprint: Default::default(),
            names: None,
            per_device: Some(Default::default()),
        }
    }

    fn account(&mut self, t: u64) {
        let qd = self.outstanding.len() as u32;
        if qd > 0 {
            self.qd_time_ns[model_qd_bucket(qd)] += t - self.sweep_ns;
        }
        self.sweep_ns = t;
    }

    #[allow(
        clippy::too_many_lines,
        reason = "the plain reference model the fast path is checked against, kept whole to read against METHODOLOGY.md"
    )]
    fn push(&mut self, r: &IoRecord) {
        let mut issue = r.issue_ns;
        match self.first_issue_ns {
            None => self.first_issue_ns = Some(issue),
            Some(_) => {
                if issue < self.last_issue_ns {
                    self.order_violations += 1;
                    issue = self.last_issue_ns;
                }
                self.inter_arrival.add(issue - self.last_issue_ns);
            }
        }
        self.last_issue_ns = issue;
        self.last_event_ns = self.last_event_ns.max(issue);
        if let Some(per) = &mut self.per_device {
            let dev = r.device.map_or(0, |d| d.0 as usize + 1);
            let mut rec = *r;
            rec.issue_ns = issue;
            rec.complete_ns = r
                .complete_ns
                .map(|c| issue.saturating_add(c.saturating_sub(r.issue_ns)));
            per.entry(dev)
                .or_insert_with(|| Model {
                    per_device: None,
                    ..Model::new()
                })
                .push(&rec);
        }
        let o = r.op.index();
        self.counts[o] += 1;
        self.bytes[o] += r.len_bytes;
        if r.op.is_data() {
            let b = SIZE_BUCKETS_BYTES
                .iter()
                .position(|&s| s == r.len_bytes)
                .unwrap_or(SIZE_BUCKETS_BYTES.len());
            self.sizes[b] += 1;
            let dev = r.device.map_or(0, |d| d.0 as usize + 1);
            let end = r.offset_bytes.saturating_add(r.len_bytes);
            if self.prev_end.insert((dev, o), end) == Some(r.offset_bytes) {
                self.seq[o] += 1;
            }
            self.footprint
                .entry(dev)
                .or_default()
                .add(r.offset_bytes, end);
        }
        let Some(c) = r.complete_ns else { return };
        let complete = issue.saturating_add(c.saturating_sub(r.issue_ns));
        self.last_event_ns = self.last_event_ns.max(complete);
        self.with_completion += 1;
        let svc = complete - issue;
        self.service_sum_ns += u128::from(svc);
        if r.op.is_data() {
            self.service.add(svc);
        }
        for class in [
            Some(0),
            (r.op == Op::Read).then_some(1),
            (r.op == Op::Write).then_some(2),
        ]
        .into_iter()
        .flatten()
        {
            match &mut self.busy[class] {
                Some((_, e)) if issue <= *e => *e = (*e).max(complete),
                cur => {
                    if let Some((s, e)) = cur.replace((issue, complete)) {
                        self.busy_total[class] += e - s;
                    }
                }
            }
        }
        while let Some(&first) = self.outstanding.first() {
            if first > issue {
                break;
            }
            self.account(first);
            self.outstanding.remove(0);
        }
        self.account(issue);
        if self.outstanding.is_empty() {
            self.at_qd1 += 1;
        }
        if complete > issue {
            let at = self.outstanding.partition_point(|&x| x <= complete);
            self.outstanding.insert(at, complete);
        }
        let qd = self.outstanding.len() as u32 + u32::from(complete <= issue);
        self.max_qd = self.max_qd.max(qd);
        self.qd_issued[model_qd_bucket(qd)] += 1;
    }

    #[allow(
        clippy::too_many_lines,
        reason = "the plain reference model the fast path is checked against, kept whole to read against METHODOLOGY.md"
    )]
    fn finish(mut self) -> Characterization {
        while !self.outstanding.is_empty() {
            let c = self.outstanding[0];
            self.account(c);
            self.outstanding.remove(0);
        }
        let busy: Vec<u64> = (0..3)
            .map(|k| self.busy_total[k] + self.busy[k].map_or(0, |(s, e)| e - s))
            .collect();
        let pct = |n: u64, d: u64| {
            if d == 0 {
                0.0
            } else {
                n as f64 * 100.0 / d as f64
            }
        };
        let data = self.counts[0] + self.counts[1];
        let have = self.with_completion > 0 && busy[0] > 0;
        let duration_ns = self.first_issue_ns.map_or(0, |f| self.last_event_ns - f);
        let qd = have.then(|| QdStats {
            avg_qd: if busy[0] == 0 {
                0.0
            } else {
                self.service_sum_ns as f64 / busy[0] as f64
            },
            max_qd: self.max_qd,
            ios_at_qd1: self.at_qd1,
            qd1_pct: pct(self.at_qd1, self.with_completion),
            histogram: (0..QD_BUCKET_MIN.len())
                .map(|i| QdBucket {
                    qd_min: QD_BUCKET_MIN[i],
                    qd_max: QD_BUCKET_MIN.get(i + 1).map(|n| n - 1),
                    busy_pct: if busy[0] == 0 {
                        0.0
                    } else {
                        self.qd_time_ns[i] as f64 * 100.0 / busy[0] as f64
                    },
                    issued_ios: self.qd_issued[i],
                    issued_pct: pct(self.qd_issued[i], self.with_completion),
                })
                .collect(),
        });
        let mut footprint_bytes = 0;
        let mut footprint_granularity_bytes = 1;
        let mut footprint_per_device = Vec::new();
        for (&slot, f) in self.footprint.iter_mut() {
            let (b, g) = f.finish();
            if b == 0 {
                continue;
            }
            footprint_bytes += b;
            footprint_granularity_bytes = footprint_granularity_bytes.max(g);
            footprint_per_device.push(DeviceFootprint {
                device: slot.checked_sub(1).map(|id| match &self.names {
                    Some(n) => n[id].clone(),
                    None => format!("device {id}"),
                }),
                footprint_bytes: b,
            });
        }
        footprint_per_device.sort_by(|a, b| a.device.cmp(&b.device));
        Characterization {
            schema_version: SCHEMA_VERSION,
            ios_total: self.counts.iter().sum(),
            reads: self.counts[0],
            writes: self.counts[1],
            trims: self.counts[2],
            flushes: self.counts[3],
            bytes_read: self.bytes[0],
            bytes_written: self.bytes[1],
            bytes_trimmed: self.bytes[2],
            gb_read: self.bytes[0] as f64 / 1e9,
            gb_written: self.bytes[1] as f64 / 1e9,
            sizes: (0..self.sizes.len())
                .map(|i| {
                    let len = SIZE_BUCKETS_BYTES.get(i).copied();
                    SizeBucket {
                        label: len.map_or("other".to_owned(), |l| format!("{}K", l / 1024)),
                        len_bytes: len,
                        count: self.sizes[i],
                        pct: pct(self.sizes[i], data),
                    }
                })
                .collect(),
            sequential_ios: self.seq[0] + self.seq[1],
            sequential_pct: pct(self.seq[0] + self.seq[1], data),
            sequential_read_pct: pct(self.seq[0], self.counts[0]),
            sequential_write_pct: pct(self.seq[1], self.counts[1]),
            duration_ns,
            ios_with_completion: self.with_completion,
            busy_ns: have.then_some(busy[0]),
            busy_read_ns: have.then_some(busy[1]),
            busy_write_ns: have.then_some(busy[2]),
            idle_ns: have.then(|| duration_ns.saturating_sub(busy[0])),
            qd,
            service_time_us: if have {
                self.service.percentiles(1000.0)
            } else {
                None
            },
            footprint_bytes,
            footprint_per_device,
            footprint_granularity_bytes,
            inter_arrival_us: self.inter_arrival.percentiles(1000.0),
            issue_order_violations: self.order_violations,
            per_device: self.per_device_stats(),
        }
    }

    /// The per-device models' figures, as [`DeviceStats`].
    fn per_device_stats(&mut self) -> Vec<DeviceStats> {
        let names = self.names.clone();
        let mut out: Vec<DeviceStats> = self
            .per_device
            .take()
            .unwrap_or_default()
            .into_iter()
            .map(|(slot, m)| {
                let c = m.finish();
                DeviceStats {
                    device: slot.checked_sub(1).map(|id| match &names {
                        Some(n) => n[id].clone(),
                        None => format!("device {id}"),
                    }),
                    ios: c.ios_total,
                    reads: c.reads,
                    writes: c.writes,
                    sequential_pct: c.sequential_pct,
                    footprint_bytes: c.footprint_bytes,
                    duration_ns: c.duration_ns,
                    ios_with_completion: c.ios_with_completion,
                    busy_ns: c.busy_ns,
                    idle_ns: c.idle_ns,
                    avg_qd: c.qd.as_ref().map(|q| q.avg_qd),
                    qd1_pct: c.qd.as_ref().map(|q| q.qd1_pct),
                }
            })
            .collect();
        out.sort_by(|a, b| a.device.cmp(&b.device));
        out
    }
}

/// A random trace exercising every branch: all ops, three devices and none,
/// completions all / some / none known, zero-time and deep-queue I/Os, equal and
/// out-of-order issue times (only when `ordered` is false), sequential runs, and
/// offsets aligned to 4 KiB, to 512 B or not at all.
fn random_trace(seed: u64, n: usize, completions: u8, ordered: bool) -> Vec<IoRecord> {
    let mut rng = crate::test_rng::XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut next = move || rng.next();
    let mut t = 1_000u64;
    let mut ends = [0u64; 8];
    (0..n)
        .map(|_| {
            let r = next();
            let op = match r % 20 {
                0 => Op::Trim,
                1 => Op::Flush,
                2..=11 => Op::Read,
                _ => Op::Write,
            };
            let dev = ((r >> 5) % 4) as u32;
            let len = match (r >> 8) % 10 {
                0 => 0,
                1 => 512 * ((r >> 12) % 9 + 1),
                2 => (r >> 12) % 10_000 + 1,
                3 => 1 << 22,
                _ => 4096 << ((r >> 12) % 6),
            };
            let slot = (dev as usize) * 2 + op.index() % 2;
            let off = match (r >> 16) % 4 {
                0 | 1 => ends[slot],
                2 => ((r >> 20) % (1 << 20)) * 4096,
                _ => (r >> 20) % (1 << 34),
            };
            ends[slot] = off + len;
            t += match (r >> 24) % 8 {
                0 => 0,
                1 if !ordered => 0,
                _ => (r >> 28) % 50_000,
            };
            let issue = if !ordered && (r >> 30) % 50 == 0 {
                t.saturating_sub((r >> 32) % 100_000)
            } else {
                t
            };
            let svc = match (r >> 40) % 10 {
                0 => 0,
                1 => 50_000_000 + (r >> 44) % 10_000_000,
                _ => (r >> 44) % 500_000,
            };
            let complete = match completions {
                0 => None,
                1 => ((r >> 50) % 3 != 0).then_some(issue + svc),
                _ => Some(issue + svc),
            };
            IoRecord {
                complete_ns: complete,
                device: (dev > 0).then(|| crate::model::DeviceId(dev - 1)),
                ..IoRecord::new(op, off, len, issue)
            }
        })
        .collect()
}

#[test]
fn columnar_loops_match_the_per_record_model() {
    for seed in 1..=6u64 {
        for completions in 0..3u8 {
            let recs = random_trace(seed, 30_000, completions, seed % 2 == 0);
            let mut m = Model::new();
            recs.iter().for_each(|r| m.push(r));
            let want = m.finish();
            assert_eq!(run(&recs), want, "seed {seed} completions {completions}");
        }
    }
}

#[test]
fn parquet_path_matches_the_per_record_model() {
    use crate::model::TraceMeta;
    use crate::store::TraceWriter;
    let dir = tempfile::tempdir().unwrap();
    for (seed, completions) in [(7u64, 2u8), (8, 1), (9, 0)] {
        // More rows than a reader batch and a chunk; devices interned in order.
        let recs = random_trace(seed, 150_000, completions, seed != 7);
        let path = dir.path().join(format!("t{seed}.parquet"));
        let mut w = TraceWriter::create(&path, &TraceMeta::default()).unwrap();
        for d in 0..3 {
            w.intern_device(&format!("8,{d}"));
        }
        recs.iter().for_each(|r| w.write(r).unwrap());
        w.finish().unwrap();
        // A file out of issue order is sorted (stably) before it is measured.
        let mut in_order = recs.clone();
        in_order.sort_by_key(|r| r.issue_ns);
        let mut max = 0;
        let out_of_order = recs
            .iter()
            .filter(|r| {
                let before = r.issue_ns < max;
                max = max.max(r.issue_ns);
                before
            })
            .count() as u64;
        assert_eq!(out_of_order > 0, seed == 7);
        let mut m = Model::new();
        m.names = Some((0..3).map(|d| format!("8,{d}")).collect());
        in_order.iter().for_each(|r| m.push(r));
        let want = Characterization {
            issue_order_violations: out_of_order,
            ..m.finish()
        };
        assert_eq!(characterize_file(&path).unwrap(), want, "seed {seed}");
    }
}

#[test]
fn completions_nearly_in_order_match_the_per_record_model() {
    // A device completing about first in, first out (the insertion-sort path of the QD
    // sweep), then a stretch far out of order (the radix path), then in order again:
    // the sweep switches between the two sorts and must give the model's figures.
    let mut rng = crate::test_rng::XorShift(0x1234_5678);
    let mut rnd = move || rng.next();
    let mut t = 0u64;
    let mut server_free = 0u64;
    let recs: Vec<IoRecord> = (0..120_000u64)
        .map(|i| {
            let r = rnd();
            t += r % 30_000;
            let op = if r % 3 == 0 { Op::Write } else { Op::Read };
            let complete = if (40_000..60_000).contains(&i) {
                // Out of order: uniform service times well above the gaps.
                t + 50_000 + (r >> 20) % 450_000
            } else if r % 17 == 0 {
                t // zero service time: never outstanding
            } else {
                // One server, first in first out, with a little jitter.
                server_free = server_free.max(t) + 20_000 + (r >> 20) % 5_000;
                server_free + (r >> 40) % 3_000
            };
            IoRecord {
                complete_ns: Some(complete),
                ..IoRecord::new(op, (r >> 8) % (1 << 30) * 512, 4096, t)
            }
        })
        .collect();
    let mut m = Model::new();
    recs.iter().for_each(|r| m.push(r));
    let want = m.finish();
    let got = run(&recs);
    assert_eq!(got, want);
    // The trace does queue: more than QD1, not only QD1.
    let q = got.qd.unwrap();
    assert!(q.max_qd > 4 && q.ios_at_qd1 > 0, "{q:?}");
}

/// Completions that stress the QD sweep's calendar and window: times on a 1 us grid
/// (completions tied with issues and with each other), bursts of issues at one instant
/// then a long idle gap (a gap holding many completions in random order, past the
/// window), zero and 1 ns service times, service times far longer than a batch, and one
/// giant outlier completing after everything else.
fn qd_stress_trace(seed: u64, n: usize) -> Vec<IoRecord> {
    let mut rng = crate::test_rng::XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut t = 1_000_000u64;
    (0..n)
        .map(|i| {
            let r = rng.next();
            t += match r % 16 {
                0..=4 => 0,
                5 => 1,
                6 if (r >> 58).is_multiple_of(4) => 5_000_000,
                _ => (r >> 8) % 40 * 1000,
            };
            let svc = match (r >> 16) % 16 {
                0 | 1 => 0,
                2 => 1,
                3 | 4 => 20_000_000 + (r >> 24) % 100 * 1_000_000,
                _ => (r >> 24) % 400 * 1000,
            };
            let svc = if i == n - n / 8 { 1 << 50 } else { svc };
            let op = match (r >> 40) % 8 {
                0 => Op::Flush,
                1..=4 => Op::Read,
                _ => Op::Write,
            };
            IoRecord {
                complete_ns: Some(t + svc),
                ..IoRecord::new(op, (r >> 44) % 4096 * 4096, 4096, t)
            }
        })
        .collect()
}

#[test]
fn qd_stress_traces_match_the_per_record_model() {
    use crate::model::TraceMeta;
    use crate::store::TraceWriter;
    let dir = tempfile::tempdir().unwrap();
    for seed in 1..=4u64 {
        let recs = qd_stress_trace(seed, 40_000);
        let mut m = Model::new();
        recs.iter().for_each(|r| m.push(r));
        let want = m.finish();
        assert_eq!(run(&recs), want, "seed {seed}");
        // The trace reaches the open QD bucket and has idle time between bursts.
        let q = want.qd.as_ref().unwrap();
        assert!(q.max_qd > 65 && q.ios_at_qd1 > 0, "seed {seed}: {q:?}");
        if seed == 1 {
            let path = dir.path().join("stress.parquet");
            let mut w = TraceWriter::create(&path, &TraceMeta::default()).unwrap();
            recs.iter().for_each(|r| w.write(r).unwrap());
            w.finish().unwrap();
            assert_eq!(characterize_file(&path).unwrap(), want);
        }
    }
}
