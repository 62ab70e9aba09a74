//! The data-loss cases of issue 19 end to end through the built binary, each on a loop
//! device or a filesystem the test makes: every one of them destroyed data before the
//! fix. Each asserts the refusal (exit status 2, a message saying why) and that the
//! bytes at stake are unchanged. Skips with a printed reason without root, loop devices
//! or the tools it needs.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;
use storbench_testkit::{have_tool, sh, wait_until, LoopDevice, Mounted};

mod common;
use common::{ok, storbench};

/// Debian's default PATH for users, and that of minimal containers: no /usr/sbin.
const USER_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

fn hash(path: &Path) -> u64 {
    use std::hash::Hasher;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    h.write(&std::fs::read(path).unwrap());
    h.finish()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `storbench ARGS` with the environment emptied but for `PATH=USER_PATH`.
fn storbench_user_path(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_storbench"))
        .env_clear()
        .env("PATH", USER_PATH)
        .args(args)
        .output()
        .expect("run storbench")
}

fn assert_refused(o: &Output, what: &str, needle: &str) {
    eprintln!("{what}: {}", stderr(o));
    assert_eq!(
        o.status.code(),
        Some(2),
        "{what}: not refused as a user error\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&o.stdout),
        stderr(o)
    );
    assert!(stderr(o).contains(needle), "{what}: {}", stderr(o));
}

/// A 1 MiB sequential write to `target` (the run that would destroy data).
fn write_args<'a>(target: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "run", "--target", target, "--rw", "write", "--bs", "64k", "--bytes", "1m", "-o", out,
    ]
}

/// Issue 19, data lost 1: `--resume` trusted the stored `--destroy-data` consent for
/// whatever device had that name. A consistency run on a loop device is killed, the
/// loop device re-pointed at another image carrying ext4, and the resume is refused,
/// naming what changed; the other image is untouched.
#[test]
fn resume_refuses_a_loop_device_repointed_at_another_image() {
    let lo = match LoopDevice::new(64 << 20, &["mkfs.ext4"]) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let dev = lo.path_str();
    let run = lo.dir().join("run");
    start_and_stop(dev, &["--destroy-data", dev], &run, false);

    // Another image, carrying ext4, now behind the same /dev/loopN.
    let other = lo.dir().join("other.img");
    std::fs::File::create(&other)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    sh("mkfs.ext4", &["-q", "-F", s(&other)]).unwrap();
    let before = hash(&other);
    if let Err(why) = lo.repoint(&other) {
        return eprintln!("skipped: {why}");
    }
    let o = storbench(&["consistency", "--resume", s(&run), "-q"]);
    assert_refused(&o, "resume on another image", "backing file");
    assert!(stderr(&o).contains("other.img"), "{}", stderr(&o));
    assert_eq!(hash(&other), before, "the other image was written");
}

/// Issue 19, data lost 2: with `blkid` off PATH the second opinion was silently
/// skipped and a minix filesystem (which the built-in scanner did not know) destroyed.
#[test]
fn minix_filesystem_is_refused_when_blkid_is_not_on_path() {
    let lo = match LoopDevice::new(32 << 20, &["mkfs.minix"]) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    sh("mkfs.minix", &[lo.path_str()]).unwrap();
    let before = hash(lo.path());
    let out = lo.dir().join("out");
    let o = storbench_user_path(&write_args(lo.path_str(), s(&out)));
    assert_refused(&o, "minix without blkid on PATH", "minix");
    assert_eq!(hash(lo.path()), before, "the minix filesystem was written");
}

/// One 512-byte-sector GPT header at `lba` whose entries start at `entries_lba`, with
/// its CRC (what `sgdisk` writes; built here so the test needs no partitioning tool).
fn gpt_header(lba: u64, alt: u64, entries_lba: u64, last: u64, entries_crc: u32) -> Vec<u8> {
    let mut h = vec![0u8; 512];
    h[0..8].copy_from_slice(b"EFI PART");
    h[8..12].copy_from_slice(&0x0001_0000u32.to_le_bytes());
    h[12..16].copy_from_slice(&92u32.to_le_bytes());
    h[24..32].copy_from_slice(&lba.to_le_bytes());
    h[32..40].copy_from_slice(&alt.to_le_bytes());
    h[40..48].copy_from_slice(&34u64.to_le_bytes());
    h[48..56].copy_from_slice(&(last - 33).to_le_bytes());
    h[56..72].copy_from_slice(&[0x42; 16]);
    h[72..80].copy_from_slice(&entries_lba.to_le_bytes());
    h[80..84].copy_from_slice(&128u32.to_le_bytes());
    h[84..88].copy_from_slice(&128u32.to_le_bytes());
    h[88..92].copy_from_slice(&entries_crc.to_le_bytes());
    let crc = crc32(&h[..92]);
    h[16..20].copy_from_slice(&crc.to_le_bytes());
    h
}

fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// Issue 19, data lost 2: a GPT whose primary header (and protective MBR) were wiped
/// but whose backup header at the last LBA is intact was written over: the guard read
/// only the start of the device.
#[test]
fn gpt_with_wiped_primary_and_intact_backup_is_refused() {
    let lo = match LoopDevice::new(32 << 20, &[]) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let last = (32u64 << 20) / 512 - 1;
    // One partition entry (a Linux filesystem over LBA 2048..=4095).
    let mut entries = vec![0u8; 128 * 128];
    entries[0..16].copy_from_slice(&[0xaf; 16]);
    entries[16..32].copy_from_slice(&[0x17; 16]);
    entries[32..40].copy_from_slice(&2048u64.to_le_bytes());
    entries[40..48].copy_from_slice(&4095u64.to_le_bytes());
    let ecrc = crc32(&entries);
    let backup = gpt_header(last, 1, last - 32, last, ecrc);
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(lo.path())
            .unwrap();
        // A filesystem's worth of data in the partition, then the backup table; the
        // start of the device (protective MBR, primary header and entries) stays zero.
        f.write_all_at(&vec![0x5a; 1 << 20], 2048 * 512).unwrap();
        f.write_all_at(&entries, (last - 32) * 512).unwrap();
        f.write_all_at(&backup, last * 512).unwrap();
        f.sync_all().unwrap();
    }
    let before = hash(lo.path());
    for (env, o) in [
        (
            "full PATH",
            storbench(&write_args(lo.path_str(), s(&lo.dir().join("a")))),
        ),
        (
            "user PATH",
            storbench_user_path(&write_args(lo.path_str(), s(&lo.dir().join("b")))),
        ),
    ] {
        assert_refused(&o, env, "GPT");
        assert!(stderr(&o).contains("backup"), "{env}: {}", stderr(&o));
    }
    assert_eq!(hash(lo.path()), before, "the device was written");
}

/// Issue 19, data lost 3: on a filesystem without user xattrs the "storbench created
/// this file" marker was a sidecar file tied to the path, so a user's file put where a
/// deleted target had been was overwritten without `--overwrite`. ramfs has no user
/// xattrs (and keeps no birth time).
#[test]
fn user_file_at_a_deleted_targets_path_is_not_overwritten() {
    if let Some(why) = storbench_testkit::skip_reason(&["mount"]) {
        return eprintln!("skipped: {why}");
    }
    let tmp = tempfile::tempdir().unwrap();
    let mnt = match Mounted::new(
        Path::new("ramfs"),
        &tmp.path().join("mnt"),
        &["-t", "ramfs"],
    ) {
        Ok(m) => m,
        Err(why) => return eprintln!("skipped: cannot mount ramfs: {why}"),
    };
    let target = mnt.dir().join("t.dat");
    let t = s(&target);
    let first = tmp.path().join("first");
    let mut args = write_args(t, s(&first));
    args.extend(["--size", "4m"]);
    ok(&storbench(&args));
    // Ours: a second run needs no flag.
    ok(&storbench(&write_args(t, s(&tmp.path().join("again")))));
    std::fs::remove_file(&target).unwrap();
    let precious = vec![0x5au8; 4 << 20];
    std::fs::write(&target, &precious).unwrap();
    let o = storbench(&write_args(t, s(&tmp.path().join("second"))));
    assert_refused(&o, "user's file at the old path", "--overwrite");
    assert!(
        std::fs::read(&target).unwrap() == precious,
        "the user's file was overwritten"
    );
    drop(mnt);
}

/// The same case where xattrs work (tmpfs): the marker lives on the inode, and a copy
/// of a target that kept its xattrs (`cp -a`) is the user's file, not ours.
#[test]
fn copied_target_with_its_xattr_is_not_ours() {
    if !have_tool("cp") {
        return eprintln!("skipped: cp not installed");
    }
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("t.dat");
    let first = tmp.path().join("first");
    let mut args = write_args(s(&target), s(&first));
    args.extend(["--size", "4m"]);
    ok(&storbench(&args));
    let copy = tmp.path().join("copy.dat");
    sh("cp", &["-a", s(&target), s(&copy)]).unwrap();
    let before = hash(&copy);
    let o = storbench(&write_args(s(&copy), s(&tmp.path().join("second"))));
    assert_refused(&o, "a copy of a target", "--overwrite");
    assert_eq!(hash(&copy), before);
}

/// Starts a consistency run on `target` (with `extra` options) in `run`, and stops it
/// once a checkpoint of its random writes is on disk: by `SIGTERM` when `signal` (a
/// clean stop, exit 130), by kill -9 otherwise.
fn start_and_stop(target: &str, extra: &[&str], run: &Path, signal: bool) {
    let mut args = vec![
        "consistency",
        "--target",
        target,
        "--duration",
        "30s",
        "--round",
        "1s",
        "--checkpoint-every",
        "200ms",
        "-q",
        "-o",
        s(run),
    ];
    args.extend_from_slice(extra);
    let mut child = Command::new(env!("CARGO_BIN_EXE_storbench"))
        .args(&args)
        .spawn()
        .unwrap();
    wait_until(
        Duration::from_secs(120),
        "a checkpoint of the random writes",
        || {
            assert!(child.try_wait().unwrap().is_none(), "the run ended early");
            let Ok(text) = std::fs::read_to_string(run.join("state.json")) else {
                return false;
            };
            let st: serde_json::Value = serde_json::from_str(&text).unwrap();
            st["phases"][2]["checkpoint"]["series_rows"].as_u64() >= Some(1)
        },
    );
    if signal {
        sh("kill", &["-TERM", &child.id().to_string()]).unwrap();
        assert_eq!(child.wait().unwrap().code(), Some(130));
    } else {
        child.kill().unwrap();
        child.wait().unwrap();
    }
}

/// Issue 30, data lost 6: `--resume` trusted state.json whole. A killed run's state was
/// edited to name another device (its path, its `--destroy-data` consent and its
/// identity, signatures included), and the resume destroyed that device's ext4. The
/// digest of the first and last MiB taken at the last checkpoint no longer matches:
/// the resume needs `--destroy-data` given again.
#[test]
fn resume_refuses_a_state_edited_to_name_another_device() {
    let run_on = match LoopDevice::new(64 << 20, &["mkfs.ext4"]) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let victim = match LoopDevice::new(64 << 20, &[]) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    sh("mkfs.ext4", &["-q", "-F", victim.path_str()]).unwrap();
    let run = run_on.dir().join("run");
    let a = run_on.path_str();
    start_and_stop(a, &["--destroy-data", a], &run, false);

    let state = run.join("state.json");
    let text = std::fs::read_to_string(&state)
        .unwrap()
        .replace(&format!("\"{a}\""), &format!("\"{}\"", victim.path_str()));
    let mut st: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut id = storbench_engine::safety::identity::DeviceIdentity::of(victim.path()).unwrap();
    id.signatures = storbench_engine::safety::signature_keys(victim.path()).unwrap();
    st["target_identity"] =
        serde_json::to_value(storbench_engine::TargetIdentity::BlockDevice(id)).unwrap();
    std::fs::write(&state, serde_json::to_vec(&st).unwrap()).unwrap();

    let before = hash(victim.path());
    let o = storbench(&["consistency", "--resume", s(&run), "-q"]);
    assert_refused(
        &o,
        "a state edited to name another device",
        "--destroy-data",
    );
    assert_eq!(hash(victim.path()), before, "the other device was written");
}

/// Issue 30, data lost 6: with no second opinion (blkid missing), data storbench cannot
/// name is taken on a resume for its own writes, so a filesystem made on the device
/// after the run stopped (`mkfs.bfs`, which the built-in scanner does not know) was
/// overwritten. The run was stopped cleanly, so its checkpoint's digest of the first
/// and last MiB is exact, and the new filesystem changed it. blkid is hidden by a bind
/// mount in a mount namespace of the resume's own.
#[test]
fn resume_without_blkid_refuses_a_new_filesystem_the_scanner_does_not_know() {
    let lo = match LoopDevice::new(64 << 20, &["mkfs.bfs", "unshare", "mount"]) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let run = lo.dir().join("run");
    start_and_stop(lo.path_str(), &[], &run, true);
    sh("mkfs.bfs", &[lo.path_str()]).unwrap();
    let before = hash(lo.path());
    let hide = "for b in /usr/sbin/blkid /sbin/blkid /usr/bin/blkid /bin/blkid; do \
                [ -e \"$b\" ] && { mount --bind /dev/null \"$b\" || exit 97; }; done; \
                [ -x /usr/sbin/blkid ] && [ -f /usr/sbin/blkid ] && exit 97; exec \"$@\"";
    let o = Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            hide,
            "sh",
        ])
        .arg(env!("CARGO_BIN_EXE_storbench"))
        .args(["consistency", "--resume", s(&run), "-q"])
        .output()
        .unwrap();
    if o.status.code() == Some(97) {
        return eprintln!("skipped: cannot hide blkid here: {}", stderr(&o));
    }
    assert_refused(&o, "a new bfs filesystem, no blkid", "--destroy-data");
    assert_eq!(hash(lo.path()), before, "the new filesystem was written");
}

/// Issue 30, data lost 6: a run directory whose state another user can write (or owns)
/// decides which device a root resume writes; it is refused, naming the file.
#[test]
fn resume_refuses_a_state_file_others_can_write() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("t.dat");
    let run = tmp.path().join("run");
    start_and_stop(s(&target), &["--size", "16m"], &run, true);
    let state = run.join("state.json");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o666)).unwrap();
    let o = storbench(&["consistency", "--resume", s(&run), "-q"]);
    assert_refused(&o, "a world-writable state file", "state.json");
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o644)).unwrap();
    if storbench_testkit::is_root() {
        std::os::unix::fs::chown(&run, Some(65534), None).unwrap();
        let o = storbench(&["consistency", "--resume", s(&run), "-q"]);
        assert_refused(&o, "a run directory owned by another user", "owned by");
    }
}

/// Issue 30: a device open exclusively elsewhere (EBUSY on `O_EXCL`) exited 1, as an
/// I/O failure; it is the guard's refusal (exit 2), saying the device is in use. And a
/// run refused after it opened the device (its result directory holds another run) left
/// the device claimed for a while, so the next run failed with EBUSY: the device is
/// released before the refused run exits.
#[test]
fn device_in_use_is_a_refusal_and_a_refused_run_releases_the_device() {
    let lo = match LoopDevice::new(32 << 20, &[]) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let dev = lo.path_str();
    // Held open for writing with O_EXCL, as another storbench run holds it.
    let held = storbench_engine::safety::guard_open(lo.path(), None, None).unwrap();
    let o = storbench(&write_args(dev, s(&lo.dir().join("held"))));
    assert_refused(&o, "a device held with O_EXCL", "in use");
    drop(held);
    let first = lo.dir().join("first");
    ok(&storbench(&write_args(dev, s(&first))));
    for i in 0..5 {
        let o = storbench(&write_args(dev, s(&first)));
        assert_refused(&o, "a directory holding another run", "already holds a run");
        let again = lo.dir().join(format!("again{i}"));
        ok(&storbench(&write_args(dev, s(&again))));
    }
}
