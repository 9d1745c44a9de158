//! `spinstack validate`. OWNER: see the module's helper.

/// Arguments of `spinstack validate`.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`spinstack validate` is not implemented yet")
}
