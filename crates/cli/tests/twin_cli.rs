//! `storbench twin measure` then `twin fit` through the binary (issue 33): twin.json's
//! target opens with every command, its figures stand beside the measured ones, and a
//! result that is no twin measurement is refused with exit status 2.

use std::process::{Command, Output};

fn storbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_storbench"))
        .args(args)
        .output()
        .expect("run storbench")
}

const HIDDEN: &str = "sim:sata-mlc-2013,capacity=64m,program_us=1300";

/// `twin fit DIR` from sata-mlc-2013 only, cut short (the fit's accuracy is the suite's
/// tests'), then its twin.json.
fn short_fit(dir: &std::path::Path, extra: &[&str]) -> (Output, serde_json::Value) {
    let mut args = vec![
        "twin",
        "fit",
        dir.to_str().unwrap(),
        "--presets",
        "sata-mlc-2013",
    ];
    args.extend(extra);
    let o = storbench(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let twin = serde_json::from_slice(&std::fs::read(dir.join("twin.json")).unwrap()).unwrap();
    (o, twin)
}

#[test]
fn measure_then_fit_writes_a_twin_whose_target_opens() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("m");
    let d = dir.to_str().unwrap();
    let o = storbench(&["twin", "measure", "-t", HIDDEN, "-o", d, "--quick", "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (o, twin) = short_fit(
        &dir,
        &[
            "--max-iterations",
            "2",
            "--starts",
            "1",
            "--eval-capacity",
            "64m",
        ],
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("steady_half_iops"), "{out}");
    let target = twin["target"].as_str().unwrap();
    assert!(
        target.starts_with("sim:sata-mlc-2013,capacity=67108864"),
        "{target}"
    );
    assert!(storbench_sim::SimConfig::parse(target).is_ok());
    assert_eq!(
        twin["figures"].as_array().unwrap().len(),
        storbench_twin::figures::FIGURES.len()
    );
    // The start is the hidden drive's preset, so the fit can only improve on it.
    assert!(twin["cost"].as_f64().unwrap() <= twin["start_cost"].as_f64().unwrap());
    // The report shows the twin: measured beside fitted.
    let html = tmp.path().join("r.html");
    let o = storbench(&["report", d, "-o", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<section id=\"twin\">"), "no twin section");
    assert!(page.contains("steady_half_iops"));
    // The twin's target drives a procedure like any spec.
    let o = storbench(&[
        "twin",
        "measure",
        "-t",
        target,
        "-o",
        tmp.path().join("t").to_str().unwrap(),
        "--quick",
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn fit_refuses_a_result_that_is_no_twin_measurement() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("c");
    let o = storbench(&[
        "consistency",
        "-t",
        "sim:sata-mlc-2013,capacity=64m",
        "-o",
        d.to_str().unwrap(),
        "--quick",
        "--time",
        "2s",
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = storbench(&["twin", "fit", d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("not a twin measurement") && err.contains("hint:"),
        "{err}"
    );
}

/// A real drive (a loop device): `twin measure` passes the guard as every procedure
/// (a device with a file system is refused without `--destroy-data` naming it),
/// measures every figure of the plan, and `twin fit` fits a twin to what it measured.
#[test]
fn twin_measure_on_a_loop_device_needs_consent_then_fits() {
    let lo = match storbench_testkit::LoopDevice::new(48 << 20, &["mkfs.ext4"]) {
        Ok(l) => l,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let dev = lo.path_str();
    storbench_testkit::sh("mkfs.ext4", &["-q", "-F", dev]).unwrap();
    let dir = lo.dir().join("m");
    let d = dir.to_str().unwrap();
    let o = storbench(&["twin", "measure", "-t", dev, "-o", d, "--quick", "-q"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--destroy-data"), "{err}");
    let o = storbench(&[
        "twin",
        "measure",
        "-t",
        dev,
        "--destroy-data",
        dev,
        "-o",
        d,
        "--quick",
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (_, twin) = short_fit(&dir, &["--max-iterations", "1", "--starts", "0"]);
    let figures = twin["figures"].as_array().unwrap();
    assert_eq!(figures.len(), storbench_twin::figures::FIGURES.len());
    for f in figures {
        assert!(f["measured"].as_f64().unwrap() > 0.0, "{f}");
    }
    // The twin is at the loop device's capacity.
    assert_eq!(twin["capacity_bytes"], 48u64 << 20);
    assert!(twin["cost"].as_f64().unwrap() <= twin["start_cost"].as_f64().unwrap());
}
