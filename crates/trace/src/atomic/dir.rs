//! [`OutputDir`]: a directory storbench owns (a run directory, its `journal/` and
//! `series/`, a sweep's point directories), held by its descriptor. It is the only way
//! files in such a directory are opened: every name is one path component, looked up
//! relative to the descriptor with `O_NOFOLLOW`; a symbolic link there (to a file, to
//! a device, dangling, or a subdirectory that is a link) is refused, never followed;
//! new files are created with `O_EXCL`; a file written in place (a journal, a lock)
//! must be a regular file with no other names. Replaced files go through
//! [`AtomicFile`] relative to the same descriptor.
//!
//! The directory itself is opened by the path the user named (a link there is the
//! user's own choice); everything after that goes through its descriptor, so a
//! directory renamed or swapped for a link meanwhile redirects nothing.

use super::{io, kind_name, link_target, lstat_at, refuse, AtomicFile, Why};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A directory storbench writes into, by its descriptor.
#[derive(Clone, Debug)]
pub struct OutputDir {
    fd: Arc<OwnedFd>,
    path: PathBuf,
}

/// What a name in an [`OutputDir`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    Absent,
    File,
    Dir,
}

/// Names are single path components chosen by storbench: anything else is a bug.
fn check_name(name: &str) {
    assert!(
        !name.is_empty() && name != "." && name != ".." && !name.contains('/'),
        "not a file name in a directory: {name:?}"
    );
}

impl OutputDir {
    /// The directory `path` (created with its parents if missing).
    pub fn create(path: &Path) -> std::io::Result<OutputDir> {
        std::fs::create_dir_all(path)?;
        OutputDir::open(path)
    }

    /// The existing directory `path`.
    pub fn open(path: &Path) -> std::io::Result<OutputDir> {
        Ok(OutputDir {
            fd: Arc::new(super::open_dir(path)?),
            path: path.to_path_buf(),
        })
    }

    /// The directory's path, as named (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of `name` in it (for messages and for readers outside a run).
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// What `name` holds. A symbolic link, a device, a FIFO or a socket there is
    /// refused.
    pub fn entry(&self, name: &str) -> std::io::Result<Entry> {
        check_name(name);
        let Some(st) = lstat_at(self.fd.as_fd(), name.as_ref())? else {
            return Ok(Entry::Absent);
        };
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => Ok(Entry::File),
            FileType::Directory => Ok(Entry::Dir),
            t => Err(self.refusal(name, t)),
        }
    }

    fn refusal(&self, name: &str, t: FileType) -> std::io::Error {
        let path = self.join(name);
        match t {
            FileType::Symlink => refuse(
                &path,
                Why::Symlink(link_target(self.fd.as_fd(), name.as_ref())),
            ),
            FileType::BlockDevice => refuse(&path, Why::BlockDevice),
            t => refuse(&path, Why::NotAFile(kind_name(t))),
        }
    }

    /// The subdirectory `name`, made if missing; a link or a file there is refused.
    pub fn subdir(&self, name: &str) -> std::io::Result<OutputDir> {
        check_name(name);
        match rustix::fs::mkdirat(self.fd.as_fd(), name, Mode::from_raw_mode(0o777)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(io(e)),
        }
        self.open_subdir(name)
    }

    /// The subdirectory `name` if it exists; a link or a file there is refused.
    pub fn existing_subdir(&self, name: &str) -> std::io::Result<Option<OutputDir>> {
        match self.entry(name)? {
            Entry::Absent => Ok(None),
            _ => self.open_subdir(name).map(Some),
        }
    }

    fn open_subdir(&self, name: &str) -> std::io::Result<OutputDir> {
        match rustix::fs::openat(
            self.fd.as_fd(),
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => Ok(OutputDir {
                fd: Arc::new(fd),
                path: self.join(name),
            }),
            Err(Errno::LOOP | Errno::NOTDIR) => {
                let t = lstat_at(self.fd.as_fd(), name.as_ref())?
                    .map_or(FileType::Unknown, |st| FileType::from_raw_mode(st.st_mode));
                Err(self.refusal(name, t))
            }
            Err(e) => Err(io(e)),
        }
    }

    /// Start replacing (or creating) `name` atomically.
    pub fn replace(&self, name: &str) -> std::io::Result<AtomicFile> {
        check_name(name);
        AtomicFile::in_dir(self.fd.clone(), &self.path, name)
    }

    /// Write `bytes` to `name` atomically.
    pub fn write(&self, name: &str, bytes: &[u8]) -> std::io::Result<()> {
        let mut f = self.replace(name)?;
        f.write_all(bytes)?;
        f.commit()
    }

    /// The regular file `name` opened for reading, `None` when there is none.
    pub fn read(&self, name: &str) -> std::io::Result<Option<File>> {
        if self.entry(name)? == Entry::Absent {
            return Ok(None);
        }
        let fd = self.open_regular(name, OFlags::RDONLY)?;
        Ok(Some(File::from(fd)))
    }

    /// `name` opened for reading and writing in place (a journal appended to, a lock
    /// file): created with `O_EXCL` when missing and `create`; an existing one must be
    /// a regular file with no other name (a hard link would carry the writes to
    /// another file). `Ok(None)`: missing, and not `create`.
    pub fn open_in_place(&self, name: &str, create: bool) -> std::io::Result<Option<File>> {
        for _ in 0..2 {
            if self.entry(name)? == Entry::Absent {
                if !create {
                    return Ok(None);
                }
                match rustix::fs::openat(
                    self.fd.as_fd(),
                    name,
                    OFlags::RDWR
                        | OFlags::CREATE
                        | OFlags::EXCL
                        | OFlags::NOFOLLOW
                        | OFlags::CLOEXEC,
                    Mode::from_raw_mode(0o666),
                ) {
                    Ok(fd) => return Ok(Some(File::from(fd))),
                    // Made meanwhile: judge what is there now.
                    Err(Errno::EXIST) => continue,
                    Err(e) => return Err(io(e)),
                }
            }
            let fd = self.open_regular(name, OFlags::RDWR)?;
            let st = rustix::fs::fstat(&fd).map_err(io)?;
            if st.st_nlink != 1 {
                return Err(refuse(&self.join(name), Why::HardLinked));
            }
            return Ok(Some(File::from(fd)));
        }
        Err(refuse(&self.join(name), Why::Changed))
    }

    /// Open the regular file `name` (never a link; a device or FIFO put there meanwhile
    /// is not opened for long: it is refused once seen).
    fn open_regular(&self, name: &str, mode: OFlags) -> std::io::Result<OwnedFd> {
        let fd = rustix::fs::openat(
            self.fd.as_fd(),
            name,
            mode | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::LOOP => self.refusal(name, FileType::Symlink),
            e => io(e),
        })?;
        let st = rustix::fs::fstat(&fd).map_err(io)?;
        let t = FileType::from_raw_mode(st.st_mode);
        if t != FileType::RegularFile {
            return Err(self.refusal(name, t));
        }
        // Regular files ignore O_NONBLOCK; clear it anyway so reads and writes block.
        rustix::fs::fcntl_setfl(&fd, OFlags::empty()).map_err(io)?;
        Ok(fd)
    }

    /// Remove the file (or link) `name`; a missing one is no error.
    pub fn remove_file(&self, name: &str) -> std::io::Result<()> {
        check_name(name);
        match rustix::fs::unlinkat(self.fd.as_fd(), name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(io(e)),
        }
    }

    /// Remove the subdirectory `name` and everything in it, never following a link
    /// (a link is removed, not what it points at); a missing one is no error.
    pub fn remove_dir_all(&self, name: &str) -> std::io::Result<()> {
        check_name(name);
        match lstat_at(self.fd.as_fd(), name.as_ref())? {
            None => return Ok(()),
            Some(st) if FileType::from_raw_mode(st.st_mode) != FileType::Directory => {
                return self.remove_file(name)
            }
            Some(_) => {}
        }
        let sub = self.open_subdir(name)?;
        sub.empty()?;
        match rustix::fs::unlinkat(self.fd.as_fd(), name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(io(e)),
        }
    }

    /// Remove everything in the directory, never following a link.
    fn empty(&self) -> std::io::Result<()> {
        let mut dir = rustix::fs::Dir::read_from(self.fd.as_fd()).map_err(io)?;
        let mut names = Vec::new();
        while let Some(e) = dir.read() {
            let n = e.map_err(io)?.file_name().to_owned();
            if n.to_bytes() != b"." && n.to_bytes() != b".." {
                names.push(n);
            }
        }
        for n in names {
            let st = rustix::fs::statat(self.fd.as_fd(), &n, AtFlags::SYMLINK_NOFOLLOW);
            let flags = match st {
                Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Directory => {
                    let fd = rustix::fs::openat(
                        self.fd.as_fd(),
                        &n,
                        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    )
                    .map_err(io)?;
                    OutputDir {
                        fd: Arc::new(fd),
                        path: self.path.clone(),
                    }
                    .empty()?;
                    AtFlags::REMOVEDIR
                }
                _ => AtFlags::empty(),
            };
            match rustix::fs::unlinkat(self.fd.as_fd(), &n, flags) {
                Ok(()) | Err(Errno::NOENT) => {}
                Err(e) => return Err(io(e)),
            }
        }
        Ok(())
    }

    /// The names in the directory (not `.` and `..`), sorted; names that are not
    /// UTF-8 are left out (storbench makes none).
    pub fn names(&self) -> std::io::Result<Vec<String>> {
        let mut dir = rustix::fs::Dir::read_from(self.fd.as_fd()).map_err(io)?;
        let mut out = Vec::new();
        while let Some(e) = dir.read() {
            let e = e.map_err(io)?;
            if let Ok(n) = e.file_name().to_str() {
                if n != "." && n != ".." {
                    out.push(n.to_owned());
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// fsync the directory (makes renames and new names durable).
    pub fn sync(&self) -> std::io::Result<()> {
        rustix::fs::fsync(self.fd.as_fd()).map_err(io)
    }
}

impl std::os::fd::AsFd for OutputDir {
    /// The directory's descriptor: checks of the directory itself (owner, mode) go
    /// through it, never through its path again.
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}
