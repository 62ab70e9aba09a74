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
        let disorder = issue
            .iter()
            .zip(&issue[1..])
            .fold(u64::from(first < prev), |a, (&p, &t)| a | u64::from(t < p));
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
