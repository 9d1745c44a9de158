//! `spinstack report [--out DIR]`: one REPORT.md and report.html over the results of
//! `spinstack reproduce` in DIR.

use std::path::PathBuf;

/// Arguments of `spinstack report`.
#[derive(clap::Args)]
pub struct Args {
    /// Directory that `spinstack reproduce` wrote.
    #[arg(long, default_value = "results")]
    out: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let order: Vec<&str> = spinstack_lab::all().iter().map(|e| e.id()).collect();
    let (markdown, html) = spinstack_lab::report::write_report(&args.out, &order)?;
    println!("Wrote {} and {}", markdown.display(), html.display());
    Ok(())
}
