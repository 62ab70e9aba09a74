//! The block request events (`block_rq_issue`, `block_rq_complete`, `block_rq_requeue`)
//! decoded from their records with the field offsets of their format files, and the
//! RWBS string mapped to an [`Op`].

use crate::format::{EventFormat, Field};
use crate::ringbuf::LayoutError;
use storbench_trace::Op;

/// A process name as the kernel keeps it (`TASK_COMM_LEN` = 16 bytes), without NULs.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Comm {
    bytes: [u8; 16],
    len: u8,
}

impl Comm {
    pub fn new(b: &[u8]) -> Comm {
        let n = b.len().min(16);
        let mut bytes = [0u8; 16];
        bytes[..n].copy_from_slice(&b[..n]);
        Comm {
            bytes,
            len: n as u8,
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// Lossy UTF-8 (kernel thread names are ASCII; user ones may not be).
    pub fn to_string_lossy(&self) -> String {
        String::from_utf8_lossy(self.as_bytes()).into_owned()
    }
}

impl std::fmt::Debug for Comm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.to_string_lossy())
    }
}

/// What one RWBS string says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rwbs {
    /// `None` for `N` (no data: write-zeroes, zone management, driver commands).
    pub op: Option<Op>,
    /// A leading `F`: the request carries a cache flush before its data (REQ_PREFLUSH).
    pub preflush: bool,
    /// A trailing `F`: force unit access.
    pub fua: bool,
}

/// Maps an RWBS string (`blk_fill_rwbs`: [F]{R|W|D|DE|F|N}[F][A][S][M]) to an op:
/// R read, W write, D (and DE, secure erase) trim, F flush, N none. A write with a
/// preflush and no data (`FWS`, 0 sectors) is how some kernels issue a pure flush:
/// the caller turns it into [`Op::Flush`] when it has no sectors (see [`op_for`]).
/// Returns `None` for an empty or unknown string.
pub fn parse_rwbs(s: &[u8]) -> Option<Rwbs> {
    let (&first, rest) = s.split_first()?;
    let (preflush, op_char, tail) = match (first, rest.first()) {
        (b'F', Some(&c)) if matches!(c, b'R' | b'W' | b'D' | b'F' | b'N') => (true, c, &rest[1..]),
        _ => (false, first, rest),
    };
    let op = match op_char {
        b'R' => Some(Op::Read),
        b'W' => Some(Op::Write),
        b'D' => Some(Op::Trim),
        b'F' => Some(Op::Flush),
        b'N' => None,
        _ => return None,
    };
    let tail = tail
        .strip_prefix(b"E")
        .filter(|_| op == Some(Op::Trim))
        .unwrap_or(tail);
    if !tail.iter().all(|c| matches!(c, b'F' | b'A' | b'S' | b'M')) {
        return None;
    }
    Some(Rwbs {
        op,
        preflush,
        fua: tail.first() == Some(&b'F'),
    })
}

/// The op a request is recorded as (the same rules as the ftrace/blkparse importers in
/// `storbench_trace::formats`): the RWBS op, except that a request without sectors is
/// a flush when it carries a preflush (`FWS`, and `FN` as blktrace writes a flush) and
/// nothing otherwise (zero-length reads, writes, discards are not replayable I/O).
pub fn op_for(rwbs: &Rwbs, nr_sector: u32) -> Option<Op> {
    match rwbs.op {
        Some(Op::Flush) => Some(Op::Flush),
        _ if nr_sector == 0 => rwbs.preflush.then_some(Op::Flush),
        op => op,
    }
}

/// One decoded block event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockEvent {
    Issue(Issue),
    Complete(Complete),
    Requeue(Complete),
}

impl BlockEvent {
    pub fn dev(&self) -> u32 {
        match self {
            BlockEvent::Issue(i) => i.dev,
            BlockEvent::Complete(c) | BlockEvent::Requeue(c) => c.dev,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Issue {
    /// Kernel dev_t: major << 20 | minor.
    pub dev: u32,
    pub sector: u64,
    pub nr_sector: u32,
    /// `bytes` (blk_rq_bytes) when the format has it.
    pub bytes: Option<u32>,
    /// `None` when the RWBS string was unknown.
    pub rwbs: Option<Rwbs>,
    pub comm: Comm,
    pub pid: i32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Complete {
    pub dev: u32,
    pub sector: u64,
    pub nr_sector: u32,
    /// Negative errno, 0 on success (0 for requeues).
    pub error: i32,
    /// The completion's RWBS (`None` if absent or unknown).
    pub rwbs: Option<Rwbs>,
}

struct Common {
    id: u16,
    dev: Field,
    sector: Field,
    nr_sector: Field,
}

impl Common {
    fn of(f: &EventFormat) -> Result<Common, LayoutError> {
        let get = |n: &'static str| {
            f.field(n).cloned().ok_or_else(|| LayoutError::EventField {
                event: format!("event {}", f.name),
                field: n,
            })
        };
        Ok(Common {
            id: f.id,
            dev: get("dev")?,
            sector: get("sector")?,
            nr_sector: get("nr_sector")?,
        })
    }
}

/// Field offsets of the block events of the running kernel.
pub struct BlockDecoder {
    common_type: Field,
    common_pid: Option<Field>,
    issue: Common,
    issue_bytes: Option<Field>,
    issue_rwbs: Field,
    issue_comm: Option<Field>,
    complete: Common,
    complete_error: Option<Field>,
    complete_rwbs: Option<Field>,
    requeue: Option<Common>,
}

impl BlockDecoder {
    pub fn new(
        issue: &EventFormat,
        complete: &EventFormat,
        requeue: Option<&EventFormat>,
    ) -> Result<BlockDecoder, LayoutError> {
        let common_type = issue
            .field("common_type")
            .cloned()
            .ok_or(LayoutError::EventField {
                event: "block_rq_issue".into(),
                field: "common_type",
            })?;
        if complete.field("common_type") != Some(&common_type) {
            return Err(LayoutError::CommonTypeDiffers);
        }
        Ok(BlockDecoder {
            common_pid: issue.field("common_pid").cloned(),
            issue_bytes: issue.field("bytes").cloned(),
            issue_rwbs: issue
                .field("rwbs")
                .cloned()
                .ok_or(LayoutError::EventField {
                    event: "block_rq_issue".into(),
                    field: "rwbs",
                })?,
            issue_comm: issue.field("comm").cloned(),
            complete_error: complete.field("error").cloned(),
            complete_rwbs: complete.field("rwbs").cloned(),
            issue: Common::of(issue)?,
            complete: Common::of(complete)?,
            requeue: requeue.map(Common::of).transpose()?,
            common_type,
        })
    }

    /// The event type id of a record (its `common_type`).
    pub fn event_id(&self, rec: &[u8]) -> Option<u16> {
        self.common_type.read_u64(rec).map(|v| v as u16)
    }

    /// Decodes a record; `None` for other events or records too short for their fields.
    pub fn decode(&self, rec: &[u8]) -> Option<BlockEvent> {
        let id = self.event_id(rec)?;
        let common = |c: &Common| -> Option<Complete> {
            Some(Complete {
                dev: c.dev.read_u64(rec)? as u32,
                sector: c.sector.read_u64(rec)?,
                nr_sector: c.nr_sector.read_u64(rec)? as u32,
                error: 0,
                rwbs: None,
            })
        };
        if id == self.issue.id {
            let c = common(&self.issue)?;
            let rwbs = parse_rwbs(self.issue_rwbs.read_bytes(rec)?);
            Some(BlockEvent::Issue(Issue {
                dev: c.dev,
                sector: c.sector,
                nr_sector: c.nr_sector,
                bytes: self
                    .issue_bytes
                    .as_ref()
                    .and_then(|f| f.read_u64(rec))
                    .map(|b| b as u32),
                rwbs,
                comm: Comm::new(
                    self.issue_comm
                        .as_ref()
                        .and_then(|f| f.read_bytes(rec))
                        .unwrap_or(b""),
                ),
                pid: self
                    .common_pid
                    .as_ref()
                    .and_then(|f| f.read_i64(rec))
                    .unwrap_or(-1) as i32,
            }))
        } else if id == self.complete.id {
            let mut c = common(&self.complete)?;
            c.error = self
                .complete_error
                .as_ref()
                .and_then(|f| f.read_i64(rec))
                .unwrap_or(0) as i32;
            c.rwbs = self
                .complete_rwbs
                .as_ref()
                .and_then(|f| f.read_bytes(rec))
                .and_then(parse_rwbs);
            Some(BlockEvent::Complete(c))
        } else if self.requeue.as_ref().is_some_and(|r| r.id == id) {
            Some(BlockEvent::Requeue(common(self.requeue.as_ref()?)?))
        } else {
            None
        }
    }
}

/// Kernel dev_t (`MKDEV`: major << 20 | minor) from major and minor.
pub fn kernel_dev(major: u32, minor: u32) -> u32 {
    assert!(
        major < (1 << 12) && minor < (1 << 20),
        "dev {major}:{minor} out of range"
    );
    (major << 20) | minor
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub use crate::format::tests::ISSUE_FORMAT;

    pub const COMPLETE_FORMAT: &str = "name: block_rq_complete
ID: 2107
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;
\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;
\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;
\tfield:int error;\toffset:28;\tsize:4;\tsigned:1;
\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;
\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;
\tfield:__data_loc char[] cmd;\toffset:44;\tsize:4;\tsigned:0;
";

    pub fn decoder() -> BlockDecoder {
        BlockDecoder::new(
            &EventFormat::parse(ISSUE_FORMAT).unwrap(),
            &EventFormat::parse(COMPLETE_FORMAT).unwrap(),
            None,
        )
        .unwrap()
    }

    /// An issue record as the kernel writes it (64 bytes + empty cmd).
    pub fn issue_record(
        dev: u32,
        sector: u64,
        nr: u32,
        rwbs: &str,
        comm: &str,
        pid: i32,
    ) -> Vec<u8> {
        let mut r = vec![0u8; 64];
        r[0..2].copy_from_slice(&2104u16.to_ne_bytes());
        r[4..8].copy_from_slice(&pid.to_ne_bytes());
        r[8..12].copy_from_slice(&dev.to_ne_bytes());
        r[16..24].copy_from_slice(&sector.to_ne_bytes());
        r[24..28].copy_from_slice(&nr.to_ne_bytes());
        r[28..32].copy_from_slice(&(nr * 512).to_ne_bytes());
        r[34..34 + rwbs.len()].copy_from_slice(rwbs.as_bytes());
        r[44..44 + comm.len()].copy_from_slice(comm.as_bytes());
        // cmd: empty string at offset 64, length 1 (the NUL).
        r[60..64].copy_from_slice(&(64u32 | (1 << 16)).to_ne_bytes());
        r.push(0);
        r
    }

    pub fn complete_record(dev: u32, sector: u64, nr: u32, error: i32) -> Vec<u8> {
        let mut r = vec![0u8; 48];
        r[0..2].copy_from_slice(&2107u16.to_ne_bytes());
        r[8..12].copy_from_slice(&dev.to_ne_bytes());
        r[16..24].copy_from_slice(&sector.to_ne_bytes());
        r[24..28].copy_from_slice(&nr.to_ne_bytes());
        r[28..32].copy_from_slice(&error.to_ne_bytes());
        r[44..48].copy_from_slice(&(48u32 | (1 << 16)).to_ne_bytes());
        r.push(0);
        r
    }

    #[test]
    fn rwbs_strings_map_to_ops() {
        let op = |s: &str, n: u32| parse_rwbs(s.as_bytes()).and_then(|r| op_for(&r, n));
        assert_eq!(op("R", 8), Some(Op::Read));
        assert_eq!(op("RA", 8), Some(Op::Read));
        assert_eq!(op("RSM", 8), Some(Op::Read));
        assert_eq!(op("W", 8), Some(Op::Write));
        assert_eq!(op("WS", 8), Some(Op::Write));
        assert_eq!(op("WFS", 8), Some(Op::Write)); // FUA write
        assert_eq!(op("FWFS", 8), Some(Op::Write)); // preflush + data + FUA
        assert_eq!(op("FWS", 0), Some(Op::Flush)); // preflush without data
        assert_eq!(op("FF", 0), Some(Op::Flush)); // REQ_OP_FLUSH with preflush
        assert_eq!(op("F", 0), Some(Op::Flush));
        assert_eq!(op("D", 2048), Some(Op::Trim));
        assert_eq!(op("DS", 2048), Some(Op::Trim));
        assert_eq!(op("DE", 2048), Some(Op::Trim)); // secure erase
        assert_eq!(op("N", 0), None);
        assert_eq!(op("N", 128), None); // write-zeroes
        assert_eq!(op("FN", 0), Some(Op::Flush)); // blktrace's flush
        assert_eq!(op("D", 0), None);
        assert_eq!(op("W", 0), None); // a write with no data and no flush: nothing to replay
        assert_eq!(parse_rwbs(b""), None);
        assert_eq!(parse_rwbs(b"X"), None);
        assert_eq!(parse_rwbs(b"RX"), None);
        let r = parse_rwbs(b"FWFS").unwrap();
        assert!(r.preflush && r.fua);
        let r = parse_rwbs(b"FS").unwrap(); // F then S: a flush op, sync
        assert_eq!((r.op, r.preflush), (Some(Op::Flush), false));
    }

    #[test]
    fn decodes_issue_and_complete_records() {
        let d = decoder();
        let dev = kernel_dev(7, 3);
        assert_eq!(dev, 7 << 20 | 3);
        let ev = d
            .decode(&issue_record(dev, 2048, 8, "WS", "fio", 4242))
            .unwrap();
        let BlockEvent::Issue(i) = ev else {
            panic!("{ev:?}")
        };
        assert_eq!(
            (i.dev, i.sector, i.nr_sector, i.bytes),
            (dev, 2048, 8, Some(4096))
        );
        assert_eq!(i.rwbs.unwrap().op, Some(Op::Write));
        assert_eq!(i.comm.as_bytes(), b"fio");
        assert_eq!(i.pid, 4242);
        let ev = d.decode(&complete_record(dev, 2048, 8, -5)).unwrap();
        assert_eq!(
            ev,
            BlockEvent::Complete(Complete {
                dev,
                sector: 2048,
                nr_sector: 8,
                error: -5,
                rwbs: None,
            })
        );
        // Another event id, and a record cut short.
        let mut other = complete_record(dev, 0, 0, 0);
        other[0..2].copy_from_slice(&1u16.to_ne_bytes());
        assert_eq!(d.decode(&other), None);
        assert_eq!(d.decode(&issue_record(dev, 1, 1, "R", "x", 1)[..20]), None);
    }

    proptest::proptest! {
        #[test]
        fn decode_never_panics(mut rec in proptest::collection::vec(proptest::num::u8::ANY, 0..90), which in 0u8..3) {
            if rec.len() >= 2 {
                let id: u16 = match which { 0 => 2104, 1 => 2107, _ => 9 };
                rec[0..2].copy_from_slice(&id.to_ne_bytes());
            }
            let _ = decoder().decode(&rec);
        }

        #[test]
        fn parse_rwbs_never_panics(s in proptest::collection::vec(proptest::num::u8::ANY, 0..12)) {
            let _ = parse_rwbs(&s);
        }
    }
}
