//! The calibration tables of docs/simulator.md, measured through the engine loop:
//! - default: every published figure of METHODOLOGY "Timing" beside the simulated one
//!   on a spec (default: the 2013-class SATA client preset at 256 GiB);
//! - `--datasheets`: every named drive's datasheet figures beside its preset's, at its
//!   real capacity (the table `tests/datasheets.rs` checks within 5%);
//! - `--seeds`: the seeds' figures for the named drives (seed 001), as
//!   `tests/calibration.rs` checks them;
//! - `--presets CAPACITY`: the datasheet-style figures of every preset at CAPACITY.
//!
//! usage: sim_calibrate [SPEC] | --datasheets | --seeds | --presets [CAPACITY]

#[path = "../tests/common/calib.rs"]
mod calib;

fn datasheets() {
    let names = [
        "128 KB sequential read, MB/s",
        "128 KB sequential write, MB/s",
        "4 KB random read QD32, IOPS",
        "4 KB random write QD32, IOPS",
    ];
    println!("| preset | figure | datasheet | preset | ratio |");
    println!("|---|---|---|---|---|");
    for p in storbench_sim::presets() {
        let Some(d) = p.datasheet else { continue };
        let got = calib::datasheet_measure(&format!("sim:{}", p.name), &d);
        let want = [
            d.seq_read_mb_per_s,
            d.seq_write_mb_per_s,
            d.rand_read_iops,
            d.rand_write_iops,
        ];
        for i in 0..4 {
            println!(
                "| {} | {} | {:.0} | {:.0} | {:.3} |",
                p.name,
                names[i],
                want[i],
                got[i],
                got[i] / want[i]
            );
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let first = args.next();
    match first.as_deref() {
        Some("--datasheets") => return datasheets(),
        Some("--seeds") => {
            for r in calib::seed_001_named(20, 40) {
                println!("{}", r.row());
            }
            return;
        }
        Some("--presets") => {
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
        _ => {}
    }
    let drive = first.unwrap_or_else(|| "sim:sata-mlc-2013,capacity=256g".to_string());
    println!("{drive}");
    for f in calib::sata_2013_figures(&drive) {
        println!("{}", f.line());
    }
}
