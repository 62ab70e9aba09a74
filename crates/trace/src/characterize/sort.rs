//! The radix sort footprint ranges (random `(start, end)` pairs, by start) go through.
//! The QD sweep no longer sorts its completions (see `qd.rs`): its bucket pass plus
//! insertion and its insertion-only sort went with that.

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
}
