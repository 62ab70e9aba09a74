//! Regular-file targets: created and preallocated to `--size`, opened with O_DIRECT
//! where the filesystem allows it. A file storbench did not create is never written
//! without `--overwrite`. Files it creates carry a marker holding the file's identity
//! (device, inode, birth time or inode generation: [`FileIdentity`]): the xattr
//! `user.storbench.created`, or where the filesystem has no user xattrs a sidecar
//! `PATH.storbench-created`. A file is storbench's only when the marker's identity is
//! the file's own: a user's file put at the path of a deleted target, or a copy of a
//! target that kept its xattrs, is not. Where a filesystem keeps neither birth times
//! nor generations and reuses inode numbers, no file is taken for storbench's:
//! `--overwrite` is needed each time.

use crate::safety::identity::FileIdentity;
use crate::target::{TargetError, TargetInfo, TargetKind};
use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs::OpenOptions as FsOpen;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

const XATTR: &str = "user.storbench.created";
/// First word of a marker; older markers (`1`, `created by storbench`) do not count.
const MARKER: &str = "storbench-created/2";

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

fn marker_text(id: &FileIdentity) -> String {
    format!(
        "{MARKER} {}\n",
        serde_json::to_string(id).expect("identity serializes")
    )
}

/// The identity a marker holds (`None`: not a marker of this version).
fn marker_identity(text: &[u8]) -> Option<FileIdentity> {
    let s = std::str::from_utf8(text).ok()?;
    serde_json::from_str(s.trim().strip_prefix(MARKER)?.trim()).ok()
}

fn read_xattr(path: &Path) -> Option<Vec<u8>> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    let name = CString::new(XATTR).expect("no NUL");
    let mut buf = [0u8; 1024];
    // SAFETY: c and name are NUL-terminated; buf is writable for its length.
    let r = unsafe {
        libc::getxattr(
            c.as_ptr(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    (r >= 0).then(|| buf[..r as usize].to_vec())
}

/// Did storbench create this file? Its marker must hold the file's own identity (a
/// strong one: see the module doc).
pub fn created_by_storbench(path: &Path) -> bool {
    let Ok(now) = FileIdentity::of(path) else {
        return false;
    };
    if !now.strong() {
        return false;
    }
    let from_xattr = read_xattr(path).and_then(|v| marker_identity(&v));
    let marked = from_xattr.or_else(|| {
        std::fs::read(sidecar(path))
            .ok()
            .and_then(|v| marker_identity(&v))
    });
    marked.is_some_and(|m| m == now)
}

fn mark_created(path: &Path, fd: &OwnedFd) -> Result<(), TargetError> {
    let id = FileIdentity::of_fd(fd.as_fd(), path)?;
    let v = marker_text(&id);
    let name = CString::new(XATTR).expect("no NUL");
    // SAFETY: fd is open; name NUL-terminated; v readable for its length.
    let r =
        unsafe { libc::fsetxattr(fd.as_raw_fd(), name.as_ptr(), v.as_ptr().cast(), v.len(), 0) };
    if r == 0 {
        // A sidecar left by an older target at this path no longer speaks for it.
        let _ = std::fs::remove_file(sidecar(path));
        return Ok(());
    }
    std::fs::write(sidecar(path), v.as_bytes()).map_err(|e| {
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
    open_file_as(path, o, None).map(|(fd, info, _)| (fd, info))
}

/// [`open_file`] for a run that continues: `recorded` is the identity of the file the
/// run started on, and the file at `path` must be that one. Returns its identity too.
pub fn open_file_as(
    path: &Path,
    o: &FileOpen,
    recorded: Option<&FileIdentity>,
) -> Result<(OwnedFd, TargetInfo, FileIdentity), TargetError> {
    if let Some(r) = recorded {
        check_same_file(path, r)?;
    }
    let created = if path.exists() {
        check_existing(path, o)?;
        false
    } else {
        create(path, o)?;
        true
    };
    let (fd, direct) = open_maybe_direct(path, o)?;
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
    let identity = FileIdentity::of_fd(fd.as_fd(), path)?;
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
        identity,
    ))
}

/// A continuing run: the file at `path` must still be the one it `recorded`.
fn check_same_file(path: &Path, recorded: &FileIdentity) -> Result<(), TargetError> {
    let now = FileIdentity::of(path).map_err(|_| TargetError::Refused {
        message: format!(
            "refusing to continue: {} is gone (the run started on it)",
            path.display()
        ),
        hint: "a run continues only on the file it started on; start a new run".into(),
    })?;
    let diffs = recorded.differences(&now);
    if !diffs.is_empty() {
        return Err(TargetError::Refused {
            message: format!(
                "refusing to write to {}: it is not the file this run started on: {}",
                path.display(),
                diffs.join("; ")
            ),
            hint: "a run continues only on the file it started on; start a new run (without --resume) to use this one".into(),
        });
    }
    Ok(())
}

/// A new file of `--size` bytes, marked as storbench's own and preallocated.
fn create(path: &Path, o: &FileOpen) -> Result<(), TargetError> {
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
    preallocate(&fd, path, size)
}

/// An existing file: a regular file, written (or grown to `--size`) only if storbench
/// made it or `--overwrite` allows; grown here if asked.
fn check_existing(path: &Path, o: &FileOpen) -> Result<(), TargetError> {
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
            hint: "pass --overwrite to let storbench overwrite its contents, or name a new file \
                   (a file storbench made counts as its own only while it is the same file: \
                   same device, inode and creation time)"
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
    Ok(())
}

/// Opens the file for the run: with O_DIRECT if asked and the file system takes it
/// (EINVAL: without). Returns the descriptor and whether O_DIRECT is in use.
fn open_maybe_direct(path: &Path, o: &FileOpen) -> Result<(OwnedFd, bool), TargetError> {
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
    Ok((f.into(), direct))
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
