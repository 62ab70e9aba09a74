//! The safety guard: losing a user's data is the worst bug this tool can have.
//!
//! Before the first write (or TRIM) to a block device, on every start and every resume,
//! [`guard_open`] opens the device once, for writing with `O_EXCL` (the kernel refuses
//! while it is mounted or held: a refusal, exit 2), and checks everything through that
//! descriptor: its device number (`fstat`), identity, mounts, holders and partitions by
//! that number, the signature scan (`pread`), and `blkid -p` on `/proc/PID/fd/N`. No
//! check reads the device by its name again, so a name pointed elsewhere meanwhile
//! cannot make the guard pass one device and the engine write another: the descriptor
//! checked is the one written through, held in a [`GuardedDevice`] that only the guard
//! makes. It refuses when the device
//! - is mounted, or is active swap (even with `--destroy-data`: unmount it first),
//! - has holders (device mapper, md, LVM) (even with `--destroy-data`),
//! - lies under or over a loop device in use ([`usage::loop_users`]: a mounted
//!   filesystem on a loop device stacked on it, another loop device over the same
//!   image) (even with `--destroy-data`),
//! - has partitions,
//! - carries a signature at either end: a filesystem, swap, LVM, LUKS, md (superblocks
//!   0.90 and 1.0 at the end too), ZFS, MBR or GPT (the backup header at the last LBA
//!   too), read here ([`scan`]); and `blkid -p`, called by absolute path (never found
//!   through `PATH`), as a second opinion,
//! - holds any data in its first or last MiB when no second opinion is available
//!   (blkid missing or failing): storbench cannot tell that data is not a filesystem,
//!
//! unless `--destroy-data=/dev/EXACT` names that same device (the same device number
//! as the descriptor's). A run records the device's identity
//! ([`identity::DeviceIdentity`]: serial, WWN, model, capacity, block size, a loop
//! device's backing file with its birth time) when it starts; a resume must find the
//! same device, and no strong signature it did not carry then, or it is refused with
//! what changed: consent belongs to the device, not to its name. Reads need no flag.
//! `docs/safety.md` says what the guard checks and what it cannot see.

pub mod identity;
pub mod scan;
pub mod usage;

use crate::target::TargetError;
use identity::DeviceIdentity;
use rustix::fs::{Mode, OFlags};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
pub use usage::sysfs_dir;
use usage::DevNum;

/// Whether writes to a target may go ahead.
#[derive(Debug)]
pub enum WriteGate {
    /// Regular files (their own guard runs at open) and devices the guard passed.
    Allowed,
    /// Opened read-only: a write is a bug of the caller (it said it would not write).
    ReadOnly { name: String },
}

impl WriteGate {
    pub fn check_before_write(&mut self) -> Result<(), TargetError> {
        match self {
            WriteGate::Allowed => Ok(()),
            WriteGate::ReadOnly { name } => Err(TargetError::Invalid(format!(
                "{name} was opened read-only, but the workload writes or trims"
            ))),
        }
    }
}

/// What a finding is about: decides whether consent, or a resume on the same device,
/// lets the write go ahead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FindingKind {
    /// Mounted, swap, holders: refused even with `--destroy-data`.
    InUse,
    /// Partitions (key `partitions: NAMES`).
    Partitions,
    /// A signature: `strong` ones are compared on resume (see [`scan`]).
    Signature { strong: bool },
    /// Data in the first or last MiB with no second opinion to say what it is.
    UnknownData,
}

/// Why a device is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Refused even with `--destroy-data` (mounted, swap, holders).
    pub hard: bool,
    pub reason: String,
    pub kind: FindingKind,
}

impl Finding {
    /// The key a run records at its start and compares on resume, for findings that
    /// random data storbench wrote cannot produce.
    fn key(&self) -> Option<&str> {
        match self.kind {
            FindingKind::Partitions | FindingKind::Signature { strong: true } => Some(&self.reason),
            _ => None,
        }
    }
}

fn io(context: String, e: impl Into<std::io::Error>) -> TargetError {
    TargetError::Io {
        context,
        source: e.into(),
    }
}

/// The device number of the open block device `fd` (an error naming `name` when it is
/// something else).
fn dev_of(fd: BorrowedFd<'_>, name: &Path) -> Result<DevNum, TargetError> {
    let st = rustix::fs::fstat(fd).map_err(|e| io(format!("stat {}", name.display()), e))?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::BlockDevice {
        return Err(TargetError::Invalid(format!(
            "{} is not a block device",
            name.display()
        )));
    }
    Ok((rustix::fs::major(st.st_rdev), rustix::fs::minor(st.st_rdev)))
}

/// Signatures found at both ends of `path`, in words (see [`scan::scan`]).
pub fn scan_signatures(path: &Path) -> Result<Vec<String>, TargetError> {
    Ok(scan::scan(path)?
        .signatures
        .into_iter()
        .map(|s| s.description)
        .collect())
}

/// Where `blkid` may live; it is never looked up through `PATH` (a user's PATH, or a
/// minimal container's, may not hold /usr/sbin).
pub const BLKID_PATHS: &[&str] = &[
    "/usr/sbin/blkid",
    "/sbin/blkid",
    "/usr/bin/blkid",
    "/bin/blkid",
];

/// The second opinion on what a device carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SecondOpinion {
    /// `blkid` at this absolute path.
    Blkid(PathBuf),
    /// None available, and why: the guard then treats any data at either end of a
    /// device as a sign it is in use.
    Unavailable(String),
}

impl SecondOpinion {
    /// `blkid` from [`BLKID_PATHS`], the first that is an executable file.
    pub fn find() -> SecondOpinion {
        BLKID_PATHS
            .iter()
            .map(Path::new)
            .find(|p| p.is_file() && rustix::fs::access(*p, rustix::fs::Access::EXEC_OK).is_ok())
            .map_or_else(
                || {
                    SecondOpinion::Unavailable(format!(
                        "blkid is not installed (looked for {})",
                        BLKID_PATHS.join(", ")
                    ))
                },
                |p| SecondOpinion::Blkid(p.to_path_buf()),
            )
    }
}

/// What `blkid -p` said: the signatures it found (`TYPE=ext4 UUID=...`), or why it
/// could not say.
fn blkid_probe(blkid: &Path, device: &Path) -> Result<Vec<String>, String> {
    let out = std::process::Command::new(blkid)
        .arg("-p")
        .arg("-o")
        .arg("export")
        .arg(device)
        .output()
        .map_err(|e| format!("{} could not run: {e}", blkid.display()))?;
    match out.status.code() {
        // Nothing found.
        Some(2) => Ok(Vec::new()),
        // Ambivalent: more than one signature.
        Some(8) => Ok(vec![
            "carries more than one signature, says blkid -p (ambivalent result; `wipefs` lists them)".into(),
        ]),
        Some(0) => {
            let s = String::from_utf8_lossy(&out.stdout);
            let kv: Vec<&str> = s
                .lines()
                .filter(|l| {
                    ["TYPE=", "PTTYPE=", "UUID=", "PTUUID=", "VERSION="].iter().any(|k| l.starts_with(k))
                })
                .collect();
            if kv.is_empty() {
                return Ok(Vec::new());
            }
            Ok(vec![format!("carries what blkid -p reports: {}", kv.join(", "))])
        }
        _ => Err(format!(
            "{} -p failed ({}): {}",
            blkid.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

/// Everything that makes writing to `device` unsafe, with `blkid` where installed
/// (opened read-only by its name: for tools and tests; the guard inspects the
/// descriptor it opened, [`inspect_fd`]).
pub fn inspect(device: &Path) -> Result<Vec<Finding>, TargetError> {
    inspect_with(device, &SecondOpinion::find())
}

/// [`inspect`] with the second opinion given (tests use `Unavailable`).
pub fn inspect_with(device: &Path, opinion: &SecondOpinion) -> Result<Vec<Finding>, TargetError> {
    let fd = rustix::fs::open(
        device,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .map_err(|e| io(format!("open {}", device.display()), e))?;
    inspect_fd(fd.as_fd(), device, opinion)
}

fn hard(reason: String) -> Finding {
    Finding {
        hard: true,
        reason,
        kind: FindingKind::InUse,
    }
}

/// Everything that makes writing to the open block device `fd` unsafe (`name` in
/// messages): who uses it, found by its device number (mounts, swap, holders, loop
/// devices over or under it), its partitions, the signatures read through `fd`, and
/// `blkid -p` on `/proc/PID/fd/N` (the same open device, never its name).
pub fn inspect_fd(
    fd: BorrowedFd<'_>,
    name: &Path,
    opinion: &SecondOpinion,
) -> Result<Vec<Finding>, TargetError> {
    let dev = dev_of(fd, name)?;
    let mut f: Vec<Finding> = usage::in_use(dev).into_iter().map(hard).collect();
    f.extend(
        usage::loop_users(usage::Object::Device(dev))
            .into_iter()
            .map(hard),
    );
    if let Some(sys) = sysfs_dir(dev.0, dev.1) {
        let parts = usage::partitions(&sys);
        if !parts.is_empty() {
            let names: Vec<&str> = parts.iter().map(|p| p.0.as_str()).collect();
            f.push(Finding {
                hard: false,
                reason: format!("has partitions ({})", names.join(", ")),
                kind: FindingKind::Partitions,
            });
        }
    }
    let scanned = scan::scan_fd(fd, name)?;
    for s in scanned.signatures {
        f.push(Finding {
            hard: false,
            reason: s.description,
            kind: FindingKind::Signature { strong: s.strong },
        });
    }
    let unavailable = match opinion {
        SecondOpinion::Blkid(b) => {
            let this_fd = PathBuf::from(format!(
                "/proc/{}/fd/{}",
                std::process::id(),
                fd.as_raw_fd()
            ));
            match blkid_probe(b, &this_fd) {
                Ok(found) => {
                    for reason in found {
                        f.push(Finding {
                            hard: false,
                            reason,
                            kind: FindingKind::Signature { strong: true },
                        });
                    }
                    None
                }
                Err(why) => Some(why),
            }
        }
        SecondOpinion::Unavailable(why) => Some(why.clone()),
    };
    if let Some(why) = unavailable {
        let known = f
            .iter()
            .any(|x| matches!(x.kind, FindingKind::Signature { .. }));
        if scanned.has_data && !known {
            f.push(Finding {
                hard: false,
                reason: format!(
                    "holds data in its first or last MiB, and no second opinion says what it is ({why}): it may be a filesystem storbench does not know"
                ),
                kind: FindingKind::UnknownData,
            });
        }
    }
    Ok(f)
}

/// Does `consent` (a `--destroy-data` path) name the open block device `fd`: is it,
/// now, the block device with the descriptor's device number?
pub fn names_device(consent: &Path, fd: BorrowedFd<'_>) -> bool {
    let st = rustix::fs::fstat(fd);
    st.is_ok_and(|st| {
        usage::block_dev_at(consent)
            == Some((rustix::fs::major(st.st_rdev), rustix::fs::minor(st.st_rdev)))
    })
}

/// The guard: Ok when writing to `device` is allowed (the device is opened, checked and
/// closed again).
pub fn check_block_device_write(
    device: &Path,
    destroy_data: Option<&Path>,
) -> Result<(), TargetError> {
    guard_open(device, destroy_data, None).map(drop)
}

fn refused(device: &Path, reasons: &[String], hint: String) -> TargetError {
    TargetError::Refused {
        message: format!(
            "refusing to write to {}: it {}",
            device.display(),
            reasons.join("; it ")
        ),
        hint,
    }
}

const IN_USE_HINT: &str = "unmount it, stop using it (swapoff, dmsetup/lvchange/mdadm, \
                           losetup -d for a loop device over it) and try again; \
                           storbench never writes to a device in use";

/// A block device open for writing (`O_EXCL`) that the guard passed, checked through
/// this very descriptor. Only the guard makes one ([`guard_open`]), and a block device
/// target for writing is built only from one, so the device written is the device
/// checked; the suite's purge uses the same descriptor. Dropping it closes the device.
#[derive(Debug)]
pub struct GuardedDevice {
    fd: OwnedFd,
    path: PathBuf,
    identity: DeviceIdentity,
}

impl GuardedDevice {
    /// The name it was opened by.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its identity, read through the descriptor, with the strong signatures seen.
    pub fn identity(&self) -> &DeviceIdentity {
        &self.identity
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// The descriptor and identity, for the engine's target (and nothing else).
    pub(crate) fn into_parts(self) -> (OwnedFd, DeviceIdentity) {
        (self.fd, self.identity)
    }
}

/// Opens the block device `device` names, once: `O_PATH` first (nothing but a block
/// device is ever opened for writing), then that very inode through
/// `/proc/self/fd/N`, read-write with `O_EXCL` and `O_DIRECT`. `EBUSY` (mounted, held,
/// or open exclusively elsewhere) is a refusal saying what uses it.
fn open_exclusive(device: &Path) -> Result<OwnedFd, TargetError> {
    let path_fd = rustix::fs::open(device, OFlags::PATH | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| io(format!("open {}", device.display()), e))?;
    let dev = dev_of(path_fd.as_fd(), device)?;
    let again = format!("/proc/self/fd/{}", path_fd.as_raw_fd());
    let flags = OFlags::RDWR | OFlags::EXCL | OFlags::DIRECT | OFlags::CLOEXEC;
    let mut tries = 0;
    loop {
        match rustix::fs::open(&again, flags, Mode::empty()) {
            Ok(fd) => return Ok(fd),
            Err(rustix::io::Errno::BUSY) => {}
            Err(e) => {
                return Err(io(
                    format!(
                        "open {} for writing (O_EXCL, through {again}: is /proc mounted?)",
                        device.display()
                    ),
                    e,
                ))
            }
        }
        let mut why = usage::in_use(dev);
        why.extend(usage::loop_users(usage::Object::Device(dev)));
        why.extend(usage::open_in(dev));
        // Busy with no user to be seen: the claim of a process killed a moment ago,
        // which the kernel drops once it has torn down that process's io_uring ring
        // in the background. Wait for it, a little.
        if why.is_empty() && tries < EBUSY_TRIES {
            tries += 1;
            std::thread::sleep(EBUSY_PAUSE);
            continue;
        }
        why.push(
            "is in use: the kernel refuses to open it exclusively (EBUSY: mounted, \
                 held by device mapper, md or LVM, or opened exclusively by another program)"
                .into(),
        );
        return Err(refused(device, &why, IN_USE_HINT.into()));
    }
}

/// A device busy (EBUSY on `O_EXCL`) with no user to be seen is tried again this many
/// times, [`EBUSY_PAUSE`] apart: 2 s in all.
const EBUSY_TRIES: u32 = 40;
const EBUSY_PAUSE: std::time::Duration = std::time::Duration::from_millis(50);

/// The guard, on every start and every resume: opens `device` for writing and checks
/// it through that descriptor (see the module doc). `recorded`: the identity the run
/// recorded when it started (a resume). Returns the device open for writing, with the
/// identity to record (a start) or confirmed (a resume) and the keys of the strong
/// signatures seen.
///
/// - Always refused: in use (mounted, swap, holders, a loop device over or under it in
///   use).
/// - On a start: anything else found (partitions, signatures, unknown data) unless
///   `destroy_data` names the device.
/// - On a resume: a different device (see [`DeviceIdentity::differences`]) with or
///   without consent; partitions or strong signatures it did not carry at the start,
///   with or without consent. What it carried then needs the consent it needed then;
///   weak signatures and unknown data are what storbench's own writes may look like.
pub fn guard_open(
    device: &Path,
    destroy_data: Option<&Path>,
    recorded: Option<&DeviceIdentity>,
) -> Result<GuardedDevice, TargetError> {
    guard_open_with(
        device,
        destroy_data,
        recorded,
        &SecondOpinion::find(),
        &mut || {},
    )
}

/// [`guard_open`] with the second opinion given, calling `after_open` once the device
/// is open and before anything is checked (tests point the name elsewhere there: the
/// checks must still see the device opened).
pub fn guard_open_with(
    device: &Path,
    destroy_data: Option<&Path>,
    recorded: Option<&DeviceIdentity>,
    opinion: &SecondOpinion,
    after_open: &mut dyn FnMut(),
) -> Result<GuardedDevice, TargetError> {
    let fd = open_exclusive(device)?;
    after_open();
    let confirmed = match destroy_data {
        None => false,
        Some(d) => {
            if !names_device(d, fd.as_fd()) {
                return Err(TargetError::Refused {
                    message: format!(
                        "--destroy-data={} does not name the target device {}",
                        d.display(),
                        device.display()
                    ),
                    hint: format!(
                        "to allow writing, pass --destroy-data={} (the exact device)",
                        device.display()
                    ),
                });
            }
            true
        }
    };
    let mut now = DeviceIdentity::of_fd(fd.as_fd(), device)?;
    if let Some(r) = recorded {
        let diffs = r.differences(&now);
        if !diffs.is_empty() {
            return Err(refused(
                device,
                &[format!(
                    "is not the device this run started on{}: {}",
                    if confirmed {
                        " (the one you agreed to destroy)"
                    } else {
                        ""
                    },
                    diffs.join("; ")
                )],
                "a run continues only on the device it started on; to benchmark this one, start a new run (without --resume) naming it".into(),
            ));
        }
    }
    let findings = inspect_fd(fd.as_fd(), device, opinion)?;
    now.signatures = findings
        .iter()
        .filter_map(|f| f.key().map(str::to_owned))
        .collect();
    let blocking: Vec<String> = findings
        .iter()
        .filter_map(|f| {
            let block = f.hard
                || match recorded {
                    None => !confirmed,
                    // A resume: partitions and strong signatures must have been there
                    // when the run started (with the consent they needed then); weak
                    // signatures and unknown data may be storbench's own writes.
                    Some(r) => f
                        .key()
                        .is_some_and(|key| !r.signatures.iter().any(|k| k == key)),
                };
            block.then(|| match recorded {
                Some(_) if !f.hard => format!("{} (not there when the run started)", f.reason),
                _ => f.reason.clone(),
            })
        })
        .collect();
    if blocking.is_empty() {
        return Ok(GuardedDevice {
            fd,
            path: device.to_path_buf(),
            identity: now,
        });
    }
    let any_hard = findings.iter().any(|f| f.hard);
    let hint = if any_hard {
        IN_USE_HINT.to_string()
    } else if recorded.is_some() {
        "something wrote to the device since the run started; storbench will not overwrite it on a resume: start a new run naming the device in --destroy-data if you mean to destroy it".into()
    } else {
        format!(
            "if you really want to destroy everything on it, pass --destroy-data={}",
            device.display()
        )
    };
    Err(refused(device, &blocking, hint))
}

/// The keys of the strong signatures a file or device carries (own scan and blkid):
/// a run that restores a disk image records the image's, since after the restore the
/// device carries them by storbench's own doing.
pub fn signature_keys(path: &Path) -> Result<Vec<String>, TargetError> {
    let mut keys: Vec<String> = scan::scan(path)?
        .signatures
        .into_iter()
        .filter(|s| s.strong)
        .map(|s| s.description)
        .collect();
    if let SecondOpinion::Blkid(b) = SecondOpinion::find() {
        keys.extend(blkid_probe(&b, path).unwrap_or_default());
    }
    Ok(keys)
}
