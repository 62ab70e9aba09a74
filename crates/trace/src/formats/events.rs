//! Block events (issue, requeue, completion) put in time order before they are paired,
//! in bounded memory: [`EventSort`].
//!
//! A capture is printed in file order, which is not time order when its per-CPU
//! buffers were printed one after another (tracefs `per_cpu/cpuN/trace` files joined,
//! blkparse outputs of each CPU's file): a completion on CPU 0 can come lines before
//! its issue on CPU 1. Pairing in file order would drop such completions; pairing
//! after ordering cannot, so every event of an import goes through this sort first.
//!
//! Events are collected in arrival order into a run of at most
//! [`SortLimits::run_records`]; a full run is sorted stably by (time, kind: issues,
//! then requeues, then completions) and written to a temporary directory next to the
//! output ([`EV_BYTES`] bytes per event); when [`SortLimits::fan_in`] runs are on
//! disk they are merged into one. [`EventSort::drain`] merges the runs and the run in
//! memory and hands every event over in order; a tie keeps arrival order (runs are
//! formed in arrival order, each sorted stably, merges take consecutive runs and give
//! a tie to the earlier). A capture whose events fit in one run never touches disk.
//!
//! Memory: the run (`run_records` events of 40 bytes) and its sort scratch (half as
//! much), plus one 256 KiB buffer per run merged: with the default limits 20 + 10 +
//! 16 MiB, under 48 MiB. Disk: [`EV_BYTES`] per event of a capture larger than a run,
//! removed when the import ends.

use super::spill::SortLimits;
use crate::error::TraceError;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// What an event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Kind {
    Issue = 0,
    Requeue = 1,
    Complete = 2,
}

/// One block event, as the pairing needs it (checked and reduced when its line was
/// read: the line number is no longer needed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ev {
    pub ts_ns: u64,
    /// The pairing key's sector (flushes: a marker, see `block.rs`).
    pub sector: u64,
    pub nsectors: u64,
    /// The importer's device slot.
    pub dev: u32,
    /// The record's stream id (issues), or [`NO_STREAM`].
    pub stream: u32,
    pub kind: Kind,
    /// [`crate::model::Op`] as u8.
    pub op: u8,
    /// [`FLAG_ERROR`] and the like.
    pub flags: u8,
}

/// `Ev::stream` of an issue without a process name.
pub const NO_STREAM: u32 = u32::MAX;
/// A completion with an error status.
pub const FLAG_ERROR: u8 = 1;

impl Ev {
    /// The order events are paired in: time, then issues before requeues before
    /// completions of the same instant.
    #[inline]
    fn key(&self) -> (u64, Kind) {
        (self.ts_ns, self.kind)
    }
}

/// Bytes of one event in a run file.
pub const EV_BYTES: usize = 35;
const RUN_IO_BYTES: usize = 256 << 10;

fn encode(e: &Ev, b: &mut [u8; EV_BYTES]) {
    b[0..8].copy_from_slice(&e.ts_ns.to_le_bytes());
    b[8..16].copy_from_slice(&e.sector.to_le_bytes());
    b[16..24].copy_from_slice(&e.nsectors.to_le_bytes());
    b[24..28].copy_from_slice(&e.dev.to_le_bytes());
    b[28..32].copy_from_slice(&e.stream.to_le_bytes());
    b[32] = e.kind as u8;
    b[33] = e.op;
    b[34] = e.flags;
}

fn decode(b: &[u8; EV_BYTES]) -> Ev {
    let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
    Ev {
        ts_ns: u64_at(0),
        sector: u64_at(8),
        nsectors: u64_at(16),
        dev: u32_at(24),
        stream: u32_at(28),
        kind: match b[32] {
            0 => Kind::Issue,
            1 => Kind::Requeue,
            _ => Kind::Complete,
        },
        op: b[33],
        flags: b[34],
    }
}

struct Run {
    path: PathBuf,
    events: u64,
}

/// A sorted run being read back.
struct RunReader {
    path: PathBuf,
    r: BufReader<File>,
    left: u64,
}

impl RunReader {
    fn open(run: &Run) -> Result<RunReader, TraceError> {
        let f = File::open(&run.path).map_err(|e| TraceError::io(&run.path, "open sort run", e))?;
        Ok(RunReader {
            path: run.path.clone(),
            r: BufReader::with_capacity(RUN_IO_BYTES, f),
            left: run.events,
        })
    }

    fn next(&mut self) -> Result<Option<Ev>, TraceError> {
        if self.left == 0 {
            return Ok(None);
        }
        let mut b = [0u8; EV_BYTES];
        self.r
            .read_exact(&mut b)
            .map_err(|e| TraceError::io(&self.path, "read sort run", e))?;
        self.left -= 1;
        Ok(Some(decode(&b)))
    }
}

/// One sorted source of a merge: a run on disk, or the run in memory.
enum Source<'a> {
    File(RunReader),
    Mem(std::slice::Iter<'a, Ev>),
}

impl Source<'_> {
    fn next(&mut self) -> Result<Option<Ev>, TraceError> {
        match self {
            Source::File(r) => r.next(),
            Source::Mem(it) => Ok(it.next().copied()),
        }
    }
}

/// Merges sorted sources, a tie to the earlier source, calling `out` with each event.
fn merge(
    mut sources: Vec<Source>,
    out: &mut dyn FnMut(Ev) -> Result<(), TraceError>,
) -> Result<(), TraceError> {
    let mut heads: Vec<Option<Ev>> = Vec::with_capacity(sources.len());
    let mut heap = BinaryHeap::with_capacity(sources.len());
    for (i, s) in sources.iter_mut().enumerate() {
        let h = s.next()?;
        if let Some(e) = h {
            heap.push(Reverse((e.key(), i)));
        }
        heads.push(h);
    }
    while let Some(Reverse((_, i))) = heap.pop() {
        let e = heads[i].take().expect("a source in the heap has a head");
        if let Some(n) = sources[i].next()? {
            debug_assert!(n.key() >= e.key(), "a sort run out of order");
            heap.push(Reverse((n.key(), i)));
            heads[i] = Some(n);
        }
        out(e)?;
    }
    Ok(())
}

/// The events of one import, sorted in bounded memory (see the module docs).
pub struct EventSort {
    limits: SortLimits,
    /// Where the temporary directory goes (next to the output).
    near: PathBuf,
    dir: Option<tempfile::TempDir>,
    buf: Vec<Ev>,
    /// Whether `buf` is already in order (events mostly arrive so: no sort needed).
    buf_sorted: bool,
    runs: Vec<Run>,
    next_run: u64,
    /// Events pushed.
    pub events: u64,
}

impl EventSort {
    /// A sort whose runs, if any, go to a temporary directory next to `output`.
    pub fn new(output: &Path, limits: SortLimits) -> EventSort {
        assert!(limits.run_records >= 1 && limits.fan_in >= 2);
        EventSort {
            limits,
            near: output.to_path_buf(),
            dir: None,
            buf: Vec::new(),
            buf_sorted: true,
            runs: Vec::new(),
            next_run: 0,
            events: 0,
        }
    }

    /// Runs written to disk so far.
    pub fn runs_written(&self) -> u64 {
        self.next_run
    }

    #[inline]
    pub fn push(&mut self, e: Ev) -> Result<(), TraceError> {
        if let Some(last) = self.buf.last() {
            self.buf_sorted &= last.key() <= e.key();
        }
        self.buf.push(e);
        self.events += 1;
        if self.buf.len() >= self.limits.run_records {
            self.write_run()?;
        }
        Ok(())
    }

    fn sort_buf(&mut self) {
        if !self.buf_sorted {
            self.buf.sort_by_key(Ev::key);
        }
        self.buf_sorted = true;
    }

    fn run_path(&mut self) -> Result<PathBuf, TraceError> {
        if self.dir.is_none() {
            let parent = match self.near.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let dir = tempfile::Builder::new()
                .prefix(".storbench-events-")
                .tempdir_in(parent)
                .map_err(|e| {
                    TraceError::io(parent, "create a temporary directory for sorting", e)
                })?;
            self.dir = Some(dir);
        }
        self.next_run += 1;
        Ok(self
            .dir
            .as_ref()
            .expect("created above")
            .path()
            .join(format!("events-{}", self.next_run)))
    }

    /// Sorts the buffer into a run on disk; merges the oldest runs into one when there
    /// are `fan_in` of them.
    fn write_run(&mut self) -> Result<(), TraceError> {
        self.sort_buf();
        let path = self.run_path()?;
        let events = self.buf.len() as u64;
        let mut w = RunWriter::create(&path)?;
        for e in self.buf.drain(..) {
            w.write(&e)?;
        }
        w.finish()?;
        self.runs.push(Run { path, events });
        if self.runs.len() >= self.limits.fan_in {
            let group: Vec<Run> = self.runs.drain(..self.limits.fan_in).collect();
            let sources = group
                .iter()
                .map(|r| RunReader::open(r).map(Source::File))
                .collect::<Result<Vec<_>, _>>()?;
            let path = self.run_path()?;
            let mut w = RunWriter::create(&path)?;
            merge(sources, &mut |e| w.write(&e))?;
            let events = w.finish()?;
            for r in &group {
                let _ = std::fs::remove_file(&r.path);
            }
            self.runs.insert(0, Run { path, events });
        }
        Ok(())
    }

    /// Hands every event to `out` in order (time, kind, arrival) and removes the
    /// temporary files.
    pub fn drain(
        mut self,
        out: &mut dyn FnMut(Ev) -> Result<(), TraceError>,
    ) -> Result<(), TraceError> {
        self.sort_buf();
        let buf = std::mem::take(&mut self.buf);
        if self.runs.is_empty() {
            for e in buf {
                out(e)?;
            }
            return Ok(());
        }
        let mut sources = Vec::with_capacity(self.runs.len() + 1);
        for r in &self.runs {
            sources.push(Source::File(RunReader::open(r)?));
        }
        sources.push(Source::Mem(buf.iter()));
        merge(sources, out)?;
        for r in &self.runs {
            let _ = std::fs::remove_file(&r.path);
        }
        Ok(())
    }
}

/// Writes one run file.
struct RunWriter {
    path: PathBuf,
    w: BufWriter<File>,
    n: u64,
}

impl RunWriter {
    fn create(path: &Path) -> Result<RunWriter, TraceError> {
        let f = File::create(path).map_err(|e| TraceError::io(path, "create sort run", e))?;
        Ok(RunWriter {
            path: path.to_path_buf(),
            w: BufWriter::with_capacity(RUN_IO_BYTES, f),
            n: 0,
        })
    }

    fn write(&mut self, e: &Ev) -> Result<(), TraceError> {
        let mut b = [0u8; EV_BYTES];
        encode(e, &mut b);
        self.n += 1;
        self.w
            .write_all(&b)
            .map_err(|err| TraceError::io(&self.path, "write sort run", err))
    }

    fn finish(mut self) -> Result<u64, TraceError> {
        self.w
            .flush()
            .map_err(|e| TraceError::io(&self.path, "write sort run", e))?;
        Ok(self.n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(ts: u64, kind: Kind, sector: u64) -> Ev {
        Ev {
            ts_ns: ts,
            sector,
            nsectors: 8,
            dev: 1,
            stream: NO_STREAM,
            kind,
            op: 0,
            flags: 0,
        }
    }

    #[test]
    fn events_round_trip_through_a_run_file() {
        let e = Ev {
            ts_ns: u64::MAX - 3,
            sector: 1 << 50,
            nsectors: 77,
            dev: 9,
            stream: 12,
            kind: Kind::Requeue,
            op: 3,
            flags: FLAG_ERROR,
        };
        let mut b = [0u8; EV_BYTES];
        encode(&e, &mut b);
        assert_eq!(decode(&b), e);
    }

    /// Any arrival order comes out in (time, kind) order, ties in arrival order, in
    /// memory and through runs merged in several passes; the temporary files go.
    #[test]
    fn drain_orders_by_time_then_kind_keeping_arrival_order_of_ties() {
        let mut rng = crate::test_rng::XorShift(0x2545_F491_4F6C_DD1D);
        let mut sent = Vec::new();
        for i in 0..5000u64 {
            let kind = match rng.below(3) {
                0 => Kind::Issue,
                1 => Kind::Requeue,
                _ => Kind::Complete,
            };
            // The sector identifies the event.
            sent.push(ev(rng.below(700), kind, i));
        }
        let mut want = sent.clone();
        want.sort_by_key(Ev::key);
        for limits in [
            SortLimits::default(),
            SortLimits {
                run_records: 37,
                fan_in: 3,
            },
        ] {
            let dir = tempfile::tempdir().unwrap();
            let mut s = EventSort::new(&dir.path().join("out.parquet"), limits);
            for e in &sent {
                s.push(*e).unwrap();
            }
            let spilled = s.runs_written() > 0;
            assert_eq!(spilled, limits.run_records < 5000);
            let mut got = Vec::new();
            s.drain(&mut |e| {
                got.push(e);
                Ok(())
            })
            .unwrap();
            assert!(got == want, "another order ({limits:?})");
            let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
            assert!(left.is_empty(), "temporary files left: {left:?}");
        }
    }
}
