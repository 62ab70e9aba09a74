//! `twin measure` as a procedure (issue 33): on a simulated drive it records exactly
//! the figures the fit's in-process evaluation computes for that drive, so a twin of a
//! simulated drive starts from a measurement it can match bit for bit.

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
    let got: Measurement = serde_json::from_value(r.summary).unwrap();
    let want = measure_sim(
        storbench_sim::SimConfig::parse(HIDDEN).unwrap(),
        &PlanShape::quick(),
    )
    .unwrap();
    assert_eq!(got.figures.len(), storbench_twin::figures::FIGURES.len());
    assert_eq!(got, want);
}
