//! tracefs: finding (or mounting) it, and a private tracing instance that is removed on
//! every exit.
//!
//! Everything the recorder sets (clock, buffer size, overwrite mode, event filters and
//! enables) is set inside its own instance `instances/storbench-<pid>-<n>`, so the
//! top-level buffer and other tools' instances are never touched. Dropping [`Instance`]
//! turns tracing off and removes the directory (the kernel frees the buffers with it);
//! dropping [`Tracefs`] unmounts tracefs if this process mounted it and nobody else
//! uses it.

use crate::RecordError;
use std::ffi::CString;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where tracefs is mounted when nobody has mounted it.
pub const DEFAULT_MOUNT: &str = "/sys/kernel/tracing";

/// A tracefs mount, unmounted on drop if this process mounted it.
#[derive(Debug)]
pub struct Tracefs {
    root: PathBuf,
    mounted_by_us: bool,
}

fn io_err(what: &str, path: &Path, source: io::Error) -> RecordError {
    RecordError::Io {
        what: what.to_owned(),
        path: path.to_owned(),
        source,
    }
}

/// Reads a tracefs text file. Reads are large on purpose: some tracefs files
/// (`events/header_page` on Linux 6.18) return only their first read's worth to a
/// small reader, so `read_to_string` (whose first probe read is 32 bytes) loses the rest.
pub fn read_text(path: &Path) -> io::Result<String> {
    const MAX_BYTES: usize = 16 << 20;
    let mut f = fs::File::open(path)?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match f.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
        if out.len() > MAX_BYTES {
            return Err(io::Error::other(format!("more than {MAX_BYTES} bytes")));
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The mount point of the first tracefs in `/proc/self/mountinfo`.
fn find_mount() -> Option<PathBuf> {
    let info = fs::read_to_string("/proc/self/mountinfo").ok()?;
    for line in info.lines() {
        // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS] - FSTYPE SOURCE SUPEROPTS
        let (left, right) = line.split_once(" - ")?;
        if right.split_whitespace().next() == Some("tracefs") {
            let mp = left.split_whitespace().nth(4)?;
            // Octal escapes (\040 for space) in mount points.
            return Some(PathBuf::from(unescape_mount(mp)));
        }
    }
    None
}

fn unescape_mount(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

impl Tracefs {
    /// Finds tracefs, or mounts it at [`DEFAULT_MOUNT`]. Needs root.
    pub fn open() -> Result<Tracefs, RecordError> {
        if !is_root() {
            return Err(RecordError::NotRoot);
        }
        if let Some(root) = find_mount() {
            return Ok(Tracefs {
                root,
                mounted_by_us: false,
            });
        }
        let target = Path::new(DEFAULT_MOUNT);
        let c_target = CString::new(DEFAULT_MOUNT).expect("no NUL");
        // SAFETY: all pointers are valid NUL-terminated strings that outlive the call;
        // a null data pointer is allowed for tracefs.
        let rc = unsafe {
            libc::mount(
                c"nodev".as_ptr(),
                c_target.as_ptr(),
                c"tracefs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            )
        };
        if rc != 0 {
            return Err(RecordError::NoTracefs {
                detail: format!(
                    "tracefs is not mounted and mounting it on {} failed: {}",
                    target.display(),
                    io::Error::last_os_error()
                ),
            });
        }
        Ok(Tracefs {
            root: target.to_owned(),
            mounted_by_us: true,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn mounted_by_us(&self) -> bool {
        self.mounted_by_us
    }

    pub fn read(&self, rel: &str) -> Result<String, RecordError> {
        let p = self.root.join(rel);
        read_text(&p).map_err(|e| io_err("reading", &p, e))
    }
}

impl Drop for Tracefs {
    fn drop(&mut self) {
        if !self.mounted_by_us {
            return;
        }
        let Ok(c) = CString::new(self.root.as_os_str().as_encoded_bytes()) else {
            return;
        };
        // SAFETY: a valid NUL-terminated path. A plain (not lazy) unmount fails with EBUSY
        // while another process uses tracefs; then it stays mounted, which is harmless.
        let rc = unsafe { libc::umount2(c.as_ptr(), 0) };
        if rc != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EBUSY) {
                warn(format_args!(
                    "warning: unmounting {}: {e}",
                    self.root.display()
                ));
            }
        }
    }
}

/// Prefix of the recorder's instance names.
pub const INSTANCE_PREFIX: &str = "storbench-";

/// A private tracing instance, turned off and removed on drop.
#[derive(Debug)]
pub struct Instance {
    dir: PathBuf,
    /// What was cleaned up when it was created: instances left by killed recorders.
    cleaned: Vec<String>,
    // Dropped after the instance directory is removed (fields drop in order after
    // `Drop::drop` of the struct itself).
    tracefs: Tracefs,
}

impl Instance {
    /// Creates `instances/storbench-<pid>-<n>` (first free n), after removing instances
    /// left by storbench processes that no longer exist.
    pub fn create(tracefs: Tracefs) -> Result<Instance, RecordError> {
        let instances = tracefs.root.join("instances");
        if !instances.is_dir() {
            return Err(RecordError::NoTracefs {
                detail: format!(
                    "{} does not exist (kernel without tracing instances?)",
                    instances.display()
                ),
            });
        }
        let cleaned = remove_stale(&instances);
        let pid = std::process::id();
        for n in 0..1000 {
            let dir = instances.join(format!("{INSTANCE_PREFIX}{pid}-{n}"));
            match fs::create_dir(&dir) {
                Ok(()) => {
                    return Ok(Instance {
                        dir,
                        cleaned,
                        tracefs,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io_err("creating tracing instance", &dir, e)),
            }
        }
        Err(RecordError::NoTracefs {
            detail: format!(
                "1000 instances of pid {pid} already exist in {}",
                instances.display()
            ),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Instances left by killed recorders that were removed before this one was made,
    /// one line each (the caller says so: the user should know what was running).
    pub fn cleaned(&self) -> &[String] {
        &self.cleaned
    }

    pub fn tracefs(&self) -> &Tracefs {
        &self.tracefs
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    pub fn write(&self, rel: &str, value: &str) -> Result<(), RecordError> {
        let p = self.dir.join(rel);
        fs::write(&p, value).map_err(|e| io_err(&format!("writing `{}` to", value.trim()), &p, e))
    }

    pub fn read(&self, rel: &str) -> Result<String, RecordError> {
        let p = self.dir.join(rel);
        read_text(&p).map_err(|e| io_err("reading", &p, e))
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.dir.join(rel).exists()
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = fs::write(self.dir.join("tracing_on"), "0");
        // rmdir fails with EBUSY while a file of the instance is open (a reader that is
        // being closed); retry for up to 2 s.
        for _ in 0..200 {
            match fs::remove_dir(&self.dir) {
                Ok(()) => return,
                Err(e) if e.kind() == io::ErrorKind::NotFound => return,
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                Err(e) => {
                    warn(format_args!(
                        "warning: removing tracing instance {}: {e}",
                        self.dir.display()
                    ));
                    return;
                }
            }
        }
        warn(format_args!(
            "warning: tracing instance {} still busy; remove it with rmdir",
            self.dir.display()
        ));
    }
}

/// A warning on stderr while cleaning up; dropped when stderr is closed (a cleanup
/// must run to its end).
fn warn(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{args}");
}

/// Removes `storbench-<pid>-<n>` instances whose process is gone (a recorder killed by
/// SIGKILL cannot clean up after itself: its block events stay enabled and its ring
/// buffers allocated). Returns one line per instance found, saying what was done.
pub fn remove_stale(instances: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(rd) = fs::read_dir(instances) else {
        return out;
    };
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(INSTANCE_PREFIX))
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let kib = read_text(&e.path().join("buffer_size_kb"))
                .map(|s| s.trim().to_owned())
                .unwrap_or_else(|_| "?".into());
            let _ = fs::write(e.path().join("tracing_on"), "0");
            let name = e.path().display().to_string();
            out.push(match fs::remove_dir(e.path()) {
                Ok(()) => format!(
                    "removed tracing instance {name}, left by recorder pid {pid} (no longer running: killed?) with block events on and {kib} KiB of ring buffer per CPU"
                ),
                Err(err) => format!(
                    "tracing instance {name}, left by recorder pid {pid}, could not be removed: {err}; remove it with rmdir"
                ),
            });
        }
    }
    out
}

/// `storbench record --cleanup`: remove every instance left by a killed recorder.
/// Returns one line per instance (empty: there was none).
pub fn cleanup() -> Result<Vec<String>, RecordError> {
    let t = Tracefs::open()?;
    let instances = t.root().join("instances");
    Ok(remove_stale(&instances))
}

/// Counters of one CPU's buffer, from `per_cpu/cpuN/stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuStats {
    pub entries: u64,
    /// Events overwritten (overwrite mode) before they were read.
    pub overrun: u64,
    pub commit_overrun: u64,
    /// Events dropped because the buffer was full (no-overwrite mode).
    pub dropped_events: u64,
    pub read_events: u64,
}

impl CpuStats {
    pub fn parse(text: &str) -> CpuStats {
        let mut s = CpuStats::default();
        for line in text.lines() {
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let Ok(v) = v.trim().parse::<u64>() else {
                continue;
            };
            match k.trim() {
                "entries" => s.entries = v,
                "overrun" => s.overrun = v,
                "commit overrun" => s.commit_overrun = v,
                "dropped events" => s.dropped_events = v,
                "read events" => s.read_events = v,
                _ => {}
            }
        }
        s
    }

    pub fn lost(&self) -> u64 {
        self.overrun + self.commit_overrun + self.dropped_events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpu_stats() {
        let s = CpuStats::parse(
            "entries: 447\noverrun: 3\ncommit overrun: 1\nbytes: 32160\n\
oldest event ts:  1114.504115\nnow ts:  1114.957460\ndropped events: 5\nread events: 9\n",
        );
        assert_eq!(
            s,
            CpuStats {
                entries: 447,
                overrun: 3,
                commit_overrun: 1,
                dropped_events: 5,
                read_events: 9
            }
        );
        assert_eq!(s.lost(), 9);
    }

    #[test]
    fn unescapes_mount_points() {
        assert_eq!(unescape_mount(r"/mnt/a\040b"), "/mnt/a b");
        assert_eq!(unescape_mount(r"/x\04"), r"/x\04");
        assert_eq!(unescape_mount("/sys/kernel/tracing"), "/sys/kernel/tracing");
    }
}
