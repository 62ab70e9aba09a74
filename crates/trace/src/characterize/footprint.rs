//! Footprint: distinct bytes touched by reads and writes, exact at any size, in bounded
//! memory.
//!
//! A paged bitmap of device units (4 KiB, or 512 B once any I/O needs it) holds the
//! ranges it can, O(1) per range; the rest (unaligned, very long, beyond its page
//! directory) go to an exact union of ranges ([`Union`]), and the two are combined
//! without double counting. Past its page budget ([`FOOTPRINT_MAX_PAGES`], 64 MiB) the
//! bitmap retires: its set units move into the union as ranges and every range after
//! goes there too, so nothing is ever rounded (it used to coarsen its unit instead:
//! a 16-volume trace of 512-byte I/O came out +82% at 8 KiB units, issue 34).
//!
//! Issue 34 measured the bitmap against the plain union alone (the standard sort and
//! an in-place merge, `union.rs`) on the whole `characterize` (docs/benchmarks.md,
//! "Footprint: the bitmap against a plain union"): on the 10 M-I/O bench trace the
//! bitmap's command took 0.41 CPU-s against 1.04 (2.5x), so it stays; where it retires
//! (16 volumes over 1.76 TB) the command costs what the union does. The radix sort
//! its flush and the old interval set used was replaced by the standard sort there.
//!
//! The bitmap's pages are plain boxed arrays, allocated (zeroed) when first touched.
//! Issue 22 keeps a hand-written part only if it wins 1.5x on the whole command; the
//! huge-page arena that held them before (one zeroed allocation advised for
//! transparent huge pages, with a slot directory) did not, so it was removed. Measured
//! on the whole `storbench characterize --json -q TRACE` (release builds of main,
//! with the arena, and of this code; `bench/cputime.py` user + system CPU, pinned to
//! one core, runs alternating, JSON byte-identical every run; traces from `storbench
//! synth heavy-2011 --scale S`, whose unit refines to 512 B so the bitmap is large):
//!
//! | I/Os | pairs | arena, median | plain pages, median | arena's gain (median of pair ratios) |
//! |---|---|---|---|---|
//! | 1,000 | 21 | 7.3 ms | 9.7 ms | 1.30x |
//! | 1 M | 9 | 140 ms | 156 ms | 1.11x |
//! | 10 M | 9 | 1,223 ms | 1,267 ms | 1.035x |
//!
//! What the arena saved is page faults (1 M: 2,520 against 10,500 minor faults: 4 KiB
//! pages instead of 2 MiB ones), a fixed cost per bitmap page touched, not per I/O. At
//! 1,000 I/Os it is 2.4 ms of a command that takes milliseconds either way (process
//! start and the Parquet footer dominate); at the sizes worth characterizing (1 M I/Os
//! and more) it is 3-11%. docs/benchmarks.md, "trace: hand-written code", has the
//! commands.

use super::union::{Union, FOOTPRINT_MAX_RANGES};
use crate::model::Op;

/// Bits per bitmap page (a page is 32 KiB).
const PAGE_BITS: u32 = 18;
const PAGE_WORDS: usize = 1 << (PAGE_BITS - 6);
const PAGE_UNIT_MASK: u64 = (1 << PAGE_BITS) - 1;
/// Bitmap pages held at most (64 MiB); beyond that the unit doubles.
pub const FOOTPRINT_MAX_PAGES: usize = 2048;
/// Page-directory entries at most; ranges past it go to the interval set.
const MAX_DIR: usize = 1 << 16;
/// The finest bitmap unit (512 B sectors) and the one it starts with (4 KiB).
const FINEST_UNIT_SHIFT: u32 = 9;
const START_UNIT_SHIFT: u32 = 12;
/// Ranges longer than this many units go to the interval set (one entry there, where
/// the bitmap would set millions of bits).
const MAX_BITMAP_RANGE_UNITS: u64 = 4 << PAGE_BITS;
/// Pages a range can add past the budget before the bitmap coarsens (one range spans
/// at most this many).
const PAGES_PAST_BUDGET: usize = (MAX_BITMAP_RANGE_UNITS >> PAGE_BITS) as usize + 1;

// How the common ranges are applied: measured on the 10 M bench trace (64K ranges a
// flush over an 8 MB bitmap, 131K cache lines; perf samples of the whole characterize
// run, release build, one core).
//
// Kept: region buckets (`REGION_PAGES`, `BUCKET_RANGES_PER_PAGE`): 16 streams of
// appends for the bench's 8 MB bitmap, and a region of 512 KiB is fetched once (in
// address order) for about four ranges a line, then applied from L2. Footprint samples
// 14.3% + 5.3% -> 12.2% + 3.9%; the run 0.62 -> 0.60 CPU-s (min and median of 5, load
// 6); 2 MB more RSS (20.8 -> 22.9 MB).
//
// Replaced: the common ranges set in arrival order with the word of the range 48
// ahead prefetched (first commit of that pass: the run 0.78 -> 0.72 CPU-s against two
// passes, load 7.5). Prefetch distances 32 to 160 measured within noise of each other.
//
// Kept (this session; the bench's ranges alone: a scratch harness, not kept, feeding
// trace_bench's synthetic offsets and lengths to `Footprint::add_data` in 8K-row
// chunks, then `finish`; min thread CPU ns per I/O of 5 in one process, processes
// interleaved, load 7-8):
// - the closed ranges staged 1K at a time (16 KiB, in L1) and sorted out into buckets
//   right away, instead of a 1 MiB buffer written by `add_data` and read back by the
//   flush; the flush points stay the same (every `FOOTPRINT_BUF_RANGES` ranges), so
//   the uncommon ranges are applied exactly as before: 12.66 -> 12.27 (min of 12).
// - the sort-out loop with split borrows (directory and buckets in registers, each
//   bucket's length and limit in one struct) and the drain over the region's pages as
//   fixed-size arrays (word indices masked to the page: no bounds checks): with the
//   staging, 12.41 -> 11.09 (min of 9; 11.90 -> 10.95 in a second set of 9).
// In the whole characterize run (the commit before against this one, both built from
// clean trees; perf record of the 10 M bench trace, 3 runs each): footprint's own
// functions 14.0-14.5% -> 12.4-13.3% of samples, push_chunk (where add_data is
// inlined) 5.6-6.5% -> 5.8-6.9%.
// Task-clock moved by about its noise: 10 M min of 11 interleaved 667 -> 654 ms
// (medians 789 and 787; load 5-6), and in a quiet spell (load 0.2) min of 9 633 -> 593
// ms (medians 672 and 619, the new one lower in 7 pairs of 9); 50 M min of 7 3078 ->
// 3236 ms at load 6 and 2910 -> 2930 ms at load 0.7 (its runs spread over 2.9-4.6 s
// even then); fifo min of 7 690 -> 645 and 828 -> 662 ms. Max RSS 1 MB lower (the 1 MiB buffer
// gone): 1 M 22.8 -> 21.8 MB, 50 M 23.3 -> 22.2 MB.
//
// Kept (fixed cost of short traces): a flush's ranges in pages not yet present (in a
// trace's first flush, all of its 64K) were set as they came once their pages were
// allocated, each a cache miss into a cold bitmap: 10% of a 100,000-I/O run's samples
// on one `or`. Now those that are common once the pages exist go to their region's
// bucket like the others, and new pages are allocated in page order. The finish's
// popcount vectorised with AVX-512 VPOPCNTDQ where the CPU has it (5.5% -> 3.6% of
// the 100 K run's samples; memory-bound). 100 K bench trace 20.2 -> 17.8 ms task-clock
// min of 9 interleaved (load 2.9); 1 M 96.2 -> 92.4 ms (min of 9; a later set at
// load 3 within noise); perf samples of footprint's functions per 1000 of the QD
// sweep's (unchanged code as a yardstick), 1 M, 3 rounds of 3 runs: 579, 597, 589 ->
// 461, 501, 462. Output byte-identical (100 K, 1 M, 3 M, 10 M bench; 1 M, 10 M FIFO).
//
// Rejected (same measure):
// - huge pages for the bitmap through glibc's `glibc.malloc.hugetlb=1` (its heap
//   advised MADV_HUGEPAGE; AnonHugePages showed it took): 12.87 against 13.12 alone,
//   and the whole characterize run 706 against 709 ms task-clock (min of 7, load 7).
//   Taken up again later as one arena (removed in issue 22: see the module doc), for
//   the fixed cost rather than the loop: a 32 KiB page per `vec![0; ..]` was a memset
//   and 8 page faults, so the 6 MB
//   bitmap of a 1,000-I/O bench trace cost 1,900 faults, more than the rest of the
//   run (2,210 faults, 8.4-11 ms against 3.5 ms for reading the file alone). One
//   zeroed allocation advised for huge pages, plus the finish's popcount with the
//   popcnt instruction: 1,000 I/Os 11.0 -> 4.8 ms (min of 15 interleaved, load 4-5;
//   medians 12.5 -> 5.2), 1 M 111 -> 100 ms (min of 9, load 4), 10 M 597 -> 554 ms
//   (min of 9, load 4.2; medians 842 -> 783); output byte-identical.
// - the drain sorted by page within its region (a counting-sort pass, then each 32 KiB
//   page set from L1): 14.17 against 11.64; the pass costs more than the L2 hits save.
// - prefetching the bucket's next lines before an append (T0 32 ahead, or for writing
//   16 or 48 ahead): 11.43, 11.20, 11.15 against 10.96.
// - one store when a range lies in one word (a branch, instead of two selects and two
//   stores): 11.54 against 10.95.
// - 4096 bucket entries a page (8 ranges a line fetched): 10.66 against 10.95, within
//   noise, for 2 MB more RSS on the bench (16 MB more at the page budget).
//
// Rejected earlier: grouping a flush's ranges by 1 MiB region of the bitmap (one
// counting-sort pass) so each region is applied from L2: nearly every range still
// touches a line of its own, so no miss is saved and the pass is pure cost (flush 15.2%
// -> 17.4% of samples). A bucket per bitmap page (2048 ranges, 8 KiB a page): 256
// streams of appends for the bench's bitmap, and the appends missed where the bitmap
// words had (flush and drains 17.6% against 17.6%; alone on the bench's ranges 14.5
// against 13.3 ns per I/O).

/// Asks the CPU to bring `word`'s cache line in (a hint: no effect on any result).
#[inline(always)]
fn prefetch(word: &u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and changes no memory; the address is a valid
    // reference anyway, and SSE is part of every x86_64 CPU.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((word as *const u64).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = word;
}

/// The bitmap's pages by page number, each allocated (zeroed) when first needed.
#[derive(Clone, Debug, Default)]
struct Pages {
    dir: Vec<Option<Box<[u64; PAGE_WORDS]>>>,
    /// Pages present.
    count: usize,
}

impl Pages {
    /// Directory entries (page numbers below this may be present).
    fn dir_len(&self) -> usize {
        self.dir.len()
    }

    /// Pages present.
    fn count(&self) -> usize {
        self.count
    }

    fn has(&self, p: usize) -> bool {
        self.dir.get(p).is_some_and(Option::is_some)
    }

    fn get(&self, p: usize) -> Option<&[u64; PAGE_WORDS]> {
        self.dir.get(p)?.as_deref()
    }

    /// Page `p`, allocated (zeroed) if absent.
    fn get_or_alloc(&mut self, p: usize) -> &mut [u64; PAGE_WORDS] {
        debug_assert!(p < MAX_DIR);
        if p >= self.dir.len() {
            self.dir.resize_with(p + 1, || None);
        }
        let count = &mut self.count;
        self.dir[p].get_or_insert_with(|| {
            *count += 1;
            // Zeroed by the allocator (fresh memory from the kernel needs no memset).
            vec![0u64; PAGE_WORDS]
                .into_boxed_slice()
                .try_into()
                .expect("PAGE_WORDS words")
        })
    }

    /// The present pages among `base..base + REGION_PAGES`, by page number.
    fn region_mut(&mut self, base: usize) -> [Option<&mut [u64; PAGE_WORDS]>; REGION_PAGES] {
        let mut out: [Option<&mut [u64; PAGE_WORDS]>; REGION_PAGES] = Default::default();
        let end = (base + REGION_PAGES).min(self.dir.len());
        for (o, page) in out.iter_mut().zip(&mut self.dir[base..end]) {
            *o = page.as_deref_mut();
        }
        out
    }

    /// Present pages with their page numbers, in page order.
    fn iter(&self) -> impl Iterator<Item = (usize, &[u64; PAGE_WORDS])> + '_ {
        (self.dir.iter().enumerate()).filter_map(|(p, w)| w.as_deref().map(|w| (p, w)))
    }
}

/// Set bits of `words`: with the CPU's popcount instruction where it has one (the
/// baseline x86_64 target lacks it, and the bit-twiddling count of a bench trace's
/// 6 MB bitmap took 28% of a 1,000-I/O run).
fn count_ones(words: &[u64]) -> u64 {
    fn portable(words: &[u64]) -> u64 {
        words.iter().map(|w| u64::from(w.count_ones())).sum()
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
    {
        // The same loop, vectorised to a popcount of eight words at once.
        #[target_feature(enable = "popcnt,avx512f,avx512vpopcntdq")]
        fn with_vpopcnt(words: &[u64]) -> u64 {
            words.iter().map(|w| u64::from(w.count_ones())).sum()
        }
        // SAFETY: the CPU has AVX-512F and VPOPCNTDQ (detected just above).
        return unsafe { with_vpopcnt(words) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        #[target_feature(enable = "popcnt")]
        fn with_popcnt(words: &[u64]) -> u64 {
            words.iter().map(|w| u64::from(w.count_ones())).sum()
        }
        // SAFETY: the CPU has the popcnt instruction (detected just above).
        return unsafe { with_popcnt(words) };
    }
    portable(words)
}

/// Distinct bytes touched: a paged bitmap of device units (4 KiB, refined down to
/// 512 B when I/O is only that aligned) for the common case, O(1) per range; ranges the
/// bitmap cannot hold exactly (not 512-byte aligned, very long, or beyond the
/// directory) go to an exact interval set, and the two are combined without double
/// counting at the end. Memory is bounded: at most [`FOOTPRINT_MAX_PAGES`] pages (the
/// unit doubles past that, and the figure becomes an over-estimate by less than one
/// unit per range) plus the interval set's own bound ([`FOOTPRINT_MAX_RANGES`]).
#[derive(Debug)]
pub struct Footprint {
    unit_shift: u32,
    /// False once the bitmap was coarsened (ranges since rounded out to the unit).
    exact: bool,
    pages: Pages,
    max_pages: usize,
    /// Refining the unit to this many bits (or fewer) was refused for lack of room;
    /// it stays refused, since pages only grow while the bitmap is exact (0: none yet).
    refused_shift: u32,
    rest: Union,
    /// Past the page budget: every range goes to `rest` (see the module docs).
    retired: bool,
    /// Closed ranges not yet sorted out: `stage[..stage_len]` (fixed length
    /// [`STAGE_RANGES`]).
    stage: Vec<(u64, u64)>,
    stage_len: usize,
    /// Closed ranges since the last flush already sorted out by
    /// [`Footprint::sort_out`] (common ones in buckets, the others in `others`); with
    /// the staged and the open range, at most [`FOOTPRINT_BUF_RANGES`].
    sorted_out: usize,
    /// The last range added, still extended by a range starting at its end.
    open: Option<(u64, u64)>,
    /// Scratch of a flush: sorted ranges (slow path), sort buffer, unit ranges and
    /// interval-set ranges (fast path), pages to allocate and their marks.
    sorted: Vec<(u64, u64)>,
    units: Vec<(u64, u64)>,
    to_rest: Vec<(u64, u64)>,
    new_pages: Vec<usize>,
    marked: Vec<u64>,
    /// The closed ranges since the last flush that [`Footprint::apply_common`] left,
    /// in arrival order (at most [`FOOTPRINT_BUF_RANGES`]).
    others: Vec<(u64, u64)>,
    /// Ranges each flush took (tests check staging keeps the flush points).
    #[cfg(test)]
    flushed: Vec<usize>,
    /// False: every range takes the general path (tests compare the two).
    common_path: bool,
    /// Per region of [`REGION_PAGES`] pages, common ranges not yet set in the bitmap:
    /// `unit offset in the region << 6 | (units - 1)`. A region's bucket holds at most
    /// its `limit` = [`BUCKET_RANGES_PER_PAGE`] per page it had when last
    /// emptied (0: not computed), so all buckets together hold at most 8 KiB per
    /// bitmap page (16 MiB at the page budget). All are applied before the bitmap is
    /// read or its unit changes (and dropped then, as regions change with the unit).
    buckets: Vec<Bucket>,
}

/// Ranges a flush applies (the closed ones since the last flush and the open one): the
/// uncommon ones wait in `others` until then (up to 1 MiB, plus scratch as large).
const FOOTPRINT_BUF_RANGES: usize = 1 << 16;
/// Closed ranges staged before they are sorted out (16 KiB: written and read back from
/// L1).
const STAGE_RANGES: usize = 1 << 10;

/// Bitmap pages per bucket region (512 KiB of bitmap: applied from L2).
const REGION_PAGES: usize = 16;
const REGION_UNIT_MASK: u64 = (1 << (PAGE_BITS + 4)) - 1;
const _: () = assert!(REGION_PAGES == 1 << 4 && PAGE_BITS + 4 + 6 <= 32);
/// Bucket entries per page of a region (4 bytes each): 4 ranges a cache line.
const BUCKET_RANGES_PER_PAGE: usize = 2048;

impl Default for Footprint {
    fn default() -> Self {
        Self::with_limits(FOOTPRINT_MAX_PAGES, FOOTPRINT_MAX_RANGES)
    }
}

/// A region's common ranges not yet set (see `Footprint::buckets`).
#[derive(Clone, Debug, Default)]
struct Bucket {
    ranges: Vec<u32>,
    limit: usize,
}

/// Empties region `r`'s bucket into the bitmap and sets its limit from the pages the
/// region has now (at least one: a bucketed range's).
#[cold]
#[inline(never)]
fn make_room(pages: &mut Pages, bucket: &mut Bucket, r: usize) {
    if !bucket.ranges.is_empty() {
        drain_region(pages, bucket, r);
    }
    let base = r * REGION_PAGES;
    let pages = (base..(base + REGION_PAGES).min(pages.dir_len()))
        .filter(|&p| pages.has(p))
        .count();
    debug_assert!(pages > 0);
    bucket.limit = BUCKET_RANGES_PER_PAGE * pages;
    if bucket.ranges.capacity() < bucket.limit {
        bucket.ranges.reserve_exact(bucket.limit);
    }
}

/// Puts units `u0..=last` (at most 64, in one present page) in their region's bucket,
/// emptying it first when full.
#[inline(always)]
fn bucket_range(pages: &mut Pages, buckets: &mut [Bucket], u0: u64, last: u64) {
    let p = (u0 >> PAGE_BITS) as usize;
    debug_assert!(last - u0 < 64 && (last >> PAGE_BITS) as usize == p && pages.has(p));
    let r = p / REGION_PAGES;
    let bucket = &mut buckets[r];
    if bucket.ranges.len() >= bucket.limit {
        make_room(pages, bucket, r);
    }
    let x = ((u0 & REGION_UNIT_MASK) as u32) << 6 | (last - u0) as u32;
    bucket.ranges.push(x);
}

/// Sets the ranges of region `r`'s bucket, with the region's lines fetched first in
/// address order (streamed), and empties it.
#[inline(never)]
fn drain_region(pages: &mut Pages, bucket: &mut Bucket, r: usize) {
    // The region's pages as fixed-size arrays: word indices masked to the page
    // (a bucketed range lies in its page) need no bounds check.
    let mut pages = pages.region_mut(r * REGION_PAGES);
    for words in pages.iter().flatten() {
        for w in words.iter().step_by(8) {
            prefetch(w);
        }
    }
    for &x in &bucket.ranges {
        let off = (x >> 6) as usize;
        let page = pages[(off >> PAGE_BITS) % REGION_PAGES]
            .as_deref_mut()
            .expect("a bucketed range's page exists");
        let a = off & PAGE_UNIT_MASK as usize;
        let b = a + (x & 63) as usize;
        debug_assert!(b < PAGE_WORDS * 64, "a bucketed range lies in its page");
        let (w0, w1) = (a / 64, b / 64 % PAGE_WORDS);
        let end_mask = !0u64 >> (63 - b % 64);
        let same = w0 == w1;
        let first_mask = (!0u64 << (a % 64)) & if same { end_mask } else { !0 };
        page[w0] |= first_mask;
        page[w1] |= if same { first_mask } else { end_mask };
    }
    bucket.ranges.clear();
}

/// Bit i of `x` to bits 2i and 2i+1.
fn spread_bits(x: u32) -> u64 {
    let mut x = u64::from(x);
    x = (x | x << 16) & 0x0000_FFFF_0000_FFFF;
    x = (x | x << 8) & 0x00FF_00FF_00FF_00FF;
    x = (x | x << 4) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | x << 2) & 0x3333_3333_3333_3333;
    x = (x | x << 1) & 0x5555_5555_5555_5555;
    x | x << 1
}

/// Sets bits [a, b) of a page.
#[inline]
fn set_bit_range(words: &mut [u64], a: usize, b: usize) {
    debug_assert!(a < b && b <= words.len() * 64);
    let (wa, wb) = (a / 64, (b - 1) / 64);
    let ma = !0u64 << (a % 64);
    let mb = !0u64 >> (63 - (b - 1) % 64);
    if wa == wb {
        words[wa] |= ma & mb;
    } else {
        words[wa] |= ma;
        words[wa + 1..wb].fill(!0);
        words[wb] |= mb;
    }
}

/// Counts the set bits [a, b) of a page.
fn count_bit_range(words: &[u64], a: usize, b: usize) -> u64 {
    if a >= b {
        return 0;
    }
    let (wa, wb) = (a / 64, (b - 1) / 64);
    let ma = !0u64 << (a % 64);
    let mb = !0u64 >> (63 - (b - 1) % 64);
    if wa == wb {
        return u64::from((words[wa] & ma & mb).count_ones());
    }
    let mid: u64 = words[wa + 1..wb]
        .iter()
        .map(|w| u64::from(w.count_ones()))
        .sum();
    u64::from((words[wa] & ma).count_ones()) + mid + u64::from((words[wb] & mb).count_ones())
}

/// Calls `f` with each run of set units `[a, b)` of the bitmap, in order.
fn for_each_run(pages: &Pages, f: &mut dyn FnMut(u64, u64)) {
    let mut run: Option<(u64, u64)> = None;
    for (p, words) in pages.iter() {
        let page_unit = (p as u64) << PAGE_BITS;
        for (wi, &w) in words.iter().enumerate() {
            let mut x = w;
            while x != 0 {
                let a = x.trailing_zeros();
                let ones = (!(x >> a)).trailing_zeros().min(64 - a);
                let u = page_unit + (wi as u64) * 64 + u64::from(a);
                let (s, e) = (u, u + u64::from(ones));
                match &mut run {
                    Some((_, end)) if *end == s => *end = e,
                    _ => {
                        if let Some((rs, re)) = run.replace((s, e)) {
                            f(rs, re);
                        }
                    }
                }
                x &= if a + ones >= 64 {
                    0
                } else {
                    !0u64 << (a + ones)
                };
            }
        }
    }
    if let Some((s, e)) = run {
        f(s, e);
    }
}

impl Footprint {
    /// With explicit bounds (tests use tiny ones).
    pub fn with_limits(max_pages: usize, max_intervals: usize) -> Self {
        assert!(max_pages >= 2);
        Footprint {
            unit_shift: START_UNIT_SHIFT,
            exact: true,
            pages: Pages::default(),
            max_pages,
            refused_shift: 0,
            rest: Union::with_max_ranges(max_intervals),
            retired: false,
            stage: vec![(0, 0); STAGE_RANGES],
            stage_len: 0,
            sorted_out: 0,
            open: None,
            sorted: Vec::new(),
            units: Vec::new(),
            to_rest: Vec::new(),
            new_pages: Vec::new(),
            marked: vec![0; MAX_DIR / 64],
            others: Vec::new(),
            common_path: true,
            #[cfg(test)]
            flushed: Vec::new(),
            buckets: Vec::new(),
        }
    }

    /// Adds the byte range [start, end). Ranges are buffered and applied in bulk (see
    /// `Footprint::flush`). A range continuing the last one extends it.
    pub fn add(&mut self, start: u64, end: u64) {
        debug_assert!(start <= end);
        if start == end {
            return;
        }
        if self.retired {
            self.rest.add(start, end);
            return;
        }
        match &mut self.open {
            Some((_, e)) if *e == start => *e = end,
            open => {
                if let Some(r) = open.replace((start, end)) {
                    self.stage[self.stage_len] = r;
                    self.stage_len += 1;
                    if self.stage_len == STAGE_RANGES {
                        self.sort_out();
                    }
                }
                if self.sorted_out + self.stage_len + 1 >= FOOTPRINT_BUF_RANGES {
                    self.flush();
                }
            }
        }
    }

    /// [`Footprint::add`] of `[offset, offset + len)` for every read and write of a
    /// batch, in one branch-free loop: the open range lives in registers, and each
    /// row writes the next stage slot whether or not it closes a range.
    pub(super) fn add_data(&mut self, ops: &[Op], offset: &[u64], len: &[u64]) {
        let n = ops.len();
        assert!(offset.len() == n && len.len() == n);
        if self.retired {
            for i in 0..n {
                if ops[i].is_data() {
                    self.rest.add(offset[i], offset[i].saturating_add(len[i]));
                }
            }
            return;
        }
        let mut i = 0;
        while i < n {
            let mut k = self.stage_len;
            let mut has = self.open.is_some();
            let (mut os, mut oe) = self.open.unwrap_or((0, 0));
            let stage = &mut self.stage[..];
            // Stops when the stage is full (a slot left for the open range's write),
            // or the ranges since the last flush and the open one reach
            // FOOTPRINT_BUF_RANGES (where the unstaged buffer flushed).
            let limit = (FOOTPRINT_BUF_RANGES - self.sorted_out).min(STAGE_RANGES);
            while i < n && k + usize::from(has) < limit {
                let s = offset[i];
                let e = s.saturating_add(len[i]);
                let keep = ops[i].is_data() & (s != e);
                let extend = keep & has & (s == oe);
                let start_new = keep & !extend;
                stage[k] = (os, oe);
                k += usize::from(start_new & has);
                // A mask, not a branch: whether a range continues the last one
                // follows no pattern the CPU could predict. The mask goes through
                // black_box, else LLVM sees the select and makes it a branch again
                // (measured: 12% of this loop's samples on the mispredict).
                let new_mask = std::hint::black_box(0u64.wrapping_sub(u64::from(start_new)));
                os ^= (os ^ s) & new_mask;
                oe ^= (oe ^ e) & 0u64.wrapping_sub(u64::from(keep));
                has |= keep;
                i += 1;
            }
            self.stage_len = k;
            self.open = has.then_some((os, oe));
            self.sort_out();
            if self.sorted_out + usize::from(has) >= FOOTPRINT_BUF_RANGES {
                self.flush();
            }
        }
    }

    /// Applies the ranges since the last flush in two steps, the first done as they
    /// came, a stage at a time, by [`Footprint::sort_out`]. First the common ones
    /// (aligned to the unit, or any once the bitmap is coarse; at most 64 units; in one
    /// page that exists) go to their region's bucket, set when it fills or before the
    /// unit changes or the bitmap is read: setting them can neither refine nor coarsen
    /// the unit nor allocate a page, and a later change of unit carries their bits
    /// over exactly (refining splits units losslessly, and coarsening ORs pairs, which
    /// is how a range applied after it is rounded out), so when they are set does not
    /// change any result. The others (rare: unaligned, long, in new pages) then go
    /// here: when nothing in them can change the unit (no refinement wanted, no page
    /// past the budget), as they came; otherwise in address order, as the unit changes
    /// along the way.
    fn flush(&mut self) {
        if let Some(r) = self.open.take() {
            if self.stage_len == STAGE_RANGES {
                self.sort_out();
            }
            self.stage[self.stage_len] = r;
            self.stage_len += 1;
        }
        self.sort_out();
        let n = std::mem::take(&mut self.sorted_out);
        if n == 0 {
            return;
        }
        #[cfg(test)]
        self.flushed.push(n);
        let mut others = std::mem::take(&mut self.others);
        if !others.is_empty() && !self.apply_unordered(&others) {
            // The unit may change on the way: what the buckets hold goes in first.
            self.drain_buckets();
            self.buckets = Vec::new();
            let mut sorted = std::mem::take(&mut self.sorted);
            sorted.clear();
            sorted.extend_from_slice(&others);
            sorted.sort_unstable_by_key(|r| r.0);
            for &(s, e) in &sorted {
                self.apply(s, e);
            }
            self.sorted = sorted;
        }
        others.clear();
        self.others = others;
    }

    /// Sorts out the staged ranges: the common ones to their buckets, the others to
    /// `others` (applied at the next flush). Nothing changes the unit or the pages
    /// between flushes, so this sorts them out as the flush itself would.
    fn sort_out(&mut self) {
        let n = std::mem::take(&mut self.stage_len);
        if n == 0 {
            return;
        }
        self.sorted_out += n;
        let stage = std::mem::take(&mut self.stage);
        let mut others = std::mem::take(&mut self.others);
        if self.common_path {
            self.apply_common(&stage[..n], &mut others);
        } else {
            others.extend_from_slice(&stage[..n]);
        }
        self.others = others;
        self.stage = stage;
    }

    /// Sets the common ranges of `ranges` (see [`Footprint::flush`]) and pushes the
    /// others, in order, to `others`.
    fn apply_common(&mut self, ranges: &[(u64, u64)], others: &mut Vec<(u64, u64)>) {
        let sh = self.unit_shift;
        let mask = (1u64 << sh) - 1;
        // Once coarse, every range is rounded out to the unit.
        let any_alignment = !self.exact;
        let regions = self.pages.dir_len().div_ceil(REGION_PAGES);
        if self.buckets.len() < regions {
            self.buckets.resize_with(regions, Bucket::default);
        }
        // Split borrows: the loop keeps the directory and buckets in registers.
        let Footprint { pages, buckets, .. } = self;
        for &(s, e) in ranges {
            debug_assert!(s < e);
            let u0 = s >> sh;
            let last = (e - 1) >> sh;
            let p = (u0 >> PAGE_BITS) as usize;
            let common = ((s | e) & mask == 0 || any_alignment)
                && last - u0 < 64
                && (last >> PAGE_BITS) as usize == p
                && pages.has(p);
            if !common {
                others.push((s, e));
                continue;
            }
            bucket_range(pages, buckets, u0, last);
        }
    }

    /// Applies every bucket (before the bitmap is read or its unit changes).
    fn drain_buckets(&mut self) {
        for (r, bucket) in self.buckets.iter_mut().enumerate() {
            if !bucket.ranges.is_empty() {
                drain_region(&mut self.pages, bucket, r);
            }
        }
    }

    /// The fast path for the ranges [`Footprint::apply_common`] left; false (nothing
    /// changed) when the unit could change while applying `ranges`.
    fn apply_unordered(&mut self, ranges: &[(u64, u64)]) -> bool {
        let sh = self.unit_shift;
        let mask = (1u64 << sh) - 1;
        self.units.clear();
        self.to_rest.clear();
        self.new_pages.clear();
        let mut ok = true;
        for &(s, e) in ranges {
            if (s | e) & mask != 0 && self.exact {
                let want = (s | e).trailing_zeros();
                if want < FINEST_UNIT_SHIFT || want <= self.refused_shift {
                    self.to_rest.push((s, e));
                    continue;
                }
                ok = false;
                break;
            }
            let u0 = s >> sh;
            let u1 = (e >> sh) + u64::from(e & mask != 0);
            if u1 - u0 > MAX_BITMAP_RANGE_UNITS || ((u1 - 1) >> PAGE_BITS) >= MAX_DIR as u64 {
                self.to_rest.push((s, e));
                continue;
            }
            for p in (u0 >> PAGE_BITS) as usize..=((u1 - 1) >> PAGE_BITS) as usize {
                let (w, bit) = (p / 64, 1u64 << (p % 64));
                if self.marked[w] & bit == 0 && !self.pages.has(p) {
                    self.marked[w] |= bit;
                    self.new_pages.push(p);
                }
            }
            self.units.push((u0, u1));
        }
        for &p in &self.new_pages {
            self.marked[p / 64] = 0;
        }
        if !ok || self.pages.count() + self.new_pages.len() > self.max_pages {
            return false;
        }
        let units = std::mem::take(&mut self.units);
        let mut new_pages = std::mem::take(&mut self.new_pages);
        // In page order, so the allocator tends to place a region's pages together.
        new_pages.sort_unstable();
        for &p in &new_pages {
            self.page_mut(p);
        }
        self.new_pages = new_pages;
        // The ranges that are common now that their pages exist (most of those that
        // came here: in a trace's first flush, all but the long ones) go to their
        // region's bucket like any common range, set region by region from L2;
        // applied as they came, each missed the cache (see `flush`).
        let regions = self.pages.dir_len().div_ceil(REGION_PAGES);
        if self.buckets.len() < regions {
            self.buckets.resize_with(regions, Bucket::default);
        }
        for &(u0, u1) in &units {
            let last = u1 - 1;
            let p = (u0 >> PAGE_BITS) as usize;
            if last - u0 < 64 && (last >> PAGE_BITS) as usize == p {
                bucket_range(&mut self.pages, &mut self.buckets, u0, last);
            } else {
                self.set_units(u0, u1);
            }
        }
        self.units = units;
        debug_assert!(self.pages.count() <= self.max_pages);
        // The interval set sees its ranges in the order the slow path gives them
        // (a stable sort by start), so even its coarsening happens at the same point.
        let mut to_rest = std::mem::take(&mut self.to_rest);
        to_rest.sort_by_key(|r| r.0);
        for &(s, e) in &to_rest {
            self.rest.add(s, e);
        }
        self.to_rest = to_rest;
        true
    }

    #[inline]
    fn apply(&mut self, start: u64, end: u64) {
        if self.retired {
            self.rest.add(start, end);
            return;
        }
        let mut mask = (1u64 << self.unit_shift) - 1;
        if (start | end) & mask != 0 && self.exact {
            // Finer aligned I/O refines the bitmap while memory allows; anything else
            // is kept exactly in the interval set.
            let tz = (start | end).trailing_zeros();
            if tz < FINEST_UNIT_SHIFT || tz <= self.refused_shift || !self.refine_to(tz) {
                self.rest.add(start, end);
                return;
            }
            mask = (1u64 << self.unit_shift) - 1;
        }
        let u0 = start >> self.unit_shift;
        // Rounded out (only ever inexact once coarsened).
        let u1 = (end >> self.unit_shift) + u64::from(end & mask != 0);
        if u1 - u0 > MAX_BITMAP_RANGE_UNITS || ((u1 - 1) >> PAGE_BITS) >= MAX_DIR as u64 {
            self.rest.add(start, end);
            return;
        }
        self.set_units(u0, u1);
        if self.pages.count() > self.max_pages {
            self.coarsen();
        }
    }

    #[inline]
    fn set_units(&mut self, u0: u64, u1: u64) {
        let mut u = u0;
        while u < u1 {
            let p = (u >> PAGE_BITS) as usize;
            let page_start = (p as u64) << PAGE_BITS;
            let stop = (page_start + (1 << PAGE_BITS)).min(u1);
            let page = self.page_mut(p);
            set_bit_range(
                page,
                (u - page_start) as usize,
                (stop - page_start) as usize,
            );
            u = stop;
        }
    }

    #[inline]
    fn page_mut(&mut self, p: usize) -> &mut [u64; PAGE_WORDS] {
        debug_assert!(self.has_room_for(p), "bitmap page budget exceeded");
        self.pages.get_or_alloc(p)
    }

    /// Whether page `p` is present or one more page stays within the budget plus the
    /// pages one range can add past it before the bitmap coarsens.
    fn has_room_for(&self, p: usize) -> bool {
        self.pages.has(p) || self.pages.count() < self.max_pages + PAGES_PAST_BUDGET
    }

    /// Halves the unit down to `2^shift` bytes (not below 512 B), losslessly; false
    /// (and nothing changes) when the finer bitmap would not fit its bounds.
    fn refine_to(&mut self, shift: u32) -> bool {
        let shift = shift.max(FINEST_UNIT_SHIFT);
        debug_assert!(shift < self.unit_shift && self.exact);
        let k = self.unit_shift - shift;
        if self.pages.count() << k > self.max_pages || self.pages.dir_len() << k > MAX_DIR {
            self.refused_shift = self.refused_shift.max(shift);
            return false;
        }
        for _ in 0..k {
            let mut new = Pages::default();
            for (p, page) in self.pages.iter() {
                for half in 0..2 {
                    let to = new.get_or_alloc(2 * p + half);
                    for (j, w) in to.iter_mut().enumerate() {
                        let src = page[half * PAGE_WORDS / 2 + j / 2];
                        *w = spread_bits((src >> (32 * (j % 2))) as u32);
                    }
                }
            }
            self.pages = new;
            self.unit_shift -= 1;
        }
        true
    }

    /// Past the page budget: the bitmap's set units go to the union as ranges, its pages
    /// are freed, and every range from now on goes to the union (exact; see the module
    /// docs). Ranges the buckets still hold are set later in fresh pages, counted with
    /// the union without double counting, as any bitmap range is.
    fn coarsen(&mut self) {
        let sh = self.unit_shift;
        let pages = std::mem::take(&mut self.pages);
        let rest = &mut self.rest;
        for_each_run(&pages, &mut |a, b| rest.add(a << sh, b << sh));
        self.retired = true;
    }

    /// Whether unit `u` is set.
    fn unit_set(&self, u: u64) -> bool {
        let p = (u >> PAGE_BITS) as usize;
        let i = (u & ((1 << PAGE_BITS) - 1)) as usize;
        self.pages
            .get(p)
            .is_some_and(|w| w[i / 64] >> (i % 64) & 1 == 1)
    }

    /// Set units in [a, b).
    fn count_units(&self, a: u64, b: u64) -> u64 {
        let mut n = 0;
        let mut u = a;
        while u < b {
            let p = (u >> PAGE_BITS) as usize;
            if p >= self.pages.dir_len() {
                break;
            }
            let page_start = (p as u64) << PAGE_BITS;
            let stop = (page_start + (1 << PAGE_BITS)).min(b);
            if let Some(w) = self.pages.get(p) {
                n += count_bit_range(w, (u - page_start) as usize, (stop - page_start) as usize);
            }
            u = stop;
        }
        n
    }

    /// Bytes of [s, e) the bitmap covers.
    fn covered(&self, s: u64, e: u64) -> u64 {
        debug_assert!(s < e);
        let sh = self.unit_shift;
        let (first, last) = (s >> sh, (e - 1) >> sh);
        if first == last {
            return if self.unit_set(first) { e - s } else { 0 };
        }
        let mut c = 0;
        if self.unit_set(first) {
            c += ((first + 1) << sh) - s;
        }
        if self.unit_set(last) {
            c += e - (last << sh);
        }
        c + (self.count_units(first + 1, last) << sh)
    }

    /// Calls `f` with byte ranges whose union is the footprint so far: runs of set
    /// bitmap units, then the union's ranges (the two may overlap). For moving the
    /// footprint into another address layout (`per_device.rs`); empties the union.
    pub(super) fn for_each_range(&mut self, f: &mut dyn FnMut(u64, u64)) {
        self.flush();
        self.drain_buckets();
        let sh = self.unit_shift;
        for_each_run(&self.pages, &mut |a, b| f(a << sh, b << sh));
        self.rest.for_each_range(f);
    }

    /// As [`Footprint::finish`], split by segment of `2^seg_shift` bytes: the distinct
    /// bytes in each segment (index = address >> seg_shift; a unit coarser than a
    /// segment counts in the segment of its start), and the granularity. The segments
    /// add up to what `finish` returns.
    pub(super) fn finish_segments(&mut self, seg_shift: u32) -> (Vec<u64>, u64) {
        self.flush();
        self.drain_buckets();
        let sh = self.unit_shift;
        let mut out: Vec<u64> = Vec::new();
        let mut add = |seg: u64, bytes: u64| {
            let seg = seg as usize;
            if out.len() <= seg {
                out.resize(seg + 1, 0);
            }
            out[seg] += bytes;
        };
        for (p, words) in self.pages.iter() {
            let page_unit = (p as u64) << PAGE_BITS;
            if PAGE_BITS + sh <= seg_shift {
                add((page_unit << sh) >> seg_shift, count_ones(words) << sh);
            } else if sh < seg_shift {
                let per_seg = 1usize << (seg_shift - sh);
                for a in (0..PAGE_WORDS * 64).step_by(per_seg) {
                    let n = count_bit_range(words, a, a + per_seg);
                    if n > 0 {
                        add(((page_unit + a as u64) << sh) >> seg_shift, n << sh);
                    }
                }
            } else {
                for (wi, &w) in words.iter().enumerate() {
                    let mut x = w;
                    while x != 0 {
                        let b = x.trailing_zeros();
                        x &= x - 1;
                        let u = page_unit + (wi as u64) * 64 + u64::from(b);
                        add((u << sh) >> seg_shift, 1 << sh);
                    }
                }
            }
        }
        let mut rest = std::mem::take(&mut self.rest);
        rest.for_each_range(&mut |s, e| {
            let mut a = s;
            while a < e {
                let seg = a >> seg_shift;
                let b = match (seg + 1).checked_shl(seg_shift) {
                    Some(end) if end > a => end.min(e),
                    _ => e,
                };
                add(seg, (b - a) - self.covered(a, b));
                a = b;
            }
        });
        (out, 1)
    }

    /// (distinct bytes, granularity in bytes: 1 = exact).
    pub fn finish(&mut self) -> (u64, u64) {
        self.flush();
        self.drain_buckets();
        let bitmap_units: u64 = self.pages.iter().map(|(_, w)| count_ones(w)).sum();
        let mut total = bitmap_units << self.unit_shift;
        let mut rest = std::mem::take(&mut self.rest);
        rest.for_each_range(&mut |s, e| total += (e - s) - self.covered(s, e));
        (total, 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_ones_agrees_with_the_portable_count() {
        let mut rng = crate::test_rng::XorShift(0x5EED_0FB1_7500);
        for n in [0usize, 1, 7, 64, 1000] {
            let mut words: Vec<u64> = (0..n).map(|_| rng.next()).collect();
            if n > 2 {
                (words[0], words[1]) = (0, u64::MAX);
            }
            let want: u64 = words.iter().map(|w| u64::from(w.count_ones())).sum();
            assert_eq!(count_ones(&words), want, "n {n}");
        }
    }

    /// Naive union over a byte array, for ranges below 4 MiB.
    fn naive_union(ranges: &[(u64, u64)]) -> u64 {
        let mut bytes = vec![false; 4 << 20];
        for &(s, e) in ranges {
            bytes[s as usize..e as usize]
                .iter_mut()
                .for_each(|b| *b = true);
        }
        bytes.iter().filter(|&&b| b).count() as u64
    }

    #[test]
    fn footprint_bitmap_and_interval_set_combine_exactly() {
        // Mixed alignment: 4K-aligned (bitmap), 512-aligned (refines the bitmap),
        // byte-granular (interval set), overlapping each other.
        for (max_pages, seed) in [
            (FOOTPRINT_MAX_PAGES, 7u64),
            (2, 11),
            (FOOTPRINT_MAX_PAGES, 13),
        ] {
            let mut f = Footprint::with_limits(max_pages, FOOTPRINT_MAX_RANGES);
            let mut rng = crate::test_rng::XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let mut ranges = Vec::new();
            for i in 0..20_000u64 {
                let x = rng.next();
                let (s, l) = match (i + seed) % 3 {
                    0 => ((x % 1000) * 4096, ((x >> 20) % 8 + 1) * 4096),
                    // Only late in the run for one seed: refinement after many 4K ranges.
                    1 if seed != 13 || i > 15_000 => ((x % 8000) * 512, ((x >> 20) % 16 + 1) * 512),
                    _ => (x % 4_000_000, (x >> 30) % 5000),
                };
                f.add(s, s + l);
                ranges.push((s, s + l));
            }
            // Max page budget 2: refinement to 512 B would need 8 pages, so the
            // 512-aligned ranges stay exact in the interval set instead.
            assert_eq!(
                f.finish(),
                (naive_union(&ranges), 1),
                "max_pages {max_pages}"
            );
        }
    }

    #[test]
    fn footprint_refines_losslessly_and_handles_far_ranges() {
        let mut f = Footprint::default();
        f.add(0, 4096);
        f.add(8192, 12288);
        f.flush();
        assert_eq!(f.unit_shift, 12);
        f.add(3584, 8704); // 512-aligned: unit becomes 512 B
        f.flush();
        assert_eq!(f.unit_shift, 9);
        f.add(100, 9000); // unaligned, inside
        f.add(1 << 62, (1 << 62) + 4096); // past the page directory
        f.add(1 << 40, (1 << 40) + (1 << 35)); // longer than a bitmap range
        assert_eq!(f.finish(), (12288 + 4096 + (1 << 35), 1));
    }

    /// Issue 34: past its page budget the bitmap retires into the exact union (it
    /// used to coarsen its unit, rounding every range out: 3 x 16 KiB here).
    #[test]
    fn footprint_stays_exact_past_the_bitmap_page_budget() {
        let mut f = Footprint::with_limits(2, FOOTPRINT_MAX_RANGES);
        // A 4K-unit page covers 1 GiB: three pages exceed the budget of 2.
        for g in 0..3u64 {
            f.add(g << 30, (g << 30) + 4096);
        }
        f.add(5 << 30, (5 << 30) + 512);
        f.add((7 << 30) + 100, (7 << 30) + 200);
        f.add(1000, 5000);
        assert_eq!(f.finish(), (3 * 4096 + 512 + 100 + 904, 1));
        assert!(f.retired);
        assert_eq!(f.pages.count(), 0);
    }

    /// Random ranges of every kind the flush sorts apart: 4K-aligned short ones (the
    /// common path) next to page borders, 512-aligned ones (refinement), unaligned,
    /// longer than 64 units, longer than a bitmap range, past the page directory, and
    /// ending at the top of the address space.
    fn stress_ranges(rng: &mut crate::test_rng::XorShift, n: usize, kinds: u64) -> Vec<(u64, u64)> {
        // A page of 4 KiB units covers 1 GiB.
        const GIB: u64 = 1 << 30;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            let x = rng.next();
            let y = rng.next();
            let r = match x % kinds {
                0..=2 => {
                    // Short 4K ranges around a page border (crossing some).
                    // Page borders, some of them region borders (every 16 GiB).
                    let border = (y % 40 + 1) * GIB;
                    let s = border - 64 * 4096 + (x >> 8) % 128 * 4096;
                    (s, s + ((x >> 20) % 64 + 1) * 4096)
                }
                3 => {
                    let s = (y % (8 * GIB)) & !4095;
                    (s, s + ((x >> 20) % 300 + 1) * 4096)
                }
                4 => {
                    let s = (y % (4 * GIB)) & !4095;
                    (s, s + ((x >> 20) % 8 + 1) * 4096)
                }
                5 => {
                    let s = y % (4 * GIB);
                    (s, s + (x >> 20) % 20_000 + 1)
                }
                6 => (u64::MAX - (y % 1_000_000) - 1, u64::MAX),
                7 => {
                    let s = (y % (1 << 50)) & !4095;
                    (s, s + ((x >> 20) % 16 + 1) * 4096)
                }
                8 => {
                    let s = (y % (16 * GIB)) & !4095;
                    (s, s + (x >> 30) % (8 * GIB) + 4096)
                }
                _ => {
                    let s = (y % (2 * GIB)) & !511;
                    (s, s + ((x >> 20) % 16 + 1) * 512)
                }
            };
            v.push(r);
        }
        v
    }

    #[test]
    fn common_path_gives_the_general_paths_figures() {
        // (page budget, kinds of ranges, seed): with a budget of 2 pages the bitmap
        // coarsens and the figure depends on when the unit changes; with all kinds,
        // refinement to 512 B happens mid-way; the runs end in different flushes.
        for (max_pages, kinds, seed, n) in [
            (FOOTPRINT_MAX_PAGES, 5, 1u64, 300_000),
            (FOOTPRINT_MAX_PAGES, 10, 2, 300_000),
            (2, 5, 3, 200_000),
            (2, 10, 4, 200_000),
            (8, 10, 5, 200_000),
            (16, 9, 6, 150_000),
            (FOOTPRINT_MAX_PAGES, 9, 7, 150_000),
        ] {
            let mut rng = crate::test_rng::XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let ranges = stress_ranges(&mut rng, n, kinds);
            let mut fast = Footprint::with_limits(max_pages, FOOTPRINT_MAX_RANGES);
            let mut general = Footprint::with_limits(max_pages, FOOTPRINT_MAX_RANGES);
            general.common_path = false;
            for &(s, e) in &ranges {
                fast.add(s, e);
                general.add(s, e);
            }
            let (want, got) = (general.finish(), fast.finish());
            assert_eq!(got, want, "max_pages {max_pages} kinds {kinds} seed {seed}");
            assert_eq!(
                (fast.unit_shift, fast.pages.count()),
                (general.unit_shift, general.pages.count())
            );
            if max_pages == FOOTPRINT_MAX_PAGES {
                assert_eq!(want.1, 1, "exact with room: kinds {kinds}");
            }
        }
    }

    #[test]
    fn bucketed_ranges_survive_a_change_of_unit() {
        // Disjoint ranges in two regions (below 1.2 GiB and from 20 GiB), so a range
        // lost or set twice shows; after 70K of them (a flush and more waiting in
        // buckets) a 512-aligned range refines the unit (or, with a budget of 4 pages,
        // is refused and kept exactly elsewhere; with 2, the bitmap coarsens).
        for max_pages in [FOOTPRINT_MAX_PAGES, 4, 2] {
            let mut fast = Footprint::with_limits(max_pages, FOOTPRINT_MAX_RANGES);
            let mut general = Footprint::with_limits(max_pages, FOOTPRINT_MAX_RANGES);
            general.common_path = false;
            let mut want = 0;
            for i in 0..100_000u64 {
                let (s, l) = (i * 3 * 4096 + (i % 2) * (20 << 30), 4096 * (1 + i % 2));
                fast.add(s, s + l);
                general.add(s, s + l);
                want += l;
                if i == 70_000 {
                    let s = (40 << 30) + 512;
                    fast.add(s, s + 512);
                    general.add(s, s + 512);
                    want += 512;
                }
            }
            let got = fast.finish();
            assert_eq!(got, general.finish(), "max_pages {max_pages}");
            if max_pages >= 4 {
                assert_eq!(got, (want, 1), "max_pages {max_pages}");
            }
        }
    }

    #[test]
    fn common_path_is_exact_against_a_naive_union() {
        // Ranges in the first 4 MiB, many 4K-aligned and short (the common path),
        // some crossing the 64-unit and word borders, some unaligned.
        let mut rng = crate::test_rng::XorShift(0xD1B5_4A32_D192_ED03);
        let mut f = Footprint::default();
        let mut ranges = Vec::new();
        for i in 0..200_000u64 {
            let x = rng.next();
            let (s, e) = match i % 4 {
                0 | 1 => {
                    let s = (x % 900) * 4096;
                    (s, s + ((x >> 20) % 70 + 1) * 4096)
                }
                2 => {
                    let s = (x % 1000) * 4096 + 61 * 4096;
                    (s, s + 4096 * ((x >> 24) % 4 + 1))
                }
                _ => {
                    let s = x % 4_000_000;
                    (s, s + (x >> 40) % 5000 + 1)
                }
            };
            let e = e.min(4 << 20);
            if s < e {
                f.add(s, e);
                ranges.push((s, e));
            }
        }
        assert_eq!(f.finish(), (naive_union(&ranges), 1));
    }

    #[test]
    fn staging_keeps_the_flush_points_and_every_range() {
        // Over three buffers' worth of ranges (after merging): common ones
        // (4K-aligned, in pages that exist after the first flush), ranges continuing
        // the one before (merged into the open range, except right after a flush),
        // unaligned ones (applied at the flush), and trims (skipped). Fed one by one,
        // and in batches whose sizes fall across the stage's and the buffer's borders
        // differently.
        let mut rng = crate::test_rng::XorShift(0x5851_F42D_4C95_7F2D);
        let mut rows: Vec<(Op, u64, u64)> = Vec::new();
        let mut end = 0u64;
        for i in 0..5 * FOOTPRINT_BUF_RANGES as u64 {
            let x = rng.next();
            let row = match x % 16 {
                0..=3 => (Op::Read, end, 4096 * ((x >> 8) % 4 + 1)),
                4 => (Op::Write, (x >> 8) % (1 << 34), (x >> 40) % 9000 + 1),
                5 => (Op::Trim, ((x >> 8) % (1 << 34)) & !4095, 4096),
                _ => (
                    Op::Write,
                    ((x >> 8) % (1 << 22)) << 12,
                    4096 * ((x >> 40) % 16 + 1),
                ),
            };
            if row.0.is_data() {
                end = row.1 + row.2;
            }
            // Far from the rest now and then: a page of its own.
            if i % 50_000 == 7 {
                rows.push((Op::Read, (i + 1) << 40, 4096));
            }
            rows.push(row);
        }
        let data: Vec<(u64, u64)> = rows
            .iter()
            .filter(|r| r.0.is_data())
            .map(|r| (r.1, r.1 + r.2))
            .collect();
        // The flushes the unstaged buffer made: one each time the closed ranges and
        // the open one reach the buffer's size; a flush leaves no range open.
        let mut want_flushed = Vec::new();
        let (mut open, mut closed) = (None::<(u64, u64)>, 0usize);
        for &(s, e) in &data {
            match &mut open {
                Some((_, oe)) if *oe == s => *oe = e,
                o => {
                    closed += usize::from(o.is_some());
                    *o = Some((s, e));
                    if closed + 1 >= FOOTPRINT_BUF_RANGES {
                        want_flushed.push(closed + 1);
                        (open, closed) = (None, 0);
                    }
                }
            }
        }
        want_flushed.push(closed + usize::from(open.is_some()));
        // Some ranges merge: at least three full flushes and a last one.
        assert!(want_flushed.len() >= 4, "{want_flushed:?}");
        // The union: sorted, merged.
        let mut sorted = data.clone();
        sorted.sort_unstable();
        let (mut want_bytes, mut reach) = (0u64, 0u64);
        for &(s, e) in &sorted {
            want_bytes += e.saturating_sub(s.max(reach));
            reach = reach.max(e);
        }
        let one_by_one = |common_path: bool| {
            let mut f = Footprint {
                common_path,
                ..Footprint::default()
            };
            for &(s, e) in &data {
                f.add(s, e);
            }
            f
        };
        let mut fs = vec![one_by_one(true), one_by_one(false)];
        for batch in [1, 999, STAGE_RANGES + 1, 8192] {
            let mut f = Footprint::default();
            for c in rows.chunks(batch) {
                let ops: Vec<Op> = c.iter().map(|r| r.0).collect();
                let offset: Vec<u64> = c.iter().map(|r| r.1).collect();
                let len: Vec<u64> = c.iter().map(|r| r.2).collect();
                f.add_data(&ops, &offset, &len);
            }
            fs.push(f);
        }
        for (i, f) in fs.iter_mut().enumerate() {
            assert_eq!(f.finish(), (want_bytes, 1), "feed {i}");
            assert_eq!(f.flushed, want_flushed, "feed {i}");
        }
    }

    /// Byte ranges of every kind the footprint sorts apart: 4K-aligned (the bitmap's
    /// common path), 512-aligned (refines the unit), unaligned (the interval set), in
    /// far pages, and longer than a bitmap range.
    fn arb_range() -> impl proptest::strategy::Strategy<Value = (u64, u64)> {
        use proptest::prelude::*;
        prop_oneof![
            4 => (0u64..2048, 1u64..80).prop_map(|(s, l)| (s * 4096, (s + l) * 4096)),
            2 => (0u64..16_384, 1u64..40).prop_map(|(s, l)| (s * 512, (s + l) * 512)),
            2 => (0u64..8 << 20, 1u64..20_000).prop_map(|(s, l)| (s, s + l)),
            2 => (1u64..64, 0u64..1 << 18, 1u64..16)
                .prop_map(|(g, u, l)| ((g << 30) + u * 4096, (g << 30) + (u + l) * 4096)),
            1 => (0u64..4, 1u64..4).prop_map(|(g, l)| (g << 40, (g << 40) + (l << 31))),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(48))]
        #[test]
        fn footprint_equals_a_brute_force_union_of_random_io(
            rows in proptest::collection::vec((0u8..3, arb_range()), 1..3000),
            batch in 1usize..700,
        ) {
            let op = |k: u8| [Op::Read, Op::Write, Op::Trim][usize::from(k)];
            // Brute force: every data range, sorted, each byte counted once.
            let mut data: Vec<(u64, u64)> = rows
                .iter()
                .filter(|(k, _)| op(*k).is_data())
                .map(|&(_, r)| r)
                .collect();
            data.sort_unstable();
            let (mut want, mut reach) = (0u64, 0u64);
            for &(s, e) in &data {
                want += e.saturating_sub(s.max(reach));
                reach = reach.max(e);
            }
            let mut f = Footprint::default();
            for c in rows.chunks(batch) {
                let ops: Vec<Op> = c.iter().map(|r| op(r.0)).collect();
                let offset: Vec<u64> = c.iter().map(|r| r.1 .0).collect();
                let len: Vec<u64> = c.iter().map(|r| r.1 .1 - r.1 .0).collect();
                f.add_data(&ops, &offset, &len);
            }
            proptest::prop_assert_eq!(f.finish(), (want, 1));
        }
    }

    #[test]
    fn bit_spread_doubles_every_bit() {
        for x in [0u32, 1, 0x8000_0001, 0xDEAD_BEEF, u32::MAX] {
            assert_eq!(spread_bits(x).count_ones(), 2 * x.count_ones());
        }
        assert_eq!(spread_bits(0b10), 0b1100);
    }
}
