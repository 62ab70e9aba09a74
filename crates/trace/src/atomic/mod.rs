//! Every output file storbench writes (traces, ios.parquet, series, result.json, logs,
//! report.html, images, exports, run state) goes through [`AtomicFile`]: written to a
//! temporary file beside its final path, flushed to disk, then renamed over it. A
//! reader, a crash or a full disk sees the old file or the new one, never a torn one;
//! a writer that fails or is dropped removes its temporary file.
//!
//! What an output may be is decided here, once, for every command:
//!
//! - **A block device is never an output**, named directly, through a symlink, or as
//!   `/dev/stdout` redirected to one ([`Why::BlockDevice`]).
//! - **A symbolic link is never written through** ([`Why::Symlink`]): not followed to
//!   the file it names, and a dangling link does not create its target. The one
//!   exception is a link to what the process already writes: a terminal or a FIFO
//!   (`/dev/stdout` on a terminal or a pipe, `/dev/fd/63` of a shell's `>(...)`), or
//!   whatever the shell opened as this process's standard output or error (a file:
//!   `-o /dev/stdout > out.csv`, a socket), written in place through that descriptor.
//! - **An input is never an output** ([`Why::Input`]): the inputs a command reads are
//!   given as [`FileKey`]s (device and inode of the opened file), so `x.csv`, `./x.csv`
//!   and a hard link to it are the same file. Not even `--overwrite` allows it.
//! - **A regular file storbench did not write is not replaced** ([`Why::NotOurs`])
//!   unless the command was given `--overwrite` ([`Rule::overwrite`]). Files storbench
//!   writes carry a marker (the [`marker`] module: an xattr holding the file's
//!   identity as written), so writing an output again needs no flag.
//! - A FIFO, a terminal, `/dev/null`, `/dev/zero` or `/dev/full` named as an output is
//!   written in place: renaming over it would put a regular file where it was. Any
//!   other character device is refused ([`Why::CharDevice`]): SCSI generic, tape, MTD
//!   flash and NVMe generic devices take the bytes written as commands or data.
//! - Inside a directory storbench owns (a run directory: [`OutputDir`]), files are
//!   opened relative to the directory's descriptor and never through a link; there the
//!   directory's own protocol (its lock, its state, `--replace`) decides what may be
//!   replaced, and anything but a regular file is refused.
//!
//! Nothing the checks rely on is a path looked up twice: the directory is opened once
//! and every step (the check, the temporary file created with `O_EXCL | O_NOFOLLOW`,
//! the rename) is relative to its descriptor, so a directory or a link swapped in
//! meanwhile redirects nothing. The rename itself re-checks: a path that had no file
//! is renamed onto with `RENAME_NOREPLACE`, and a checked file is swapped out with
//! `RENAME_EXCHANGE` and put back (the output refused, [`Why::Changed`]) if it is not
//! the file that was checked. A refusal is an `std::io::Error` carrying a [`Refusal`]
//! (message and hint), which the CLI turns into exit status 2.
//!
//! The temporary file is `DIR/.NAME.tmp.PID.N` (N counts this process's files), so two
//! processes writing the same path do not write into each other's temporary file.

mod dir;
pub mod marker;
mod refusal;

pub use dir::{Entry, OutputDir};
pub use marker::FileKey;
pub use refusal::{find_refusal, refusal, Refusal, Why};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What a named output may replace (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct Rule {
    /// Replace a regular file storbench did not write (`--overwrite`).
    pub overwrite: bool,
    /// The files the command reads: never replaced or written.
    pub inputs: Vec<FileKey>,
}

impl Rule {
    /// The rule of a command given (or not given) `--overwrite`.
    pub fn overwrite(overwrite: bool) -> Rule {
        Rule {
            overwrite,
            inputs: Vec::new(),
        }
    }

    /// Also count the open file `f` as an input.
    pub fn input(mut self, f: impl AsFd) -> std::io::Result<Rule> {
        self.inputs.push(FileKey::of(f)?);
        Ok(self)
    }

    /// Also count the file at `path` as an input (the file the path names now: give
    /// the opened file with [`Rule::input`] where the command holds it open). A path
    /// that does not exist adds nothing.
    pub fn input_path(mut self, path: &Path) -> Rule {
        if let Ok(st) = rustix::fs::stat(path) {
            self.inputs.push(FileKey::from_stat(&st));
        }
        self
    }
}

/// How the file at a path is judged.
#[derive(Clone, Debug)]
enum Policy {
    /// A path the user named, under this rule.
    Named(Rule),
    /// A file of a directory storbench owns ([`OutputDir`]).
    Owned,
}

/// Where the bytes go.
#[derive(Debug)]
enum Dest {
    /// Written in place (a character device, a FIFO, this process's own output).
    InPlace,
    /// The temporary file `tmp` in the directory, renamed over the name at commit.
    /// `replaces`: the file checked at the name when writing began (`None`: none).
    Replace {
        tmp: OsString,
        replaces: Option<Ident>,
        done: bool,
    },
}

/// A file being written; it appears at its path only on [`AtomicFile::commit`].
#[derive(Debug)]
pub struct AtomicFile {
    /// The directory holding the output, opened once.
    dir: Arc<OwnedFd>,
    dir_path: PathBuf,
    name: OsString,
    /// The final path, as named (for messages).
    path: PathBuf,
    policy: Policy,
    dest: Dest,
    file: Option<File>,
}

/// Counts temporary files made by this process (their names must differ).
static SEQ: AtomicU64 = AtomicU64::new(0);

fn io(e: Errno) -> std::io::Error {
    e.into()
}

fn refuse(path: &Path, why: Why) -> std::io::Error {
    Refusal::new(path, why).into_io()
}

/// What a path names, without following a final link.
fn lstat_at(dir: BorrowedFd<'_>, name: &OsStr) -> std::io::Result<Option<rustix::fs::Stat>> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(st)),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(io(e)),
    }
}

fn link_target(dir: BorrowedFd<'_>, name: &OsStr) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    match rustix::fs::readlinkat(dir, name, Vec::new()) {
        Ok(t) => PathBuf::from(OsString::from_vec(t.into_bytes())),
        Err(_) => PathBuf::from("?"),
    }
}

fn kind_name(t: FileType) -> &'static str {
    match t {
        FileType::Directory => "directory",
        FileType::Socket => "socket",
        FileType::CharacterDevice => "character device",
        FileType::Fifo => "FIFO",
        FileType::BlockDevice => "block device",
        FileType::Symlink => "symbolic link",
        _ => "special file",
    }
}

/// Whether the character device `rdev` is one an output may be written to: `/dev/null`,
/// `/dev/zero`, `/dev/full` (major 1) or a terminal (majors 4, 5, and 136-143 for
/// pseudo-terminals). Other character devices are interfaces to storage or hardware
/// (SCSI generic `/dev/sg*`, tapes, MTD flash, NVMe generic `/dev/ng*`, `/dev/mem`),
/// where bytes written are commands or data: never an output.
fn terminal_or_null(rdev: u64) -> bool {
    let (major, minor) = (rustix::fs::major(rdev), rustix::fs::minor(rdev));
    matches!((major, minor), (1, 3) | (1, 5) | (1, 7)) || matches!(major, 4 | 5 | 136..=143)
}

/// This process's standard output or error, when `key` is that file.
fn own_output(key: FileKey) -> Option<OwnedFd> {
    let (out, err) = (std::io::stdout(), std::io::stderr());
    let fd = [out.as_fd(), err.as_fd()]
        .into_iter()
        .find(|fd| FileKey::of(fd).is_ok_and(|k| k == key))?;
    fd.try_clone_to_owned().ok()
}

/// `path` split into the directory to open and the name in it.
fn split(path: &Path) -> std::io::Result<(PathBuf, OsString)> {
    let name = match path.components().next_back() {
        Some(Component::Normal(n)) => n.to_owned(),
        _ => {
            return Err(refuse(path, Why::NotAFile("directory")));
        }
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, name))
}

fn open_dir(path: &Path) -> std::io::Result<OwnedFd> {
    rustix::fs::openat(
        rustix::fs::CWD,
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(io)
}

impl AtomicFile {
    /// Start writing `path` (its directory must exist), replacing nothing storbench
    /// did not write ([`Rule::default`]). Nothing appears at `path` yet (unless it is
    /// a character device or FIFO, written in place).
    pub fn create(path: &Path) -> std::io::Result<AtomicFile> {
        AtomicFile::create_with(path, &Rule::default())
    }

    /// Start writing the output `path` under `rule`.
    pub fn create_with(path: &Path, rule: &Rule) -> std::io::Result<AtomicFile> {
        let (dir_path, name) = split(path)?;
        let dir = Arc::new(open_dir(&dir_path)?);
        AtomicFile::start(dir, dir_path, name, path, Policy::Named(rule.clone()))
    }

    /// Start writing `name` in a directory storbench owns.
    fn in_dir(dir: Arc<OwnedFd>, dir_path: &Path, name: &str) -> std::io::Result<AtomicFile> {
        let path = dir_path.join(name);
        AtomicFile::start(
            dir,
            dir_path.to_path_buf(),
            name.into(),
            &path,
            Policy::Owned,
        )
    }

    fn start(
        dir: Arc<OwnedFd>,
        dir_path: PathBuf,
        name: OsString,
        path: &Path,
        policy: Policy,
    ) -> std::io::Result<AtomicFile> {
        let mut f = AtomicFile {
            dir,
            dir_path,
            name,
            path: path.to_path_buf(),
            policy,
            dest: Dest::InPlace,
            file: None,
        };
        match f.judge()? {
            Judged::InPlace(fd) => {
                f.file = Some(File::from(fd));
            }
            Judged::Replace(replaces) => {
                let (tmp, file) = f.temp_file()?;
                f.dest = Dest::Replace {
                    tmp,
                    replaces,
                    done: false,
                };
                f.file = Some(file);
            }
        }
        Ok(f)
    }

    fn inputs(&self) -> &[FileKey] {
        match &self.policy {
            Policy::Named(r) => &r.inputs,
            Policy::Owned => &[],
        }
    }

    /// What is at the name now, and what writing it means (or the refusal).
    fn judge(&self) -> std::io::Result<Judged> {
        let dir = self.dir.as_fd();
        let Some(st) = lstat_at(dir, &self.name)? else {
            return Ok(Judged::Replace(None));
        };
        let key = FileKey::from_stat(&st);
        let path = &self.path;
        if self.inputs().contains(&key) {
            return Err(refuse(path, Why::Input));
        }
        let named = matches!(self.policy, Policy::Named(_));
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => {
                let allowed = match &self.policy {
                    Policy::Owned => true,
                    Policy::Named(rule) => rule.overwrite || self.is_ours(key),
                };
                if !allowed {
                    return Err(refuse(path, Why::NotOurs));
                }
                Ok(Judged::Replace(ident_at(dir, &self.name)?))
            }
            FileType::BlockDevice => Err(refuse(path, Why::BlockDevice)),
            FileType::Symlink if named => self.through_link(),
            FileType::Symlink => Err(refuse(path, Why::Symlink(link_target(dir, &self.name)))),
            t @ (FileType::CharacterDevice | FileType::Fifo) if named => {
                self.may_write_in_place(&st)?;
                let fd = rustix::fs::openat(
                    dir,
                    &self.name,
                    OFlags::WRONLY | OFlags::NOCTTY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
                    Mode::empty(),
                )
                .map_err(io)?;
                self.opened_in_place(fd, t)
            }
            t => Err(refuse(path, Why::NotAFile(kind_name(t)))),
        }
    }

    /// A named output that is a link: written in place when it leads to what the
    /// process already writes (a character device, a FIFO, its own standard output or
    /// error), refused otherwise.
    fn through_link(&self) -> std::io::Result<Judged> {
        let dir = self.dir.as_fd();
        let link = || refuse(&self.path, Why::Symlink(link_target(dir, &self.name)));
        let Ok(st) = rustix::fs::statat(dir, &self.name, AtFlags::empty()) else {
            return Err(link());
        };
        let t = FileType::from_raw_mode(st.st_mode);
        self.may_write_in_place(&st)?;
        if t != FileType::Directory {
            if let Some(fd) = own_output(FileKey::from_stat(&st)) {
                return self.opened_in_place(fd, t);
            }
        }
        match t {
            FileType::CharacterDevice | FileType::Fifo => {
                let fd = rustix::fs::openat(
                    dir,
                    &self.name,
                    OFlags::WRONLY | OFlags::NOCTTY | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .map_err(io)?;
                self.opened_in_place(fd, t)
            }
            _ => Err(link()),
        }
    }

    /// What is written in place is never a block device, an input, or a character
    /// device other than a terminal or `/dev/null`, `/dev/zero`, `/dev/full`.
    fn may_write_in_place(&self, st: &rustix::fs::Stat) -> std::io::Result<()> {
        match FileType::from_raw_mode(st.st_mode) {
            FileType::BlockDevice => return Err(refuse(&self.path, Why::BlockDevice)),
            FileType::CharacterDevice if !terminal_or_null(st.st_rdev) => {
                return Err(refuse(&self.path, Why::CharDevice))
            }
            _ => {}
        }
        if self.inputs().contains(&FileKey::from_stat(st)) {
            return Err(refuse(&self.path, Why::Input));
        }
        Ok(())
    }

    /// `fd`, opened in place, must still be what was checked (`want`), and may be
    /// written ([`AtomicFile::may_write_in_place`]).
    fn opened_in_place(&self, fd: OwnedFd, want: FileType) -> std::io::Result<Judged> {
        let st = rustix::fs::fstat(&fd).map_err(io)?;
        self.may_write_in_place(&st)?;
        if FileType::from_raw_mode(st.st_mode) != want {
            return Err(refuse(&self.path, Why::Changed));
        }
        Ok(Judged::InPlace(fd))
    }

    /// Whether the regular file at the name (still `key`) carries storbench's marker.
    fn is_ours(&self, key: FileKey) -> bool {
        let Ok(fd) = rustix::fs::openat(
            self.dir.as_fd(),
            &self.name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            return false;
        };
        FileKey::of(&fd).is_ok_and(|k| k == key) && marker::is_marked(&fd)
    }

    /// The file now at the name, if it is a regular file this output may replace
    /// (opens nothing else: a FIFO put there is not waited on).
    fn replaceable(&self) -> std::io::Result<Option<Ident>> {
        let Some(st) = lstat_at(self.dir.as_fd(), &self.name)? else {
            return Ok(None);
        };
        let key = FileKey::from_stat(&st);
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile
            || self.inputs().contains(&key)
        {
            return Ok(None);
        }
        let allowed = match &self.policy {
            Policy::Owned => true,
            Policy::Named(rule) => rule.overwrite || self.is_ours(key),
        };
        match allowed {
            true => ident_at(self.dir.as_fd(), &self.name),
            false => Ok(None),
        }
    }

    /// A new temporary file beside the name, never through a link.
    fn temp_file(&self) -> std::io::Result<(OsString, File)> {
        let stem = self.name.to_string_lossy();
        for _ in 0..64 {
            let n = SEQ.fetch_add(1, Ordering::Relaxed);
            let tmp = OsString::from(format!(".{stem}.tmp.{}.{n}", std::process::id()));
            match rustix::fs::openat(
                self.dir.as_fd(),
                &tmp,
                OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o666),
            ) {
                Ok(fd) => return Ok((tmp, File::from(fd))),
                // Something (a file, a link) has the name: take the next one.
                Err(Errno::EXIST) => continue,
                Err(e) => return Err(io(e)),
            }
        }
        Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!(
                "{}: no free temporary file name beside it",
                self.path.display()
            ),
        ))
    }

    /// Another temporary file for the same output, judged as this one was (a writer
    /// that writes its file twice: the trace's page checksums are added in a second
    /// pass). Commit one of them; the other is removed when dropped.
    pub fn sibling(&self) -> std::io::Result<AtomicFile> {
        let replaces = match &self.dest {
            Dest::InPlace => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("{}: written in place, once", self.path.display()),
                ))
            }
            Dest::Replace { replaces, .. } => *replaces,
        };
        let (tmp, file) = self.temp_file()?;
        Ok(AtomicFile {
            dir: self.dir.clone(),
            dir_path: self.dir_path.clone(),
            name: self.name.clone(),
            path: self.path.clone(),
            policy: self.policy.clone(),
            dest: Dest::Replace {
                tmp,
                replaces,
                done: false,
            },
            file: Some(file),
        })
    }

    /// Whether the file is written in place (a device or FIFO), not replaced.
    pub fn in_place(&self) -> bool {
        matches!(self.dest, Dest::InPlace)
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path being written (for messages): the temporary file, or the path itself
    /// when written in place.
    pub fn temp(&self) -> PathBuf {
        match &self.dest {
            Dest::InPlace => self.path.clone(),
            Dest::Replace { tmp, .. } => self.dir_path.join(tmp),
        }
    }

    /// The open temporary file.
    pub fn file(&mut self) -> &mut File {
        self.file.as_mut().expect("open until commit")
    }

    /// Hand the open temporary file over (a writer that owns its sink), keeping the
    /// right to commit or remove it.
    pub fn take_file(&mut self) -> File {
        self.file.take().expect("taken once")
    }

    /// The temporary file opened again for reading (after [`AtomicFile::take_file`]).
    pub fn reopen(&self) -> std::io::Result<File> {
        let Dest::Replace { tmp, .. } = &self.dest else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{}: written in place, not reopened", self.path.display()),
            ));
        };
        let fd = rustix::fs::openat(
            self.dir.as_fd(),
            tmp,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io)?;
        Ok(File::from(fd))
    }

    /// fsync, mark as storbench's, rename over the final path (re-checked: see the
    /// module doc), fsync the directory. In place: flush only.
    pub fn commit(mut self) -> std::io::Result<()> {
        let (tmp, replaces) = match &self.dest {
            Dest::InPlace => {
                if let Some(mut f) = self.file.take() {
                    f.flush()?;
                }
                return Ok(());
            }
            Dest::Replace { tmp, replaces, .. } => (tmp.clone(), *replaces),
        };
        let f = match self.file.take() {
            Some(f) => f,
            None => self.reopen()?,
        };
        marker::mark(&f);
        f.sync_all()?;
        drop(f);
        self.rename(&tmp, replaces)?;
        if let Dest::Replace { done, .. } = &mut self.dest {
            *done = true;
        }
        let _ = rustix::fs::fsync(self.dir.as_fd());
        Ok(())
    }

    /// Rename `tmp` over the name, which must still hold `replaces` (or nothing).
    fn rename(&self, tmp: &OsStr, replaces: Option<Ident>) -> std::io::Result<()> {
        let dir = self.dir.as_fd();
        let unsupported = |e: Errno| matches!(e, Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP);
        let Some(key) = replaces else {
            return match rustix::fs::renameat_with(
                dir,
                tmp,
                dir,
                &self.name,
                RenameFlags::NOREPLACE,
            ) {
                Ok(()) => Ok(()),
                // A file appeared meanwhile: replaced only if it may be.
                Err(Errno::EXIST) => match self.replaceable()? {
                    Some(k) => self.exchange(tmp, k, false),
                    None => Err(refuse(&self.path, Why::Changed)),
                },
                Err(e) if unsupported(e) => {
                    if lstat_at(dir, &self.name)?.is_some() {
                        return Err(refuse(&self.path, Why::Changed));
                    }
                    rustix::fs::renameat(dir, tmp, dir, &self.name).map_err(io)
                }
                Err(e) => Err(io(e)),
            };
        };
        self.exchange(tmp, key, true)
    }

    /// Swap `tmp` with the file at the name, which must be `key`: anything else is put
    /// back. `retry`: the file may have gone meanwhile (then renamed onto nothing).
    fn exchange(&self, tmp: &OsStr, key: Ident, retry: bool) -> std::io::Result<()> {
        let dir = self.dir.as_fd();
        match rustix::fs::renameat_with(dir, tmp, dir, &self.name, RenameFlags::EXCHANGE) {
            Ok(()) => {
                let old = ident_at(dir, tmp)?;
                if old == Some(key) {
                    let _ = rustix::fs::unlinkat(dir, tmp, AtFlags::empty());
                    return Ok(());
                }
                // Not the file checked: put it back where it was.
                rustix::fs::renameat_with(dir, tmp, dir, &self.name, RenameFlags::EXCHANGE)
                    .map_err(io)?;
                Err(refuse(&self.path, Why::Changed))
            }
            Err(Errno::NOENT) if retry => self.rename(tmp, None),
            Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {
                let now = ident_at(dir, &self.name)?;
                if now.is_some() && now != Some(key) {
                    return Err(refuse(&self.path, Why::Changed));
                }
                rustix::fs::renameat(dir, tmp, dir, &self.name).map_err(io)
            }
            Err(e) => Err(io(e)),
        }
    }
}

/// What a judged name means.
enum Judged {
    InPlace(OwnedFd),
    Replace(Option<Ident>),
}

/// A file as the rename checks it again: device, inode, type and birth time (an
/// inode number alone is given to the next file made, a link planted included).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ident {
    key: FileKey,
    file_type: u16,
    btime: Option<(i64, u32)>,
}

fn ident_at(dir: BorrowedFd<'_>, name: &OsStr) -> std::io::Result<Option<Ident>> {
    use rustix::fs::StatxFlags;
    let st = match rustix::fs::statx(
        dir,
        name,
        AtFlags::SYMLINK_NOFOLLOW,
        StatxFlags::TYPE | StatxFlags::INO | StatxFlags::BTIME,
    ) {
        Ok(st) => st,
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    let has_btime = st.stx_mask & StatxFlags::BTIME.bits() != 0;
    Ok(Some(Ident {
        key: FileKey {
            dev: rustix::fs::makedev(st.stx_dev_major, st.stx_dev_minor),
            ino: st.stx_ino,
        },
        file_type: st.stx_mode & 0o170000,
        btime: has_btime.then_some((st.stx_btime.tv_sec, st.stx_btime.tv_nsec)),
    }))
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file().write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file().flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let Dest::Replace {
            tmp, done: false, ..
        } = &self.dest
        {
            let _ = rustix::fs::unlinkat(self.dir.as_fd(), tmp, AtFlags::empty());
        }
    }
}

/// Write `bytes` to `path` atomically, replacing nothing storbench did not write.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, bytes, &Rule::default())
}

/// Write `bytes` to the output `path` atomically, under `rule`.
pub fn write_atomic_with(path: &Path, bytes: &[u8], rule: &Rule) -> std::io::Result<()> {
    let mut f = AtomicFile::create_with(path, rule)?;
    f.write_all(bytes)?;
    f.commit()
}

#[cfg(test)]
mod tests;
