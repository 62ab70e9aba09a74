//! CloudPhysics block traces as CSV (`version,time,op,size,lbn`: the SHARDS traces of
//! VMware virtual disks, as libCacheSim's `data/cloudPhysicsIO.csv` has them):
//!
//! ```text
//! version,time,op,size,lbn
//! 1,5633898,2a,512,42932745
//! ```
//! `version` of the vscsi record (1 or 2), `time` in seconds (the vscsi trace's
//! microseconds divided by 10^6, so I/Os of the same second share a time), `op` the SCSI
//! operation code in hex, `size` in bytes, `lbn` the logical block number (512-byte
//! blocks). READ(6/10/12/16) (08, 28, a8, 88) are reads, WRITE(6/10/12/16) (0a, 2a, aa,
//! 8a) writes, SYNCHRONIZE CACHE(10/16) (35, 91) flushes; any other command moves no
//! host data the trace describes (UNMAP's size is its parameter list, not the range) and
//! is dropped, counted by opcode. One file is one virtual disk: the device is named by
//! the file (or tar member). No completion times.

use super::detect::is_int;
use super::header::{BadLine, Headers};
use super::lines::{show, CsvLine, LineReader};
use super::{Ctx, EachPart, FormatSpec, Sink};
use crate::error::TraceError;
use crate::model::{IoRecord, Op};

/// CloudPhysics vscsi CSV.
pub const VSCSI: FormatSpec = FormatSpec {
    name: "vscsi",
    headers: &["version,time,op,size,lbn"],
    detect: |s| {
        let f = &s.csv;
        f.len() == 5
            && (f[0] == "1" || f[0] == "2")
            && is_int(f[1])
            && (1..=2).contains(&f[2].len())
            && f[2].bytes().all(|b| b.is_ascii_hexdigit())
            && is_int(f[3])
            && is_int(f[4])
    },
    keep_times: false,
    importer: |_| Box::new(EachPart(import)),
};

/// What a SCSI operation code is to the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Io(Op),
    /// A command moving no data the trace describes (dropped, counted by opcode).
    Other(u8),
}

pub fn command(opcode: u8) -> Command {
    match opcode {
        0x08 | 0x28 | 0xa8 | 0x88 => Command::Io(Op::Read),
        0x0a | 0x2a | 0xaa | 0x8a => Command::Io(Op::Write),
        0x35 | 0x91 => Command::Io(Op::Flush),
        o => Command::Other(o),
    }
}

#[derive(Debug)]
pub struct Row {
    pub secs: u64,
    pub command: Command,
    pub size: u64,
    pub lbn: u64,
}

pub fn parse_line(line: &[u8]) -> Result<Row, (&'static str, String)> {
    let mut f = CsvLine::new(line);
    match f.text("version")? {
        b"1" | b"2" => {}
        v => return Err(("version", format!("expected 1 or 2: {}", show(v)))),
    }
    let secs = f.num("time")?;
    let op = f.text("op")?;
    let opcode = std::str::from_utf8(op)
        .ok()
        .filter(|o| (1..=2).contains(&o.len()))
        .and_then(|o| u8::from_str_radix(o, 16).ok())
        .ok_or_else(|| ("op", format!("not a SCSI opcode in hex: {}", show(op))))?;
    let size = f.num("size")?;
    let lbn = f.num("lbn")?;
    f.end("lbn", 5)?;
    Ok(Row {
        secs,
        command: command(opcode),
        size,
        lbn,
    })
}

pub fn import(ctx: &mut Ctx, lr: &mut LineReader, sink: &mut Sink) -> Result<(), TraceError> {
    let name = ctx
        .path
        .file_name()
        .map_or_else(|| ctx.path.display().to_string(), |n| n.to_string_lossy().into_owned());
    let device = sink.writer.intern_device(&name);
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
        let op = match row.command {
            Command::Io(op) => op,
            Command::Other(o) => {
                ctx.summary.note_drop(&format!(
                    "SCSI commands other than read, write and synchronize cache (opcode {o:02x})"
                ));
                continue;
            }
        };
        let Some(t) = ctx.time.rel(row.secs, 1_000_000_000) else {
            let e = ctx.err(n, "time", "time in ns overflows 64 bits");
            ctx.bad_line(e)?;
            continue;
        };
        let mut rec = if op == Op::Flush {
            IoRecord::new(op, 0, 0, t)
        } else {
            if row.size == 0 {
                ctx.summary.note_drop("zero-length reads or writes");
                continue;
            }
            let Some(offset) = row.lbn.checked_mul(512) else {
                let e = ctx.err(n, "lbn", "offset in bytes overflows 64 bits");
                ctx.bad_line(e)?;
                continue;
            };
            if let Err(e) = super::check_range(ctx, n, "lbn", offset, row.size) {
                ctx.bad_line(e)?;
                continue;
            }
            IoRecord::new(op, offset, row.size, t)
        };
        rec.device = Some(device);
        sink.push_ordered(rec)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rows_and_tells_commands_apart() {
        let r = parse_line(b"1,5633898,2a,512,42932745").unwrap();
        assert_eq!(
            (r.secs, r.command, r.size, r.lbn),
            (5_633_898, Command::Io(Op::Write), 512, 42_932_745)
        );
        assert_eq!(parse_line(b"2,1,28,4096,8").unwrap().command, Command::Io(Op::Read));
        assert_eq!(parse_line(b"1,1,35,0,0").unwrap().command, Command::Io(Op::Flush));
        assert_eq!(parse_line(b"1,1,12,36,0").unwrap().command, Command::Other(0x12));
        assert_eq!(parse_line(b"3,1,28,4096,8").unwrap_err().0, "version");
        assert_eq!(parse_line(b"1,1,zz,4096,8").unwrap_err().0, "op");
        assert_eq!(parse_line(b"1,1,28,4096").unwrap_err().0, "lbn");
    }
}
