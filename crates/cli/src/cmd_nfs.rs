//! `dbio nfs`.

#[derive(clap::Args)]
pub struct Args {}

pub fn main(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`dbio nfs` is not built yet")
}
