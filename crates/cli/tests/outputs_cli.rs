//! Issue 30, data lost 1 and 2: writes the user never named, through outputs and links.
//! Each test makes the files, links and loop devices it needs, asserts the refusal
//! (exit status 2 and a message saying why) and that the bytes at stake are unchanged;
//! every one of them lost data before the fix. Tests needing root or losetup skip with
//! a printed reason.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;
use storbench_testkit::LoopDevice;

mod common;
use common::{ok, storbench};

const SIM: &str = "sim:client-7op,capacity=256m";

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/traces")
        .join(name)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn assert_refused(o: &Output, what: &str, needle: &str) {
    assert_eq!(
        o.status.code(),
        Some(2),
        "{what}: not refused as a user error\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&o.stdout),
        stderr(o)
    );
    assert!(
        stderr(o).contains(needle),
        "{what}: no {needle:?} in: {}",
        stderr(o)
    );
}

/// `synth` of a small Heavy 2011 into `out`.
fn synth(out: &Path, extra: &[&str]) -> Output {
    let mut a = vec![
        "synth",
        "heavy-2011",
        "--scale",
        "0.001",
        "-q",
        "-o",
        s(out),
    ];
    a.extend_from_slice(extra);
    storbench(&a)
}

/// A short `run` on a simulated drive into the run directory `dir`.
fn run_sim(dir: &Path, extra: &[&str]) -> Output {
    let mut a = vec!["run", "--target", SIM, "--bytes", "4m", "-q", "-o", s(dir)];
    a.extend_from_slice(extra);
    storbench(&a)
}

/// The first `len` bytes of a file or device.
fn head(path: &Path, len: usize) -> Vec<u8> {
    use std::io::Read;
    let mut buf = vec![0u8; len];
    let mut f = std::fs::File::open(path).unwrap();
    f.read_exact(&mut buf).unwrap();
    buf
}

/// A Parquet trace imported from a fixture, and a finished run's result directory.
fn trace_and_results(dir: &Path) -> (PathBuf, PathBuf) {
    let trace = dir.join("t.parquet");
    ok(&storbench(&[
        "import",
        s(&fixture("msr_shuffled.csv")),
        "-o",
        s(&trace),
        "-q",
    ]));
    let res = dir.join("res");
    ok(&run_sim(&res, &[]));
    (trace, res)
}

/// Every command that writes a named output, with OUT in place of its output path.
fn named_output_commands(trace: &Path, res: &Path, csv: &Path) -> Vec<Vec<String>> {
    let v = |a: &[&str]| a.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        v(&["synth", "heavy-2011", "--scale", "0.001", "-q", "-o", "OUT"]),
        v(&["import", s(csv), "-q", "-o", "OUT"]),
        v(&["export", s(trace), "--format", "csv", "-o", "OUT"]),
        v(&["export", s(trace), "--format", "fio-iolog-v3", "-o", "OUT"]),
        v(&["report", s(res), "-o", "OUT"]),
    ]
}

fn with_out(cmd: &[String], out: &Path) -> Vec<String> {
    cmd.iter()
        .map(|a| {
            if a == "OUT" {
                s(out).to_owned()
            } else {
                a.clone()
            }
        })
        .collect()
}

fn run(cmd: &[String]) -> Output {
    let a: Vec<&str> = cmd.iter().map(String::as_str).collect();
    storbench(&a)
}

/// Issue 30, data lost 1: `synth -o /dev/loopN` (and import, export, report, `db --db`)
/// wrote into a device carrying ext4 and exited 0. A block device is never an output.
#[test]
fn a_block_device_named_as_an_output_is_refused() {
    let lo = match LoopDevice::new(32 << 20, &["mkfs.ext4"]) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    storbench_testkit::sh("mkfs.ext4", &["-q", "-F", lo.path_str()]).unwrap();
    let before = head(lo.path(), 4 << 20);
    let tmp = tempfile::tempdir().unwrap();
    let (trace, res) = trace_and_results(tmp.path());
    let csv = fixture("msr_shuffled.csv");
    let mut cmds = named_output_commands(&trace, &res, &csv);
    let dev = lo.path().to_path_buf();
    let with_dev: Vec<Vec<String>> = cmds.drain(..).map(|c| with_out(&c, &dev)).collect();
    for cmd in with_dev {
        let o = run(&cmd);
        assert_refused(&o, &cmd.join(" "), "block device");
        assert!(
            head(lo.path(), 4 << 20) == before,
            "{}: wrote into the device",
            cmd.join(" ")
        );
    }
    // The catalogue: SQLite took the device (size 0 to stat) for an empty database.
    let o = storbench(&["db", "--db", lo.path_str(), "add", s(&res)]);
    assert_refused(&o, "db --db /dev/loopN", "block device");
    assert!(
        head(lo.path(), 4 << 20) == before,
        "db wrote into the device"
    );
    // A link to the device is no way round it.
    let link = tmp.path().join("dev-link.parquet");
    symlink(lo.path(), &link).unwrap();
    let o = synth(&link, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // Nor is a link planted in a run directory.
    let d = tmp.path().join("rundir");
    std::fs::create_dir(&d).unwrap();
    symlink(lo.path(), d.join("run_iops.1.log")).unwrap();
    let o = run_sim(&d, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        head(lo.path(), 4 << 20) == before,
        "a link wrote into the device"
    );
    let blkid = storbench_testkit::sh("blkid", &["-p", lo.path_str()]).unwrap_or_default();
    assert!(blkid.contains("ext4"), "{blkid}");
}

/// Issue 30, data lost 1: `import x.csv -o x.csv` replaced the user's raw trace. An
/// output that is one of the inputs is refused, even with --overwrite, whatever name
/// it goes by (the same file through a hard link or another spelling of its path).
#[test]
fn an_output_that_is_one_of_the_inputs_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let csv = d.join("x.csv");
    std::fs::copy(fixture("msr_shuffled.csv"), &csv).unwrap();
    let raw = std::fs::read(&csv).unwrap();
    let alias = d.join("alias.csv");
    std::fs::hard_link(&csv, &alias).unwrap();
    let dotted = d.join(".").join("x.csv");
    for (out, extra) in [
        (&csv, None),
        (&csv, Some("--overwrite")),
        (&alias, Some("--overwrite")),
        (&dotted, Some("--overwrite")),
    ] {
        let mut a = vec!["import", s(&csv), "-q", "-o", s(out)];
        a.extend(extra);
        let o = storbench(&a);
        assert_refused(&o, &a.join(" "), "input");
        assert_eq!(
            std::fs::read(&csv).unwrap(),
            raw,
            "{}: the raw trace changed",
            a.join(" ")
        );
    }
    // export of a trace onto itself.
    let t = d.join("t.parquet");
    ok(&storbench(&["import", s(&csv), "-q", "-o", s(&t)]));
    let parquet = std::fs::read(&t).unwrap();
    let o = storbench(&[
        "export",
        s(&t),
        "--format",
        "csv",
        "--overwrite",
        "-o",
        s(&t),
    ]);
    assert_refused(&o, "export onto its input", "input");
    assert_eq!(std::fs::read(&t).unwrap(), parquet);
    // report over a result.json it reads.
    let res = d.join("res");
    ok(&run_sim(&res, &[]));
    let result = std::fs::read(res.join("result.json")).unwrap();
    let o = storbench(&[
        "report",
        s(&res),
        "--overwrite",
        "-o",
        s(&res.join("result.json")),
    ]);
    assert_refused(&o, "report onto its input", "input");
    assert_eq!(std::fs::read(res.join("result.json")).unwrap(), result);
}

/// Issue 30, data lost 1: an existing file storbench did not write was replaced by
/// every named output. Without --overwrite it is kept; a file storbench wrote is
/// replaced as before; --overwrite replaces the user's file.
#[test]
fn an_existing_file_storbench_did_not_write_is_kept_without_overwrite() {
    let tmp = tempfile::tempdir().unwrap();
    let (trace, res) = trace_and_results(tmp.path());
    let csv = fixture("msr_shuffled.csv");
    for (i, cmd) in named_output_commands(&trace, &res, &csv).iter().enumerate() {
        let out = tmp.path().join(format!("users-{i}.out"));
        std::fs::write(&out, b"the user's own file").unwrap();
        let c = with_out(cmd, &out);
        let o = run(&c);
        assert_refused(&o, &c.join(" "), "--overwrite");
        assert_eq!(
            std::fs::read(&out).unwrap(),
            b"the user's own file",
            "{}",
            c.join(" ")
        );
        let mut forced = c.clone();
        forced.push("--overwrite".into());
        ok(&run(&forced));
        assert_ne!(std::fs::read(&out).unwrap(), b"the user's own file");
        // Now storbench's own: written again without --overwrite.
        ok(&run(&c));
    }
    // The images of `report --images` too.
    let images = tmp.path().join("images");
    std::fs::create_dir(&images).unwrap();
    std::fs::write(images.join("tables.md"), b"my notes").unwrap();
    let o = storbench(&[
        "report",
        s(&res),
        "-o",
        s(&tmp.path().join("r.html")),
        "--images",
        s(&images),
    ]);
    assert_refused(&o, "report --images", "--overwrite");
    assert_eq!(
        std::fs::read(images.join("tables.md")).unwrap(),
        b"my notes"
    );
    // The catalogue: a SQLite database of another program is not storbench's.
    let other = tmp.path().join("other.db");
    let made = Command::new("sqlite3")
        .arg(&other)
        .arg("CREATE TABLE bookmarks(url TEXT); INSERT INTO bookmarks VALUES ('x');")
        .status();
    if made.is_ok_and(|s| s.success()) {
        let before = std::fs::read(&other).unwrap();
        let o = storbench(&["db", "--db", s(&other), "add", s(&res)]);
        assert_refused(&o, "db --db other.db", "not a storbench catalogue");
        assert_eq!(std::fs::read(&other).unwrap(), before);
    } else {
        eprintln!("sqlite3 not installed: the foreign-database case is not checked");
    }
    let text = tmp.path().join("notes.txt");
    std::fs::write(&text, b"not a database").unwrap();
    let o = storbench(&["db", "--db", s(&text), "add", s(&res)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(&text).unwrap(), b"not a database");
}

/// Issue 30, data lost 1: an output path that is a symbolic link wrote through it into
/// the file it points at (or created a file where a dangling link pointed). Links are
/// refused; `-o /dev/stdout` (the process's own standard output) still works, also
/// when the shell sent it to a file.
#[test]
fn a_symlink_named_as_an_output_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let victim = d.join("bashrc");
    std::fs::write(&victim, b"export PATH=...").unwrap();
    let link = d.join("link.parquet");
    symlink(&victim, &link).unwrap();
    let o = synth(&link, &[]);
    assert_refused(&o, "synth -o LINK", "symbolic link");
    assert_eq!(std::fs::read(&victim).unwrap(), b"export PATH=...");
    let o = synth(&link, &["--overwrite"]);
    assert_refused(&o, "synth -o LINK --overwrite", "symbolic link");
    assert_eq!(std::fs::read(&victim).unwrap(), b"export PATH=...");
    let nowhere = d.join("created-by-link");
    let dangling = d.join("dangling.parquet");
    symlink(&nowhere, &dangling).unwrap();
    let o = synth(&dangling, &[]);
    assert_refused(&o, "synth -o DANGLING", "symbolic link");
    assert!(!nowhere.exists(), "a dangling link created its target");

    // /dev/stdout: a pipe, and a file the shell opened.
    let (trace, _) = trace_and_results(d);
    let o = ok(&storbench(&[
        "export",
        s(&trace),
        "--format",
        "csv",
        "-o",
        "/dev/stdout",
    ]));
    assert!(o.lines().count() > 300, "{o}");
    let shell_file = d.join("shell.csv");
    let f = std::fs::File::create(&shell_file).unwrap();
    let st = Command::new(env!("CARGO_BIN_EXE_storbench"))
        .args(["export", s(&trace), "--format", "csv", "-o", "/dev/stdout"])
        .stdout(Stdio::from(f))
        .status()
        .unwrap();
    assert!(st.success());
    let text = std::fs::read_to_string(&shell_file).unwrap();
    assert!(text.lines().count() > 300, "{text}");
}

/// A failed import removed the file at its output path: a storbench trace written
/// before, or the user's file given with --overwrite. A failed writer leaves the path
/// as it was.
#[test]
fn a_failed_import_keeps_the_file_at_its_output_path() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let bad = d.join("bad.csv");
    let mut text = std::fs::read_to_string(fixture("msr.csv")).unwrap();
    text.push_str("this is not a trace line\n");
    std::fs::write(&bad, text).unwrap();
    let out = d.join("kept.parquet");
    std::fs::write(&out, b"the user's file").unwrap();
    let o = storbench(&[
        "import",
        s(&bad),
        "--format",
        "msr",
        "--overwrite",
        "-q",
        "-o",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap(), b"the user's file");
    let leftovers: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Issue 30, data lost 2: with `ln -s ~/.bashrc D/run_iops.1.log`, `run -o D` replaced
/// ~/.bashrc; the same for every file of a run directory; a dangling `state.lock` link
/// created a file at its target, and a `journal` directory that is a link wrote into
/// the directory it points at.
#[test]
fn links_planted_in_a_run_directory_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let names = [
        "run_iops.1.log",
        "run_bw.1.log",
        "run_lat.1.log",
        "journal/run.jsonl",
        "series/run.parquet",
        "ios.parquet",
        "series.parquet",
        "result.json",
        "state.json",
    ];
    for (i, name) in names.iter().enumerate() {
        let d = tmp.path().join(format!("d{i}"));
        let victim = tmp.path().join(format!("victim{i}"));
        std::fs::write(&victim, b"the user's file").unwrap();
        let link = d.join(name);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        symlink(&victim, &link).unwrap();
        let o = run_sim(&d, &["--log-ios"]);
        assert_refused(&o, name, "symbolic link");
        assert_eq!(
            std::fs::read(&victim).unwrap(),
            b"the user's file",
            "{name}"
        );
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink(),
            "{name}: the link was removed"
        );
    }
    // A dangling lock link.
    let d = tmp.path().join("lock");
    std::fs::create_dir(&d).unwrap();
    let nowhere = tmp.path().join("made-by-the-lock");
    symlink(&nowhere, d.join("state.lock")).unwrap();
    let o = run_sim(&d, &[]);
    assert_refused(&o, "state.lock", "symbolic link");
    assert!(
        !nowhere.exists(),
        "the dangling lock link created its target"
    );
    // Subdirectories that are links.
    for sub in ["journal", "series"] {
        let d = tmp.path().join(format!("sub-{sub}"));
        std::fs::create_dir(&d).unwrap();
        let elsewhere = tmp.path().join(format!("elsewhere-{sub}"));
        std::fs::create_dir(&elsewhere).unwrap();
        symlink(&elsewhere, d.join(sub)).unwrap();
        let o = run_sim(&d, &[]);
        assert_refused(&o, sub, "symbolic link");
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "{sub}");
    }
    // Outputs the run would replace, of the user's (no link): kept, the run refused.
    let d = tmp.path().join("users");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(d.join("series.parquet"), b"mine").unwrap();
    let o = run_sim(&d, &[]);
    assert_refused(&o, "user's series.parquet", "--replace");
    assert_eq!(std::fs::read(d.join("series.parquet")).unwrap(), b"mine");
}

/// Issue 30, data lost 2: a link planted in a killed run's directory was written
/// through by `--resume`: the journal, cut back to the checkpoint, truncated the file
/// the link pointed at.
#[test]
fn links_planted_before_a_resume_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("res");
    let mut child = Command::new(env!("CARGO_BIN_EXE_storbench"))
        .args([
            "run",
            "--target",
            "test:delay=1ms,capacity=1g",
            "--time",
            "30s",
            "-q",
            "-o",
            s(&d),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    storbench_testkit::wait_until(Duration::from_secs(30), "the run to start", || {
        d.join("journal/run.jsonl").exists()
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, b"the user's file").unwrap();
    std::fs::remove_file(d.join("journal/run.jsonl")).unwrap();
    symlink(&victim, d.join("journal/run.jsonl")).unwrap();
    let o = storbench(&["run", "--resume", s(&d), "-q"]);
    assert_refused(&o, "resume with a planted journal link", "symbolic link");
    assert_eq!(std::fs::read(&victim).unwrap(), b"the user's file");
}

/// A sweep directory's files went through links too: its plan copy was written to
/// `DIR/plan.tmp` with `File::create`, following a link planted there into the file it
/// named, and the dataset was written through a link at `DIR/sweep.parquet`.
#[test]
fn links_planted_in_a_sweep_directory_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("plan.toml");
    std::fs::write(
        &plan,
        r#"
name = "links"
[[target]]
preset = "client-7op"
capacity = "1g"
[[procedure]]
name = "consistency"
quick = true
duration = "2s"
round = "1s"
"#,
    )
    .unwrap();
    let d = tmp.path().join("sweep");
    std::fs::create_dir(&d).unwrap();
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, b"the user's file").unwrap();
    symlink(&victim, d.join("plan.tmp")).unwrap();
    ok(&storbench(&["sweep", s(&plan), "-o", s(&d)]));
    assert_eq!(std::fs::read(&victim).unwrap(), b"the user's file");
    assert!(!std::fs::symlink_metadata(d.join("plan.toml"))
        .unwrap()
        .file_type()
        .is_symlink());
    std::fs::remove_file(d.join("sweep.parquet")).unwrap();
    symlink(&victim, d.join("sweep.parquet")).unwrap();
    let o = storbench(&["sweep", s(&plan), "-o", s(&d)]);
    assert_refused(&o, "sweep.parquet link", "symbolic link");
    assert_eq!(std::fs::read(&victim).unwrap(), b"the user's file");
}
