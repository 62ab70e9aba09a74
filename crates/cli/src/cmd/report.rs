//! `storbench report` and `storbench compare` (not built yet: its issue owns this file).

#[derive(clap::Args)]
pub struct Args {}

#[derive(clap::Args)]
pub struct CompareArgs {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`storbench report` is not built yet")
}

pub fn run_compare(_args: CompareArgs) -> anyhow::Result<()> {
    anyhow::bail!("`storbench compare` is not built yet")
}
