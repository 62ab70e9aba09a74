//! Preconditioning: known drive states built without timing every I/O.

use super::{Precondition, SimSsd, State};
use crate::config::{SimError, UNIT_BYTES};
use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

impl SimSsd {
    /// Put the drive into a known state fast, without simulating its I/Os: the mapping
    /// table, blocks, victim structures, erase counts and counters are built directly
    /// ([`Precondition::Direct`]): a sequential fill exactly as the writes would leave
    /// it, a steady state of uniform random writes drawn from a scaled-down model
    /// drive that runs the same process (see `Ftl::direct_steady_state`). Drives the
    /// direct way cannot build (an SLC cache), and steady states of drives too small
    /// to gain from the model (under 4096 blocks), fall back to [`SimSsd::replay_state`]
    /// ([`Precondition::Replay`]). The clock does not move and no idle time passes (no
    /// background GC or SLC folding), as with back-to-back honest I/O.
    pub fn fast_state(&mut self, state: State) -> Result<Precondition, SimError> {
        let (span, writes, seed) = self.begin_state(state, "fast_state")?;
        let direct = match state {
            State::Fresh => true,
            State::SequentialFill => self.ftl.direct_fill(span),
            State::SteadyStateRandom { .. } => self.ftl.direct_steady_state(span, writes, seed),
        };
        if !direct {
            self.replay_writes(span, writes, seed);
        }
        self.end_state(state, span, writes);
        Ok(if direct {
            Precondition::Direct
        } else {
            Precondition::Replay
        })
    }

    /// The same states the per-write way: every write of the fill and of the random
    /// phase goes through the FTL (mapping, GC, wear levelling, SLC cache), but no
    /// timing, queueing or completions are simulated and the clock does not move.
    /// Slower than [`SimSsd::fast_state`]; the reference it is checked against.
    pub fn replay_state(&mut self, state: State) -> Result<(), SimError> {
        let (span, writes, seed) = self.begin_state(state, "replay_state")?;
        self.replay_writes(span, writes, seed);
        self.end_state(state, span, writes);
        Ok(())
    }

    /// Validate, purge; (span, random writes, seed) of the state.
    pub(super) fn begin_state(
        &mut self,
        state: State,
        what: &str,
    ) -> Result<(u64, u64, u64), SimError> {
        if !self.heap.is_empty() {
            return Err(SimError::Invalid(format!(
                "{what} with {} I/Os in flight",
                self.heap.len()
            )));
        }
        let n = self.ftl.user_units();
        let r = match state {
            State::Fresh => (0, 0, 0),
            State::SequentialFill => (n, 0u64, 0u64),
            State::SteadyStateRandom {
                span_fraction,
                writes_multiple,
                seed,
            } => {
                let ok = span_fraction > 0.0
                    && span_fraction <= 1.0
                    && writes_multiple >= 0.0
                    && writes_multiple.is_finite();
                if !ok {
                    return Err(SimError::Invalid(format!(
                        "SteadyStateRandom needs 0 < span_fraction <= 1 and writes_multiple >= 0, got {span_fraction}, {writes_multiple}"
                    )));
                }
                let span = ((n as f64 * span_fraction) as u64).max(1);
                (span, (span as f64 * writes_multiple) as u64, seed)
            }
        };
        self.drop_queued_work();
        self.ftl.purge();
        Ok(r)
    }

    pub(super) fn replay_writes(&mut self, span: u64, writes: u64, seed: u64) {
        let spu = self.ftl.spu;
        // As the states' writes are: the fill in 128 KiB writes, then 4 KiB ones.
        self.ftl.set_host_io(32);
        for lba in 0..span {
            self.ftl.write_unit(lba as u32, spu);
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        self.ftl.set_host_io(1);
        for _ in 0..writes {
            let lba = rng.next_u64() % span;
            self.ftl.write_unit(lba as u32, spu);
        }
    }

    /// Host counters of the state's writes (the fill as 128 KiB writes, the random
    /// phase as 4 KiB writes); drop die work (untimed).
    pub(super) fn end_state(&mut self, state: State, span: u64, writes: u64) {
        if state != State::Fresh {
            self.ftl.c.host_write_bytes += (span + writes) * UNIT_BYTES;
            self.ftl.c.host_write_ios += span.div_ceil(32) + writes;
        }
        self.ftl.clear_pending();
    }
}
