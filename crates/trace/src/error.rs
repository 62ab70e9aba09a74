//! [`TraceError`]: every error of this crate names the file it is about, and for text
//! formats also the line (1-based) and the field.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// Opening, reading or writing a file failed.
    #[error("{}: {op}: {source}", path.display())]
    Io {
        path: PathBuf,
        /// What we were doing ("open", "create", "read", "write").
        op: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// The Parquet library failed (corrupt file, not Parquet, ...).
    #[error("{}: parquet: {source}", path.display())]
    Parquet {
        path: PathBuf,
        #[source]
        source: parquet::errors::ParquetError,
    },
    /// The Arrow layer failed while building or reading a batch.
    #[error("{}: arrow: {source}", path.display())]
    Arrow {
        path: PathBuf,
        #[source]
        source: arrow_schema::ArrowError,
    },
    /// A Parquet file that is not a storbench trace (missing column, wrong type, bad value).
    #[error("{}: not a storbench trace: {message}", path.display())]
    Schema { path: PathBuf, message: String },
    /// A malformed line of a text trace.
    #[error("{}:{line}: field `{field}`: {message}", path.display())]
    Parse {
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        field: &'static str,
        message: String,
    },
    /// The content could not be recognised as any known format (or not the one asked for).
    #[error("{}: {message}", path.display())]
    Format { path: PathBuf, message: String },
    /// An input that is not text to import as it is (an archive, a Parquet trace, other
    /// binary data, a truncated download, a tar without the member asked for): what it
    /// is, and what to do about it.
    #[error("{}: {message}", path.display())]
    Input {
        path: PathBuf,
        message: String,
        /// What to do (shown as the command's hint).
        hint: String,
    },
    /// A Parquet trace whose rows are not in issue order (written by another tool):
    /// measured or replayed as it is, every figure would be wrong.
    #[error(
        "{}: row {row}: issue_ns {issue_ns} is before the previous row's {previous_ns}: the rows are not in issue order",
        path.display()
    )]
    Unsorted {
        path: PathBuf,
        /// 0-based row.
        row: u64,
        issue_ns: u64,
        previous_ns: u64,
    },
    /// A record the store refuses (e.g. a time or offset beyond i64::MAX).
    #[error("{}: invalid record: {message}", path.display())]
    InvalidRecord { path: PathBuf, message: String },
}

impl TraceError {
    pub(crate) fn io(path: &std::path::Path, op: &'static str, source: std::io::Error) -> Self {
        TraceError::Io {
            path: path.to_path_buf(),
            op,
            source,
        }
    }

    pub(crate) fn parquet(path: &std::path::Path, source: parquet::errors::ParquetError) -> Self {
        TraceError::Parquet {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn arrow(path: &std::path::Path, source: arrow_schema::ArrowError) -> Self {
        TraceError::Arrow {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn schema(path: &std::path::Path, message: impl Into<String>) -> Self {
        TraceError::Schema {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }

    /// The file the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            TraceError::Io { path, .. }
            | TraceError::Parquet { path, .. }
            | TraceError::Arrow { path, .. }
            | TraceError::Schema { path, .. }
            | TraceError::Parse { path, .. }
            | TraceError::Format { path, .. }
            | TraceError::Input { path, .. }
            | TraceError::Unsorted { path, .. }
            | TraceError::InvalidRecord { path, .. } => path,
        }
    }

    /// A read of `path` failed: a decompressor's error (a truncated or corrupt download)
    /// is the input's fault and says what to do; any other is an I/O failure.
    pub(crate) fn read(path: &std::path::Path, source: std::io::Error) -> Self {
        let corrupt = source
            .get_ref()
            .and_then(|e| e.downcast_ref::<crate::formats::input::Corrupt>());
        match corrupt {
            Some(c) => TraceError::Input {
                path: path.to_path_buf(),
                message: c.to_string(),
                hint: c.hint(),
            },
            None => TraceError::io(path, "read", source),
        }
    }

    /// What to do about this error, when the error knows better than its caller.
    pub fn hint(&self) -> Option<&str> {
        match self {
            TraceError::Input { hint, .. } => Some(hint),
            TraceError::Unsorted { .. } => Some(
                "write the trace in issue order (pandas: df.sort_values(\"issue_ns\", kind=\"stable\")); \
                 `storbench characterize` sorts such a trace itself",
            ),
            _ => None,
        }
    }

    /// The line number of a parse error, if this is one.
    pub fn line(&self) -> Option<u64> {
        match self {
            TraceError::Parse { line, .. } => Some(*line),
            _ => None,
        }
    }
}
