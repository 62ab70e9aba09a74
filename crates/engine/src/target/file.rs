//! Regular-file targets: created and preallocated to `--size`, opened with O_DIRECT
//! where the filesystem allows it. A file storbench did not create is never written
//! without `--overwrite`: files it creates carry the xattr `user.storbench.created`
//! (or, where the filesystem has no user xattrs, a sidecar `PATH.storbench-created`).

use crate::target::{TargetError, TargetInfo, TargetKind};
use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs::OpenOptions as FsOpen;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

const XATTR: &str = "user.storbench.created";

/// How to open a file target.
#[derive(Clone, Debug)]
pub struct FileOpen {
    /// The run writes or trims.
    pub write: bool,
    /// Create (or extend) the file to this size; the target's capacity.
    pub size_bytes: Option<u64>,
    /// Allow writing to an existing file storbench did not create.
    pub overwrite: bool,
    /// Use O_DIRECT (falls back to buffered I/O, noted in details, when refused).
    pub direct: bool,
}

fn sidecar(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".storbench-created");
    PathBuf::from(s)
}

fn io(context: String, e: std::io::Error) -> TargetError {
    TargetError::Io { context, source: e }
}

/// Did storbench create this file?
pub fn created_by_storbench(path: &Path) -> bool {
    if sidecar(path).exists() {
        return true;
    }
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    let name = CString::new(XATTR).expect("no NUL");
    let mut buf = [0u8; 8];
    // SAFETY: c and name are NUL-terminated; buf is writable for its length.
    let r = unsafe {
        libc::getxattr(
            c.as_ptr(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    r >= 0
}

fn mark_created(path: &Path, fd: &OwnedFd) -> Result<(), TargetError> {
    let name = CString::new(XATTR).expect("no NUL");
    let v = b"1";
    // SAFETY: fd is open; name NUL-terminated; v readable for its length.
    let r =
        unsafe { libc::fsetxattr(fd.as_raw_fd(), name.as_ptr(), v.as_ptr().cast(), v.len(), 0) };
    if r == 0 {
        return Ok(());
    }
    std::fs::write(sidecar(path), b"created by storbench\n").map_err(|e| {
        io(
            format!("write ownership marker {}", sidecar(path).display()),
            e,
        )
    })
}

fn preallocate(fd: &OwnedFd, path: &Path, size: u64) -> Result<(), TargetError> {
    // SAFETY: plain syscall on an open fd.
    let r = unsafe { libc::fallocate(fd.as_raw_fd(), 0, 0, size as libc::off_t) };
    if r == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EOPNOTSUPP) {
        // SAFETY: plain syscall on an open fd.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), size as libc::off_t) } == 0 {
            return Ok(());
        }
        return Err(io(
            format!("ftruncate {} to {size} bytes", path.display()),
            std::io::Error::last_os_error(),
        ));
    }
    Err(io(
        format!("preallocate {} to {size} bytes", path.display()),
        e,
    ))
}

/// Direct-I/O alignment of an open file (statx DIOALIGN), when the kernel tells.
fn dio_align(fd: &OwnedFd) -> Option<u32> {
    let st = rustix::fs::statx(
        fd,
        "",
        rustix::fs::AtFlags::EMPTY_PATH,
        rustix::fs::StatxFlags::DIOALIGN,
    )
    .ok()?;
    (st.stx_dio_offset_align > 0).then_some(st.stx_dio_offset_align)
}

/// Open (and maybe create) a file target: the fd, its description, and whether
/// O_DIRECT is in use.
pub fn open_file(path: &Path, o: &FileOpen) -> Result<(OwnedFd, TargetInfo), TargetError> {
    let exists = path.exists();
    let mut created = false;
    if !exists {
        let Some(size) = o.size_bytes else {
            return Err(TargetError::Refused {
                message: format!("{} does not exist", path.display()),
                hint: "give --size (e.g. --size 1g) to create it".into(),
            });
        };
        if size == 0 {
            return Err(TargetError::Invalid(format!(
                "--size of {} must be more than 0",
                path.display()
            )));
        }
        let f = FsOpen::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| io(format!("create {}", path.display()), e))?;
        let fd: OwnedFd = f.into();
        mark_created(path, &fd)?;
        preallocate(&fd, path, size)?;
        created = true;
    } else {
        let md = std::fs::metadata(path).map_err(|e| io(format!("stat {}", path.display()), e))?;
        if !md.is_file() {
            return Err(TargetError::Invalid(format!(
                "{} is not a regular file",
                path.display()
            )));
        }
        let ours = created_by_storbench(path);
        let len = md.len();
        let grow = o.size_bytes.is_some_and(|s| s > len);
        if (o.write || grow) && !ours && !o.overwrite {
            return Err(TargetError::Refused {
                message: format!(
                    "refusing to write to {}: the file exists and storbench did not create it",
                    path.display()
                ),
                hint:
                    "pass --overwrite to let storbench overwrite its contents, or name a new file"
                        .into(),
            });
        }
        if grow {
            let f = FsOpen::new()
                .write(true)
                .open(path)
                .map_err(|e| io(format!("open {}", path.display()), e))?;
            let fd: OwnedFd = f.into();
            preallocate(&fd, path, o.size_bytes.expect("grow implies size"))?;
        }
    }
    let open = |direct: bool| {
        let mut oo = FsOpen::new();
        oo.read(true).write(o.write);
        if direct {
            oo.custom_flags(libc::O_DIRECT);
        }
        oo.open(path)
    };
    let (f, direct) = if o.direct {
        match open(true) {
            Ok(f) => (f, true),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => (
                open(false).map_err(|e| io(format!("open {}", path.display()), e))?,
                false,
            ),
            Err(e) => return Err(io(format!("open {} with O_DIRECT", path.display()), e)),
        }
    } else {
        (
            open(false).map_err(|e| io(format!("open {}", path.display()), e))?,
            false,
        )
    };
    let fd: OwnedFd = f.into();
    let len = std::fs::metadata(path)
        .map_err(|e| io(format!("stat {}", path.display()), e))?
        .len();
    let capacity = o.size_bytes.map_or(len, |s| s.min(len));
    let lbs = if direct {
        dio_align(&fd).unwrap_or(4096)
    } else {
        512
    };
    let mut details = BTreeMap::new();
    details.insert("o_direct".into(), direct.to_string());
    details.insert("created".into(), created.to_string());
    Ok((
        fd,
        TargetInfo {
            kind: TargetKind::File,
            name: path.display().to_string(),
            capacity_bytes: capacity,
            logical_block_bytes: lbs,
            rotational: None,
            discard: true,
            model: None,
            backend: String::new(),
            details,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(write: bool, size: Option<u64>, overwrite: bool) -> FileOpen {
        FileOpen {
            write,
            size_bytes: size,
            overwrite,
            direct: true,
        }
    }

    #[test]
    fn creates_preallocates_and_marks() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.bin");
        let (_fd, info) = open_file(&p, &opts(true, Some(8 << 20), false)).unwrap();
        assert_eq!(info.capacity_bytes, 8 << 20);
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 8 << 20);
        assert!(created_by_storbench(&p));
        // Reopening our own file for writing needs no flag.
        open_file(&p, &opts(true, None, false)).unwrap();
    }

    #[test]
    fn missing_file_without_size_is_a_user_error() {
        let d = tempfile::tempdir().unwrap();
        let e = open_file(&d.path().join("nope"), &opts(false, None, false)).unwrap_err();
        assert!(matches!(e, TargetError::Refused { .. }), "{e}");
    }

    #[test]
    fn foreign_file_is_not_overwritten_without_flag() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("precious.txt");
        let content = vec![7u8; 1 << 16];
        std::fs::write(&p, &content).unwrap();
        let e = open_file(&p, &opts(true, None, false)).unwrap_err();
        assert!(matches!(e, TargetError::Refused { .. }), "{e}");
        assert!(e.to_string().contains("--overwrite"));
        // Growing it is a write too.
        assert!(open_file(&p, &opts(false, Some(1 << 20), false)).is_err());
        // Reading is fine.
        let (_fd, info) = open_file(&p, &opts(false, None, false)).unwrap();
        assert_eq!(info.capacity_bytes, 1 << 16);
        assert_eq!(std::fs::read(&p).unwrap(), content);
        // With --overwrite it opens for writing.
        open_file(&p, &opts(true, None, true)).unwrap();
    }
}
