//! `spinstack disks`. OWNER: see the module's helper.

/// Arguments of `spinstack disks`.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`spinstack disks` is not implemented yet")
}
