//! The import loop shared by the CSV formats that name a device per line and carry no
//! completion times (Alibaba, Tencent CBS, SPC/UMass). Each format parses a line into a
//! [`DevRow`] in its own units; [`Layout`] says how those units become bytes and
//! nanoseconds. MSR is not one of them: it keys devices by two fields and carries
//! response times. Header lines and byte order marks are skipped by rule
//! ([`super::header`]).

use super::header::{BadLine, Headers};
use super::lines::LineReader;
use super::{Ctx, Sink};
use crate::error::TraceError;
use crate::model::{DeviceId, IoRecord, Op};

/// One line in the format's own units.
pub struct DevRow {
    pub device: u64,
    pub op: Op,
    pub offset: u64,
    pub len: u64,
    pub ts: u64,
}

/// How a format's units and fields map onto the trace.
pub struct Layout {
    pub ns_per_ts: u64,
    pub bytes_per_offset: u64,
    pub bytes_per_len: u64,
    /// Field names used in errors about the offset, the length and the time.
    pub offset_field: &'static str,
    pub len_field: &'static str,
    pub ts_field: &'static str,
    /// Keep only this device (`--device-id`, `--volume`), and the reason shown for the
    /// lines of other devices.
    pub only: Option<u64>,
    pub other_devices: &'static str,
}

/// `parse` is generic (not a fn pointer) so each format's line parser inlines.
pub fn import(
    ctx: &mut Ctx,
    lr: &mut LineReader,
    sink: &mut Sink,
    parse: impl Fn(&[u8]) -> Result<DevRow, (&'static str, String)>,
    layout: &Layout,
) -> Result<(), TraceError> {
    debug_assert!(layout.ns_per_ts > 0 && layout.bytes_per_offset > 0 && layout.bytes_per_len > 0);
    let mut last_dev: Option<(u64, DeviceId)> = None;
    let mut headers = Headers::default();
    while let Some((n, line)) = lr.next_numbered()? {
        if super::lines::trim(line).is_empty() {
            headers.blank(n);
            ctx.summary.note_ignore("blank lines");
            continue;
        }
        let row = match parse(line) {
            Ok(row) => row,
            Err(e) => match headers.bad_line(n, line) {
                BadLine::Header => {
                    ctx.summary.note_ignore("header lines");
                    continue;
                }
                BadLine::Again(l) => match ctx.row(n, parse(l))? {
                    Some(row) => row,
                    None => continue,
                },
                BadLine::Bad => {
                    ctx.row::<()>(n, Err(e))?;
                    continue;
                }
            },
        };
        if layout.only.is_some_and(|d| d != row.device) {
            ctx.summary.note_ignore(layout.other_devices);
            continue;
        }
        if row.len == 0 {
            ctx.summary.note_drop("zero-length reads or writes");
            continue;
        }
        let Some(t) = ctx.time.rel(row.ts, layout.ns_per_ts) else {
            let e = ctx.err(n, layout.ts_field, "time in ns overflows 64 bits");
            ctx.bad_line(e)?;
            continue;
        };
        let Some(offset) = row.offset.checked_mul(layout.bytes_per_offset) else {
            let e = ctx.err(n, layout.offset_field, "offset in bytes overflows 64 bits");
            ctx.bad_line(e)?;
            continue;
        };
        let Some(len) = row.len.checked_mul(layout.bytes_per_len) else {
            let e = ctx.err(n, layout.len_field, "length in bytes overflows 64 bits");
            ctx.bad_line(e)?;
            continue;
        };
        if let Err(e) = super::check_range(ctx, n, layout.offset_field, offset, len) {
            ctx.bad_line(e)?;
            continue;
        }
        let mut rec = IoRecord::new(row.op, offset, len, t);
        let dev = match last_dev {
            Some((d, id)) if d == row.device => id,
            _ => {
                let id = sink.writer.intern_device(&row.device.to_string());
                last_dev = Some((row.device, id));
                id
            }
        };
        rec.device = Some(dev);
        sink.push_ordered(rec)?;
    }
    Ok(())
}
