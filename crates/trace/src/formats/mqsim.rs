//! MQSim's ASCII traces (the DiskSim ASCII layout MQSim reads, `src/host/
//! ASCII_Trace_Definition.h`): one request per line, five fields separated by spaces,
//!
//! ```text
//! 938513000 4 264719034 16 0
//! ```
//! `arrival_time device start_lba size_in_sectors type`: the arrival time an integer in
//! nanoseconds (MQSim's default `Time_Unit`), the LBA and size in 512-byte sectors, type
//! 0 a write and 1 a read. The device is named by its number. No completion times.
//! Lines out of time order are sorted by the sink.

use super::detect::is_int;
use super::device_csv::{DevRow, Layout};
use super::lines::{fields_ws, parse_u64, show, LineReader};
use super::{Ctx, EachPart, FormatSpec, Sink};
use crate::error::TraceError;
use crate::model::Op;

/// MQSim / DiskSim ASCII traces.
pub const MQSIM: FormatSpec = FormatSpec {
    name: "mqsim",
    headers: &[],
    detect: |s| {
        let data: Vec<&String> = s.lines.iter().filter(|l| !l.starts_with('#')).take(8).collect();
        !data.is_empty()
            && data.iter().all(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() == 5 && f[..4].iter().all(|x| is_int(x)) && (f[4] == "0" || f[4] == "1")
            })
    },
    keep_times: false,
    importer: |_| Box::new(EachPart(import)),
};

pub fn parse_line(line: &[u8]) -> Result<DevRow, (&'static str, String)> {
    let mut f = fields_ws(line);
    let mut num = |name: &'static str| -> Result<u64, (&'static str, String)> {
        let tok = f.next().ok_or((name, "missing".to_owned()))?;
        parse_u64(tok).ok_or_else(|| (name, format!("not a whole number: {}", show(tok))))
    };
    let ts = num("arrival_time")?;
    let device = num("device")?;
    let offset = num("start_lba")?;
    let len = num("size")?;
    let op = match f.next() {
        Some(b"0") => Op::Write,
        Some(b"1") => Op::Read,
        Some(t) => {
            return Err((
                "type",
                format!("expected 0 (write) or 1 (read): {}", show(t)),
            ))
        }
        None => return Err(("type", "missing".to_owned())),
    };
    if let Some(extra) = f.next() {
        return Err(("type", format!("a sixth field: {}", show(extra))));
    }
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
        bytes_per_len: 512,
        offset_field: "start_lba",
        len_field: "size",
        ts_field: "arrival_time",
        only: None,
        other_devices: "",
    };
    super::device_csv::import(ctx, lr, sink, parse_line, &layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_mqsims_lines_and_names_bad_fields() {
        let r = parse_line(b"938513000 4 264719034 16 0").unwrap();
        assert_eq!(
            (r.ts, r.device, r.offset, r.len, r.op),
            (938_513_000, 4, 264_719_034, 16, Op::Write)
        );
        assert_eq!(parse_line(b"11413000 0 657728 16 1").unwrap().op, Op::Read);
        assert_eq!(parse_line(b"1.5 0 657728 16 1").err().unwrap().0, "arrival_time");
        assert_eq!(parse_line(b"1 0 657728 16 2").err().unwrap().0, "type");
        assert_eq!(parse_line(b"1 0 657728 16").err().unwrap().0, "type");
    }
}
