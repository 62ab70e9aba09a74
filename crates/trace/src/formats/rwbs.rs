//! RWBS strings of the block layer (ftrace, blkparse): which op a request is.
//!
//! Kernel `blk_fill_rwbs`: an optional leading `F` (preflush), then the op letter
//! (`W` write, `D` discard (+`E` secure erase), `F` flush, `R` read, `N` anything else,
//! e.g. write-zeroes or driver-private; blktrace writes `FN` for a flush), then flags `F` (FUA), `A` (readahead),
//! `S` (sync), `M` (metadata).

use crate::model::Op;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rwbs {
    /// None: the op letter is `N` or unknown (see `letter`).
    pub op: Option<Op>,
    /// The op letter as written.
    pub letter: u8,
    pub preflush: bool,
    /// `F` after the op letter: forced unit access.
    pub fua: bool,
}

pub fn parse(s: &[u8]) -> Option<Rwbs> {
    if s.is_empty() || !s.iter().all(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let (preflush, rest) = if s[0] == b'F' && s.len() > 1 && b"WDRFN".contains(&s[1]) {
        (true, &s[1..])
    } else {
        (false, s)
    };
    let letter = rest[0];
    let op = match letter {
        b'R' => Some(Op::Read),
        b'W' => Some(Op::Write),
        b'D' => Some(Op::Trim),
        b'F' => Some(Op::Flush),
        // blktrace writes a flush without data as `FN` (preflush, no op letter).
        b'N' if preflush => Some(Op::Flush),
        _ => None,
    };
    let fua = rest[1..].contains(&b'F');
    Some(Rwbs {
        op,
        letter,
        preflush,
        fua,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters() {
        assert_eq!(parse(b"WS").unwrap().op, Some(Op::Write));
        assert_eq!(parse(b"RA").unwrap().op, Some(Op::Read));
        assert_eq!(
            parse(b"FF").unwrap(),
            Rwbs {
                op: Some(Op::Flush),
                letter: b'F',
                preflush: true,
                fua: false,
            }
        );
        assert_eq!(parse(b"F").unwrap().op, Some(Op::Flush));
        let w = parse(b"FWFS").unwrap();
        assert_eq!((w.op, w.preflush), (Some(Op::Write), true));
        assert_eq!(parse(b"DE").unwrap().op, Some(Op::Trim));
        assert_eq!(parse(b"N").unwrap().op, None);
        assert_eq!(parse(b"FN").unwrap().op, Some(Op::Flush));
        assert!(!parse(b"WS").unwrap().preflush);
        let w = parse(b"WFS").unwrap();
        assert_eq!((w.op, w.preflush, w.fua), (Some(Op::Write), false, true));
        assert!(!parse(b"WS").unwrap().fua);
        assert!(parse(b"ws").is_none() && parse(b"").is_none());
    }
}
