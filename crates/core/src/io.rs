//! One I/O: its [`Op`] and the [`IoRecord`] of a trace or a replay.
//!
//! Units are last in every name (`offset_bytes`, `issue_ns`). Times are nanoseconds
//! since the start of the trace (the first issue is not required to be at 0).

use serde::{Deserialize, Serialize};

/// The kind of one I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum Op {
    Read = 0,
    Write = 1,
    /// Discard / TRIM / unmap / punch-hole.
    Trim = 2,
    /// Cache flush (zero bytes unless the source said otherwise).
    Flush = 3,
}

impl Op {
    pub const ALL: [Op; 4] = [Op::Read, Op::Write, Op::Trim, Op::Flush];

    /// The lowercase name used in Parquet files, CSV and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Trim => "trim",
            Op::Flush => "flush",
        }
    }

    pub fn parse(s: &str) -> Option<Op> {
        match s {
            "read" => Some(Op::Read),
            "write" => Some(Op::Write),
            "trim" => Some(Op::Trim),
            "flush" => Some(Op::Flush),
            _ => None,
        }
    }

    /// Index 0..4, for per-op arrays.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// Reads and writes move data; trims and flushes do not.
    #[inline]
    pub fn is_data(self) -> bool {
        matches!(self, Op::Read | Op::Write)
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Index into the stream names of one reader or writer (a `Names` of storbench-trace).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct StreamId(pub u32);

/// Index into the device names of one reader or writer (a `Names` of storbench-trace).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DeviceId(pub u32);

/// One I/O of a trace. Also used for completed I/Os of a replay (issue = submission).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRecord {
    /// Submission time, ns since trace start.
    pub issue_ns: u64,
    /// Completion time, ns since trace start, when known.
    pub complete_ns: Option<u64>,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    pub op: Op,
    /// Process or scenario that issued the I/O (name in the reader's or writer's `Names`).
    pub stream: Option<StreamId>,
    /// Device the I/O went to (e.g. "8,16"), name in the `Names`.
    pub device: Option<DeviceId>,
}

impl IoRecord {
    pub fn new(op: Op, offset_bytes: u64, len_bytes: u64, issue_ns: u64) -> Self {
        IoRecord {
            issue_ns,
            complete_ns: None,
            offset_bytes,
            len_bytes,
            op,
            stream: None,
            device: None,
        }
    }

    #[inline]
    pub fn end_bytes(&self) -> u64 {
        self.offset_bytes + self.len_bytes
    }

    /// Service time in ns, when the completion is known.
    #[inline]
    pub fn service_ns(&self) -> Option<u64> {
        self.complete_ns.map(|c| c.saturating_sub(self.issue_ns))
    }
}
