//! What is on a device, read here: on-disk signatures at both ends (the magic numbers
//! of filesystems, partition tables, RAID and volume-manager metadata, checked where a
//! format allows beyond the magic), and whether the device holds any data at all in its
//! first and last MiB. No library: a few reads through the descriptor the guard checks
//! (opened with O_DIRECT for writing: the device's own bytes, after the kernel wrote
//! back what it had cached).
//!
//! A signature is *strong* when random data cannot fake it in practice: a magic of at
//! least 4 bytes, or a 2-byte magic whose superblock fields also check out (ext2/3/4,
//! minix, an MBR with sane partition entries). A run that resumes on the same device
//! compares strong signatures with those seen when it started; weak ones may be bytes
//! storbench itself wrote (random data matches a 2-byte magic once in 65,536 runs).

use crate::backend::BufferPool;
use crate::target::TargetError;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;

/// One signature found on the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// `carries an ext2/ext3/ext4 filesystem (magic at byte 1080)`.
    pub description: String,
    /// Random data cannot fake it in practice (see the module doc).
    pub strong: bool,
}

/// What the scan read: the signatures and whether the first and last MiB hold data.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scan {
    pub signatures: Vec<Signature>,
    /// Some byte of the first or last MiB is not zero.
    pub has_data: bool,
    pub size_bytes: u64,
}

/// Bytes read at each end of the device.
pub const END_BYTES: u64 = 1 << 20;

/// Fixed-offset magics from the start of the device: (offset, magic, what). All at
/// least 4 bytes long: strong.
const HEAD: &[(u64, &[u8], &str)] = &[
    (512, b"EFI PART", "a GPT partition table"),
    (4096, b"EFI PART", "a GPT partition table (4K sectors)"),
    (0, b"XFSB", "an XFS filesystem"),
    (65600, b"_BHRfS_M", "a btrfs filesystem"),
    (4086, b"SWAPSPACE2", "a swap area"),
    (4086, b"SWAP-SPACE", "a swap area"),
    (8182, b"SWAPSPACE2", "a swap area (8K pages)"),
    (16374, b"SWAPSPACE2", "a swap area (16K pages)"),
    (65526, b"SWAPSPACE2", "a swap area (64K pages)"),
    (0, b"LABELONE", "an LVM physical volume"),
    (512, b"LABELONE", "an LVM physical volume"),
    (1024, b"LABELONE", "an LVM physical volume"),
    (1536, b"LABELONE", "an LVM physical volume"),
    (0, b"LUKS\xba\xbe", "a LUKS encrypted volume"),
    (
        16384,
        b"SKUL\xba\xbe",
        "a LUKS2 encrypted volume (secondary header)",
    ),
    (3, b"NTFS    ", "an NTFS filesystem"),
    (3, b"EXFAT   ", "an exFAT filesystem"),
    (54, b"FAT1", "a FAT filesystem"),
    (82, b"FAT32   ", "a FAT32 filesystem"),
    (1024, &[0x10, 0x20, 0xF5, 0xF2], "an F2FS filesystem"),
    (0, b"hsqs", "a squashfs filesystem"),
    (32769, b"CD001", "an ISO 9660 filesystem"),
    (32769, b"BEA01", "a UDF filesystem"),
    (32768, b"JFS1", "a JFS filesystem"),
    (1024, b"H+\0\x04", "an HFS+ filesystem"),
    (1024, b"HX\0\x05", "an HFSX filesystem"),
    (
        0,
        &[0xfc, 0x4e, 0x2b, 0xa9],
        "an md RAID member (superblock 1.1)",
    ),
    (
        4096,
        &[0xfc, 0x4e, 0x2b, 0xa9],
        "an md RAID member (superblock 1.2)",
    ),
    (65536, b"ReIsEr", "a ReiserFS filesystem"),
    (65536, &[0x01, 0x16, 0x19, 0x70], "a GFS2 filesystem"),
    (0, &[0xe2, 0xe1, 0xf5, 0xe0], "an EROFS filesystem"),
    (1024, &[0xe2, 0xe1, 0xf5, 0xe0], "an EROFS filesystem"),
    (0, b"bluestore block device", "a Ceph BlueStore device"),
    (
        4096 + 24,
        &[
            0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba,
            0x6d, 0x81,
        ],
        "a bcache device",
    ),
];

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Two-byte magics, with the superblock checks that make them strong.
fn head_checked(b: &[u8], out: &mut Vec<Signature>) {
    let mut add = |description: String, strong: bool| {
        out.push(Signature {
            description,
            strong,
        })
    };
    if b.len() >= 512 && b[510] == 0x55 && b[511] == 0xAA {
        // Four partition entries: a status of 0 or 0x80 each, and one in use.
        let entries: Vec<&[u8]> = (0..4).map(|i| &b[446 + 16 * i..462 + 16 * i]).collect();
        let sane = entries.iter().all(|e| e[0] == 0 || e[0] == 0x80)
            && entries.iter().any(|e| e[4] != 0 && le32(e, 12) != 0);
        if sane {
            let gpt = entries.iter().any(|e| e[4] == 0xEE);
            add(
                format!(
                    "carries {} (magic at byte 510)",
                    if gpt {
                        "a protective MBR (GPT disk)"
                    } else {
                        "a DOS partition table (MBR)"
                    }
                ),
                true,
            );
        } else {
            add(
                "carries a boot sector signature (magic at byte 510: FAT/NTFS boot sector or an MBR)"
                    .into(),
                false,
            );
        }
    }
    // ext2/3/4: superblock at 1024, magic 0xEF53 at +56.
    if b.len() >= 2048 && le16(b, 1080) == 0xEF53 {
        let sb = &b[1024..2048];
        let strong = le32(sb, 0) > 0 // inodes
            && le32(sb, 4) > 0 // blocks
            && le32(sb, 20) <= 1 // first data block
            && le32(sb, 24) <= 6 // log block size
            && le32(sb, 76) <= 1; // revision
        add(
            "carries an ext2/ext3/ext4 filesystem (magic at byte 1080)".into(),
            strong,
        );
    }
    // minix v1/v2 (magic at 1040) and v3 (at 1048).
    if b.len() >= 2048 {
        let sb = &b[1024..2048];
        let v12 = matches!(le16(sb, 16), 0x137F | 0x138F | 0x2468 | 0x2478);
        let v3 = le16(sb, 24) == 0x4D5A;
        if v12 || v3 {
            // inodes, imap blocks, zmap blocks, first data zone: all in use.
            let strong = if v3 {
                le32(sb, 0) > 0 && le16(sb, 6) > 0 && le16(sb, 8) > 0 && le16(sb, 10) > 0
            } else {
                le16(sb, 0) > 0 && le16(sb, 4) > 0 && le16(sb, 6) > 0 && le16(sb, 8) > 0
            };
            add(
                format!(
                    "carries a minix filesystem (magic at byte {})",
                    if v3 { 1048 } else { 1040 }
                ),
                strong,
            );
        }
    }
}

/// ZFS labels: 256 KiB each, two at the start (0, 256K) and two at the end; each holds
/// an uberblock ring in its second half, 1 KiB slots with a 64-bit magic.
fn zfs_uberblocks(buf: &[u8], labels: &[usize], at: u64, out: &mut Vec<Signature>) {
    const MAGIC: u64 = 0x00ba_b10c;
    for &label in labels {
        let ring = label + (128 << 10);
        let found = (0..128).map(|i| ring + i * 1024).find(|&o| {
            o + 8 <= buf.len()
                && (le64(buf, o) == MAGIC
                    || u64::from_be_bytes(buf[o..o + 8].try_into().unwrap()) == MAGIC)
        });
        if let Some(o) = found {
            out.push(Signature {
                description: format!(
                    "carries a ZFS pool member (uberblock at byte {})",
                    at + o as u64
                ),
                strong: true,
            });
            return;
        }
    }
}

/// A GPT header at `off` in `buf` (a sector of `lbs` bytes) whose CRC checks out and
/// which says it lies at LBA `lba`.
fn gpt_header_at(buf: &[u8], off: usize, lbs: u64, lba: u64) -> bool {
    if off + 92 > buf.len() || &buf[off..off + 8] != b"EFI PART" {
        return false;
    }
    let size = le32(buf, off + 12) as usize;
    if !(92..=lbs as usize).contains(&size) || off + size > buf.len() {
        return true; // the magic alone: 8 bytes random data does not fake
    }
    let mut h = buf[off..off + size].to_vec();
    let crc = le32(&h, 16);
    h[16..20].fill(0);
    crc32fast::hash(&h) == crc && le64(buf, off + 24) == lba
}

/// Signatures near the end of the device (`tail` holds its last bytes, the device is
/// `size` bytes long): GPT's backup header at the last LBA, md 0.90 and 1.0
/// superblocks, ZFS labels L2/L3, Windows LDM's private header.
fn tail_checked(tail: &[u8], size: u64, out: &mut Vec<Signature>) {
    let base = size - tail.len() as u64;
    let local = |abs: u64| {
        abs.checked_sub(base)
            .map(|o| o as usize)
            .filter(|&o| o < tail.len())
    };
    for lbs in [512u64, 4096] {
        if size < 2 * lbs {
            continue;
        }
        let last = size / lbs - 1;
        if let Some(o) = local(last * lbs) {
            if o + 8 <= tail.len() && &tail[o..o + 8] == b"EFI PART" {
                let valid = gpt_header_at(tail, o, lbs, last);
                out.push(Signature {
                    description: format!(
                        "carries a GPT partition table (backup header at the last {lbs}-byte sector, byte {}{})",
                        last * lbs,
                        if valid { "" } else { ", CRC not matching" }
                    ),
                    strong: true,
                });
            }
        }
    }
    let md = |abs: u64, what: &str, out: &mut Vec<Signature>| {
        if let Some(o) = local(abs) {
            if o + 4 <= tail.len() {
                let m = le32(tail, o);
                if m == 0xa92b_4efc || m.swap_bytes() == 0xa92b_4efc {
                    out.push(Signature {
                        description: format!("carries an md RAID member ({what}, at byte {abs})"),
                        strong: true,
                    });
                }
            }
        }
    };
    if size >= 128 << 10 {
        md((size & !0xFFFF) - 0x10000, "superblock 0.90", out);
    }
    if size >= 16 << 10 {
        md((size - 8192) & !4095, "superblock 1.0", out);
    }
    let aligned = size & !((256 << 10) - 1);
    if aligned >= 512 << 10 {
        let labels: Vec<usize> = [aligned - (512 << 10), aligned - (256 << 10)]
            .iter()
            .filter_map(|&a| local(a))
            .collect();
        zfs_uberblocks(tail, &labels, base, out);
    }
    if let Some(o) = (0..tail.len() / 512)
        .map(|i| i * 512)
        .find(|&o| tail[o..].starts_with(b"PRIVHEAD"))
    {
        out.push(Signature {
            description: format!(
                "carries a Windows dynamic disk database (LDM private header at byte {})",
                base + o as u64
            ),
            strong: true,
        });
    }
}

/// Reads `buf.len()` bytes at `at` (fewer at the end of the file).
fn read_full(
    fd: BorrowedFd<'_>,
    buf: &mut [u8],
    at: u64,
    name: &Path,
) -> Result<usize, TargetError> {
    let mut n = 0;
    while n < buf.len() {
        match rustix::io::pread(fd, &mut buf[n..], at + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => {
                return Err(TargetError::Io {
                    context: format!(
                        "read {} at byte {} to check for signatures",
                        name.display(),
                        at + n as u64
                    ),
                    source: e.into(),
                })
            }
        }
    }
    Ok(n)
}

/// The first and last [`END_BYTES`] of the open file or device `fd` (the whole of it
/// when smaller), read through the descriptor into a buffer aligned for O_DIRECT (a
/// device's length is a whole number of its logical blocks, and so is 1 MiB).
struct Ends {
    /// One slot of 2 MiB: the head, then the tail.
    pool: BufferPool,
    head_bytes: usize,
    tail_bytes: usize,
    tail_at: u64,
    size_bytes: u64,
}

impl Ends {
    fn read(fd: BorrowedFd<'_>, name: &Path) -> Result<Ends, TargetError> {
        let size =
            rustix::fs::seek(fd, rustix::fs::SeekFrom::End(0)).map_err(|e| TargetError::Io {
                context: format!("size {} to check for signatures", name.display()),
                source: e.into(),
            })?;
        let end = END_BYTES as usize;
        let mut pool = BufferPool::new(1, 2 * end);
        let (head, tail) = pool.slot_mut(0).split_at_mut(end);
        let head_bytes = read_full(fd, &mut head[..END_BYTES.min(size) as usize], 0, name)?;
        let tail_at = size.saturating_sub(END_BYTES);
        let tail_bytes = read_full(fd, &mut tail[..(size - tail_at) as usize], tail_at, name)?;
        Ok(Ends {
            pool,
            head_bytes,
            tail_bytes,
            tail_at,
            size_bytes: size,
        })
    }

    /// The head and the tail read.
    fn bytes(&mut self) -> (&[u8], &[u8]) {
        let (h, t) = (self.head_bytes, self.tail_bytes);
        let (head, tail) = self.pool.slot_mut(0).split_at(END_BYTES as usize);
        (&head[..h], &tail[..t])
    }
}

/// Read the first and last [`END_BYTES`] of `path` and find what they carry.
pub fn scan(path: &Path) -> Result<Scan, TargetError> {
    let f = File::open(path).map_err(|e| TargetError::Io {
        context: format!("open {} to check for signatures", path.display()),
        source: e,
    })?;
    scan_fd(f.as_fd(), path)
}

/// Read the first and last [`END_BYTES`] of the open file or device `fd` (`name` in
/// messages) and find what they carry: the guard's scan of the very descriptor it
/// passes.
pub fn scan_fd(fd: BorrowedFd<'_>, name: &Path) -> Result<Scan, TargetError> {
    let mut ends = Ends::read(fd, name)?;
    let (size, tail_at) = (ends.size_bytes, ends.tail_at);
    let (head, tail) = ends.bytes();
    let mut signatures = Vec::new();
    for &(off, magic, what) in HEAD {
        let o = off as usize;
        if head.len() >= o + magic.len() && &head[o..o + magic.len()] == magic {
            signatures.push(Signature {
                description: format!("carries {what} (magic at byte {off})"),
                strong: true,
            });
        }
    }
    head_checked(head, &mut signatures);
    zfs_uberblocks(head, &[0, 256 << 10], 0, &mut signatures);
    if tail.len() as u64 == size - tail_at {
        tail_checked(tail, size, &mut signatures);
    }
    let mut seen = std::collections::HashSet::new();
    signatures.retain(|s| seen.insert(s.description.clone()));
    let has_data = head.iter().chain(tail.iter()).any(|&b| b != 0);
    Ok(Scan {
        signatures,
        has_data,
        size_bytes: size,
    })
}

/// A digest of what a device holds at both ends: its size and a CRC-32 of its first
/// and of its last MiB. A run keeps the one taken at its last checkpoint; a resume that
/// finds another needs the user's consent again (something wrote there since, or the
/// run's state names another device). A CRC is enough: whoever can edit the state can
/// put any digest in it, so the digest only has to notice a change that was not meant
/// to match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EndsDigest {
    pub size_bytes: u64,
    pub head_crc32: u32,
    pub tail_crc32: u32,
}

/// The [`EndsDigest`] of the open file or device `fd`.
pub fn ends_digest(fd: BorrowedFd<'_>, name: &Path) -> Result<EndsDigest, TargetError> {
    let mut ends = Ends::read(fd, name)?;
    let size_bytes = ends.size_bytes;
    let (head, tail) = ends.bytes();
    Ok(EndsDigest {
        size_bytes,
        head_crc32: crc32fast::hash(head),
        tail_crc32: crc32fast::hash(tail),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(size: usize, writes: &[(usize, &[u8])]) -> (tempfile::TempDir, std::path::PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("img");
        let mut img = vec![0u8; size];
        for &(off, bytes) in writes {
            img[off..off + bytes.len()].copy_from_slice(bytes);
        }
        std::fs::write(&p, &img).unwrap();
        (d, p)
    }

    fn found(writes: &[(usize, &[u8])], size: usize) -> Scan {
        let (_d, p) = image(size, writes);
        scan(&p).unwrap()
    }

    /// Headers of tools that may not be installed here (LVM, LUKS, md), written by
    /// hand at their documented offsets, are found by the scanner.
    #[test]
    fn scanner_finds_hand_written_headers() {
        let cases: &[(usize, &[u8], &str)] = &[
            (
                512,
                b"LABELONE\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0LVM2 001",
                "LVM",
            ),
            (0, b"LUKS\xba\xbe\0\x02", "LUKS"),
            (4096, &[0xfc, 0x4e, 0x2b, 0xa9, 1, 0, 0, 0], "md RAID"),
            (512, b"EFI PART", "GPT"),
            (4086, b"SWAPSPACE2", "swap"),
        ];
        for &(off, magic, what) in cases {
            let s = found(&[(off, magic)], 1 << 20);
            assert!(
                s.signatures
                    .iter()
                    .any(|f| f.description.contains(what) && f.strong),
                "{what}: {s:?}"
            );
        }
        let blank = found(&[], 3 << 20);
        assert!(blank.signatures.is_empty() && !blank.has_data);
    }

    /// Two-byte magics count as strong only with a superblock around them: random
    /// data storbench wrote cannot pass for a filesystem on resume.
    #[test]
    fn two_byte_magics_are_strong_only_with_their_superblock() {
        let bare = found(&[(1080, &[0x53, 0xEF])], 1 << 20);
        assert_eq!(bare.signatures.len(), 1);
        assert!(!bare.signatures[0].strong, "{bare:?}");
        let mut sb = vec![0u8; 1024];
        sb[0..4].copy_from_slice(&128u32.to_le_bytes());
        sb[4..8].copy_from_slice(&1024u32.to_le_bytes());
        sb[20..24].copy_from_slice(&1u32.to_le_bytes());
        sb[56..58].copy_from_slice(&[0x53, 0xEF]);
        let ext = found(&[(1024, &sb)], 1 << 20);
        assert!(ext.signatures[0].strong && ext.signatures[0].description.contains("ext2"));
        // minix v1: inodes, zones, imap, zmap, first data zone, magic 0x137F.
        let mut mx = vec![0u8; 32];
        for (i, v) in [32u16, 1024, 1, 1, 8].iter().enumerate() {
            mx[2 * i..2 * i + 2].copy_from_slice(&v.to_le_bytes());
        }
        mx[16..18].copy_from_slice(&0x137Fu16.to_le_bytes());
        let m = found(&[(1024, &mx)], 1 << 20);
        assert!(
            m.signatures
                .iter()
                .any(|s| s.description.contains("minix") && s.strong),
            "{m:?}"
        );
        // A bare 55AA is a weak boot-sector finding; with a partition entry, an MBR.
        let b = found(&[(510, &[0x55, 0xAA])], 1 << 20);
        assert!(!b.signatures[0].strong);
        let mut e = [0u8; 16];
        e[4] = 0x83;
        e[12..16].copy_from_slice(&2048u32.to_le_bytes());
        let mbr = found(&[(446, &e), (510, &[0x55, 0xAA])], 1 << 20);
        assert!(mbr.signatures[0].strong && mbr.signatures[0].description.contains("DOS"));
    }

    /// Signatures that live at the end of a device: GPT's backup header, md 0.90 and
    /// 1.0 superblocks, a ZFS label's uberblock, LDM.
    #[test]
    fn scanner_reads_the_end_of_the_device() {
        let size = 8usize << 20;
        let md090 = (size & !0xFFFF) - 0x10000;
        let md10 = (size - 8192) & !4095;
        let zfs = size - (512 << 10) + (128 << 10) + 5 * 1024;
        let ldm = size - (1 << 20) + 6 * 512;
        let zmagic = 0x00bab10cu64.to_le_bytes();
        for (off, bytes, what) in [
            (size - 512, &b"EFI PART"[..], "backup header"),
            (md090, &[0xfc, 0x4e, 0x2b, 0xa9][..], "superblock 0.90"),
            (md10, &[0xfc, 0x4e, 0x2b, 0xa9][..], "superblock 1.0"),
            (zfs, &zmagic[..], "ZFS"),
            (ldm, &b"PRIVHEAD"[..], "LDM"),
        ] {
            let s = found(&[(off, bytes)], size);
            assert!(
                s.signatures.iter().any(|f| f.description.contains(what)),
                "{what}: {s:?}"
            );
            assert!(s.has_data);
        }
        // Data in the middle only: nothing found, and the ends are blank.
        let mid = found(&[(4 << 20, b"anything")], size);
        assert!(mid.signatures.is_empty() && !mid.has_data);
        // The last MiB holds data: seen.
        let end = found(&[(size - 3, b"x")], size);
        assert!(end.has_data);
    }
}
