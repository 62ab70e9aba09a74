//! The external merge sort behind [`super::Sink`]: records that arrive too far out of
//! issue order for the sink's reorder window are sorted exactly, in bounded memory.
//!
//! Records are collected in arrival order into a run of at most
//! [`SortLimits::run_records`]; a full run is stably sorted by issue time and written to
//! a temporary directory (fixed 41-byte records). When [`SortLimits::fan_in`] runs are
//! on disk, they are merged into one (so any number of records sorts with a bounded
//! number of open files). At the end the Parquet prefix the sink had already written in
//! order, the runs on disk and the run in memory are merged into the output.
//!
//! Records with equal issue times keep their input order: runs are formed in arrival
//! order, each is sorted stably, merges always take consecutive runs, and a tie in a
//! merge goes to the earlier run.
//!
//! Memory: the run in memory (`run_records` records of [`IoRecord`], 64 bytes each) and
//! its sort scratch (half as much), plus one 256 KiB buffer per run being merged; with
//! the default limits 32 MiB + 16 MiB + 16 MiB = 64 MiB at most. Disk: 41 bytes per
//! record held in runs, twice that while an intermediate merge runs.

use crate::error::TraceError;
use crate::model::{DeviceId, IoRecord, Op, StreamId};
use crate::store::TraceReader;
use crate::TraceWriter;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// Bounds of the external sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortLimits {
    /// Records held in memory before a run is sorted and written out.
    pub run_records: usize,
    /// Runs merged at once (open files and read buffers while merging).
    pub fan_in: usize,
}

impl Default for SortLimits {
    fn default() -> Self {
        SortLimits {
            run_records: 1 << 19,
            fan_in: 64,
        }
    }
}

/// Read/write buffer of one run file.
const RUN_IO_BYTES: usize = 256 << 10;
/// Bytes of one record in a run file.
const REC_BYTES: usize = 41;
const NONE_U64: u64 = u64::MAX;
const NONE_U32: u32 = u32::MAX;

fn encode(r: &IoRecord, out: &mut [u8; REC_BYTES]) {
    out[0..8].copy_from_slice(&r.issue_ns.to_le_bytes());
    out[8..16].copy_from_slice(&r.complete_ns.unwrap_or(NONE_U64).to_le_bytes());
    out[16..24].copy_from_slice(&r.offset_bytes.to_le_bytes());
    out[24..32].copy_from_slice(&r.len_bytes.to_le_bytes());
    out[32] = r.op as u8;
    out[33..37].copy_from_slice(&r.stream.map_or(NONE_U32, |s| s.0).to_le_bytes());
    out[37..41].copy_from_slice(&r.device.map_or(NONE_U32, |d| d.0).to_le_bytes());
}

fn decode(b: &[u8; REC_BYTES]) -> IoRecord {
    let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
    let complete = u64_at(8);
    let stream = u32_at(33);
    let device = u32_at(37);
    IoRecord {
        issue_ns: u64_at(0),
        // Completion times are never u64::MAX (the store keeps them below 2^63 after
        // rebasing, and a biased time that large has no room for a service time).
        complete_ns: (complete != NONE_U64).then_some(complete),
        offset_bytes: u64_at(16),
        len_bytes: u64_at(24),
        op: Op::ALL[usize::from(b[32] & 3)],
        stream: (stream != NONE_U32).then_some(StreamId(stream)),
        device: (device != NONE_U32).then_some(DeviceId(device)),
    }
}

/// A sorted run on disk.
#[derive(Debug)]
struct Run {
    path: PathBuf,
    records: u64,
}

fn write_run(path: &Path, recs: impl Iterator<Item = IoRecord>) -> Result<Run, TraceError> {
    let f = File::create(path).map_err(|e| TraceError::io(path, "create sort run", e))?;
    let mut w = BufWriter::with_capacity(RUN_IO_BYTES, f);
    let mut buf = [0u8; REC_BYTES];
    let mut n = 0u64;
    for r in recs {
        encode(&r, &mut buf);
        w.write_all(&buf)
            .map_err(|e| TraceError::io(path, "write sort run", e))?;
        n += 1;
    }
    w.flush()
        .map_err(|e| TraceError::io(path, "write sort run", e))?;
    Ok(Run {
        path: path.to_path_buf(),
        records: n,
    })
}

/// One sorted source of a merge.
enum Source<'a> {
    File {
        path: PathBuf,
        r: BufReader<File>,
        left: u64,
    },
    Mem(std::slice::Iter<'a, IoRecord>),
    /// The Parquet prefix: times relative to `base_ns`, names by the reader's ids.
    Prefix {
        reader: Box<TraceReader>,
        batch: Vec<IoRecord>,
        pos: usize,
        base_ns: u64,
        devices: Vec<Option<DeviceId>>,
        streams: Vec<Option<StreamId>>,
    },
}

impl Source<'_> {
    fn open(run: &Run) -> Result<Source<'static>, TraceError> {
        let f = File::open(&run.path).map_err(|e| TraceError::io(&run.path, "open sort run", e))?;
        Ok(Source::File {
            path: run.path.clone(),
            r: BufReader::with_capacity(RUN_IO_BYTES, f),
            left: run.records,
        })
    }

    /// The next record; `names` is the writer the prefix's names are interned into.
    fn next(&mut self, names: Option<&mut TraceWriter>) -> Result<Option<IoRecord>, TraceError> {
        match self {
            Source::File { path, r, left } => {
                if *left == 0 {
                    return Ok(None);
                }
                let mut b = [0u8; REC_BYTES];
                r.read_exact(&mut b)
                    .map_err(|e| TraceError::io(path, "read sort run", e))?;
                *left -= 1;
                Ok(Some(decode(&b)))
            }
            Source::Mem(it) => Ok(it.next().copied()),
            Source::Prefix {
                reader,
                batch,
                pos,
                base_ns,
                devices,
                streams,
            } => {
                while *pos >= batch.len() {
                    *pos = 0;
                    if !reader.next_batch(batch)? {
                        return Ok(None);
                    }
                }
                let mut r = batch[*pos];
                *pos += 1;
                r.issue_ns += *base_ns;
                r.complete_ns = r.complete_ns.map(|c| c + *base_ns);
                let w = names.expect("the prefix is merged into the output writer");
                if let Some(d) = r.device {
                    let i = d.0 as usize;
                    if devices.len() <= i {
                        devices.resize(i + 1, None);
                    }
                    r.device = Some(*devices[i].get_or_insert_with(|| {
                        w.intern_device(reader.devices().get(d.0).unwrap_or(""))
                    }));
                }
                if let Some(s) = r.stream {
                    let i = s.0 as usize;
                    if streams.len() <= i {
                        streams.resize(i + 1, None);
                    }
                    r.stream = Some(*streams[i].get_or_insert_with(|| {
                        w.intern_stream(reader.streams().get(s.0).unwrap_or(""))
                    }));
                }
                Ok(Some(r))
            }
        }
    }
}

/// What [`merge`] calls with each record (and the writer names are interned into).
type MergeOut<'f> = dyn FnMut(IoRecord, Option<&mut TraceWriter>) -> Result<(), TraceError> + 'f;

/// Merges sorted sources (a tie goes to the earlier source), calling `out` per record.
fn merge(
    mut sources: Vec<Source>,
    mut names: Option<&mut TraceWriter>,
    out: &mut MergeOut,
) -> Result<(), TraceError> {
    let mut heads: Vec<Option<IoRecord>> = Vec::with_capacity(sources.len());
    let mut heap = BinaryHeap::with_capacity(sources.len());
    for (i, s) in sources.iter_mut().enumerate() {
        let h = s.next(names.as_deref_mut())?;
        if let Some(r) = h {
            heap.push(Reverse((r.issue_ns, i)));
        }
        heads.push(h);
    }
    while let Some(Reverse((_, i))) = heap.pop() {
        let r = heads[i].take().expect("a source in the heap has a head");
        let next = sources[i].next(names.as_deref_mut())?;
        if let Some(n) = next {
            debug_assert!(n.issue_ns >= r.issue_ns, "a sort run out of order");
            heap.push(Reverse((n.issue_ns, i)));
            heads[i] = Some(n);
        }
        out(r, names.as_deref_mut())?;
    }
    Ok(())
}

/// The sort state once the sink met a record it could not write in order.
pub struct Spill {
    dir: tempfile::TempDir,
    limits: SortLimits,
    /// The records the sink wrote in order before, as a finished trace (times relative
    /// to `prefix_base_ns`), and its row count.
    prefix: PathBuf,
    prefix_base_ns: u64,
    prefix_rows: u64,
    /// Records not yet in a run, in arrival order.
    buf: Vec<IoRecord>,
    runs: Vec<Run>,
    next_run: u64,
    /// Runs written, intermediate merges included (for the summary).
    pub runs_written: u64,
}

impl Spill {
    /// A sort with its temporary directory next to `output` (on the same file system,
    /// so the sorted output moves into place by a rename).
    pub fn new(output: &Path, limits: SortLimits) -> Result<Spill, TraceError> {
        assert!(limits.run_records >= 1 && limits.fan_in >= 2);
        let parent = match output.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let dir = tempfile::Builder::new()
            .prefix(".storbench-sort-")
            .tempdir_in(parent)
            .map_err(|e| TraceError::io(parent, "create a temporary directory for sorting", e))?;
        let prefix = dir.path().join("prefix.parquet");
        Ok(Spill {
            dir,
            limits,
            prefix,
            prefix_base_ns: 0,
            prefix_rows: 0,
            buf: Vec::new(),
            runs: Vec::new(),
            next_run: 0,
            runs_written: 0,
        })
    }

    /// Where the sink finishes the records it wrote in order before sorting began,
    /// as a trace (the sorted prefix).
    pub fn prefix_path(&self) -> &Path {
        &self.prefix
    }

    /// The prefix is written at [`Spill::prefix_path`]: `rows` records in order, issue
    /// times relative to `base_ns`.
    pub fn take_prefix(&mut self, base_ns: u64, rows: u64) {
        self.prefix_base_ns = base_ns;
        self.prefix_rows = rows;
    }

    #[inline]
    pub fn push(&mut self, rec: IoRecord) -> Result<(), TraceError> {
        // Grows by doubling: a power-of-two run size is also its largest capacity.
        self.buf.push(rec);
        if self.buf.len() >= self.limits.run_records {
            self.write_out_buf()?;
        }
        Ok(())
    }

    fn run_path(&mut self) -> PathBuf {
        self.next_run += 1;
        self.runs_written += 1;
        self.dir.path().join(format!("run-{}", self.next_run))
    }

    /// Sorts the buffer (stably) and writes it as a run; merges the oldest runs into one
    /// when there are `fan_in` of them.
    fn write_out_buf(&mut self) -> Result<(), TraceError> {
        self.buf.sort_by_key(|r| r.issue_ns);
        let path = self.run_path();
        let run = write_run(&path, self.buf.drain(..))?;
        self.runs.push(run);
        if self.runs.len() >= self.limits.fan_in {
            let group: Vec<Run> = self.runs.drain(..self.limits.fan_in).collect();
            let sources = group
                .iter()
                .map(Source::open)
                .collect::<Result<Vec<_>, _>>()?;
            let path = self.run_path();
            let f = File::create(&path).map_err(|e| TraceError::io(&path, "create sort run", e))?;
            let mut w = BufWriter::with_capacity(RUN_IO_BYTES, f);
            let mut b = [0u8; REC_BYTES];
            let mut n = 0u64;
            merge(sources, None, &mut |r, _| {
                encode(&r, &mut b);
                n += 1;
                w.write_all(&b)
                    .map_err(|e| TraceError::io(&path, "write sort run", e))
            })?;
            w.flush()
                .map_err(|e| TraceError::io(&path, "write sort run", e))?;
            for r in &group {
                let _ = std::fs::remove_file(&r.path);
            }
            self.runs.insert(0, Run { path, records: n });
        }
        Ok(())
    }

    /// Records held (prefix, runs and memory).
    pub fn records(&self) -> u64 {
        self.prefix_rows + self.runs.iter().map(|r| r.records).sum::<u64>() + self.buf.len() as u64
    }

    /// Merges everything into `writer` in issue order, times less the smallest issue
    /// time when `rebase`; returns the number of records written and the temporary
    /// directory (removed when dropped).
    pub fn finish(
        mut self,
        writer: &mut TraceWriter,
        rebase: bool,
    ) -> Result<(u64, tempfile::TempDir), TraceError> {
        self.buf.sort_by_key(|r| r.issue_ns);
        let buf = std::mem::take(&mut self.buf);
        let mut sources: Vec<Source> = Vec::with_capacity(self.runs.len() + 2);
        let reader = TraceReader::open(&self.prefix)?;
        sources.push(Source::Prefix {
            reader: Box::new(reader),
            batch: Vec::new(),
            pos: 0,
            base_ns: self.prefix_base_ns,
            devices: Vec::new(),
            streams: Vec::new(),
        });
        for r in &self.runs {
            sources.push(Source::open(r)?);
        }
        sources.push(Source::Mem(buf.iter()));
        // Every source is sorted: the smallest issue time is the smallest head.
        let mut base: Option<u64> = None;
        let mut n = 0u64;
        merge(sources, Some(writer), &mut |mut r, w| {
            let w = w.expect("merging into the writer");
            if rebase {
                let b = *base.get_or_insert(r.issue_ns);
                r.issue_ns -= b;
                r.complete_ns = r.complete_ns.map(|c| c - b);
            }
            n += 1;
            w.write(&r)
        })?;
        drop(buf);
        let _ = std::fs::remove_file(&self.prefix);
        for r in &self.runs {
            let _ = std::fs::remove_file(&r.path);
        }
        Ok((n, self.dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_records_round_trip() {
        let mut r = IoRecord::new(Op::Trim, 1 << 40, 4096, u64::MAX - 7);
        r.complete_ns = Some(u64::MAX - 1);
        r.device = Some(DeviceId(3));
        let mut b = [0u8; REC_BYTES];
        encode(&r, &mut b);
        assert_eq!(decode(&b), r);
        let mut r2 = IoRecord::new(Op::Flush, 0, 0, 0);
        r2.stream = Some(StreamId(0));
        encode(&r2, &mut b);
        assert_eq!(decode(&b), r2);
        assert_eq!(
            std::mem::size_of::<IoRecord>(),
            64,
            "the memory bound in the module docs"
        );
    }
}
