//! `dbio report`.

#[derive(clap::Args)]
pub struct Args {}

pub fn main(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`dbio report` is not built yet")
}
