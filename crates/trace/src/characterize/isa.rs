//! Runtime CPU-feature dispatch for the hot loops.
//!
//! The release build targets baseline x86_64 (it must run on any), yet the loops run
//! faster compiled for the CPU at hand. The features are detected once, when a
//! [`super::Characterizer`] is made, and kept in it as an [`Isa`] passed down to each
//! concern's loop; [`multiversion!`] compiles a loop's one body (an
//! `#[inline(always)]` function) once per level and picks the level's copy. Every
//! level computes the same figures bit for bit: the tests run each level available
//! on the machine against the portable one (`tests.rs` `run`, and per loop in
//! `hist.rs` and `sizes.rs`).
//!
//! Measured (perf samples of `trace_bench characterize-mem` on the 10 M bench trace,
//! interleaved rounds, per 1000 samples of the footprint loops, which are the same
//! code in every binary: a yardstick against the host's noise; load 3-5): the loops
//! below compiled for AVX-512 with no change to their code, all of this module's
//! concerns together 4590 -> 4384 (push_rows 677 -> 586, the histograms 514 -> 484,
//! `Mix::push` 281 -> 263, `Sequential::push` 396 -> 376, the rest within noise);
//! with the wide forms of `hist.rs` and `qd.rs` (which only pay with AVX-512) 4715
//! -> 4139, the portable build 4579 (noise). x86-64-v3 (AVX2, BMI1/2, LZCNT, no
//! AVX-512) was measured as a level too and dropped: 4746 against 4590, its
//! `push_rows` 904 against 677 (LLVM's AVX2 form of the 64-bit max is slower than
//! the scalar one), the rest within noise. These per-loop figures move by up to 15%
//! between sets of the same two binaries; only those that held in two sets count.
//!
//! Whole `trace_bench characterize` of the 10 M bench trace, task-clock, 9 rounds
//! interleaved with the commit before the dispatch (`perf stat`, `taskset -c 1`),
//! min / median: 577 / 633 -> 536 / 591 ms (load 2.6-2.8); a second set 639 -> 615
//! ms min, lower in 8 of 9 pairs (load 2.8-3.0, medians swamped by the host).
//! `characterize-mem` (min of 5 interleaved, best of 3 each) within noise: bench
//! 45.2 -> 45.0 and 62.5 -> 53.8 ns per I/O, FIFO-like 44.4 -> 46.2 and 56.8 ->
//! 54.6. JSON output byte-identical on both traces and a 1 M one.
//!
//! Not done: `Sequential::push` split by direction with AVX-512 compress (LLVM does
//! not make a compress from a compaction loop, so it needs intrinsics and raw
//! loads: more `unsafe` than the ~5% of these loops' samples it could save).

/// An instruction-set level the loops are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Isa {
    /// Baseline: whatever the build targets.
    Portable,
    /// x86-64-v4: AVX-512 F, BW, CD, DQ, VL with AVX2, BMI1, BMI2, LZCNT, POPCNT,
    /// FMA, MOVBE (Skylake-X, Ice Lake, Sapphire Rapids, Zen 4 and up).
    #[cfg(target_arch = "x86_64")]
    V4,
}

impl Isa {
    /// The best level this CPU runs.
    pub(super) fn detect() -> Isa {
        Isa::available().last().copied().unwrap_or(Isa::Portable)
    }

    /// Whether 64-bit lanes have native unsigned max/min, compares and conversions
    /// (AVX-512): a loop may then take a form that vectorises, where the portable
    /// build does better with the scalar one. Constant in each compiled copy.
    #[inline(always)]
    pub(super) fn wide_u64(self) -> bool {
        match self {
            Isa::Portable => false,
            #[cfg(target_arch = "x86_64")]
            Isa::V4 => true,
        }
    }

    /// Every level this CPU runs, portable first.
    pub(super) fn available() -> Vec<Isa> {
        #[allow(unused_mut)]
        let mut v = vec![Isa::Portable];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2")
            && std::arch::is_x86_feature_detected!("lzcnt")
            && std::arch::is_x86_feature_detected!("popcnt")
            && std::arch::is_x86_feature_detected!("fma")
            && std::arch::is_x86_feature_detected!("movbe")
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512cd")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vl")
        {
            v.push(Isa::V4);
        }
        v
    }
}

/// `multiversion! { fn name(a: A, b: B) -> R = body; }` defines `name(isa, a, b)`,
/// kept out of line, which runs `body(a, b, isa)` compiled for `isa`: `body` must be
/// `#[inline(always)]`, so that each level's copy inlines it with its features (it
/// gets `isa`, last, to pass on to the loops it calls; a method's `self` is `a`).
macro_rules! multiversion {
    ($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? = $body:path;) => {
        $(#[$attr])*
        #[inline(never)]
        $vis fn $name(isa: $crate::characterize::isa::Isa, $($arg: $ty),*) $(-> $ret)? {
            match isa {
                #[cfg(target_arch = "x86_64")]
                $crate::characterize::isa::Isa::V4 => {
                    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt,fma,movbe")]
                    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq,avx512vl")]
                    fn v4($($arg: $ty),*) $(-> $ret)? {
                        $body($($arg,)* $crate::characterize::isa::Isa::V4)
                    }
                    // SAFETY: an `Isa::V4` is made only once these features were
                    // detected on this CPU (`Isa::available`).
                    unsafe { v4($($arg),*) }
                }
                $crate::characterize::isa::Isa::Portable => $body($($arg,)* isa),
            }
        }
    };
}
pub(super) use multiversion;
