//! The calibration table of docs/simulator.md: every published figure of METHODOLOGY
//! "Timing" beside the simulated one, measured through the engine loop.
//!
//! usage: sim_calibrate [SPEC]   (default sim:sata-mlc-2013,capacity=256g)

#[path = "../tests/common/calib.rs"]
mod calib;

fn main() {
    let drive = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "sim:sata-mlc-2013,capacity=256g".to_string());
    println!("{drive}");
    for f in calib::sata_2013_figures(&drive) {
        println!("{}", f.line());
    }
}
