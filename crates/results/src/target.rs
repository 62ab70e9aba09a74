//! How a run opens a real target (stored with every configuration, so a resume opens
//! it the same way).

/// How to open a real target (files and block devices); ignored for simulated drives.
/// Stored with the procedure's configuration, so a resume opens the same way.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RealOpen {
    /// Files: create or extend to this size.
    pub size_bytes: Option<u64>,
    /// Files: allow writing to an existing file storbench did not create.
    pub overwrite: bool,
    /// Block devices: the exact device the user agreed to destroy (`--destroy-data`).
    pub destroy_data: Option<std::path::PathBuf>,
    /// Cap on the target's buffer memory (`--buffer-memory`; default
    /// `storbench_engine::DEFAULT_BUFFER_MEMORY_BYTES`).
    #[serde(default)]
    pub buffer_memory_bytes: Option<u64>,
    /// The run writes or trims; a run that only reads needs no consent to open a
    /// block device (`run --rw randread`, a read-only trace).
    #[serde(default = "yes")]
    pub write: bool,
    /// Most I/Os in flight (`None`: the engine's default).
    #[serde(default)]
    pub max_in_flight: Option<usize>,
    /// Size of each in-flight I/O's buffer: the largest I/O (`None`: the default).
    #[serde(default)]
    pub buffer_bytes: Option<usize>,
    /// I/O backend: `auto`, `io_uring`, `io_uring-async` or `threads`.
    #[serde(default)]
    pub backend: Option<String>,
    /// Files: buffered I/O (no O_DIRECT).
    #[serde(default)]
    pub buffered: bool,
}

fn yes() -> bool {
    true
}

impl Default for RealOpen {
    /// What the drive procedures use: a target opened for writing.
    fn default() -> Self {
        RealOpen {
            size_bytes: None,
            overwrite: false,
            destroy_data: None,
            write: true,
            max_in_flight: None,
            buffer_bytes: None,
            backend: None,
            buffered: false,
            buffer_memory_bytes: None,
        }
    }
}
