//! The calibration tables of docs/simulator.md, measured through the engine loop:
//! every published figure of METHODOLOGY "Timing" beside the simulated one on a spec
//! (default: the 2013-class SATA client preset at 256 GiB), and with `--presets` the
//! datasheet figures of every preset at CAPACITY (default 64g; the presets' speed does
//! not depend on capacity).
//!
//! usage: sim_calibrate [SPEC] | sim_calibrate --presets [CAPACITY]

#[path = "../tests/common/calib.rs"]
mod calib;

fn main() {
    let mut args = std::env::args().skip(1);
    let first = args.next();
    if first.as_deref() == Some("--presets") {
        let cap = args.next().unwrap_or_else(|| "64g".into());
        for p in storbench_sim::presets() {
            let drive = format!("sim:{},capacity={cap}", p.name);
            println!("{drive}");
            for (name, unit, v) in calib::datasheet_figures(&drive) {
                println!("  {name:<40} {v:>10.2} {unit}");
            }
        }
        return;
    }
    let drive = first.unwrap_or_else(|| "sim:sata-mlc-2013,capacity=256g".to_string());
    println!("{drive}");
    for f in calib::sata_2013_figures(&drive) {
        println!("{}", f.line());
    }
}
