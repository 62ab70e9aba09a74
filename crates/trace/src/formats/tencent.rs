//! Tencent CBS: `timestamp,offset,size,iotype,volume_id` with timestamp in seconds,
//! offset and size in 512-byte sectors, iotype 0 = read, 1 = write. `--volume` keeps
//! one volume; otherwise every volume is kept, named by its id.

use super::device_csv::{DevRow, Layout};
use super::lines::{show, CsvLine, LineReader};
use super::{Ctx, Sink};
use crate::error::TraceError;
use crate::model::Op;
use super::detect::is_int;
use super::{EachPart, FormatSpec};

/// Tencent CBS traces.
pub const TENCENT: FormatSpec = FormatSpec {
    name: "tencent",
    headers: &[
        "timestamp,offset,size,iotype,volumeid",
        "timestamp,offset,size,iotype,volume_id",
    ],
    detect: |s| {
        let f = &s.csv;
        f.len() == 5
            && is_int(f[0])
            && is_int(f[1])
            && is_int(f[2])
            && (f[3] == "0" || f[3] == "1")
            && is_int(f[4])
    },
    keep_times: false,
    importer: |_| Box::new(EachPart(import)),
};

pub fn parse_line(line: &[u8]) -> Result<DevRow, (&'static str, String)> {
    let mut f = CsvLine::new(line);
    let ts = f.num("timestamp")?;
    let offset = f.num("offset")?;
    let len = f.num("size")?;
    let op = match f.text("iotype")? {
        b"0" => Op::Read,
        b"1" => Op::Write,
        o => {
            return Err((
                "iotype",
                format!("expected 0 (read) or 1 (write): {}", show(o)),
            ))
        }
    };
    let device = f.num("volume_id")?;
    f.end("volume_id", 5)?;
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
        ns_per_ts: 1_000_000_000,
        bytes_per_offset: 512,
        bytes_per_len: 512,
        offset_field: "offset",
        len_field: "size",
        ts_field: "timestamp",
        only: ctx.opts.volume,
        other_devices: "lines of other volumes (--volume)",
    };
    super::device_csv::import(ctx, lr, sink, parse_line, &layout)
}
