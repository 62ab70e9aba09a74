//! Target specs: `sim:...` (parsed by the sim crate), `file:PATH`, a path to a block
//! device, or a path to a regular file (existing, or created with `--size`).

use crate::backend::TrimMode;
use crate::real::{BackendChoice, RealTarget};
use crate::safety::identity::{DeviceIdentity, FileIdentity, TargetIdentity};
use crate::safety::{guard_open, GuardedDevice, WriteGate};
use crate::target::blockdev::{describe, is_block_device, open_blockdev_read};
use crate::target::file::{open_file_as, FileOpen};
use crate::target::{TargetError, TargetInfo};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

/// A parsed target spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetSpec {
    /// `sim:...` (the whole spec, prefix included).
    Sim(String),
    File(PathBuf),
    BlockDevice(PathBuf),
    /// `test:delay=20us,capacity=1g`: a virtual target completing every I/O after a
    /// fixed delay (engine overhead and memory measurements; no device touched). The
    /// delay and capacity follow `storbench_workload::units`: a bare delay is seconds.
    Test {
        delay_ns: u64,
        capacity_bytes: u64,
    },
}

impl TargetSpec {
    pub fn parse(s: &str) -> Result<TargetSpec, TargetError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(TargetError::Invalid("empty target spec".into()));
        }
        if s.starts_with("sim:") || s == "sim" {
            return Ok(TargetSpec::Sim(s.to_string()));
        }
        if let Some(rest) = s.strip_prefix("test:") {
            return parse_test(rest);
        }
        if let Some(p) = s.strip_prefix("file:") {
            return Ok(TargetSpec::File(PathBuf::from(p)));
        }
        let p = PathBuf::from(s);
        if is_block_device(&p) {
            Ok(TargetSpec::BlockDevice(p))
        } else {
            Ok(TargetSpec::File(p))
        }
    }
}

fn parse_test(rest: &str) -> Result<TargetSpec, TargetError> {
    let mut delay_ns = 20_000u64;
    let mut capacity_bytes = 1u64 << 30;
    for kv in rest.split(',').filter(|k| !k.is_empty()) {
        let (k, v) = kv.split_once('=').ok_or_else(|| {
            TargetError::Invalid(format!(
                "test target: `{kv}` is not KEY=VALUE (keys: delay, capacity)"
            ))
        })?;
        match k {
            "delay" => {
                delay_ns = storbench_workload::units::parse_duration_ns("test target: delay", v)
                    .map_err(|e| TargetError::Invalid(e.to_string()))?;
            }
            "capacity" => {
                capacity_bytes = storbench_workload::units::parse_size("test target: capacity", v)
                    .map_err(|e| TargetError::Invalid(e.to_string()))?;
            }
            _ => {
                return Err(TargetError::Invalid(format!(
                    "test target: unknown key `{k}` (keys: delay, capacity)"
                )))
            }
        }
    }
    if capacity_bytes < 4096 {
        return Err(TargetError::Invalid(
            "test target: capacity below 4k".into(),
        ));
    }
    Ok(TargetSpec::Test {
        delay_ns,
        capacity_bytes,
    })
}

/// How to open a real target.
#[derive(Clone, Debug)]
pub struct OpenOptions {
    /// The run writes or trims (block devices are checked by the safety guard at open).
    pub write: bool,
    /// Files: create or extend to this size; the capacity used.
    pub size_bytes: Option<u64>,
    /// Files: allow writing to an existing file storbench did not create.
    pub overwrite: bool,
    /// Block devices: `--destroy-data=/dev/EXACT`.
    pub destroy_data: Option<PathBuf>,
    /// Slots (I/Os in flight at most).
    pub max_in_flight: usize,
    /// Size of each slot's buffer (the largest I/O).
    pub buffer_bytes: usize,
    pub backend: BackendChoice,
    /// Files: O_DIRECT (on by default).
    pub direct: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            write: false,
            size_bytes: None,
            overwrite: false,
            destroy_data: None,
            max_in_flight: 128,
            buffer_bytes: 1 << 20,
            backend: BackendChoice::Auto,
            direct: true,
        }
    }
}

/// Open a file or block device target.
pub fn open_real(spec: &TargetSpec, o: &OpenOptions) -> Result<RealTarget, TargetError> {
    open_real_as(spec, o, None)
}

/// Open a file or block device target for a run that continues: `recorded` is the
/// identity the run recorded when it started ([`RealTarget::identity`]), and the
/// target must be that one (see `safety`). `None`: a start.
pub fn open_real_as(
    spec: &TargetSpec,
    o: &OpenOptions,
    recorded: Option<&TargetIdentity>,
) -> Result<RealTarget, TargetError> {
    match spec {
        TargetSpec::Sim(s) => Err(TargetError::Invalid(format!(
            "{s} is a simulated target: open it with storbench_sim::open_spec"
        ))),
        TargetSpec::Test { .. } => Err(TargetError::Invalid(
            "a test target is virtual: open it with TargetSpec::open_test".into(),
        )),
        TargetSpec::File(p) => {
            let rec = match recorded {
                None => None,
                Some(TargetIdentity::File(f)) => Some(f),
                Some(TargetIdentity::BlockDevice(_)) => {
                    return Err(kind_changed(p, "a block device"))
                }
            };
            open_file_target(p, o, rec)
        }
        TargetSpec::BlockDevice(p) => {
            let rec = match recorded {
                None => None,
                Some(TargetIdentity::BlockDevice(d)) => Some(d),
                Some(TargetIdentity::File(_)) => return Err(kind_changed(p, "a regular file")),
            };
            open_device_target(p, o, rec)
        }
    }
}

/// The refusal when a continuing run names a target of another kind than it started on.
fn kind_changed(p: &Path, was: &str) -> TargetError {
    TargetError::Refused {
        message: format!(
            "refusing to continue: {} is not the target this run started on (that was {was})",
            p.display()
        ),
        hint: "a run continues only on the target it started on; start a new run".into(),
    }
}

/// The write gate: open, or read-only naming the target in its refusal.
fn write_gate(write: bool, name: impl FnOnce() -> String) -> WriteGate {
    if write {
        WriteGate::Allowed
    } else {
        WriteGate::ReadOnly { name: name() }
    }
}

/// A regular file target (created or sized as `o` asks); `rec`: the identity a
/// continuing run recorded.
fn open_file_target(
    p: &Path,
    o: &OpenOptions,
    rec: Option<&FileIdentity>,
) -> Result<RealTarget, TargetError> {
    let (fd, info, identity) = open_file_as(
        p,
        &FileOpen {
            write: o.write,
            size_bytes: o.size_bytes,
            overwrite: o.overwrite,
            direct: o.direct,
        },
        rec,
    )?;
    let name = info.name.clone();
    real_target(
        fd,
        info,
        o,
        TrimMode::PunchHole,
        name,
        TargetIdentity::File(identity),
    )
}

/// A block device target: for writing, the device the guard opened and passed
/// ([`GuardedDevice`]: checked through the descriptor written through); `rec`: the
/// identity a continuing run recorded.
fn open_device_target(
    p: &Path,
    o: &OpenOptions,
    rec: Option<&DeviceIdentity>,
) -> Result<RealTarget, TargetError> {
    if o.size_bytes.is_some() {
        return Err(TargetError::Invalid(format!(
            "--size applies to files; {} is a block device (use --span to restrict the region)",
            p.display()
        )));
    }
    if o.write {
        return guarded_target(guard_open(p, o.destroy_data.as_deref(), rec)?, o);
    }
    let fd = open_blockdev_read(p)?;
    let info = describe(fd.as_fd(), p)?;
    let identity = TargetIdentity::BlockDevice(DeviceIdentity::of_fd(fd.as_fd(), p)?);
    real_target(
        fd,
        info,
        o,
        TrimMode::BlkDiscard,
        p.display().to_string(),
        identity,
    )
}

/// The engine's target on a block device the guard passed: the only way a block
/// device becomes a target that writes.
pub fn guarded_target(dev: GuardedDevice, o: &OpenOptions) -> Result<RealTarget, TargetError> {
    let info = describe(dev.fd(), dev.path())?;
    let name = dev.path().display().to_string();
    let (fd, identity) = dev.into_parts();
    let identity = TargetIdentity::BlockDevice(identity);
    real_target(fd, info, o, TrimMode::BlkDiscard, name, identity)
}

/// The opened file or device as a target, writable only if `o` asked (`name` in the
/// refusal otherwise), carrying the identity it was opened as.
fn real_target(
    fd: OwnedFd,
    info: TargetInfo,
    o: &OpenOptions,
    trim: TrimMode,
    name: String,
    identity: TargetIdentity,
) -> Result<RealTarget, TargetError> {
    let gate = write_gate(o.write, || name);
    let mut t = RealTarget::new(
        fd,
        info,
        o.max_in_flight,
        o.buffer_bytes,
        o.backend,
        trim,
        gate,
    )?;
    t.set_identity(identity);
    Ok(t)
}

impl TargetSpec {
    /// Open a `test:` target (virtual time, fixed delay, no device).
    pub fn open_test(&self, max_in_flight: usize) -> Option<crate::testing::DelayTarget> {
        match *self {
            TargetSpec::Test {
                delay_ns,
                capacity_bytes,
            } => Some(
                crate::testing::DelayTarget::new(capacity_bytes, delay_ns, max_in_flight).lean(),
            ),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_specs() {
        assert_eq!(
            TargetSpec::parse("sim:mlc-256g").unwrap(),
            TargetSpec::Sim("sim:mlc-256g".into())
        );
        assert_eq!(
            TargetSpec::parse("file:/tmp/x").unwrap(),
            TargetSpec::File("/tmp/x".into())
        );
        assert_eq!(
            TargetSpec::parse("/tmp/nonexistent-x").unwrap(),
            TargetSpec::File("/tmp/nonexistent-x".into())
        );
        assert!(TargetSpec::parse("").is_err());
        assert_eq!(
            TargetSpec::parse("test:delay=20us,capacity=1g").unwrap(),
            TargetSpec::Test {
                delay_ns: 20_000,
                capacity_bytes: 1 << 30
            }
        );
        assert!(TargetSpec::parse("test:speed=3").is_err());
        assert!(TargetSpec::parse("test:delay=soon").is_err());
    }

    /// A bare number is seconds in every duration, `test:delay=` included (it was
    /// nanoseconds here alone).
    #[test]
    fn test_delay_bare_number_is_seconds() {
        let delay = |s: &str| match TargetSpec::parse(s).unwrap() {
            TargetSpec::Test { delay_ns, .. } => delay_ns,
            other => panic!("{other:?}"),
        };
        assert_eq!(delay("test:delay=2"), 2_000_000_000);
        assert_eq!(delay("test:delay=0.5ms"), 500_000);
        assert_eq!(delay("test:delay=250ns"), 250);
        assert_eq!(delay("test:capacity=1.5g"), 20_000);
        if std::path::Path::new("/dev/loop0").exists() {
            assert_eq!(
                TargetSpec::parse("/dev/loop0").unwrap(),
                TargetSpec::BlockDevice("/dev/loop0".into())
            );
        }
    }
}
