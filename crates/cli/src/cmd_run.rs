//! `dbio run`.

#[derive(clap::Args)]
pub struct Args {}

pub fn main(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`dbio run` is not built yet")
}
