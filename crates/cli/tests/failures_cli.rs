//! Silent or crashing failures of issue 30, each through the built binary: a closed
//! pipe, an I/O larger than the target, a sim spec key given twice, a 512-byte-aligned
//! trace on a 4 KiB-sector target, a 0-row Parquet trace, a full disk under a run
//! directory, labels that spreadsheets and Markdown would run, and a sweep plan bigger
//! than its disk. Loop-device and tmpfs cases skip without root.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;
use common::{ok, storbench};

const SIM: &str = "sim:client-7op,capacity=256m,seed=3";

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts a user error (exit 2) whose message holds every needle.
fn refused(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for n in needles {
        assert!(err.contains(n), "{n:?} not in {err}");
    }
}

/// Runs storbench with its standard output (and, with `close_stderr`, its standard
/// error too) a pipe whose reader is already gone: every write gets EPIPE.
fn with_closed_pipe(args: &[&str], close_stderr: bool) -> Output {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_storbench"));
    cmd.args(args).stdout(writer.try_clone().unwrap());
    if close_stderr {
        cmd.stderr(writer);
    } else {
        cmd.stderr(Stdio::piped());
    }
    cmd.output().expect("run storbench")
}

/// A CSV trace imported as a storbench trace.
fn import_csv(dir: &Path, name: &str, rows: &[(u64, u64, u64, &str)]) -> PathBuf {
    let csv = dir.join(format!("{name}.csv"));
    let mut text = String::from("issue_ns,complete_ns,offset_bytes,len_bytes,op,stream,device\n");
    for (t, off, len, op) in rows {
        text.push_str(&format!("{t},,{off},{len},{op},,\n"));
    }
    std::fs::write(&csv, text).unwrap();
    let out = dir.join(format!("{name}.parquet"));
    ok(&storbench(&[
        "import",
        s(&csv),
        "--format",
        "csv",
        "-o",
        s(&out),
    ]));
    out
}

/// Regression (issue 30): `storbench profiles | head -1` (also `sim presets`,
/// `completions`) panicked on the closed pipe, exit 101. A closed pipe ends the
/// command quietly with status 0, whatever it prints.
#[test]
fn a_closed_stdout_pipe_ends_every_printing_command_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = import_csv(tmp.path(), "t", &[(0, 0, 4096, "read")]);
    let res = tmp.path().join("res");
    ok(&storbench(&[
        "run",
        "--target",
        SIM,
        "--time",
        "1s",
        "-q",
        "-o",
        s(&res),
    ]));
    let cases: Vec<Vec<&str>> = vec![
        vec!["profiles"],
        vec!["sim", "presets"],
        vec!["sim", "presets", "--json"],
        vec!["completions", "bash"],
        vec!["man"],
        vec!["characterize", s(&trace)],
        vec!["compare", s(&res)],
        vec!["--help"],
        vec!["run", "--help"],
    ];
    for args in &cases {
        let o = with_closed_pipe(args, false);
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    }
}

/// Regression (issue 30): a driving command whose standard error (its phase lines) and
/// standard output are a closed pipe panicked on the first line; it runs to its end.
#[test]
fn a_run_with_closed_output_pipes_still_finishes_its_result() {
    let tmp = tempfile::tempdir().unwrap();
    let res = tmp.path().join("res");
    let o = with_closed_pipe(
        &["run", "--target", SIM, "--time", "1s", "-o", s(&res)],
        true,
    );
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(res.join("result.json")).unwrap()).unwrap();
    assert_eq!(r["complete"], true, "{r}");
}

/// Writing to a full standard output is a failure (exit 1) naming it, not a panic.
#[test]
fn a_full_stdout_is_an_io_failure() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return eprintln!("skipped: no /dev/full");
    };
    let o = Command::new(env!("CARGO_BIN_EXE_storbench"))
        .arg("profiles")
        .stdout(full)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("standard output") && !err.contains("panicked"),
        "{err}"
    );
}

/// Whether this machine refuses an allocation larger than its memory (the kernel's
/// default heuristic, or strict accounting): then a 2 TiB buffer pool fails cleanly.
fn refuses_huge_allocations() -> bool {
    std::fs::read_to_string("/proc/sys/vm/overcommit_memory").is_ok_and(|m| m.trim() != "1")
}

/// Regression (issue 30): a 1 TiB read with `--buffer-memory=2t` aborted the process
/// (memory allocation failed, exit 134) before the trace was checked against the target;
/// on a simulated drive the read was folded onto the 1 GiB drive and replayed.
#[test]
fn an_io_larger_than_the_target_is_refused_before_its_buffers_are_allocated() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = import_csv(tmp.path(), "huge", &[(0, 0, 1 << 40, "read")]);
    let file = tmp.path().join("target.dat");
    std::fs::File::create(&file)
        .and_then(|f| f.set_len(1 << 30))
        .unwrap();
    let target = format!("file:{}", s(&file));
    for (target, out) in [
        (target.as_str(), "file"),
        ("sim:client-7op,capacity=1g", "sim"),
    ] {
        let res = tmp.path().join(out);
        let o = storbench(&[
            "replay",
            s(&trace),
            "--target",
            target,
            "--buffer-memory",
            "2t",
            "-q",
            "-o",
            s(&res),
        ]);
        refused(
            &o,
            &["row 0", "1099511627776 bytes", "larger than", "hint:"],
        );
        assert!(!res.exists(), "nothing written for a refused run");
    }
    // Larger than the span: refused the same, though the file is large enough.
    let big = tmp.path().join("big.dat");
    std::fs::File::create(&big)
        .and_then(|f| f.set_len(2 << 40))
        .unwrap();
    let big_target = format!("file:{}", s(&big));
    let res = tmp.path().join("span");
    let o = storbench(&[
        "replay",
        s(&trace),
        "--target",
        &big_target,
        "--span",
        "1g",
        "--buffer-memory",
        "2t",
        "-q",
        "-o",
        s(&res),
    ]);
    refused(&o, &["row 0", "larger than", "hint:"]);
    // Fits the target, but two 1 TiB buffers are not to be had: a refusal, not an abort.
    if refuses_huge_allocations() {
        let res = tmp.path().join("alloc");
        let o = storbench(&[
            "replay",
            s(&trace),
            "--target",
            &big_target,
            "--buffer-memory",
            "2t",
            "-q",
            "-o",
            s(&res),
        ]);
        refused(&o, &["cannot allocate", "hint:"]);
    }
}

/// Regression (issue 30): a trace of 512-byte-aligned I/Os could not be replayed on a
/// 4Kn device or file ("open the target with larger buffers", which no option does).
/// The replay widens them to whole 4 KiB blocks, with buffers sized for that, and says
/// so in a note.
#[test]
fn a_512_byte_aligned_trace_replays_on_4kn_targets_widened_with_a_note() {
    let lo = match storbench_testkit::LoopDevice::new(64 << 20, &["mkfs.ext4"]) {
        Ok(lo) => lo,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    storbench_testkit::sh("losetup", &["--sector-size", "4096", lo.path_str()])
        .expect("a 4 KiB logical block size");
    let tmp = tempfile::tempdir().unwrap();
    // 4 KiB at byte 512 spans three 4 KiB blocks' worth once both ends are widened
    // with the 8 KiB read at byte 1024: more than the trace's largest I/O.
    let trace = import_csv(
        tmp.path(),
        "sectors",
        &[
            (0, 512, 4096, "read"),
            (1000, 8192, 512, "read"),
            (2000, 1024, 8192, "read"),
            (3000, 65536 + 512, 4096, "write"),
        ],
    );
    let check = |target: &str, name: &str| {
        let res = tmp.path().join(name);
        let o = storbench(&[
            "replay",
            s(&trace),
            "--target",
            target,
            "--destroy-data",
            target,
            "-q",
            "-o",
            s(&res),
        ]);
        assert_eq!(o.status.code(), Some(0), "{target}: {}", stderr(&o));
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(res.join("result.json")).unwrap())
                .unwrap();
        assert_eq!(r["target"]["logical_block_bytes"], 4096, "{r}");
        assert_eq!(r["phases"][0]["metrics"]["errors"], 0, "{r}");
        assert_eq!(r["phases"][0]["aligned_ios"], 4, "{r}");
        let notes = r["notes"].to_string();
        assert!(
            notes.contains("4 I/Os were not aligned") && notes.contains("widened"),
            "{notes}"
        );
        assert_eq!(r["complete"], true, "{r}");
    };
    check(lo.path_str(), "device");
    // A file on a filesystem of 4 KiB sectors: O_DIRECT takes 4 KiB alignment.
    storbench_testkit::sh("mkfs.ext4", &["-q", "-F", lo.path_str()]).expect("mkfs.ext4");
    let m = storbench_testkit::Mounted::new(lo.path(), &lo.dir().join("mnt"), &[])
        .expect("mount the 4Kn ext4");
    let file = m.dir().join("target.dat");
    std::fs::File::create(&file)
        .and_then(|f| f.set_len(16 << 20))
        .unwrap();
    let res = tmp.path().join("file");
    let o = storbench(&[
        "replay",
        s(&trace),
        "--target",
        &format!("file:{}", s(&file)),
        "--overwrite",
        "-q",
        "-o",
        s(&res),
    ]);
    assert_eq!(o.status.code(), Some(0), "file: {}", stderr(&o));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(res.join("result.json")).unwrap()).unwrap();
    assert_eq!(r["target"]["logical_block_bytes"], 4096, "{r}");
    assert_eq!(r["phases"][0]["aligned_ios"], 4, "{r}");
    assert_eq!(r["phases"][0]["metrics"]["errors"], 0, "{r}");
}

/// Regression (issue 30): a valid 0-row Parquet trace (as pyarrow writes one) was
/// called a corrupt footer. It is an empty trace: characterize and export take it, and
/// a replay refuses it for having no I/O (exit 2), naming the file.
#[test]
fn a_zero_row_parquet_trace_is_an_empty_trace_everywhere() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/parquet/empty_pyarrow.parquet");
    let text = ok(&storbench(&["characterize", s(&fixture)]));
    assert!(text.contains("total I/Os") && text.contains(" 0"), "{text}");
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("e.csv");
    ok(&storbench(&[
        "export",
        s(&fixture),
        "--format",
        "csv",
        "-o",
        s(&csv),
    ]));
    for target in [
        SIM.to_string(),
        format!("file:{}", s(&tmp.path().join("t.dat"))),
    ] {
        let res = tmp.path().join("res");
        let o = storbench(&[
            "replay",
            s(&fixture),
            "--target",
            &target,
            "--size",
            "1m",
            "-q",
            "-o",
            s(&res),
        ]);
        refused(&o, &["empty_pyarrow.parquet", "holds no I/O", "hint:"]);
        assert!(!stderr(&o).contains("corrupt"), "{}", stderr(&o));
    }
}

/// A tmpfs of `size` mounted on a new directory under `dir`, unmounted on drop; `None`
/// (with the reason printed) when not root.
fn tiny_tmpfs(dir: &Path, size: &str) -> Option<storbench_testkit::Mounted> {
    if !storbench_testkit::is_root() {
        eprintln!("skipped: not root (needs a tiny tmpfs)");
        return None;
    }
    let at = dir.join(format!("tmpfs-{size}"));
    match storbench_testkit::Mounted::new(
        Path::new("tmpfs"),
        &at,
        &["-t", "tmpfs", "-o", &format!("size={size}")],
    ) {
        Ok(m) => Some(m),
        Err(why) => {
            eprintln!("skipped: cannot mount a tmpfs: {why}");
            None
        }
    }
}

/// Runs a 20 s random-write run on a simulated drive into a tmpfs of `kib` KiB; the
/// file a full disk failed (a needle of `files`) when it failed, after checking it
/// failed as an I/O failure does. `None` when it succeeded; `Some(None)` skips.
fn run_on_tiny_fs(
    dir: &Path,
    kib: u32,
    log_ios: bool,
    files: &[&'static str],
) -> Option<Option<&'static str>> {
    let m = tiny_tmpfs(dir, &format!("{kib}k"))?;
    let res = m.dir().join("r");
    let mut args = vec![
        "run",
        "--target",
        SIM,
        "--rw",
        "randwrite",
        "--time",
        "20s",
        "-q",
        "-o",
        s(&res),
    ];
    if log_ios {
        args.push("--log-ios");
    }
    let o = storbench(&args);
    let err = stderr(&o);
    if o.status.success() {
        return Some(None);
    }
    assert!(err.contains("No space left on device"), "{kib} KiB: {err}");
    assert_eq!(o.status.code(), Some(1), "{kib} KiB: {err}");
    assert!(
        !err.contains("hint:"),
        "a full disk is no user mistake: {err}"
    );
    Some(files.iter().copied().find(|f| err.contains(f)))
}

/// Regression (issue 30): a full disk under the run's state or series exited 2, as a
/// user mistake. Every run into a filesystem too small for it that fails on a full disk
/// exits 1 naming the file, whichever file it was (state.json, the journal, the fio
/// logs, series, result.json, ios.parquet).
#[test]
fn a_full_disk_under_the_run_directory_is_an_io_failure_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let files = [
        "state.json",
        "journal",
        ".log",
        "series",
        "result.json",
        "ios.parquet",
    ];
    let mut failed_on = std::collections::BTreeSet::new();
    for kib in (8..=72).step_by(4) {
        match run_on_tiny_fs(tmp.path(), kib, false, &files) {
            None => return,
            Some(f) => failed_on.extend(f),
        }
    }
    for f in ["state.json", "series"] {
        assert!(
            failed_on.contains(f),
            "no size failed on {f}: {failed_on:?}"
        );
    }
    let ios = run_on_tiny_fs(tmp.path(), 64, true, &files);
    assert_eq!(ios, Some(Some("ios.parquet")));
}

/// Regression (issue 30): `report --images` wrote labels into CSV and Markdown raw: a
/// label that a spreadsheet runs as a formula, or that Markdown renders as HTML or as
/// extra table cells.
#[test]
fn report_images_write_labels_inert_in_csv_and_markdown() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    for d in [&a, &b] {
        ok(&storbench(&[
            "run",
            "--target",
            SIM,
            "--time",
            "1s",
            "-q",
            "-o",
            s(d),
        ]));
    }
    let formula = "=HYPERLINK(\"http://example.com\",\"x\")";
    let html = "<img src=x onerror=alert(1)>|*b*";
    let img = tmp.path().join("img");
    let out = tmp.path().join("r.html");
    ok(&storbench(&[
        "report",
        s(&a),
        s(&b),
        "--label",
        &format!("{}={formula}", s(&a)),
        "--label",
        &format!("{}={html}", s(&b)),
        "-o",
        s(&out),
        "--images",
        s(&img),
    ]));
    let csv = std::fs::read_to_string(img.join("methods.csv")).unwrap();
    assert!(csv.contains("\"'=HYPERLINK("), "{csv}");
    for line in csv.lines() {
        assert!(!line.starts_with('=') && !line.starts_with("\"="), "{line}");
    }
    for md in ["methods.md", "tables.md"] {
        let text = std::fs::read_to_string(img.join(md)).unwrap();
        assert!(!text.contains("<img"), "{md}: {text}");
        assert!(
            text.contains("&lt;img src=x onerror=alert(1)&gt;\\|\\*b\\*"),
            "{md}: {text}"
        );
    }
}

/// Regression (issue 30): a sweep plan's generator with `ios = 1e14` passed the plan
/// check and wrote until the disk was full. It is refused before any point runs, a
/// user error (exit 2) naming the plan file, the line and the field; the dry run says
/// how much the plan would write.
#[test]
fn a_sweep_plan_bigger_than_its_disk_is_refused_naming_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("huge.toml");
    std::fs::write(
        &plan,
        "[[target]]\npreset = \"client-7op\"\ncapacity = \"1g\"\n\n[[workload]]\ngenerator = \"randwrite\"\nios = 100000000000000\n\n[[procedure]]\nname = \"bench\"\n",
    )
    .unwrap();
    let dry = ok(&storbench(&["sweep", s(&plan), "--dry-run"]));
    assert!(dry.contains("  output: about 727.6 TiB"), "{dry}");
    let out = tmp.path().join("out");
    let o = storbench(&["sweep", s(&plan), "-o", s(&out), "-q"]);
    refused(
        &o,
        &[
            "huge.toml:7:",
            "`ios`",
            "free in",
            "hint: lower `ios` or `size`",
        ],
    );
    assert_eq!(std::fs::read_dir(out.join("points")).unwrap().count(), 0);
}
