//! SPC / UMass traces: `ASU,LBA,size,opcode,timestamp[,...]`: LBA in 512-byte blocks,
//! size in bytes, opcode `r`/`w` (either case), timestamp in seconds (decimal). Fields
//! after the fifth are ignored. The device is the ASU number; `--asu` keeps one.

use super::device_csv::{DevRow, Layout};
use super::lines::{parse_secs_ns, show, CsvLine, LineReader};
use super::{Ctx, Sink};
use crate::error::TraceError;
use crate::model::Op;
use super::detect::{is_int, is_num};
use super::{EachPart, FormatSpec};

/// SPC (UMass) traces.
pub const SPC: FormatSpec = FormatSpec {
    name: "spc",
    headers: &[
        "asu,lba,size,opcode,timestamp",
        "asu,lba,size,opcode,timestamp,ignored",
    ],
    detect: |s| {
        let f = &s.csv;
        f.len() >= 5
            && is_int(f[0])
            && is_int(f[1])
            && is_int(f[2])
            && (f[3].eq_ignore_ascii_case("r") || f[3].eq_ignore_ascii_case("w"))
            && is_num(f[4])
    },
    keep_times: false,
    importer: |_| Box::new(EachPart(import)),
};

pub fn parse_line(line: &[u8]) -> Result<DevRow, (&'static str, String)> {
    let mut f = CsvLine::new(line);
    let device = f.num("ASU")?;
    let offset = f.num("LBA")?;
    let len = f.num("size")?;
    let op = match f.text("opcode")? {
        b"r" | b"R" => Op::Read,
        b"w" | b"W" => Op::Write,
        o => return Err(("opcode", format!("expected r or w: {}", show(o)))),
    };
    let ts = f.text("timestamp")?;
    let ts =
        parse_secs_ns(ts).ok_or_else(|| ("timestamp", format!("not seconds: {}", show(ts))))?;
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
        ns_per_ts: 1,
        bytes_per_offset: 512,
        bytes_per_len: 1,
        offset_field: "LBA",
        len_field: "size",
        ts_field: "timestamp",
        only: ctx.opts.asu,
        other_devices: "lines of other ASUs (--asu)",
    };
    super::device_csv::import(ctx, lr, sink, parse_line, &layout)
}
