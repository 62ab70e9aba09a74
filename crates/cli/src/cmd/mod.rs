//! One module per subcommand group. Each owns its clap `Args` and `run`.

pub mod characterize;
pub mod db;
pub mod demo;
pub mod drive;
pub mod export;
pub mod import;
pub mod out;
pub mod procedures;
pub mod record;
pub mod replay;
pub mod report;
pub mod run;
pub mod shell;
pub mod sim;
pub mod sweep;
pub mod synth;
pub mod twin;
pub mod values;

/// Exit status: 2 for user mistakes (bad arguments, bad input, an output refused by
/// `storbench_trace::atomic`), 1 for everything else.
pub fn exit_code(e: &anyhow::Error) -> i32 {
    if e.chain().any(|c| c.is::<UserError>()) || refused_output(e).is_some() {
        2
    } else {
        1
    }
}

/// An I/O error that says the path given is wrong (missing, not a directory, not
/// allowed), the user's to fix; any other (a full disk, a failing device) is a failure.
pub fn path_mistake(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        NotFound | PermissionDenied | NotADirectory | IsADirectory | AlreadyExists
    )
}

/// The output refusal (a block device, a link, an input, a file of the user's) behind
/// `e`, wherever a writer wrapped it.
fn refused_output(e: &anyhow::Error) -> Option<&storbench_trace::atomic::Refusal> {
    e.chain()
        .find_map(|c| storbench_trace::atomic::find_refusal(c))
}

/// The error as one line per cause, `a: b: c`, skipping a cause whose text the message
/// already carries: most of our error types print their source themselves (so a message
/// reads whole on its own), and anyhow's `{:#}` would print it a second time. A
/// refused output is said alone: its message names the path, its hint what to do.
pub fn render(e: &anyhow::Error) -> String {
    if let Some(r) = refused_output(e) {
        return r.to_string();
    }
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// A user mistake, with a hint saying what to do.
#[derive(Debug)]
pub struct UserError {
    pub message: String,
    pub hint: Option<String>,
}

impl std::fmt::Display for UserError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if let Some(h) = &self.hint {
            write!(f, "\n  hint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for UserError {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Like our error types: the message includes the source, which is also `source()`.
    #[derive(Debug)]
    struct Outer {
        path: String,
        source: std::io::Error,
    }

    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{}: parquet: {}", self.path, self.source)
        }
    }

    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.source)
        }
    }

    #[test]
    fn render_prints_each_cause_once() {
        let inner = std::io::Error::other("corrupt footer");
        let e = anyhow::Error::new(Outer {
            path: "t.csv".into(),
            source: inner,
        })
        .context("phase replay");
        // anyhow's alternate form repeats the source the outer message already holds.
        assert_eq!(
            format!("{e:#}"),
            "phase replay: t.csv: parquet: corrupt footer: corrupt footer"
        );
        assert_eq!(render(&e), "phase replay: t.csv: parquet: corrupt footer");
        let plain = anyhow::anyhow!("disk full").context("writing series.parquet");
        assert_eq!(render(&plain), "writing series.parquet: disk full");
    }

    #[test]
    fn user_errors_exit_2_and_keep_their_hint() {
        let e = anyhow::Error::new(UserError {
            message: "bad".into(),
            hint: Some("do this".into()),
        })
        .context("bench");
        assert_eq!(exit_code(&e), 2);
        assert_eq!(render(&e), "bench: bad\n  hint: do this");
        assert_eq!(exit_code(&anyhow::anyhow!("io")), 1);
    }
}
