//! The drive procedures (not built yet: its issue owns this file).

#[derive(clap::Args)]
pub struct ConsistencyArgs {}
#[derive(clap::Args)]
pub struct SeasonArgs {}
#[derive(clap::Args)]
pub struct TrimCheckArgs {}
#[derive(clap::Args)]
pub struct BenchArgs {}

pub fn run_consistency(_a: ConsistencyArgs) -> anyhow::Result<()> {
    anyhow::bail!("`storbench consistency` is not built yet")
}
pub fn run_season(_a: SeasonArgs) -> anyhow::Result<()> {
    anyhow::bail!("`storbench season` is not built yet")
}
pub fn run_trim_check(_a: TrimCheckArgs) -> anyhow::Result<()> {
    anyhow::bail!("`storbench trim-check` is not built yet")
}
pub fn run_bench(_a: BenchArgs) -> anyhow::Result<()> {
    anyhow::bail!("`storbench bench` is not built yet")
}
