//! Snapshots of every subcommand's `--help` and of the common user errors, so a change
//! to a flag, its help or an error message shows up in review (issue 22). Stable: the
//! width is fixed, temporary paths are replaced by `[TMP]`, and no version is printed.

use std::process::{Command, Output};

/// Runs `storbench` at a fixed help width, without colour.
fn storbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_storbench"))
        .args(args)
        .env("COLUMNS", "100")
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .output()
        .expect("run storbench")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The subcommands a `--help` lists under "Commands:" (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A wrapped description continues deeper in; a name stands two spaces in.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// Every command path, found by walking the `--help` output from the top.
fn command_paths() -> Vec<Vec<String>> {
    let mut out = vec![vec![]];
    let mut i = 0;
    while i < out.len() {
        let path = out[i].clone();
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let help = text(&storbench(&args).stdout);
        for sub in subcommands(&help) {
            let mut p = path.clone();
            p.push(sub);
            out.push(p);
        }
        i += 1;
    }
    out
}

#[test]
fn help_of_every_subcommand() {
    let paths = command_paths();
    // The walk found the nested ones too (a parse change would lose them silently).
    assert!(paths.contains(&vec!["sim".into(), "presets".into()]));
    assert!(paths.contains(&vec!["db".into(), "report".into()]));
    assert!(paths.contains(&vec!["completions".into()]));
    for path in paths {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let out = storbench(&args);
        assert!(out.status.success(), "{args:?}");
        let name = if path.is_empty() {
            "help".to_owned()
        } else {
            format!("help_{}", path.join("_"))
        };
        insta::assert_snapshot!(name, text(&out.stdout));
    }
}

/// Exit status and stderr, with temporary paths replaced.
fn error_of(args: &[&str], tmp: &std::path::Path) -> String {
    let out = storbench(args);
    let stderr = text(&out.stderr).replace(tmp.to_str().unwrap(), "[TMP]");
    format!("exit status: {:?}\n{stderr}", out.status.code())
}

#[test]
#[allow(
    clippy::too_many_lines,
    reason = "a table of bad command lines, each beside its snapshot"
)]
fn common_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    let out = dir.to_str().unwrap();
    let existing = tmp.path().join("data.bin");
    std::fs::write(&existing, b"the user's data").unwrap();
    let cases: [(&str, Vec<&str>); 9] = [
        (
            "unknown_flag",
            vec!["run", "--target", "sim:client-7op", "--bogus"],
        ),
        ("unknown_subcommand", vec!["bogus"]),
        (
            "bad_size",
            vec![
                "consistency",
                "--quick",
                "-t",
                "sim:client-7op",
                "--bs",
                "1.3k",
            ],
        ),
        (
            "bad_duration",
            vec!["run", "--target", "sim:client-7op", "--time", "soon"],
        ),
        (
            "bad_rw",
            vec!["run", "--target", "sim:client-7op", "--rw", "randread:50"],
        ),
        (
            "bad_mode",
            vec![
                "replay",
                "t.parquet",
                "--target",
                "sim:client-7op",
                "--mode",
                "fast",
            ],
        ),
        ("missing_target", vec!["run", "-o", out]),
        (
            "unknown_preset",
            vec![
                "run",
                "--target",
                "sim:nosuch",
                "--time",
                "1s",
                "-q",
                "-o",
                out,
            ],
        ),
        (
            "refused_target",
            vec![
                "run",
                "--target",
                existing.to_str().unwrap(),
                "--rw",
                "write",
                "--time",
                "1s",
                "-q",
                "-o",
                out,
            ],
        ),
    ];
    for (name, args) in cases {
        let shown = error_of(&args, tmp.path());
        assert!(shown.starts_with("exit status: Some(2)"), "{name}: {shown}");
        insta::assert_snapshot!(format!("error_{name}"), shown);
    }
    assert_eq!(
        std::fs::read(&existing).unwrap(),
        b"the user's data",
        "the refused file is untouched"
    );
}

/// The same quantity reads the same in every command (issue 22: `run --time 1min`
/// failed while `consistency --duration 1min` worked; `record --duration 250us` and
/// `consistency --bs 1.5k` failed).
#[test]
fn quantities_read_alike_in_every_command() {
    let accepted = |args: &[&str]| {
        let out = storbench(args);
        let err = text(&out.stderr);
        assert!(
            !err.contains("invalid value"),
            "{args:?} refused a value: {err}"
        );
    };
    // Parsing only: each command stops at a later, different check (or --help).
    accepted(&["run", "--time", "1min", "--bs", "1.5k", "--help"]);
    accepted(&[
        "consistency",
        "--duration",
        "1min",
        "--bs",
        "1.5k",
        "--help",
    ]);
    accepted(&["consistency", "--time", "250us", "--help"]);
    accepted(&["record", "--duration", "250us", "--help"]);
    accepted(&["replay", "--time", "1min", "--max-idle", "250us", "--help"]);
    // The same bad value is refused alike, naming the flag each command spells.
    for (cmd, flag) in [
        ("run", "--time"),
        ("consistency", "--time"),
        ("record", "--time"),
    ] {
        let out = storbench(&[cmd, flag, "1fortnight"]);
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!("invalid value '1fortnight' for '{flag} <TIME>'")),
            "{cmd}: {err}"
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = storbench(args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        let r: serde_json::Value = serde_json::from_slice(
            &std::fs::read(std::path::Path::new(args.last().unwrap()).join("result.json")).unwrap(),
        )
        .unwrap();
        r
    };
    let a = tmp.path().join("a");
    let r = run(&[
        "run",
        "--target",
        "sim:client-7op,capacity=1g",
        "--rw",
        "randwrite",
        "--bs",
        "1.5k",
        "--time",
        "0.05s",
        "-q",
        "-o",
        a.to_str().unwrap(),
    ]);
    assert_eq!(r["config"]["block_bytes"], 1536, "{}", r["config"]);
}

/// A block device carrying a filesystem, not named in --destroy-data: the refusal the
/// user sees. Skips without root or loop devices.
#[test]
fn error_refused_device() {
    let lo = match storbench_testkit::LoopDevice::new(32 << 20, &["mkfs.ext4"]) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    storbench_testkit::sh("mkfs.ext4", &["-q", "-U", "clear", lo.path_str()]).unwrap();
    let out = lo.dir().join("out");
    let o = storbench(&[
        "run",
        "--target",
        lo.path_str(),
        "--rw",
        "write",
        "--bytes",
        "1m",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ]);
    // What blkid reports differs between its versions (and it may be missing).
    let stderr: Vec<String> = text(&o.stderr)
        .replace(lo.dir().to_str().unwrap(), "[TMP]")
        .replace(lo.path_str(), "[DEV]")
        .lines()
        .map(|l| match l.find("; it carries what blkid") {
            Some(i) => format!("{}; [BLKID]", &l[..i]),
            None => l.to_owned(),
        })
        .collect();
    let shown = format!("exit status: {:?}\n{}", o.status.code(), stderr.join("\n"));
    insta::assert_snapshot!("error_refused_device", shown);
}

/// Completions come from the parser: they offer the enumerations' values.
#[test]
fn completions_offer_flags_and_values() {
    let out = storbench(&["completions", "bash"]);
    assert!(out.status.success());
    let script = text(&out.stdout);
    for needle in [
        "--checkpoint-every",
        "io_uring-async",
        "fixed-qd",
        "fio-iolog-v3",
    ] {
        assert!(script.contains(needle), "bash completions lack {needle}");
    }
    let bad = storbench(&["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2));
}
