#![no_main]
//! Importing arbitrary bytes as spc must return Ok or a typed error, never panic.
use libfuzzer_sys::fuzz_target;
use storbench_trace::formats::{Format, ImportOptions};

fuzz_target!(|data: &[u8]| {
    storbench_trace_fuzz::run(Format::Spc, data, &ImportOptions::default());
    let skip = ImportOptions { skip_bad_lines: true, device: Some((7, 0)), device_id: Some(1), volume: Some(1), ..Default::default() };
    storbench_trace_fuzz::run(Format::Spc, data, &skip);
});
