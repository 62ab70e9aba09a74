//! Test support for the integration tests that need root, loop devices or external
//! tools. Every resource is released by a guard on drop, also when a test fails, and
//! every missing prerequisite comes back as a reason to print with `skipped:`.
//!
//! ```no_run
//! let lo = match storbench_testkit::LoopDevice::new(64 << 20, &["mkfs.ext4"]) {
//!     Ok(lo) => lo,
//!     Err(why) => return eprintln!("skipped: {why}"),
//! };
//! assert!(lo.path().starts_with("/dev/loop"));
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;

/// True when running as root.
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// True when `name` is an executable on `PATH`.
pub fn have_tool(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| {
            let p = dir.join(name);
            rustix::fs::access(&p, rustix::fs::Access::EXEC_OK).is_ok() && p.is_file()
        })
    })
}

/// Why a test needing root and `tools` cannot run here, or `None` when it can.
pub fn skip_reason(tools: &[&str]) -> Option<String> {
    if !is_root() {
        return Some("not root (loop devices and mounts need root)".into());
    }
    tools
        .iter()
        .find(|t| !have_tool(t))
        .map(|t| format!("`{t}` not installed"))
}

/// Why a testkit helper could not set a device up: a test skips on it (printing it) or
/// fails with it.
#[derive(Debug)]
pub enum KitError {
    /// Not root, or a tool the test needs is missing.
    Skip(String),
    /// A command failed: the command line and its stderr.
    Command { command: String, stderr: String },
    /// A file or directory the helper makes.
    Io {
        what: String,
        source: std::io::Error,
    },
    /// A path that must go on a command line is not UTF-8.
    NotUtf8(&'static str),
    /// `losetup -d` returned and the device stayed attached.
    StillAttached(String),
}

impl std::fmt::Display for KitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KitError::Skip(why) => f.write_str(why),
            KitError::Command { command, stderr } => write!(f, "{command}: {stderr}"),
            KitError::Io { what, source } => write!(f, "{what}: {source}"),
            KitError::NotUtf8(what) => write!(f, "{what} is not UTF-8"),
            KitError::StillAttached(dev) => {
                write!(f, "{dev} still attached 30 s after losetup -d")
            }
        }
    }
}

impl std::error::Error for KitError {}

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> KitError {
    let what = what.into();
    move |source| KitError::Io { what, source }
}

/// Runs `cmd` with `args`; its stdout, or an error naming the command and its stderr.
pub fn sh(cmd: &str, args: &[&str]) -> Result<String, KitError> {
    let out = Command::new(cmd).args(args).output().map_err(io_err(cmd))?;
    if !out.status.success() {
        return Err(KitError::Command {
            command: format!("{cmd} {args:?}"),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Waits (at most 10 s) until udev, if it runs here, has handled the device events
/// queued so far. udev probes a device (blkid reads it) when it is attached and when a
/// program that opened it for writing closes it; a test that counts a device's requests
/// calls this so the probe's reads do not straddle its measurement. Without udev (or
/// `udevadm`) it returns at once.
pub fn udev_settle() {
    if have_tool("udevadm") {
        let _ = Command::new("udevadm")
            .args(["settle", "--timeout=10"])
            .output();
    }
}

/// Polls `ready` every 5 ms until it returns true, and panics naming `what` after
/// `timeout`. Tests order events by a condition, never by a sleep; the timeout only
/// bounds a hang, so make it generous. `ready` may panic itself (a child that exited
/// early).
pub fn wait_until(timeout: std::time::Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !ready() {
        assert!(start.elapsed() < timeout, "waited {timeout:?} for {what}");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// CPU time this thread has used, ns. Benchmarks on a shared machine report CPU time per
/// unit of work, since wall time depends on what else runs.
pub fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    let (sec, nsec) = (u64::try_from(t.tv_sec), u64::try_from(t.tv_nsec));
    sec.expect("CPU time is not negative") * 1_000_000_000 + nsec.expect("nanoseconds")
}

/// A loop device over a sparse image in its own temporary directory. On drop it is
/// unmounted if a test left it mounted, detached, and the image removed, in that order.
pub struct LoopDevice {
    dev: PathBuf,
    /// Attached: [`LoopDevice::detach`] clears it, so a drop never detaches a device
    /// another test took in between.
    attached: std::sync::atomic::AtomicBool,
    // Declared last: dropped after `Drop::drop` has detached the device.
    dir: tempfile::TempDir,
}

impl LoopDevice {
    /// A loop device over a fresh zeroed image of `size_bytes`, with partition
    /// scanning on (so a partition table written to it shows up as partitions).
    /// `Err` is the reason to skip: not root, `losetup` or one of `tools` missing, or
    /// no free loop device.
    pub fn new(size_bytes: u64, tools: &[&str]) -> Result<LoopDevice, KitError> {
        assert!(
            size_bytes > 0 && size_bytes.is_multiple_of(512),
            "image size {size_bytes}"
        );
        let mut needed = vec!["losetup"];
        needed.extend_from_slice(tools);
        if let Some(why) = skip_reason(&needed) {
            return Err(KitError::Skip(why));
        }
        let dir = tempfile::tempdir().map_err(io_err("temp dir"))?;
        let img = dir.path().join("loop.img");
        std::fs::File::create(&img)
            .and_then(|f| f.set_len(size_bytes))
            .map_err(io_err(format!("image {}", img.display())))?;
        let img_str = img.to_str().ok_or(KitError::NotUtf8("temp dir path"))?;
        LoopDevice::attach_free(&["-P", img_str], dir)
    }

    /// `losetup -f --show ARGS`: the first free loop device, attached, its temporary
    /// directory `dir`.
    fn attach_free(args: &[&str], dir: tempfile::TempDir) -> Result<LoopDevice, KitError> {
        let mut all = vec!["-f", "--show"];
        all.extend_from_slice(args);
        let out = sh("losetup", &all)?;
        let dev = PathBuf::from(out.trim());
        assert!(dev.starts_with("/dev/"), "losetup printed {out:?}");
        // Regression (flaky audit after CI stop 12): udev's probe of the new device
        // could still be reading it when a test starts recording or counting.
        udev_settle();
        Ok(LoopDevice {
            dev,
            attached: true.into(),
            dir,
        })
    }

    /// The device node, e.g. `/dev/loop3`.
    pub fn path(&self) -> &Path {
        &self.dev
    }

    /// The device node as text (for command lines).
    pub fn path_str(&self) -> &str {
        self.dev.to_str().expect("device paths are ASCII")
    }

    /// The temporary directory holding the image; tests may put their own files here.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A loop device over an existing file or block device `backing` (a loop stacked
    /// on another loop device, a second loop over one image). On drop it is unmounted
    /// if a test left it mounted and detached; `backing` is left alone. `Err` is the
    /// reason to skip.
    pub fn over(backing: &Path) -> Result<LoopDevice, KitError> {
        if let Some(why) = skip_reason(&["losetup"]) {
            return Err(KitError::Skip(why));
        }
        let dir = tempfile::tempdir().map_err(io_err("temp dir"))?;
        let b = backing.to_str().ok_or(KitError::NotUtf8("backing path"))?;
        LoopDevice::attach_free(&[b], dir)
    }

    /// Points this loop device at another image: [`LoopDevice::detach`], then
    /// [`LoopDevice::attach`] (what a user does with `losetup -d` then `losetup
    /// /dev/loopN other.img`).
    pub fn repoint(&self, image: &Path) -> Result<(), KitError> {
        self.detach()?;
        self.attach(image)
    }

    /// Detaches the device (`losetup -d`) and waits (at most 30 s) for a last opener
    /// (udev's probe, a killed process's close) before the kernel lets it go.
    pub fn detach(&self) -> Result<(), KitError> {
        let name = self.dev.file_name().and_then(|n| n.to_str()).unwrap();
        let backing = format!("/sys/block/{name}/loop/backing_file");
        sh("losetup", &["-d", self.path_str()])?;
        self.attached
            .store(false, std::sync::atomic::Ordering::SeqCst);
        let t0 = std::time::Instant::now();
        while Path::new(&backing).exists() {
            if t0.elapsed() > std::time::Duration::from_secs(30) {
                return Err(KitError::StillAttached(self.path_str().to_owned()));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Ok(())
    }

    /// Attaches the same `/dev/loopN`, detached, to `image`. `Err` is the reason to
    /// skip: another process took the freed device in between.
    pub fn attach(&self, image: &Path) -> Result<(), KitError> {
        let img = image.to_str().ok_or(KitError::NotUtf8("image path"))?;
        // A failure here most likely means another process took the freed device.
        sh("losetup", &[self.path_str(), img])?;
        self.attached
            .store(true, std::sync::atomic::Ordering::SeqCst);
        udev_settle();
        Ok(())
    }

    /// `MAJ,MIN` as the trace importers and ftrace print it.
    pub fn maj_min(&self) -> String {
        let name = self.dev.file_name().and_then(|n| n.to_str()).unwrap();
        let s = std::fs::read_to_string(format!("/sys/block/{name}/dev"))
            .unwrap_or_else(|e| panic!("/sys/block/{name}/dev: {e}"));
        s.trim().replacen(':', ",", 1)
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        if !self.attached.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        // Quiet: the device is usually not mounted.
        let _ = Command::new("umount").arg(&self.dev).output();
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

/// A mount, unmounted on drop.
pub struct Mounted {
    dir: PathBuf,
}

impl Mounted {
    /// Mounts `dev` on `dir` (created if missing) with `mount args... dev dir`.
    pub fn new(dev: &Path, dir: &Path, args: &[&str]) -> Result<Mounted, KitError> {
        std::fs::create_dir_all(dir).map_err(io_err(dir.display().to_string()))?;
        let mut all: Vec<&str> = args.to_vec();
        all.push(dev.to_str().ok_or(KitError::NotUtf8("device path"))?);
        all.push(dir.to_str().ok_or(KitError::NotUtf8("mount point"))?);
        sh("mount", &all)?;
        Ok(Mounted {
            dir: dir.to_owned(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_until_returns_once_ready_and_panics_after_the_timeout() {
        let mut polls = 0;
        wait_until(std::time::Duration::from_secs(5), "three polls", || {
            polls += 1;
            polls == 3
        });
        assert_eq!(polls, 3);
        let hung = std::panic::catch_unwind(|| {
            wait_until(std::time::Duration::from_millis(20), "never", || false)
        });
        let msg = *hung
            .expect_err("a condition never met must panic")
            .downcast::<String>()
            .unwrap();
        assert!(msg.contains("for never"), "{msg}");
    }

    #[test]
    fn finds_sh_and_not_a_made_up_tool() {
        assert!(have_tool("sh"));
        assert!(!have_tool("storbench-no-such-tool-0"));
        let why = skip_reason(&["storbench-no-such-tool-0"]).unwrap();
        assert!(
            why.contains("not root") || why.contains("storbench-no-such-tool-0"),
            "{why}"
        );
    }

    #[test]
    fn thread_cpu_time_grows_with_work_not_with_sleep() {
        let t0 = thread_cpu_ns();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let slept = thread_cpu_ns() - t0;
        let t1 = thread_cpu_ns();
        let mut x = 1u64;
        while thread_cpu_ns() - t1 < 20_000_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        assert!(slept < 15_000_000, "sleeping used {slept} ns of CPU");
        assert!(thread_cpu_ns() - t1 >= 20_000_000);
    }

    #[test]
    fn sh_reports_failure_with_stderr() {
        assert_eq!(sh("sh", &["-c", "echo hi"]).unwrap(), "hi\n");
        let e = sh("sh", &["-c", "echo oops >&2; exit 3"]).unwrap_err();
        assert!(e.to_string().contains("oops"), "{e}");
    }

    #[test]
    fn loop_device_is_detached_on_drop() {
        let lo = match LoopDevice::new(1 << 20, &[]) {
            Ok(lo) => lo,
            Err(why) => return eprintln!("skipped: {why}"),
        };
        let name = lo.path().file_name().unwrap().to_str().unwrap().to_owned();
        let backing = format!("/sys/block/{name}/loop/backing_file");
        let img = std::fs::read_to_string(&backing).unwrap();
        assert!(img.trim().starts_with(lo.dir().to_str().unwrap()), "{img}");
        assert_eq!(lo.maj_min().split(',').count(), 2);
        let dir = lo.dir().to_owned();
        drop(lo);
        // Detached: the loop device no longer has our image as backing file.
        //
        // Regression (flaky on machines running udev): `losetup -d` while udev's
        // blkid still has the new device open only marks it for detaching at its
        // last close, so the backing file may still read back for a moment. Wait for
        // that close; the timeout only bounds a device that is never detached.
        let t0 = std::time::Instant::now();
        loop {
            let now = std::fs::read_to_string(&backing).unwrap_or_default();
            if !now.contains(dir.to_str().unwrap()) {
                break;
            }
            assert!(
                t0.elapsed() < std::time::Duration::from_secs(30),
                "still attached 30 s after drop: {now}"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(!dir.exists(), "image directory left behind");
    }
}
