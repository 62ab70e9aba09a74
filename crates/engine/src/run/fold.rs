//! Folding onto the tested span and alignment to the logical block size.

/// Fold `[offset, offset+len)` onto `[0, span)` and align to the logical block size.
/// Returns (offset, len, folded, aligned). One rule for replay and `storbench export
/// --span`: the trace crate's.
pub(super) use storbench_trace::formats::export::fold_align;

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
