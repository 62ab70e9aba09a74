//! Our own decoder of a native trace's column chunks: pages are decoded straight into
//! the vectors a [`ColumnBatch`] is made of, without Arrow's array building (see the
//! module's tests for what it equals).
//!
//! Measured (`trace_bench decode`, 10 M bench trace, 9 interleaved rounds, load ~3.4):
//! 12.7 ns per I/O least, 13.9 median, against Arrow's 14.1 and 15.6: about 11% less,
//! not the 2x hoped for. The unpacking and prefix sums cost about what parquet-rs's
//! do (both unpack 32 values at a time); what goes is Arrow's array building, the key
//! vectors and the op pass. Left: ~10% is the kernel's copy from the page cache, the
//! rest is delta prefix sums (a chain of dependent adds) and dictionary gathers.
//!
//! Then (10 M bench trace: its delta columns are 16, 20 and 39 bits wide throughout,
//! 256-value blocks of 4 miniblocks; `len_bytes` keys 3 bits over 6 entries, `op` 1
//! bit over 2; pages of ~20 K rows): a delta group is unpacked and prefix-summed
//! straight into the batch's vector ([`delta32`], with an AVX-512 VBMI form: a byte
//! permute, a shift and three shifted adds per eight values), and dictionary keys
//! are unpacked as 32-bit values and checked only when the table has fewer than
//! 2^width entries (the 64-bit maximum of every `len_bytes` group was half of that
//! column's time on SSE2). `trace_bench decode`, 7 interleaved rounds, load 2.5-3:
//! 16.95 / 21.2 -> 15.56 / 16.5 ns per I/O (min / median); an earlier set 16.5-18.6
//! -> 13.0-14.4. Seen in passing: decoding a whole group into the vector needs 32
//! slots of room past the batch (`GROUP_SLACK`), else its last group reallocated.
//! Whole `trace_bench characterize`, task-clock, 15 pairs interleaved (load 1.4-1.6):
//! min 786 -> 663 ms, the median of the pairs' ratios 1.01: the ~3.5 ns per I/O saved
//! is under the host's noise on a ~80 ns run. Perf samples of `decode` after it: the
//! kernel's copy from the page cache 14%, `int_values` 20% (delta bookkeeping per
//! group, the `len_bytes` gather), the `op` gather into `Vec<Op>` 8%, key unpacking
//! (an out-of-line call per 32 keys of 1 or 3 bits) 13%, `check_rows` 7%. Not tried
//! for lack of time: keys unpacked into the gather, a register-table gather (`vpermq`
//! / `vpermb`) for dictionaries of up to 8 / 64 entries, `check_non_negative` folded
//! into [`delta32`], a page reader by `pread` without the dup/seek per page.
//!
//! It reads what storbench's writer writes and what other Parquet writers commonly
//! write for the trace schema: INT64 columns in PLAIN, DELTA_BINARY_PACKED or
//! dictionary (RLE_DICTIONARY / PLAIN_DICTIONARY keys over a PLAIN dictionary page),
//! string columns in dictionary or PLAIN (a writer falls back from dictionary to PLAIN
//! mid-chunk when the dictionary grows too big: both in one chunk are fine), data page
//! v1 and v2, any compression parquet's page reader knows, definition levels of a
//! nullable column. Whether a file qualifies is decided from its footer before the
//! first batch ([`PageDecoder::try_new`]); a file that does not is read through Arrow,
//! as before. The checks on values are the store's own ([`store::check_non_negative`],
//! [`store::check_rows`], ...), so both paths refuse bad input alike.
//!
//! Every length read from the file is checked against the page it is in: a corrupt
//! page gives a [`TraceError`] naming the file, column and row group, never a panic.
//! Memory: one page per column (parquet's page reader) plus the batch being built.

use crate::error::TraceError;
use crate::model::{Names, Op};
use crate::store::{
    self, ColumnBatch, COL_COMPLETE, COL_DEVICE, COL_ISSUE, COL_LEN, COL_OFFSET, COL_OP, COL_STREAM,
};
use arrow_array::Int64Array;
use arrow_buffer::{BooleanBufferBuilder, NullBuffer, ScalarBuffer};
use arrow_schema::{DataType, Schema};
use parquet::basic::{ConvertedType, Encoding, LogicalType, Type as PhysicalType};
use parquet::column::page::{Page, PageReader};
use parquet::errors::ParquetError;
use parquet::file::metadata::ParquetMetaData;
use parquet::file::serialized_reader::SerializedPageReader;
use std::fs::File;
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The optional columns the reader decodes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wanted {
    pub complete: bool,
    pub stream: bool,
    pub device: bool,
}

/// What is wrong with a page; the column adds file, column and row group.
type Corrupt = String;

/// High bit of a string column's code: the dictionary entry is not mapped yet.
const UNKNOWN: u32 = 1 << 31;

/// Capacity reserved for a batch's vectors (they grow past it for bigger batches).
const RESERVE_ROWS: usize = 1 << 16;

/// Room past a batch's rows in its integer vectors: a delta group is decoded whole
/// into the vector, then cut (without it the last group of a batch reallocated the
/// vector: memmove and page faults, 7% of decode samples).
const GROUP_SLACK: usize = 32;

// ---------------------------------------------------------------------------------
// Bit unpacking and varints

/// Unpacks 32 values of `width` bits each (0..=64), least significant bit first, from
/// the first 4 * width bytes of `input` (fewer read as zeros).
#[cfg(test)]
fn unpack32(width: usize, input: &[u8], out: &mut [u64; 32]) {
    unpack32_each(width, input, &mut |i, v| out[i] = v);
}

/// [`unpack32`] of widths up to 32 (checked by the caller) into 32-bit values.
fn unpack32_u32(width: usize, input: &[u8], out: &mut [u32; 32]) {
    assert!(width <= 32);
    unpack32_each(width, input, &mut |i, v| out[i] = v as u32);
}

/// [`unpack32`] handing value `i` to `f(i, v)` in order, so a caller consumes the
/// values where they are made (the delta prefix sum) instead of through memory.
#[inline(always)]
fn unpack32_each(width: usize, input: &[u8], out: &mut impl FnMut(usize, u64)) {
    macro_rules! by_width {
        ($($w:literal)*) => {
            match width {
                $($w => unpack32_w::<$w>(input, out),)*
                _ => panic!("bit width {width} above 64 (checked by the caller)"),
            }
        };
    }
    by_width!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27
        28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54
        55 56 57 58 59 60 61 62 63 64);
}

/// [`unpack32`] for one width. Reads 8 bytes past the 4W it unpacks (masked off), so
/// a group near the end of its page goes through a zero-padded copy.
#[inline(always)]
fn unpack32_w<const W: usize>(input: &[u8], out: &mut impl FnMut(usize, u64)) {
    if W == 0 {
        for i in 0..32 {
            out(i, 0);
        }
        return;
    }
    let need = 4 * W + 8;
    if input.len() >= need {
        unpack32_from::<W>(&input[..need], out);
    } else {
        let mut pad = [0u8; 4 * 64 + 8];
        let n = input.len().min(4 * W);
        pad[..n].copy_from_slice(&input[..n]);
        unpack32_from::<W>(&pad[..need], out);
    }
}

/// Value i is bits `i*W .. i*W+W` of `input` (4W + 8 bytes): one unaligned 8-byte
/// load at a constant offset each (a ninth byte for widths above 56), unrolled.
#[inline(always)]
fn unpack32_from<const W: usize>(input: &[u8], out: &mut impl FnMut(usize, u64)) {
    assert_eq!(input.len(), 4 * W + 8);
    let mask = if W == 64 { u64::MAX } else { (1u64 << W) - 1 };
    macro_rules! values {
        ($($i:literal)*) => {$({
            let bit = $i * W;
            let (byte, sh) = (bit / 8, bit % 8);
            let word = u64::from_le_bytes(input[byte..byte + 8].try_into().expect("8 bytes"));
            let mut v = word >> sh;
            if sh + W > 64 {
                v |= u64::from(input[byte + 8]) << (64 - sh);
            }
            out($i, v & mask);
        })*};
    }
    values!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
}

/// An unsigned LEB128 varint at `*pos` of `buf`.
fn uvarint(buf: &[u8], pos: &mut usize) -> Result<u64, Corrupt> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(*pos).ok_or("truncated varint")?;
        *pos += 1;
        if shift == 63 && b > 1 {
            return Err("varint above 64 bits".into());
        }
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("varint above 64 bits".into())
}

fn zigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn to_usize(v: u64, what: &str) -> Result<usize, Corrupt> {
    usize::try_from(v).map_err(|_| format!("{what} {v} too large"))
}

// ---------------------------------------------------------------------------------
// DELTA_BINARY_PACKED

/// The level the decoder's hot loops run at, detected once per page (std caches the
/// CPU's features).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Simd {
    Portable,
    /// AVX-512 F, BW, VL and VBMI (Ice Lake, Sapphire Rapids, Zen 4 and up):
    /// [`delta32`] unpacks eight values with one byte permute and one shift.
    #[cfg(target_arch = "x86_64")]
    Vbmi,
}

impl Simd {
    fn detect() -> Simd {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512vbmi")
        {
            return Simd::Vbmi;
        }
        Simd::Portable
    }
}

/// One group of a DELTA_BINARY_PACKED miniblock: writes `out[i] = last + sum over j
/// <= i of (d[j] + min_delta)` (wrapping), `d` the 32 `width`-bit deltas at the start
/// of `input` (bytes past them read, masked off; fewer than 4 * width read as
/// zeros). All 32 slots are written, whatever the group's count of values.
#[inline(never)]
fn delta32(
    simd: Simd,
    width: usize,
    input: &[u8],
    min_delta: i64,
    last: i64,
    out: &mut [MaybeUninit<i64>; 32],
) {
    match simd {
        #[cfg(target_arch = "x86_64")]
        Simd::Vbmi if (1..=VBMI_MAX_WIDTH).contains(&width) => {
            // SAFETY: `Simd::Vbmi` is made only when the CPU has these features.
            unsafe { vbmi::delta32(width, input, min_delta, last, out) }
        }
        _ => {
            let mut last = last;
            // One add on the dependency chain per value: (d + md) does not wait on it.
            unpack32_each(width, input, &mut |i, d| {
                last = last.wrapping_add((d as i64).wrapping_add(min_delta));
                out[i].write(last);
            });
        }
    }
}

/// Widths [`vbmi::delta32`] unpacks: a value and its bit offset within a byte fit in
/// the 8 bytes from its first byte.
#[cfg(target_arch = "x86_64")]
const VBMI_MAX_WIDTH: usize = 57;

#[cfg(target_arch = "x86_64")]
mod vbmi {
    use super::VBMI_MAX_WIDTH;
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    /// Per width: for lane j (value j of 8), the byte indices of the 8 bytes from
    /// value j's first byte, and its bit offset in the first of them.
    #[repr(C, align(64))]
    pub(super) struct Layout {
        idx: [u8; 64],
        shift: [u64; 8],
    }

    const fn layouts() -> [Layout; VBMI_MAX_WIDTH + 1] {
        let mut t = [const {
            Layout {
                idx: [0; 64],
                shift: [0; 8],
            }
        }; VBMI_MAX_WIDTH + 1];
        let mut w = 0;
        while w <= VBMI_MAX_WIDTH {
            let mut j = 0;
            while j < 8 {
                let bit = j * w;
                let mut b = 0;
                while b < 8 {
                    t[w].idx[8 * j + b] = (bit / 8 + b) as u8;
                    b += 1;
                }
                t[w].shift[j] = (bit % 8) as u64;
                j += 1;
            }
            w += 1;
        }
        t
    }

    static LAYOUTS: [Layout; VBMI_MAX_WIDTH + 1] = layouts();

    /// 64 bytes from `b` into a register.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn load(b: &[u8; 64]) -> __m512i {
        // SAFETY: `b` is 64 readable bytes; the load is unaligned.
        unsafe { _mm512_loadu_si512(b.as_ptr().cast()) }
    }

    /// [`super::delta32`] for widths 1..=[`VBMI_MAX_WIDTH`]: four times eight values,
    /// each eight a byte-aligned W bytes (8 * W bits), unpacked by a byte permute
    /// into lanes, a shift and a mask; their prefix sum in three shifted adds.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
    pub(super) fn delta32(
        w: usize,
        input: &[u8],
        min_delta: i64,
        last: i64,
        out: &mut [MaybeUninit<i64>; 32],
    ) {
        assert!((1..=VBMI_MAX_WIDTH).contains(&w));
        let layout = &LAYOUTS[w];
        let idx = load(&layout.idx);
        // SAFETY: 8 readable u64 (64 bytes, aligned by `Layout`).
        let shift = unsafe { _mm512_load_si512(layout.shift.as_ptr().cast()) };
        let mask = _mm512_set1_epi64(((1u64 << w) - 1) as i64);
        let md = _mm512_set1_epi64(min_delta);
        let zero = _mm512_setzero_si512();
        let seven = _mm512_set1_epi64(7);
        let mut carry = _mm512_set1_epi64(last);
        let group = input.len().min(4 * w);
        for (k, dst) in out.chunks_exact_mut(8).enumerate() {
            let at = k * w;
            let bytes = match input.get(at..at + 64) {
                Some(b) => load(b.try_into().expect("64 bytes")),
                None => {
                    // Near the end of the page: only the group's own bytes, zeros past.
                    let mut pad = [0u8; 64];
                    let n = group.saturating_sub(at).min(64);
                    pad[..n].copy_from_slice(&input[at.min(group)..at.min(group) + n]);
                    load(&pad)
                }
            };
            let x = _mm512_permutexvar_epi8(idx, bytes);
            let x = _mm512_and_si512(_mm512_srlv_epi64(x, shift), mask);
            let x = _mm512_add_epi64(x, md);
            let x = _mm512_add_epi64(x, _mm512_alignr_epi64::<7>(x, zero));
            let x = _mm512_add_epi64(x, _mm512_alignr_epi64::<6>(x, zero));
            let x = _mm512_add_epi64(x, _mm512_alignr_epi64::<4>(x, zero));
            let x = _mm512_add_epi64(x, carry);
            // SAFETY: `dst` is 8 writable i64 slots; the store is unaligned.
            unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast(), x) };
            carry = _mm512_permutexvar_epi64(seven, x);
        }
    }
}

/// A DELTA_BINARY_PACKED stream of one page, decoded 32 values at a time.
struct Delta {
    pos: usize,
    end: usize,
    /// Values per miniblock (a multiple of 32) and miniblocks per block.
    per_mini: usize,
    minis: usize,
    /// Values not yet decoded (the first value included until handed out).
    left: usize,
    first: Option<i64>,
    last: i64,
    min_delta: i64,
    /// Bit widths of the current block's miniblocks.
    widths: Vec<u8>,
    /// Current miniblock (== `minis`: the next group starts a block) and 32-value
    /// group in it.
    mini: usize,
    group: usize,
    /// Decoded values not yet handed out (a batch or page boundary split a group).
    pending: [i64; 32],
    pending_at: usize,
    pending_len: usize,
    /// The level [`delta32`] runs at.
    simd: Simd,
}

impl Delta {
    fn new(buf: &[u8], start: usize, end: usize) -> Result<Delta, Corrupt> {
        let b = &buf[..end];
        let mut pos = start;
        let block = to_usize(uvarint(b, &mut pos)?, "block size")?;
        let minis = to_usize(uvarint(b, &mut pos)?, "miniblock count")?;
        let total = to_usize(uvarint(b, &mut pos)?, "value count")?;
        let first = zigzag(uvarint(b, &mut pos)?);
        if block == 0 || block % 128 != 0 || minis == 0 || block % minis != 0 {
            return Err(format!(
                "bad delta header: block size {block}, {minis} miniblocks"
            ));
        }
        let per_mini = block / minis;
        if per_mini % 32 != 0 {
            return Err(format!("bad delta header: {per_mini} values per miniblock"));
        }
        Ok(Delta {
            pos,
            end,
            per_mini,
            minis,
            left: total,
            first: (total > 0).then_some(first),
            last: 0,
            min_delta: 0,
            widths: Vec::new(),
            mini: minis,
            group: 0,
            pending: [0; 32],
            pending_at: 0,
            pending_len: 0,
            simd: Simd::detect(),
        })
    }

    /// Appends the next `n` values to `out`.
    fn take(&mut self, buf: &[u8], mut n: usize, out: &mut Vec<i64>) -> Result<(), Corrupt> {
        if n > self.pending_len - self.pending_at + self.left {
            return Err("fewer delta-encoded values than the page has rows".into());
        }
        let k = n.min(self.pending_len - self.pending_at);
        out.extend_from_slice(&self.pending[self.pending_at..self.pending_at + k]);
        self.pending_at += k;
        n -= k;
        if n > 0 {
            if let Some(f) = self.first.take() {
                out.push(f);
                self.last = f;
                self.left -= 1;
                n -= 1;
            }
        }
        while n > 0 {
            let (w, cnt, at) = self.next_group(buf)?;
            // The group's values go straight into `out`; a group split by `n` keeps
            // the rest for the next call.
            let len = out.len();
            out.reserve(32);
            let spare = &mut out.spare_capacity_mut()[..32];
            let spare: &mut [MaybeUninit<i64>; 32] = spare.try_into().expect("32 reserved");
            delta32(
                self.simd,
                w,
                &buf[at..self.end],
                self.min_delta,
                self.last,
                spare,
            );
            // SAFETY: `delta32` wrote all 32 slots past `len`, which `reserve` made
            // part of the capacity.
            unsafe { out.set_len(len + 32) };
            self.last = out[len + cnt - 1];
            if n >= cnt {
                out.truncate(len + cnt);
                n -= cnt;
            } else {
                self.pending[..cnt].copy_from_slice(&out[len..len + cnt]);
                self.pending_len = cnt;
                self.pending_at = n;
                out.truncate(len + n);
                n = 0;
            }
        }
        Ok(())
    }

    /// Steps over the next (up to) 32 deltas; returns their bit width, how many are
    /// values and where they start (bytes past the group are read, masked off).
    fn next_group(&mut self, buf: &[u8]) -> Result<(usize, usize, usize), Corrupt> {
        assert!(self.left > 0, "the caller checked the values left");
        if self.mini == self.minis {
            self.min_delta = zigzag(uvarint(&buf[..self.end], &mut self.pos)?);
            if self.end - self.pos < self.minis {
                return Err("truncated delta block header".into());
            }
            self.widths.clear();
            self.widths
                .extend_from_slice(&buf[self.pos..self.pos + self.minis]);
            self.pos += self.minis;
            self.mini = 0;
            self.group = 0;
        }
        let w = usize::from(self.widths[self.mini]);
        if w > 64 {
            return Err(format!("delta bit width {w} above 64"));
        }
        let cnt = self.left.min(32);
        let bytes = 4 * w;
        let avail = (self.end - self.pos).min(bytes);
        // The last miniblock may be cut short of its padding, never of its values.
        if avail * 8 < cnt * w {
            return Err("truncated delta miniblock".into());
        }
        let at = self.pos;
        self.pos += avail;
        self.group += 1;
        if self.group == self.per_mini / 32 {
            self.group = 0;
            self.mini += 1;
        }
        self.left -= cnt;
        Ok((w, cnt, at))
    }
}

// ---------------------------------------------------------------------------------
// RLE / bit-packed hybrid (dictionary keys, definition levels)

/// An RLE/bit-packed hybrid stream of values of at most 32 bits.
struct Hybrid {
    pos: usize,
    end: usize,
    width: usize,
    rle_left: usize,
    rle_value: u32,
    /// Values left in the current bit-packed run (padding included).
    bp_left: usize,
    pending: [u32; 32],
    pending_at: usize,
    pending_len: usize,
}

impl Hybrid {
    fn new(start: usize, end: usize, width: usize) -> Result<Hybrid, Corrupt> {
        if width > 32 {
            return Err(format!("bit width {width} above 32"));
        }
        assert!(start <= end);
        Ok(Hybrid {
            pos: start,
            end,
            width,
            rle_left: 0,
            rle_value: 0,
            bp_left: 0,
            pending: [0; 32],
            pending_at: 0,
            pending_len: 0,
        })
    }

    fn header(&mut self, buf: &[u8]) -> Result<(), Corrupt> {
        let h = uvarint(&buf[..self.end], &mut self.pos)?;
        if h & 1 == 1 {
            let groups = to_usize(h >> 1, "bit-packed run")?;
            self.bp_left = groups
                .checked_mul(8)
                .ok_or_else(|| format!("bit-packed run of {groups} groups"))?;
        } else {
            self.rle_left = to_usize(h >> 1, "run length")?;
            let nb = self.width.div_ceil(8);
            if self.end - self.pos < nb {
                return Err("truncated run".into());
            }
            let mut v = 0u32;
            for (i, &b) in buf[self.pos..self.pos + nb].iter().enumerate() {
                v |= u32::from(b) << (8 * i);
            }
            self.pos += nb;
            self.rle_value = v;
        }
        Ok(())
    }

    /// Unpacks the next (up to) 32 values of the bit-packed run; returns how many.
    fn unpack(&mut self, buf: &[u8], vals: &mut [u32; 32]) -> Result<usize, Corrupt> {
        // Runs are whole groups of 8 values (w bytes each): cnt * w / 8 bytes exactly.
        let cnt = self.bp_left.min(32);
        debug_assert!(cnt.is_multiple_of(8));
        let avail = (self.end - self.pos).min(cnt * self.width / 8);
        let usable = match self.width {
            0 => cnt,
            w => cnt.min(avail * 8 / w),
        };
        if usable == 0 {
            return Err("truncated bit-packed run".into());
        }
        // Bytes past the run are read but only fill values past `usable`.
        unpack32_u32(self.width, &buf[self.pos..self.end], vals);
        self.pos += avail;
        self.bp_left -= cnt;
        if usable < cnt {
            // The run was cut short: a value past its end is an error (at `header`).
            self.bp_left = 0;
            self.pos = self.end;
        }
        Ok(usable)
    }

    /// Appends `table[k]` for each of the next `n` values `k` (dictionary keys): no
    /// vector of keys in between. A key past the table is an error.
    fn take_mapped<T: Copy>(
        &mut self,
        buf: &[u8],
        mut n: usize,
        table: &[T],
        out: &mut Vec<T>,
    ) -> Result<(), Corrupt> {
        let bad = |k: u64| format!("dictionary key {k} of {} entries", table.len());
        // Keys of `width` bits all name an entry when the table has 2^width of them;
        // else every group is checked (32-bit compares vectorise on SSE2, where the
        // 64-bit maximum did not and was the most of a small dictionary's time).
        let all_fit = table.len() as u64 >= 1u64 << self.width;
        let len32 = table.len() as u32;
        let mut vals = [0u32; 32];
        while n > 0 {
            if self.pending_at < self.pending_len {
                let k = n.min(self.pending_len - self.pending_at);
                for &v in &self.pending[self.pending_at..self.pending_at + k] {
                    out.push(*table.get(v as usize).ok_or_else(|| bad(v.into()))?);
                }
                self.pending_at += k;
                n -= k;
            } else if self.rle_left > 0 {
                let k = n.min(self.rle_left);
                let v = self.rle_value;
                let t = *table.get(v as usize).ok_or_else(|| bad(v.into()))?;
                out.extend(std::iter::repeat_n(t, k));
                self.rle_left -= k;
                n -= k;
            } else if self.bp_left > 0 {
                let cnt = self.unpack(buf, &mut vals)?;
                if !all_fit && vals[..cnt].iter().fold(false, |a, &v| a | (v >= len32)) {
                    let max = vals[..cnt].iter().fold(0, |a, &v| a.max(v));
                    return Err(bad(max.into()));
                }
                if n >= cnt {
                    out.extend(vals[..cnt].iter().map(|&v| table[v as usize]));
                    n -= cnt;
                } else {
                    self.pending[..cnt].copy_from_slice(&vals[..cnt]);
                    self.pending_len = cnt;
                    self.pending_at = n;
                    out.extend(vals[..n].iter().map(|&v| table[v as usize]));
                    n = 0;
                }
            } else if self.pos < self.end {
                self.header(buf)?;
            } else {
                return Err("fewer encoded values than the page has rows".into());
            }
        }
        Ok(())
    }

    /// Consumes the next `n` values if they are all `value` in one run (definition
    /// levels of a page without nulls); false, consuming nothing, otherwise.
    fn skip_run(&mut self, buf: &[u8], value: u32, n: usize) -> Result<bool, Corrupt> {
        if self.pending_at < self.pending_len {
            return Ok(false);
        }
        while self.rle_left == 0 && self.bp_left == 0 {
            if self.pos >= self.end {
                return Ok(false);
            }
            self.header(buf)?;
        }
        if self.rle_left >= n && self.rle_value == value {
            self.rle_left -= n;
            return Ok(true);
        }
        Ok(false)
    }
}

// ---------------------------------------------------------------------------------
// Columns

enum Values {
    /// PLAIN values from `pos` (8 bytes an INT64; a 4-byte length and the bytes a string).
    Plain {
        pos: usize,
    },
    Delta(Box<Delta>),
    /// Dictionary keys.
    Dict(Hybrid),
}

struct DataPage {
    page: Page,
    rows_left: usize,
    defs: Option<Hybrid>,
    values: Values,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Str,
}

/// Where a batch's validity goes: none until the first null, then one bit a row.
struct NullTrack {
    rows: usize,
    nulls: usize,
    bits: Option<BooleanBufferBuilder>,
}

impl NullTrack {
    fn new() -> NullTrack {
        NullTrack {
            rows: 0,
            nulls: 0,
            bits: None,
        }
    }

    fn valid(&mut self, n: usize) {
        if let Some(b) = &mut self.bits {
            b.append_n(n, true);
        }
        self.rows += n;
    }

    fn levels(&mut self, levels: &[u32]) {
        let rows = self.rows;
        let b = self.bits.get_or_insert_with(|| {
            let mut b = BooleanBufferBuilder::new(RESERVE_ROWS.max(rows + levels.len()));
            b.append_n(rows, true);
            b
        });
        for &l in levels {
            b.append(l == 1);
        }
        self.nulls += levels.iter().filter(|&&l| l != 1).count();
        self.rows += levels.len();
    }

    fn finish(self) -> Option<NullBuffer> {
        let nb = NullBuffer::new(self.bits?.finish());
        assert_eq!(nb.len(), self.rows);
        assert_eq!(nb.null_count(), self.nulls);
        Some(nb)
    }
}

/// One column of the file, read row group after row group, page after page.
struct Column {
    name: &'static str,
    leaf: usize,
    kind: Kind,
    /// Definition levels present (max level 1): the column may have nulls.
    nullable: bool,
    /// Next row group to open; rows of the open one not read yet.
    next_rg: usize,
    rg_rows_left: usize,
    pages: Option<SerializedPageReader<File>>,
    page: Option<DataPage>,
    has_dict: bool,
    dict_ints: Vec<i64>,
    dict_strs: Vec<String>,
    /// String columns: dictionary entry -> code (op index, or name slot), or
    /// [`UNKNOWN`] | entry while no row has referenced the entry yet (names are
    /// interned in row order, as Arrow's path does).
    codes: Vec<u32>,
    /// The op column: its dictionary as ops, when every entry names one (else empty).
    op_table: Vec<Op>,
    levels: Vec<u32>,
    scratch: Vec<i64>,
}

/// What every column needs to read the file.
struct Ctx<'a> {
    path: &'a Path,
    file: &'a Arc<File>,
    md: &'a ParquetMetaData,
}

impl Column {
    fn new(name: &'static str, leaf: usize, kind: Kind, nullable: bool) -> Column {
        Column {
            name,
            leaf,
            kind,
            nullable,
            next_rg: 0,
            rg_rows_left: 0,
            pages: None,
            page: None,
            has_dict: false,
            dict_ints: Vec::new(),
            dict_strs: Vec::new(),
            codes: Vec::new(),
            op_table: Vec::new(),
            levels: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// A malformed page of this column.
    fn corrupt(&self, ctx: &Ctx, what: &str) -> TraceError {
        corrupt(ctx, self.name, self.next_rg, what)
    }

    /// Takes `m` rows (from a [`Column::span`]) off the current page and row group.
    fn consumed(&mut self, m: usize) {
        self.page
            .as_mut()
            .expect("span made a page current")
            .rows_left -= m;
        self.rg_rows_left -= m;
    }

    /// Makes a data page with rows left current; returns how many of them (at most
    /// `max`, at least one) are in the open row group; an error at the end of the file
    /// (the caller asked for rows the file's row groups do not hold).
    fn span(&mut self, ctx: &Ctx, max: usize) -> Result<usize, TraceError> {
        debug_assert!(max > 0);
        loop {
            if let Some(p) = &self.page {
                if p.rows_left > 0 {
                    if self.rg_rows_left == 0 {
                        return Err(self.corrupt(ctx, "more values than the row group has rows"));
                    }
                    return Ok(max.min(p.rows_left).min(self.rg_rows_left));
                }
            }
            self.page = None;
            if let Some(pages) = &mut self.pages {
                let next = pages
                    .get_next_page()
                    .map_err(|e| TraceError::parquet(ctx.path, e))?;
                match next {
                    Some(page) => self.load(ctx, page)?,
                    None if self.rg_rows_left > 0 => {
                        return Err(self.corrupt(ctx, "fewer values than the row group has rows"))
                    }
                    None => self.pages = None,
                }
                continue;
            }
            let Some(rg) = ctx.md.row_groups().get(self.next_rg) else {
                return Err(self.corrupt(ctx, "fewer rows than the file's row groups"));
            };
            let rows = usize::try_from(rg.num_rows())
                .map_err(|_| TraceError::schema(ctx.path, "negative row count in a row group"))?;
            let pages =
                SerializedPageReader::new(Arc::clone(ctx.file), rg.column(self.leaf), rows, None)
                    .map_err(|e| TraceError::parquet(ctx.path, e))?;
            self.pages = Some(pages);
            self.next_rg += 1;
            self.rg_rows_left = rows;
            self.has_dict = false;
        }
    }

    /// Takes a page from the page reader: a dictionary is decoded, a data page made
    /// current.
    fn load(&mut self, ctx: &Ctx, page: Page) -> Result<(), TraceError> {
        let res = match page {
            Page::DictionaryPage {
                num_values,
                encoding,
                ..
            } => {
                let r = self.load_dictionary(&page, num_values as usize, encoding);
                if r.is_ok() {
                    self.has_dict = true;
                }
                r
            }
            _ => self.load_data(page),
        };
        res.map_err(|e| self.corrupt(ctx, &e))
    }

    fn load_dictionary(&mut self, page: &Page, n: usize, enc: Encoding) -> Result<(), Corrupt> {
        if !matches!(enc, Encoding::PLAIN | Encoding::PLAIN_DICTIONARY) {
            return Err(format!("dictionary page encoded {enc}"));
        }
        let buf: &[u8] = page.buffer();
        self.dict_ints.clear();
        self.dict_strs.clear();
        self.codes.clear();
        match self.kind {
            Kind::Int => {
                if buf.len() / 8 < n {
                    return Err(format!("dictionary of {n} values in {} bytes", buf.len()));
                }
                self.dict_ints.extend(
                    buf[..n * 8]
                        .chunks_exact(8)
                        .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes"))),
                );
            }
            Kind::Str => {
                if buf.len() / 4 < n {
                    return Err(format!("dictionary of {n} values in {} bytes", buf.len()));
                }
                let mut pos = 0;
                for _ in 0..n {
                    let s = byte_array(buf, &mut pos)?;
                    let s = std::str::from_utf8(s).map_err(|_| "a name that is not UTF-8")?;
                    self.dict_strs.push(s.to_owned());
                }
                let n = u32::try_from(n)
                    .ok()
                    .filter(|&n| n < UNKNOWN)
                    .ok_or("dictionary too big")?;
                self.codes.extend((0..n).map(|k| UNKNOWN | k));
                self.op_table.clear();
                if self.name == COL_OP {
                    let ops: Option<Vec<Op>> =
                        self.dict_strs.iter().map(|s| Op::parse(s)).collect();
                    self.op_table = ops.unwrap_or_default();
                }
            }
        }
        Ok(())
    }

    fn load_data(&mut self, page: Page) -> Result<(), Corrupt> {
        let buf: &[u8] = page.buffer();
        let (rows, encoding, defs, start) = match &page {
            Page::DataPage {
                num_values,
                encoding,
                def_level_encoding,
                ..
            } => {
                let mut pos = 0;
                let defs = if self.nullable {
                    if *def_level_encoding != Encoding::RLE {
                        return Err(format!("definition levels encoded {def_level_encoding}"));
                    }
                    let len = buf.get(..4).ok_or("truncated definition levels")?;
                    let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
                    if buf.len() - 4 < len {
                        return Err("definition levels longer than their page".into());
                    }
                    pos = 4 + len;
                    Some(Hybrid::new(4, pos, 1)?)
                } else {
                    None
                };
                (*num_values, *encoding, defs, pos)
            }
            Page::DataPageV2 {
                num_values,
                encoding,
                def_levels_byte_len,
                rep_levels_byte_len,
                ..
            } => {
                let rep = *rep_levels_byte_len as usize;
                let end = rep
                    .checked_add(*def_levels_byte_len as usize)
                    .filter(|&e| e <= buf.len())
                    .ok_or("levels longer than their page")?;
                let defs = match self.nullable {
                    true => Some(Hybrid::new(rep, end, 1)?),
                    false => None,
                };
                (*num_values, *encoding, defs, end)
            }
            Page::DictionaryPage { .. } => unreachable!("handled by the caller"),
        };
        let values = match encoding {
            Encoding::PLAIN => Values::Plain { pos: start },
            Encoding::DELTA_BINARY_PACKED if self.kind == Kind::Int => {
                Values::Delta(Box::new(Delta::new(buf, start, buf.len())?))
            }
            Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY => {
                if !self.has_dict {
                    return Err("dictionary-encoded page without a dictionary".into());
                }
                let width = *buf.get(start).ok_or("missing key bit width")?;
                Values::Dict(Hybrid::new(start + 1, buf.len(), usize::from(width))?)
            }
            e => return Err(format!("data page encoded {e}")),
        };
        self.page = Some(DataPage {
            rows_left: rows as usize,
            defs,
            values,
            page,
        });
        Ok(())
    }

    /// Reads the definition levels of the next `m` rows of the current page: true
    /// when all are defined, else the levels are in `self.levels` (0 or 1 each).
    fn read_levels(&mut self, m: usize) -> Result<bool, Corrupt> {
        let p = self.page.as_mut().expect("span made a page current");
        let buf: &[u8] = p.page.buffer();
        let Some(h) = &mut p.defs else {
            return Ok(true);
        };
        if h.skip_run(buf, 1, m)? {
            return Ok(true);
        }
        self.levels.clear();
        // Levels are 1 bit wide (the maximum level is 1): every value is 0 or 1.
        h.take_mapped(buf, m, &[0, 1], &mut self.levels)?;
        Ok(self.levels.iter().all(|&l| l == 1))
    }

    /// Appends the next `n` values of the current page (not rows: nulls have none).
    fn int_values(&mut self, n: usize, out: &mut Vec<i64>) -> Result<(), Corrupt> {
        let p = self.page.as_mut().expect("span made a page current");
        let buf: &[u8] = p.page.buffer();
        match &mut p.values {
            Values::Plain { pos } => {
                let bytes = n.checked_mul(8).filter(|&b| b <= buf.len() - *pos);
                let bytes = bytes.ok_or("fewer PLAIN values than the page has rows")?;
                out.extend(
                    buf[*pos..*pos + bytes]
                        .chunks_exact(8)
                        .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes"))),
                );
                *pos += bytes;
            }
            Values::Delta(d) => d.take(buf, n, out)?,
            Values::Dict(h) => h.take_mapped(buf, n, &self.dict_ints, out)?,
        }
        Ok(())
    }

    /// Reads `n` rows of an INT64 column into `out`; null rows read as 0 and are noted
    /// in `nulls` (None: a null is an error).
    fn read_ints(
        &mut self,
        ctx: &Ctx,
        n: usize,
        out: &mut Vec<i64>,
        mut nulls: Option<&mut NullTrack>,
    ) -> Result<(), TraceError> {
        let mut left = n;
        while left > 0 {
            let m = self.span(ctx, left)?;
            let all = self.read_levels(m).map_err(|e| self.corrupt(ctx, &e))?;
            if all {
                self.int_values(m, out).map_err(|e| self.corrupt(ctx, &e))?;
                if let Some(t) = nulls.as_deref_mut() {
                    t.valid(m);
                }
            } else {
                let Some(t) = nulls.as_deref_mut() else {
                    return Err(store::nulls_error(ctx.path, self.name));
                };
                let defined = self.levels.iter().filter(|&&l| l == 1).count();
                let mut vals = std::mem::take(&mut self.scratch);
                vals.clear();
                let r = self.int_values(defined, &mut vals);
                r.map_err(|e| self.corrupt(ctx, &e))?;
                let mut it = vals.iter();
                out.extend(self.levels.iter().map(|&l| match l {
                    1 => *it.next().expect("one value per defined row"),
                    _ => 0,
                }));
                t.levels(&self.levels);
                self.scratch = vals;
            }
            self.consumed(m);
            left -= m;
        }
        Ok(())
    }

    /// Appends the codes of the next `n` values (not rows) of a string column:
    /// `code(name)` for each, computed once per dictionary entry.
    fn str_values(
        &mut self,
        ctx: &Ctx,
        n: usize,
        out: &mut Vec<u32>,
        code: &mut dyn FnMut(&str) -> Result<u32, TraceError>,
    ) -> Result<(), TraceError> {
        let (name, next_rg) = (self.name, self.next_rg);
        let p = self.page.as_mut().expect("span made a page current");
        let buf: &[u8] = p.page.buffer();
        match &mut p.values {
            Values::Plain { pos } => {
                for _ in 0..n {
                    let s = byte_array(buf, pos).map_err(|e| corrupt(ctx, name, next_rg, &e))?;
                    let s = std::str::from_utf8(s)
                        .map_err(|_| corrupt(ctx, name, next_rg, "a name that is not UTF-8"))?;
                    out.push(code(s)?);
                }
            }
            Values::Delta(_) => unreachable!("string pages are never delta-encoded"),
            Values::Dict(h) => {
                let at = out.len();
                let r = h.take_mapped(buf, n, &self.codes, out);
                r.map_err(|e| self.corrupt(ctx, &e))?;
                // Entries no row referenced before: their code now, in row order.
                if out[at..].iter().fold(0, |a, &c| a | c) & UNKNOWN != 0 {
                    for c in &mut out[at..] {
                        if *c & UNKNOWN != 0 {
                            let k = (*c & !UNKNOWN) as usize;
                            if self.codes[k] & UNKNOWN != 0 {
                                let code = code(&self.dict_strs[k])?;
                                if code & UNKNOWN != 0 {
                                    return Err(self.corrupt(ctx, "too many names"));
                                }
                                self.codes[k] = code;
                            }
                            *c = self.codes[k];
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Reads `n` rows of the op column: straight through the dictionary when every
    /// entry is an op, else as codes, refused when a row names no op.
    fn read_ops(&mut self, ctx: &Ctx, n: usize, out: &mut Vec<Op>) -> Result<(), TraceError> {
        let mut left = n;
        let mut codes = Vec::new();
        while left > 0 {
            let m = self.span(ctx, left)?;
            let fast = !self.op_table.is_empty()
                && matches!(self.page.as_ref().map(|p| &p.values), Some(Values::Dict(_)));
            if !fast {
                codes.clear();
                let mut op_code =
                    |s: &str| store::parse_op(ctx.path, Some(s)).map(|o| o.index() as u32);
                self.read_strs(ctx, m, &mut codes, None, &mut op_code)?;
                out.extend(codes.iter().map(|&c| Op::ALL[c as usize]));
                left -= m;
                continue;
            }
            if !self.read_levels(m).map_err(|e| self.corrupt(ctx, &e))? {
                return Err(store::nulls_error(ctx.path, self.name));
            }
            let p = self.page.as_mut().expect("span made a page current");
            let buf: &[u8] = p.page.buffer();
            let Values::Dict(h) = &mut p.values else {
                unreachable!("checked above")
            };
            let r = h.take_mapped(buf, m, &self.op_table, out);
            self.consumed(m);
            r.map_err(|e| self.corrupt(ctx, &e))?;
            left -= m;
        }
        Ok(())
    }

    /// Reads `n` rows of a string column as codes; a null row is `null` (None: a
    /// null is an error).
    fn read_strs(
        &mut self,
        ctx: &Ctx,
        n: usize,
        out: &mut Vec<u32>,
        null: Option<u32>,
        code: &mut dyn FnMut(&str) -> Result<u32, TraceError>,
    ) -> Result<(), TraceError> {
        let mut left = n;
        while left > 0 {
            let m = self.span(ctx, left)?;
            let all = self.read_levels(m).map_err(|e| self.corrupt(ctx, &e))?;
            if all {
                self.str_values(ctx, m, out, code)?;
            } else {
                let Some(null) = null else {
                    return Err(store::nulls_error(ctx.path, self.name));
                };
                let defined = self.levels.iter().filter(|&&l| l == 1).count();
                let at = out.len();
                self.str_values(ctx, defined, out, code)?;
                // Spread the values over the rows, back to front, nulls between.
                out.resize(at + m, null);
                let mut v = at + defined;
                for r in (0..m).rev() {
                    if self.levels[r] == 1 {
                        v -= 1;
                        out[at + r] = out[v];
                    } else {
                        out[at + r] = null;
                    }
                }
                assert_eq!(v, at);
            }
            self.consumed(m);
            left -= m;
        }
        Ok(())
    }
}

/// A malformed page of column `name` in the row group before `next_rg`.
fn corrupt(ctx: &Ctx, name: &str, next_rg: usize, what: &str) -> TraceError {
    TraceError::parquet(
        ctx.path,
        ParquetError::General(format!(
            "column `{name}`, row group {}: {what}",
            next_rg.saturating_sub(1)
        )),
    )
}

/// A PLAIN BYTE_ARRAY value at `*pos`: 4-byte length, then the bytes.
fn byte_array<'a>(buf: &'a [u8], pos: &mut usize) -> Result<&'a [u8], Corrupt> {
    let len = buf.get(*pos..*pos + 4).ok_or("truncated string length")?;
    let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
    let start = *pos + 4;
    let s = buf
        .get(start..start.saturating_add(len))
        .ok_or("string longer than its page")?;
    *pos = start + len;
    Ok(s)
}

// ---------------------------------------------------------------------------------
// The reader

/// Decodes a trace's batches from its pages (see the module doc).
pub(crate) struct PageDecoder {
    path: PathBuf,
    file: Arc<File>,
    md: Arc<ParquetMetaData>,
    batch_rows: usize,
    /// Rows not handed out yet (the row groups' counts).
    rows_left: usize,
    issue: Column,
    complete: Option<Column>,
    offset: Column,
    len: Column,
    op: Column,
    stream: Option<Column>,
    device: Option<Column>,
}

impl PageDecoder {
    /// A decoder for the file, or None when it uses a type or encoding this module
    /// does not read (the caller then reads through Arrow).
    pub(crate) fn try_new(
        path: &Path,
        file: &Arc<File>,
        md: &Arc<ParquetMetaData>,
        schema: &Schema,
        wanted: Wanted,
        batch_rows: usize,
    ) -> Result<Option<PageDecoder>, TraceError> {
        assert!(batch_rows > 0);
        let descr = md.file_metadata().schema_descr();
        let column = |name: &'static str, kind: Kind| -> Option<Column> {
            let leaf = descr
                .columns()
                .iter()
                .position(|c| c.path().parts() == [name])?;
            let c = descr.column(leaf);
            let arrow = schema.field_with_name(name).ok()?.data_type();
            let types_ok = match kind {
                Kind::Int => {
                    *arrow == DataType::Int64
                        && c.physical_type() == PhysicalType::INT64
                        && matches!(
                            c.converted_type(),
                            ConvertedType::NONE | ConvertedType::INT_64
                        )
                        && match c.logical_type_ref() {
                            None => true,
                            Some(LogicalType::Integer(t)) => t.bit_width == 64 && t.is_signed,
                            Some(_) => false,
                        }
                }
                Kind::Str => {
                    c.physical_type() == PhysicalType::BYTE_ARRAY
                        && matches!(
                            c.converted_type(),
                            ConvertedType::NONE | ConvertedType::UTF8
                        )
                        && matches!(c.logical_type_ref(), None | Some(LogicalType::String))
                }
            };
            let levels_ok = c.max_rep_level() == 0 && (0..=1).contains(&c.max_def_level());
            let encodings_ok = md.row_groups().iter().all(|rg| {
                rg.column(leaf).encodings().all(|e| match e {
                    Encoding::PLAIN
                    | Encoding::RLE
                    | Encoding::RLE_DICTIONARY
                    | Encoding::PLAIN_DICTIONARY => true,
                    Encoding::DELTA_BINARY_PACKED => kind == Kind::Int,
                    _ => false,
                })
            });
            (types_ok && levels_ok && encodings_ok)
                .then(|| Column::new(name, leaf, kind, c.max_def_level() == 1))
        };
        let opt = |want: bool, name, kind| match want {
            true => column(name, kind).map(Some),
            false => Some(None),
        };
        let cols = (|| {
            Some((
                column(COL_ISSUE, Kind::Int)?,
                opt(wanted.complete, COL_COMPLETE, Kind::Int)?,
                column(COL_OFFSET, Kind::Int)?,
                column(COL_LEN, Kind::Int)?,
                column(COL_OP, Kind::Str)?,
                opt(wanted.stream, COL_STREAM, Kind::Str)?,
                opt(wanted.device, COL_DEVICE, Kind::Str)?,
            ))
        })();
        let Some((issue, complete, offset, len, op, stream, device)) = cols else {
            return Ok(None);
        };
        let mut rows = 0usize;
        for rg in md.row_groups() {
            let n = usize::try_from(rg.num_rows())
                .map_err(|_| TraceError::schema(path, "negative row count in a row group"))?;
            rows = rows
                .checked_add(n)
                .ok_or_else(|| TraceError::schema(path, "row count overflows"))?;
        }
        Ok(Some(PageDecoder {
            path: path.to_path_buf(),
            file: Arc::clone(file),
            md: Arc::clone(md),
            batch_rows,
            rows_left: rows,
            issue,
            complete,
            offset,
            len,
            op,
            stream,
            device,
        }))
    }

    /// The next batch (at most `batch_rows` rows), checked as the Arrow path checks
    /// its batches, in the same order; None at the end.
    pub(crate) fn next_batch(
        &mut self,
        streams: &mut Names,
        devices: &mut Names,
    ) -> Result<Option<ColumnBatch>, TraceError> {
        let n = self.batch_rows.min(self.rows_left);
        if n == 0 {
            return Ok(None);
        }
        let ctx = Ctx {
            path: &self.path,
            file: &self.file,
            md: &self.md,
        };
        let path = ctx.path;
        let reserve = n.min(RESERVE_ROWS);
        let int = |c: &mut Column, name| -> Result<Vec<i64>, TraceError> {
            let mut v = Vec::with_capacity(reserve + GROUP_SLACK);
            c.read_ints(&ctx, n, &mut v, None)?;
            store::check_non_negative(path, name, &v, None)?;
            Ok(v)
        };
        let issue = int(&mut self.issue, COL_ISSUE)?;
        let offset = int(&mut self.offset, COL_OFFSET)?;
        let len = int(&mut self.len, COL_LEN)?;
        let complete = match &mut self.complete {
            None => None,
            Some(c) => {
                let mut v = Vec::with_capacity(reserve + GROUP_SLACK);
                let mut t = NullTrack::new();
                c.read_ints(&ctx, n, &mut v, Some(&mut t))?;
                let nulls = t.finish();
                match nulls {
                    Some(nb) if nb.null_count() == n => None,
                    nulls => {
                        store::check_non_negative(path, COL_COMPLETE, &v, nulls.as_ref())?;
                        Some(Int64Array::new(ScalarBuffer::from(v), nulls))
                    }
                }
            }
        };
        store::check_rows(path, &issue, &offset, &len, complete.as_ref())?;
        let mut ops = Vec::with_capacity(reserve);
        self.op.read_ops(&ctx, n, &mut ops)?;
        let slots = |c: &mut Option<Column>, names: &mut Names| match c {
            None => Ok(None),
            Some(c) => {
                let mut v = Vec::with_capacity(reserve);
                let name = c.name;
                let mut slot = |s: &str| store::name_slot(path, name, names.intern(s));
                c.read_strs(&ctx, n, &mut v, Some(0), &mut slot)?;
                Ok::<_, TraceError>(Some(v))
            }
        };
        let stream_slots = slots(&mut self.stream, streams)?;
        let device_slots = slots(&mut self.device, devices)?;
        self.rows_left -= n;
        Ok(Some(ColumnBatch {
            issue_ns: ScalarBuffer::from(issue),
            complete_ns: complete,
            offset_bytes: ScalarBuffer::from(offset),
            len_bytes: ScalarBuffer::from(len),
            ops,
            device_slots,
            stream_slots,
        }))
    }
}

#[cfg(test)]
mod tests;
