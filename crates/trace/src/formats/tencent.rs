//! Tencent CBS: `timestamp,offset,size,iotype,volume_id` with timestamp in seconds,
//! offset and size in 512-byte sectors, iotype 0 = read, 1 = write. `--volume` keeps
//! one volume; otherwise every volume is kept, named by its id.

use super::lines::{fields_csv, parse_u64, show, LineReader};
use super::{Ctx, Sink, TimeBase};
use crate::error::TraceError;
use crate::model::{DeviceId, IoRecord, Op};

pub struct Row {
    pub ts_s: u64,
    pub offset_sectors: u64,
    pub size_sectors: u64,
    pub op: Op,
    pub volume: u64,
}

pub fn parse_line(line: &[u8]) -> Result<Row, (&'static str, String)> {
    let mut f = fields_csv(line);
    let mut next = |name: &'static str| f.next().ok_or_else(|| (name, "missing".to_owned()));
    let num = |name: &'static str, s: &[u8]| {
        parse_u64(s).ok_or_else(|| (name, format!("not a number: {}", show(s))))
    };
    let ts_s = num("timestamp", next("timestamp")?)?;
    let offset_sectors = num("offset", next("offset")?)?;
    let size_sectors = num("size", next("size")?)?;
    let op = match next("iotype")? {
        b"0" => Op::Read,
        b"1" => Op::Write,
        o => {
            return Err((
                "iotype",
                format!("expected 0 (read) or 1 (write): {}", show(o)),
            ))
        }
    };
    let volume = num("volume_id", next("volume_id")?)?;
    if f.next().is_some() {
        return Err(("volume_id", "more than 5 fields".to_owned()));
    }
    Ok(Row {
        ts_s,
        offset_sectors,
        size_sectors,
        op,
        volume,
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
        if ctx.opts.volume.is_some_and(|v| v != row.volume) {
            ctx.summary.note_ignore("lines of other volumes (--volume)");
            continue;
        }
        if row.size_sectors == 0 {
            ctx.summary.note_drop("zero-length reads or writes");
            continue;
        }
        let (Some(t), Some(off), Some(len)) = (
            base.rel(ctx, row.ts_s).checked_mul(1_000_000_000),
            row.offset_sectors.checked_mul(512),
            row.size_sectors.checked_mul(512),
        ) else {
            let e = ctx.err(n, "offset", "value in bytes/ns overflows 64 bits");
            ctx.bad_line(e)?;
            continue;
        };
        if let Err(e) = super::check_range(ctx, n, "offset", off, len) {
            ctx.bad_line(e)?;
            continue;
        }
        let mut rec = IoRecord::new(row.op, off, len, t);
        let dev = match last_dev {
            Some((d, id)) if d == row.volume => id,
            _ => {
                let id = sink.writer.intern_device(&row.volume.to_string());
                last_dev = Some((row.volume, id));
                id
            }
        };
        rec.device = Some(dev);
        sink.push_ordered(rec)?;
    }
    Ok(())
}
