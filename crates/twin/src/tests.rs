use crate::fit::{residual, solve};
use crate::params::{default_params, param, Point, Scale};
use storbench_sim::{preset, SimConfig};

#[test]
fn scaled_values_round_trip_within_bounds() {
    let p = param("program_us", "us", 100.0, 6000.0, Scale::Log);
    for v in [100.0, 1100.0, 6000.0] {
        assert!((p.value(p.scaled(v)) - v).abs() < 1e-9 * v);
    }
    assert_eq!(p.scaled(50.0), 0.0);
    assert_eq!(p.scaled(1e9), 1.0);
    let q = param("op", "share", 0.0, 0.5, Scale::Linear);
    assert!((q.value(0.5) - 0.25).abs() < 1e-12);
}

/// The twin's `target` spec opens exactly the drive the fit evaluated, at any capacity
/// (the erase time given in the spec stops the small drive's halving of it, so the
/// spec carries the halved value).
#[test]
fn target_spec_opens_the_drive_the_fit_evaluated() {
    let base = preset("sata-tlc-slc-2013").unwrap().config;
    let params = default_params(&base);
    let point = Point {
        preset: "sata-tlc-slc-2013".into(),
        values: params
            .iter()
            .map(|p| (p.key.clone(), p.value(0.37)))
            .collect(),
    };
    for cap in [256u64 << 20, 1 << 30, 240 << 30] {
        let cfg = point.config(cap).unwrap();
        let spec = point.spec(cap).unwrap();
        let again = SimConfig::parse(&spec).unwrap();
        assert_eq!(
            serde_json::to_value(&again).unwrap(),
            serde_json::to_value(&cfg).unwrap(),
            "{spec}"
        );
    }
}

#[test]
fn solve_gives_the_solution_of_a_small_system() {
    let m = vec![
        vec![4.0, 1.0, 0.0],
        vec![1.0, 3.0, 1.0],
        vec![0.0, 1.0, 2.0],
    ];
    let x = [1.0, -2.0, 3.0];
    let b: Vec<f64> = m
        .iter()
        .map(|r| r.iter().zip(&x).map(|(a, b)| a * b).sum())
        .collect();
    let got = solve(m, b);
    for (g, w) in got.iter().zip(x) {
        assert!((g - w).abs() < 1e-12, "{got:?}");
    }
}

#[test]
fn residuals_are_log_ratios_over_noise() {
    assert!((residual(110.0, 100.0, 0.02) - (1.1f64).ln() / 0.02).abs() < 1e-12);
    assert_eq!(residual(100.0, 100.0, 0.05), 0.0);
    assert!(residual(0.0, 100.0, 0.05) < -10.0);
}

/// The same measurement gives the same twin with one thread or two.
#[test]
fn the_fit_does_not_depend_on_jobs() {
    let cfg = SimConfig::parse("sim:sata-mlc-2013,capacity=64m,program_us=1300").unwrap();
    let m = crate::measure_sim(cfg, &crate::PlanShape::quick()).unwrap();
    let run = |jobs| {
        let o = crate::FitOptions {
            presets: vec!["sata-mlc-2013".into()],
            max_iterations: 2,
            starts: 1,
            jobs,
            eval_capacity_bytes: 64 << 20,
            ..Default::default()
        };
        crate::fit(&m, &o).unwrap()
    };
    assert_eq!(run(1), run(2));
}

/// A stop raised before the fit (or during it: Ctrl-C in a notebook) ends it with
/// `Stopped`, not with a twin fitted to part of the work.
#[test]
fn a_stopped_fit_ends_with_stopped() {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    let cfg = SimConfig::parse("sim:sata-mlc-2013,capacity=64m").unwrap();
    let m = crate::measure_sim(cfg, &crate::PlanShape::quick()).unwrap();
    let o = crate::FitOptions {
        presets: vec!["sata-mlc-2013".into()],
        eval_capacity_bytes: 64 << 20,
        stop: Some(Arc::new(AtomicBool::new(true))),
        ..Default::default()
    };
    let e = crate::fit(&m, &o).unwrap_err();
    assert!(matches!(e, crate::TwinError::Stopped), "{e}");
}
