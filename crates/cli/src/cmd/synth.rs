//! `storbench synth` and `storbench profiles` (not built yet: its issue owns this file).

#[derive(clap::Args)]
pub struct Args {}

#[derive(clap::Args)]
pub struct ProfilesArgs {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`storbench synth` is not built yet")
}

pub fn run_profiles(_args: ProfilesArgs) -> anyhow::Result<()> {
    anyhow::bail!("`storbench profiles` is not built yet")
}
