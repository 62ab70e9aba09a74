//! Synthesized traces: the published benchmark profiles (AnandTech Heavy and Light
//! 2011, The Destroyer 2013, Tom's Hardware Storage Bench v1.0) and user profiles from
//! TOML, written as traces with issue and completion times.
//!
//! ```no_run
//! use storbench_workload::synth::{self, SynthOptions};
//! let profile = synth::load("heavy-2011").unwrap();
//! let opts = SynthOptions { scale: 0.1, ..SynthOptions::default() };
//! let meta = synth::trace_meta(&profile, &opts);
//! let mut w = storbench_trace::TraceWriter::create("heavy.parquet".as_ref(), &meta).unwrap();
//! let summary = synth::generate(&profile, &opts, &mut w, &mut |_, _| {}).unwrap();
//! w.finish().unwrap();
//! println!("{} I/Os, average QD {:.3}", summary.total(), summary.avg_qd());
//! ```

mod gen;
pub mod profile;

pub use gen::{
    generate, trace_meta, Sink, SynthError, SynthOptions, SynthSummary, DEFAULT_CAPACITY_BYTES,
    MAX_QD,
};
pub use profile::{
    builtin, load, size_bucket, DriveSpec, Profile, ProfileError, Published, SizeMix, StreamSpec,
    Targets, Violation, BUCKET_BYTES, BUCKET_NAMES, BUILTIN,
};

#[cfg(test)]
mod tests;
