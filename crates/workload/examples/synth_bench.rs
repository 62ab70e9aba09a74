//! Times synthesis with and without the Parquet writer, in CPU seconds of this thread
//! (the machine is shared: wall time lies), so the generator's and the writer's share
//! of `storbench synth` can be told apart.
//!
//! ```text
//! synth_bench PROFILE SCALE OUT.parquet     generate into a trace file
//! synth_bench PROFILE SCALE -               generate into a sink that only counts
//! ```

use std::path::Path;
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

/// CPU time of this thread, ns.
fn thread_cpu_ns() -> u64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    s.split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
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
    println!(
        "{what}: {rows} rows in {cpu_s:.2} CPU-s = {:.2} M rows per CPU-s",
        rows as f64 / cpu_s / 1e6
    );
    Ok(())
}
