//! The trace model: one [`IoRecord`] per I/O, plus [`TraceMeta`].
//!
//! Units are last in every name (`offset_bytes`, `issue_ns`). Times are nanoseconds
//! since the start of the trace (the first issue is not required to be at 0).

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

pub use storbench_core::{DeviceId, IoRecord, Op, StreamId};

/// String interner for stream and device names: ids are dense, in first-seen order.
#[derive(Clone, Debug, Default)]
pub struct Names {
    names: Vec<String>,
    index: HashMap<String, u32>,
}

impl Names {
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.index.get(name) {
            return id;
        }
        let id = u32::try_from(self.names.len()).expect("more than 2^32 distinct names");
        self.names.push(name.to_owned());
        self.index.insert(name.to_owned(), id);
        id
    }

    pub fn get(&self, id: u32) -> Option<&str> {
        self.names.get(id as usize).map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }
}

/// Metadata of a trace, stored in the Parquet key/value metadata.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceMeta {
    /// Format the trace was imported from (`fio-iolog-v3`, `ftrace`, `synth:heavy-2011`, ...).
    pub source_format: Option<String>,
    /// File the trace was imported from.
    pub source_file: Option<String>,
    /// Capacity of the traced device, when known.
    pub capacity_bytes: Option<u64>,
    /// Logical block size of the traced device, when known.
    pub logical_block_bytes: Option<u32>,
    /// Version of the tool that wrote the trace.
    pub tool_version: Option<String>,
    /// Free key/values (import summary, synth parameters, ...).
    pub extra: BTreeMap<String, String>,
}
