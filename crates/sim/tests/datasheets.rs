//! Every named drive meets its own datasheet's sequential and 4 KB QD32 figures within
//! 5%, at its real capacity, measured through the engine loop as the datasheets'
//! footnotes say (`common::calib::datasheet_measure`). The table it prints is the one
//! in docs/simulator.md ("Named drives against their datasheets").
mod common;

use common::calib::datasheet_measure;
use storbench_sim::presets;

#[test]
fn named_drives_meet_their_datasheets_within_5_percent() {
    let names = [
        "128 KB seq read",
        "128 KB seq write",
        "4 KB read QD32",
        "4 KB write QD32",
    ];
    let mut off = Vec::new();
    let mut n = 0;
    for p in presets() {
        let Some(d) = p.datasheet else { continue };
        n += 1;
        let drive = format!("sim:{}", p.name);
        let got = datasheet_measure(&drive, &d);
        let want = [
            d.seq_read_mb_per_s,
            d.seq_write_mb_per_s,
            d.rand_read_iops,
            d.rand_write_iops,
        ];
        for i in 0..4 {
            let ratio = got[i] / want[i];
            eprintln!(
                "| {} | {} | {:.0} | {:.0} | {:.3} |",
                p.name, names[i], want[i], got[i], ratio
            );
            if (ratio - 1.0).abs() > 0.05 {
                off.push(format!(
                    "{} {}: {:.0} vs {:.0}",
                    p.name, names[i], got[i], want[i]
                ));
            }
        }
    }
    assert_eq!(n, 7, "seven named drives");
    assert!(off.is_empty(), "outside 5% of the datasheet: {off:?}");
}
