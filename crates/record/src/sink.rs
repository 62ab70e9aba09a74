//! Writing recorded I/Os as a storbench Parquet trace.
//!
//! * times: ns since the recording started (tracing switched on), so idle time before
//!   and between I/Os stays in the trace;
//! * stream: `comm:pid`, the task name and thread id that issued the request as
//!   `block_rq_issue` saw them (I/O issued from a kernel worker carries the worker's
//!   name, e.g. `kworker/0:1H:44`);
//! * device: `major,minor`;
//! * metadata: `source_format` `tracefs-block`, capacity and logical block size of the
//!   device, and `record.*` keys with the recording's counters (lost events, ...).

use crate::block::Comm;
use crate::pair::{FastHasher, PairedIo};
use crate::{DeviceInfo, RecordSummary};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use storbench_trace::{DeviceId, IoRecord, StreamId, TraceError, TraceMeta, TraceWriter};

/// The trace metadata known before recording.
pub fn trace_meta(device: &DeviceInfo) -> TraceMeta {
    let mut meta = TraceMeta {
        source_format: Some("tracefs-block".into()),
        source_file: Some(device.path.display().to_string()),
        capacity_bytes: device.capacity_bytes,
        logical_block_bytes: device.logical_block_bytes,
        tool_version: Some(format!("storbench {}", env!("CARGO_PKG_VERSION"))),
        ..TraceMeta::default()
    };
    meta.extra
        .insert("record.stream_naming".into(), "comm:pid".into());
    if let Some(p) = &device.partition {
        meta.extra
            .insert("record.partition_of".into(), p.disk.display().to_string());
        meta.extra.insert(
            "record.partition_start_bytes".into(),
            (p.start_sector * 512).to_string(),
        );
    }
    meta
}

/// Turns [`PairedIo`]s into trace records.
pub struct TraceSink {
    writer: TraceWriter,
    start_mono_ns: u64,
    device: DeviceId,
    streams: HashMap<(Comm, i32), StreamId, BuildHasherDefault<FastHasher>>,
    /// The last I/O's stream (runs of I/Os from one task are the common case).
    last: Option<((Comm, i32), StreamId)>,
    /// I/Os and bytes by op index.
    pub counts: [u64; 4],
    pub bytes: [u64; 4],
}

impl TraceSink {
    pub fn new(mut writer: TraceWriter, device: &DeviceInfo, start_mono_ns: u64) -> TraceSink {
        let device = writer.intern_device(&device.name());
        TraceSink {
            writer,
            start_mono_ns,
            device,
            streams: HashMap::default(),
            last: None,
            counts: [0; 4],
            bytes: [0; 4],
        }
    }

    pub fn write(&mut self, io: &PairedIo) -> Result<IoRecord, TraceError> {
        let task = (io.comm, io.pid);
        let stream = match self.last {
            Some((t, id)) if t == task => id,
            _ => {
                let writer = &mut self.writer;
                let id = *self.streams.entry(task).or_insert_with(|| {
                    writer.intern_stream(&format!("{}:{}", io.comm.to_string_lossy(), io.pid))
                });
                self.last = Some((task, id));
                id
            }
        };
        let rec = IoRecord {
            issue_ns: io.issue_ns.saturating_sub(self.start_mono_ns),
            complete_ns: io.complete_ns.map(|c| c.saturating_sub(self.start_mono_ns)),
            offset_bytes: io.offset_bytes,
            len_bytes: io.len_bytes,
            op: io.op,
            stream: Some(stream),
            device: Some(self.device),
        };
        self.writer.write(&rec)?;
        self.counts[io.op.index()] += 1;
        self.bytes[io.op.index()] += io.len_bytes;
        Ok(rec)
    }

    pub fn rows(&self) -> u64 {
        self.writer.rows()
    }

    /// Adds the recording's counters to the metadata and closes the file; returns rows.
    pub fn finish(mut self, s: &RecordSummary) -> Result<u64, TraceError> {
        let mut meta = self.writer.meta().clone();
        let mut put = |k: &str, v: String| {
            meta.extra.insert(format!("record.{k}"), v);
        };
        put("start_monotonic_ns", s.start_mono_ns.to_string());
        put("duration_ns", s.duration_ns().to_string());
        put("lost_events_kernel", s.lost_events_kernel().to_string());
        put("lost_events_pages", s.lost_events_pages.to_string());
        put(
            "unmatched_completes",
            s.pair.unmatched_completes.to_string(),
        );
        put("incomplete", s.pair.incomplete.to_string());
        put("errors", s.pair.errors.to_string());
        put("skipped_other_ops", s.pair.skipped_other.to_string());
        put("write_zeroes", s.pair.write_zeroes.to_string());
        put("write_zeroes_bytes", s.pair.write_zeroes_bytes.to_string());
        put("kernel_filter", s.kernel_filter.to_string());
        put("events", s.events_decoded.to_string());
        self.writer.set_meta(meta);
        self.writer.finish()
    }
}
