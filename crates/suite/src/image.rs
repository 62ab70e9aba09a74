//! The disk image restored during seasoning (seed 002: "restore a disk image sector by
//! sector ... adds a twist of randomness").
//!
//! Two kinds, both [`Source`]s of writes in LBA order (a sector-by-sector restore
//! copies the used sectors of the image front to back):
//! - [`GeneratedImage`]: a synthetic used filesystem, deterministic by seed: runs of
//!   data (files of mixed sizes, from 4 KiB to tens of MiB, heavy-tailed like a real
//!   desktop) separated by free gaps, covering a chosen share of the span. The gaps make
//!   the restore scattered instead of one clean sequential pass.
//! - [`FileImage`]: the user's image file. Its allocated, non-zero 4 KiB blocks are
//!   restored at the same offsets (holes and zero blocks are skipped, as imaging tools
//!   skip unused sectors); blocks beyond the span are dropped and counted.
//!
//! The engine writes its own incompressible data at those offsets: the drive state a
//! restore leaves depends on which LBAs are written, in which order; the bytes of the
//! user's image are not copied (a compressing drive sees them as incompressible).
//!
//! The cursor for resume is the number of I/Os already issued; reopening and skipping
//! `cursor` I/Os continues exactly where the previous run stopped.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use storbench_trace::Op;
use storbench_workload::{NextIo, Source, SourceError};

/// Block granularity of images (bytes).
pub const IMAGE_BLOCK_BYTES: u64 = 4096;
/// Largest single write of a restore (bytes).
pub const RESTORE_IO_BYTES: u64 = 128 * 1024;

/// SplitMix64: small, fast, good enough for placement, and stable across versions.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// File-size classes of the generated image: (probability, min bytes, max bytes),
/// log-uniform inside a class. Many small files, a long tail of large ones.
const SIZE_CLASSES: [(f64, f64, f64); 4] = [
    (0.60, 4096.0, 32768.0),
    (0.28, 32768.0, 524_288.0),
    (0.10, 524_288.0, 8_388_608.0),
    (0.02, 8_388_608.0, 67_108_864.0),
];

/// Mean length of a data run when no run may exceed `cap` bytes: per class,
/// E[min(X, cap)] of a log-uniform X on [a, b] is ((c − a) + c·ln(b/c)) ÷ ln(b/a) with
/// c = cap clamped to [a, b]. Without the cap, small spans (where it bites) came out
/// with much less data than the fill asked for (21% instead of 40% on 256 MiB).
fn mean_run_bytes(cap: f64) -> f64 {
    SIZE_CLASSES
        .iter()
        .map(|&(p, a, b)| {
            if cap <= a {
                return p * cap;
            }
            let c = cap.min(b);
            p * ((c - a) + c * (b / c).ln()) / (b / a).ln()
        })
        .sum()
}

/// A generated image over `[0, span_bytes)`.
#[derive(Clone, Debug)]
pub struct GeneratedImage {
    span_bytes: u64,
    fill: f64,
    seed: u64,
    rng: SplitMix64,
    mean_gap_bytes: f64,
    max_run_bytes: u64,
    /// Current data run: next offset to write and its end.
    run_pos: u64,
    run_end: u64,
    total_ios: u64,
    total_bytes: u64,
}

impl GeneratedImage {
    /// `fill`: share of the span holding data, in (0, 1). `skip_ios`: I/Os already
    /// issued by an earlier run (resume).
    pub fn new(span_bytes: u64, fill: f64, seed: u64, skip_ios: u64) -> GeneratedImage {
        assert!(
            fill > 0.0 && fill < 1.0,
            "image fill must be in (0, 1), got {fill}"
        );
        assert!(span_bytes >= IMAGE_BLOCK_BYTES && span_bytes.is_multiple_of(IMAGE_BLOCK_BYTES));
        // On small spans no single file may take more than 1/16 of it, so the image
        // stays scattered.
        let max_run_bytes = (span_bytes / 16 / IMAGE_BLOCK_BYTES).max(1) * IMAGE_BLOCK_BYTES;
        let mean_run = mean_run_bytes(max_run_bytes as f64);
        let mut g = GeneratedImage {
            span_bytes,
            fill,
            seed,
            rng: SplitMix64::new(seed),
            mean_gap_bytes: mean_run * (1.0 - fill) / fill,
            max_run_bytes,
            run_pos: 0,
            run_end: 0,
            total_ios: 0,
            total_bytes: 0,
        };
        // A dry pass counts the image (progress, ETA, report); cheap: no I/O.
        let mut dry = g.clone();
        let (mut n, mut b) = (0u64, 0u64);
        while let Some(io) = dry.step() {
            n += 1;
            b += io.1;
        }
        g.total_ios = n;
        g.total_bytes = b;
        for _ in 0..skip_ios {
            if g.step().is_none() {
                break;
            }
        }
        g
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }
    pub fn fill(&self) -> f64 {
        self.fill
    }
    pub fn span_bytes(&self) -> u64 {
        self.span_bytes
    }

    fn blocks(bytes: f64) -> u64 {
        ((bytes / IMAGE_BLOCK_BYTES as f64).ceil() as u64).max(1) * IMAGE_BLOCK_BYTES
    }

    fn sample_run(&mut self) -> u64 {
        let u = self.rng.next_f64();
        let mut acc = 0.0;
        let mut class = SIZE_CLASSES[SIZE_CLASSES.len() - 1];
        for c in SIZE_CLASSES {
            acc += c.0;
            if u < acc {
                class = c;
                break;
            }
        }
        let (_, a, b) = class;
        let x = a * (b / a).powf(self.rng.next_f64());
        Self::blocks(x).min(self.max_run_bytes)
    }

    fn sample_gap(&mut self) -> u64 {
        let u = self.rng.next_f64();
        Self::blocks(-self.mean_gap_bytes * (1.0 - u).ln())
    }

    /// Next write (offset, length), or `None` at the end of the span.
    fn step(&mut self) -> Option<(u64, u64)> {
        while self.run_pos >= self.run_end {
            let gap = self.sample_gap();
            let start = self.run_end.saturating_add(gap);
            if start >= self.span_bytes {
                self.run_pos = self.span_bytes;
                self.run_end = self.span_bytes;
                return None;
            }
            let len = self.sample_run();
            self.run_pos = start;
            self.run_end = (start + len).min(self.span_bytes);
        }
        let len = (self.run_end - self.run_pos).min(RESTORE_IO_BYTES);
        let off = self.run_pos;
        self.run_pos += len;
        debug_assert!(off.is_multiple_of(IMAGE_BLOCK_BYTES) && off + len <= self.span_bytes);
        Some((off, len))
    }
}

impl Source for GeneratedImage {
    fn next_io(&mut self) -> Option<Result<NextIo, SourceError>> {
        self.step().map(|(off, len)| {
            Ok(NextIo {
                op: Op::Write,
                offset_bytes: off,
                len_bytes: len,
                at_ns: None,
                trace_qd: None,
            })
        })
    }
    fn total_ios(&self) -> Option<u64> {
        Some(self.total_ios)
    }
    fn total_bytes(&self) -> Option<u64> {
        Some(self.total_bytes)
    }
}

/// The user's image file, restored at its own offsets (allocated non-zero blocks only).
pub struct FileImage {
    path: PathBuf,
    file: File,
    len: u64,
    span_bytes: u64,
    /// Next file offset to look at.
    pos: u64,
    pending: VecDeque<(u64, u64)>,
    buf: Vec<u8>,
    /// Non-zero bytes beyond the span, not restored.
    pub dropped_bytes: u64,
}

/// Bytes read from the image per step (bounds `pending` to 256 entries).
const READ_CHUNK_BYTES: usize = 1 << 20;

impl FileImage {
    pub fn open(path: &Path, span_bytes: u64, skip_ios: u64) -> Result<FileImage, SourceError> {
        let rd = |m: String| SourceError::Read {
            file: path.display().to_string(),
            message: m,
        };
        let file = File::open(path).map_err(|e| rd(format!("opening the image: {e}")))?;
        let len = file
            .metadata()
            .map_err(|e| rd(format!("reading metadata: {e}")))?
            .len();
        if len == 0 {
            return Err(rd("the image is empty".into()));
        }
        let mut img = FileImage {
            path: path.to_owned(),
            file,
            len,
            span_bytes,
            pos: 0,
            pending: VecDeque::new(),
            buf: vec![0; READ_CHUNK_BYTES],
            dropped_bytes: 0,
        };
        for _ in 0..skip_ios {
            match img.next_io() {
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
                None => break,
            }
        }
        Ok(img)
    }

    pub fn len_bytes(&self) -> u64 {
        self.len
    }

    fn err(&self, m: String) -> SourceError {
        SourceError::Read {
            file: self.path.display().to_string(),
            message: m,
        }
    }

    /// Next data offset at or after `from` (SEEK_DATA), or the file end.
    fn next_data(&self, from: u64) -> u64 {
        // SAFETY: lseek on an open fd with plain integers; it moves only this
        // descriptor's offset, which `fill` resets with an explicit seek before reading.
        let r = unsafe { libc::lseek(self.file.as_raw_fd(), from as libc::off_t, libc::SEEK_DATA) };
        if r < 0 {
            // ENXIO: no data after `from`; other errors (no SEEK_DATA): read everything.
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENXIO) {
                self.len
            } else {
                from
            }
        } else {
            r as u64
        }
    }

    /// Read the next chunk and queue its non-zero block runs.
    fn fill(&mut self) -> Result<bool, SourceError> {
        if self.pos >= self.len {
            return Ok(false);
        }
        let data = self.next_data(self.pos) / IMAGE_BLOCK_BYTES * IMAGE_BLOCK_BYTES;
        self.pos = data.max(self.pos);
        if self.pos >= self.len {
            return Ok(false);
        }
        let want = ((self.len - self.pos) as usize).min(READ_CHUNK_BYTES);
        self.file
            .seek(SeekFrom::Start(self.pos))
            .map_err(|e| self.err(format!("seeking to {}: {e}", self.pos)))?;
        let mut got = 0;
        while got < want {
            let n = self
                .file
                .read(&mut self.buf[got..want])
                .map_err(|e| SourceError::Read {
                    file: self.path.display().to_string(),
                    message: format!("reading at {}: {e}", self.pos + got as u64),
                })?;
            if n == 0 {
                break;
            }
            got += n;
        }
        let base = self.pos;
        let mut run: Option<(u64, u64)> = None;
        let bs = IMAGE_BLOCK_BYTES as usize;
        for (i, block) in self.buf[..got].chunks(bs).enumerate() {
            let off = base + (i * bs) as u64;
            let nonzero = block.iter().any(|&b| b != 0);
            let len = IMAGE_BLOCK_BYTES;
            if nonzero && off + len > self.span_bytes {
                self.dropped_bytes += block.len() as u64;
                continue;
            }
            match (&mut run, nonzero) {
                (Some((s, l)), true) if *s + *l == off && *l < RESTORE_IO_BYTES => *l += len,
                (_, true) => {
                    if let Some(r) = run.take() {
                        self.pending.push_back(r);
                    }
                    run = Some((off, len));
                }
                (_, false) => {
                    if let Some(r) = run.take() {
                        self.pending.push_back(r);
                    }
                }
            }
        }
        if let Some(r) = run {
            self.pending.push_back(r);
        }
        self.pos = base + got as u64;
        if got < want {
            self.pos = self.len;
        }
        Ok(true)
    }
}

impl Source for FileImage {
    fn next_io(&mut self) -> Option<Result<NextIo, SourceError>> {
        loop {
            if let Some((off, len)) = self.pending.pop_front() {
                return Some(Ok(NextIo {
                    op: Op::Write,
                    offset_bytes: off,
                    len_bytes: len,
                    at_ns: None,
                    trace_qd: None,
                }));
            }
            match self.fill() {
                Ok(true) => continue,
                Ok(false) => return None,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// Sector size the trace image tracks writes in (bytes): the smallest logical block.
const SECTOR_BYTES: u64 = 512;
/// 4 KiB blocks per lazily allocated chunk of the trace image's maps (1 GiB of span).
const CHUNK_BLOCKS: u64 = 1 << 18;

/// One byte per 4 KiB block of the span, in chunks allocated when first touched, so
/// memory follows the trace's footprint, not the drive's size.
#[derive(Default)]
struct BlockMap {
    chunks: Vec<Option<Box<[u8]>>>,
}

impl BlockMap {
    fn get(&self, block: u64) -> u8 {
        let (c, i) = (
            (block / CHUNK_BLOCKS) as usize,
            (block % CHUNK_BLOCKS) as usize,
        );
        self.chunks
            .get(c)
            .and_then(|x| x.as_ref())
            .map_or(0, |x| x[i])
    }
    fn or(&mut self, block: u64, bits: u8) {
        let (c, i) = (
            (block / CHUNK_BLOCKS) as usize,
            (block % CHUNK_BLOCKS) as usize,
        );
        if self.chunks.len() <= c {
            self.chunks.resize_with(c + 1, || None);
        }
        self.chunks[c]
            .get_or_insert_with(|| vec![0u8; CHUNK_BLOCKS as usize].into_boxed_slice())[i] |= bits;
    }
}

/// Fold `[offset, offset+len)` onto `[0, span)` in whole sectors, as the engine folds a
/// replay (`storbench_engine::run`), so the image lands where the replay will read.
fn fold_sectors(offset: u64, len: u64, span: u64) -> (u64, u64) {
    let mut start = offset / SECTOR_BYTES * SECTOR_BYTES;
    let end = offset.saturating_add(len).div_ceil(SECTOR_BYTES) * SECTOR_BYTES;
    let l = (end - start).min(span);
    if start + l > span {
        start %= span;
        if start + l > span {
            start = span - l;
        }
    }
    (start, l)
}

/// Sector mask of the part of `[s, e)` inside 4 KiB block `b`.
fn sector_mask(b: u64, s: u64, e: u64) -> u8 {
    let lo = s.max(b * IMAGE_BLOCK_BYTES);
    let hi = e.min((b + 1) * IMAGE_BLOCK_BYTES);
    let first = (lo - b * IMAGE_BLOCK_BYTES) / SECTOR_BYTES;
    let last = (hi - b * IMAGE_BLOCK_BYTES).div_ceil(SECTOR_BYTES);
    (first..last).fold(0u8, |m, i| m | (1 << i))
}

/// The trace's pre-existing data (2009 article: the image the workload expects to
/// find): every 4 KiB block a read of the trace touches in a sector the trace has not
/// written before, restored in address order in writes of up to 128 KiB. With it in
/// place no read of the replay finds a never-written sector. Offsets are folded onto
/// the span as the replay folds them.
pub struct TraceImage {
    runs: Vec<(u64, u64)>,
    next: usize,
    total_bytes: u64,
}

impl TraceImage {
    /// Scan the trace at `path` (one pass, no I/O on the target). `skip_ios`: I/Os
    /// already issued by an earlier run (resume).
    pub fn open(path: &Path, span_bytes: u64, skip_ios: u64) -> Result<TraceImage, SourceError> {
        let span = span_bytes / IMAGE_BLOCK_BYTES * IMAGE_BLOCK_BYTES;
        if span == 0 {
            return Err(SourceError::Invalid(format!(
                "{}: the image's span of {span_bytes} bytes holds no 4 KiB block",
                path.display()
            )));
        }
        let mut src = storbench_workload::replay::ReplaySource::open(path)?;
        let mut written = BlockMap::default();
        let mut image = BlockMap::default();
        while let Some(io) = src.next_io() {
            let io = io?;
            if !matches!(io.op, Op::Read | Op::Write) || io.len_bytes == 0 {
                continue;
            }
            let (s, l) = fold_sectors(io.offset_bytes, io.len_bytes, span);
            let e = s + l;
            for b in s / IMAGE_BLOCK_BYTES..e.div_ceil(IMAGE_BLOCK_BYTES) {
                let m = sector_mask(b, s, e);
                if io.op == Op::Write {
                    written.or(b, m);
                } else if m & !written.get(b) != 0 {
                    image.or(b, 1);
                }
            }
        }
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for (c, chunk) in image.chunks.iter().enumerate() {
            let Some(chunk) = chunk else { continue };
            for (i, &f) in chunk.iter().enumerate() {
                if f == 0 {
                    continue;
                }
                let off = (c as u64 * CHUNK_BLOCKS + i as u64) * IMAGE_BLOCK_BYTES;
                match runs.last_mut() {
                    Some((s, l)) if *s + *l == off && *l < RESTORE_IO_BYTES => {
                        *l += IMAGE_BLOCK_BYTES
                    }
                    _ => runs.push((off, IMAGE_BLOCK_BYTES)),
                }
            }
        }
        let total_bytes = runs.iter().map(|r| r.1).sum();
        Ok(TraceImage {
            next: (skip_ios as usize).min(runs.len()),
            runs,
            total_bytes,
        })
    }

    /// The image's writes: (offset, length), in address order.
    pub fn runs(&self) -> &[(u64, u64)] {
        &self.runs
    }
}

impl Source for TraceImage {
    fn next_io(&mut self) -> Option<Result<NextIo, SourceError>> {
        let &(off, len) = self.runs.get(self.next)?;
        self.next += 1;
        Some(Ok(NextIo {
            op: Op::Write,
            offset_bytes: off,
            len_bytes: len,
            at_ns: None,
            trace_qd: None,
        }))
    }
    fn total_ios(&self) -> Option<u64> {
        Some(self.runs.len() as u64)
    }
    fn total_bytes(&self) -> Option<u64> {
        Some(self.total_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn collect(s: &mut dyn Source) -> Vec<(u64, u64)> {
        let mut v = Vec::new();
        while let Some(io) = s.next_io() {
            let io = io.unwrap();
            assert_eq!(io.op, Op::Write);
            v.push((io.offset_bytes, io.len_bytes));
        }
        v
    }

    #[test]
    fn generated_image_is_scattered_mixed_deterministic_and_resumable() {
        let span = 1u64 << 30;
        let mut a = GeneratedImage::new(span, 0.5, 7, 0);
        let total = a.total_ios().unwrap();
        let ios = collect(&mut a);
        assert_eq!(ios.len() as u64, total);
        let bytes: u64 = ios.iter().map(|x| x.1).sum();
        let share = bytes as f64 / span as f64;
        assert!((0.3..0.7).contains(&share), "covers {share} of the span");
        // LBA order, aligned, inside the span, no overlap.
        for w in ios.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0);
        }
        assert!(ios
            .iter()
            .all(|&(o, l)| o % 4096 == 0 && l % 4096 == 0 && o + l <= span));
        // Scattered: many gaps, and mixed sizes.
        let gaps = ios.windows(2).filter(|w| w[0].0 + w[0].1 != w[1].0).count();
        assert!(gaps > 300, "only {gaps} gaps");
        let small = ios.iter().filter(|x| x.1 <= 32768).count();
        let full = ios.iter().filter(|x| x.1 == RESTORE_IO_BYTES).count();
        assert!(small > 50 && full > 50, "small {small} full {full}");
        // Same seed, same image; other seed, other image.
        assert_eq!(collect(&mut GeneratedImage::new(span, 0.5, 7, 0)), ios);
        assert_ne!(collect(&mut GeneratedImage::new(span, 0.5, 8, 0)), ios);
        // Resume after 100 I/Os continues exactly.
        assert_eq!(
            collect(&mut GeneratedImage::new(span, 0.5, 7, 100)),
            ios[100..]
        );
    }

    #[test]
    fn generated_image_fill_is_unbiased_on_small_and_large_spans() {
        // Averaged over seeds, the image covers the asked share of the span, also on
        // small spans where the per-file cap (1/16 of the span) cuts the size tail.
        for (span, fill) in [(256u64 << 20, 0.4), (256 << 20, 0.2), (8 << 30, 0.4)] {
            let seeds = 40u64;
            let mean: f64 = (0..seeds)
                .map(|seed| {
                    let g = GeneratedImage::new(span, fill, seed, 0);
                    g.total_bytes().unwrap() as f64 / span as f64
                })
                .sum::<f64>()
                / seeds as f64;
            assert!(
                (mean - fill).abs() < 0.1 * fill,
                "span {span}: asked {fill}, got {mean:.3} on average"
            );
        }
    }

    #[test]
    fn file_image_restores_nonzero_blocks_and_drops_beyond_span() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("disk.img");
        let mut f = File::create(&p).unwrap();
        let mut data = vec![0u8; 64 * 4096];
        for b in [0usize, 1, 2, 10, 40, 41, 63] {
            data[b * 4096 + 7] = 1;
        }
        f.write_all(&data).unwrap();
        drop(f);
        let mut img = FileImage::open(&p, 48 * 4096, 0).unwrap();
        let ios = collect(&mut img);
        assert_eq!(
            ios,
            vec![(0, 3 * 4096), (10 * 4096, 4096), (40 * 4096, 2 * 4096)]
        );
        assert_eq!(img.dropped_bytes, 4096);
        let mut again = FileImage::open(&p, 48 * 4096, 1).unwrap();
        assert_eq!(collect(&mut again), ios[1..]);
        let e = FileImage::open(&tmp.path().join("nope.img"), 4096, 0)
            .err()
            .unwrap();
        assert!(e.to_string().contains("nope.img"));
    }

    #[test]
    fn trace_image_holds_what_the_trace_reads_before_writing_it_in_address_order() {
        use storbench_trace::{IoRecord, TraceMeta, TraceWriter};
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("t.parquet");
        let mut w = TraceWriter::create(&p, &TraceMeta::default()).unwrap();
        let k = 4096u64;
        let ios = [
            (Op::Write, 10 * k, 2 * k),    // written first: never imaged
            (Op::Read, 10 * k, 2 * k),     // reads its own writes
            (Op::Read, 50 * k, 3 * k),     // pre-existing data: 50..53
            (Op::Write, 60 * k, 512),      // one sector of block 60
            (Op::Read, 60 * k + 512, 512), // another sector of it: imaged
            (Op::Read, 60 * k, 512),       // the written sector: not imaged again
            (Op::Read, 2 * k + 100, 10),   // unaligned: its whole block
            (Op::Trim, 80 * k, k),         // trims are not data
            (Op::Read, 80 * k, k),         // read after a trim, never written: imaged
            (Op::Read, 1000 * k, 2 * k),   // beyond a 512-block span: folded to 488
            (Op::Read, 51 * k, k),         // read twice: once in the image
        ];
        for (i, (op, o, l)) in ios.iter().enumerate() {
            w.write(&IoRecord::new(*op, *o, *l, i as u64 * 1000))
                .unwrap();
        }
        w.finish().unwrap();
        let mut img = TraceImage::open(&p, 512 * k, 0).unwrap();
        let want = vec![
            (2 * k, k),
            (50 * k, 3 * k),
            (60 * k, k),
            (80 * k, k),
            (488 * k, 2 * k),
        ];
        assert_eq!(img.runs(), want.as_slice());
        assert_eq!(img.total_bytes(), Some(8 * k));
        assert_eq!(collect(&mut img), want);
        let mut resumed = TraceImage::open(&p, 512 * k, 2).unwrap();
        assert_eq!(collect(&mut resumed), want[2..]);
    }

    #[test]
    fn trace_image_runs_stop_at_128k() {
        use storbench_trace::{IoRecord, TraceMeta, TraceWriter};
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("t.parquet");
        let mut w = TraceWriter::create(&p, &TraceMeta::default()).unwrap();
        w.write(&IoRecord::new(Op::Read, 0, 1 << 20, 0)).unwrap();
        w.finish().unwrap();
        let img = TraceImage::open(&p, 64 << 20, 0).unwrap();
        assert_eq!(img.runs().len(), 8);
        assert!(img.runs().iter().all(|r| r.1 == RESTORE_IO_BYTES));
    }
}
