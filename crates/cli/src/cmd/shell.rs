//! `storbench completions SHELL` and `storbench man`: generated from the clap command,
//! so they list exactly the flags and values the parser takes.

use super::out::outln;
use anyhow::Context;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct CompletionsArgs {
    /// The shell to write completions for (e.g. `storbench completions bash >
    /// /etc/bash_completion.d/storbench`)
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(clap::Args)]
pub struct ManArgs {
    /// Write one page per command (storbench.1, storbench-run.1, ...) into DIR;
    /// without it, print storbench.1 on stdout
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Replace existing pages storbench did not write
    #[arg(long, requires = "output")]
    pub overwrite: bool,
}

pub fn run_completions(a: CompletionsArgs, mut cmd: clap::Command) -> anyhow::Result<()> {
    let name = cmd.get_name().to_owned();
    // Into memory first: clap_complete panics when its writer fails (a closed pipe).
    let mut text = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, name, &mut text);
    Ok(super::out::write_bytes(&text)?)
}

pub fn run_man(a: ManArgs, cmd: clap::Command) -> anyhow::Result<()> {
    match a.output {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut page)
                .context("rendering the man page")?;
            Ok(super::out::write_bytes(&page)?)
        }
        Some(dir) => {
            let rule = storbench_trace::atomic::Rule::overwrite(a.overwrite);
            let pages = write_pages(&dir, cmd, &rule)?;
            outln!("{pages} man pages in {}", dir.display())?;
            Ok(())
        }
    }
}

/// Write `cmd`'s page and one per subcommand (named `storbench-SUB.1`, as git's are);
/// returns how many.
pub fn write_pages(
    dir: &Path,
    cmd: clap::Command,
    rule: &storbench_trace::atomic::Rule,
) -> anyhow::Result<usize> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut cmd = cmd;
    cmd.build();
    write_tree(dir, &cmd, "", rule)
}

fn write_tree(
    dir: &Path,
    cmd: &clap::Command,
    prefix: &str,
    rule: &storbench_trace::atomic::Rule,
) -> anyhow::Result<usize> {
    let name = if prefix.is_empty() {
        cmd.get_name().to_owned()
    } else {
        format!("{prefix}-{}", cmd.get_name())
    };
    let page = cmd
        .clone()
        .name(name.clone())
        .bin_name(name.replace('-', " "));
    let path = dir.join(format!("{name}.1"));
    let mut text = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut text)
        .with_context(|| format!("rendering {}", path.display()))?;
    storbench_trace::atomic::write_atomic_with(&path, &text, rule)
        .with_context(|| format!("writing {}", path.display()))?;
    let mut n = 1;
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        n += write_tree(dir, sub, &name, rule)?;
    }
    Ok(n)
}
