//! The trace file's schema and its storbench metadata in the Parquet footer (keys, CRC).

#[allow(unused_imports)]
use super::*;

pub(super) const KEY_PREFIX: &str = "storbench.";
pub(super) const KEY_EXTRA_PREFIX: &str = "storbench.extra.";

pub(super) fn dict_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

/// The Arrow schema of a trace file.
pub fn arrow_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new(COL_ISSUE, DataType::Int64, false),
        Field::new(COL_COMPLETE, DataType::Int64, true),
        Field::new(COL_OFFSET, DataType::Int64, false),
        Field::new(COL_LEN, DataType::Int64, false),
        Field::new(COL_OP, dict_type(), false),
        Field::new(COL_STREAM, dict_type(), true),
        Field::new(COL_DEVICE, dict_type(), true),
    ]))
}

/// Flat key/value pairs for the Parquet footer.
pub fn meta_to_kv(meta: &TraceMeta) -> Vec<(String, String)> {
    let mut kv = vec![(
        format!("{KEY_PREFIX}trace_format_version"),
        FORMAT_VERSION.to_string(),
    )];
    let mut put = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            kv.push((format!("{KEY_PREFIX}{k}"), v));
        }
    };
    put("source_format", meta.source_format.clone());
    put("source_file", meta.source_file.clone());
    put("capacity_bytes", meta.capacity_bytes.map(|v| v.to_string()));
    put(
        "logical_block_bytes",
        meta.logical_block_bytes.map(|v| v.to_string()),
    );
    put("tool_version", meta.tool_version.clone());
    for (k, v) in &meta.extra {
        kv.push((format!("{KEY_EXTRA_PREFIX}{k}"), v.clone()));
    }
    let crc = meta_crc(kv.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    kv.push((KEY_META_CRC.to_owned(), format!("{crc:08x}")));
    kv
}

/// The footer's key-value pairs are not covered by the page checksums: this key holds
/// the CRC-32 of the `storbench.` pairs before it, so a flipped byte in the metadata
/// (a capacity, a block size) is an error, not a changed figure.
pub(super) const KEY_META_CRC: &str = "storbench.meta_crc32";

/// CRC-32 of `key=value\n` of every `storbench.` pair but the checksum itself, in order.
pub(super) fn meta_crc<'a>(kv: impl IntoIterator<Item = (&'a str, &'a str)>) -> u32 {
    let mut h = crc32fast::Hasher::new();
    for (k, v) in kv {
        if k.starts_with(KEY_PREFIX) && k != KEY_META_CRC {
            h.update(k.as_bytes());
            h.update(b"=");
            h.update(v.as_bytes());
            h.update(b"\n");
        }
    }
    h.finalize()
}

/// Inverse of [`meta_to_kv`]; keys without the `storbench.` prefix are ignored.
pub fn meta_from_kv<'a>(
    path: &Path,
    kv: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<TraceMeta, TraceError> {
    let kv: Vec<(&str, &str)> = kv.into_iter().collect();
    // The checksum's own key with one byte changed: the footer is corrupt.
    if let Some((k, _)) = kv.iter().find(|(k, _)| {
        k.len() == KEY_META_CRC.len()
            && k.bytes()
                .zip(KEY_META_CRC.bytes())
                .filter(|(a, b)| a != b)
                .count()
                == 1
    }) {
        return Err(TraceError::schema(
            path,
            format!("metadata key {k:?} is a corrupt {KEY_META_CRC:?}: the file is corrupt"),
        ));
    }
    if let Some((_, want)) = kv.iter().find(|(k, _)| *k == KEY_META_CRC) {
        let got = format!("{:08x}", meta_crc(kv.iter().copied()));
        if got != *want {
            return Err(TraceError::schema(
                path,
                format!(
                    "the footer's storbench metadata does not match its checksum ({want} stored, {got} computed): the file is corrupt"
                ),
            ));
        }
    }
    let mut meta = TraceMeta::default();
    for (k, v) in kv {
        if k == KEY_META_CRC {
            continue;
        }
        if let Some(extra) = k.strip_prefix(KEY_EXTRA_PREFIX) {
            meta.extra.insert(extra.to_owned(), v.to_owned());
            continue;
        }
        let Some(key) = k.strip_prefix(KEY_PREFIX) else {
            continue;
        };
        let bad = |what: &str| TraceError::schema(path, format!("metadata `{k}`: {what}: {v:?}"));
        match key {
            "trace_format_version" => {
                let ver: u32 = v.parse().map_err(|_| bad("not an integer"))?;
                if ver > FORMAT_VERSION {
                    return Err(TraceError::schema(
                        path,
                        format!(
                            "trace format version {ver} is newer than this storbench reads \
                             ({FORMAT_VERSION}); upgrade storbench"
                        ),
                    ));
                }
            }
            "source_format" => meta.source_format = Some(v.to_owned()),
            "source_file" => meta.source_file = Some(v.to_owned()),
            "capacity_bytes" => {
                meta.capacity_bytes = Some(v.parse().map_err(|_| bad("not an integer"))?)
            }
            "logical_block_bytes" => {
                meta.logical_block_bytes = Some(v.parse().map_err(|_| bad("not an integer"))?)
            }
            "tool_version" => meta.tool_version = Some(v.to_owned()),
            _ => {
                // A key from a newer minor version: keep it so nothing is lost on rewrite.
                meta.extra.insert(format!("unknown.{key}"), v.to_owned());
            }
        }
    }
    Ok(meta)
}
