//! `storbench replay TRACE --target T`: replay a Parquet trace on a target. Printing
//! only: the options and the replay are the suite's (`storbench_suite::replay`), a
//! procedure of one phase on its runner.

use super::drive::{drive, failed_ios, Driven};
use super::run::print_summary;
use storbench_suite::replay::{ReplayArgs, ReplayConfig};

pub fn run(args: Driven<ReplayArgs>) -> anyhow::Result<()> {
    let (dir, r) = drive::<ReplayConfig>(&args)?;
    // The run's own status first: a closed stdout does not hide failed I/Os.
    let printed = print_summary(&r, &dir);
    failed_ios(&r, &dir)?;
    Ok(printed?)
}
