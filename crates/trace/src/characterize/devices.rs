//! The figures of each device on its own: I/Os, busy and idle time, average QD and the
//! share of I/Os issued at QD1, with only that device's I/Os outstanding.
//!
//! A multi-device trace's busy time, average QD and QD1 share over all devices say
//! how often *some* device was busy, not how busy each was (issue 34): here each is
//! measured per device, in O(1) per I/O. Issues come in order (the effective, clamped
//! times), so a device's busy time grows by the part of [issue, completion) past the
//! latest completion of that device so far (E); an I/O is issued at QD1 when E is at
//! or before its issue (intervals are half-open, as in `qd.rs`); the average QD is the
//! sum of service times over the busy time. On a one-device trace these are the
//! trace's own figures (`tests.rs` checks they agree).

use super::sequential::Devices;
use crate::model::Op;

/// One device's running figures.
#[derive(Clone, Debug, Default)]
pub(super) struct Dev {
    pub(super) ios: u64,
    pub(super) reads: u64,
    pub(super) writes: u64,
    pub(super) first_issue_ns: Option<u64>,
    /// Latest issue or completion.
    pub(super) last_event_ns: u64,
    pub(super) with_completion: u64,
    pub(super) busy_ns: u64,
    /// Latest completion so far (E).
    end_ns: u64,
    pub(super) service_sum_ns: u128,
    pub(super) at_qd1: u64,
}

#[derive(Clone, Default)]
pub(super) struct PerDevice {
    /// By device slot (0: rows without a device).
    pub(super) devs: Vec<Dev>,
}

/// A chunk's rows as the per-device figures need them.
pub(super) struct Rows<'a> {
    /// Effective (clamped) issue times.
    pub(super) issue: &'a [u64],
    pub(super) recorded_issue: &'a [u64],
    /// Completion times and which are known (None: none known).
    pub(super) complete: Option<(&'a [u64], Option<&'a [bool]>)>,
    pub(super) ops: &'a [Op],
    pub(super) devices: Devices<'a>,
}

impl PerDevice {
    #[inline]
    fn dev(&mut self, slot: u32) -> &mut Dev {
        let i = slot as usize;
        if i >= self.devs.len() {
            self.devs.resize(i + 1, Dev::default());
        }
        &mut self.devs[i]
    }

    #[inline(never)]
    pub(super) fn push(&mut self, r: Rows) {
        let n = r.issue.len();
        for i in 0..n {
            let slot = match r.devices {
                Devices::Same(d) => d,
                Devices::PerRow(d) => d[i],
            };
            let s = r.issue[i];
            let d = self.dev(slot);
            d.ios += 1;
            d.reads += u64::from(r.ops[i] == Op::Read);
            d.writes += u64::from(r.ops[i] == Op::Write);
            d.first_issue_ns.get_or_insert(s);
            d.last_event_ns = d.last_event_ns.max(s);
            let Some((complete, valid)) = r.complete else {
                continue;
            };
            if valid.is_some_and(|v| !v[i]) {
                continue;
            }
            // The service time as recorded, from the effective issue.
            let c = s.saturating_add(complete[i].saturating_sub(r.recorded_issue[i]));
            d.with_completion += 1;
            d.service_sum_ns += u128::from(c - s);
            d.at_qd1 += u64::from(d.end_ns <= s);
            d.busy_ns += c.saturating_sub(s.max(d.end_ns));
            d.end_ns = d.end_ns.max(c);
            d.last_event_ns = d.last_event_ns.max(c);
        }
    }
}
