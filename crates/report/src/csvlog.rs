//! fio-style logs so fio's plotting tools (fio_generate_plots, fiologparser) read them.
//!
//! Files, per phase: `DIR/<phase>_iops.1.log`, `DIR/<phase>_bw.1.log`,
//! `DIR/<phase>_lat.1.log`. Each line is `time_ms, value, ddir, bs, offset` as fio
//! writes with `log_avg_msec=1000`: `time_ms` is the END of the window since the phase
//! start, `ddir` is 0 read, 1 write, 2 trim, `bs` and `offset` are 0 (averaged windows
//! mix sizes). Units as fio's: IOPS, bandwidth in KiB/s, latency in ns (window mean).
//! IOPS and bandwidth lines are written for every window (zeros included) for each
//! direction the phase used; latency lines only for windows with completions of that
//! direction (a window with none has no latency).

use crate::result::ReportError;
use std::fmt::Write as _;
use std::path::PathBuf;
use storbench_metrics::SecondSample;
use storbench_trace::atomic::OutputDir;

/// A phase name made safe for a file name (`[A-Za-z0-9_.-]`, others become `_`).
fn file_stem(phase: &str) -> String {
    let s: String = phase
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        "phase".to_owned()
    } else {
        s
    }
}

/// Write the three fio-style logs of one phase; returns their paths (iops, bw, lat).
/// Window `i` starts at `t_s` whole seconds.
pub fn write_fio_csv_logs(
    dir: &OutputDir,
    phase: &str,
    series: &[SecondSample],
) -> Result<Vec<PathBuf>, ReportError> {
    write_logs(dir, phase, series, |_, s| s.t_s * 1000)
}

/// [`write_fio_csv_logs`] with each window's start given, in ms since the phase start
/// (procedures checkpointed in chunks have a short window at each chunk end, so their
/// windows are not back to back whole seconds).
pub fn write_fio_csv_logs_timed(
    dir: &OutputDir,
    phase: &str,
    series: &[SecondSample],
    start_ms: &[u64],
) -> Result<Vec<PathBuf>, ReportError> {
    assert_eq!(series.len(), start_ms.len(), "one start time per window");
    write_logs(dir, phase, series, |i, _| start_ms[i])
}

/// The names of a phase's three logs (iops, bw, lat), as [`write_fio_csv_logs`] writes
/// them.
pub fn fio_log_names(phase: &str) -> [String; 3] {
    let stem = file_stem(phase);
    ["iops", "bw", "lat"].map(|kind| format!("{stem}_{kind}.1.log"))
}

fn write_logs(
    dir: &OutputDir,
    phase: &str,
    series: &[SecondSample],
    start_ms: impl Fn(usize, &SecondSample) -> u64,
) -> Result<Vec<PathBuf>, ReportError> {
    let stem = file_stem(phase);
    let mut paths = Vec::with_capacity(3);
    for (kind, text) in fio_logs(series, start_ms) {
        let name = format!("{stem}_{kind}.1.log");
        let path = dir.join(&name);
        dir.write(&name, text.as_bytes())
            .map_err(|e| ReportError::io(&path, "write (atomically)", e))?;
        paths.push(path);
    }
    Ok(paths)
}

/// One direction of I/O in the logs: fio's `ddir`, and its completions, bytes and
/// mean latency (µs) in a window.
struct Ddir {
    ddir: u8,
    ios: fn(&SecondSample) -> u64,
    bytes: fn(&SecondSample) -> u64,
    latency_us: fn(&SecondSample) -> f64,
}

const DDIRS: [Ddir; 3] = [
    Ddir {
        ddir: 0,
        ios: |s| s.read_ios,
        bytes: |s| s.read_bytes,
        latency_us: |s| s.read_latency_us_mean,
    },
    Ddir {
        ddir: 1,
        ios: |s| s.write_ios,
        bytes: |s| s.write_bytes,
        latency_us: |s| s.write_latency_us_mean,
    },
    Ddir {
        ddir: 2,
        ios: |s| s.trim_ios,
        bytes: |s| s.trim_bytes,
        latency_us: |_| f64::NAN,
    },
];

/// The text of the three logs of one phase, by kind (`iops`, `bw`, `lat`); the
/// writer stores them.
fn fio_logs(
    series: &[SecondSample],
    start_ms: impl Fn(usize, &SecondSample) -> u64,
) -> [(&'static str, String); 3] {
    let used: Vec<&Ddir> = DDIRS
        .iter()
        .filter(|d| series.iter().any(|s| (d.ios)(s) > 0))
        .collect();
    let (mut iops, mut bw, mut lat) = (String::new(), String::new(), String::new());
    for (i, s) in series.iter().enumerate() {
        let end_ms = start_ms(i, s) + s.window_ns / 1_000_000;
        let window_s = s.window_ns as f64 / 1e9;
        for d in &used {
            let ios = (d.ios)(s);
            let (iops_v, kib_s) = if window_s > 0.0 {
                (
                    ios as f64 / window_s,
                    (d.bytes)(s) as f64 / 1024.0 / window_s,
                )
            } else {
                (0.0, 0.0)
            };
            line(&mut iops, end_ms, iops_v.round() as u64, d.ddir);
            line(&mut bw, end_ms, kib_s.round() as u64, d.ddir);
            let lat_us = (d.latency_us)(s);
            if ios > 0 && lat_us.is_finite() {
                line(&mut lat, end_ms, (lat_us * 1000.0).round() as u64, d.ddir);
            }
        }
    }
    [("iops", iops), ("bw", bw), ("lat", lat)]
}

/// `time_ms, value, ddir, bs, offset` (bs and offset 0: averaged windows mix sizes).
fn line(out: &mut String, end_ms: u64, value: u64, ddir: u8) {
    writeln!(out, "{end_ms}, {value}, {ddir}, 0, 0").expect("write to String");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe() {
        assert_eq!(file_stem("random write/25% OP"), "random_write_25__OP");
        assert_eq!(file_stem(""), "phase");
    }
}
