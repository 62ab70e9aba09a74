//! `twin measure` as a procedure (issue 33): on a simulated drive it records exactly
//! the figures the fit's in-process evaluation computes for that drive, so a twin of a
//! simulated drive starts from a measurement it can match bit for bit.

use storbench_suite::bench::{BenchConfig, BenchSummary, DriveState, Workload};
use storbench_suite::twin::TwinMeasureConfig;
use storbench_suite::{execute, Control, Start};
use storbench_twin::{measure_sim, Measurement, PlanShape};

const HIDDEN: &str = "sim:sata-mlc-2013,capacity=64m,program_us=1300,op=0.12";

#[test]
fn twin_measure_on_sim_equals_the_fits_own_evaluation() {
    let tmp = tempfile::tempdir().unwrap();
    let r = execute(
        &tmp.path().join("m"),
        Start::New(TwinMeasureConfig::quick(HIDDEN)),
        &Control::default(),
    )
    .unwrap();
    assert!(r.complete, "{:?}", r.notes);
    let got: Measurement = r.summary.expect("a complete run has its summary");
    let want = measure_sim(
        storbench_sim::SimConfig::parse(HIDDEN).unwrap(),
        &PlanShape::quick(),
    )
    .unwrap();
    assert_eq!(got.figures.len(), storbench_twin::figures::FIGURES.len());
    assert_eq!(got, want);
}

fn bench(dir: &std::path::Path, target: &str, state: DriveState) -> BenchSummary {
    let mut c = BenchConfig::new(
        target,
        Workload::Profile {
            name: "heavy-2011".into(),
            scale: 0.002,
            seed: 1,
        },
    );
    c.state = state;
    c.span_fraction = 0.75;
    let r = execute(dir, Start::New(c), &Control::default()).unwrap();
    r.summary.expect("a complete run has its summary")
}

/// Issue 33's test: a simulated drive stands in for a real one; its twin, fitted to the
/// plan's figures alone, predicts the Heavy 2011 trace bench at 75% span (which the
/// plan never ran), fresh and seasoned, within 10% of the drive's own data rate and
/// p99 service time.
#[test]
fn the_twin_predicts_a_trace_bench_it_never_measured() {
    let hidden = "sim:sata-mlc-2013,capacity=256m,program_us=1400,read_us=60,op=0.15,write_cmd_us=50,suspend_program_us=0";
    let m = measure_sim(
        storbench_sim::SimConfig::parse(hidden).unwrap(),
        &PlanShape::quick(),
    )
    .unwrap();
    let opts = storbench_twin::FitOptions {
        presets: ["sata-mlc-2013", "sata-tlc-slc-2013", "nvme-mlc-2016"]
            .map(String::from)
            .to_vec(),
        ..Default::default()
    };
    let twin = storbench_twin::fit(&m, &opts).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut worst = 0.0f64;
    for state in [DriveState::Fresh, DriveState::Seasoned] {
        let d = bench(&tmp.path().join(format!("d{state:?}")), hidden, state);
        let t = bench(&tmp.path().join(format!("t{state:?}")), &twin.target, state);
        for (what, a, b) in [
            ("data rate", d.data_rate_mb_per_s, t.data_rate_mb_per_s),
            ("p99 service", d.service.p99_us, t.service.p99_us),
        ] {
            let err = 100.0 * (b - a) / a;
            eprintln!(
                "heavy-2011 at 75% span, {state:?}, {what}: drive {a:.1}, twin {b:.1} ({err:+.1}%)"
            );
            worst = worst.max(err.abs());
        }
    }
    assert!(
        worst <= 10.0,
        "a prediction is {worst:.1}% off; twin {}",
        twin.target
    );
}

/// Issue 32's pattern: the twin's options are one clap struct, parsed for a sweep point
/// as on the command line; the plan sets its own queue depths, so `--qd` is refused.
#[test]
fn twin_measure_options_parse_as_the_command_lines() {
    use storbench_suite::args::{parse_options, TargetChoice};
    use storbench_suite::twin::TwinMeasureArgs;
    use storbench_suite::Procedure;
    let a: TwinMeasureArgs =
        parse_options("twin-measure", &["--quick".into(), "--data=zeros".into()]).unwrap();
    let c = TwinMeasureConfig::configure(&a, &TargetChoice::sim(HIDDEN))
        .unwrap()
        .config;
    assert_eq!(c.shape, PlanShape::quick());
    assert_eq!(c.data, storbench_engine::DataKind::Zeros);
    let e = parse_options::<TwinMeasureArgs>("twin-measure", &["--qd=4".into()]).unwrap_err();
    assert!(e.to_string().contains("--qd"), "{e}");
}
