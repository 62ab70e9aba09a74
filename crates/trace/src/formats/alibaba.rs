//! Alibaba 2020 block traces: `device_id,opcode,offset,length,timestamp` with opcode
//! `R` or `W`, offset and length in bytes, timestamp in µs. `--device-id` keeps one
//! device; otherwise every device is kept, named by its id.

use super::device_csv::{DevRow, Layout};
use super::lines::{show, CsvLine, LineReader};
use super::{Ctx, Sink};
use crate::error::TraceError;
use crate::model::Op;
use super::detect::is_int;
use super::{EachPart, FormatSpec};

/// Alibaba block traces.
pub const ALIBABA: FormatSpec = FormatSpec {
    name: "alibaba",
    headers: &["device_id,opcode,offset,length,timestamp"],
    detect: |s| {
        let f = &s.csv;
        f.len() == 5 && is_int(f[0]) && (f[1] == "R" || f[1] == "W") && is_int(f[2]) && is_int(f[4])
    },
    keep_times: false,
    importer: |_| Box::new(EachPart(import)),
};

pub fn parse_line(line: &[u8]) -> Result<DevRow, (&'static str, String)> {
    let mut f = CsvLine::new(line);
    let device = f.num("device_id")?;
    let op = match f.text("opcode")? {
        b"R" | b"r" => Op::Read,
        b"W" | b"w" => Op::Write,
        o => return Err(("opcode", format!("expected R or W: {}", show(o)))),
    };
    let offset = f.num("offset")?;
    let len = f.num("length")?;
    let ts = f.num("timestamp")?;
    f.end("timestamp", 5)?;
    Ok(DevRow {
        device,
        op,
        offset,
        len,
        ts,
    })
}

pub fn import(ctx: &mut Ctx, lr: &mut LineReader, sink: &mut Sink) -> Result<(), TraceError> {
    let layout = Layout {
        ns_per_ts: 1_000,
        bytes_per_offset: 1,
        bytes_per_len: 1,
        offset_field: "offset",
        len_field: "length",
        ts_field: "timestamp",
        only: ctx.opts.device_id,
        other_devices: "lines of other devices (--device-id)",
    };
    super::device_csv::import(ctx, lr, sink, parse_line, &layout)
}
