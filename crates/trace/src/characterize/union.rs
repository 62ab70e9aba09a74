//! The exact union of byte ranges in bounded memory, at any size: the footprint's
//! ranges the bitmap does not hold ([`super::footprint`]), and all of them once the
//! bitmap retires.
//!
//! A sorted vector of disjoint, non-touching ranges, and a buffer of new ranges (a
//! range continuing the last one extends it) sorted with the standard sort and merged
//! in place when it grows as large as the set (amortised O(log n) per range). Nothing
//! is rounded. Memory stays under [`FOOTPRINT_MAX_RANGES`] ranges of 16 bytes in the set
//! (and as many in the buffer, the set's growth room while merging): past that the
//! set, sorted, is written to a run file in the temporary directory (`TMPDIR`) and
//! emptied, and the runs are merged into the union at the end (into one when
//! [`MAX_RUNS`] are on disk). A run that cannot be written leaves the set in memory.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::PathBuf;

/// Ranges in memory before the set is written out as a run (16 MiB of set).
pub const FOOTPRINT_MAX_RANGES: usize = 1 << 20;
/// Runs on disk before they are merged into one.
pub const MAX_RUNS: usize = 64;
/// New ranges buffered before the first merge.
const MIN_PENDING: usize = 1 << 16;
const RUN_IO_BYTES: usize = 256 << 10;

/// A run file that could not be created, written or read back.
#[derive(Debug, thiserror::Error)]
enum RunError {
    #[error("creating a temporary directory")]
    TempDir(#[source] std::io::Error),
    #[error("{}", path.display())]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl RunError {
    fn file(path: &std::path::Path, source: std::io::Error) -> RunError {
        RunError::File {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A run of disjoint ranges, sorted, on disk.
struct Run {
    path: PathBuf,
    ranges: u64,
}

/// Distinct bytes of a set of byte ranges (see the module docs).
pub(super) struct Union {
    /// Sorted, disjoint and non-touching.
    set: Vec<(u64, u64)>,
    /// New ranges, in arrival order.
    pending: Vec<(u64, u64)>,
    runs: Vec<Run>,
    dir: Option<tempfile::TempDir>,
    next_run: u64,
    max_ranges: usize,
    /// Writing a run failed (no room in `TMPDIR`): the set stays in memory from then on
    /// (the figure stays exact; only the memory bound is given up).
    no_runs: bool,
}

impl std::fmt::Debug for Union {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Union")
            .field("set", &self.set.len())
            .field("pending", &self.pending.len())
            .field("runs", &self.runs.len())
            .finish()
    }
}

impl Default for Union {
    fn default() -> Self {
        Self::with_max_ranges(FOOTPRINT_MAX_RANGES)
    }
}

impl Union {
    /// A union that writes runs past `max_ranges` ranges in memory (tests lower it).
    pub(super) fn with_max_ranges(max_ranges: usize) -> Self {
        assert!(max_ranges >= 2);
        Union {
            set: Vec::new(),
            pending: Vec::new(),
            runs: Vec::new(),
            dir: None,
            next_run: 0,
            max_ranges,
            no_runs: false,
        }
    }

    /// Adds `[start, end)`.
    #[inline]
    pub(super) fn add(&mut self, start: u64, end: u64) {
        debug_assert!(start <= end);
        if start == end {
            return;
        }
        // Sequential I/O: extends the last range.
        if let Some(last) = self.pending.last_mut() {
            if start == last.1 {
                last.1 = end;
                return;
            }
        }
        self.pending.push((start, end));
        if self.pending.len() >= self.set.len().max(MIN_PENDING).min(self.max_ranges) {
            self.merge();
        }
    }

    /// Sorts the pending ranges and merges them into the set; writes the set out as a
    /// run when it holds more than `max_ranges`.
    fn merge(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        self.pending.sort_unstable();
        coalesce(&mut self.pending);
        // Merge from the back into the set's spare room: no third vector.
        let (n, m) = (self.set.len(), self.pending.len());
        self.set.resize(n + m, (0, 0));
        let (mut i, mut j) = (n, m);
        for k in (0..n + m).rev() {
            if j == 0 {
                break;
            }
            if i > 0 && self.set[i - 1] > self.pending[j - 1] {
                self.set[k] = self.set[i - 1];
                i -= 1;
            } else {
                self.set[k] = self.pending[j - 1];
                j -= 1;
            }
        }
        self.pending.clear();
        coalesce(&mut self.set);
        if self.set.len() > self.max_ranges && !self.no_runs {
            self.spill();
        }
    }

    /// Writes the set as a run and empties it. A run that cannot be written leaves
    /// the set in memory (exact, over the memory bound) and no more runs are tried.
    #[cold]
    fn spill(&mut self) {
        if self.write_run().is_err() {
            self.no_runs = true;
            return;
        }
        self.set = Vec::new();
        if self.runs.len() >= MAX_RUNS && self.merge_runs().is_err() {
            self.no_runs = true;
        }
    }

    fn run_path(&mut self) -> Result<PathBuf, RunError> {
        if self.dir.is_none() {
            let d = tempfile::Builder::new()
                .prefix("storbench-footprint-")
                .tempdir()
                .map_err(RunError::TempDir)?;
            self.dir = Some(d);
        }
        self.next_run += 1;
        Ok(self
            .dir
            .as_ref()
            .expect("created above")
            .path()
            .join(format!("run-{}", self.next_run)))
    }

    fn write_run(&mut self) -> Result<(), RunError> {
        let path = self.run_path()?;
        let mut w = RunWriter::create(&path)?;
        for &r in &self.set {
            w.push(r)?;
        }
        let ranges = w.finish()?;
        self.runs.push(Run { path, ranges });
        Ok(())
    }

    /// Merges every run on disk into one.
    fn merge_runs(&mut self) -> Result<(), RunError> {
        let path = self.run_path()?;
        let mut w = RunWriter::create(&path)?;
        let mut sources = self
            .runs
            .iter()
            .map(RunReader::open)
            .collect::<Result<Vec<_>, _>>()?;
        union_of(&mut sources, &[], &mut |s, e| w.push((s, e)))?;
        let ranges = w.finish()?;
        // Only now are the old runs replaced: a failure above leaves them in place.
        for r in std::mem::take(&mut self.runs) {
            let _ = std::fs::remove_file(&r.path);
        }
        self.runs.push(Run { path, ranges });
        Ok(())
    }

    /// Calls `f` with every disjoint range of the union, in order, and empties it.
    ///
    /// # Panics
    /// When a run written earlier cannot be read back (the temporary directory was
    /// removed under the process): the figure would be wrong, so none is given.
    pub(super) fn for_each_range(&mut self, f: &mut dyn FnMut(u64, u64)) {
        self.merge();
        let set = std::mem::take(&mut self.set);
        let runs = std::mem::take(&mut self.runs);
        let r = (|| -> Result<(), RunError> {
            let mut sources = runs
                .iter()
                .map(RunReader::open)
                .collect::<Result<Vec<_>, _>>()?;
            union_of(&mut sources, &set, &mut |s, e| {
                f(s, e);
                Ok(())
            })
        })();
        for r in &runs {
            let _ = std::fs::remove_file(&r.path);
        }
        if let Err(e) = r {
            let source = std::error::Error::source(&e).map(ToString::to_string);
            panic!(
                "footprint: reading back a run written to the temporary directory: {e}: {}",
                source.unwrap_or_default()
            );
        }
    }

    /// Distinct bytes.
    #[cfg(test)]
    pub(super) fn finish(&mut self) -> u64 {
        let mut total = 0;
        self.for_each_range(&mut |s, e| total += e - s);
        total
    }
}

/// Merges sorted ranges that overlap or touch, in place.
fn coalesce(v: &mut Vec<(u64, u64)>) {
    let mut w = 0;
    for r in 0..v.len() {
        let (s, e) = v[r];
        if w > 0 && s <= v[w - 1].1 {
            v[w - 1].1 = v[w - 1].1.max(e);
        } else {
            v[w] = (s, e);
            w += 1;
        }
    }
    v.truncate(w);
}

/// The union of sorted runs and a sorted set, disjoint ranges in order to `out`.
fn union_of(
    runs: &mut [RunReader],
    set: &[(u64, u64)],
    out: &mut dyn FnMut(u64, u64) -> Result<(), RunError>,
) -> Result<(), RunError> {
    use std::cmp::Reverse;
    let mut heap = std::collections::BinaryHeap::new();
    for (i, r) in runs.iter_mut().enumerate() {
        if let Some(x) = r.next()? {
            heap.push(Reverse((x, i)));
        }
    }
    let mut set_at = 0;
    let mut cur: Option<(u64, u64)> = None;
    loop {
        let from_set = set.get(set_at).copied();
        let from_runs = heap.peek().map(|Reverse((x, _))| *x);
        let next = match (from_set, from_runs) {
            (Some(a), Some(b)) if a <= b => {
                set_at += 1;
                a
            }
            (_, Some(_)) => {
                let Reverse((x, i)) = heap.pop().expect("peeked");
                if let Some(y) = runs[i].next()? {
                    heap.push(Reverse((y, i)));
                }
                x
            }
            (Some(a), None) => {
                set_at += 1;
                a
            }
            (None, None) => break,
        };
        cur = match cur {
            Some((s, e)) if next.0 <= e => Some((s, e.max(next.1))),
            Some((s, e)) => {
                out(s, e)?;
                Some(next)
            }
            None => Some(next),
        };
    }
    if let Some((s, e)) = cur {
        out(s, e)?;
    }
    Ok(())
}

struct RunWriter {
    path: PathBuf,
    w: BufWriter<File>,
    n: u64,
}

impl RunWriter {
    fn create(path: &std::path::Path) -> Result<RunWriter, RunError> {
        let f = File::create(path).map_err(|source| RunError::file(path, source))?;
        Ok(RunWriter {
            path: path.to_path_buf(),
            w: BufWriter::with_capacity(RUN_IO_BYTES, f),
            n: 0,
        })
    }

    fn push(&mut self, (s, e): (u64, u64)) -> Result<(), RunError> {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&s.to_le_bytes());
        b[8..].copy_from_slice(&e.to_le_bytes());
        self.n += 1;
        self.w
            .write_all(&b)
            .map_err(|source| RunError::file(&self.path, source))
    }

    fn finish(mut self) -> Result<u64, RunError> {
        self.w
            .flush()
            .map_err(|source| RunError::file(&self.path, source))?;
        Ok(self.n)
    }
}

struct RunReader {
    path: PathBuf,
    r: BufReader<File>,
    left: u64,
}

impl RunReader {
    fn open(run: &Run) -> Result<RunReader, RunError> {
        let f = File::open(&run.path).map_err(|source| RunError::file(&run.path, source))?;
        Ok(RunReader {
            path: run.path.clone(),
            r: BufReader::with_capacity(RUN_IO_BYTES, f),
            left: run.ranges,
        })
    }

    fn next(&mut self) -> Result<Option<(u64, u64)>, RunError> {
        if self.left == 0 {
            return Ok(None);
        }
        let mut b = [0u8; 16];
        self.r
            .read_exact(&mut b)
            .map_err(|source| RunError::file(&self.path, source))?;
        self.left -= 1;
        let u = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Ok(Some((u(0), u(8))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_union(ranges: &[(u64, u64)]) -> u64 {
        let mut v: Vec<(u64, u64)> = ranges.iter().copied().filter(|r| r.0 < r.1).collect();
        v.sort();
        let (mut total, mut end) = (0u64, 0u64);
        for (s, e) in v {
            let s = s.max(end);
            if e > s {
                total += e - s;
                end = e;
            }
        }
        total
    }

    fn ranges(rng: &mut crate::test_rng::XorShift, n: usize) -> Vec<(u64, u64)> {
        (0..n)
            .map(|i| {
                let s = match i % 4 {
                    // 512-byte aligned over 2 TB, unaligned, far out, sequential.
                    0 => rng.below(1 << 41) / 512 * 512,
                    1 => rng.below(1 << 30),
                    2 => (1u64 << 62) + rng.below(1 << 20),
                    _ => (i as u64) * 4096,
                };
                (s, s + 1 + rng.below(1 << 17))
            })
            .collect()
    }

    /// Exact whatever the ranges, in memory and through runs on disk merged in several
    /// rounds (the runs' files removed after).
    #[test]
    fn union_is_exact_in_memory_and_through_runs() {
        let mut rng = crate::test_rng::XorShift(0x000F_007B_7117);
        let rs = ranges(&mut rng, 300_000);
        let want = naive_union(&rs);
        for max in [FOOTPRINT_MAX_RANGES, 1000, 3] {
            let mut f = Union::with_max_ranges(max);
            for &(s, e) in &rs {
                f.add(s, e);
            }
            let dir = f.dir.as_ref().map(|d| d.path().to_path_buf());
            assert_eq!(f.finish(), want, "max {max}");
            assert_eq!(dir.is_some(), max < 300_000, "runs only past the bound");
            if let Some(d) = dir {
                assert_eq!(std::fs::read_dir(d).unwrap().count(), 0, "runs removed");
            }
        }
    }

    use proptest::prelude::*;
    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
        #[test]
        fn union_equals_a_brute_force_union(
            rs in proptest::collection::vec((0u64..1 << 20, 0u64..5000), 0..400),
            max in 2usize..50,
        ) {
            let rs: Vec<(u64, u64)> = rs.into_iter().map(|(s, l)| (s, s + l)).collect();
            let mut f = Union::with_max_ranges(max);
            for &(s, e) in &rs {
                f.add(s, e);
            }
            prop_assert_eq!(f.finish(), naive_union(&rs));
        }
    }
}
