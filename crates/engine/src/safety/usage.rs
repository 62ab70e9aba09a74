//! Who else uses a device or a file: mounts (this mount namespace's
//! `/proc/self/mountinfo`), swap, holders (device mapper, md, LVM), partitions and their
//! use, and loop devices, found by device number, never by a name.
//!
//! Loop devices hide use from a device's own holders and from `O_EXCL`: a loop device
//! keeps its backing file or device open without claiming it. So the guard follows the
//! stacks both ways ([`loop_users`]):
//! - up: a loop device over the target (`losetup /dev/loopA TARGET`, or over the target
//!   file) is written under whenever the target is; it counts as using the target when
//!   it is mounted, held, has a partition in use, is claimed exclusively (mounted in
//!   another mount namespace, say: the kernel refuses to open it with `O_EXCL`), is
//!   open in any process (`/proc/*/fd`), or is itself under a loop device that is, to
//!   [`MAX_DEPTH`] levels;
//! - down: when the target is a loop device, writing it writes its backing file or
//!   device, which must not be in use in any of those ways either (another loop device
//!   over the same image that is mounted; a backing device mounted or held).
//!
//! A loop device's backing comes from `LOOP_GET_STATUS64` on the loop device (its
//! backing file's device and inode, or its device number when it is a block device),
//! or, when the loop device cannot be opened, from its sysfs `loop/backing_file`.

use super::identity::{loop_status, LOOP_MAJOR};
use std::collections::{HashMap, HashSet};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

/// A device number, `(major, minor)`.
pub type DevNum = (u32, u32);

/// Loop stacks are followed this many levels up or down (a stack deeper than this is
/// not something anyone builds by hand; the bound keeps a cycle from looping).
pub const MAX_DEPTH: usize = 8;

/// The sysfs directory of a block device (`/sys/dev/block/MAJ:MIN`, resolved).
pub fn sysfs_dir(major: u32, minor: u32) -> Option<PathBuf> {
    std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()
}

fn read_dev_file(p: &Path) -> Option<DevNum> {
    let s = std::fs::read_to_string(p).ok()?;
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Partitions of a whole device: (name, device number).
pub(crate) fn partitions(sys: &Path) -> Vec<(String, DevNum)> {
    let mut v = Vec::new();
    if let Ok(rd) = std::fs::read_dir(sys) {
        for e in rd.flatten() {
            let p = e.path();
            if p.join("partition").exists() {
                if let Some(d) = read_dev_file(&p.join("dev")) {
                    v.push((e.file_name().to_string_lossy().into_owned(), d));
                }
            }
        }
    }
    v.sort();
    v
}

fn holders(sys: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(sys.join("holders"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Mount points of a device number, from /proc/self/mountinfo.
fn mount_points(dev: DevNum) -> Vec<String> {
    let want = format!("{}:{}", dev.0, dev.1);
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f.len() > 4 && f[2] == want).then(|| f[4].to_string())
        })
        .collect()
}

/// The device number of the block device at `path` now (stat, following links; `None`:
/// not a block device).
pub(crate) fn block_dev_at(path: &Path) -> Option<DevNum> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let md = std::fs::metadata(path).ok()?;
    md.file_type()
        .is_block_device()
        .then(|| (libc::major(md.rdev()), libc::minor(md.rdev())))
}

/// Is the device active swap?
fn is_swap(dev: DevNum) -> bool {
    std::fs::read_to_string("/proc/swaps")
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .any(|p| block_dev_at(Path::new(p)) == Some(dev))
}

/// Why the device `dev` is in use, each reason a phrase after "it" (`is mounted on
/// /mnt`): mounted, swap, holders, and the same of its partitions. The guard refuses a
/// target with any of these even with `--destroy-data`.
pub(crate) fn in_use(dev: DevNum) -> Vec<String> {
    let mut r = Vec::new();
    for m in mount_points(dev) {
        r.push(format!("is mounted on {m}"));
    }
    if is_swap(dev) {
        r.push("is in use as swap".into());
    }
    let Some(sys) = sysfs_dir(dev.0, dev.1) else {
        return r;
    };
    let h = holders(&sys);
    if !h.is_empty() {
        r.push(format!(
            "has holders ({}): it is in use by device mapper, md or LVM",
            h.join(", ")
        ));
    }
    for (name, p) in partitions(&sys) {
        for m in mount_points(p) {
            r.push(format!("has partition {name} mounted on {m}"));
        }
        if is_swap(p) {
            r.push(format!("has partition {name} in use as swap"));
        }
        if let Some(psys) = sysfs_dir(p.0, p.1) {
            let h = holders(&psys);
            if !h.is_empty() {
                r.push(format!("has partition {name} held by {}", h.join(", ")));
            }
        }
    }
    r
}

/// What a write to a target writes into, for [`loop_users`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Object {
    /// A block device, by number.
    Device(DevNum),
    /// A regular file: its filesystem's device and its inode.
    File { dev: DevNum, inode: u64 },
}

/// What an attached loop device writes into.
#[derive(Clone, Debug)]
struct Loop {
    /// `loop3`.
    name: String,
    dev: DevNum,
    backing: Option<Object>,
    /// The backing path the kernel reports (for messages).
    backing_path: String,
}

/// Every attached loop device (`/sys/block/loop*` with a `loop` directory).
fn attached_loops() -> Vec<Loop> {
    let mut v = Vec::new();
    let Ok(rd) = std::fs::read_dir("/sys/block") else {
        return v;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let sys = e.path();
        let Some(dev) = read_dev_file(&sys.join("dev")) else {
            continue;
        };
        let Ok(path) = std::fs::read_to_string(sys.join("loop/backing_file")) else {
            continue;
        };
        if dev.0 != LOOP_MAJOR {
            continue;
        }
        let backing_path = path.trim().to_string();
        let backing = backing_by_ioctl(&name, dev).or_else(|| backing_by_path(&backing_path));
        v.push(Loop {
            name,
            dev,
            backing,
            backing_path,
        });
    }
    v.sort_by_key(|l| l.dev);
    v
}

/// The backing of loop device `name` from `LOOP_GET_STATUS64` (opened read-only and
/// non-blocking: nothing is claimed, nothing written).
fn backing_by_ioctl(name: &str, dev: DevNum) -> Option<Object> {
    let f = open_node(name, dev, false).ok()?;
    let info = loop_status(f.as_fd()).ok()??;
    let decode = |d: u64| (libc::major(d), libc::minor(d));
    Some(if info.lo_rdevice != 0 {
        Object::Device(decode(info.lo_rdevice))
    } else {
        Object::File {
            dev: decode(info.lo_device),
            inode: info.lo_inode,
        }
    })
}

/// The backing from the path sysfs reports (a renamed file is reported by its new
/// name; a deleted one cannot be found).
fn backing_by_path(path: &str) -> Option<Object> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let md = std::fs::metadata(path).ok()?;
    let d = |x: u64| (libc::major(x), libc::minor(x));
    if md.file_type().is_block_device() {
        Some(Object::Device(d(md.rdev())))
    } else {
        Some(Object::File {
            dev: d(md.dev()),
            inode: md.ino(),
        })
    }
}

/// Opens `/dev/NAME` read-only, non-blocking (with `O_EXCL` when `exclusive`), and
/// checks it is the block device `dev`.
fn open_node(name: &str, dev: DevNum, exclusive: bool) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if exclusive {
        flags |= libc::O_EXCL;
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(Path::new("/dev").join(name))?;
    let md = f.metadata()?;
    if !md.file_type().is_block_device() || (libc::major(md.rdev()), libc::minor(md.rdev())) != dev
    {
        return Err(std::io::Error::other(format!(
            "/dev/{name} is not device {}:{}",
            dev.0, dev.1
        )));
    }
    Ok(f)
}

/// The kernel name of a block device (`loop3`, `sda1`).
fn dev_name(dev: DevNum) -> String {
    sysfs_dir(dev.0, dev.1)
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| format!("{}:{}", dev.0, dev.1))
}

/// Whether descriptor `fd` of the process at `/proc/PID` is an `O_PATH` one (a name
/// held, no I/O possible: the guard's own while it opens a device), from its fdinfo.
fn is_o_path(proc: &Path, fd: &std::ffi::OsStr) -> bool {
    const O_PATH_OCTAL: u32 = 0o10_000_000;
    std::fs::read_to_string(proc.join("fdinfo").join(fd))
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("flags:"))
                .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
        })
        .is_some_and(|flags| flags & O_PATH_OCTAL != 0)
}

/// Block devices open in processes (not as `O_PATH`): device number to `PID (command)`,
/// from every `/proc/PID/fd/N` (processes that end meanwhile are skipped).
fn open_in_processes() -> HashMap<DevNum, Vec<String>> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let mut m: HashMap<DevNum, Vec<String>> = HashMap::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return m;
    };
    for p in procs.flatten() {
        let pid = p.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let Ok(md) = std::fs::metadata(fd.path()) else {
                continue;
            };
            if md.file_type().is_block_device() && !is_o_path(&p.path(), &fd.file_name()) {
                let comm = std::fs::read_to_string(p.path().join("comm")).unwrap_or_default();
                let who = format!("process {pid} ({})", comm.trim());
                let v = m
                    .entry((libc::major(md.rdev()), libc::minor(md.rdev())))
                    .or_default();
                if !v.contains(&who) {
                    v.push(who);
                }
            }
        }
    }
    m
}

/// The processes that have the block device `dev` open, as a phrase after "it" (empty
/// when none has).
pub fn open_in(dev: DevNum) -> Vec<String> {
    open_in_processes()
        .remove(&dev)
        .map(|who| vec![format!("is open in {}", who.join(", "))])
        .unwrap_or_default()
}

/// A walk over the loop stacks around one target.
struct Walk {
    loops: Vec<Loop>,
    /// Filled on first use: scanning every process's descriptors is the costly part.
    open: Option<HashMap<DevNum, Vec<String>>>,
    /// Devices already looked at (the target first).
    seen: HashSet<DevNum>,
    reasons: Vec<String>,
}

impl Walk {
    /// Why the device `dev` (not the target) is in use, each a phrase after "which".
    fn use_of(&mut self, dev: DevNum) -> Vec<String> {
        let mut r = in_use(dev);
        if r.is_empty()
            && open_node(&dev_name(dev), dev, true)
                .is_err_and(|e| e.raw_os_error() == Some(libc::EBUSY))
        {
            r.push(
                "is claimed by another user (the kernel refuses to open it exclusively: mounted in another mount namespace, held, or opened with O_EXCL)"
                    .into(),
            );
        }
        let open = self.open.get_or_insert_with(open_in_processes);
        if let Some(who) = open.get(&dev) {
            r.push(format!("is open in {}", who.join(", ")));
        }
        r
    }

    /// Loop devices over `obj`, and what uses them, up the stack.
    fn up(&mut self, obj: Object, prefix: &str, depth: usize) {
        let over: Vec<Loop> = self
            .loops
            .iter()
            .filter(|l| l.backing == Some(obj))
            .cloned()
            .collect();
        for l in over {
            if !self.seen.insert(l.dev) {
                continue;
            }
            let p = format!("{prefix}backs /dev/{}, which ", l.name);
            for r in self.use_of(l.dev) {
                self.reasons.push(format!("{p}{r}"));
            }
            if depth < MAX_DEPTH {
                self.up(Object::Device(l.dev), &p, depth + 1);
            }
        }
    }

    /// What the loop device `dev` (or the loop device it is a partition of) writes
    /// into, and what else uses that, down the stack.
    fn down(&mut self, dev: DevNum, prefix: &str, depth: usize) {
        let whole = match sysfs_dir(dev.0, dev.1) {
            Some(s) if s.join("partition").exists() => s
                .parent()
                .and_then(|p| read_dev_file(&p.join("dev")))
                .unwrap_or(dev),
            _ => dev,
        };
        let Some(l) = self.loops.iter().find(|l| l.dev == whole).cloned() else {
            return;
        };
        let Some(backing) = l.backing else {
            return;
        };
        let p = format!("{prefix}is a loop device over {}, which ", l.backing_path);
        match backing {
            Object::Device(b) => {
                if !self.seen.insert(b) {
                    return;
                }
                for r in self.use_of(b) {
                    self.reasons.push(format!("{p}{r}"));
                }
                if depth < MAX_DEPTH {
                    self.up(backing, &p, depth + 1);
                    self.down(b, &p, depth + 1);
                }
            }
            Object::File { .. } => self.up(backing, &p, depth + 1),
        }
    }
}

/// Why writing `target` would write under something in use through loop devices (see
/// the module doc), each reason a phrase after "it": `backs /dev/loop4, which is
/// mounted on /mnt`. Empty when no loop device is attached to or under it.
pub fn loop_users(target: Object) -> Vec<String> {
    let loops = attached_loops();
    if loops.is_empty() {
        return Vec::new();
    }
    let mut w = Walk {
        loops,
        open: None,
        seen: HashSet::new(),
        reasons: Vec::new(),
    };
    if let Object::Device(d) = target {
        w.seen.insert(d);
    }
    w.up(target, "", 0);
    if let Object::Device(d) = target {
        w.down(d, "", 0);
    }
    w.reasons
}
