//! The value parsers of the CLI's quantity flags: the suite's (`storbench_suite::args`,
//! where the procedures' options are declared once, for the CLI and sweep plans alike),
//! so every command reads `1.5k`, `250us` or `1min` the same way.

pub use storbench_suite::args::{duration, size};

/// Where a progress bar draws: stderr (hidden when it is not a terminal), or nowhere.
pub fn draw_target(quiet: bool) -> indicatif::ProgressDrawTarget {
    if quiet {
        indicatif::ProgressDrawTarget::hidden()
    } else {
        indicatif::ProgressDrawTarget::stderr()
    }
}
