//! The fit's identifiability report (issue 33). Its accuracy, hidden drives measured
//! and fitted and their twins' predictions of what the plan never ran, is tested with
//! the procedures that predict: crates/suite/tests/twin.rs.

use storbench_sim::SimConfig;
use storbench_twin::{fit, measure_sim, FitOptions, PlanShape};

/// Wear levelling's threshold moves nothing the plan measures: the twin must say so
/// rather than pretend to know it; what the plan is built to see is identified.
#[test]
fn a_parameter_the_plan_cannot_see_is_unidentified() {
    let cfg = SimConfig::parse("sim:sata-mlc-2013,capacity=256m,program_us=1300").unwrap();
    let m = measure_sim(cfg, &PlanShape::quick()).unwrap();
    let o = FitOptions {
        presets: vec!["sata-mlc-2013".into()],
        max_iterations: 3,
        starts: 1,
        extra_params: vec![storbench_twin::params::param(
            "wl_threshold",
            "erases",
            8.0,
            1024.0,
            storbench_twin::params::Scale::Log,
        )],
        ..FitOptions::default()
    };
    let twin = fit(&m, &o).unwrap();
    assert!(
        twin.unidentified.contains(&"wl_threshold".to_string()),
        "{:?}",
        twin.unidentified
    );
    for k in ["program_us", "op", "read_cmd_us", "write_cmd_us"] {
        assert!(
            !twin.unidentified.contains(&k.to_string()),
            "{k}: {:?}",
            twin.unidentified
        );
    }
}
