//! Who a target is, beyond its name: a block device's serial number, WWN, model,
//! capacity, logical block size, partition start, a loop device's backing file (path,
//! device, inode and birth time, offset and size limit), its disk sequence number; a
//! regular file's device, inode and birth time. A run records its target's identity
//! when it starts (with the user's consent to destroy its data, when given) and every
//! resume compares it with what the name now points at: consent belongs to the device,
//! not to `/dev/loop10`.

use crate::target::TargetError;
use serde::{Deserialize, Serialize};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::path::Path;

/// A loop device's backing file, as the kernel holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopBacking {
    /// The path the kernel reports (sysfs `loop/backing_file`).
    pub path: String,
    /// `MAJ:MIN` of the filesystem holding the backing file, and its inode.
    pub dev: String,
    pub inode: u64,
    pub offset_bytes: u64,
    pub size_limit_bytes: u64,
    /// Birth time (statx `STATX_BTIME`) of the file at `path`, `SECONDS.NANOS`, when it
    /// is the backing file (same device and inode) and its filesystem keeps one: a new
    /// file given a deleted image's inode number is born later.
    #[serde(default)]
    pub btime: Option<String>,
}

/// Where a partition lies on its disk.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionPlace {
    pub number: u32,
    pub start_sectors: u64,
}

/// The identity of a block device (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceIdentity {
    /// The path it was opened by and its `MAJ:MIN` then (reported, not compared: a
    /// disk gets another number after a reboot).
    pub path: String,
    pub dev: String,
    pub capacity_bytes: u64,
    pub logical_block_bytes: u32,
    pub serial: Option<String>,
    pub wwid: Option<String>,
    pub model: Option<String>,
    pub partition: Option<PartitionPlace>,
    pub loop_backing: Option<LoopBacking>,
    /// The kernel's disk sequence number: new each time a device (or its medium) is
    /// attached (a loop device: each time it is attached to a file). Compared for
    /// devices with no serial, WWN, or backing file known by its birth time.
    pub diskseq: Option<u64>,
    /// Strong signatures (and partitions) the guard saw, as keys (see `safety`).
    #[serde(default)]
    pub signatures: Vec<String>,
}

/// The identity of a regular file: the marker that says storbench created it holds
/// it, and a resume compares it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileIdentity {
    /// `MAJ:MIN` of the filesystem and the inode number.
    pub dev: String,
    pub inode: u64,
    /// Birth time (statx `STATX_BTIME`), `SECONDS.NANOS`, where the filesystem keeps it.
    pub btime: Option<String>,
    /// The inode's generation number (`FS_IOC_GETVERSION`), where the filesystem has one.
    pub generation: Option<u32>,
    /// The filesystem never reuses inode numbers (tmpfs, ramfs: a counter).
    #[serde(default)]
    pub fresh_inodes: bool,
}

/// What a run's target was when the run started.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
// One per run, read once at open: the size difference costs nothing worth a Box.
#[allow(clippy::large_enum_variant)]
pub enum TargetIdentity {
    BlockDevice(DeviceIdentity),
    File(FileIdentity),
}

fn sys_read(dir: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(rel))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// SCSI VPD page 0x80 (unit serial number): 4-byte header, then ASCII.
fn vpd80(dir: &Path) -> Option<String> {
    let b = std::fs::read(dir.join("device/vpd_pg80")).ok()?;
    let len = *b.get(3)? as usize;
    let s = String::from_utf8_lossy(b.get(4..4 + len)?)
        .trim()
        .to_string();
    (!s.is_empty()).then_some(s)
}

/// `struct loop_info64` of <linux/loop.h>.
#[repr(C)]
pub(crate) struct LoopInfo64 {
    /// The backing file's filesystem device (`huge_encode_dev`), inode, and its own
    /// device number when it is a block device (0 for a regular file).
    pub lo_device: u64,
    pub lo_inode: u64,
    pub lo_rdevice: u64,
    pub lo_offset: u64,
    pub lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    pub lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;
pub(crate) const LOOP_MAJOR: u32 = 7;

/// `LOOP_GET_STATUS64` on the open loop device `fd`: `None` when no file is attached.
pub(crate) fn loop_status(fd: BorrowedFd<'_>) -> Result<Option<LoopInfo64>, std::io::Error> {
    // SAFETY: LoopInfo64 is plain old data; all-zero is a valid value.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: LOOP_GET_STATUS64 writes one `struct loop_info64` through the pointer,
    // which points at `info` (same layout, #[repr(C)]); fd is an open loop device.
    let rc = unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            LOOP_GET_STATUS64 as _,
            &mut info as *mut LoopInfo64,
        )
    };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        // ENXIO: a loop device with no backing file.
        if e.raw_os_error() == Some(libc::ENXIO) {
            return Ok(None);
        }
        return Err(e);
    }
    Ok(Some(info))
}

fn loop_backing(
    fd: BorrowedFd<'_>,
    sys: Option<&Path>,
) -> Result<Option<LoopBacking>, std::io::Error> {
    let Some(info) = loop_status(fd)? else {
        return Ok(None);
    };
    let path = sys
        .and_then(|s| sys_read(s, "loop/backing_file"))
        .unwrap_or_else(|| {
            let n = info.lo_file_name.iter().position(|&c| c == 0).unwrap_or(64);
            String::from_utf8_lossy(&info.lo_file_name[..n]).into_owned()
        });
    let dev = (libc::major(info.lo_device), libc::minor(info.lo_device));
    Ok(Some(LoopBacking {
        btime: backing_btime(&path, dev, info.lo_inode),
        path,
        dev: format!("{}:{}", dev.0, dev.1),
        inode: info.lo_inode,
        offset_bytes: info.lo_offset,
        size_limit_bytes: info.lo_sizelimit,
    }))
}

/// The birth time of the file at `path` if it is the one on device `dev` with inode
/// `inode` (statx by path, nothing opened: the path may name anything by now).
fn backing_btime(path: &str, dev: (u32, u32), inode: u64) -> Option<String> {
    use rustix::fs::{statx, AtFlags, StatxFlags, CWD};
    let st = statx(
        CWD,
        path,
        AtFlags::empty(),
        StatxFlags::INO | StatxFlags::BTIME,
    )
    .ok()?;
    let same = (st.stx_dev_major, st.stx_dev_minor) == dev && st.stx_ino == inode;
    (same && st.stx_mask & StatxFlags::BTIME.bits() != 0)
        .then(|| format!("{}.{:09}", st.stx_btime.tv_sec, st.stx_btime.tv_nsec))
}

fn io(context: String, e: std::io::Error) -> TargetError {
    TargetError::Io { context, source: e }
}

impl DeviceIdentity {
    /// The identity of the block device open as `fd` (opened by `path`).
    pub fn of_fd(fd: BorrowedFd<'_>, path: &Path) -> Result<DeviceIdentity, TargetError> {
        let st =
            rustix::fs::fstat(fd).map_err(|e| io(format!("stat {}", path.display()), e.into()))?;
        let rdev = st.st_rdev;
        let (ma, mi) = (rustix::fs::major(rdev), rustix::fs::minor(rdev));
        let sys = super::usage::sysfs_dir(ma, mi);
        let (whole, partition) = match &sys {
            Some(s) if s.join("partition").exists() => (
                s.parent().map(Path::to_path_buf),
                Some(PartitionPlace {
                    number: sys_read(s, "partition")
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0),
                    start_sectors: sys_read(s, "start")
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0),
                }),
            ),
            Some(s) => (Some(s.clone()), None),
            None => (None, None),
        };
        let mut capacity: u64 = 0;
        // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which points at
        // `capacity`; fd is an open block device.
        if unsafe {
            libc::ioctl(
                fd.as_raw_fd(),
                0x8008_1272u64 as _,
                &mut capacity as *mut u64,
            )
        } < 0
        {
            return Err(io(
                format!("ioctl BLKGETSIZE64 on {}", path.display()),
                std::io::Error::last_os_error(),
            ));
        }
        let mut lbs: libc::c_int = 0;
        // SAFETY: BLKSSZGET writes one int through the pointer, which points at `lbs`.
        if unsafe { libc::ioctl(fd.as_raw_fd(), 0x1268u64 as _, &mut lbs as *mut libc::c_int) } < 0
        {
            return Err(io(
                format!("ioctl BLKSSZGET on {}", path.display()),
                std::io::Error::last_os_error(),
            ));
        }
        let w = whole.as_deref();
        let loop_backing = if ma == LOOP_MAJOR {
            loop_backing(fd, sys.as_deref())
                .map_err(|e| io(format!("ioctl LOOP_GET_STATUS64 on {}", path.display()), e))?
        } else {
            None
        };
        Ok(DeviceIdentity {
            path: path.display().to_string(),
            dev: format!("{ma}:{mi}"),
            capacity_bytes: capacity,
            logical_block_bytes: u32::try_from(lbs).unwrap_or(0),
            serial: w.and_then(|w| {
                sys_read(w, "device/serial")
                    .or_else(|| sys_read(w, "serial"))
                    .or_else(|| vpd80(w))
            }),
            wwid: w.and_then(|w| sys_read(w, "wwid").or_else(|| sys_read(w, "device/wwid"))),
            model: w.and_then(|w| sys_read(w, "device/model")),
            partition,
            loop_backing,
            diskseq: w
                .and_then(|w| sys_read(w, "diskseq"))
                .and_then(|v| v.parse().ok()),
            signatures: Vec::new(),
        })
    }

    /// The identity of the block device at `path` (opened read-only for the ioctls).
    pub fn of(path: &Path) -> Result<DeviceIdentity, TargetError> {
        let f = std::fs::File::open(path).map_err(|e| io(format!("open {}", path.display()), e))?;
        use std::os::fd::AsFd;
        DeviceIdentity::of_fd(f.as_fd(), path)
    }

    /// Whether a serial number, WWN, or a backing file known by its birth time tells
    /// this device from `now` without the disk sequence number.
    fn told_apart(&self, now: &DeviceIdentity) -> bool {
        let born = |d: &DeviceIdentity| d.loop_backing.as_ref().is_some_and(|b| b.btime.is_some());
        self.serial.is_some() || self.wwid.is_some() || (born(self) && born(now))
    }

    /// How the device `now` differs from this one, in words (empty: the same device).
    /// Signatures are not compared here (see the guard).
    pub fn differences(&self, now: &DeviceIdentity) -> Vec<String> {
        let mut d = Vec::new();
        let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".into());
        let mut field = |name: &str, was: String, is: String| {
            if was != is {
                d.push(format!("its {name} changed from {was} to {is}"));
            }
        };
        field("serial number", opt(&self.serial), opt(&now.serial));
        field("WWN", opt(&self.wwid), opt(&now.wwid));
        field("model", opt(&self.model), opt(&now.model));
        field(
            "capacity",
            format!("{} bytes", self.capacity_bytes),
            format!("{} bytes", now.capacity_bytes),
        );
        field(
            "logical block size",
            format!("{} bytes", self.logical_block_bytes),
            format!("{} bytes", now.logical_block_bytes),
        );
        let part = |p: &Option<PartitionPlace>| {
            p.as_ref().map_or("whole disk".into(), |p| {
                format!("partition {} at sector {}", p.number, p.start_sectors)
            })
        };
        field("place", part(&self.partition), part(&now.partition));
        // Birth times are compared where both were read (a run recorded by an older
        // storbench has none: its disk sequence number is compared instead).
        let both_born = [&self.loop_backing, &now.loop_backing]
            .iter()
            .all(|b| b.as_ref().is_some_and(|b| b.btime.is_some()));
        let back = |b: &Option<LoopBacking>| {
            b.as_ref().map_or("none".into(), |b| {
                let born = match &b.btime {
                    Some(t) if both_born => format!(", born {t}"),
                    _ => String::new(),
                };
                format!(
                    "{} (device {}, inode {}{born}, offset {}, size limit {})",
                    b.path, b.dev, b.inode, b.offset_bytes, b.size_limit_bytes
                )
            })
        };
        field(
            "loop backing file",
            back(&self.loop_backing),
            back(&now.loop_backing),
        );
        if !self.told_apart(now) && self.diskseq != now.diskseq {
            d.push(format!(
                "it has no serial number, WWN or backing file known by its birth time to tell it by, and its disk sequence number changed from {} to {} (it was attached anew, replaced, or the machine restarted)",
                self.diskseq.map_or("none".into(), |v| v.to_string()),
                now.diskseq.map_or("none".into(), |v| v.to_string())
            ));
        }
        d
    }
}

/// `FS_IOC_GETVERSION`: `_IOR('v', 1, long)`.
const FS_IOC_GETVERSION: libc::c_ulong = 0x8008_7601;
const TMPFS_MAGIC: i64 = 0x0102_1994;
const RAMFS_MAGIC: i64 = 0x8584_58f6;

impl FileIdentity {
    /// The identity of the open regular file `fd`.
    pub fn of_fd(fd: BorrowedFd<'_>, path: &Path) -> Result<FileIdentity, TargetError> {
        use rustix::fs::{statx, AtFlags, StatxFlags};
        let st = statx(
            fd,
            "",
            AtFlags::EMPTY_PATH,
            StatxFlags::BASIC_STATS | StatxFlags::BTIME,
        )
        .map_err(|e| io(format!("statx {}", path.display()), e.into()))?;
        let btime = (st.stx_mask & StatxFlags::BTIME.bits() != 0)
            .then(|| format!("{}.{:09}", st.stx_btime.tv_sec, st.stx_btime.tv_nsec));
        let mut generation: libc::c_int = 0;
        // SAFETY: FS_IOC_GETVERSION writes one int through the pointer, which points
        // at `generation`; fd is open. Filesystems without it return an error.
        let rc = unsafe {
            libc::ioctl(
                fd.as_raw_fd(),
                FS_IOC_GETVERSION as _,
                &mut generation as *mut libc::c_int,
            )
        };
        let fs = rustix::fs::fstatfs(fd)
            .map_err(|e| io(format!("statfs {}", path.display()), e.into()))?;
        let ftype = fs.f_type as i64;
        Ok(FileIdentity {
            dev: format!("{}:{}", st.stx_dev_major, st.stx_dev_minor),
            inode: st.stx_ino,
            btime,
            generation: (rc == 0 && generation != 0).then_some(generation as u32),
            fresh_inodes: ftype == TMPFS_MAGIC || ftype == RAMFS_MAGIC,
        })
    }

    /// The identity of the regular file at `path`.
    pub fn of(path: &Path) -> Result<FileIdentity, TargetError> {
        let f = std::fs::File::open(path).map_err(|e| io(format!("open {}", path.display()), e))?;
        use std::os::fd::AsFd;
        FileIdentity::of_fd(f.as_fd(), path)
    }

    /// Whether the identity tells this file from a later one at the same path: an
    /// inode number alone does not (a deleted file's number is given to the next).
    pub fn strong(&self) -> bool {
        self.btime.is_some() || self.generation.is_some() || self.fresh_inodes
    }

    /// How `now` differs, in words (empty: the same file).
    pub fn differences(&self, now: &FileIdentity) -> Vec<String> {
        let mut d = Vec::new();
        if (&self.dev, self.inode) != (&now.dev, now.inode) {
            d.push(format!(
                "it is another file (device {} inode {}, was device {} inode {})",
                now.dev, now.inode, self.dev, self.inode
            ));
        } else if self.btime != now.btime || self.generation != now.generation {
            d.push(format!(
                "it is another file with the same inode number (created {}, the run's was created {})",
                now.btime.as_deref().unwrap_or("at an unknown time"),
                self.btime.as_deref().unwrap_or("at an unknown time")
            ));
        }
        d
    }
}

impl TargetIdentity {
    /// How the target now differs from the one the run started on (empty: the same).
    pub fn differences(&self, now: &TargetIdentity) -> Vec<String> {
        match (self, now) {
            (TargetIdentity::BlockDevice(a), TargetIdentity::BlockDevice(b)) => a.differences(b),
            (TargetIdentity::File(a), TargetIdentity::File(b)) => a.differences(b),
            (TargetIdentity::BlockDevice(_), TargetIdentity::File(_)) => {
                vec!["it was a block device and is now a regular file".into()]
            }
            (TargetIdentity::File(_), TargetIdentity::BlockDevice(_)) => {
                vec!["it was a regular file and is now a block device".into()]
            }
        }
    }
}
