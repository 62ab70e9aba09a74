//! Decoding ring buffer pages captured from a real kernel (Linux 6.18, x86_64), checked
//! against the kernel's own text rendering of the same buffer (`trace`, read before the
//! pages were consumed from `trace_pipe_raw`).
//!
//! The capture: a loop device, `dev == 7340032` filter on block_rq_issue/complete,
//! fio 40 direct 4k-32k random reads/writes, then `blkdiscard -o 1M -l 1M`; udev's
//! readahead probes of the new device (RA) are in it too.

use std::path::PathBuf;
use storbench_record::block::{BlockDecoder, BlockEvent};
use storbench_record::format::EventFormat;
use storbench_record::pair::{Merger, PairConfig, Pairer};
use storbench_record::ringbuf::{decode_page, EventHeaderLayout, MissedEvents, PageLayout};
use storbench_trace::Op;

fn data(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn raw(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// One line of the text rendering, reduced to what both sides know.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    cpu: usize,
    ts_us: u64,
    issue: bool,
    sector: u64,
    nr: u32,
    comm_pid: Option<(String, i32)>,
}

fn parse_text(text: &str) -> Vec<Seen> {
    let mut v = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        // "   fio-25963   [000] .....  2551.008574: block_rq_issue: 7,0 WS 4096 () 1976 + 8 be,0,4 [fio]"
        let (head, rest) = line.split_once("] ").expect("cpu field");
        let (task, cpu) = head.rsplit_once('[').expect("cpu");
        let task = task.trim();
        let (comm, pid) = task.rsplit_once('-').expect("comm-pid");
        let mut w = rest.split_whitespace();
        let _flags = w.next();
        let ts = w.next().expect("ts").trim_end_matches(':');
        let (s, us) = ts.split_once('.').expect("sec.usec");
        let ts_us = s.parse::<u64>().unwrap() * 1_000_000 + us.parse::<u64>().unwrap();
        let event = w.next().expect("event");
        let issue = event == "block_rq_issue:";
        let fields: Vec<&str> = w.collect();
        let plus = fields.iter().position(|f| *f == "+").expect("sector + nr");
        v.push(Seen {
            cpu: cpu.parse().unwrap(),
            ts_us,
            issue,
            sector: fields[plus - 1].parse().unwrap(),
            nr: fields[plus + 1].parse().unwrap(),
            comm_pid: issue.then(|| (comm.to_owned(), pid.parse().unwrap())),
        });
    }
    v
}

#[test]
fn decodes_captured_pages_like_the_kernel_renders_them() {
    let layout = PageLayout::parse(&data("header_page")).unwrap();
    let hdr = EventHeaderLayout::parse(&data("header_event")).unwrap();
    assert_eq!(layout, PageLayout::LP64);
    let issue = EventFormat::parse(&data("block_rq_issue.format")).unwrap();
    let complete = EventFormat::parse(&data("block_rq_complete.format")).unwrap();
    let dec = BlockDecoder::new(&issue, &complete, None).unwrap();

    let mut decoded = Vec::new();
    let mut per_cpu = Vec::new();
    for cpu in 0..2 {
        let bytes = raw(&format!("linux-6.18-loop.cpu{cpu}.raw"));
        assert_eq!(bytes.len() % 4096, 0);
        let mut evs = Vec::new();
        for page in bytes.chunks(4096) {
            let events = decode_page(page, &layout, &hdr).unwrap();
            assert_eq!(events.header().missed, MissedEvents::None);
            for e in events {
                let e = e.expect("clean page");
                let ev = dec.decode(e.payload).expect("a block event");
                assert_eq!(ev.dev(), 7 << 20, "loop0 only (kernel filter)");
                let (issue, sector, nr, comm_pid) = match ev {
                    BlockEvent::Issue(i) => (
                        true,
                        i.sector,
                        i.nr_sector,
                        Some((i.comm.to_string_lossy(), i.pid)),
                    ),
                    BlockEvent::Complete(c) => (false, c.sector, c.nr_sector, None),
                    BlockEvent::Requeue(_) => panic!("no requeue in the capture"),
                };
                decoded.push(Seen {
                    cpu,
                    // The kernel prints ns2usecs(ts) = (ts + 500) / 1000.
                    ts_us: (e.ts + 500) / 1000,
                    issue,
                    sector,
                    nr,
                    comm_pid,
                });
                evs.push((e.ts, ev));
            }
        }
        per_cpu.push(evs);
    }
    let mut text = parse_text(&data("linux-6.18-loop.trace.txt"));
    assert_eq!(text.len(), 178);
    // The text file is in global time order; compare per CPU, in buffer order.
    text.sort_by_key(|s| (s.cpu, s.ts_us));
    decoded.sort_by_key(|s| (s.cpu, s.ts_us));
    assert_eq!(decoded.len(), text.len());
    for (d, t) in decoded.iter().zip(&text) {
        assert_eq!(d, t);
    }

    // Merged and paired: 89 I/Os, each with its completion.
    let mut merger = Merger::new(2, 1 << 16);
    let mut pairer = Pairer::new(PairConfig::default());
    let mut out = Vec::new();
    for (cpu, evs) in per_cpu.into_iter().enumerate() {
        for (ts, ev) in evs {
            merger.push(cpu, ts, ev, &mut |_, _| panic!("bound not reached"));
        }
    }
    merger.drain_all(&mut |ts, ev| pairer.push(ts, ev, &mut |io| out.push(io)));
    pairer.finish(&mut |io| out.push(io));
    assert_eq!(out.len(), 89);
    assert_eq!(pairer.stats().unmatched_completes, 0);
    assert!(out
        .iter()
        .all(|io| io.complete_ns.is_some_and(|c| c > io.issue_ns)));
    let count = |op| out.iter().filter(|io| io.op == op).count();
    assert_eq!(
        (count(Op::Read), count(Op::Write), count(Op::Trim)),
        (68, 20, 1)
    );
    let trim = out.iter().find(|io| io.op == Op::Trim).unwrap();
    assert_eq!((trim.offset_bytes, trim.len_bytes), (1 << 20, 1 << 20));
    let fio = out.iter().filter(|io| io.comm.as_bytes() == b"fio").count();
    assert_eq!(fio, 40);
}
