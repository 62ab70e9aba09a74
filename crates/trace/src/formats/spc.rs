//! SPC / UMass traces: `ASU,LBA,size,opcode,timestamp[,...]`: LBA in 512-byte blocks,
//! size in bytes, opcode `r`/`w` (either case), timestamp in seconds (decimal). Fields
//! after the fifth are ignored. The device is the ASU number.

use super::lines::{fields_csv, parse_secs_ns, parse_u64, show, LineReader};
use super::{Ctx, Sink, TimeBase};
use crate::error::TraceError;
use crate::model::{DeviceId, IoRecord, Op};

pub struct Row {
    pub asu: u64,
    pub lba: u64,
    pub size: u64,
    pub op: Op,
    pub ts_ns: u64,
}

pub fn parse_line(line: &[u8]) -> Result<Row, (&'static str, String)> {
    let mut f = fields_csv(line);
    let mut next = |name: &'static str| f.next().ok_or_else(|| (name, "missing".to_owned()));
    let num = |name: &'static str, s: &[u8]| {
        parse_u64(s).ok_or_else(|| (name, format!("not a number: {}", show(s))))
    };
    let asu = num("ASU", next("ASU")?)?;
    let lba = num("LBA", next("LBA")?)?;
    let size = num("size", next("size")?)?;
    let op = match next("opcode")? {
        b"r" | b"R" => Op::Read,
        b"w" | b"W" => Op::Write,
        o => return Err(("opcode", format!("expected r or w: {}", show(o)))),
    };
    let ts = next("timestamp")?;
    let ts_ns =
        parse_secs_ns(ts).ok_or_else(|| ("timestamp", format!("not seconds: {}", show(ts))))?;
    Ok(Row {
        asu,
        lba,
        size,
        op,
        ts_ns,
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
        if row.size == 0 {
            ctx.summary.note_drop("zero-length reads or writes");
            continue;
        }
        let Some(off) = row.lba.checked_mul(512) else {
            let e = ctx.err(n, "LBA", "offset in bytes overflows 64 bits");
            ctx.bad_line(e)?;
            continue;
        };
        if let Err(e) = super::check_range(ctx, n, "LBA", off, row.size) {
            ctx.bad_line(e)?;
            continue;
        }
        let t = base.rel(ctx, row.ts_ns);
        let mut rec = IoRecord::new(row.op, off, row.size, t);
        let dev = match last_dev {
            Some((d, id)) if d == row.asu => id,
            _ => {
                let id = sink.writer.intern_device(&row.asu.to_string());
                last_dev = Some((row.asu, id));
                id
            }
        };
        rec.device = Some(dev);
        sink.push_ordered(rec)?;
    }
    Ok(())
}
