//! MSR Cambridge (SNIA IOTTA): `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
//! Timestamp and ResponseTime are Windows ticks of 100 ns; Type is `Read` or `Write`;
//! Offset and Size are bytes. The device is `<Hostname>_<DiskNumber>` (the file naming of
//! the published set). Completion = issue + ResponseTime. Header lines and byte order
//! marks are skipped by rule ([`super::header`]); per-volume files joined together
//! are sorted by the sink.

use super::header::{BadLine, Headers};
use super::lines::{show, CsvLine, LineReader};
use super::{Ctx, Sink};
use crate::error::TraceError;
use crate::model::{DeviceId, IoRecord, Op};
use super::detect::is_int;
use super::{EachPart, FormatSpec};

/// MSR Cambridge CSV.
pub const MSR: FormatSpec = FormatSpec {
    name: "msr",
    headers: &["timestamp,hostname,disknumber,type,offset,size,responsetime"],
    detect: |s| {
        let f = &s.csv;
        f.len() == 7
            && is_int(f[0])
            && (f[3].eq_ignore_ascii_case("read") || f[3].eq_ignore_ascii_case("write"))
    },
    keep_times: false,
    importer: |_| Box::new(EachPart(import)),
};

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
    let mut f = CsvLine::new(line);
    let ticks = f.num("Timestamp")?;
    let host = f.text("Hostname")?;
    let disk = f.num("DiskNumber")?;
    let ty = f.text("Type")?;
    let op = if ty.eq_ignore_ascii_case(b"read") {
        Op::Read
    } else if ty.eq_ignore_ascii_case(b"write") {
        Op::Write
    } else {
        return Err(("Type", format!("expected Read or Write: {}", show(ty))));
    };
    let offset = f.num("Offset")?;
    let size = f.num("Size")?;
    let response_ticks = f.num("ResponseTime")?;
    f.end("ResponseTime", 7)?;
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
    let mut last_dev: Option<(Vec<u8>, u64, DeviceId)> = None;
    let mut headers = Headers::default();
    while let Some((n, line)) = lr.next_numbered()? {
        if super::lines::trim(line).is_empty() {
            headers.blank(n);
            ctx.summary.note_ignore("blank lines");
            continue;
        }
        let row = match parse_line(line) {
            Ok(row) => row,
            Err(e) => match headers.bad_line(n, line) {
                BadLine::Header => {
                    ctx.summary.note_ignore("header lines");
                    continue;
                }
                BadLine::Again(l) => match ctx.row(n, parse_line(l))? {
                    Some(row) => row,
                    None => continue,
                },
                BadLine::Bad => {
                    ctx.row::<()>(n, Err(e))?;
                    continue;
                }
            },
        };
        if row.size == 0 {
            ctx.summary.note_drop("zero-length reads or writes");
            continue;
        }
        let (Some(t), Some(svc)) = (
            ctx.time.rel(row.ticks, 100),
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
