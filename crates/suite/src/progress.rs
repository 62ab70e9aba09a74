//! The one progress bar of every command that drives a target: one bar per phase, on
//! a terminal only (the CLI decides; piped output stays quiet). Position is the
//! phase's own progress on the target's clock (time-limited phases) or in I/Os
//! (phases with a known number of I/Os), so on the simulated drive, whose clock runs
//! far ahead of the wall, the ETA is the wall time the remaining simulated work takes
//! at the rate seen so far. The message shows the IOPS of the last whole second.

use indicatif::{ProgressBar, ProgressStyle};

/// What the bar counts.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Unit {
    /// Milliseconds of phase time, out of the time limit.
    PhaseMs,
    /// I/Os done, out of the source's total.
    Ios,
    /// I/Os done, total unknown (a spinner).
    IosOpen,
}

/// One phase's bar.
pub struct Progress {
    bar: ProgressBar,
    unit: Unit,
    total: u64,
}

impl Progress {
    /// A bar for phase `name`: `time_limit_ns` when the phase ends by time, else the
    /// source's `total_ios` when known.
    pub fn new(name: &str, time_limit_ns: Option<u64>, total_ios: Option<u64>) -> Progress {
        let (unit, total) = match (time_limit_ns, total_ios) {
            (Some(t), _) => (Unit::PhaseMs, t / 1_000_000),
            (None, Some(n)) => (Unit::Ios, n),
            (None, None) => (Unit::IosOpen, 0),
        };
        let (bar, template) = if unit == Unit::IosOpen {
            (
                ProgressBar::new_spinner(),
                "{prefix:>14} {spinner} [{elapsed_precise}] {msg}",
            )
        } else {
            (
                ProgressBar::new(total.max(1)),
                "{prefix:>14} [{bar:30}] {percent:>3}% {msg} ETA {eta}",
            )
        };
        bar.set_style(
            ProgressStyle::with_template(template)
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_prefix(name.to_owned());
        Progress { bar, unit, total }
    }

    /// Where the phase stands: `elapsed_ns` of phase time, `done_ios` completed,
    /// `iops` of the last whole second (when one has ended).
    pub fn update(&self, elapsed_ns: u64, done_ios: u64, iops: Option<f64>) {
        let iops = iops.map_or(String::new(), |v| format!(", {v:.0} IOPS"));
        match self.unit {
            Unit::PhaseMs => {
                let ms = (elapsed_ns / 1_000_000).min(self.total);
                self.bar.set_position(ms);
                self.bar.set_message(format!(
                    "{:.0}/{:.0} s{iops}",
                    ms as f64 / 1e3,
                    self.total as f64 / 1e3
                ));
            }
            Unit::Ios => {
                self.bar.set_position(done_ios.min(self.total));
                self.bar
                    .set_message(format!("{done_ios}/{} I/Os{iops}", self.total));
            }
            Unit::IosOpen => self.bar.set_message(format!("{done_ios} I/Os{iops}")),
        }
    }

    /// The phase ended: clear the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// The phase stopped early: leave the bar as it stands.
    pub fn abandon(&self) {
        self.bar.abandon();
    }
}
