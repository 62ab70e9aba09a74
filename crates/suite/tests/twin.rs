//! `twin measure` as a procedure (issue 33): on a simulated drive it records exactly
//! the figures the fit's in-process evaluation computes for that drive, so a twin of a
//! simulated drive starts from a measurement it can match bit for bit.

use storbench_sim::SimConfig;
use storbench_suite::bench::{BenchConfig, BenchSummary, DriveState, Workload};
use storbench_suite::twin::TwinMeasureConfig;
use storbench_suite::{execute, Control, Start};
use storbench_twin::eval::run_plan;
use storbench_twin::plan::{span, Plan, Step, StepWork};
use storbench_twin::{measure_sim, Measurement, PlanShape};
use storbench_workload::generator::{GenSpec, Limit, Mix, Pattern};

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

fn io(name: &str, spec: GenSpec) -> Step {
    Step {
        name: name.into(),
        title: name.into(),
        work: StepWork::Io {
            spec,
            time_limit_ns: None,
        },
    }
}

fn rand(span_bytes: u64, read_pct: u8, qd: u32, limit: Limit, seed: u64) -> GenSpec {
    GenSpec {
        pattern: Pattern::Random,
        mix: Mix::ReadWrite { read_pct },
        block_bytes: 4096,
        qd,
        span_start_bytes: 0,
        span_bytes,
        limit,
        seed,
    }
}

/// Figures no phase of the plan measures, of the drive `spec`: steady-state IOPS and
/// write p99 at 75% span (25% spare area; a span's worth of writes measured, so the
/// p99 is of the state, not of where one GC victim fell), a mixed 60/40 4 KB workload's data rate at
/// QD8 on a full drive, and the Heavy 2011 trace bench at 75% span, fresh and seasoned
/// (data rate and p99 service time).
fn unmeasured(spec: &str, dir: &std::path::Path) -> Vec<(&'static str, f64)> {
    let cfg = SimConfig::parse(spec).unwrap();
    let c = cfg.capacity_bytes;
    let s75 = span(c, 0.75);
    let plan = Plan {
        capacity_bytes: c,
        steps: vec![
            io("fill", GenSpec::seq_fill(0, c, 0)),
            io("mixed-60-40", rand(c, 60, 8, Limit::Ios(20_000), 7)),
            Step {
                name: "purge".into(),
                title: "purge".into(),
                work: StepWork::Purge,
            },
            io("fill-75", GenSpec::seq_fill(0, s75, 0)),
            io(
                "warm-75",
                rand(s75, 0, 32, Limit::Bytes(s75 / 4096 * 4096 * 2), 9),
            ),
            io(
                "steady-75",
                rand(s75, 0, 32, Limit::Bytes(s75 / 4096 * 4096), 10),
            ),
        ],
    };
    let runs = run_plan(cfg, &plan).unwrap();
    let get = |n: &str| &runs.iter().find(|(k, _)| k == n).unwrap().1;
    let fresh = bench(&dir.join("fresh"), spec, DriveState::Fresh);
    let seasoned = bench(&dir.join("seasoned"), spec, DriveState::Seasoned);
    vec![
        ("steady IOPS at 75% span", get("steady-75").iops),
        (
            "steady write p99 at 75% span",
            get("steady-75").service_write.p99_us,
        ),
        ("60/40 QD8 MB/s", get("mixed-60-40").data_rate_mb_per_s),
        ("heavy-2011 fresh MB/s", fresh.data_rate_mb_per_s),
        ("heavy-2011 fresh p99", fresh.service.p99_us),
        ("heavy-2011 seasoned MB/s", seasoned.data_rate_mb_per_s),
        ("heavy-2011 seasoned p99", seasoned.service.p99_us),
    ]
}

/// Issue 33's test: a simulated drive stands in for a real one; its twin, fitted to the
/// plan's figures alone (starting from the nearest of four class presets), predicts
/// what the plan never ran within 10% of the drive's own: steady state at 75% span,
/// a mixed workload, and the Heavy 2011 trace bench at 75% span, fresh and seasoned.
fn predicts(hidden: &str) {
    let m = measure_sim(SimConfig::parse(hidden).unwrap(), &PlanShape::quick()).unwrap();
    let opts = storbench_twin::FitOptions {
        presets: [
            "sata-mlc-2013",
            "sata-tlc-slc-2013",
            "nvme-mlc-2016",
            "sata-mlc-enterprise",
        ]
        .map(String::from)
        .to_vec(),
        ..Default::default()
    };
    let twin = storbench_twin::fit(&m, &opts).unwrap();
    eprintln!(
        "{hidden}\n  twin: {} (cost {:.2} from {:.1}, {} evaluations)",
        twin.target, twin.cost, twin.start_cost, twin.evaluations
    );
    for f in &twin.figures {
        eprintln!(
            "  {:<26} {:>10.1} {:>10.1} {:+6.1}%",
            f.name, f.measured, f.twin, f.error_pct
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let truth = unmeasured(hidden, &tmp.path().join("drive"));
    let pred = unmeasured(&twin.target, &tmp.path().join("twin"));
    let mut worst = (0.0f64, "");
    for ((what, a), (_, b)) in truth.iter().zip(&pred) {
        let err = 100.0 * (b - a) / a;
        eprintln!("  {what:<30} drive {a:>10.1}  twin {b:>10.1}  ({err:+.1}%)");
        if err.abs() > worst.0 {
            worst = (err.abs(), what);
        }
    }
    assert!(
        worst.0 <= 10.0,
        "{hidden}: {} is {:.1}% off; twin {}",
        worst.1,
        worst.0,
        twin.target
    );
}

#[test]
fn twin_of_slower_program_more_spare_area_slower_controller() {
    predicts("sim:sata-mlc-2013,capacity=256m,program_us=1400,read_us=60,op=0.15,write_cmd_us=50,suspend_program_us=0");
}

#[test]
fn twin_of_faster_program_slow_reads_suspend_small_buffer() {
    predicts("sim:sata-mlc-2013,capacity=256m,program_us=900,read_us=90,op=0.10,read_cmd_us=45,suspend_program_us=300,write_buffer=4m");
}

#[test]
fn twin_of_tlc_with_a_larger_slc_cache() {
    predicts("sim:sata-tlc-slc-2013,capacity=256m,slc_static=12m,op=0.12,write_cmd_us=30");
}

#[test]
fn twin_of_nvme_with_slow_controller_and_large_spare_area() {
    predicts(
        "sim:nvme-mlc-2016,capacity=256m,op=0.25,read_cmd_us=20,program_us=1800,suspend_erase_us=0",
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

/// Held out while the fit was designed on the four drives above; its twin passed at
/// the first try.
#[test]
fn twin_of_enterprise_with_slower_programs_and_a_larger_buffer() {
    predicts(
        "sim:sata-mlc-enterprise,capacity=256m,program_us=1600,op=0.20,read_us=50,write_buffer=16m",
    );
}

/// Was: the twin matched every measured figure (cost 0.15) with no program suspend,
/// and the Heavy 2011 p99 came out +40%: the mixed probe ran on a freshly filled drive
/// whose 32 MiB buffer held its writes, so no read met a program. The plan now probes
/// again in steady state, with garbage collection running.
#[test]
fn twin_of_nvme_with_slow_reads_and_program_suspend() {
    predicts("sim:nvme-mlc-2016,capacity=256m,program_us=900,read_us=90,op=0.10,write_cmd_us=25,suspend_program_us=500");
}
