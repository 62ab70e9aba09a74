//! Page checksums: every page of a trace storbench writes carries the CRC-32 of its
//! (compressed) bytes in its header's `crc` field, as the Parquet format defines it,
//! and every page read is checked against it (parquet's `crc` feature, in both our page
//! decoder's page reader and the Arrow reader). A flipped bit in a page is an error
//! naming the file, not a trace with changed figures. Files from other writers carry
//! checksums only when their writer wrote them (pyarrow's `write_page_checksum`).
//!
//! parquet-rs reads the `crc` field but does not write it, so [`add_page_checksums`]
//! rewrites a finished file: each column chunk's pages are copied with the header
//! re-encoded to hold the CRC (Thrift compact protocol, a few bytes longer), and the
//! footer is written anew with the chunks' new offsets and sizes. The file's metadata
//! (schema, key-value pairs, statistics) is otherwise unchanged. Cost: one more
//! sequential copy of the (compressed) file, measured in docs/benchmarks.md.

use parquet::file::metadata::{
    ColumnChunkMetaData, ParquetMetaData, ParquetMetaDataReader, ParquetMetaDataWriter,
    RowGroupMetaData,
};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;

/// What is wrong with a page header while rewriting (a bug of the writer).
type Bad = String;

fn uvarint(b: &[u8], pos: &mut usize) -> Result<u64, Bad> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*pos).ok_or("page header ends inside a varint")?;
        *pos += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("varint longer than 10 bytes".into())
}

fn zigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

fn put_uvarint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_zigzag(out: &mut Vec<u8>, v: i64) {
    put_uvarint(out, ((v << 1) ^ (v >> 63)) as u64);
}

/// Skip one value of compact-protocol type `t` at `pos`.
fn skip(b: &[u8], pos: &mut usize, t: u8, depth: u32) -> Result<(), Bad> {
    if depth > 32 {
        return Err("page header nested too deep".into());
    }
    let need = |pos: &usize, n: usize| {
        if *pos + n <= b.len() {
            Ok(())
        } else {
            Err(Bad::from("page header ends inside a value"))
        }
    };
    match t {
        1 | 2 => {}
        3 => {
            need(pos, 1)?;
            *pos += 1;
        }
        4..=6 => {
            uvarint(b, pos)?;
        }
        7 => {
            need(pos, 8)?;
            *pos += 8;
        }
        8 => {
            let n = uvarint(b, pos)? as usize;
            need(pos, n)?;
            *pos += n;
        }
        9 | 10 => {
            need(pos, 1)?;
            let h = b[*pos];
            *pos += 1;
            let mut n = u64::from(h >> 4);
            if n == 15 {
                n = uvarint(b, pos)?;
            }
            let et = h & 0x0f;
            for _ in 0..n {
                if et == 1 || et == 2 {
                    need(pos, 1)?;
                    *pos += 1;
                } else {
                    skip(b, pos, et, depth + 1)?;
                }
            }
        }
        11 => {
            let n = uvarint(b, pos)?;
            if n > 0 {
                need(pos, 1)?;
                let kv = b[*pos];
                *pos += 1;
                for _ in 0..n {
                    skip(b, pos, kv >> 4, depth + 1)?;
                    skip(b, pos, kv & 0x0f, depth + 1)?;
                }
            }
        }
        12 => loop {
            need(pos, 1)?;
            let h = b[*pos];
            *pos += 1;
            if h == 0 {
                break;
            }
            if h >> 4 == 0 {
                uvarint(b, pos)?;
            }
            skip(b, pos, h & 0x0f, depth + 1)?;
        },
        _ => return Err(format!("unknown compact type {t} in a page header")),
    }
    Ok(())
}

/// One field of a struct: id, type, and where its value's bytes lie.
struct Field {
    id: i16,
    ty: u8,
    value: std::ops::Range<usize>,
}

/// A page header at the start of `b`: its fields, its length, and the page's type and
/// compressed size.
fn read_header(b: &[u8]) -> Result<(Vec<Field>, usize, i32, usize), Bad> {
    let mut pos = 0;
    let mut last = 0i16;
    let mut fields = Vec::new();
    let (mut page_type, mut size) = (None, None);
    loop {
        let h = *b.get(pos).ok_or("page header ends before its stop")?;
        pos += 1;
        if h == 0 {
            break;
        }
        let id = if h >> 4 == 0 {
            zigzag(uvarint(b, &mut pos)?) as i16
        } else {
            last + i16::from(h >> 4)
        };
        let ty = h & 0x0f;
        let start = pos;
        skip(b, &mut pos, ty, 0)?;
        if ty == 5 && (id == 1 || id == 3) {
            let mut p = start;
            let v = zigzag(uvarint(b, &mut p)?) as i32;
            if id == 1 {
                page_type = Some(v);
            } else {
                size = Some(usize::try_from(v).map_err(|_| "negative page size")?);
            }
        }
        fields.push(Field {
            id,
            ty,
            value: start..pos,
        });
        last = id;
    }
    Ok((
        fields,
        pos,
        page_type.ok_or("page header without a type")?,
        size.ok_or("page header without a compressed size")?,
    ))
}

fn put_field_header(out: &mut Vec<u8>, last: i16, id: i16, ty: u8) {
    let delta = id - last;
    if (1..=15).contains(&delta) {
        out.push(((delta as u8) << 4) | ty);
    } else {
        out.push(ty);
        put_zigzag(out, i64::from(id));
    }
}

/// The header `b[..len]` re-encoded with `crc` in field 4.
fn with_crc(b: &[u8], fields: &[Field], crc: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len() + 6);
    let mut last = 0i16;
    let put_crc = |out: &mut Vec<u8>, last: &mut i16| {
        put_field_header(out, *last, 4, 5);
        put_zigzag(out, i64::from(crc as i32));
        *last = 4;
    };
    let mut done = false;
    for f in fields {
        if f.id == 4 {
            continue;
        }
        if f.id > 4 && !done {
            put_crc(&mut out, &mut last);
            done = true;
        }
        put_field_header(&mut out, last, f.id, f.ty);
        out.extend_from_slice(&b[f.value.clone()]);
        last = f.id;
    }
    if !done {
        put_crc(&mut out, &mut last);
    }
    out.push(0);
    out
}

/// `DICTIONARY_PAGE` in the page header's type field.
const DICTIONARY_PAGE: i32 = 2;

fn parquet_err(e: parquet::errors::ParquetError) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

fn bad(what: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what)
}

/// Copy the Parquet file `src` to `out` with a CRC in every page header (see the
/// module doc). `src` has no page index (the trace writer writes none).
pub fn add_page_checksums(src: &File, out: &mut impl Write) -> std::io::Result<()> {
    let md: ParquetMetaData = ParquetMetaDataReader::new()
        .parse_and_finish(src)
        .map_err(parquet_err)?;
    out.write_all(b"PAR1")?;
    let mut pos = 4u64;
    let mut row_groups = Vec::with_capacity(md.num_row_groups());
    let mut chunk = Vec::new();
    for rg in md.row_groups() {
        let rg_start = pos;
        let mut cols: Vec<ColumnChunkMetaData> = Vec::with_capacity(rg.num_columns());
        for cc in rg.columns() {
            let (start, len) = cc.byte_range();
            chunk.resize(len as usize, 0);
            src.read_exact_at(&mut chunk, start)?;
            let chunk_start = pos;
            let (mut dict_at, mut data_at) = (None, None);
            let mut off = 0usize;
            while off < chunk.len() {
                let (fields, hlen, page_type, size) = read_header(&chunk[off..])
                    .map_err(|e| bad(format!("column {}: {e}", cc.column_path())))?;
                let data = chunk.get(off + hlen..off + hlen + size).ok_or_else(|| {
                    bad(format!(
                        "column {}: page runs past its chunk",
                        cc.column_path()
                    ))
                })?;
                let header = with_crc(&chunk[off..off + hlen], &fields, crc32fast::hash(data));
                if page_type == DICTIONARY_PAGE {
                    dict_at.get_or_insert(pos);
                } else {
                    data_at.get_or_insert(pos);
                }
                out.write_all(&header)?;
                out.write_all(data)?;
                pos += (header.len() + size) as u64;
                off += hlen + size;
            }
            let grown = (pos - chunk_start) as i64 - len as i64;
            let new = cc
                .clone()
                .into_builder()
                .set_dictionary_page_offset(dict_at.map(|v| v as i64))
                .set_data_page_offset(data_at.unwrap_or(chunk_start) as i64)
                .set_total_compressed_size(cc.compressed_size() + grown)
                .set_total_uncompressed_size(cc.uncompressed_size() + grown)
                .build()
                .map_err(parquet_err)?;
            cols.push(new);
        }
        let new: RowGroupMetaData = rg
            .clone()
            .into_builder()
            .set_column_metadata(cols)
            .set_file_offset(rg_start as i64)
            .build()
            .map_err(parquet_err)?;
        row_groups.push(new);
    }
    let md = md.into_builder().set_row_groups(row_groups).build();
    ParquetMetaDataWriter::new(&mut *out, &md)
        .with_preserve_page_index_locations(false)
        .finish()
        .map_err(parquet_err)?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_gets_a_crc_field_in_order() {
        // type=0 (i32 field 1), uncompressed 10 (field 2), compressed 7 (field 3), then
        // field 5 (a struct: num_values=3 as field 1), stop.
        let h = [
            0x15, 0x00, 0x15, 0x14, 0x15, 0x0e, 0x2c, 0x15, 0x06, 0x00, 0x00,
        ];
        let (fields, len, ty, size) = read_header(&h).unwrap();
        assert_eq!((len, ty, size), (h.len(), 0, 7));
        let out = with_crc(&h, &fields, 0xdead_beef);
        let (f2, len2, ty2, size2) = read_header(&out).unwrap();
        assert_eq!((len2, ty2, size2), (out.len(), 0, 7));
        let ids: Vec<i16> = f2.iter().map(|f| f.id).collect();
        assert_eq!(ids, [1, 2, 3, 4, 5]);
        let mut p = f2[3].value.start;
        assert_eq!(
            zigzag(uvarint(&out, &mut p).unwrap()) as i32,
            0xdead_beefu32 as i32
        );
        // Rewriting again replaces the CRC rather than adding a second.
        let again = with_crc(&out, &f2, 1);
        assert_eq!(read_header(&again).unwrap().0.len(), 5);
    }
}
