//! The safety guard: losing a user's data is the worst bug this tool can have.
//!
//! Before the first write (or TRIM) to a block device, storbench refuses when the
//! device
//! - is mounted, or is active swap (even with `--destroy-data`: unmount it first),
//! - has holders (device mapper, md, LVM) (even with `--destroy-data`),
//! - has partitions,
//! - carries a filesystem, swap, LVM, LUKS, md, MBR or GPT signature (magic bytes read
//!   here; `blkid -p` is asked as a second opinion when installed),
//!
//! unless `--destroy-data=/dev/EXACT` names that same device (same canonical path or
//! same device number). Reads need no flag.

use crate::target::TargetError;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Whether writes to a target may go ahead.
#[derive(Debug)]
pub enum WriteGate {
    /// Regular files (their own guard runs at open) and checked devices.
    Allowed,
    /// Opened read-only: a write is a bug of the caller (it said it would not write).
    ReadOnly { name: String },
    /// A block device not yet checked: checked before the first write.
    Pending {
        device: PathBuf,
        destroy_data: Option<PathBuf>,
    },
}

impl WriteGate {
    pub fn check_before_write(&mut self) -> Result<(), TargetError> {
        match self {
            WriteGate::Allowed => Ok(()),
            WriteGate::ReadOnly { name } => Err(TargetError::Invalid(format!(
                "{name} was opened read-only, but the workload writes or trims"
            ))),
            WriteGate::Pending {
                device,
                destroy_data,
            } => {
                check_block_device_write(device, destroy_data.as_deref())?;
                *self = WriteGate::Allowed;
                Ok(())
            }
        }
    }
}

/// Why a device is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Refused even with `--destroy-data` (mounted, swap, holders).
    pub hard: bool,
    pub reason: String,
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

/// On-disk signatures: (offset, magic, what).
const SIGNATURES: &[(u64, &[u8], &str)] = &[
    (
        510,
        &[0x55, 0xAA],
        "an MBR / boot sector (DOS partition table or FAT/NTFS boot sector)",
    ),
    (512, b"EFI PART", "a GPT partition table"),
    (4096, b"EFI PART", "a GPT partition table (4K sectors)"),
    (1080, &[0x53, 0xEF], "an ext2/ext3/ext4 filesystem"),
    (0, b"XFSB", "an XFS filesystem"),
    (65600, b"_BHRfS_M", "a btrfs filesystem"),
    (4086, b"SWAPSPACE2", "a swap area"),
    (4086, b"SWAP-SPACE", "a swap area"),
    (8182, b"SWAPSPACE2", "a swap area (8K pages)"),
    (16374, b"SWAPSPACE2", "a swap area (16K pages)"),
    (65526, b"SWAPSPACE2", "a swap area (64K pages)"),
    (0, b"LABELONE", "an LVM physical volume"),
    (512, b"LABELONE", "an LVM physical volume"),
    (1024, b"LABELONE", "an LVM physical volume"),
    (1536, b"LABELONE", "an LVM physical volume"),
    (0, b"LUKS\xba\xbe", "a LUKS encrypted volume"),
    (
        16384,
        b"SKUL\xba\xbe",
        "a LUKS2 encrypted volume (secondary header)",
    ),
    (3, b"NTFS    ", "an NTFS filesystem"),
    (54, b"FAT1", "a FAT filesystem"),
    (82, b"FAT32   ", "a FAT32 filesystem"),
    (1024, &[0x10, 0x20, 0xF5, 0xF2], "an F2FS filesystem"),
    (0, b"hsqs", "a squashfs filesystem"),
    (32769, b"CD001", "an ISO 9660 filesystem"),
    (32768, b"JFS1", "a JFS filesystem"),
    (
        0,
        &[0xfc, 0x4e, 0x2b, 0xa9],
        "an md RAID member (superblock 1.1)",
    ),
    (
        4096,
        &[0xfc, 0x4e, 0x2b, 0xa9],
        "an md RAID member (superblock 1.2)",
    ),
    (65536, b"ReIsEr", "a ReiserFS filesystem"),
];

/// Bytes read from the start of the device to look for signatures.
const SCAN_BYTES: usize = 72 << 10;

/// Signatures found in the first bytes of `path` (read here, not by a library).
pub fn scan_signatures(path: &Path) -> Result<Vec<String>, TargetError> {
    let f = File::open(path).map_err(|e| TargetError::Io {
        context: format!("open {} to check for signatures", path.display()),
        source: e,
    })?;
    let mut buf = vec![0u8; SCAN_BYTES];
    let mut n = 0;
    while n < buf.len() {
        match f.read_at(&mut buf[n..], n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(TargetError::Io {
                    context: format!("read {} to check for signatures", path.display()),
                    source: e,
                })
            }
        }
    }
    let buf = &buf[..n];
    let mut found = Vec::new();
    for &(off, magic, what) in SIGNATURES {
        let o = off as usize;
        if buf.len() >= o + magic.len() && &buf[o..o + magic.len()] == magic {
            let s = format!("carries {what} (magic at byte {off})");
            if !found.contains(&s) {
                found.push(s);
            }
        }
    }
    Ok(found)
}

/// `blkid -p` as a second opinion, when installed: TYPE/PTTYPE it reports.
fn blkid_probe(path: &Path) -> Option<String> {
    let out = std::process::Command::new("blkid")
        .arg("-p")
        .arg("-o")
        .arg("export")
        .arg(path)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8_lossy(&out.stdout);
    let kv: Vec<&str> = s
        .lines()
        .filter(|l| l.starts_with("TYPE=") || l.starts_with("PTTYPE="))
        .collect();
    (!kv.is_empty()).then(|| format!("blkid -p reports {}", kv.join(", ")))
}

/// Everything that makes writing to `device` unsafe.
pub fn inspect(device: &Path) -> Result<Vec<Finding>, TargetError> {
    let (ma, mi) = dev_numbers(device)?;
    let mut f = Vec::new();
    let hard = |reason: String| Finding { hard: true, reason };
    let soft = |reason: String| Finding {
        hard: false,
        reason,
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
            f.push(soft(format!("has partitions ({})", names.join(", "))));
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
    for s in scan_signatures(device)? {
        f.push(soft(s));
    }
    if let Some(b) = blkid_probe(device) {
        f.push(soft(b));
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
    let findings = inspect(device)?;
    let blocking: Vec<&Finding> = findings.iter().filter(|f| f.hard || !confirmed).collect();
    if blocking.is_empty() {
        return Ok(());
    }
    let reasons: Vec<String> = blocking.iter().map(|f| f.reason.clone()).collect();
    let any_hard = blocking.iter().any(|f| f.hard);
    Err(TargetError::Refused {
        message: format!(
            "refusing to write to {}: it {}",
            device.display(),
            reasons.join("; it ")
        ),
        hint: if any_hard {
            "unmount it, stop using it (swapoff, dmsetup/lvchange/mdadm) and try again; \
             storbench never writes to a device in use"
                .to_string()
        } else {
            format!(
                "if you really want to destroy everything on it, pass --destroy-data={}",
                device.display()
            )
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Headers of tools that may not be installed here (LVM, LUKS, md), written by
    /// hand at their documented offsets, are found by the scanner.
    #[test]
    fn scanner_finds_hand_written_headers() {
        let d = tempfile::tempdir().unwrap();
        let cases: &[(u64, &[u8], &str)] = &[
            (
                512,
                b"LABELONE\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0LVM2 001",
                "LVM",
            ),
            (0, b"LUKS\xba\xbe\0\x02", "LUKS"),
            (4096, &[0xfc, 0x4e, 0x2b, 0xa9, 1, 0, 0, 0], "md RAID"),
            (1080, &[0x53, 0xEF], "ext2/ext3/ext4"),
            (510, &[0x55, 0xAA], "MBR"),
            (512, b"EFI PART", "GPT"),
            (4086, b"SWAPSPACE2", "swap"),
        ];
        for (i, &(off, magic, what)) in cases.iter().enumerate() {
            let p = d.path().join(format!("img{i}"));
            let mut img = vec![0u8; 1 << 20];
            img[off as usize..off as usize + magic.len()].copy_from_slice(magic);
            std::fs::write(&p, &img).unwrap();
            let found = scan_signatures(&p).unwrap();
            assert!(found.iter().any(|f| f.contains(what)), "{what}: {found:?}");
        }
        let blank = d.path().join("blank");
        std::fs::write(&blank, vec![0u8; 1 << 20]).unwrap();
        assert!(scan_signatures(&blank).unwrap().is_empty());
    }
}
