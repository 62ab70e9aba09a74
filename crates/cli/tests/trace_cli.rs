//! `import`, `export` and `characterize` on real traces as they come (issue 23):
//! archives and compressed stdin, several per-volume files, the SPC ASU filter,
//! binary input, export folded onto a span, per-device footprints.

mod common;

use common::{ok, storbench};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/traces")
        .join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn characterize_json(trace: &Path) -> serde_json::Value {
    let out = ok(&storbench(&["characterize", s(trace), "--json"]));
    serde_json::from_str(&out).unwrap()
}

#[test]
fn import_archive_members_stdin_and_several_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Every member of the .tgz: one trace of four devices.
    let all = d.join("all.parquet");
    let out = ok(&storbench(&[
        "import",
        s(&fixture("compressed/msr_volumes.tgz")),
        "-o",
        s(&all),
    ]));
    assert!(out.contains("imported 320 records"), "{out}");
    assert!(
        out.contains("input: 4 files or archive members, decompressed gzip"),
        "{out}"
    );
    let c = characterize_json(&all);
    assert_eq!(c["footprint_per_device"].as_array().unwrap().len(), 4);
    // One member, by name.
    let one = d.join("one.parquet");
    let out = ok(&storbench(&[
        "import",
        s(&fixture("compressed/msr_volumes.tgz")),
        "--member",
        "MSR/msr_vol_2.csv",
        "-o",
        s(&one),
    ]));
    assert!(out.contains("imported 80 records"), "{out}");
    // The four files given at once: the same trace as the archive.
    let files = d.join("files.parquet");
    let vols: Vec<String> = (0..4)
        .map(|k| s(&fixture(&format!("msr_vol_{k}.csv"))).to_owned())
        .collect();
    let mut args = vec!["import"];
    args.extend(vols.iter().map(String::as_str));
    args.extend(["-o", s(&files)]);
    ok(&storbench(&args));
    assert_eq!(characterize_json(&files), characterize_json(&all));
    // xz on stdin, format detected.
    let piped = d.join("piped.parquet");
    let mut child = Command::new(env!("CARGO_BIN_EXE_storbench"))
        .args(["import", "-", "-o", s(&piped)])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let data = std::fs::read(fixture("compressed/msr_shuffled.csv.xz")).unwrap();
    child.stdin.take().unwrap().write_all(&data).unwrap();
    let out = ok(&child.wait_with_output().unwrap());
    assert!(out.contains("imported 300 records"), "{out}");
    assert!(out.contains("(msr)"), "{out}");
    // The 100 lines moved to the front are in order; the 200 after them each come
    // after a later-stamped line.
    assert!(out.contains("200 records out of order"), "{out}");
}

#[test]
fn import_asu_filter_and_binary_input() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.parquet");
    let out = ok(&storbench(&[
        "import",
        s(&fixture("spc_header.csv")),
        "--asu",
        "2",
        "-o",
        s(&t),
    ]));
    let want = std::fs::read_to_string(fixture("spc_header.csv"))
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("2,"))
        .count();
    assert!(out.contains(&format!("imported {want} records")), "{out}");
    assert!(out.contains("lines of other ASUs (--asu)"), "{out}");
    let r = storbench(&[
        "import",
        s(&fixture("compressed/not_a_trace.bin")),
        "-o",
        s(&t),
    ]);
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("not_a_trace.bin") && err.contains("binary data"),
        "{err}"
    );
    assert!(!err.contains('\u{fffd}'), "{err}");
}

#[test]
fn export_span_folds_offsets_as_replay_does() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = d.join("t.parquet");
    ok(&storbench(&[
        "import",
        s(&fixture("msr_shuffled.csv")),
        "-o",
        s(&t),
    ]));
    let csv = d.join("f.csv");
    let out = ok(&storbench(&[
        "export",
        s(&t),
        "--format",
        "csv",
        "-o",
        s(&csv),
        "--span",
        "1g",
        "--align",
        "4k",
    ]));
    assert!(out.contains("folded"), "{out}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut n = 0;
    for l in text.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let (off, len): (u64, u64) = (f[2].parse().unwrap(), f[3].parse().unwrap());
        assert!(
            off + len <= 1 << 30 && off % 4096 == 0 && len % 4096 == 0,
            "{l}"
        );
        n += 1;
    }
    assert_eq!(n, 300);
    // A span that is not whole blocks is refused.
    let r = storbench(&[
        "export",
        s(&t),
        "--format",
        "csv",
        "-o",
        s(&csv),
        "--span",
        "1000",
        "--align",
        "4k",
    ]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("--span 1000"));
}

#[test]
fn characterize_shows_footprint_per_device_and_na_for_zero_service_times() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.parquet");
    ok(&storbench(&[
        "import",
        s(&fixture("compressed/msr_volumes.tgz")),
        "-o",
        s(&t),
    ]));
    let table = ok(&storbench(&["characterize", s(&t)]));
    // Several devices: each device's own figures, footprint included (issue 34).
    assert!(table.contains("per device, each on its own:"), "{table}");
    for dev in ["usr_0", "usr_1", "proj_0", "src1_2"] {
        assert!(
            table.lines().any(|l| l.starts_with(&format!("{dev} "))),
            "{table}"
        );
    }
    let c = characterize_json(&t);
    let sum: u64 = c["footprint_per_device"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["footprint_bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(c["footprint_bytes"].as_u64().unwrap(), sum);
    let z = dir.path().join("z.parquet");
    ok(&storbench(&[
        "import",
        s(&fixture("msr_header_bom_zero_service.csv")),
        "-o",
        s(&z),
    ]));
    let table = ok(&storbench(&["characterize", s(&z)]));
    assert!(table.contains("n/a (every service time is 0"), "{table}");
    assert!(!table.contains("average QD"), "{table}");
}

/// Issue 34: an import error says what to do about that error, not always "give
/// --format ... or pass --skip-bad-lines" (which misled for each of these).
#[test]
fn import_errors_hint_what_to_do_about_each() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("o.parquet");
    let write = |name: &str, data: &[u8]| {
        let p = d.join(name);
        std::fs::write(&p, data).unwrap();
        p
    };
    // A Parquet trace of our own.
    let trace = d.join("t.parquet");
    ok(&storbench(&[
        "import",
        s(&fixture("msr.csv")),
        "-o",
        s(&trace),
    ]));
    let gz = std::fs::read(fixture("compressed/msr.csv.gz")).unwrap();
    let cases: Vec<(PathBuf, Vec<&str>, &str, &str)> = vec![
        (
            write("t.zip", b"PK\x03\x04\x14\x00\x00\x00rest of a zip"),
            vec![],
            "is a zip archive",
            "unzip -p FILE MEMBER",
        ),
        (
            trace.clone(),
            vec![],
            "is a Parquet file",
            "needs no import",
        ),
        (
            fixture("compressed/msr_volumes.tgz"),
            vec!["--member", "nope.csv"],
            "no member \"nope.csv\"",
            "give --member one of the members listed",
        ),
        (
            fixture("msr.csv"),
            vec!["--member", "x.csv"],
            "not a tar archive",
            "drop --member",
        ),
        (
            write("cut.csv.gz", &gz[..gz.len() / 2]),
            vec![],
            "gzip data",
            "download the file again",
        ),
        (
            write("what.txt", b"hello\nworld\n"),
            vec![],
            "cannot tell the trace format",
            "give --format, one of: fio-iolog-v2",
        ),
    ];
    for (input, extra, message, hint) in cases {
        let mut args = vec!["import", s(&input), "-o", s(&out)];
        args.extend(extra);
        let r = storbench(&args);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{input:?}: {err}");
        assert!(err.contains(message), "{input:?}: {err}");
        let hint_line = err.lines().find(|l| l.contains("hint: ")).unwrap_or("");
        assert!(hint_line.contains(hint), "{input:?}: {err}");
        assert!(!err.contains("--skip-bad-lines"), "{input:?}: {err}");
    }
    // A malformed line keeps the hint about lines.
    let bad = write(
        "bad.csv",
        b"1,host,0,Read,0,4096,10\n2,host,0,Jump,0,4096,10\n",
    );
    let r = storbench(&["import", s(&bad), "-o", s(&out)]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("bad.csv:2") && err.contains("--skip-bad-lines"),
        "{err}"
    );
}

fn python_with(module: &str) -> bool {
    Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .status()
        .is_ok_and(|s| s.success())
}

fn python(code: &str, args: &[&Path]) {
    let mut c = Command::new("python3");
    c.arg("-c").arg(code);
    for a in args {
        c.arg(a);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Issue 34: a real capture's trace read into pandas or Polars and written back (as a
/// notebook does) is characterized as the trace itself; sorted by offset first, it is
/// sorted back into issue order before it is measured (it used to give wrong figures
/// with exit 0). Both used to be refused or mismeasured.
#[test]
fn traces_written_back_from_pandas_and_polars_characterize_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = d.join("t.parquet");
    ok(&storbench(&[
        "import",
        s(&fixture("captures/blkparse_loop.txt")),
        "-o",
        s(&t),
    ]));
    let want = characterize_json(&t);
    let mut cases: Vec<(&str, &str)> = Vec::new();
    if python_with("pandas") {
        cases.push((
            "pandas",
            "import sys, pandas as pd; pd.read_parquet(sys.argv[1]).to_parquet(sys.argv[2])",
        ));
        cases.push((
            "pandas sorted by offset",
            "import sys, pandas as pd; pd.read_parquet(sys.argv[1]).sort_values('offset_bytes').to_parquet(sys.argv[2])",
        ));
    } else {
        eprintln!("skipped pandas: python3 with pandas not available");
    }
    if python_with("polars") {
        cases.push((
            "polars",
            "import sys, polars as pl; pl.read_parquet(sys.argv[1]).write_parquet(sys.argv[2])",
        ));
    } else {
        eprintln!("skipped polars: python3 with polars not available");
    }
    for (what, code) in cases {
        let back = d.join("back.parquet");
        python(code, &[&t, &back]);
        let mut got = characterize_json(&back);
        let sorted = what.contains("sorted");
        assert_eq!(
            got["issue_order_violations"].as_u64().unwrap() > 0,
            sorted,
            "{what}"
        );
        got["issue_order_violations"] = want["issue_order_violations"].clone();
        assert_eq!(got, want, "{what}");
        if sorted {
            let table = ok(&storbench(&["characterize", s(&back)]));
            assert!(table.contains("sorted into issue order"), "{table}");
            // Replay and export refuse it, naming the row.
            let r = storbench(&[
                "export",
                s(&back),
                "--format",
                "csv",
                "-o",
                s(&d.join("x.csv")),
            ]);
            let err = String::from_utf8_lossy(&r.stderr);
            assert_eq!(r.status.code(), Some(2), "{err}");
            assert!(
                err.contains("not in issue order") && err.contains("sort_values"),
                "{err}"
            );
        }
    }
}

/// `--device` naming a device the capture lacks: an error listing those it has (exit
/// 2), no trace written; it used to write an empty trace and exit 0.
#[test]
fn import_device_not_in_the_capture_lists_the_devices() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.parquet");
    let r = storbench(&[
        "import",
        s(&fixture("captures/blkparse_loop.txt")),
        "--device",
        "8,0",
        "-o",
        s(&out),
    ]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(err.contains("it has 7,0, 7,1"), "{err}");
    assert!(
        err.contains("hint: give --device one of the devices present"),
        "{err}"
    );
    assert!(!out.exists());
}
