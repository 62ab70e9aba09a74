//! Which files storbench wrote: every output [`super::AtomicFile`] commits carries the
//! xattr `user.storbench.output`, holding the file's identity as it was written:
//! device, inode number, birth time, size and modification time. A file is
//! storbench's only while the xattr matches the file itself:
//!
//! - a copy that kept its xattrs (`cp -a`, `rsync -X`) has another inode: not ours;
//! - a file the user changed since (an edit, an append, `touch`) has another size or
//!   modification time: not ours any more;
//! - a new file at the path of a deleted output has no xattr (xattrs go with the
//!   inode, so a reused inode number brings none).
//!
//! Where a filesystem keeps no user xattrs (vfat, some NFS exports, tmpfs before Linux
//! 6.6), nothing is marked: every existing file there counts as the user's, and
//! replacing it needs `--overwrite` each time. Nothing else is trusted: not a file's
//! name, not its content (a Parquet footer or a JSON field anyone can write).

use rustix::fs::{AtFlags, Statx, StatxFlags};
use std::os::fd::AsFd;

const XATTR: &str = "user.storbench.output";
/// First word of a marker; another word (a later format) does not count.
const VERSION: &str = "storbench-output/1";

/// A file by device and inode number: how inputs and outputs are compared (never by
/// the path: `./x.csv`, a hard link or a symlink name the same file differently).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileKey {
    pub dev: u64,
    pub ino: u64,
}

impl FileKey {
    /// The file open as `fd`.
    pub fn of(fd: impl AsFd) -> std::io::Result<FileKey> {
        let st = rustix::fs::fstat(fd)?;
        Ok(FileKey::from_stat(&st))
    }

    pub(crate) fn from_stat(st: &rustix::fs::Stat) -> FileKey {
        FileKey {
            dev: st.st_dev,
            ino: st.st_ino,
        }
    }
}

fn statx_of(fd: impl AsFd) -> std::io::Result<Statx> {
    Ok(rustix::fs::statx(
        fd,
        "",
        AtFlags::EMPTY_PATH,
        StatxFlags::BASIC_STATS | StatxFlags::BTIME,
    )?)
}

/// The marker of the file as it is now.
fn value(st: &Statx) -> String {
    let btime = if st.stx_mask & StatxFlags::BTIME.bits() != 0 {
        format!("{}.{:09}", st.stx_btime.tv_sec, st.stx_btime.tv_nsec)
    } else {
        "-".into()
    };
    format!(
        "{VERSION} dev={}:{} ino={} btime={btime} size={} mtime={}.{:09}",
        st.stx_dev_major,
        st.stx_dev_minor,
        st.stx_ino,
        st.stx_size,
        st.stx_mtime.tv_sec,
        st.stx_mtime.tv_nsec
    )
}

/// Mark the open file `fd` as storbench's, once its last byte is written. Best effort:
/// a filesystem without user xattrs leaves it unmarked (see the module doc).
pub(crate) fn mark(fd: impl AsFd) {
    let fd = fd.as_fd();
    if let Ok(st) = statx_of(fd) {
        let v = value(&st);
        let _ = rustix::fs::fsetxattr(fd, XATTR, v.as_bytes(), rustix::fs::XattrFlags::empty());
    }
}

/// Whether the open regular file `fd` is one storbench wrote and nobody changed since.
pub(crate) fn is_marked(fd: impl AsFd) -> bool {
    let fd = fd.as_fd();
    let Ok(st) = statx_of(fd) else {
        return false;
    };
    let mut buf = [0u8; 256];
    match rustix::fs::fgetxattr(fd, XATTR, &mut buf[..]) {
        Ok(n) => buf[..n] == *value(&st).as_bytes(),
        Err(_) => false,
    }
}

/// Whether files in `dir` take user xattrs (tests that need the marker skip without).
#[cfg(test)]
pub(crate) fn xattrs_work(dir: &std::path::Path) -> bool {
    let probe = dir.join(".xattr-probe");
    let f = std::fs::File::create(&probe).unwrap();
    let ok = rustix::fs::fsetxattr(&f, "user.probe", b"1", rustix::fs::XattrFlags::empty()).is_ok();
    std::fs::remove_file(&probe).unwrap();
    ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// The marker speaks for the file it was set on, as written: not for a copy that
    /// kept it, nor for the file once changed.
    #[test]
    fn a_marker_holds_only_for_the_unchanged_file_it_was_set_on() {
        let d = tempfile::tempdir().unwrap();
        if !xattrs_work(d.path()) {
            return eprintln!("skipped: no user xattrs on {}", d.path().display());
        }
        let p = d.path().join("out.csv");
        let mut f = std::fs::File::create(&p).unwrap();
        f.write_all(b"a,b\n").unwrap();
        mark(&f);
        assert!(is_marked(&f));
        assert!(is_marked(std::fs::File::open(&p).unwrap()));
        // A copy that kept the xattr (what `cp -a` does): another inode.
        let copy = d.path().join("copy.csv");
        std::fs::copy(&p, &copy).unwrap();
        let c = std::fs::File::options()
            .read(true)
            .write(true)
            .open(&copy)
            .unwrap();
        let mut v = [0u8; 256];
        let n = rustix::fs::fgetxattr(&f, XATTR, &mut v[..]).unwrap();
        rustix::fs::fsetxattr(&c, XATTR, &v[..n], rustix::fs::XattrFlags::empty()).unwrap();
        assert!(!is_marked(&c), "a copy passed as storbench's");
        // The user appends a line: no longer storbench's.
        let mut a = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        a.write_all(b"my note\n").unwrap();
        assert!(!is_marked(&f), "an edited file passed as storbench's");
    }
}
