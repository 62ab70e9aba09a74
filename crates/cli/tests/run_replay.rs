//! `storbench run` and `storbench replay` end to end, on the built binary: result.json
//! fields against what was asked (op counts, bytes, completeness), series.parquet,
//! interruption by SIGTERM/SIGINT (exit 130, results up to the checkpoint kept and
//! marked incomplete, `--resume` finishes the run), failed I/O (printed, counted, exit
//! 1, results kept), one run per result directory, and bad input (clear message, exit
//! status 2). Loop-device cases skip without root.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

mod common;
use common::{ok, storbench};

fn result(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("result.json")).expect("result.json written");
    serde_json::from_str(&text).expect("result.json is JSON")
}

fn metrics(r: &Value) -> &Value {
    &r["phases"][0]["metrics"]
}

fn u(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("{v} is not an unsigned integer"))
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

/// A storbench Parquet trace from (issue_ns, offset, len, op) rows, through `import`.
fn make_trace(dir: &Path, name: &str, rows: &[(u64, u64, u64, &str)]) -> PathBuf {
    let csv = dir.join(format!("{name}.csv"));
    let mut text = String::from("issue_ns,complete_ns,offset_bytes,len_bytes,op,stream,device\n");
    for (t, off, len, op) in rows {
        text.push_str(&format!("{t},,{off},{len},{op},,\n"));
    }
    std::fs::write(&csv, text).unwrap();
    let parquet = dir.join(format!("{name}.parquet"));
    ok(&storbench(&[
        "import",
        path_str(&csv),
        "--format",
        "csv",
        "-o",
        path_str(&parquet),
    ]));
    parquet
}

#[test]
fn run_on_a_file_writes_the_asked_ios_and_complete_results() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("target.dat");
    let out = tmp.path().join("fill");
    // Without --time or --bytes: one pass over the span, 8 MiB in 64 KiB writes.
    let stdout = ok(&storbench(&[
        "run",
        "--target",
        path_str(&file),
        "--size",
        "8m",
        "--rw",
        "write",
        "--bs",
        "64k",
        "--qd",
        "4",
        "-o",
        path_str(&out),
    ]));
    assert!(stdout.contains("results:"), "{stdout}");
    let r = result(&out);
    assert_eq!(r["complete"], Value::Bool(true));
    assert_eq!(r["procedure"], "run");
    assert_eq!(r["target"]["kind"], "file");
    assert_eq!(u(&r["target"]["capacity_bytes"]), 8 << 20);
    let m = metrics(&r);
    assert_eq!(u(&m["write_ios"]), 128);
    assert_eq!(u(&m["write_bytes"]), 8 << 20);
    assert_eq!(u(&m["read_ios"]), 0);
    assert_eq!(u(&m["errors"]), 0);
    assert_eq!(u(&r["phases"][0]["issued_ios"]), 128);
    assert!(out.join("series.parquet").is_file());
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 8 << 20);

    // Random reads of the file storbench created, limited by bytes.
    let out2 = tmp.path().join("read");
    ok(&storbench(&[
        "run",
        "--target",
        path_str(&file),
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "8",
        "--bytes",
        "1m",
        "-o",
        path_str(&out2),
    ]));
    let r = result(&out2);
    assert_eq!(r["complete"], Value::Bool(true));
    let m = metrics(&r);
    assert_eq!(u(&m["read_ios"]), 256);
    assert_eq!(u(&m["read_bytes"]), 1 << 20);
    assert_eq!(u(&m["write_ios"]), 0);
    assert!(m["qd"]["max"]
        .as_u64()
        .is_some_and(|q| (1..=8).contains(&q)));
    assert!(out2.join("series.parquet").is_file());
}

#[test]
fn replay_on_a_file_replays_every_trace_io() {
    let tmp = tempfile::tempdir().unwrap();
    // 300 I/Os: reads and writes of 4 KiB and 16 KiB over 4 MiB, 10 µs apart.
    let rows: Vec<(u64, u64, u64, &str)> = (0..300u64)
        .map(|i| {
            let len = if i % 3 == 0 { 16384 } else { 4096 };
            let op = if i % 4 == 0 { "write" } else { "read" };
            (i * 10_000, (i * 7919 % 1000) * 4096, len, op)
        })
        .collect();
    let (mut reads, mut writes, mut read_bytes, mut write_bytes) = (0u64, 0u64, 0u64, 0u64);
    for (_, _, len, op) in &rows {
        if *op == "read" {
            reads += 1;
            read_bytes += len;
        } else {
            writes += 1;
            write_bytes += len;
        }
    }
    let trace = make_trace(tmp.path(), "mix", &rows);
    let file = tmp.path().join("target.dat");
    for mode in ["fixed-qd", "queue-depth", "timed"] {
        let out = tmp.path().join(format!("replay-{mode}"));
        ok(&storbench(&[
            "replay",
            path_str(&trace),
            "--target",
            path_str(&file),
            "--size",
            "8m",
            "--mode",
            mode,
            "--qd",
            "4",
            "--log-ios",
            "-o",
            path_str(&out),
        ]));
        let r = result(&out);
        assert_eq!(r["complete"], Value::Bool(true), "{mode}");
        assert_eq!(u(&r["trace"]["ios"]), 300, "{mode}");
        let m = metrics(&r);
        assert_eq!(u(&m["read_ios"]), reads, "{mode}");
        assert_eq!(u(&m["write_ios"]), writes, "{mode}");
        assert_eq!(u(&m["read_bytes"]), read_bytes, "{mode}");
        assert_eq!(u(&m["write_bytes"]), write_bytes, "{mode}");
        assert_eq!(u(&m["errors"]), 0, "{mode}");
        let f = &r["phases"][0]["fidelity"];
        assert_eq!(f["mode"], mode);
        assert!(out.join("series.parquet").is_file(), "{mode}");
        assert!(out.join("ios.parquet").is_file(), "{mode}");
        if mode == "timed" {
            // The trace spans 2.99 ms; a timed replay cannot finish sooner.
            assert!(u(&m["elapsed_ns"]) >= 2_990_000, "{}", m["elapsed_ns"]);
            assert!(f["issue_error_p50_ns"].is_u64(), "{f}");
            assert!(f["drift_ns"].is_i64(), "{f}");
        } else {
            assert!(m["qd"]["max"].as_u64().is_some_and(|q| q <= 4), "{mode}");
        }
    }
}

/// Start a run of 5 s, wait until it is running (its result directory exists: made
/// after the signal handler is installed) and has written to its target, send
/// `signal`, and check it stopped at the next whole second with exit status 130,
/// kept what ran up to there in a result marked incomplete, and (`resume`) that
/// `--resume` finishes the run.
///
/// Regression (flaky audit after CI stop 12): the signal went 300 ms after the result
/// directory appeared, and the test insists some I/O ran; a machine that let the run
/// start no I/O in those 300 ms would have failed it. Now the signal goes once the
/// preallocated (zero) target file has a byte the run wrote.
fn interrupted(signal: &str, resume: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("target.dat");
    let out = tmp.path().join("res");
    let mut child = Command::new(env!("CARGO_BIN_EXE_storbench"))
        .args([
            "run",
            "--target",
            path_str(&file),
            "--size",
            "16m",
            "--rw",
            "randrw:50",
            "--bs",
            "4k",
            "--qd",
            "8",
            "--time",
            "5s",
            "-o",
            path_str(&out),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn storbench");
    // Signalled once it has started (its output directory exists) and written.
    storbench_testkit::wait_until(
        Duration::from_secs(30),
        "storbench to start and write to its target",
        || {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("storbench exited early: {status}");
            }
            out.exists() && has_a_nonzero_byte(&file)
        },
    );
    let pid = child.id().to_string();
    let killed = Command::new("kill")
        .args([&format!("-{signal}"), &pid])
        .status()
        .expect("run kill");
    assert!(killed.success());
    let output = child.wait_with_output().expect("wait for storbench");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{signal}: {stderr}");
    assert!(
        stderr.contains("rolled back to the last checkpoint"),
        "{stderr}"
    );
    assert!(stderr.contains("--resume"), "{stderr}");
    let r = result(&out);
    assert_eq!(r["complete"], Value::Bool(false), "{signal}");
    let p = &r["phases"][0];
    assert_eq!(p["ended"], "interrupted");
    assert!(
        r["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap_or("").contains("interrupted")),
        "{}",
        r["notes"]
    );
    let m = metrics(&r);
    // Rolled back to the whole second it stopped at: what completed before it, no
    // more; I/Os in flight then are issued again by a resume.
    let done = u(&m["read_ios"]) + u(&m["write_ios"]) + u(&m["errors"]);
    assert!(done > 0 && done <= u(&p["issued_ios"]));
    let elapsed = u(&m["elapsed_ns"]);
    assert!(
        elapsed > 0 && elapsed.is_multiple_of(1_000_000_000),
        "{elapsed}"
    );
    assert!(out.join("series.parquet").is_file());
    if !resume {
        return;
    }
    let o = storbench(&["run", "--resume", path_str(&out), "-q"]);
    ok(&o);
    let r = result(&out);
    assert_eq!(r["complete"], Value::Bool(true));
    assert_eq!(r["resumes"], 1);
    assert_eq!(r["phases"][0]["segments"], 2);
    assert_eq!(r["phases"][0]["ended"], "time-limit");
    let secs = u(&metrics(&r)["elapsed_ns"]) as f64 / 1e9;
    assert!((5.0..6.0).contains(&secs), "{secs} s over both runs");
}

/// Whether `path` has a byte that is not zero (compared a block at a time: a byte loop
/// over 16 MiB takes a tenth of a second in a debug build).
fn has_a_nonzero_byte(path: &Path) -> bool {
    let data = std::fs::read(path).unwrap_or_default();
    let zeros = [0u8; 4096];
    data.chunks(zeros.len()).any(|c| c != &zeros[..c.len()])
}

#[test]
fn sigterm_writes_results_marked_incomplete() {
    interrupted("TERM", false);
}

/// Regression (issue 22): SIGINT made `run` exit 0 and `consistency` exit 130.
#[test]
fn sigint_exits_130_keeps_results_and_resumes() {
    interrupted("INT", true);
}

fn assert_user_error(out: &Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "expected a user error (exit 2), got {}\nstderr:\n{stderr}",
        out.status
    );
    for n in needles {
        assert!(stderr.contains(n), "stderr lacks {n:?}:\n{stderr}");
    }
}

#[test]
fn bad_input_gives_a_clear_error_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("target.dat");
    let out = tmp.path().join("res");
    let missing = tmp.path().join("no-such-trace.parquet");
    let r = storbench(&[
        "replay",
        path_str(&missing),
        "--target",
        path_str(&file),
        "-o",
        path_str(&out),
    ]);
    assert_user_error(&r, &["no-such-trace.parquet", "does not exist", "hint:"]);
    assert!(!out.exists(), "no results for a failed start");

    for bs in ["4x", "0"] {
        let r = storbench(&[
            "run",
            "--target",
            path_str(&file),
            "--size",
            "1m",
            "--bs",
            bs,
            "-o",
            path_str(&out),
        ]);
        assert_user_error(&r, &["--bs", bs]);
    }
    let r = storbench(&[
        "run",
        "--target",
        path_str(&file),
        "--size",
        "1m",
        "--rw",
        "sideways",
        "-o",
        path_str(&out),
    ]);
    // A clap error naming the flag and what it takes (the values are a ValueEnum).
    assert_user_error(&r, &["'sideways'", "'--rw", "use read, write, randread"]);
    let r = storbench(&[
        "run",
        "--target",
        path_str(&tmp.path().join("no-such-dir/t.dat")),
        "--size",
        "1m",
        "-o",
        path_str(&out),
    ]);
    assert_user_error(&r, &["no-such-dir/t.dat", "hint: check the path"]);

    let trace = make_trace(tmp.path(), "t", &[(0, 0, 4096, "read")]);
    let r = storbench(&[
        "replay",
        path_str(&trace),
        "--target",
        path_str(&file),
        "--size",
        "1m",
        "--mode",
        "sometimes",
        "-o",
        path_str(&out),
    ]);
    assert_user_error(
        &r,
        &[
            "'sometimes'",
            "'--mode",
            "possible values: queue-depth, timed, fixed-qd",
        ],
    );

    // Not a Parquet trace: fails naming the file.
    let junk = tmp.path().join("junk.parquet");
    std::fs::write(&junk, "this is not parquet\n").unwrap();
    let r = storbench(&[
        "replay",
        path_str(&junk),
        "--target",
        path_str(&file),
        "--size",
        "1m",
        "-o",
        path_str(&out),
    ]);
    assert_user_error(&r, &["junk.parquet", "not a Parquet trace", "hint:"]);
    not_a_trace_is_a_user_error_said_once(tmp.path(), &junk);
}

/// Regression: a text file given as a trace exited 1 (as if storbench had failed) and
/// printed the Parquet error twice; `bench` found out only in its replay phase, after
/// creating the run directory (and after seasoning, with `--state seasoned`).
fn not_a_trace_is_a_user_error_said_once(tmp: &Path, junk: &Path) {
    let res = tmp.join("bench-res");
    let r = storbench(&[
        "bench",
        path_str(junk),
        "--target",
        "sim:client-7op",
        "--quick",
        "-o",
        path_str(&res),
    ]);
    assert_user_error(&r, &["junk.parquet", "not a Parquet trace", "hint:"]);
    assert!(
        !res.exists(),
        "bench created {} for a bad trace",
        res.display()
    );
    for args in [
        &["characterize", path_str(junk)][..],
        &[
            "export",
            path_str(junk),
            "--format",
            "csv",
            "-o",
            path_str(&tmp.join("e.csv")),
        ],
    ] {
        let r = storbench(args);
        assert_user_error(&r, &["not a Parquet trace", "hint:"]);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert_eq!(
            stderr.matches("Parquet error").count(),
            1,
            "said twice:\n{stderr}"
        );
    }
}

#[test]
fn run_and_replay_on_a_loop_device() {
    let lo = match storbench_testkit::LoopDevice::new(16 << 20, &[]) {
        Ok(lo) => lo,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("read");
    ok(&storbench(&[
        "run",
        "--target",
        lo.path_str(),
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "16",
        "--bytes",
        "4m",
        "-o",
        path_str(&out),
    ]));
    let r = result(&out);
    assert_eq!(r["complete"], Value::Bool(true));
    assert_eq!(r["target"]["kind"], "block-device");
    assert_eq!(u(&r["target"]["capacity_bytes"]), 16 << 20);
    assert_eq!(u(&metrics(&r)["read_ios"]), 1024);
    assert_eq!(u(&metrics(&r)["read_bytes"]), 4 << 20);

    // A read-only trace replays on the device without any --destroy-data.
    let rows: Vec<(u64, u64, u64, &str)> = (0..100u64)
        .map(|i| (i * 20_000, (i * 37 % 4096) * 4096, 4096, "read"))
        .collect();
    let trace = make_trace(tmp.path(), "reads", &rows);
    let out = tmp.path().join("timed");
    ok(&storbench(&[
        "replay",
        path_str(&trace),
        "--target",
        lo.path_str(),
        "--mode",
        "timed",
        "-o",
        path_str(&out),
    ]));
    let r = result(&out);
    assert_eq!(r["complete"], Value::Bool(true));
    assert_eq!(u(&metrics(&r)["read_ios"]), 100);
    assert!(u(&metrics(&r)["elapsed_ns"]) >= 99 * 20_000);
}

/// Regression: an unknown simulated preset printed two hints, the specific one (the valid
/// presets) and a generic one after it.
#[test]
fn unknown_sim_preset_gives_one_specific_hint() {
    let tmp = tempfile::tempdir().unwrap();
    let r = storbench(&[
        "consistency",
        "--target",
        "sim:nope",
        "--quick",
        "-o",
        path_str(&tmp.path().join("res")),
    ]);
    assert_user_error(&r, &["unknown preset `nope`", "client-7op"]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(stderr.matches("hint:").count(), 1, "{stderr}");
}

/// Runs `args` in the background, waits for its run state, shrinks the loop device's
/// image to 1 MiB (I/O past it then fails with EIO) and returns what it printed.
fn run_while_the_device_shrinks(
    lo: &storbench_testkit::LoopDevice,
    out: &Path,
    args: &[&str],
) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_storbench"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn storbench");
    storbench_testkit::wait_until(Duration::from_secs(30), "the run to start", || {
        out.join("state.json").exists()
    });
    let img = lo.dir().join("loop.img");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&img)
        .and_then(|f| f.set_len(1 << 20))
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Regression (issue 19): `run` and `replay` exited 0 when 81-87% of their I/Os failed
/// (a device shrunk mid-run); the first error was only in result.json.
#[test]
fn failed_ios_are_printed_counted_and_exit_1_with_the_results_kept() {
    let lo = match storbench_testkit::LoopDevice::new(16 << 20, &[]) {
        Ok(lo) => lo,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = run_while_the_device_shrinks(
        &lo,
        &out,
        &[
            "run",
            "--target",
            lo.path_str(),
            "--rw",
            "randread",
            "--time",
            "3s",
            "-q",
            "-o",
            path_str(&out),
        ],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let r = result(&out);
    let p = &r["phases"][0];
    let errors = u(&p["metrics"]["errors"]);
    assert!(errors > 0, "{p}");
    let first = p["first_error"].as_str().unwrap();
    assert!(first.starts_with("read at offset "), "{first}");
    assert!(first.contains("Input/output error"), "{first}");
    assert!(
        stderr.contains(&format!("{errors} I/Os failed")),
        "{stderr}"
    );
    assert!(stderr.contains(first), "{stderr}");
    assert!(stderr.contains("results kept"), "{stderr}");

    // The same for a replay (timed, 3 s of reads over the whole device).
    std::fs::OpenOptions::new()
        .write(true)
        .open(lo.dir().join("loop.img"))
        .and_then(|f| f.set_len(16 << 20))
        .unwrap();
    let rows: Vec<(u64, u64, u64, &str)> = (0..3000u64)
        .map(|i| (i * 1_000_000, (i * 37 % 4096) * 4096, 4096, "read"))
        .collect();
    let trace = make_trace(tmp.path(), "reads", &rows);
    let out = tmp.path().join("replay");
    let lo2 = storbench_testkit::LoopDevice::new(16 << 20, &[]).unwrap();
    let o = run_while_the_device_shrinks(
        &lo2,
        &out,
        &[
            "replay",
            path_str(&trace),
            "--target",
            lo2.path_str(),
            "--mode",
            "timed",
            "-q",
            "-o",
            path_str(&out),
        ],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let r = result(&out);
    assert!(u(&metrics(&r)["errors"]) > 0);
    assert_eq!(
        u(&r["phases"][0]["issued_ios"]),
        3000,
        "it went on to the end"
    );
    assert!(
        stderr.contains("I/Os failed; the first: read at offset"),
        "{stderr}"
    );
}

/// Asserts the result in `out` is marked incomplete for its failed I/Os, and that
/// `report` and `compare` say so.
fn assert_incomplete_for_failed_ios(out: &Path, tmp: &Path) {
    let r = result(out);
    let errors = u(&metrics(&r)["errors"]);
    assert!(errors > 0, "{r}");
    assert_eq!(r["complete"], false, "{r}");
    let first = r["notes"][0].as_str().unwrap_or_default();
    assert!(
        first.starts_with("incomplete: phase ") && first.contains(&format!("{errors} of ")),
        "{first}"
    );
    let html = tmp.join(format!(
        "{}.html",
        out.file_name().unwrap().to_string_lossy()
    ));
    let o = storbench(&["report", path_str(out), "-o", path_str(&html)]);
    ok(&o);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("NO: phase "), "the methods table says why");
    let text = ok(&storbench(&["compare", path_str(out)]));
    assert!(
        text.contains("incomplete: ") && text.contains(&format!("{errors} of ")),
        "{text}"
    );
}

/// Regression (issue 30): `run` and `replay` with 87-95% of their I/Os failed exited 1
/// but wrote `complete: true` with no note, and `report`/`compare` said "complete: yes".
#[test]
fn failed_ios_mark_the_result_incomplete_in_result_report_and_compare() {
    let lo = match storbench_testkit::LoopDevice::new(16 << 20, &[]) {
        Ok(lo) => lo,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let args = [
        "run",
        "--target",
        lo.path_str(),
        "--rw",
        "randread",
        "--time",
        "2s",
        "-q",
        "-o",
        path_str(&out),
    ];
    let o = run_while_the_device_shrinks(&lo, &out, &args);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_incomplete_for_failed_ios(&out, tmp.path());

    let rows: Vec<(u64, u64, u64, &str)> = (0..2000u64)
        .map(|i| (i * 1_000_000, (i * 37 % 4096) * 4096, 4096, "read"))
        .collect();
    let trace = make_trace(tmp.path(), "reads", &rows);
    let lo2 = storbench_testkit::LoopDevice::new(16 << 20, &[]).unwrap();
    let out = tmp.path().join("replay");
    let args = [
        "replay",
        path_str(&trace),
        "--target",
        lo2.path_str(),
        "--mode",
        "timed",
        "-q",
        "-o",
        path_str(&out),
    ];
    let o = run_while_the_device_shrinks(&lo2, &out, &args);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_incomplete_for_failed_ios(&out, tmp.path());
}

/// Regression (issue 19): two runs into one `-o` both exited 0 and one's results were
/// lost; a later run left an old ios.parquet beside a new result.json.
#[test]
fn a_result_directory_holds_one_run_unless_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("res");
    let sim = "sim:client-7op,capacity=256m";
    let run = |extra: &[&str]| {
        let mut a = vec![
            "run",
            "--target",
            sim,
            "--bytes",
            "16m",
            "-q",
            "-o",
            path_str(&out),
        ];
        a.extend_from_slice(extra);
        storbench(&a)
    };
    ok(&run(&["--log-ios"]));
    assert!(out.join("ios.parquet").is_file());
    let first = std::fs::read(out.join("result.json")).unwrap();
    // A second run is refused, and the first's results are untouched.
    let o = run(&[]);
    assert_user_error(&o, &["already holds a run", "--replace"]);
    assert_eq!(std::fs::read(out.join("result.json")).unwrap(), first);
    // So is a replay, or a procedure, into it.
    let o = storbench(&[
        "consistency",
        "--quick",
        "--target",
        sim,
        "-q",
        "-o",
        path_str(&out),
    ]);
    assert_user_error(&o, &["already holds a run (run)"]);
    // --replace starts afresh: no ios.parquet of the old run beside the new result.
    ok(&run(&["--replace", "--seed", "2"]));
    assert!(!out.join("ios.parquet").exists(), "stale ios.parquet");
    assert_ne!(std::fs::read(out.join("result.json")).unwrap(), first);

    // Results of an older storbench (no run state) count as a run too.
    let old = tmp.path().join("old");
    std::fs::create_dir_all(&old).unwrap();
    std::fs::write(old.join("result.json"), r#"{"procedure":"replay"}"#).unwrap();
    let o = storbench(&[
        "run",
        "--target",
        sim,
        "--bytes",
        "1m",
        "-q",
        "-o",
        path_str(&old),
    ]);
    assert_user_error(&o, &["already holds a run (replay)"]);

    // Two at once: the second finds the first's lock.
    let busy = tmp.path().join("busy");
    let mut child = Command::new(env!("CARGO_BIN_EXE_storbench"))
        .args([
            "run",
            "--target",
            path_str(&tmp.path().join("busy.dat")),
            "--size",
            "64m",
            "--time",
            "60s",
            "-q",
            "-o",
            path_str(&busy),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    storbench_testkit::wait_until(Duration::from_secs(30), "the first run to start", || {
        busy.join("state.json").exists()
    });
    let o = storbench(&[
        "run",
        "--target",
        sim,
        "--bytes",
        "1m",
        "--replace",
        "-q",
        "-o",
        path_str(&busy),
    ]);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_user_error(&o, &["another storbench process is running"]);
}

/// Regression (issue 19): `--time 0` and `--bytes 0` ran, did nothing and exited 0.
#[test]
fn zero_work_runs_are_user_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("res");
    let sim = "sim:client-7op,capacity=256m";
    for extra in [&["--time", "0"][..], &["--bytes", "0"], &["--time", "0s"]] {
        let mut a = vec!["run", "--target", sim, "-o", path_str(&out)];
        a.extend_from_slice(extra);
        let o = storbench(&a);
        assert_user_error(&o, &[extra[0], "does no work", "hint:"]);
    }
    let trace = make_trace(tmp.path(), "t", &[(0, 0, 4096, "read")]);
    let o = storbench(&[
        "replay",
        path_str(&trace),
        "--target",
        sim,
        "--time",
        "0",
        "-o",
        path_str(&out),
    ]);
    assert_user_error(&o, &["--time 0", "does no work"]);
    assert!(!out.exists(), "nothing started");
}

/// Regression (issue 22): SIGINT made `run` exit 0 and `consistency` exit 130. Every
/// command that drives a target stops at the next whole second and exits 130.
#[test]
fn sigint_exits_130_in_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = make_trace(
        tmp.path(),
        "slow",
        &(0..5000u64)
            .map(|i| (i * 10_000_000, i * 4096 % (1 << 30), 4096, "read"))
            .collect::<Vec<_>>(),
    );
    // Real targets keep the wall clock: the virtual `test:` target replays 50 s of
    // trace in milliseconds, so the signal could land after a complete run (the
    // flake CI caught as "replay: exit 0").
    let file = tmp.path().join("target.dat");
    let target = path_str(&file);
    let commands: Vec<Vec<&str>> = vec![
        vec!["run", "--target", target, "--size", "64m", "--time", "60s"],
        vec![
            "replay",
            path_str(&trace),
            "--target",
            target,
            "--size",
            "1g",
            "--mode",
            "timed",
        ],
        vec![
            "consistency",
            "--target",
            "sim:client-7op,capacity=4g",
            "--duration",
            "2000s",
        ],
    ];
    for (i, cmd) in commands.iter().enumerate() {
        let out = tmp.path().join(format!("out{i}"));
        let child = Command::new(env!("CARGO_BIN_EXE_storbench"))
            .args(cmd)
            .args(["-q", "-o", path_str(&out)])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        storbench_testkit::wait_until(Duration::from_secs(60), "the run to start", || {
            out.join("state.json").exists()
        });
        Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        let o = child.wait_with_output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(130),
            "{}: {}",
            cmd[0],
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(result(&out)["complete"], false, "{}", cmd[0]);
    }
}
