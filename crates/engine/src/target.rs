//! The targets the engine loop drives: the trait and its types live in
//! `storbench-core` (re-exported here), the real targets (file, block device) here.

pub mod blockdev;
pub mod file;

pub use storbench_core::target::{
    Completion, DataKind, IoRequest, Target, TargetError, TargetInfo, TargetKind,
};
