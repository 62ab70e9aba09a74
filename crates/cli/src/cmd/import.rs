//! `storbench import` (not built yet: its issue owns this file).

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`storbench import` is not built yet")
}
