//! Why an output was not written: a user mistake, carried inside the `std::io::Error`
//! every writer already returns (so no caller can turn it into a write), and found
//! again by [`refusal`] where errors become messages and exit codes.

use std::path::{Path, PathBuf};

/// An output storbench refused to write, and why.
#[derive(Debug)]
pub struct Refusal {
    path: PathBuf,
    why: Why,
}

/// The reasons, each a rule of the module doc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// A block device: never an output.
    BlockDevice,
    /// A symbolic link (to this target): never written through.
    Symlink(PathBuf),
    /// One of the command's inputs.
    Input,
    /// A regular file storbench did not write, and no `--overwrite`.
    NotOurs,
    /// A regular file that storbench would write into in place, with other names
    /// (hard links) it did not make.
    HardLinked,
    /// Something else than a regular file where one is written (a directory, a
    /// socket; in a run directory a device or FIFO too).
    NotAFile(&'static str),
    /// A character device that is not a terminal or `/dev/null` (SCSI generic, tape,
    /// MTD flash, NVMe generic, `/dev/mem`): bytes written there are commands or data.
    CharDevice,
    /// The file at the path changed while the output was being written.
    Changed,
}

impl Refusal {
    pub fn new(path: &Path, why: Why) -> Refusal {
        Refusal {
            path: path.to_path_buf(),
            why,
        }
    }

    /// The refusal as the `std::io::Error` writers return.
    pub fn into_io(self) -> std::io::Error {
        let kind = match self.why {
            Why::NotOurs | Why::Changed => std::io::ErrorKind::AlreadyExists,
            _ => std::io::ErrorKind::InvalidInput,
        };
        std::io::Error::new(kind, self)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn why(&self) -> &Why {
        &self.why
    }

    /// What was refused, naming the path.
    pub fn message(&self) -> String {
        let p = self.path.display();
        match &self.why {
            Why::BlockDevice => format!(
                "{p} is a block device: storbench never writes an output (a trace, a log, a report, a catalogue) into a device"
            ),
            Why::Symlink(to) => format!(
                "{p} is a symbolic link (to {}): storbench does not write through links",
                to.display()
            ),
            Why::Input => format!(
                "{p} is one of this command's inputs: writing it would replace what the command reads"
            ),
            Why::NotOurs => format!("{p} exists and was not written by storbench"),
            Why::HardLinked => format!(
                "{p} has other names (hard links): writing it in place would change those files too"
            ),
            Why::NotAFile(kind) => format!("{p} is a {kind}, not a regular file"),
            Why::CharDevice => format!(
                "{p} is a character device that is not a terminal or /dev/null: storbench writes no output into a device"
            ),
            Why::Changed => format!(
                "{p} was replaced by another file while storbench wrote it: that file was kept"
            ),
        }
    }

    /// What to do instead.
    pub fn hint(&self) -> &'static str {
        match &self.why {
            Why::BlockDevice => {
                "name a file; a device is only ever a target (`--target`, with `--destroy-data`)"
            }
            Why::Symlink(_) => "remove the link, or name the file it points at",
            Why::Input => "write the output to another path",
            Why::NotOurs => "choose another path, or pass --overwrite to replace it",
            Why::HardLinked => "remove the extra names (or the file), then run again",
            Why::NotAFile(_) => "name a file",
            Why::CharDevice => "name a file, a pipe or a terminal",
            Why::Changed => "run again, or choose another path",
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}\n  hint: {}", self.message(), self.hint())
    }
}

impl std::error::Error for Refusal {}

/// The refusal inside `e`, if `e` is one.
pub fn refusal(e: &std::io::Error) -> Option<&Refusal> {
    e.get_ref()?.downcast_ref::<Refusal>()
}

/// The refusal anywhere in `e`'s chain of sources (each `std::io::Error` looked into).
pub fn find_refusal<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a Refusal> {
    let mut cur = Some(e);
    while let Some(c) = cur {
        if let Some(r) = c.downcast_ref::<Refusal>() {
            return Some(r);
        }
        if let Some(r) = c.downcast_ref::<std::io::Error>().and_then(refusal) {
            return Some(r);
        }
        cur = c.source();
    }
    None
}
