//! Folding onto the tested span and alignment to the logical block size.

/// Fold `[offset, offset+len)` onto `[0, span)` and align to `lbs`. Returns
/// (offset, len, folded, aligned).
pub(super) fn fold_align(offset: u64, len: u64, span: u64, lbs: u64) -> (u64, u64, bool, bool) {
    assert!(lbs > 0 && span >= lbs && span.is_multiple_of(lbs));
    let mut aligned = false;
    let mut start = offset;
    let mut end = offset.saturating_add(len);
    if !start.is_multiple_of(lbs) || !end.is_multiple_of(lbs) {
        aligned = true;
        start = start / lbs * lbs;
        end = end.div_ceil(lbs) * lbs;
    }
    let mut l = end - start;
    let mut folded = false;
    if l > span {
        l = span;
        folded = true;
    }
    if start + l > span {
        folded = true;
        start %= span;
        if start + l > span {
            start = span - l;
        }
    }
    assert!(start.is_multiple_of(lbs) && l.is_multiple_of(lbs) && start + l <= span);
    (start, l, folded, aligned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_and_align() {
        // In range and aligned: untouched.
        assert_eq!(
            fold_align(4096, 4096, 1 << 20, 512),
            (4096, 4096, false, false)
        );
        // Unaligned: widened to whole blocks.
        assert_eq!(fold_align(100, 1000, 1 << 20, 512), (0, 1536, false, true));
        // Past the end: folded by modulo.
        assert_eq!(
            fold_align((1 << 20) + 8192, 4096, 1 << 20, 512),
            (8192, 4096, true, false)
        );
        // Straddling the end after the modulo: moved back to fit.
        assert_eq!(
            fold_align((2 << 20) - 1024, 4096, 1 << 20, 512),
            ((1 << 20) - 4096, 4096, true, false)
        );
        // Longer than the span: clipped.
        assert_eq!(
            fold_align(0, 4 << 20, 1 << 20, 512),
            (0, 1 << 20, true, false)
        );
    }
}
