//! Alibaba 2020 block traces: `device_id,opcode,offset,length,timestamp` with opcode
//! `R` or `W`, offset and length in bytes, timestamp in µs. `--device-id` keeps one
//! device; otherwise every device is kept, named by its id.

use super::lines::{fields_csv, parse_u64, show, LineReader};
use super::{Ctx, Sink, TimeBase};
use crate::error::TraceError;
use crate::model::{DeviceId, IoRecord, Op};

pub struct Row {
    pub device_id: u64,
    pub op: Op,
    pub offset: u64,
    pub len: u64,
    pub ts_us: u64,
}

pub fn parse_line(line: &[u8]) -> Result<Row, (&'static str, String)> {
    let mut f = fields_csv(line);
    let mut next = |name: &'static str| f.next().ok_or_else(|| (name, "missing".to_owned()));
    let num = |name: &'static str, s: &[u8]| {
        parse_u64(s).ok_or_else(|| (name, format!("not a number: {}", show(s))))
    };
    let device_id = num("device_id", next("device_id")?)?;
    let op = match next("opcode")? {
        b"R" | b"r" => Op::Read,
        b"W" | b"w" => Op::Write,
        o => return Err(("opcode", format!("expected R or W: {}", show(o)))),
    };
    let offset = num("offset", next("offset")?)?;
    let len = num("length", next("length")?)?;
    let ts_us = num("timestamp", next("timestamp")?)?;
    if f.next().is_some() {
        return Err(("timestamp", "more than 5 fields".to_owned()));
    }
    Ok(Row {
        device_id,
        op,
        offset,
        len,
        ts_us,
    })
}

pub fn import(ctx: &mut Ctx, lr: &mut LineReader, sink: &mut Sink) -> Result<(), TraceError> {
    let mut base = TimeBase::default();
    let mut last_dev: Option<(u64, DeviceId)> = None;
    while let Some((n, line)) = lr.next_numbered()? {
        if super::lines::trim(line).is_empty() {
            ctx.summary.note_ignore("blank lines");
            continue;
        }
        let Some(row) = ctx.row(n, parse_line(line))? else {
            continue;
        };
        if ctx.opts.device_id.is_some_and(|d| d != row.device_id) {
            ctx.summary
                .note_ignore("lines of other devices (--device-id)");
            continue;
        }
        if row.len == 0 {
            ctx.summary.note_drop("zero-length reads or writes");
            continue;
        }
        let Some(t) = base.rel(ctx, row.ts_us).checked_mul(1000) else {
            let e = ctx.err(n, "timestamp", "time in ns overflows 64 bits");
            ctx.bad_line(e)?;
            continue;
        };
        if let Err(e) = super::check_range(ctx, n, "offset", row.offset, row.len) {
            ctx.bad_line(e)?;
            continue;
        }
        let mut rec = IoRecord::new(row.op, row.offset, row.len, t);
        let dev = match last_dev {
            Some((d, id)) if d == row.device_id => id,
            _ => {
                let id = sink.writer.intern_device(&row.device_id.to_string());
                last_dev = Some((row.device_id, id));
                id
            }
        };
        rec.device = Some(dev);
        sink.push_ordered(rec)?;
    }
    Ok(())
}
