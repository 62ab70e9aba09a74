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
use crate::safety::usage;
use crate::target::{TargetError, TargetInfo, TargetKind};
use rustix::fs::{Mode, OFlags};
use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs::OpenOptions as FsOpen;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
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

/// The marker on the open file `fd` (its xattr).
fn read_xattr(fd: BorrowedFd<'_>) -> Option<Vec<u8>> {
    let mut buf = [0u8; 1024];
    let n = rustix::fs::fgetxattr(fd, XATTR, &mut buf).ok()?;
    Some(buf[..n].to_vec())
}

/// Did storbench create the file open as `fd` (opened by `path`, whose identity is
/// `now`)? Its marker (xattr, or the sidecar beside `path`) must hold that identity, a
/// strong one: see the module doc.
fn marked_ours(fd: BorrowedFd<'_>, path: &Path, now: &FileIdentity) -> bool {
    if !now.strong() {
        return false;
    }
    let marked = read_xattr(fd)
        .and_then(|v| marker_identity(&v))
        .or_else(|| {
            std::fs::read(sidecar(path))
                .ok()
                .and_then(|v| marker_identity(&v))
        });
    marked.is_some_and(|m| &m == now)
}

/// Did storbench create the file at `path`? (Opened read-only and checked through
/// that descriptor, as a target is.)
pub fn created_by_storbench(path: &Path) -> bool {
    let Ok(fd) = open_regular(path, false) else {
        return false;
    };
    FileIdentity::of_fd(fd.as_fd(), path).is_ok_and(|now| marked_ours(fd.as_fd(), path, &now))
}

/// Opens the regular file `path` names, once: `O_PATH` first (a FIFO or a device put
/// at the path is never opened), then that very inode through `/proc/self/fd/N`,
/// read-write when `write`. Every later check of the file goes through the descriptor
/// returned, so a name pointed at another file meanwhile changes nothing.
fn open_regular(path: &Path, write: bool) -> Result<OwnedFd, TargetError> {
    let path_fd = rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| io(format!("open {}", path.display()), e.into()))?;
    reopen_regular(path_fd.as_fd(), path, write)
}

/// The regular file open as `fd` (any mode, `O_PATH` too), opened again through
/// `/proc/self/fd/N`, read-write when `write`: the same inode, whatever `path` names.
fn reopen_regular(fd: BorrowedFd<'_>, path: &Path, write: bool) -> Result<OwnedFd, TargetError> {
    let st = rustix::fs::fstat(fd).map_err(|e| io(format!("stat {}", path.display()), e.into()))?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(TargetError::Invalid(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    let again = format!("/proc/self/fd/{}", fd.as_raw_fd());
    let mode = if write { OFlags::RDWR } else { OFlags::RDONLY };
    rustix::fs::open(
        &again,
        mode | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(|e| {
        io(
            format!(
                "open {}{} (through {again}: is /proc mounted?)",
                path.display(),
                if write { " for writing" } else { "" }
            ),
            e.into(),
        )
    })
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

/// Open (and maybe create) a file target: the fd and its description.
pub fn open_file(path: &Path, o: &FileOpen) -> Result<(OwnedFd, TargetInfo), TargetError> {
    open_file_as(path, o, None).map(|(fd, info, _)| (fd, info))
}

/// [`open_file`] for a run that continues: `recorded` is the identity of the file the
/// run started on, and the file at `path` must be that one. Returns its identity too.
///
/// The file is opened first ([`open_regular`], or created with `O_EXCL`), and every
/// check (identity, marker, what else uses it) goes through that descriptor, the one
/// the engine then writes through.
pub fn open_file_as(
    path: &Path,
    o: &FileOpen,
    recorded: Option<&FileIdentity>,
) -> Result<(OwnedFd, TargetInfo, FileIdentity), TargetError> {
    open_file_with(path, o, recorded, &mut || {})
}

/// [`open_file_as`], calling `after_open` once the name is resolved and before anything
/// is checked (tests point the name at another file there: the checks and the writes
/// must still be the file opened).
pub fn open_file_with(
    path: &Path,
    o: &FileOpen,
    recorded: Option<&FileIdentity>,
    after_open: &mut dyn FnMut(),
) -> Result<(OwnedFd, TargetInfo, FileIdentity), TargetError> {
    let (fd, created) = match rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty())
    {
        Ok(p) => {
            after_open();
            (reopen_regular(p.as_fd(), path, o.write)?, false)
        }
        Err(rustix::io::Errno::NOENT) if recorded.is_some() => {
            return Err(TargetError::Refused {
                message: format!(
                    "refusing to continue: {} is gone (the run started on it)",
                    path.display()
                ),
                hint: "a run continues only on the file it started on; start a new run".into(),
            })
        }
        Err(rustix::io::Errno::NOENT) => (create(path, o)?, true),
        Err(e) => return Err(io(format!("open {}", path.display()), e.into())),
    };
    let identity = FileIdentity::of_fd(fd.as_fd(), path)?;
    if let Some(r) = recorded {
        check_same_file(path, r, &identity)?;
    }
    if !created {
        check_existing(&fd, path, o, &identity)?;
    }
    let direct = o.direct && set_direct(&fd, path)?;
    let len = rustix::fs::fstat(&fd)
        .map_err(|e| io(format!("stat {}", path.display()), e.into()))?
        .st_size as u64;
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
        identity,
    ))
}

/// A continuing run: the file opened must still be the one it `recorded`.
fn check_same_file(
    path: &Path,
    recorded: &FileIdentity,
    now: &FileIdentity,
) -> Result<(), TargetError> {
    let diffs = recorded.differences(now);
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

/// A new file of `--size` bytes (`O_EXCL`: never one that appeared meanwhile), marked
/// as storbench's own and preallocated; the descriptor the run uses.
fn create(path: &Path, o: &FileOpen) -> Result<OwnedFd, TargetError> {
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
    Ok(fd)
}

/// An existing file, open as `fd`: written (or grown to `--size`) only if storbench
/// made it or `--overwrite` allows, and never while a loop device over it is in use;
/// grown here if asked.
fn check_existing(
    fd: &OwnedFd,
    path: &Path,
    o: &FileOpen,
    now: &FileIdentity,
) -> Result<(), TargetError> {
    let st = rustix::fs::fstat(fd).map_err(|e| io(format!("stat {}", path.display()), e.into()))?;
    let grow = o.size_bytes.is_some_and(|s| s > st.st_size as u64);
    if !(o.write || grow) {
        return Ok(());
    }
    if !o.overwrite && !marked_ours(fd.as_fd(), path, now) {
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
    let users = usage::loop_users(usage::Object::File {
        dev: (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev)),
        inode: st.st_ino,
    });
    if !users.is_empty() {
        return Err(TargetError::Refused {
            message: format!(
                "refusing to write to {}: it {}",
                path.display(),
                users.join("; it ")
            ),
            hint: "unmount the filesystem on the loop device over it and detach that \
                   (losetup -d), then try again; storbench never writes a file in use as a \
                   loop device's image, even with --overwrite"
                .into(),
        });
    }
    if grow {
        let size = o.size_bytes.expect("grow implies size");
        if o.write {
            preallocate(fd, path, size)?;
        } else {
            // Read-only for the run; the same inode opened for writing to grow it.
            preallocate(&reopen_regular(fd.as_fd(), path, true)?, path, size)?;
        }
    }
    Ok(())
}

/// Turns on O_DIRECT on the open file (`F_SETFL`): false when the filesystem refuses
/// it (EINVAL), and the run uses buffered I/O.
fn set_direct(fd: &OwnedFd, path: &Path) -> Result<bool, TargetError> {
    let flags = rustix::fs::fcntl_getfl(fd)
        .map_err(|e| io(format!("fcntl F_GETFL {}", path.display()), e.into()))?;
    match rustix::fs::fcntl_setfl(fd, flags | OFlags::DIRECT) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::INVAL) => Ok(false),
        Err(e) => Err(io(
            format!("fcntl F_SETFL O_DIRECT {}", path.display()),
            e.into(),
        )),
    }
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

    /// Issue 30, data lost 3: a target named through a symlink flipped between a file
    /// storbench made and a user's file was checked as the one and written as the
    /// other (1 try in 24). The name is resolved once; a flip right after (the hook)
    /// changes neither what is checked nor what is written.
    #[test]
    fn symlink_flipped_during_the_open_leaves_the_users_file_alone() {
        let d = tempfile::tempdir().unwrap();
        let ours = d.path().join("ours.bin");
        drop(open_file(&ours, &opts(true, Some(1 << 20), false)).unwrap());
        let users = d.path().join("users.txt");
        let precious = vec![0x5au8; 1 << 20];
        std::fs::write(&users, &precious).unwrap();
        let link = d.path().join("target");
        let point = |to: &Path| {
            let tmp = d.path().join("target.new");
            let _ = std::fs::remove_file(&tmp);
            std::os::unix::fs::symlink(to, &tmp).unwrap();
            std::fs::rename(&tmp, &link).unwrap();
        };
        // Ours resolved, then the name pointed at the user's file: ours is opened,
        // passed and written.
        point(&ours);
        let (fd, _, id) =
            open_file_with(&link, &opts(true, None, false), None, &mut || point(&users)).unwrap();
        assert_eq!(id, FileIdentity::of(&ours).unwrap());
        // A plain write (O_DIRECT off: it wants an aligned buffer) through the descriptor.
        let flags = rustix::fs::fcntl_getfl(&fd).unwrap();
        rustix::fs::fcntl_setfl(&fd, flags - rustix::fs::OFlags::DIRECT).unwrap();
        rustix::io::pwrite(&fd, &[1u8; 4096], 0).unwrap();
        drop(fd);
        assert_eq!(std::fs::read(&users).unwrap(), precious);
        assert_eq!(std::fs::read(&ours).unwrap()[..4096], [1u8; 4096]);
        // The user's file resolved, then the name pointed at ours: refused.
        point(&users);
        let e = open_file_with(&link, &opts(true, None, false), None, &mut || point(&ours))
            .unwrap_err();
        assert!(e.to_string().contains("--overwrite"), "{e}");
        assert_eq!(std::fs::read(&users).unwrap(), precious);
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
