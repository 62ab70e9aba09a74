//! The sorts characterize uses: a radix sort for QD completions (nearly sorted `u64`
//! times) and footprint ranges (random `(start, end)` pairs, by start), and an insertion
//! sort for completions that are almost in order already (a device completing about
//! first in, first out), where it moves few elements and beats the radix passes.

/// Sorts by a `u64` key, stably. LSD radix sort, 11-bit digits over the bits where keys
/// differ (a few ns per element, where a comparison sort costs tens), with four lanes
/// per pass: a quarter of the input each, with its own bucket offsets, placed lane after
/// lane within a bucket so the sort stays stable. Nearly sorted input (completion
/// times) has runs of equal digits; with one lane each element would wait on the same
/// counter. `scratch` and `counts` are reused buffers.
pub(super) fn radix_sort_by_key<T: Copy + Default>(
    v: &mut Vec<T>,
    scratch: &mut Vec<T>,
    counts: &mut Vec<u32>,
    key: impl Fn(&T) -> u64,
) {
    const BITS: u32 = 11;
    const B: usize = 1 << BITS;
    const LANES: usize = 4;
    let n = v.len();
    if n < 2048 {
        v.sort_by_key(&key);
        return;
    }
    assert!(n < u32::MAX as usize);
    let (or, and) = v
        .iter()
        .fold((0u64, !0u64), |(o, a), x| (o | key(x), a & key(x)));
    let varying = or ^ and;
    if varying == 0 {
        return;
    }
    let top = 64 - varying.leading_zeros();
    let mut shift = varying.trailing_zeros();
    scratch.clear();
    scratch.resize(n, T::default());
    counts.clear();
    counts.resize(LANES * B, 0);
    let q = n / LANES;
    while shift < top {
        let digit = |x: &T| ((key(x) >> shift) as usize) & (B - 1);
        counts.fill(0);
        {
            let (c0, rest) = counts.split_at_mut(B);
            let (c1, rest) = rest.split_at_mut(B);
            let (c2, c3) = rest.split_at_mut(B);
            for i in 0..q {
                c0[digit(&v[i])] += 1;
                c1[digit(&v[q + i])] += 1;
                c2[digit(&v[2 * q + i])] += 1;
                c3[digit(&v[3 * q + i])] += 1;
            }
            for x in &v[4 * q..] {
                c3[digit(x)] += 1;
            }
        }
        // Offsets: bucket by bucket, lane after lane.
        let mut sum = 0u32;
        for b in 0..B {
            for l in 0..LANES {
                let here = counts[l * B + b];
                counts[l * B + b] = sum;
                sum += here;
            }
        }
        {
            let (o0, rest) = counts.split_at_mut(B);
            let (o1, rest) = rest.split_at_mut(B);
            let (o2, o3) = rest.split_at_mut(B);
            let dst = &mut scratch[..];
            for i in 0..q {
                let (x0, x1, x2, x3) = (v[i], v[q + i], v[2 * q + i], v[3 * q + i]);
                let (d0, d1, d2, d3) = (digit(&x0), digit(&x1), digit(&x2), digit(&x3));
                dst[o0[d0] as usize] = x0;
                o0[d0] += 1;
                dst[o1[d1] as usize] = x1;
                o1[d1] += 1;
                dst[o2[d2] as usize] = x2;
                o2[d2] += 1;
                dst[o3[d3] as usize] = x3;
                o3[d3] += 1;
            }
            for &x in &v[4 * q..] {
                let d = digit(&x);
                dst[o3[d] as usize] = x;
                o3[d] += 1;
            }
        }
        std::mem::swap(v, scratch);
        shift += BITS;
    }
    debug_assert!(v.windows(2).all(|w| key(&w[0]) <= key(&w[1])));
}

/// Sorts `v` by one bucket pass (as many buckets as elements, or up to twice that,
/// over the range of values) and then insertion, when that insertion takes at most
/// `moves_per_item` moves per element; returns false as soon as it would take more,
/// leaving `v` a permutation of its input. Completion times spread over their range
/// land about one per bucket, and in issue order within one, so the insertion pass is
/// little more than a scan: one scatter pass instead of a radix sort's three or four.
pub(super) fn bucket_sort_within(
    v: &mut Vec<u64>,
    scratch: &mut Vec<u64>,
    counts: &mut Vec<u32>,
    moves_per_item: usize,
) -> bool {
    let n = v.len();
    if n < 2 {
        return true;
    }
    assert!(n < u32::MAX as usize);
    let (lo, hi) = v
        .iter()
        .fold((u64::MAX, 0u64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    let span = hi - lo;
    if span == 0 {
        return true;
    }
    // 2^bits >= n buckets at most; the shift brings the span under that.
    let bits = usize::BITS - (n - 1).leading_zeros();
    let shift = (u64::BITS - span.leading_zeros()).saturating_sub(bits);
    let buckets = (span >> shift) as usize + 1;
    debug_assert!(buckets <= 1 << bits);
    counts.clear();
    counts.resize(buckets, 0);
    for &x in v.iter() {
        counts[((x - lo) >> shift) as usize] += 1;
    }
    let mut sum = 0u32;
    for c in counts.iter_mut() {
        let here = *c;
        *c = sum;
        sum += here;
    }
    scratch.clear();
    scratch.resize(n, 0);
    for &x in v.iter() {
        let b = ((x - lo) >> shift) as usize;
        scratch[counts[b] as usize] = x;
        counts[b] += 1;
    }
    std::mem::swap(v, scratch);
    insertion_sort_within(v, moves_per_item)
}

/// Sorts `v` by insertion when that takes at most `moves_per_item` element moves per
/// element in all; returns false as soon as it would take more, leaving `v` a
/// permutation of its input (for a sort that copes with any order). The cost is
/// proportional to how far elements are out of place, so on input nearly in order it
/// is a little more than one pass.
pub(super) fn insertion_sort_within(v: &mut [u64], moves_per_item: usize) -> bool {
    let budget = moves_per_item.saturating_mul(v.len());
    let mut moves = 0;
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1] > x {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
        moves += i - j;
        if moves > budget {
            return false;
        }
    }
    debug_assert!(v.windows(2).all(|w| w[0] <= w[1]));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_lane_radix_sort_sorts() {
        for n in [0usize, 5, 2047, 2048, 2051, 10_007] {
            let mut rng = crate::test_rng::XorShift(0x2545_F491_4F6C_DD1D);
            // Nearly sorted (a time plus a random service time), with duplicates.
            let mut v: Vec<u64> = (0..n as u64)
                .map(|i| (1 << 40) + i * 20_000 + rng.below(500_000) / 1000 * 1000)
                .collect();
            let mut want = v.clone();
            want.sort_unstable();
            radix_sort_by_key(&mut v, &mut Vec::new(), &mut Vec::new(), |&x| x);
            assert_eq!(v, want, "n {n}");
        }
    }

    #[test]
    fn radix_sort_by_key_is_stable() {
        // Random keys with many duplicates; the payload is the input position, so a
        // stable sort equals std's stable sort_by_key exactly.
        let mut x: u64 = 12345;
        let mut v: Vec<(u64, u64)> = (0..10_007)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (((x >> 20) % (1 << 12)) << 30, i)
            })
            .collect();
        let mut want = v.clone();
        want.sort_by_key(|r| r.0);
        radix_sort_by_key(&mut v, &mut Vec::new(), &mut Vec::new(), |r| r.0);
        assert_eq!(v, want);
    }

    #[test]
    fn bucket_sort_sorts_or_refuses_leaving_a_permutation() {
        let mut rng = crate::test_rng::XorShift(7);
        let (mut scratch, mut counts) = (Vec::new(), Vec::new());
        for n in [0usize, 1, 2, 3, 100, 8191, 8192, 8193] {
            // Issue times plus uniform service times: about one per bucket.
            let mut t = 1u64 << 40;
            let mut v: Vec<u64> = (0..n)
                .map(|_| {
                    t += rng.below(40_000);
                    t + 50_000 + rng.below(450_000)
                })
                .collect();
            let mut want = v.clone();
            want.sort_unstable();
            assert!(
                bucket_sort_within(&mut v, &mut scratch, &mut counts, 4),
                "n {n}"
            );
            assert_eq!(v, want, "n {n}");
        }
        // All equal, and one far outlier that piles the rest into one bucket.
        let mut v = vec![5u64; 1000];
        assert!(bucket_sort_within(&mut v, &mut scratch, &mut counts, 0));
        assert_eq!(v, vec![5u64; 1000]);
        let mut v: Vec<u64> = (0..5000u64).rev().collect();
        v.push(u64::MAX);
        assert!(!bucket_sort_within(&mut v, &mut scratch, &mut counts, 2));
        let mut got = v.clone();
        got.sort_unstable();
        let mut want: Vec<u64> = (0..5000u64).collect();
        want.push(u64::MAX);
        assert_eq!(got, want);
    }

    #[test]
    fn insertion_sort_sorts_within_its_budget_and_gives_up_beyond_it() {
        let mut rng = crate::test_rng::XorShift(99);
        let mut rnd = move || rng.next();
        // Nearly in order: a time plus a small jitter, with duplicates.
        let mut v: Vec<u64> = (0..5000u64).map(|i| i * 100 + rnd() % 150).collect();
        let mut want = v.clone();
        want.sort_unstable();
        assert!(insertion_sort_within(&mut v, 2));
        assert_eq!(v, want);
        // Reversed: n(n-1)/2 moves, far past 2 per element: refused, input permuted.
        let mut v: Vec<u64> = (0..5000u64).rev().collect();
        assert!(!insertion_sort_within(&mut v, 2));
        let mut got = v.clone();
        got.sort_unstable();
        assert_eq!(got, (0..5000u64).collect::<Vec<_>>());
        // Empty and single element.
        assert!(insertion_sort_within(&mut [], 0));
        assert!(insertion_sort_within(&mut [7], 0));
    }
}
