use super::marker::xattrs_work;
use super::*;
use std::os::unix::fs::symlink;

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn why(e: &std::io::Error) -> Why {
    refusal(e)
        .unwrap_or_else(|| panic!("not a refusal: {e}"))
        .why()
        .clone()
}

#[test]
fn appears_whole_on_commit_and_leaves_nothing_when_dropped() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("result.json");
    write_atomic(&p, b"old").unwrap();
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

/// Issue 30: an output path that is a symlink was followed, replacing the file it
/// points at (a dangling one created its target). Refused, with and without
/// `--overwrite`; the link and its target stay as they were.
#[test]
fn a_symlink_is_never_written_through() {
    let d = tempfile::tempdir().unwrap();
    let real = d.path().join("bashrc");
    std::fs::write(&real, b"mine").unwrap();
    let link = d.path().join("link.json");
    symlink(&real, &link).unwrap();
    for rule in [Rule::default(), Rule::overwrite(true)] {
        let e = write_atomic_with(&link, b"new", &rule).unwrap_err();
        assert!(matches!(why(&e), Why::Symlink(t) if t == real), "{e}");
        assert_eq!(std::fs::read(&real).unwrap(), b"mine");
    }
    let nowhere = d.path().join("nowhere");
    let dangling = d.path().join("dangling.json");
    symlink(&nowhere, &dangling).unwrap();
    let e = write_atomic(&dangling, b"new").unwrap_err();
    assert!(matches!(why(&e), Why::Symlink(_)), "{e}");
    assert!(!nowhere.exists());
    assert_eq!(
        entries(d.path()),
        ["bashrc", "dangling.json", "link.json"],
        "no temporary file left"
    );
}

/// A character device is written in place, never replaced by a regular file; so is a
/// link to one (`/dev/stdout` on a terminal or a pipe).
#[test]
fn devices_and_fifos_are_written_in_place() {
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
    let d = tempfile::tempdir().unwrap();
    let link = d.path().join("null-link");
    symlink(null, &link).unwrap();
    let f = AtomicFile::create(&link).unwrap();
    assert!(f.in_place());
    // A FIFO: written in place, read at the other end.
    let fifo = d.path().join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        FileType::Fifo,
        Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(&fifo).unwrap())
    };
    write_atomic(&fifo, b"through the pipe").unwrap();
    assert_eq!(reader.join().unwrap(), b"through the pipe");
}

/// Issue 30: a block device named as an output was written (a trace over an ext4
/// superblock). Refused: named directly or through a link; so is a character device
/// that is not a terminal or /dev/null.
#[test]
fn a_block_device_is_never_an_output() {
    let d = tempfile::tempdir().unwrap();
    let dev = d.path().join("blk");
    if rustix::fs::mknodat(
        rustix::fs::CWD,
        &dev,
        FileType::BlockDevice,
        Mode::from_raw_mode(0o600),
        rustix::fs::makedev(7, 250),
    )
    .is_err()
    {
        return eprintln!("skipped: cannot make a device node here (not root)");
    }
    for rule in [Rule::default(), Rule::overwrite(true)] {
        let e = AtomicFile::create_with(&dev, &rule).unwrap_err();
        assert_eq!(why(&e), Why::BlockDevice, "{e}");
    }
    let link = d.path().join("link");
    symlink(&dev, &link).unwrap();
    let e = AtomicFile::create(&link).unwrap_err();
    assert_eq!(why(&e), Why::BlockDevice, "{e}");
    // A character device that is a storage interface (SCSI generic, major 21): the
    // bytes would be commands. Refused too, directly and through a link.
    let sg = d.path().join("sg");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &sg,
        FileType::CharacterDevice,
        Mode::from_raw_mode(0o600),
        rustix::fs::makedev(21, 250),
    )
    .unwrap();
    let e = AtomicFile::create(&sg).unwrap_err();
    assert_eq!(why(&e), Why::CharDevice, "{e}");
    let sg_link = d.path().join("sg-link");
    symlink(&sg, &sg_link).unwrap();
    let e = AtomicFile::create(&sg_link).unwrap_err();
    assert_eq!(why(&e), Why::CharDevice, "{e}");
}

/// Issue 30: an existing file storbench did not write was replaced by any output.
/// Kept unless `--overwrite`; a file storbench wrote is replaced again freely; a copy
/// or an edit of it is the user's.
#[test]
fn only_files_storbench_wrote_are_replaced_without_overwrite() {
    let d = tempfile::tempdir().unwrap();
    if !xattrs_work(d.path()) {
        return eprintln!("skipped: no user xattrs on {}", d.path().display());
    }
    let p = d.path().join("trace.parquet");
    std::fs::write(&p, b"the user's").unwrap();
    let e = write_atomic(&p, b"ours").unwrap_err();
    assert_eq!(why(&e), Why::NotOurs, "{e}");
    assert_eq!(std::fs::read(&p).unwrap(), b"the user's");
    write_atomic_with(&p, b"ours", &Rule::overwrite(true)).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"ours");
    write_atomic(&p, b"ours again").unwrap();
    // Edited by the user: theirs now.
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    f.write_all(b" + my notes").unwrap();
    let e = write_atomic(&p, b"ours").unwrap_err();
    assert_eq!(why(&e), Why::NotOurs, "{e}");
    assert_eq!(std::fs::read(&p).unwrap(), b"ours again + my notes");
}

/// Issue 30: `import x.csv -o x.csv` replaced the raw trace. An input is never an
/// output, whatever name it goes by and even with `--overwrite`.
#[test]
fn an_input_is_never_an_output() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("x.csv");
    std::fs::write(&p, b"raw").unwrap();
    let input = File::open(&p).unwrap();
    let rule = Rule::overwrite(true).input(&input).unwrap();
    let alias = d.path().join("alias.csv");
    std::fs::hard_link(&p, &alias).unwrap();
    for out in [p.clone(), d.path().join(".").join("x.csv"), alias] {
        let e = write_atomic_with(&out, b"imported", &rule).unwrap_err();
        assert_eq!(why(&e), Why::Input, "{}: {e}", out.display());
    }
    assert_eq!(std::fs::read(&p).unwrap(), b"raw");
}

/// The rename cannot be redirected: a link planted at the output's name while it is
/// written is replaced (not followed) only if the name held nothing before; a file
/// put there meanwhile is kept and the output refused; a temporary name taken by a
/// link is skipped.
#[test]
fn the_rename_is_not_redirected() {
    let d = tempfile::tempdir().unwrap();
    let victim = d.path().join("victim");
    std::fs::write(&victim, b"mine").unwrap();
    // A file appears at an output's name while it is written: kept.
    let p = d.path().join("out.csv");
    let mut f = AtomicFile::create(&p).unwrap();
    f.write_all(b"ours").unwrap();
    std::fs::write(&p, b"appeared").unwrap();
    let e = f.commit().unwrap_err();
    assert_eq!(why(&e), Why::Changed, "{e}");
    assert_eq!(std::fs::read(&p).unwrap(), b"appeared");
    // A checked file swapped for a link while written: the link is put back, its
    // target untouched.
    let q = d.path().join("q.csv");
    write_atomic_with(&q, b"v1", &Rule::overwrite(true)).unwrap();
    let mut f = AtomicFile::create_with(&q, &Rule::overwrite(true)).unwrap();
    f.write_all(b"v2").unwrap();
    std::fs::remove_file(&q).unwrap();
    symlink(&victim, &q).unwrap();
    let e = f.commit().unwrap_err();
    assert_eq!(why(&e), Why::Changed, "{e}");
    assert!(std::fs::symlink_metadata(&q)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&victim).unwrap(), b"mine");
    // Temporary names taken by links: skipped, never opened through.
    let r = d.path().join("r.csv");
    let next = SEQ.load(Ordering::Relaxed);
    for n in next..next + 8 {
        symlink(
            &victim,
            d.path()
                .join(format!(".r.csv.tmp.{}.{n}", std::process::id())),
        )
        .unwrap();
    }
    write_atomic(&r, b"fresh").unwrap();
    assert_eq!(std::fs::read(&r).unwrap(), b"fresh");
    assert_eq!(std::fs::read(&victim).unwrap(), b"mine");
}

/// `-o /dev/stdout` when the shell sent standard output to a file: written in place
/// through the process's own descriptor (never replaced, never refused as the user's).
#[test]
fn own_standard_output_is_recognised_through_a_link() {
    let out = std::io::stdout();
    let key = FileKey::of(out.as_fd()).unwrap();
    assert!(own_output(key).is_some());
    let d = tempfile::tempdir().unwrap();
    let other = d.path().join("other");
    std::fs::write(&other, b"x").unwrap();
    let k = FileKey::of(File::open(&other).unwrap()).unwrap();
    assert!(own_output(k).is_none());
}

/// The run directory: files opened by the directory's descriptor, links refused
/// (files, dangling, subdirectories), journals created O_EXCL and refused when hard
/// linked, the rest replaced.
#[test]
fn an_output_directory_refuses_links_and_hard_links() {
    let d = tempfile::tempdir().unwrap();
    let victim = d.path().join("victim");
    std::fs::write(&victim, b"mine").unwrap();
    let run = OutputDir::create(&d.path().join("run")).unwrap();
    run.write("result.json", b"{}").unwrap();
    assert_eq!(run.entry("result.json").unwrap(), Entry::File);
    symlink(&victim, run.join("run_iops.1.log")).unwrap();
    let e = run.write("run_iops.1.log", b"1,2").unwrap_err();
    assert!(matches!(why(&e), Why::Symlink(_)), "{e}");
    let e = run.open_in_place("run_iops.1.log", true).unwrap_err();
    assert!(matches!(why(&e), Why::Symlink(_)), "{e}");
    let e = run.read("run_iops.1.log").unwrap_err();
    assert!(matches!(why(&e), Why::Symlink(_)), "{e}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"mine");
    // A dangling lock link creates nothing.
    let nowhere = d.path().join("nowhere");
    symlink(&nowhere, run.join("state.lock")).unwrap();
    assert!(run.open_in_place("state.lock", true).is_err());
    assert!(!nowhere.exists());
    // A subdirectory that is a link.
    let elsewhere = d.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    symlink(&elsewhere, run.join("journal")).unwrap();
    let e = run.subdir("journal").unwrap_err();
    assert!(matches!(why(&e), Why::Symlink(_)), "{e}");
    // A hard link to the user's file, written in place: refused.
    std::fs::hard_link(&victim, run.join("run.jsonl")).unwrap();
    let e = run.open_in_place("run.jsonl", true).unwrap_err();
    assert_eq!(why(&e), Why::HardLinked, "{e}");
    // Replaced atomically, a hard link only loses its name here.
    std::fs::hard_link(&victim, run.join("series.parquet")).unwrap();
    run.write("series.parquet", b"new").unwrap();
    assert_eq!(std::fs::read(&victim).unwrap(), b"mine");
    // New journals are created, existing ones opened.
    let series = run.subdir("series").unwrap();
    let mut j = series.open_in_place("a.jsonl", true).unwrap().unwrap();
    j.write_all(b"1\n").unwrap();
    assert!(series.open_in_place("b.jsonl", false).unwrap().is_none());
    assert!(series.open_in_place("a.jsonl", false).unwrap().is_some());
    // Removal never follows links.
    run.remove_file("run_iops.1.log").unwrap();
    run.remove_dir_all("journal").unwrap();
    run.remove_dir_all("series").unwrap();
    assert!(elsewhere.is_dir());
    assert_eq!(std::fs::read(&victim).unwrap(), b"mine");
    assert_eq!(
        run.names().unwrap(),
        ["result.json", "run.jsonl", "series.parquet", "state.lock"]
    );
}

/// A full disk: the write fails, the old file stays whole. A tmpfs of a few KiB plays
/// the full disk where we may mount.
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
    let e = write_atomic_with(&p, &vec![b'b'; 256 << 10], &Rule::overwrite(true)).unwrap_err();
    let left = entries(&mnt);
    let old = std::fs::read(&p).unwrap();
    let _ = std::process::Command::new("umount").arg(&mnt).status();
    assert_eq!(e.raw_os_error(), Some(28), "{e}");
    assert_eq!(old, vec![b'a'; 16 << 10], "the old report is torn");
    assert_eq!(left, ["report.html"]);
}
