//! Block-device targets: size and logical block size from ioctls; rotational, discard
//! support, model and queue settings from sysfs.

use crate::backend::{BufferPool, BUFFER_ALIGN};
use crate::safety::sysfs_dir;
use crate::target::{TargetError, TargetInfo, TargetKind};
use std::collections::BTreeMap;
use std::fs::OpenOptions as FsOpen;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// `_IOR(0x12, 114, size_t)`
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
/// `_IO(0x12, 104)`
const BLKSSZGET: libc::c_ulong = 0x1268;

fn io(context: String, e: std::io::Error) -> TargetError {
    TargetError::Io { context, source: e }
}

pub fn is_block_device(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

fn sys_read(dir: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(rel))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Open a block device read-only (O_DIRECT). A block device is opened for writing by
/// the guard alone (`safety::guard_open`), which checks the descriptor it opens.
pub fn open_blockdev_read(path: &Path) -> Result<OwnedFd, TargetError> {
    let f = FsOpen::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .map_err(|e| io(format!("open {}", path.display()), e))?;
    let fd: OwnedFd = f.into();
    let md =
        rustix::fs::fstat(&fd).map_err(|e| io(format!("stat {}", path.display()), e.into()))?;
    if rustix::fs::FileType::from_raw_mode(md.st_mode) != rustix::fs::FileType::BlockDevice {
        return Err(TargetError::Invalid(format!(
            "{} is not a block device",
            path.display()
        )));
    }
    Ok(fd)
}

/// What the open block device `fd` (opened by `path`) is: size and logical block size
/// from ioctls; rotational, discard support, model and queue settings from sysfs by its
/// device number.
pub fn describe(fd: BorrowedFd<'_>, path: &Path) -> Result<TargetInfo, TargetError> {
    let md = rustix::fs::fstat(fd).map_err(|e| io(format!("stat {}", path.display()), e.into()))?;
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes a u64 to the pointer.
    if unsafe { libc::ioctl(fd.as_raw_fd(), BLKGETSIZE64 as _, &mut size as *mut u64) } < 0 {
        return Err(io(
            format!("ioctl BLKGETSIZE64 on {}", path.display()),
            std::io::Error::last_os_error(),
        ));
    }
    let mut lbs: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes an int to the pointer.
    if unsafe { libc::ioctl(fd.as_raw_fd(), BLKSSZGET as _, &mut lbs as *mut libc::c_int) } < 0 {
        return Err(io(
            format!("ioctl BLKSSZGET on {}", path.display()),
            std::io::Error::last_os_error(),
        ));
    }
    let (ma, mi) = (rustix::fs::major(md.st_rdev), rustix::fs::minor(md.st_rdev));
    let mut details = BTreeMap::new();
    details.insert("dev".into(), format!("{ma}:{mi}"));
    let mut rotational = None;
    let mut discard = false;
    let mut model = None;
    if let Some(sys) = sysfs_dir(ma, mi) {
        // A partition's queue and device live in its parent's directory.
        let whole = if sys.join("partition").exists() {
            sys.parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| sys.clone())
        } else {
            sys.clone()
        };
        rotational = sys_read(&whole, "queue/rotational").map(|s| s == "1");
        discard = sys_read(&whole, "queue/discard_max_bytes").is_some_and(|s| s != "0");
        model = sys_read(&whole, "device/model");
        for k in [
            "queue/physical_block_size",
            "queue/scheduler",
            "queue/nr_requests",
            "queue/max_sectors_kb",
            "queue/discard_granularity",
            "queue/write_cache",
        ] {
            if let Some(v) = sys_read(&whole, k) {
                details.insert(k.replace('/', "."), v);
            }
        }
        if let Some(v) = sys_read(&whole, "device/firmware_rev") {
            details.insert("firmware".into(), v);
        }
    }
    Ok(TargetInfo {
        kind: TargetKind::BlockDevice,
        name: path.display().to_string(),
        capacity_bytes: size,
        logical_block_bytes: u32::try_from(lbs).unwrap_or(512).max(1),
        rotational,
        discard,
        model,
        backend: String::new(),
        details,
    })
}

/// Whether a block device takes non-blocking I/O, as one `RWF_NOWAIT` read finds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Nowait {
    /// The read was done, or would have blocked (EAGAIN): io_uring tries each I/O
    /// inline first (loop devices, NVMe, every blk-mq device).
    Supported,
    /// EOPNOTSUPP: the device refuses non-blocking I/O (zram and other bio-based
    /// drivers without BLK_FEAT_NOWAIT), so io_uring hands every I/O to its io-wq
    /// worker threads.
    Unsupported,
    /// The probe could not tell (another error, or a device smaller than one read).
    Unknown(String),
}

/// Probe `fd`, a block device opened with O_DIRECT, with one read of the first
/// `max(4 KiB, logical block)` bytes with `RWF_NOWAIT` (preadv2). A read cannot harm
/// data; the bytes read are dropped.
pub fn probe_nowait(fd: BorrowedFd<'_>, logical_block_bytes: u32, capacity_bytes: u64) -> Nowait {
    let len = (logical_block_bytes as usize)
        .max(BUFFER_ALIGN)
        .div_ceil(BUFFER_ALIGN)
        * BUFFER_ALIGN;
    if capacity_bytes < len as u64 {
        return Nowait::Unknown(format!(
            "{capacity_bytes} bytes: smaller than one {len}-byte probe read"
        ));
    }
    // Aligned for O_DIRECT.
    let mut pool = BufferPool::new(1, len);
    let buf = pool.slot_mut(0);
    match rustix::io::preadv2(
        fd,
        &mut [std::io::IoSliceMut::new(buf)],
        0,
        rustix::io::ReadWriteFlags::NOWAIT,
    ) {
        Ok(_) | Err(rustix::io::Errno::AGAIN) => Nowait::Supported,
        Err(rustix::io::Errno::OPNOTSUPP) => Nowait::Unsupported,
        Err(e) => Nowait::Unknown(format!("preadv2(RWF_NOWAIT): {e}")),
    }
}
