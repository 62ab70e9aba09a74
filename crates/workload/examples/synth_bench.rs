//! Times synthesis with and without the Parquet writer, in CPU seconds (the machine is
//! shared: wall time lies), so the generator's and the writer's share of `storbench
//! synth` can be told apart: the generator thread (this one, which also gathers the
//! rows into batches), the rest of the process (the writer's `trace-encode` thread),
//! and wall time.
//!
//! ```text
//! synth_bench PROFILE SCALE OUT.parquet     generate into a trace file
//! synth_bench PROFILE SCALE -               generate into a sink that only counts
//! ```

use std::path::Path;
use storbench_testkit::thread_cpu_ns;
use storbench_trace::{IoRecord, StreamId, TraceError, TraceWriter};
use storbench_workload::synth::{self, Sink, SynthOptions};

/// Counts records and folds their fields (so the generator's work is not optimised away).
struct Null {
    names: u32,
    rows: u64,
    fold: u64,
}

impl Sink for Null {
    fn intern_stream(&mut self, _name: &str) -> StreamId {
        self.names += 1;
        StreamId(self.names - 1)
    }
    fn write(&mut self, rec: &IoRecord) -> Result<(), TraceError> {
        self.rows += 1;
        self.fold ^= rec.issue_ns ^ rec.offset_bytes ^ rec.len_bytes;
        Ok(())
    }
}

/// User + system CPU time of the whole process, ended threads included, ns (from
/// /proc/self/stat, in USER_HZ = 100 ticks on Linux).
fn process_cpu_ns() -> u64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) close with ')'.
    let rest = s.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|v| v.parse().unwrap_or(0))
        .collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    (f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0)) * 10_000_000
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        return Err("usage: synth_bench PROFILE SCALE OUT.parquet|-".into());
    }
    let profile = synth::load(&args[1])?;
    let opts = SynthOptions {
        scale: args[2].parse()?,
        ..SynthOptions::default()
    };
    let cpu0 = thread_cpu_ns();
    let proc0 = process_cpu_ns();
    let wall0 = std::time::Instant::now();
    let (rows, what) = if args[3] == "-" {
        let mut sink = Null {
            names: 0,
            rows: 0,
            fold: 0,
        };
        synth::generate(&profile, &opts, &mut sink, &mut |_, _| {})?;
        assert_ne!(sink.fold, 1);
        (sink.rows, "generate only")
    } else {
        let meta = synth::trace_meta(&profile, &opts);
        let mut w = TraceWriter::create(Path::new(&args[3]), &meta)?;
        synth::generate(&profile, &opts, &mut w, &mut |_, _| {})?;
        (w.finish()?, "generate + write")
    };
    let cpu_s = (thread_cpu_ns() - cpu0) as f64 / 1e9;
    let wall_s = wall0.elapsed().as_secs_f64();
    let proc_s = (process_cpu_ns() - proc0) as f64 / 1e9;
    let other_s = (proc_s - cpu_s).max(0.0);
    let m = rows as f64 / 1e6;
    println!(
        "{what}: {rows} rows; generator thread {cpu_s:.2} CPU-s = {:.2} M rows per CPU-s; \
         other threads (encoder) {other_s:.2} CPU-s; process {proc_s:.2} CPU-s = {:.2} M \
         rows per CPU-s; wall {wall_s:.2} s = {:.2} M rows/s",
        m / cpu_s,
        m / proc_s.max(1e-3),
        m / wall_s
    );
    Ok(())
}
