//! Issue order and inter-arrival times: the effective (clamped) issue time of every
//! record, the gaps between them, and the trace's first issue.

use super::hist::LogHist;

#[derive(Clone)]
pub(super) struct Arrivals {
    pub(super) first_issue_ns: Option<u64>,
    pub(super) last_issue_ns: u64,
    pub(super) order_violations: u64,
    pub(super) inter_arrival: LogHist,
}

impl Arrivals {
    pub(super) fn new() -> Self {
        Arrivals {
            first_issue_ns: None,
            last_issue_ns: 0,
            order_violations: 0,
            inter_arrival: LogHist::new(),
        }
    }

    /// Takes the next issue times; returns them clamped to non-decreasing (a record
    /// issued before its predecessor counts as a violation and is treated as issued
    /// at the predecessor's time): `issue` itself when it is in order (the usual
    /// case), else the clamped copy in `scratch`.
    #[inline(never)]
    pub(super) fn push<'a>(&mut self, issue: &'a [u64], scratch: &'a mut Vec<u64>) -> &'a [u64] {
        let Some(&first) = issue.first() else {
            return issue;
        };
        // The very first record of the trace has no predecessor and no gap.
        let (prev, gaps_from) = match self.first_issue_ns {
            None => {
                self.first_issue_ns = Some(first);
                (first, 1)
            }
            Some(_) => (self.last_issue_ns, 0),
        };
        // Below 2^63 (every trace file's times) `t - p` wraps past 2^63 exactly when
        // t < p: an OR of differences and of the times themselves vectorises with
        // native operations (a 64-bit unsigned compare has none before SSE4.2).
        let (diffs, all) = issue
            .iter()
            .zip(&issue[1..])
            .fold((0u64, first), |(d, o), (&p, &t)| {
                (d | t.wrapping_sub(p), o | t)
            });
        let disorder = if all >> 63 == 0 {
            u64::from(first < prev) | diffs >> 63
        } else {
            issue
                .iter()
                .zip(&issue[1..])
                .fold(u64::from(first < prev), |a, (&p, &t)| a | u64::from(t < p))
        };
        let eff: &'a [u64] = if disorder == 0 {
            issue
        } else {
            scratch.clear();
            let mut last = prev;
            let mut violations = 0;
            for &t in issue {
                violations += u64::from(t < last);
                last = last.max(t);
                scratch.push(last);
            }
            self.order_violations += violations;
            scratch
        };
        self.inter_arrival.add_gaps(prev, &eff[gaps_from..]);
        self.last_issue_ns = *eff.last().expect("not empty");
        eff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Clamped times and violations one record at a time, across batches.
    #[test]
    fn clamps_like_the_definition_below_and_above_2_pow_63() {
        let mut rng = crate::test_rng::XorShift(0xA771_7A15);
        // `far`: about half the times 2^63 + 7 later, so times in one batch are 2^63
        // and more apart (differences no longer tell the order).
        for (base, far) in [
            (0u64, false),
            (1 << 40, false),
            ((1 << 63) - 50, false),
            (u64::MAX - 400, false),
            (0, true),
        ] {
            for _ in 0..200 {
                let mut arrivals = Arrivals::new();
                let (mut last, mut violations) = (None::<u64>, 0u64);
                for _ in 0..1 + rng.below(3) {
                    // Mostly rising, sometimes a step back, within 0..=100 of base.
                    let batch: Vec<u64> = (0..1 + rng.below(8))
                        .map(|_| {
                            let b = if far && rng.below(2) == 0 {
                                (1 << 63) + 7
                            } else {
                                base
                            };
                            b.saturating_add(rng.below(101))
                        })
                        .collect();
                    let want: Vec<u64> = batch
                        .iter()
                        .map(|&t| {
                            let eff = last.map_or(t, |l| l.max(t));
                            violations += u64::from(last.is_some_and(|l| t < l));
                            last = Some(eff);
                            eff
                        })
                        .collect();
                    let mut scratch = Vec::new();
                    let got = arrivals.push(&batch, &mut scratch).to_vec();
                    assert_eq!(got, want, "base {base} batch {batch:?}");
                    assert_eq!(arrivals.order_violations, violations, "base {base}");
                }
            }
        }
    }
}
