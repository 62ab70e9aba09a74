//! MSR Cambridge (SNIA IOTTA): `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
//! Timestamp and ResponseTime are Windows ticks of 100 ns; Type is `Read` or `Write`;
//! Offset and Size are bytes. The device is `<Hostname>_<DiskNumber>` (the file naming of
//! the published set). Completion = issue + ResponseTime.

use super::lines::{fields_csv, parse_u64, show, LineReader};
use super::{Ctx, Sink, TimeBase};
use crate::error::TraceError;
use crate::model::{DeviceId, IoRecord, Op};

pub struct Row<'a> {
    pub ticks: u64,
    pub host: &'a [u8],
    pub disk: u64,
    pub op: Op,
    pub offset: u64,
    pub size: u64,
    pub response_ticks: u64,
}

pub fn parse_line(line: &[u8]) -> Result<Row<'_>, (&'static str, String)> {
    let mut f = fields_csv(line);
    let mut next = |name: &'static str| f.next().ok_or_else(|| (name, "missing".to_owned()));
    let num = |name: &'static str, s: &[u8]| {
        parse_u64(s).ok_or_else(|| (name, format!("not a number: {}", show(s))))
    };
    let ticks = num("Timestamp", next("Timestamp")?)?;
    let host = next("Hostname")?;
    let disk = num("DiskNumber", next("DiskNumber")?)?;
    let ty = next("Type")?;
    let op = if ty.eq_ignore_ascii_case(b"read") {
        Op::Read
    } else if ty.eq_ignore_ascii_case(b"write") {
        Op::Write
    } else {
        return Err(("Type", format!("expected Read or Write: {}", show(ty))));
    };
    let offset = num("Offset", next("Offset")?)?;
    let size = num("Size", next("Size")?)?;
    let response_ticks = num("ResponseTime", next("ResponseTime")?)?;
    if f.next().is_some() {
        return Err(("ResponseTime", "more than 7 fields".to_owned()));
    }
    Ok(Row {
        ticks,
        host,
        disk,
        op,
        offset,
        size,
        response_ticks,
    })
}

pub fn import(ctx: &mut Ctx, lr: &mut LineReader, sink: &mut Sink) -> Result<(), TraceError> {
    let mut base = TimeBase::default();
    let mut last_dev: Option<(Vec<u8>, u64, DeviceId)> = None;
    while let Some((n, line)) = lr.next_numbered()? {
        if super::lines::trim(line).is_empty() {
            ctx.summary.note_ignore("blank lines");
            continue;
        }
        if n == 1 && line.starts_with(b"Timestamp") {
            ctx.summary.note_ignore("header lines");
            continue;
        }
        let Some(row) = ctx.row(n, parse_line(line))? else {
            continue;
        };
        if row.size == 0 {
            ctx.summary.note_drop("zero-length reads or writes");
            continue;
        }
        let (Some(t), Some(svc)) = (
            base.rel(ctx, row.ticks).checked_mul(100),
            row.response_ticks.checked_mul(100),
        ) else {
            let e = ctx.err(n, "Timestamp", "time in ns overflows 64 bits");
            ctx.bad_line(e)?;
            continue;
        };
        if let Err(e) = super::check_range(ctx, n, "Offset", row.offset, row.size) {
            ctx.bad_line(e)?;
            continue;
        }
        let Some(c) = t.checked_add(svc) else {
            let e = ctx.err(n, "ResponseTime", "completion time overflows");
            ctx.bad_line(e)?;
            continue;
        };
        let mut rec = IoRecord::new(row.op, row.offset, row.size, t);
        rec.complete_ns = Some(c);
        let dev = match &last_dev {
            Some((h, d, id)) if h.as_slice() == row.host && *d == row.disk => *id,
            _ => {
                let name = format!("{}_{}", String::from_utf8_lossy(row.host), row.disk);
                let id = sink.writer.intern_device(&name);
                last_dev = Some((row.host.to_vec(), row.disk, id));
                id
            }
        };
        rec.device = Some(dev);
        sink.push_ordered(rec)?;
    }
    Ok(())
}
