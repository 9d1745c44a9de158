//! `spinstack simulate`. OWNER: see the module's helper.

/// Arguments of `spinstack simulate`.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`spinstack simulate` is not implemented yet")
}
