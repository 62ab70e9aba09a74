//! Steady-state detection (SNIA PTS rule) and performance-consistency scores
//! (METHODOLOGY section 4).

use serde::{Deserialize, Serialize};

/// Default SNIA measurement window, in rounds.
pub const SNIA_WINDOW_ROUNDS: usize = 5;
/// Data excursion limit: (max − min) ≤ 20% of the window mean.
pub const SNIA_DATA_EXCURSION_MAX: f64 = 0.20;
/// Slope excursion limit: the least-squares line's rise across the window ≤ 10% of the mean.
pub const SNIA_SLOPE_EXCURSION_MAX: f64 = 0.10;
/// Default length of the consistency-score window, seconds.
pub const CONSISTENCY_LAST_S: usize = 400;

/// Where steady state was first reached, and the window's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// Index (0-based) of the last round of the first window that passed: steady
    /// state is declared at the end of this round.
    pub round_index: usize,
    /// Index of the first round of that window.
    pub window_start: usize,
    pub window_rounds: usize,
    pub window_mean: f64,
    /// max − min over the window.
    pub data_excursion: f64,
    /// Least-squares slope, per round.
    pub slope_per_round: f64,
    /// |slope| × (window_rounds − 1): the fitted line's rise across the window.
    pub slope_excursion: f64,
}

/// Least-squares slope of `y` against x = 0, 1, 2, ...
fn ls_slope(y: &[f64]) -> f64 {
    let n = y.len() as f64;
    let mean_x = (n - 1.0) / 2.0;
    let mean_y = y.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, &v) in y.iter().enumerate() {
        let dx = i as f64 - mean_x;
        sxy += dx * (v - mean_y);
        sxx += dx * dx;
    }
    if sxx == 0.0 {
        0.0
    } else {
        sxy / sxx
    }
}

/// The SNIA steady-state test on one value per round (e.g. the round's mean IOPS):
/// the first window of `window` consecutive rounds with (max − min) ≤ 20% of the
/// window mean AND the least-squares line's rise across the window ≤ 10% of the mean.
/// `None` when no window passes (or fewer than `window` rounds, or the mean is not
/// positive). Not fio's `iops_slope`, which tests a per-sample slope.
pub fn snia_steady_state(values_per_round: &[f64], window: usize) -> Option<SteadyState> {
    assert!(
        window >= 2,
        "a steady-state window needs at least 2 rounds, got {window}"
    );
    assert!(
        values_per_round.iter().all(|v| v.is_finite()),
        "round values must be finite"
    );
    values_per_round
        .windows(window)
        .enumerate()
        .find_map(|(start, w)| {
            let mean = w.iter().sum::<f64>() / window as f64;
            if mean <= 0.0 {
                return None;
            }
            let max = w.iter().copied().fold(f64::MIN, f64::max);
            let min = w.iter().copied().fold(f64::MAX, f64::min);
            let data_excursion = max - min;
            let slope = ls_slope(w);
            let slope_excursion = slope.abs() * (window - 1) as f64;
            (data_excursion <= SNIA_DATA_EXCURSION_MAX * mean
                && slope_excursion <= SNIA_SLOPE_EXCURSION_MAX * mean)
                .then_some(SteadyState {
                    round_index: start + window - 1,
                    window_start: start,
                    window_rounds: window,
                    window_mean: mean,
                    data_excursion,
                    slope_per_round: slope,
                    slope_excursion,
                })
        })
}

/// Consistency scores over the last `last_s` per-second values (all of them when the
/// run is shorter). `stddev` is the population standard deviation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConsistencyScores {
    pub avg: f64,
    pub stddev: f64,
    /// Minimum over the same window.
    pub min: f64,
    /// avg ÷ stddev; `None` when stddev is 0 (perfectly flat).
    pub avg_over_stddev: Option<f64>,
    /// Number of seconds scored.
    pub window_s: usize,
}

/// Scores of METHODOLOGY section 4, step 5. `None` when there are no values.
pub fn consistency_scores(iops_per_s: &[f64], last_s: usize) -> Option<ConsistencyScores> {
    assert!(last_s > 0, "the score window must be at least 1 s");
    if iops_per_s.is_empty() {
        return None;
    }
    let v = &iops_per_s[iops_per_s.len().saturating_sub(last_s)..];
    let n = v.len() as f64;
    let avg = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - avg) * (x - avg)).sum::<f64>() / n;
    let stddev = var.sqrt();
    Some(ConsistencyScores {
        avg,
        stddev,
        min: v.iter().copied().fold(f64::INFINITY, f64::min),
        avg_over_stddev: (stddev > 0.0).then(|| avg / stddev),
        window_s: v.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn flat_rounds_are_steady_at_the_first_full_window() {
        let s = snia_steady_state(&[100.0; 8], 5).unwrap();
        assert_eq!((s.window_start, s.round_index), (0, 4));
        assert_eq!(s.window_mean, 100.0);
        assert_eq!(s.data_excursion, 0.0);
        assert_eq!(s.slope_excursion, 0.0);
    }

    #[test]
    fn too_few_rounds() {
        assert_eq!(snia_steady_state(&[100.0; 4], 5), None);
        assert_eq!(snia_steady_state(&[], 5), None);
    }

    #[test]
    fn data_excursion_decides() {
        // Window [90, 110, 90, 110, 90]: mean 98, excursion 20 > 19.6: fails.
        // Slope of 90,110,90,110,90 is 0, so only the data excursion fails it.
        let v = [90.0, 110.0, 90.0, 110.0, 90.0];
        assert_eq!(snia_steady_state(&v, 5), None);
        // [91, 109, 91, 109, 91]: mean 98.2, excursion 18 <= 19.64: passes.
        let s = snia_steady_state(&[91.0, 109.0, 91.0, 109.0, 91.0], 5).unwrap();
        assert!(close(s.window_mean, 98.2));
        assert!(close(s.data_excursion, 18.0));
        assert!(close(s.slope_per_round, 0.0));
    }

    #[test]
    fn slope_excursion_decides() {
        // A ramp 95, 97.5, 100, 102.5, 105: mean 100, data excursion 10 (<= 20), slope 2.5
        // per round, rise across the window 10 (<= 10): passes exactly at the limit.
        let ramp = [95.0, 97.5, 100.0, 102.5, 105.0];
        let s = snia_steady_state(&ramp, 5).unwrap();
        assert!(close(s.slope_per_round, 2.5));
        assert!(close(s.slope_excursion, 10.0));
        // A steeper ramp 94, 97, 100, 103, 106: excursion 12 <= 20 but rise 12 > 10: fails.
        assert_eq!(
            snia_steady_state(&[94.0, 97.0, 100.0, 103.0, 106.0], 5),
            None
        );
    }

    #[test]
    fn reached_later_in_a_decaying_run() {
        // Falls from a fresh-drive level, then settles around 50 from round 6 on.
        let v = [
            400.0, 300.0, 200.0, 120.0, 80.0, 60.0, 52.0, 50.0, 49.0, 51.0, 50.0, 50.0,
        ];
        let s = snia_steady_state(&v, 5).unwrap();
        // Window starting at 5 (60, 52, 50, 49, 51): mean 52.4, excursion 11 > 10.48: fails.
        // Window starting at 6 (52, 50, 49, 51, 50): mean 50.4, excursion 3, slope -0.3
        // → rise 1.2: passes.
        assert_eq!((s.window_start, s.round_index), (6, 10));
        assert!(close(s.window_mean, 50.4));
        assert!(close(s.slope_per_round, -0.3));
    }

    #[test]
    fn zero_rounds_are_not_steady() {
        assert_eq!(snia_steady_state(&[0.0; 10], 5), None);
    }

    #[test]
    fn consistency_known_answers() {
        // Last 4 of [1000, 10, 20, 30, 40]: avg 25, population variance 125.
        let s = consistency_scores(&[1000.0, 10.0, 20.0, 30.0, 40.0], 4).unwrap();
        assert_eq!(s.window_s, 4);
        assert_eq!(s.avg, 25.0);
        assert!(close(s.stddev, 125f64.sqrt()));
        assert_eq!(s.min, 10.0);
        assert!(close(s.avg_over_stddev.unwrap(), 25.0 / 125f64.sqrt()));
        // Shorter than the window: all values.
        let s = consistency_scores(&[2.0, 4.0], 400).unwrap();
        assert_eq!((s.avg, s.stddev, s.min, s.window_s), (3.0, 1.0, 2.0, 2));
        // Flat: no ratio.
        assert_eq!(
            consistency_scores(&[7.0; 3], 400).unwrap().avg_over_stddev,
            None
        );
        assert_eq!(consistency_scores(&[], 400), None);
    }
}
