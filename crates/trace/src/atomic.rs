//! Every output file storbench writes (traces, ios.parquet, series, result.json, logs,
//! report.html, images, exports, run state) goes through [`AtomicFile`]: written to a
//! temporary file beside its final path, flushed to disk, then renamed over it. A
//! reader, a crash or a full disk sees the old file or the new one, never a torn one;
//! a writer that fails or is dropped removes its temporary file.
//!
//! The temporary file is `DIR/.NAME.tmp.PID.N` (N counts this process's files), so two
//! processes writing the same path do not write into each other's temporary file; the
//! last rename wins, whole. One helper, so the rule holds everywhere.
//!
//! Only regular files are replaced this way. A path that is a symlink is followed (the
//! file it points at is replaced, not the link); a path that is something else (a
//! device such as /dev/stdout or /dev/full, a FIFO) is written in place, as it cannot
//! be replaced: renaming over /dev/full would put a regular file where the device was.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A file being written; it appears at its path only on [`AtomicFile::commit`].
#[derive(Debug)]
pub struct AtomicFile {
    path: PathBuf,
    /// The temporary file; empty when writing in place (not a regular file) or once
    /// committed.
    tmp: PathBuf,
    file: Option<File>,
}

/// Where to write `path`: the regular file a symlink points at, or `None` when the
/// path exists and is not a regular file (written in place).
fn destination(path: &Path) -> std::io::Result<Option<PathBuf>> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(Some(std::fs::canonicalize(path)?)),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // A dangling symlink: write where it points.
            match std::fs::read_link(path) {
                Ok(t) => Ok(Some(path.parent().unwrap_or(Path::new(".")).join(t))),
                Err(_) => Ok(Some(path.to_path_buf())),
            }
        }
        Err(e) => Err(e),
    }
}

/// Counts temporary files made by this process (their names must differ).
static SEQ: AtomicU64 = AtomicU64::new(0);

/// The temporary path for `path`: `DIR/.NAME.tmp.PID.N`.
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{name}.tmp.{}.{n}", std::process::id()))
}

impl AtomicFile {
    /// Start writing `path` (its directory must exist). Nothing appears at `path` yet
    /// (unless it is a device or FIFO, written in place).
    pub fn create(path: &Path) -> std::io::Result<AtomicFile> {
        let Some(dest) = destination(path)? else {
            let file = std::fs::OpenOptions::new().write(true).open(path)?;
            return Ok(AtomicFile {
                path: path.to_path_buf(),
                tmp: PathBuf::new(),
                file: Some(file),
            });
        };
        let tmp = temp_path(&dest);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        Ok(AtomicFile {
            path: dest,
            tmp,
            file: Some(file),
        })
    }

    /// Whether the file is written in place (a device or FIFO), not replaced.
    pub fn in_place(&self) -> bool {
        self.tmp.as_os_str().is_empty()
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path being written: the temporary file, or the path itself when written
    /// in place.
    pub fn temp(&self) -> &Path {
        if self.in_place() {
            &self.path
        } else {
            &self.tmp
        }
    }

    /// The open temporary file.
    pub fn file(&mut self) -> &mut File {
        self.file.as_mut().expect("open until commit")
    }

    /// Hand the open temporary file over (a writer that owns its sink), keeping the
    /// right to commit or remove it by name.
    pub fn take_file(&mut self) -> File {
        self.file.take().expect("taken once")
    }

    /// fsync, rename over the final path, fsync the directory (in place: flush only).
    pub fn commit(mut self) -> std::io::Result<()> {
        if self.in_place() {
            if let Some(mut f) = self.file.take() {
                f.flush()?;
            }
            return Ok(());
        }
        if let Some(f) = self.file.take() {
            f.sync_all()?;
        } else {
            File::open(&self.tmp)?.sync_all()?;
        }
        std::fs::rename(&self.tmp, &self.path)?;
        // The rename is now the file's: nothing to remove on drop.
        self.tmp = PathBuf::new();
        sync_dir(&self.path);
        Ok(())
    }
}

/// fsync the directory holding `path` (makes a rename durable; some filesystems
/// refuse, which only matters for power loss).
fn sync_dir(path: &Path) {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if let Ok(d) = File::open(parent) {
        let _ = d.sync_all();
    }
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
        if !self.in_place() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Write `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn appears_whole_on_commit_and_leaves_nothing_when_dropped() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("result.json");
        std::fs::write(&p, b"old").unwrap();
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"new, longer").unwrap();
        // Not yet: the old file is still whole.
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        f.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new, longer");
        assert_eq!(entries(d.path()), ["result.json"]);
        // A writer that fails half way (dropped): the old file stays, no debris.
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"torn").unwrap();
        drop(f);
        assert_eq!(std::fs::read(&p).unwrap(), b"new, longer");
        assert_eq!(entries(d.path()), ["result.json"]);
        // Two writers of one path do not share a temporary file.
        let a = AtomicFile::create(&p).unwrap();
        let b = AtomicFile::create(&p).unwrap();
        assert_ne!(a.temp(), b.temp());
    }

    /// A symlink is followed (its target replaced, the link kept); a device is written
    /// in place, never replaced by a regular file.
    #[test]
    fn symlinks_are_followed_and_devices_written_in_place() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real.json");
        std::fs::write(&real, b"old").unwrap();
        let link = d.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        // /dev/null stays the device.
        let null = Path::new("/dev/null");
        let f = AtomicFile::create(null).unwrap();
        assert!(f.in_place());
        f.commit().unwrap();
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::metadata(null)
            .unwrap()
            .file_type()
            .is_char_device());
        // /dev/full: the write fails with ENOSPC, and /dev/full stays a device.
        if Path::new("/dev/full").exists() {
            assert!(write_atomic(Path::new("/dev/full"), &[0u8; 1 << 16]).is_err());
            assert!(std::fs::metadata("/dev/full")
                .unwrap()
                .file_type()
                .is_char_device());
        }
    }

    /// A full disk: the write fails, the old file stays whole. /dev/full fails every
    /// write with ENOSPC; a tmpfs of a few KiB plays the full disk where we may mount.
    #[test]
    fn a_full_disk_leaves_the_old_file_whole() {
        if !rustix::process::geteuid().is_root() {
            return eprintln!("skipped: not root (needs a tiny tmpfs)");
        }
        let d = tempfile::tempdir().unwrap();
        let mnt = d.path().join("small");
        std::fs::create_dir(&mnt).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(&mnt)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return eprintln!("skipped: cannot mount a tmpfs");
        }
        let p = mnt.join("report.html");
        write_atomic(&p, &[b'a'; 16 << 10]).unwrap();
        let e = write_atomic(&p, &vec![b'b'; 256 << 10]).unwrap_err();
        let left = entries(&mnt);
        let old = std::fs::read(&p).unwrap();
        let _ = std::process::Command::new("umount").arg(&mnt).status();
        assert_eq!(e.raw_os_error(), Some(libc_enospc()), "{e}");
        assert_eq!(old, vec![b'a'; 16 << 10], "the old report is torn");
        assert_eq!(left, ["report.html"]);
    }

    fn libc_enospc() -> i32 {
        28
    }
}
