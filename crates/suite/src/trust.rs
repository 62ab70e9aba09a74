//! What a resume takes from a run directory, and what it checks first. The state file
//! names the target and carries the consent to destroy its data: whoever can change it
//! decides what a resume, often run as root, writes.
//!
//! - The run directory and `state.json` must be owned by the user resuming, and
//!   writable by no one else (not world-writable; group-writable only for the user's
//!   own group, as a umask of 002 leaves it): otherwise the resume is refused, naming
//!   the file. The state is read through the descriptor checked (`O_NOFOLLOW`).
//! - A block device target's [`EndsDigest`] (its size and a CRC-32 of its first and
//!   last MiB) is kept in the state, taken when the run starts, at every checkpoint and
//!   phase boundary, and after a run stopped by a signal. A resume whose device no
//!   longer matches (something wrote to it since, or the state names another device
//!   than the one the run wrote) needs `--destroy-data` naming the device again. A run
//!   killed outright (kill -9, power loss) during random writes may itself have
//!   written the ends after its last checkpoint: such a resume asks for the consent
//!   too, and says why.

use crate::phase::SuiteError;
use crate::state::{RunDir, RunState, StateError, STATE_FILE};
use crate::targets::{SuiteTarget, TargetOpenError};
use rustix::fs::{Mode, OFlags};
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;
use storbench_engine::safety::scan::ends_digest;
use storbench_engine::{Target, TargetError};
use storbench_trace::atomic::OutputDir;

/// Why the file `fd` (at `path`) may not decide what a resume writes, or `None`.
fn distrust(fd: BorrowedFd<'_>, path: &Path) -> Result<Option<String>, StateError> {
    let st = rustix::fs::fstat(fd).map_err(|e| StateError::Io {
        path: path.to_owned(),
        context: "checking its owner and mode",
        source: e.into(),
    })?;
    let me = rustix::process::geteuid().as_raw();
    let mode = st.st_mode & 0o7777;
    Ok(if st.st_uid != me {
        Some(format!(
            "is owned by uid {}, not by you (uid {me})",
            st.st_uid
        ))
    } else if mode & 0o002 != 0 {
        Some(format!("is writable by every user (mode {mode:04o})"))
    } else if mode & 0o020 != 0 && st.st_gid != rustix::process::getegid().as_raw() {
        Some(format!(
            "is writable by group {} (mode {mode:04o}), which is not yours",
            st.st_gid
        ))
    } else {
        None
    })
}

fn untrusted(path: &Path, why: String) -> StateError {
    StateError::Untrusted {
        path: path.to_owned(),
        message: format!(
            "{why}: a resume will not let a file others can change decide which device or file it writes"
        ),
    }
}

/// The run directory `dir` may be resumed from: owned by the user, writable by no one
/// else (checked before anything is created in it, its lock included).
pub fn check_dir(out: &OutputDir) -> Result<(), StateError> {
    match distrust(out.as_fd(), out.path())? {
        Some(why) => Err(untrusted(out.path(), why)),
        None => Ok(()),
    }
}

/// `DIR/state.json`, read through a descriptor opened without following a link and
/// checked like the directory (see the module doc).
pub fn read_state(out: &OutputDir) -> Result<RunState, StateError> {
    check_dir(out)?;
    let path = out.join(STATE_FILE);
    let fd = match rustix::fs::openat(
        out.as_fd(),
        STATE_FILE,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => {
            return Err(StateError::Missing {
                dir: out.path().to_owned(),
            })
        }
        Err(rustix::io::Errno::LOOP) => {
            return Err(untrusted(&path, "is a symbolic link".into()));
        }
        Err(e) => {
            return Err(StateError::Io {
                path,
                context: "opening",
                source: e.into(),
            })
        }
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| StateError::Io {
        path: path.clone(),
        context: "checking its owner and mode",
        source: e.into(),
    })?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(untrusted(&path, "is not a regular file".into()));
    }
    if let Some(why) = distrust(fd.as_fd(), &path)? {
        return Err(untrusted(&path, why));
    }
    let mut text = String::new();
    std::fs::File::from(fd)
        .read_to_string(&mut text)
        .map_err(|e| StateError::Io {
            path: path.clone(),
            context: "reading",
            source: e,
        })?;
    crate::state::parse_state(&text, path)
}

/// The open block device of a target opened for writing (`None` for files, simulated
/// drives and runs that only read: they need no consent).
fn block_fd(target: &SuiteTarget) -> Option<BorrowedFd<'_>> {
    match target {
        SuiteTarget::Device(t)
            if t.writable() && t.info().kind == storbench_engine::TargetKind::BlockDevice =>
        {
            Some(t.fd())
        }
        _ => None,
    }
}

/// Keeps in the state (saved with its next save) the digest of the ends of the block
/// device open as `fd` (`name` in messages), when it is one. A device that cannot be
/// read there (failing, shrunk) keeps none: its resume asks for the consent again, and
/// the run goes on to report what it measured.
pub fn note_ends(rd: &mut RunDir, fd: Option<BorrowedFd<'_>>, name: &Path) {
    let Some(fd) = fd else {
        return;
    };
    rd.state.target_ends = ends_digest(fd, name).ok();
}

/// A duplicate of a block device target's descriptor, and its name, for digests taken
/// while the engine drives the target (`None` for other targets).
pub fn ends_source(
    target: &SuiteTarget,
) -> Result<Option<(std::os::fd::OwnedFd, std::path::PathBuf)>, SuiteError> {
    let Some(fd) = block_fd(target) else {
        return Ok(None);
    };
    let name = std::path::PathBuf::from(&target.info().name);
    let dup = fd.try_clone_to_owned().map_err(|e| SuiteError::Io {
        context: format!("{}: duplicating its descriptor", name.display()),
        source: e,
    })?;
    Ok(Some((dup, name)))
}

/// [`note_ends`] of a target.
pub fn note_target_ends(rd: &mut RunDir, target: &SuiteTarget) {
    let name = target.info().name.clone();
    note_ends(rd, block_fd(target), Path::new(&name));
}

/// On a resume, before anything is written: the block device opened (the guard passed
/// it) must hold at both ends what it held at the run's last checkpoint, or `consent`
/// (`--destroy-data` given again) must name it.
pub fn check_ends(
    rd: &RunDir,
    target: &SuiteTarget,
    spec: &str,
    consent: Option<&Path>,
) -> Result<(), SuiteError> {
    let refused = |message: String, hint: String| {
        SuiteError::Target(TargetOpenError::Real {
            spec: spec.to_owned(),
            source: TargetError::Refused { message, hint },
        })
    };
    let Some(fd) = block_fd(target) else {
        if let Some(c) = consent {
            return Err(SuiteError::Invalid(format!(
                "--destroy-data={}: the run does not write to a block device (its target is {spec})",
                c.display()
            )));
        }
        return Ok(());
    };
    let name = Path::new(&target.info().name);
    if let Some(c) = consent {
        if !storbench_engine::safety::names_device(c, fd) {
            return Err(refused(
                format!(
                    "--destroy-data={} does not name the run's target device {spec}",
                    c.display()
                ),
                format!("to continue the run, pass --destroy-data={spec}"),
            ));
        }
        return Ok(());
    }
    let now = ends_digest(fd, name).map_err(|e| SuiteError::Io {
        context: format!("{}: reading its first and last MiB", name.display()),
        source: std::io::Error::other(e.to_string()),
    })?;
    let why = match rd.state.target_ends {
        Some(k) if k == now => return Ok(()),
        Some(_) => "its first or last MiB changed since the run's last checkpoint: something wrote there since (a new filesystem?), the run's state names another device than the one the run wrote, or the run was killed outright while writing there",
        None => "the run's state holds no digest of its first and last MiB to check it against",
    };
    Err(refused(
        format!("refusing to continue on {spec}: {why}"),
        format!(
            "if {spec} holds nothing you need, continue with --resume {} --destroy-data={spec}",
            rd.dir().display()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn why(path: &Path) -> Option<String> {
        let f = std::fs::File::open(path).unwrap();
        distrust(f.as_fd(), path).unwrap()
    }

    /// Issue 30: who may change a run's state decides what a resume writes. Mode 0644
    /// and 0664 of one's own group pass; world-writable, another group's writable and
    /// another user's files do not.
    #[test]
    fn state_others_can_change_is_not_trusted() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("state.json");
        std::fs::write(&p, "{}").unwrap();
        let mode = |m: u32| std::fs::set_permissions(&p, std::fs::Permissions::from_mode(m));
        mode(0o644).unwrap();
        assert_eq!(why(&p), None);
        mode(0o664).unwrap();
        assert_eq!(why(&p), None, "group-writable, the user's own group");
        mode(0o666).unwrap();
        assert!(why(&p).unwrap().contains("every user"));
        if rustix::process::geteuid().is_root() {
            mode(0o664).unwrap();
            std::os::unix::fs::chown(&p, None, Some(65534)).unwrap();
            assert!(why(&p).unwrap().contains("group 65534"));
            mode(0o644).unwrap();
            std::os::unix::fs::chown(&p, Some(65534), None).unwrap();
            assert!(why(&p).unwrap().contains("uid 65534"));
        }
    }

    /// A state file that is a symbolic link is not followed.
    #[test]
    fn state_behind_a_link_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let elsewhere = tmp.path().join("elsewhere.json");
        std::fs::write(&elsewhere, "{}").unwrap();
        let dir = tmp.path().join("run");
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.join(STATE_FILE)).unwrap();
        let out = OutputDir::open(&dir).unwrap();
        let e = read_state(&out).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
    }
}
