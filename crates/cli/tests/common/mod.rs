//! Helpers shared by the CLI end-to-end tests: run the built binary, insist on success.

use std::process::{Command, Output};

/// Runs the built `storbench` with `args` and returns what it printed.
pub fn storbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_storbench"))
        .args(args)
        .output()
        .expect("run storbench")
}

/// Asserts `out` is a success (printing both streams when not) and returns its stdout.
pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "storbench failed: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
