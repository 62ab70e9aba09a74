//! Decoding the kernel ring buffer's binary pages, as read from
//! `per_cpu/cpuN/trace_pipe_raw`.
//!
//! A page (a "sub-buffer") is a header followed by events:
//!
//! ```text
//! u64   timestamp        absolute time of the page (trace clock units, ns for `mono`)
//! long  commit           bytes of event data; bit 31 = events were lost before this page,
//!                        bit 30 = their count is stored (as a long) right after the data
//! ...   data[commit]     events
//! ```
//!
//! The layout is read from `events/header_page` ([`PageLayout::parse`]). Each event starts
//! with a 32-bit header, `type_len:5` (low bits on little-endian) and `time_delta:27`,
//! described by `events/header_event` ([`EventHeaderLayout::parse`]):
//!
//! * `type_len` 1..=28: a data event of `type_len * 4` payload bytes; `time_delta` is
//!   added to the running time.
//! * `type_len` 0: a data event whose length (payload + the 4-byte length word) is in
//!   the next `u32`.
//! * 29 padding: `array[0]` bytes of skipped data (a discarded event, or the end of the
//!   page). With `time_delta == 0` it is a "null" padding: the rest of the page is unused.
//! * 30 time extend: `(array[0] << 27) + time_delta` is added to the running time.
//! * 31 time stamp: `(array[0] << 27) | time_delta` is the absolute time (its top 5 bits
//!   come from the page timestamp, as in the kernel's `rb_fix_abs_ts`).
//!
//! The decoder never panics, whatever the bytes: every length is checked against the
//! committed size and the buffer, and arithmetic on times wraps.

use std::fmt;

/// Where the page header fields are, from `events/header_page`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageLayout {
    pub timestamp_offset: usize,
    pub commit_offset: usize,
    /// 8 on 64-bit kernels (`local_t`), 4 on 32-bit ones.
    pub commit_size: usize,
    pub data_offset: usize,
}

impl PageLayout {
    /// The layout of every 64-bit kernel since 2.6.31.
    pub const LP64: PageLayout = PageLayout {
        timestamp_offset: 0,
        commit_offset: 8,
        commit_size: 8,
        data_offset: 16,
    };

    /// Parses `events/header_page`:
    /// ```text
    /// field: u64 timestamp; offset:0; size:8; signed:0;
    /// field: local_t commit; offset:8; size:8; signed:1;
    /// field: int overwrite; offset:8; size:1; signed:1;
    /// field: char data; offset:16; size:4080; signed:0;
    /// ```
    pub fn parse(text: &str) -> Result<PageLayout, LayoutError> {
        let mut ts = None;
        let mut commit = None;
        let mut data = None;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if !line.starts_with("field:") {
                continue;
            }
            let (decl, offset, size) =
                parse_field_line(line).ok_or_else(|| LayoutError::FieldLine {
                    line: i + 1,
                    text: line.to_owned(),
                })?;
            let name = decl.split_whitespace().last().unwrap_or("");
            match name {
                "timestamp" => ts = Some((offset, size)),
                "commit" => commit = Some((offset, size)),
                "data" => data = Some((offset, size)),
                _ => {}
            }
        }
        let (timestamp_offset, ts_size) = ts.ok_or(LayoutError::NoField("timestamp"))?;
        let (commit_offset, commit_size) = commit.ok_or(LayoutError::NoField("commit"))?;
        let (data_offset, _) = data.ok_or(LayoutError::NoField("data"))?;
        if ts_size != 8 {
            return Err(LayoutError::Size {
                what: "timestamp",
                size: ts_size,
                expected: "8",
            });
        }
        if commit_size != 4 && commit_size != 8 {
            return Err(LayoutError::Size {
                what: "commit",
                size: commit_size,
                expected: "4 or 8",
            });
        }
        if data_offset < commit_offset + commit_size || data_offset < timestamp_offset + 8 {
            return Err(LayoutError::DataOverlap(data_offset));
        }
        Ok(PageLayout {
            timestamp_offset,
            commit_offset,
            commit_size,
            data_offset,
        })
    }
}

/// A tracefs layout (`header_page`, `header_event`, a block event's fields) this reader
/// cannot use, naming what it lacks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("line {line}: cannot parse field `{text}`")]
    FieldLine { line: usize, text: String },
    #[error("no `{0}` field")]
    NoField(&'static str),
    #[error("{what} size {size}, expected {expected}")]
    Size {
        what: &'static str,
        size: usize,
        expected: &'static str,
    },
    #[error("data offset {0} overlaps the header")]
    DataOverlap(usize),
    #[error("bad {0} line")]
    BadLine(&'static str),
    #[error("no type_len/time_delta bit widths")]
    NoBitWidths,
    #[error("type_len {type_len} + time_delta {time_delta} bits is not a 32-bit header")]
    Not32Bits { type_len: u32, time_delta: u32 },
    #[error("type value {value} does not fit {bits} bits")]
    TypeTooWide { value: u32, bits: u32 },
    #[error("data type_len range overlaps the special types")]
    DataTypeOverlap,
    #[error("{event} has no `{field}` field")]
    EventField { event: String, field: &'static str },
    #[error("block_rq_complete's `common_type` differs from block_rq_issue's")]
    CommonTypeDiffers,
}

/// `field: TYPE NAME; offset:N; size:N; ...` -> (declaration, offset, size).
pub(crate) fn parse_field_line(line: &str) -> Option<(&str, usize, usize)> {
    let mut parts = line.split(';').map(str::trim);
    let decl = parts.next()?.strip_prefix("field:")?.trim();
    let mut offset = None;
    let mut size = None;
    for p in parts {
        if let Some(v) = p.strip_prefix("offset:") {
            offset = v.trim().parse().ok();
        } else if let Some(v) = p.strip_prefix("size:") {
            size = v.trim().parse().ok();
        }
    }
    Some((decl, offset?, size?))
}

/// The bit layout of event headers, from `events/header_event`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventHeaderLayout {
    pub type_len_bits: u32,
    pub time_delta_bits: u32,
    pub padding: u32,
    pub time_extend: u32,
    pub time_stamp: u32,
    pub max_data_type_len: u32,
}

impl EventHeaderLayout {
    /// The layout of every kernel since 2.6.31.
    pub const DEFAULT: EventHeaderLayout = EventHeaderLayout {
        type_len_bits: 5,
        time_delta_bits: 27,
        padding: 29,
        time_extend: 30,
        time_stamp: 31,
        max_data_type_len: 28,
    };

    /// Parses `events/header_event`:
    /// ```text
    /// # compressed entry header
    ///     type_len    :    5 bits
    ///     time_delta  :   27 bits
    ///     array       :   32 bits
    ///
    ///     padding     : type == 29
    ///     time_extend : type == 30
    ///     time_stamp : type == 31
    ///     data max type_len  == 28
    /// ```
    pub fn parse(text: &str) -> Result<EventHeaderLayout, LayoutError> {
        let mut l = EventHeaderLayout::DEFAULT;
        let mut seen = 0u32;
        for line in text.lines() {
            let line = line.trim();
            let number_after = |sep: &str| -> Option<u32> {
                line.rsplit(sep)
                    .next()?
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()
            };
            if line.starts_with("type_len") && line.ends_with("bits") {
                l.type_len_bits = number_after(":").ok_or(LayoutError::BadLine("type_len"))?;
                seen |= 1;
            } else if line.starts_with("time_delta") && line.ends_with("bits") {
                l.time_delta_bits = number_after(":").ok_or(LayoutError::BadLine("time_delta"))?;
                seen |= 2;
            } else if line.starts_with("padding") {
                l.padding = number_after("==").ok_or(LayoutError::BadLine("padding"))?;
                seen |= 4;
            } else if line.starts_with("time_extend") {
                l.time_extend = number_after("==").ok_or(LayoutError::BadLine("time_extend"))?;
                seen |= 8;
            } else if line.starts_with("time_stamp") {
                l.time_stamp = number_after("==").ok_or(LayoutError::BadLine("time_stamp"))?;
                seen |= 16;
            } else if line.starts_with("data max type_len") {
                l.max_data_type_len = number_after("==").ok_or(LayoutError::BadLine("data max"))?;
                seen |= 32;
            }
        }
        if seen & 3 != 3 {
            return Err(LayoutError::NoBitWidths);
        }
        if l.type_len_bits + l.time_delta_bits != 32 || l.type_len_bits == 0 {
            return Err(LayoutError::Not32Bits {
                type_len: l.type_len_bits,
                time_delta: l.time_delta_bits,
            });
        }
        let max_type = (1u32 << l.type_len_bits) - 1;
        for v in [l.padding, l.time_extend, l.time_stamp, l.max_data_type_len] {
            if v > max_type {
                return Err(LayoutError::TypeTooWide {
                    value: v,
                    bits: l.type_len_bits,
                });
            }
        }
        if l.max_data_type_len >= l.padding.min(l.time_extend).min(l.time_stamp) {
            return Err(LayoutError::DataTypeOverlap);
        }
        Ok(l)
    }
}

/// Events lost before a page, from its commit flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissedEvents {
    None,
    /// The kernel says events were lost but did not store how many.
    Unknown,
    Count(u64),
}

/// The header of one page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageHeader {
    pub timestamp: u64,
    /// Bytes of event data after the header.
    pub commit_bytes: usize,
    pub missed: MissedEvents,
}

/// Commit flag: events were lost between the previous page and this one.
pub const COMMIT_MISSED_EVENTS: u64 = 1 << 31;
/// Commit flag: the count of lost events is stored after the data.
pub const COMMIT_MISSED_STORED: u64 = 1 << 30;
/// The data size part of the commit word (as libtraceevent's kbuffer masks it).
pub const COMMIT_SIZE_MASK: u64 = (1 << 27) - 1;

/// What is wrong with a page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PageError {
    /// The buffer is shorter than the page header.
    ShortHeader { len: usize },
    /// The committed size does not fit the buffer.
    CommitTooLarge { commit: usize, room: usize },
    /// An event header or body runs past the committed data.
    Truncated { at: usize },
    /// A data event declares a length shorter than its own length word.
    BadLength { at: usize, length: u32 },
    /// A type_len value that is none of data, padding, extend, stamp.
    UnknownType { at: usize, type_len: u32 },
}

impl fmt::Display for PageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PageError::ShortHeader { len } => {
                write!(f, "page of {len} bytes is shorter than its header")
            }
            PageError::CommitTooLarge { commit, room } => {
                write!(f, "page commits {commit} bytes but has room for {room}")
            }
            PageError::Truncated { at } => {
                write!(f, "event at byte {at} runs past the committed data")
            }
            PageError::BadLength { at, length } => {
                write!(f, "event at byte {at} has bad length {length}")
            }
            PageError::UnknownType { at, type_len } => {
                write!(f, "event at byte {at} has unknown type_len {type_len}")
            }
        }
    }
}

impl std::error::Error for PageError {}

/// One data event: its absolute time and its payload (the trace event record,
/// starting with `common_type`; may carry up to 3 bytes of alignment padding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawEvent<'a> {
    pub ts: u64,
    pub payload: &'a [u8],
}

fn read_u32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_ne_bytes(s.try_into().ok()?))
}

fn read_u64(b: &[u8], at: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(8)?)?;
    Some(u64::from_ne_bytes(s.try_into().ok()?))
}

fn read_long(b: &[u8], at: usize, size: usize) -> Option<u64> {
    if size == 8 {
        read_u64(b, at)
    } else {
        read_u32(b, at).map(u64::from)
    }
}

/// Top 5 bits of a 64-bit time that an absolute time-stamp event does not carry.
const TS_MSB: u64 = 0xf8 << 56;

/// The events of one page, in order. Stops at the end of the committed data, at a null
/// padding, or after yielding the first error.
pub struct PageEvents<'a> {
    page: &'a [u8],
    header: PageHeader,
    hdr: EventHeaderLayout,
    pos: usize,
    end: usize,
    ts: u64,
    done: bool,
}

/// Starts decoding one page.
pub fn decode_page<'a>(
    page: &'a [u8],
    layout: &PageLayout,
    hdr: &EventHeaderLayout,
) -> Result<PageEvents<'a>, PageError> {
    let header = read_page_header(page, layout)?;
    let start = layout.data_offset;
    Ok(PageEvents {
        page,
        header,
        hdr: *hdr,
        pos: start,
        end: start + header.commit_bytes,
        ts: header.timestamp,
        done: false,
    })
}

/// Reads the page header and checks the committed size against the buffer.
pub fn read_page_header(page: &[u8], layout: &PageLayout) -> Result<PageHeader, PageError> {
    let short = PageError::ShortHeader { len: page.len() };
    if page.len() < layout.data_offset {
        return Err(short);
    }
    let timestamp = read_u64(page, layout.timestamp_offset).ok_or(short.clone())?;
    let commit = read_long(page, layout.commit_offset, layout.commit_size).ok_or(short)?;
    let commit_bytes = (commit & COMMIT_SIZE_MASK) as usize;
    let room = page.len() - layout.data_offset;
    if commit_bytes > room {
        return Err(PageError::CommitTooLarge {
            commit: commit_bytes,
            room,
        });
    }
    let missed = if commit & COMMIT_MISSED_EVENTS == 0 {
        MissedEvents::None
    } else if commit & COMMIT_MISSED_STORED != 0 {
        match read_long(page, layout.data_offset + commit_bytes, layout.commit_size) {
            Some(n) => MissedEvents::Count(n),
            None => MissedEvents::Unknown,
        }
    } else {
        MissedEvents::Unknown
    };
    Ok(PageHeader {
        timestamp,
        commit_bytes,
        missed,
    })
}

impl<'a> PageEvents<'a> {
    pub fn header(&self) -> &PageHeader {
        &self.header
    }

    fn step(&mut self) -> Result<Option<RawEvent<'a>>, PageError> {
        let hdr = self.hdr;
        while self.pos < self.end {
            let at = self.pos;
            let word = read_u32(&self.page[..self.end], at).ok_or(PageError::Truncated { at })?;
            let type_len = word & ((1u32 << hdr.type_len_bits) - 1);
            let delta = u64::from(word >> hdr.type_len_bits);
            let array0 =
                || read_u32(&self.page[..self.end], at + 4).ok_or(PageError::Truncated { at });
            if type_len == hdr.padding {
                if delta == 0 {
                    // Null padding: the rest of the page holds nothing.
                    self.pos = self.end;
                    return Ok(None);
                }
                // A discarded event or end-of-page filler: skip array[0] bytes. Its delta
                // is kept (as libtraceevent does); discarding keeps the delta of the event.
                let len = array0()? as usize;
                self.ts = self.ts.wrapping_add(delta);
                self.pos = at
                    .checked_add(4)
                    .and_then(|p| p.checked_add(len))
                    .ok_or(PageError::Truncated { at })?;
                if self.pos > self.end {
                    return Err(PageError::Truncated { at });
                }
                continue;
            }
            if type_len == hdr.time_extend {
                let ext = (u64::from(array0()?) << hdr.time_delta_bits).wrapping_add(delta);
                self.ts = self.ts.wrapping_add(ext);
                self.pos = at + 8;
                continue;
            }
            if type_len == hdr.time_stamp {
                let mut abs = (u64::from(array0()?) << hdr.time_delta_bits) | delta;
                let page_ts = self.header.timestamp;
                if page_ts & TS_MSB != 0 {
                    abs |= page_ts & TS_MSB;
                    if abs < page_ts {
                        abs = abs.wrapping_add(1 << 59);
                    }
                }
                self.ts = abs;
                self.pos = at + 8;
                continue;
            }
            let (body_at, body_len, next) = if type_len == 0 {
                let length = array0()?;
                if length < 4 {
                    return Err(PageError::BadLength { at, length });
                }
                let body_len = (length as usize - 4 + 3) & !3;
                (at + 8, body_len, at + 8 + body_len)
            } else if type_len <= hdr.max_data_type_len {
                let body_len = type_len as usize * 4;
                (at + 4, body_len, at + 4 + body_len)
            } else {
                return Err(PageError::UnknownType { at, type_len });
            };
            if next > self.end {
                return Err(PageError::Truncated { at });
            }
            self.ts = self.ts.wrapping_add(delta);
            self.pos = next;
            return Ok(Some(RawEvent {
                ts: self.ts,
                payload: &self.page[body_at..body_at + body_len],
            }));
        }
        Ok(None)
    }
}

impl<'a> Iterator for PageEvents<'a> {
    type Item = Result<RawEvent<'a>, PageError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.step() {
            Ok(Some(ev)) => Some(Ok(ev)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Builds pages byte by byte, for tests (here and in other crates' tests).
#[derive(Clone, Debug)]
pub struct PageBuilder {
    layout: PageLayout,
    page_bytes: usize,
    bytes: Vec<u8>,
    commit_flags: u64,
    missed_count: Option<u64>,
}

impl PageBuilder {
    pub fn new(layout: PageLayout, page_bytes: usize, timestamp: u64) -> Self {
        assert!(page_bytes >= layout.data_offset);
        let mut bytes = vec![0u8; layout.data_offset];
        bytes[layout.timestamp_offset..layout.timestamp_offset + 8]
            .copy_from_slice(&timestamp.to_ne_bytes());
        PageBuilder {
            layout,
            page_bytes,
            bytes,
            commit_flags: 0,
            missed_count: None,
        }
    }

    fn header(&mut self, type_len: u32, delta: u32) {
        assert!(type_len < 32 && delta < (1 << 27));
        self.bytes
            .extend_from_slice(&(type_len | (delta << 5)).to_ne_bytes());
    }

    /// A data event; the payload is padded to 4 bytes. Uses the short form (type_len =
    /// words) up to 112 bytes, the long form (type_len 0 + length word) above.
    pub fn data(mut self, delta: u32, payload: &[u8]) -> Self {
        let padded = (payload.len() + 3) & !3;
        if padded > 0 && padded <= 112 {
            self.header((padded / 4) as u32, delta);
        } else {
            self.header(0, delta);
            self.bytes
                .extend_from_slice(&((payload.len() + 4) as u32).to_ne_bytes());
        }
        self.bytes.extend_from_slice(payload);
        self.bytes
            .resize(self.bytes.len() + padded - payload.len(), 0);
        self
    }

    /// A data event in the long form even if short (kernels with 8-byte alignment).
    pub fn data_long(mut self, delta: u32, payload: &[u8]) -> Self {
        let padded = (payload.len() + 3) & !3;
        self.header(0, delta);
        self.bytes
            .extend_from_slice(&((payload.len() + 4) as u32).to_ne_bytes());
        self.bytes.extend_from_slice(payload);
        self.bytes
            .resize(self.bytes.len() + padded - payload.len(), 0);
        self
    }

    /// A time extend adding `delta` ns (any size; split in 27 + 32 bits).
    pub fn time_extend(mut self, delta: u64) -> Self {
        assert!(delta < (1u64 << 59));
        self.header(30, (delta & ((1 << 27) - 1)) as u32);
        self.bytes
            .extend_from_slice(&((delta >> 27) as u32).to_ne_bytes());
        self
    }

    /// An absolute time stamp (low 59 bits).
    pub fn time_stamp(mut self, ts: u64) -> Self {
        self.header(31, (ts & ((1 << 27) - 1)) as u32);
        self.bytes
            .extend_from_slice(&(((ts >> 27) & 0xffff_ffff) as u32).to_ne_bytes());
        self
    }

    /// A discarded event of `skip` bytes (after its 8-byte header and length word).
    pub fn padding(mut self, delta: u32, skip: usize) -> Self {
        assert!(delta != 0, "delta 0 makes a null padding");
        self.header(29, delta);
        self.bytes
            .extend_from_slice(&((skip + 4) as u32).to_ne_bytes());
        self.bytes.resize(self.bytes.len() + skip, 0xAA);
        self
    }

    /// A null padding: ends the page's data.
    pub fn null_padding(mut self) -> Self {
        self.header(29, 0);
        self
    }

    pub fn missed(mut self, count: Option<u64>) -> Self {
        self.commit_flags = COMMIT_MISSED_EVENTS
            | if count.is_some() {
                COMMIT_MISSED_STORED
            } else {
                0
            };
        self.missed_count = count;
        self
    }

    /// The page, zero-filled to its size.
    pub fn build(mut self) -> Vec<u8> {
        let commit = (self.bytes.len() - self.layout.data_offset) as u64;
        let word = commit | self.commit_flags;
        let at = self.layout.commit_offset;
        if self.layout.commit_size == 8 {
            self.bytes[at..at + 8].copy_from_slice(&word.to_ne_bytes());
        } else {
            self.bytes[at..at + 4].copy_from_slice(&(word as u32).to_ne_bytes());
        }
        if let Some(n) = self.missed_count {
            if self.layout.commit_size == 8 {
                self.bytes.extend_from_slice(&n.to_ne_bytes());
            } else {
                self.bytes.extend_from_slice(&(n as u32).to_ne_bytes());
            }
        }
        assert!(self.bytes.len() <= self.page_bytes, "page overflow");
        self.bytes.resize(self.page_bytes, 0);
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

    const HEADER_EVENT: &str = "# compressed entry header\n\
\ttype_len    :    5 bits\n\
\ttime_delta  :   27 bits\n\
\tarray       :   32 bits\n\
\n\
\tpadding     : type == 29\n\
\ttime_extend : type == 30\n\
\ttime_stamp : type == 31\n\
\tdata max type_len  == 28\n";

    fn events(page: &[u8]) -> Vec<(u64, Vec<u8>)> {
        decode_page(page, &PageLayout::LP64, &EventHeaderLayout::DEFAULT)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.ts, e.payload.to_vec())
            })
            .collect()
    }

    #[test]
    fn parses_header_files_of_linux_6() {
        assert_eq!(PageLayout::parse(HEADER_PAGE).unwrap(), PageLayout::LP64);
        assert_eq!(
            EventHeaderLayout::parse(HEADER_EVENT).unwrap(),
            EventHeaderLayout::DEFAULT
        );
        let page32 = HEADER_PAGE
            .replace("size:8;\tsigned:1", "size:4;\tsigned:1")
            .replace("offset:16", "offset:12");
        let l = PageLayout::parse(&page32).unwrap();
        assert_eq!((l.commit_size, l.data_offset), (4, 12));
        assert_eq!(
            PageLayout::parse("field: u64 timestamp; offset:0; size:8;"),
            Err(LayoutError::NoField("commit"))
        );
        assert_eq!(
            EventHeaderLayout::parse("type_len : 6 bits\ntime_delta : 27 bits\n"),
            Err(LayoutError::Not32Bits {
                type_len: 6,
                time_delta: 27
            })
        );
    }

    #[test]
    fn data_events_accumulate_deltas_from_page_timestamp() {
        let page = PageBuilder::new(PageLayout::LP64, 4096, 1_000)
            .data(5, &[1, 2, 3, 4, 5, 6, 7, 8])
            .data(7, &[9; 12])
            .data(0, &[3; 5])
            .build();
        let ev = events(&page);
        assert_eq!(ev.len(), 3);
        assert_eq!(ev[0], (1_005, vec![1, 2, 3, 4, 5, 6, 7, 8]));
        assert_eq!(ev[1], (1_012, vec![9; 12]));
        // 5 bytes come back padded to 8.
        assert_eq!(ev[2], (1_012, vec![3, 3, 3, 3, 3, 0, 0, 0]));
    }

    #[test]
    fn long_form_events_with_length_word() {
        let big = vec![7u8; 200];
        let page = PageBuilder::new(PageLayout::LP64, 4096, 50)
            .data(1, &big)
            .data_long(2, &[1, 2, 3, 4])
            .build();
        let ev = events(&page);
        assert_eq!(ev, vec![(51, big), (53, vec![1, 2, 3, 4])]);
    }

    #[test]
    fn time_extend_and_absolute_time_stamp() {
        let big_gap = 5u64 << 30; // needs the extend's upper bits
        let page = PageBuilder::new(PageLayout::LP64, 4096, 10)
            .data(1, &[1; 4])
            .time_extend(big_gap)
            .data(0, &[2; 4])
            .time_stamp(123_456_789_012)
            .data(3, &[3; 4])
            .build();
        let ev = events(&page);
        assert_eq!(ev[0].0, 11);
        assert_eq!(ev[1].0, 11 + big_gap);
        assert_eq!(ev[2].0, 123_456_789_015);
    }

    #[test]
    fn absolute_stamp_takes_top_bits_from_page() {
        let page_ts = (1u64 << 60) | 1000;
        let page = PageBuilder::new(PageLayout::LP64, 4096, page_ts)
            .time_stamp(2000)
            .data(0, &[1; 4])
            .build();
        assert_eq!(events(&page)[0].0, (1u64 << 60) | 2000);
    }

    #[test]
    fn padding_is_skipped_and_null_padding_ends_the_page() {
        let page = PageBuilder::new(PageLayout::LP64, 4096, 0)
            .data(1, &[1; 4])
            .padding(2, 24)
            .data(3, &[2; 4])
            .null_padding()
            .data(4, &[9; 4]) // beyond the null padding: never seen
            .build();
        let ev = events(&page);
        assert_eq!(ev, vec![(1, vec![1; 4]), (6, vec![2; 4])]);
    }

    #[test]
    fn commit_flags_report_missed_events() {
        let page = PageBuilder::new(PageLayout::LP64, 4096, 0)
            .data(1, &[1; 4])
            .missed(Some(42))
            .build();
        let d = decode_page(&page, &PageLayout::LP64, &EventHeaderLayout::DEFAULT).unwrap();
        assert_eq!(d.header().missed, MissedEvents::Count(42));
        assert_eq!(d.header().commit_bytes, 8);
        assert_eq!(d.count(), 1);

        let page = PageBuilder::new(PageLayout::LP64, 4096, 0)
            .missed(None)
            .build();
        let d = decode_page(&page, &PageLayout::LP64, &EventHeaderLayout::DEFAULT).unwrap();
        assert_eq!(d.header().missed, MissedEvents::Unknown);
        assert_eq!(d.count(), 0);
    }

    #[test]
    fn commit_size_four_layout() {
        let l = PageLayout {
            timestamp_offset: 0,
            commit_offset: 8,
            commit_size: 4,
            data_offset: 12,
        };
        let page = PageBuilder::new(l, 4096, 100)
            .data(1, &[5; 8])
            .missed(Some(3))
            .build();
        let d = decode_page(&page, &l, &EventHeaderLayout::DEFAULT).unwrap();
        assert_eq!(d.header().missed, MissedEvents::Count(3));
        let ev: Vec<_> = d.map(Result::unwrap).collect();
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].ts, 101);
    }

    #[test]
    fn malformed_pages_are_errors() {
        let lp = PageLayout::LP64;
        let h = EventHeaderLayout::DEFAULT;
        assert!(matches!(
            decode_page(&[0; 10], &lp, &h),
            Err(PageError::ShortHeader { .. })
        ));
        let mut page = vec![0u8; 64];
        page[8..16].copy_from_slice(&100u64.to_ne_bytes());
        assert!(matches!(
            decode_page(&page, &lp, &h),
            Err(PageError::CommitTooLarge { .. })
        ));
        // An event claiming 28 words in a 12-byte commit.
        let mut page = vec![0u8; 64];
        page[8..16].copy_from_slice(&12u64.to_ne_bytes());
        page[16..20].copy_from_slice(&28u32.to_ne_bytes());
        let r: Vec<_> = decode_page(&page, &lp, &h).unwrap().collect();
        assert_eq!(r, vec![Err(PageError::Truncated { at: 16 })]);
        // A long-form event with length < 4.
        page[16..20].copy_from_slice(&0u32.to_ne_bytes());
        page[20..24].copy_from_slice(&2u32.to_ne_bytes());
        let r: Vec<_> = decode_page(&page, &lp, &h).unwrap().collect();
        assert_eq!(r, vec![Err(PageError::BadLength { at: 16, length: 2 })]);
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
            if let Ok(events) = decode_page(&bytes, &PageLayout::LP64, &EventHeaderLayout::DEFAULT) {
                for e in events.flatten() {
                    proptest::prop_assert!(e.payload.len() <= bytes.len());
                }
            }
        }

        #[test]
        fn never_panics_on_arbitrary_commit_and_words(
            commit_bytes in 0u64..600,
            flags in 0u64..4,
            words in proptest::collection::vec(proptest::num::u32::ANY, 0..100),
        ) {
            let commit = commit_bytes | (flags << 30);
            let mut page = vec![0u8; 16];
            page[8..16].copy_from_slice(&commit.to_ne_bytes());
            for w in &words {
                page.extend_from_slice(&w.to_ne_bytes());
            }
            if let Ok(events) = decode_page(&page, &PageLayout::LP64, &EventHeaderLayout::DEFAULT) {
                let n = events.count();
                proptest::prop_assert!(n <= words.len() + 1);
            }
        }

        #[test]
        fn built_pages_round_trip(
            evs in proptest::collection::vec((0u32..(1 << 27), proptest::collection::vec(proptest::num::u8::ANY, 1..150)), 0..12),
            start in 0u64..(1 << 50),
        ) {
            let mut b = PageBuilder::new(PageLayout::LP64, 4096, start);
            for (d, p) in &evs {
                b = b.data(*d, p);
            }
            let page = b.build();
            let got = events(&page);
            proptest::prop_assert_eq!(got.len(), evs.len());
            let mut ts = start;
            for ((d, p), (gts, gp)) in evs.iter().zip(&got) {
                ts += u64::from(*d);
                proptest::prop_assert_eq!(ts, *gts);
                proptest::prop_assert_eq!(&gp[..p.len()], &p[..]);
            }
        }
    }
}
