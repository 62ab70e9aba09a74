//! Standard output and standard error without panics.
//!
//! `println!` panics when standard output is a closed pipe (`storbench profiles | head
//! -1`, issue 30) or a full disk. [`outln!`] and [`out!`] return the failure as a
//! [`StdoutError`] instead: `main` ends quietly with status 0 on a closed pipe (the
//! reader took what it wanted) and fails with status 1 on any other. [`errln!`] writes
//! diagnostics to standard error and drops a failure: a line nobody can read must not
//! stop a run that is writing a drive.

use std::io::Write;

/// Writing standard output failed.
#[derive(Debug)]
pub struct StdoutError(pub std::io::Error);

impl std::fmt::Display for StdoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "writing to standard output: {}", self.0)
    }
}

impl std::error::Error for StdoutError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

impl StdoutError {
    /// The reader closed the pipe: nothing more is wanted, and nothing failed.
    pub fn is_closed_pipe(&self) -> bool {
        self.0.kind() == std::io::ErrorKind::BrokenPipe
    }
}

/// `args` on standard output, flushed (so a failure is seen here, not lost at exit).
pub fn write(args: std::fmt::Arguments<'_>) -> Result<(), StdoutError> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.flush())
        .map_err(StdoutError)
}

/// `bytes` on standard output, flushed.
pub fn write_bytes(bytes: &[u8]) -> Result<(), StdoutError> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(StdoutError)
}

/// `args` on standard error; a failure to write it is dropped.
pub fn note(args: std::fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// The error ends the command because its standard output was closed.
pub fn closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<StdoutError>()
            .is_some_and(StdoutError::is_closed_pipe)
    })
}

/// `println!` that returns a [`StdoutError`] instead of panicking.
macro_rules! outln {
    () => {
        $crate::cmd::out::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cmd::out::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` that returns a [`StdoutError`] instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cmd::out::write(format_args!($($arg)*))
    };
}

/// `eprintln!` that never panics (a failure to write is dropped).
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::cmd::out::note(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {errln, out, outln};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_is_told_from_other_failures() {
        let pipe = anyhow::Error::new(StdoutError(std::io::ErrorKind::BrokenPipe.into()))
            .context("printing the profiles");
        assert!(closed_pipe(&pipe));
        let full = anyhow::Error::new(StdoutError(std::io::Error::from_raw_os_error(28)));
        assert!(!closed_pipe(&full));
        assert_eq!(super::super::exit_code(&full), 1);
        assert!(full.to_string().starts_with("writing to standard output: "));
    }
}
