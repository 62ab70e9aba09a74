//! `storbench sweep` through the built binary: the dry run, a bad plan's message and
//! exit status, a sweep killed mid-point that continues to the same dataset as one
//! never stopped, and `storbench report` of a sweep directory.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

mod common;
use common::{ok, storbench};

const PLAN: &str = r#"
name = "kill test"
checkpoint_every = "1s"

[[target]]
preset = "client-7op"
capacity = "1g"
victim = ["greedy", "fifo"]

[[procedure]]
name = "consistency"
quick = true
duration = "10s"
round = "1s"
"#;

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

#[test]
fn dry_run_prints_every_point_and_the_size() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("plan.toml");
    std::fs::write(
        &plan,
        PLAN.replace(
            "[\"greedy\", \"fifo\"]",
            "[\"greedy\", \"fifo\", \"random\"]",
        ),
    )
    .unwrap();
    let out = ok(&storbench(&["sweep", s(&plan), "--dry-run"]));
    assert!(out.starts_with("plan kill test: 3 points\n"), "{out}");
    assert!(
        out.contains("axis victim (3 values): greedy, fifo, random"),
        "{out}"
    );
    assert_eq!(
        out.matches("sim:client-7op,capacity=1g,victim=").count(),
        3,
        "{out}"
    );
    assert!(!tmp.path().join("points").exists());
}

#[test]
fn a_bad_plan_is_a_user_error_naming_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("bad.toml");
    std::fs::write(&plan, PLAN.replace("victim = [", "victim_policy = [")).unwrap();
    let o = storbench(&["sweep", s(&plan), "-o", s(&tmp.path().join("out"))]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.toml:") && err.contains("victim_policy"),
        "{err}"
    );
    assert!(
        !tmp.path().join("out").exists(),
        "nothing is created for a bad plan"
    );
}

/// Issue 32: a plan's options go through the command's own parser, so `sweep
/// --dry-run` refuses a bad value with the words `storbench consistency` uses for it,
/// and the same exit status.
#[test]
fn dry_run_refuses_a_bad_value_as_the_command_line_does() {
    let tmp = tempfile::tempdir().unwrap();
    let target = "sim:client-7op,capacity=1g";
    for (key, flag, value, words) in [
        (
            "qd",
            "--qd",
            "5000",
            "--qd 5000: must be between 1 and 4096",
        ),
        (
            "time",
            "--time",
            "ten",
            "invalid value 'ten' for '--time <TIME>'",
        ),
        (
            "bs",
            "--bs",
            "1.3k",
            "invalid value '1.3k' for '--bs <SIZE>'",
        ),
    ] {
        let plan = tmp.path().join(format!("{key}.toml"));
        let quoted = if key == "qd" {
            value.to_owned()
        } else {
            format!("\"{value}\"")
        };
        std::fs::write(
            &plan,
            PLAN.replace("duration = \"10s\"", &format!("{key} = {quoted}")),
        )
        .unwrap();
        let sweep = storbench(&["sweep", s(&plan), "--dry-run"]);
        let out = tmp.path().join(key);
        let cli = storbench(&[
            "consistency",
            "--target",
            target,
            "--quick",
            flag,
            value,
            "-o",
            s(&out),
        ]);
        let (se, ce) = (
            String::from_utf8_lossy(&sweep.stderr),
            String::from_utf8_lossy(&cli.stderr),
        );
        assert!(
            se.contains(words) && se.contains(&format!("{key}.toml:")),
            "{se}"
        );
        assert!(ce.contains(words), "{ce}");
        assert_eq!(sweep.status.code(), Some(2), "{se}");
        assert_eq!(cli.status.code(), Some(2), "{ce}");
    }
}

#[test]
fn a_sweep_killed_mid_point_continues_to_the_dataset_of_one_never_stopped() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("plan.toml");
    std::fs::write(&plan, PLAN).unwrap();
    let whole = tmp.path().join("whole");
    ok(&storbench(&[
        "sweep",
        s(&plan),
        "-o",
        s(&whole),
        "-j",
        "2",
        "-q",
    ]));

    let killed = tmp.path().join("killed");
    let mut child = Command::new(env!("CARGO_BIN_EXE_storbench"))
        .args(["sweep", s(&plan), "-o", s(&killed), "-j", "1", "-q"])
        .spawn()
        .unwrap();
    // Wait for the first point's random writes to have a checkpoint, then kill -9.
    let t0 = Instant::now();
    'wait: loop {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "never reached the random writes"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "ended before it was killed"
        );
        for e in std::fs::read_dir(killed.join("points"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if let Ok(text) = std::fs::read_to_string(e.path().join("state.json")) {
                let st: serde_json::Value = serde_json::from_str(&text).unwrap();
                let rw = &st["phases"][2];
                if rw["status"] == "running" && rw["checkpoint"]["series_rows"].as_u64() >= Some(2)
                {
                    break 'wait;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!killed.join("sweep.parquet").exists());

    let out = ok(&storbench(&["sweep", s(&plan), "-o", s(&killed), "-q"]));
    assert!(
        out.starts_with("2 of 2 points finished (2 this run, 0 before)"),
        "{out}"
    );
    assert_eq!(
        std::fs::read(whole.join("sweep.parquet")).unwrap(),
        std::fs::read(killed.join("sweep.parquet")).unwrap(),
        "the killed and continued sweep wrote another dataset"
    );
    // One point was continued, not redone.
    let resumed: u64 = std::fs::read_dir(killed.join("points"))
        .unwrap()
        .map(|e| {
            let r: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(e.unwrap().path().join("result.json")).unwrap(),
            )
            .unwrap();
            r["resumes"].as_u64().unwrap()
        })
        .sum();
    assert_eq!(resumed, 1);

    // The report draws the sweep, and not each point as a run of its own.
    let html = tmp.path().join("r.html");
    let o = storbench(&["report", s(&killed), "-o", s(&html)]);
    ok(&o);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<section id=\"sweeps\">"), "no sweep section");
    assert!(
        page.contains("steady_iops over victim"),
        "no line chart of steady IOPS"
    );
    assert!(
        !page.contains("<section id=\"consistency\">"),
        "points reported as runs"
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("0 result(s), 1 sweep(s)"));
}
