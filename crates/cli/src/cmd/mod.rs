//! One module per subcommand group. Each owns its clap `Args` and `run`.

pub mod characterize;
pub mod db;
pub mod demo;
pub mod export;
pub mod import;
pub mod procedures;
pub mod record;
pub mod replay;
pub mod report;
pub mod run;
pub mod sim;
pub mod synth;

/// Exit status: 2 for user mistakes (bad arguments, bad input), 1 for everything else.
pub fn exit_code(e: &anyhow::Error) -> i32 {
    if e.chain().any(|c| c.is::<UserError>()) {
        2
    } else {
        1
    }
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
