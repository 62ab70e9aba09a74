//! The safety guard: losing a user's data is the worst bug this tool can have.
//!
//! Before the first write (or TRIM) to a block device, on every start and every resume,
//! storbench refuses when the device
//! - is mounted, or is active swap (even with `--destroy-data`: unmount it first),
//! - has holders (device mapper, md, LVM) (even with `--destroy-data`),
//! - has partitions,
//! - carries a signature at either end: a filesystem, swap, LVM, LUKS, md (superblocks
//!   0.90 and 1.0 at the end too), ZFS, MBR or GPT (the backup header at the last LBA
//!   too), read here ([`scan`]); and `blkid -p`, called by absolute path (never found
//!   through `PATH`), as a second opinion,
//! - holds any data in its first or last MiB when no second opinion is available
//!   (blkid missing or failing): storbench cannot tell that data is not a filesystem,
//!
//! unless `--destroy-data=/dev/EXACT` names that same device (same canonical path or
//! same device number). The device is opened only after that, and its identity
//! ([`identity::DeviceIdentity`]: serial, WWN, model, capacity, block size, a loop
//! device's backing file) read again through the open descriptor must be the one the
//! guard checked. A run records that identity when it starts; a resume must find the
//! same device, and no strong signature it did not carry then, or it is refused with
//! what changed: consent belongs to the device, not to its name. Reads need no flag.
//! `docs/safety.md` says what the guard checks and what it cannot see.

pub mod identity;
pub mod scan;

use crate::target::TargetError;
use identity::DeviceIdentity;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

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

fn dev_numbers(path: &Path) -> Result<(u32, u32), TargetError> {
    let md = std::fs::metadata(path).map_err(|e| TargetError::Io {
        context: format!("stat {}", path.display()),
        source: e,
    })?;
    use std::os::unix::fs::FileTypeExt;
    if !md.file_type().is_block_device() {
        return Err(TargetError::Invalid(format!(
            "{} is not a block device",
            path.display()
        )));
    }
    let rdev = md.rdev();
    Ok((libc::major(rdev), libc::minor(rdev)))
}

/// The sysfs directory of a block device (`/sys/dev/block/MAJ:MIN`, resolved).
pub fn sysfs_dir(major: u32, minor: u32) -> Option<PathBuf> {
    std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()
}

fn read_dev_file(p: &Path) -> Option<(u32, u32)> {
    let s = std::fs::read_to_string(p).ok()?;
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Partitions of a whole device: (name, major, minor).
fn partitions(sys: &Path) -> Vec<(String, u32, u32)> {
    let mut v = Vec::new();
    if let Ok(rd) = std::fs::read_dir(sys) {
        for e in rd.flatten() {
            let p = e.path();
            if p.join("partition").exists() {
                if let Some((ma, mi)) = read_dev_file(&p.join("dev")) {
                    v.push((e.file_name().to_string_lossy().into_owned(), ma, mi));
                }
            }
        }
    }
    v.sort();
    v
}

fn holders(sys: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(sys.join("holders"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Mount points of a device number, from /proc/self/mountinfo.
fn mount_points(major: u32, minor: u32) -> Vec<String> {
    let want = format!("{major}:{minor}");
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f.len() > 4 && f[2] == want).then(|| f[4].to_string())
        })
        .collect()
}

/// Is the device (by number) active swap?
fn is_swap(major: u32, minor: u32) -> bool {
    std::fs::read_to_string("/proc/swaps")
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .any(|p| dev_numbers(Path::new(p)).is_ok_and(|d| d == (major, minor)))
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

/// Everything that makes writing to `device` unsafe, with `blkid` where installed.
pub fn inspect(device: &Path) -> Result<Vec<Finding>, TargetError> {
    inspect_with(device, &SecondOpinion::find())
}

/// [`inspect`] with the second opinion given (tests use `Unavailable`).
pub fn inspect_with(device: &Path, opinion: &SecondOpinion) -> Result<Vec<Finding>, TargetError> {
    let (ma, mi) = dev_numbers(device)?;
    let mut f = Vec::new();
    let hard = |reason: String| Finding {
        hard: true,
        reason,
        kind: FindingKind::InUse,
    };
    for m in mount_points(ma, mi) {
        f.push(hard(format!("is mounted on {m}")));
    }
    if is_swap(ma, mi) {
        f.push(hard("is in use as swap".into()));
    }
    if let Some(sys) = sysfs_dir(ma, mi) {
        let h = holders(&sys);
        if !h.is_empty() {
            f.push(hard(format!(
                "has holders ({}): it is in use by device mapper, md or LVM",
                h.join(", ")
            )));
        }
        let parts = partitions(&sys);
        if !parts.is_empty() {
            let names: Vec<&str> = parts.iter().map(|p| p.0.as_str()).collect();
            f.push(Finding {
                hard: false,
                reason: format!("has partitions ({})", names.join(", ")),
                kind: FindingKind::Partitions,
            });
        }
        for (name, pma, pmi) in &parts {
            for m in mount_points(*pma, *pmi) {
                f.push(hard(format!("has partition {name} mounted on {m}")));
            }
            if is_swap(*pma, *pmi) {
                f.push(hard(format!("has partition {name} in use as swap")));
            }
            if let Some(psys) = sysfs_dir(*pma, *pmi) {
                let h = holders(&psys);
                if !h.is_empty() {
                    f.push(hard(format!(
                        "has partition {name} held by {}",
                        h.join(", ")
                    )));
                }
            }
        }
    }
    let scanned = scan::scan(device)?;
    for s in scanned.signatures {
        f.push(Finding {
            hard: false,
            reason: s.description,
            kind: FindingKind::Signature { strong: s.strong },
        });
    }
    let unavailable = match opinion {
        SecondOpinion::Blkid(b) => match blkid_probe(b, device) {
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
        },
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

/// Do `a` and `b` name the same block device (canonical path or device number)?
pub fn same_device(a: &Path, b: &Path) -> bool {
    if let (Ok(ca), Ok(cb)) = (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        if ca == cb {
            return true;
        }
    }
    matches!((dev_numbers(a), dev_numbers(b)), (Ok(x), Ok(y)) if x == y)
}

/// The guard: Ok when writing to `device` is allowed.
pub fn check_block_device_write(
    device: &Path,
    destroy_data: Option<&Path>,
) -> Result<(), TargetError> {
    guard(device, destroy_data, None).map(|_| ())
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

/// The guard, on every start and every resume. `recorded`: the identity the run
/// recorded when it started (a resume). Returns the identity to record (a start) or
/// confirmed (a resume), with the keys of the strong signatures seen.
///
/// - Always refused: in use (mounted, swap, holders).
/// - On a start: anything else found (partitions, signatures, unknown data) unless
///   `destroy_data` names the device.
/// - On a resume: a different device (see [`DeviceIdentity::differences`]) with or
///   without consent; partitions or strong signatures it did not carry at the start,
///   with or without consent. What it carried then needs the consent it needed then;
///   weak signatures and unknown data are what storbench's own writes may look like.
pub fn guard(
    device: &Path,
    destroy_data: Option<&Path>,
    recorded: Option<&DeviceIdentity>,
) -> Result<DeviceIdentity, TargetError> {
    let confirmed = match destroy_data {
        None => false,
        Some(d) => {
            if !same_device(device, d) {
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
    let mut now = DeviceIdentity::of(device)?;
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
    let findings = inspect(device)?;
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
        return Ok(now);
    }
    let any_hard = findings.iter().any(|f| f.hard);
    let hint = if any_hard {
        "unmount it, stop using it (swapoff, dmsetup/lvchange/mdadm) and try again; \
         storbench never writes to a device in use"
            .to_string()
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

/// After the device was opened for writing: the descriptor must be the device the
/// guard checked (same device number, same backing file), not one put behind the name
/// in between.
pub fn confirm_opened(
    fd: std::os::fd::BorrowedFd<'_>,
    device: &Path,
    checked: &DeviceIdentity,
) -> Result<(), TargetError> {
    let opened = DeviceIdentity::of_fd(fd, device)?;
    let mut diffs = checked.differences(&opened);
    if opened.dev != checked.dev {
        diffs.push(format!(
            "its device number changed from {} to {}",
            checked.dev, opened.dev
        ));
    }
    if opened.diskseq != checked.diskseq {
        diffs.push("it was attached anew".into());
    }
    if diffs.is_empty() {
        return Ok(());
    }
    Err(refused(
        device,
        &[format!(
            "changed while it was being checked: {}",
            diffs.join("; ")
        )],
        "nothing was written; try again once nothing else changes the device".into(),
    ))
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
