//! Purge: return a drive (or file) to its fresh, all-unmapped state before a
//! procedure, the way the seeds start from a secure erase.
//!
//! Block devices, in order of preference:
//! 1. `BLKSECDISCARD` over the whole device (secure discard: the drive unmaps and erases);
//! 2. `BLKDISCARD` over the whole device (the drive unmaps everything; on most SSDs this
//!    restores fresh-drive performance, which is what the procedures need);
//! 3. fallback, documented and reported: `BLKZEROOUT` over the whole device. The kernel
//!    uses WRITE ZEROES / unmap where the device offers it and otherwise writes zeros,
//!    so the drive is *not* fresh afterwards; the result says so, and an ATA secure
//!    erase or `nvme format` (outside storbench, by the user) is the real remedy.
//!
//! Regular files: punch a hole over the whole file (`FALLOC_FL_PUNCH_HOLE`), falling back
//! to truncating to 0 and back, which frees every block the same way.
//!
//! The simulated SSD uses its own purge (see `targets`).
//!
//! Purge never chooses its victim: it works on the descriptor of a target the engine
//! opened after its safety guard accepted it ([`purge_fd`]), never on the name again
//! (which may point at another device by then).

use std::fs::OpenOptions;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::time::Instant;
pub use storbench_results::purge::{PurgeMethod, PurgeReport};

// Linux <linux/fs.h>: _IO(0x12, n), _IOR(0x12, 114, u64).
const BLKDISCARD: libc::c_ulong = 0x1277;
const BLKSECDISCARD: libc::c_ulong = 0x127d;
const BLKZEROOUT: libc::c_ulong = 0x127f;
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;

fn range_ioctl(fd: i32, req: libc::c_ulong, start: u64, len: u64) -> std::io::Result<()> {
    let range: [u64; 2] = [start, len];
    // SAFETY: BLKDISCARD/BLKSECDISCARD/BLKZEROOUT read a `[u64; 2]` (start, length)
    // through the pointer; `range` lives across the call and fd is an open block device.
    let rc = unsafe { libc::ioctl(fd, req as _, range.as_ptr()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn device_size(fd: i32) -> std::io::Result<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which points at `size`.
    let rc = unsafe { libc::ioctl(fd, BLKGETSIZE64 as _, &mut size as *mut u64) };
    if rc == 0 {
        Ok(size)
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn unsupported(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EOPNOTSUPP) | Some(libc::ENOTTY) | Some(libc::EINVAL)
    )
}

/// Purge the block device or regular file at `path` (whole device / whole file).
/// Opens it by name: for tests and tools; a procedure purges its open target
/// ([`purge_fd`]).
pub fn purge_path(path: &Path) -> Result<PurgeReport, std::io::Error> {
    let f = OpenOptions::new().write(true).open(path).map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!("{}: opening for purge: {e}", path.display()),
        )
    })?;
    purge_fd(f.as_fd(), path)
}

/// Purge the block device or regular file open as `fd` for writing (`path` names it
/// in messages).
pub fn purge_fd(fd: BorrowedFd<'_>, path: &Path) -> Result<PurgeReport, std::io::Error> {
    let started = Instant::now();
    let ctx = |what: &str, e: std::io::Error| {
        std::io::Error::new(e.kind(), format!("{}: {what}: {e}", path.display()))
    };
    let f = std::fs::File::from(
        fd.try_clone_to_owned()
            .map_err(|e| ctx("duplicating the descriptor", e))?,
    );
    let md = f.metadata().map_err(|e| ctx("reading metadata", e))?;
    let fd = f.as_raw_fd();
    let ms = |s: Instant| s.elapsed().as_millis() as u64;
    if md.file_type().is_block_device() {
        let size = device_size(fd).map_err(|e| ctx("BLKGETSIZE64", e))?;
        match range_ioctl(fd, BLKSECDISCARD, 0, size) {
            Ok(()) => {
                return Ok(PurgeReport {
                    method: PurgeMethod::SecureDiscard,
                    bytes: size,
                    fresh: true,
                    wall_ms: ms(started),
                    note: None,
                })
            }
            Err(e) if unsupported(&e) => {}
            Err(e) => return Err(ctx("BLKSECDISCARD", e)),
        }
        match range_ioctl(fd, BLKDISCARD, 0, size) {
            Ok(()) => {
                return Ok(PurgeReport {
                    method: PurgeMethod::Discard,
                    bytes: size,
                    fresh: true,
                    wall_ms: ms(started),
                    note: Some(
                        "secure discard not supported; discarded the whole device instead".into(),
                    ),
                })
            }
            Err(e) if unsupported(&e) => {}
            Err(e) => return Err(ctx("BLKDISCARD", e)),
        }
        range_ioctl(fd, BLKZEROOUT, 0, size).map_err(|e| ctx("BLKZEROOUT", e))?;
        return Ok(PurgeReport {
            method: PurgeMethod::ZeroOut,
            bytes: size,
            fresh: false,
            wall_ms: ms(started),
            note: Some(
                "the device supports neither secure discard nor discard: it was zeroed instead, \
                 which does NOT return an SSD to its fresh state; secure-erase it (hdparm or nvme format) \
                 before the run for results comparable to the seeds"
                    .into(),
            ),
        });
    }
    if !md.file_type().is_file() {
        return Err(ctx(
            "purge",
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "neither a block device nor a regular file",
            ),
        ));
    }
    let len = md.len();
    let flags = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
    // SAFETY: fallocate takes an open fd and plain integers.
    let rc = unsafe { libc::fallocate(fd, flags, 0, len as libc::off_t) };
    if rc == 0 || len == 0 {
        f.sync_all().map_err(|e| ctx("syncing", e))?;
        return Ok(PurgeReport {
            method: PurgeMethod::PunchHole,
            bytes: len,
            fresh: true,
            wall_ms: ms(started),
            note: None,
        });
    }
    let e = std::io::Error::last_os_error();
    if !unsupported(&e) {
        return Err(ctx("punching a hole", e));
    }
    f.set_len(0).map_err(|e| ctx("truncating", e))?;
    f.set_len(len).map_err(|e| ctx("restoring the size", e))?;
    f.sync_all().map_err(|e| ctx("syncing", e))?;
    Ok(PurgeReport {
        method: PurgeMethod::Truncate,
        bytes: len,
        fresh: true,
        wall_ms: ms(started),
        note: Some("the filesystem cannot punch holes; truncated to 0 and back instead".into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn file_purge_frees_every_block_and_keeps_size() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("t.img");
        let mut f = std::fs::File::create(&p).unwrap();
        f.write_all(&vec![0xa5u8; 4 << 20]).unwrap();
        f.sync_all().unwrap();
        assert!(std::fs::metadata(&p).unwrap().blocks() > 0);
        let r = purge_path(&p).unwrap();
        assert!(r.fresh);
        assert_eq!(r.bytes, 4 << 20);
        let md = std::fs::metadata(&p).unwrap();
        assert_eq!(md.len(), 4 << 20);
        assert_eq!(md.blocks(), 0, "{:?}", r.method);
        assert!(std::fs::read(&p).unwrap().iter().all(|&b| b == 0));
    }

    #[test]
    fn purge_refuses_directories_naming_the_path() {
        let tmp = tempfile::tempdir().unwrap();
        let e = purge_path(tmp.path()).unwrap_err().to_string();
        assert!(e.contains(&tmp.path().display().to_string()), "{e}");
    }
}
