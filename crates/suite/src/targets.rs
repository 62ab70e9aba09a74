//! Opening a procedure's target from its spec: `sim:PRESET[,k=v...]` is the simulated
//! SSD; anything else is a file or block device opened by the engine (with its safety
//! guard). The suite adds what procedures need beyond [`Target`]: purge, drive health,
//! and whether the target keeps its state across a process restart.

use crate::health::{self, HealthSnapshot};
use crate::purge::{self, PurgeMethod, PurgeReport};
use std::path::Path;
use storbench_engine::{RealTarget, Target, TargetIdentity, TargetInfo};
pub use storbench_results::RealOpen;
use storbench_sim::SimSsd;

#[derive(Debug, thiserror::Error)]
pub enum TargetOpenError {
    #[error("simulated drive `{spec}`: {message}")]
    Sim { spec: String, message: String },
    #[error("target `{spec}`: {source}")]
    Real {
        spec: String,
        #[source]
        source: storbench_engine::TargetError,
    },
}

/// A procedure's target.
pub enum SuiteTarget {
    Sim(Box<SimSsd>),
    /// A file or block device, opened after the safety guard passed it; its purge
    /// works on this open descriptor, never on the name.
    Device(Box<RealTarget>),
    /// A virtual `test:` target.
    Real(Box<dyn Target>),
}

/// The spec names a simulated drive.
pub fn is_sim_spec(spec: &str) -> bool {
    spec.starts_with("sim:") || spec == "sim"
}

impl SuiteTarget {
    /// Open `spec`. Real targets go through the engine's spec parser and safety guard;
    /// `recorded` is the identity the run recorded when it started (a resume), and the
    /// target must be that one.
    pub fn open(
        spec: &str,
        real: &RealOpen,
        recorded: Option<&TargetIdentity>,
    ) -> Result<SuiteTarget, TargetOpenError> {
        SuiteTarget::open_sized(spec, real, recorded, None)
    }

    /// [`SuiteTarget::open`] with the slot buffers of `buffers` (default: 128 slots of
    /// 1 MiB) for a real target.
    pub fn open_sized(
        spec: &str,
        real: &RealOpen,
        recorded: Option<&TargetIdentity>,
        buffers: Option<storbench_engine::BufferPlan>,
    ) -> Result<SuiteTarget, TargetOpenError> {
        if is_sim_spec(spec) {
            let ssd = storbench_sim::open_spec(spec).map_err(|e| TargetOpenError::Sim {
                spec: spec.to_owned(),
                message: e.to_string(),
            })?;
            return Ok(SuiteTarget::Sim(Box::new(ssd)));
        }
        open_real(spec, real, recorded, buffers)
    }

    pub fn target(&mut self) -> &mut dyn Target {
        match self {
            SuiteTarget::Sim(s) => s.as_mut(),
            SuiteTarget::Device(t) => t.as_mut(),
            SuiteTarget::Real(t) => t.as_mut(),
        }
    }

    pub fn info(&self) -> &TargetInfo {
        match self {
            SuiteTarget::Sim(s) => s.info(),
            SuiteTarget::Device(t) => t.info(),
            SuiteTarget::Real(t) => t.info(),
        }
    }

    /// Who a file or block device target is (recorded at the start of a run).
    pub fn identity(&self) -> Option<&TargetIdentity> {
        match self {
            SuiteTarget::Device(t) => t.identity(),
            _ => None,
        }
    }

    /// Whether the target's state survives the process (a real device does; the
    /// simulated drive lives in memory and must be rebuilt on resume).
    pub fn persistent(&self) -> bool {
        !matches!(self, SuiteTarget::Sim(_))
    }

    pub fn sim(&self) -> Option<&SimSsd> {
        match self {
            SuiteTarget::Sim(s) => Some(s),
            _ => None,
        }
    }

    /// Return the target to its fresh state (see [`crate::purge`]).
    pub fn purge(&mut self) -> Result<PurgeReport, std::io::Error> {
        match self {
            SuiteTarget::Sim(s) => {
                // A drive that has never been written is already in the purged state.
                let c = s.counters();
                if s.mapped_units() > 0 || c.host_write_ios > 0 || c.host_trim_ios > 0 {
                    s.purge()
                        .map_err(|e| std::io::Error::other(format!("simulated purge: {e}")))?;
                }
                Ok(PurgeReport {
                    method: PurgeMethod::Simulator,
                    bytes: s.info().capacity_bytes,
                    fresh: true,
                    wall_ms: 0,
                    note: None,
                })
            }
            SuiteTarget::Device(t) => {
                let name = t.info().name.clone();
                purge::purge_fd(t.fd(), Path::new(&name))
            }
            SuiteTarget::Real(t) => Err(std::io::Error::other(format!(
                "{}: a virtual test target cannot be purged",
                t.info().name
            ))),
        }
    }

    /// Drive health now.
    pub fn health(&self) -> HealthSnapshot {
        match self {
            SuiteTarget::Sim(s) => {
                let c = s.counters();
                HealthSnapshot {
                    source: "simulator counters".into(),
                    available: true,
                    note: Some("exact counters of the simulated drive".into()),
                    model: s.info().model.clone(),
                    firmware: None,
                    host_read_bytes: Some(c.host_read_bytes),
                    host_write_bytes: Some(c.host_write_bytes),
                    nand_write_bytes: Some(c.nand_write_bytes),
                    lifetime_wa: if c.host_write_bytes > 0 {
                        Some(c.wa)
                    } else {
                        None
                    },
                    temperature_c: None,
                    media_errors: Some(0),
                    used_pct: None,
                    taken_unix_ms: crate::state::unix_ms(),
                }
            }
            SuiteTarget::Device(t) => health::read_smart(Path::new(&t.info().name)),
            SuiteTarget::Real(t) => {
                HealthSnapshot::unavailable(&t.info().name, "a virtual test target has no health")
            }
        }
    }
}

/// Real targets (files, block devices) through the engine's spec parser and safety
/// guard; `recorded`: the identity a resumed run must find; `buffers`: slots sized
/// from the traces the run replays.
fn open_real(
    spec: &str,
    o: &RealOpen,
    recorded: Option<&TargetIdentity>,
    buffers: Option<storbench_engine::BufferPlan>,
) -> Result<SuiteTarget, TargetOpenError> {
    use storbench_engine::spec::{open_real_as, OpenOptions, TargetSpec};
    use storbench_engine::BackendChoice;
    let err = |e: storbench_engine::TargetError| TargetOpenError::Real {
        spec: spec.to_owned(),
        source: e,
    };
    let parsed = TargetSpec::parse(spec).map_err(err)?;
    let defaults = OpenOptions::default();
    let max_in_flight = o.max_in_flight.unwrap_or(defaults.max_in_flight);
    if let Some(t) = parsed.open_test(o.max_in_flight.unwrap_or(32)) {
        return Ok(SuiteTarget::Real(Box::new(t)));
    }
    let backend = match o.backend.as_deref() {
        None => BackendChoice::Auto,
        Some(b) => BackendChoice::parse(b).ok_or_else(|| {
            err(storbench_engine::TargetError::Refused {
                message: format!("unknown I/O backend `{b}`"),
                hint: "use auto, io_uring, io_uring-async or threads".into(),
            })
        })?,
    };
    let mut opts = OpenOptions {
        write: o.write,
        size_bytes: o.size_bytes,
        overwrite: o.overwrite,
        destroy_data: o.destroy_data.clone(),
        max_in_flight,
        buffer_bytes: o.buffer_bytes.unwrap_or(defaults.buffer_bytes),
        backend,
        direct: !o.buffered,
    };
    if let Some(b) = buffers {
        opts.max_in_flight = b.slots;
        opts.buffer_bytes = b.slot_bytes;
    }
    let t = open_real_as(&parsed, &opts, recorded).map_err(err)?;
    Ok(SuiteTarget::Device(Box::new(t)))
}
