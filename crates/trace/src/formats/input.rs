//! Trace input as it is downloaded: compressed, archived, or plain text.
//!
//! The codec is recognised by its magic bytes, never by the file name: gzip (any number
//! of members, as `cat a.gz b.gz` or pigz write), zstd (any number of frames, skippable
//! frames included), xz (any number of streams) and bzip2 (any number of streams). After
//! decompression a tar archive (POSIX or GNU, recognised by `ustar` at byte 257) yields
//! each regular member in archive order, or the one asked for with `--member`; a member
//! may itself be compressed (the SNIA MSR set is a tar of `.csv.gz` files). Anything
//! else must be text: a NUL byte in the first bytes, or a known binary format (zip, 7z,
//! lz4, rar, Parquet), is refused with an error that says what the file is and what to
//! do, so no binary garbage reaches a field-level error.
//!
//! Decoders wrap the reader and nothing else: a plain file is read as before, through
//! one chained buffer of the bytes looked at (so stdin and pipes work too).

use crate::error::TraceError;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A compression recognised by its magic bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    Gzip,
    Zstd,
    Xz,
    Bzip2,
}

impl Codec {
    pub fn name(self) -> &'static str {
        match self {
            Codec::Gzip => "gzip",
            Codec::Zstd => "zstd",
            Codec::Xz => "xz",
            Codec::Bzip2 => "bzip2",
        }
    }

    /// The codec whose magic `head` starts with.
    pub fn sniff(head: &[u8]) -> Option<Codec> {
        if head.starts_with(&[0x1f, 0x8b]) {
            return Some(Codec::Gzip);
        }
        // A zstd frame, or a skippable frame (magic 0x184D2A50..=0x184D2A5F, little endian).
        if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd])
            || (head.len() >= 4 && head[0] & 0xf0 == 0x50 && head[1..4] == [0x2a, 0x4d, 0x18])
        {
            return Some(Codec::Zstd);
        }
        if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            return Some(Codec::Xz);
        }
        if head.len() >= 4 && head.starts_with(b"BZh") && (b'1'..=b'9').contains(&head[3]) {
            return Some(Codec::Bzip2);
        }
        None
    }
}

/// Binary formats that are not trace text: (what it is, what to do instead).
fn known_binary(head: &[u8]) -> Option<(&'static str, &'static str)> {
    const KNOWN: [(&[u8], &str, &str); 7] = [
        (b"PK\x03\x04", "a zip archive", "extract the trace first: `unzip -l FILE` lists the members, `unzip -p FILE MEMBER | storbench import - -o OUT.parquet` imports one"),
        (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", "extract the trace first: `7z x -so FILE | storbench import - -o OUT.parquet`"),
        (b"\x04\x22\x4d\x18", "lz4 data", "decompress it first: `lz4 -dc FILE | storbench import - -o OUT.parquet`"),
        (b"Rar!\x1a\x07", "a RAR archive", "extract the trace first: `unrar p -inul FILE MEMBER | storbench import - -o OUT.parquet`"),
        (b"\x5d\x00\x00", "legacy .lzma data", "decompress it first: `xz -dc --format=lzma FILE | storbench import - -o OUT.parquet`"),
        (b"PAR1", "a Parquet file", "a Parquet trace needs no import: `storbench characterize`, `replay` and `export` read it as it is"),
        (b"\x89PNG", "a PNG image, not a trace", "give the trace file itself"),
    ];
    KNOWN
        .iter()
        .find(|(magic, _, _)| head.starts_with(magic))
        .map(|&(_, what, hint)| (what, hint))
}

/// A decompressor's read error (truncated or corrupt compressed data), carried inside an
/// `io::Error` to [`TraceError::read`], which makes it an input error with its hint.
#[derive(Debug)]
pub struct Corrupt {
    codec: Codec,
    error: io::Error,
}

impl Corrupt {
    pub(crate) fn hint(&self) -> String {
        let test = match self.codec {
            Codec::Gzip => "gzip -t",
            Codec::Zstd => "zstd -t",
            Codec::Xz => "xz -t",
            Codec::Bzip2 => "bzip2 -t",
        };
        format!(
            "the {} data is cut short or damaged (`{test} FILE` checks it): download the file again",
            self.codec.name()
        )
    }
}

impl std::fmt::Display for Corrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} data: {} (truncated or corrupt download?)",
            self.codec.name(),
            self.error
        )
    }
}

impl std::error::Error for Corrupt {}

/// Bytes looked at to recognise a codec, a tar header or binary data.
const SNIFF_BYTES: usize = 8192;

/// Reads up to `n` bytes (fewer only at the end of input) and returns them with a reader
/// that yields the whole input again.
fn peek<'r>(
    name: &Path,
    mut reader: Box<dyn Read + 'r>,
    n: usize,
) -> Result<(Vec<u8>, Box<dyn Read + 'r>), TraceError> {
    let mut head = vec![0u8; n];
    let mut got = 0;
    while got < n {
        match reader.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(TraceError::read(name, e)),
        }
    }
    head.truncate(got);
    let again = Box::new(io::Cursor::new(head.clone()).chain(reader));
    Ok((head, again))
}

/// Prefixes the codec's name to read errors ("gzip data: corrupt deflate stream").
struct Named<R> {
    inner: R,
    codec: Codec,
}

impl<R: Read> Read for Named<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            io::Error::new(
                e.kind(),
                Corrupt {
                    codec: self.codec,
                    error: e,
                },
            )
        })
    }
}

/// Wraps `reader` in the decoder of `codec`.
fn decoder<'r>(codec: Codec, reader: Box<dyn Read + 'r>) -> io::Result<Box<dyn Read + 'r>> {
    let inner: Box<dyn Read + 'r> = match codec {
        Codec::Gzip => Box::new(flate2::read::MultiGzDecoder::new(reader)),
        Codec::Zstd => Box::new(zstd::stream::read::Decoder::new(reader)?),
        Codec::Xz => Box::new(liblzma::read::XzDecoder::new_multi_decoder(reader)),
        Codec::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(reader)),
    };
    Ok(Box::new(Named { inner, codec }))
}

/// A decoded stream, the codec it was decoded from, and its first bytes.
type Decoded<'r> = (Box<dyn Read + 'r>, Option<Codec>, Vec<u8>);

/// What [`for_each_part`] calls with each part's name and text.
pub type PartFn<'f> = dyn FnMut(&Path, Box<dyn Read + '_>) -> Result<(), TraceError> + 'f;

/// Decompresses `reader` when it starts with a codec's magic (once: a gzip of a gzip is
/// not a trace). Returns the decoded stream, the codec and the first decoded bytes.
fn decode<'r>(name: &Path, reader: Box<dyn Read + 'r>) -> Result<Decoded<'r>, TraceError> {
    let (head, reader) = peek(name, reader, SNIFF_BYTES)?;
    let Some(codec) = Codec::sniff(&head) else {
        return Ok((reader, None, head));
    };
    let reader = decoder(codec, reader).map_err(|e| TraceError::io(name, "decompress", e))?;
    let (head, reader) = peek(name, reader, SNIFF_BYTES)?;
    Ok((reader, Some(codec), head))
}

/// Whether `head` starts with a tar header (POSIX `ustar\0` or GNU `ustar  \0`).
fn is_tar(head: &[u8]) -> bool {
    head.len() >= 512 && &head[257..262] == b"ustar"
}

/// Refuses binary data (NUL bytes, known binary formats) with a clear error.
fn check_text(name: &Path, head: &[u8], codec: Option<Codec>) -> Result<(), TraceError> {
    let what = known_binary(head)
        .map(|(what, hint)| (what.to_owned(), hint.to_owned()))
        .or_else(|| {
            memchr::memchr(0, head).map(|_| {
                let shown: Vec<String> = head.iter().take(8).map(|b| format!("{b:02x}")).collect();
                (
                    format!(
                        "binary data (starts with bytes {}), not a text trace, and not gzip, \
                         zstd, xz, bzip2 or tar either",
                        shown.join(" ")
                    ),
                    "`file FILE` says what it is; storbench imports text traces, plain, \
                     compressed or in a tar archive"
                        .to_owned(),
                )
            })
        });
    match what {
        None => Ok(()),
        Some((what, hint)) => Err(TraceError::Input {
            path: name.to_path_buf(),
            message: match codec {
                Some(c) => format!("{} decompressed to {what}", c.name()),
                None => format!("is {what}"),
            },
            hint,
        }),
    }
}

/// What the inputs held, for the import summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Opened {
    /// Codecs met (in the order met; each once).
    pub codecs: Vec<Codec>,
    /// Tar members imported.
    pub members: u64,
    /// Tar entries skipped: directories, links, empty files, members other than `--member`.
    pub members_skipped: u64,
}

impl Opened {
    fn note(&mut self, codec: Option<Codec>) {
        if let Some(c) = codec {
            if !self.codecs.contains(&c) {
                self.codecs.push(c);
            }
        }
    }
}

/// Calls `f` with the name (`FILE`, or `FILE/MEMBER` for a tar member) and the decoded
/// text of each part of one input: the input itself, or each tar member (only `member`
/// when given: a member's path or file name).
pub fn for_each_part<'r>(
    name: &Path,
    reader: Box<dyn Read + 'r>,
    member: Option<&str>,
    opened: &mut Opened,
    f: &mut PartFn,
) -> Result<(), TraceError> {
    let (reader, codec, head) = decode(name, reader)?;
    opened.note(codec);
    if !is_tar(&head) {
        if let Some(m) = member {
            return Err(TraceError::Input {
                path: name.to_path_buf(),
                message: format!("--member {m:?} given, but this is not a tar archive"),
                hint: "drop --member: it picks one member of a tar archive".to_owned(),
            });
        }
        check_text(name, &head, codec)?;
        return f(name, reader);
    }
    let mut archive = tar::Archive::new(reader);
    let entries = archive.entries().map_err(|e| TraceError::read(name, e))?;
    let mut seen: Vec<String> = Vec::new();
    let mut matched = false;
    for entry in entries {
        let entry = entry.map_err(|e| TraceError::read(name, e))?;
        let path = entry
            .path()
            .map_err(|e| TraceError::read(name, e))?
            .into_owned();
        let kind = entry.header().entry_type();
        if !(kind.is_file() || kind == tar::EntryType::Continuous) || entry.size() == 0 {
            opened.members_skipped += 1;
            continue;
        }
        if seen.len() < 8 {
            seen.push(path.display().to_string());
        }
        if let Some(m) = member {
            let same_name = path
                .file_name()
                .is_some_and(|n| n == std::ffi::OsStr::new(m));
            if path != Path::new(m) && !same_name {
                opened.members_skipped += 1;
                continue;
            }
        }
        matched = true;
        let part_name = PathBuf::from(format!("{}/{}", name.display(), path.display()));
        let (reader, codec, head) = decode(&part_name, Box::new(entry))?;
        opened.note(codec);
        check_text(&part_name, &head, codec)?;
        opened.members += 1;
        f(&part_name, reader)?;
    }
    if !matched {
        let (message, hint) = match member {
            Some(m) => (
                format!(
                    "no member {m:?} in this tar archive (members: {}{})",
                    seen.join(", "),
                    if seen.len() == 8 { ", ..." } else { "" }
                ),
                "give --member one of the members listed (its path in the archive or its \
                 file name; `tar tf FILE` lists them all), or drop --member to import every \
                 member"
                    .to_owned(),
            ),
            None => (
                "a tar archive without any non-empty regular file".to_owned(),
                "`tar tvf FILE` lists what it holds".to_owned(),
            ),
        };
        return Err(TraceError::Input {
            path: name.to_path_buf(),
            message,
            hint,
        });
    }
    Ok(())
}

/// Counts the bytes read from the raw input (before decompression) into `counter`, for
/// a progress bar against the file's size.
pub struct Counting<R> {
    pub inner: R,
    pub counter: Option<Arc<AtomicU64>>,
}

impl<R: Read> Read for Counting<R> {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(c) = &self.counter {
            c.fetch_add(n as u64, Ordering::Relaxed);
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn parts(data: Vec<u8>, member: Option<&str>) -> Result<Vec<(String, String)>, TraceError> {
        let mut out = Vec::new();
        let mut opened = Opened::default();
        for_each_part(
            Path::new("in"),
            Box::new(io::Cursor::new(data)),
            member,
            &mut opened,
            &mut |name, mut r| {
                let mut s = String::new();
                r.read_to_string(&mut s)
                    .map_err(|e| TraceError::read(name, e))?;
                out.push((name.display().to_string(), s));
                Ok(())
            },
        )?;
        Ok(out)
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn every_codec_round_trips_and_concatenated_streams_are_read_whole() {
        let text = b"a,b\n1,2\n".repeat(1000);
        let (first, second) = text.split_at(3001);
        let mut gz = gzip(first);
        gz.extend(gzip(second));
        let mut zs = zstd::encode_all(first, 1).unwrap();
        zs.extend(zstd::encode_all(second, 1).unwrap());
        let xz = |d: &[u8]| {
            let mut e = liblzma::write::XzEncoder::new(Vec::new(), 1);
            e.write_all(d).unwrap();
            e.finish().unwrap()
        };
        let mut xzs = xz(first);
        xzs.extend(xz(second));
        let bz = |d: &[u8]| {
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
            e.write_all(d).unwrap();
            e.finish().unwrap()
        };
        let mut bzs = bz(first);
        bzs.extend(bz(second));
        for (codec, data) in [("gzip", gz), ("zstd", zs), ("xz", xzs), ("bzip2", bzs)] {
            let got = parts(data, None).unwrap();
            assert_eq!(got.len(), 1, "{codec}");
            assert_eq!(got[0].1.as_bytes(), &text[..], "{codec}");
        }
    }

    #[test]
    fn binary_input_is_refused_with_what_it_is() {
        let e = parts(vec![0x00, 0x01, 0x02, 0xff, b'a'], None).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("in: is binary data (starts with bytes 00 01 02 ff 61)"),
            "{msg}"
        );
        let e = parts(b"PK\x03\x04rest".to_vec(), None).unwrap_err();
        assert!(e.to_string().contains("zip archive"), "{e}");
        assert!(e.hint().unwrap().contains("unzip -p FILE MEMBER"), "{e:?}");
        let e = parts(b"PAR1\x15\x04".to_vec(), None).unwrap_err();
        assert!(e.hint().unwrap().contains("needs no import"), "{e:?}");
        let e = parts(gzip(b"PAR1\x00\x00"), None).unwrap_err();
        assert!(
            e.to_string()
                .contains("gzip decompressed to a Parquet file"),
            "{e}"
        );
        // A gzip cut short says so.
        let mut cut = gzip(&b"1,2\n".repeat(10_000));
        cut.truncate(cut.len() / 2);
        let e = parts(cut, None).unwrap_err();
        assert!(e.to_string().contains("gzip data"), "{e}");
        assert!(
            e.hint().unwrap().contains("`gzip -t FILE` checks it"),
            "{e:?}"
        );
    }

    #[test]
    fn tar_members_all_or_one_and_compressed_members() {
        let mut b = tar::Builder::new(Vec::new());
        let mut add = |path: &str, data: &[u8]| {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            b.append_data(&mut h, path, data).unwrap();
        };
        add("vol/a.csv", b"1,a\n");
        add("vol/empty.csv", b"");
        add("vol/b.csv.gz", &gzip(b"2,b\n"));
        let tar = b.into_inner().unwrap();
        let got = parts(gzip(&tar), None).unwrap();
        assert_eq!(
            got,
            vec![
                ("in/vol/a.csv".to_owned(), "1,a\n".to_owned()),
                ("in/vol/b.csv.gz".to_owned(), "2,b\n".to_owned())
            ]
        );
        let got = parts(tar.clone(), Some("b.csv.gz")).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].1, "2,b\n");
        let e = parts(tar, Some("c.csv")).unwrap_err();
        assert!(e.to_string().contains("no member \"c.csv\""), "{e}");
        assert!(e.hint().unwrap().contains("give --member one of"), "{e:?}");
        assert!(e.to_string().contains("vol/a.csv"), "{e}");
        let e = parts(b"1,2\n".to_vec(), Some("x")).unwrap_err();
        assert!(e.to_string().contains("not a tar archive"), "{e}");
    }
}
