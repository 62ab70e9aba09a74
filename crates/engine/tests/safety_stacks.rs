//! Issue 30: the guard against what a device's name does not show. Loop devices stacked
//! on the target or beside it on one image (a mounted filesystem the target lies under),
//! a loop device's image replaced by a user's file that got the same inode number, and
//! a name that points at another device while the guard checks it. Each case destroyed
//! data before the fix; each asserts the refusal and the bytes at stake unchanged. Loop
//! devices and files are made by the test; skips with a printed reason without root,
//! losetup, mkfs.ext4 or mount.

use std::path::{Path, PathBuf};
use storbench_engine::spec::open_real_as;
use storbench_engine::testing::VecSource;
use storbench_engine::{
    open_real, run_phase, NoObserver, OpenOptions, Pacing, RunOptions, TargetError, TargetIdentity,
    TargetSpec,
};
use storbench_testkit::{sh, LoopDevice, Mounted};
use storbench_trace::Op;
use storbench_workload::NextIo;

const SIZE: u64 = 32 << 20;

/// One test of this file at a time. The guard looks for other holders of a device in
/// every process's descriptors, this test process's included: a test running beside
/// another in the same process saw the other's open loop device and was refused
/// (EBUSY, "open in process N"), the flake that failed CI runs.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn hash(path: &Path) -> u64 {
    use std::hash::Hasher;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    h.write(&std::fs::read(path).unwrap());
    h.finish()
}

fn write_opts(destroy: Option<&Path>) -> OpenOptions {
    OpenOptions {
        write: true,
        destroy_data: destroy.map(Path::to_path_buf),
        max_in_flight: 4,
        buffer_bytes: 64 << 10,
        ..OpenOptions::default()
    }
}

/// Writes 1 MiB at the start of `spec`'s target (opened as a run that continues from
/// `recorded`, when given): Ok with the identity it was opened as, Err when refused.
fn write_1m(
    spec: &TargetSpec,
    o: &OpenOptions,
    recorded: Option<&TargetIdentity>,
) -> Result<TargetIdentity, TargetError> {
    let mut t = open_real_as(spec, o, recorded)?;
    let ios: Vec<NextIo> = (0..16)
        .map(|i| NextIo {
            op: Op::Write,
            offset_bytes: i * (64 << 10),
            len_bytes: 64 << 10,
            at_ns: None,
            trace_qd: None,
        })
        .collect();
    let out = run_phase(
        &mut t,
        &mut VecSource::new(ios),
        &RunOptions::new(Pacing::FixedQd(4)),
        &mut NoObserver,
    )
    .expect("run_phase");
    assert_eq!(out.metrics.errors, 0, "{:?}", out.first_error);
    Ok(t.identity()
        .cloned()
        .expect("a real target has an identity"))
}

fn dev(p: &Path) -> TargetSpec {
    TargetSpec::BlockDevice(p.to_path_buf())
}

fn assert_in_use(r: Result<TargetIdentity, TargetError>, what: &str, needle: &str) {
    let e = r.expect_err(what);
    eprintln!("{what}: {e}");
    assert!(matches!(e, TargetError::Refused { .. }), "{what}: {e:?}");
    assert!(e.to_string().contains(needle), "{what}: {e}");
}

/// A loop device carrying ext4, mounted on a directory beside its image.
fn mounted_ext4(lo: &LoopDevice) -> Option<Mounted> {
    sh("mkfs.ext4", &["-q", "-F", lo.path_str()]).unwrap();
    Mounted::new(lo.path(), &lo.dir().join("mnt"), &[])
        .map_err(|why| eprintln!("skipped: mount not permitted here: {why}"))
        .ok()
}

/// Issue 30, data lost 5: `losetup loopA /dev/loopB`, ext4 on loopA mounted, then a run
/// on loopB with `--destroy-data=/dev/loopB` wrote under the mounted filesystem: loopB
/// has no holders and O_EXCL on it succeeds. Unmounted and closed, loopA no longer
/// keeps loopB from being written.
#[test]
fn loop_stacked_on_the_target_and_mounted_is_refused() {
    let _serial = one_at_a_time();
    let under = match LoopDevice::new(SIZE, &["mkfs.ext4", "mount"]) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let over = match LoopDevice::over(under.path()) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let Some(mnt) = mounted_ext4(&over) else {
        return;
    };
    std::fs::write(mnt.dir().join("precious"), b"the user's file").unwrap();
    sh("sync", &[]).unwrap();
    let before = hash(under.path());
    let r = write_1m(&dev(under.path()), &write_opts(Some(under.path())), None);
    assert_in_use(r, "a mounted loop stacked on the target", over.path_str());
    assert_eq!(
        hash(under.path()),
        before,
        "written under a mounted filesystem"
    );
    drop(mnt);
    // Nothing uses the loop on top any more: the device under it may be written.
    write_1m(&dev(under.path()), &write_opts(Some(under.path())), None).unwrap();
}

/// Issue 30, data lost 5: two loop devices over one image, the first mounted; a run on
/// the second (with `--destroy-data` naming it) wrote into the mounted filesystem.
#[test]
fn second_loop_over_a_mounted_image_is_refused() {
    let _serial = one_at_a_time();
    let first = match LoopDevice::new(SIZE, &["mkfs.ext4", "mount"]) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let Some(_mnt) = mounted_ext4(&first) else {
        return;
    };
    let image = first.dir().join("loop.img");
    let second = match LoopDevice::over(&image) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    sh("sync", &[]).unwrap();
    let before = hash(second.path());
    let r = write_1m(&dev(second.path()), &write_opts(Some(second.path())), None);
    assert_in_use(r, "a second loop over a mounted image", first.path_str());
    assert_eq!(hash(second.path()), before, "the mounted image was written");
}

/// Issue 30, data lost 5: a file storbench created (its own, so writable without
/// `--overwrite`) that the user then attached as a loop device and mounted was written
/// under the mounted filesystem.
#[test]
fn own_file_attached_and_mounted_is_refused() {
    let _serial = one_at_a_time();
    if let Some(why) = storbench_testkit::skip_reason(&["losetup", "mkfs.ext4", "mount"]) {
        return eprintln!("skipped: {why}");
    }
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("target.dat");
    let spec = TargetSpec::File(file.clone());
    let created = OpenOptions {
        size_bytes: Some(SIZE),
        ..write_opts(None)
    };
    drop(open_real(&spec, &created).unwrap());
    // Ours: written again without --overwrite.
    write_1m(&spec, &write_opts(None), None).unwrap();
    let lo = match LoopDevice::over(&file) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let Some(_mnt) = mounted_ext4(&lo) else {
        return;
    };
    sh("sync", &[]).unwrap();
    let before = hash(&file);
    let r = write_1m(&spec, &write_opts(None), None);
    assert_in_use(r, "own file attached and mounted", lo.path_str());
    assert_eq!(
        hash(&file),
        before,
        "the mounted filesystem's image was written"
    );
}

/// Issue 30, data lost 4: a run on a loop device is stopped, its image deleted, and a
/// user's new file given the same inode number is attached to the same loop device: the
/// backing file's path, device and inode all matched, and the resume wrote over the
/// user's file. The backing file's birth time tells them apart.
#[test]
fn resume_refuses_a_new_image_with_the_reused_inode_number() {
    let _serial = one_at_a_time();
    let outer = match LoopDevice::new(64 << 20, &["mkfs.ext4", "mount"]) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    // An ext4 of the test's own: a freed inode number is given to the next new file.
    let Some(mnt) = mounted_ext4(&outer) else {
        return;
    };
    let image = mnt.dir().join("run.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(SIZE)
        .unwrap();
    let inode = |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
    let old_inode = inode(&image);
    let lo = match LoopDevice::over(&image) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let recorded = write_1m(&dev(lo.path()), &write_opts(None), None).unwrap();
    // The same device continues.
    write_1m(&dev(lo.path()), &write_opts(None), Some(&recorded)).unwrap();

    lo.detach().unwrap();
    std::fs::remove_file(&image).unwrap();
    let users: PathBuf = mnt.dir().join("run.img");
    let precious: Vec<u8> = (0..SIZE).map(|i| (i % 251) as u8).collect();
    std::fs::write(&users, &precious).unwrap();
    if inode(&users) != old_inode {
        return eprintln!(
            "skipped: the new file got inode {} (the image's was {old_inode})",
            inode(&users)
        );
    }
    // The same /dev/loopN, as a user re-attaching would; when a test running beside
    // this one took it meanwhile, another: a loop device's number is not part of its
    // identity (a disk's number changes across reboots), its backing file is.
    let other;
    let target = match lo.attach(&users) {
        Ok(()) => lo.path(),
        Err(why) => {
            eprintln!("{why}: attaching the new file to another loop device");
            other = LoopDevice::over(&users).unwrap();
            other.path()
        }
    };
    let r = write_1m(&dev(target), &write_opts(None), Some(&recorded));
    let e = r.expect_err("a resume onto the user's file");
    eprintln!("{e}");
    assert!(matches!(e, TargetError::Refused { .. }), "{e:?}");
    assert!(e.to_string().contains("backing file"), "{e}");
    assert!(
        std::fs::read(&users).unwrap() == precious,
        "the user's file was written"
    );
}

/// Points the symlink `link` at `to` (replacing it).
fn point(link: &Path, to: &Path) {
    let tmp = link.with_extension("new");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(to, &tmp).unwrap();
    std::fs::rename(&tmp, link).unwrap();
}

/// Issue 30, data lost 3: the guard read the identity, scanned and ran blkid each by the
/// name, then opened it; a symlink flipped between a blank and an ext4 loop device got
/// the ext4 device written (1 try in 15). Now the device is opened first and checked
/// through that descriptor: a flip right after the open (the hook) changes nothing the
/// guard sees. Both ways: the ext4 device opened, then the name pointed at the blank
/// one, is refused; the blank one opened, then the name pointed at the ext4 one, is
/// passed, and the write lands on the blank device.
#[test]
fn symlink_flipped_during_the_guard_leaves_the_other_device_alone() {
    let _serial = one_at_a_time();
    use storbench_engine::safety::{guard_open_with, SecondOpinion};
    let blank = match LoopDevice::new(SIZE, &["mkfs.ext4"]) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let ext4 = match LoopDevice::new(SIZE, &[]) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    sh("mkfs.ext4", &["-q", "-F", ext4.path_str()]).unwrap();
    let (blank_before, ext4_before) = (hash(blank.path()), hash(ext4.path()));
    let link = blank.dir().join("target");
    let opinion = SecondOpinion::find();

    point(&link, ext4.path());
    let r = guard_open_with(&link, None, None, &opinion, &mut || {
        point(&link, blank.path())
    });
    let e = r.expect_err("the ext4 device opened must be refused");
    assert!(matches!(e, TargetError::Refused { .. }), "{e:?}");
    assert!(e.to_string().contains("ext2/ext3/ext4"), "{e}");

    point(&link, blank.path());
    let dev = guard_open_with(&link, None, None, &opinion, &mut || {
        point(&link, ext4.path())
    })
    .expect("the blank device opened passes");
    let want = std::fs::read_to_string(format!(
        "/sys/block/{}/dev",
        blank.path().file_name().unwrap().to_str().unwrap()
    ))
    .unwrap();
    assert_eq!(
        dev.identity().dev,
        want.trim(),
        "identity not read through the descriptor"
    );
    let mut t = storbench_engine::spec::guarded_target(dev, &write_opts(None)).unwrap();
    let ios = vec![NextIo {
        op: Op::Write,
        offset_bytes: 0,
        len_bytes: 64 << 10,
        at_ns: None,
        trace_qd: None,
    }];
    let out = run_phase(
        &mut t,
        &mut VecSource::new(ios),
        &RunOptions::new(Pacing::FixedQd(1)),
        &mut NoObserver,
    )
    .unwrap();
    assert_eq!(out.metrics.write_ios, 1, "{:?}", out.first_error);
    drop(t);
    assert_eq!(
        hash(ext4.path()),
        ext4_before,
        "the ext4 device was written"
    );
    assert_ne!(hash(blank.path()), blank_before, "the write went elsewhere");
}
