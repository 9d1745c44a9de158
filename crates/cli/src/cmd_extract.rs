//! `spinstack extract`: track boundaries of a catalog drive (simulated) or of a real
//! block device (read-only). OWNER: extract helper.

use anyhow::{bail, Context};
use spinstack_extract::run::{extract_simulated, Method, RunOptions};
use spinstack_extract::sim_probe::Jitter;
use spinstack_extract::timing::TimingOptions;
use std::path::PathBuf;

/// Arguments of `spinstack extract`.
#[derive(clap::Args)]
pub struct Args {
    /// Catalog drive name (or a .parv / .toml path) to extract in simulation.
    #[arg(long, conflicts_with = "device")]
    disk: Option<String>,
    /// A real block device or file to probe, read-only.
    #[arg(long)]
    device: Option<PathBuf>,
    /// scsi (walk/jump, validation paper), scsi-literal (as published), zone-aware, timing.
    #[arg(long, default_value = "scsi")]
    method: String,
    /// Turn host measurement jitter off for the timing method (on by default).
    #[arg(long)]
    no_jitter: bool,
    /// Seed of the jitter.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the extracted track map to this file.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let Some(method) = Method::parse(&args.method) else {
        bail!("unknown method `{}`: use scsi, scsi-literal, zone-aware or timing", args.method);
    };
    if let Some(device) = &args.device {
        let _ = device;
        bail!("--device is not implemented yet");
    }
    let Some(disk) = &args.disk else {
        bail!("give --disk NAME (a catalog drive) or --device PATH");
    };
    let spec = spinstack_disk::catalog::resolve(disk)?;
    let options = RunOptions {
        method,
        jitter: (!args.no_jitter).then(|| Jitter::typical(args.seed)),
        timing: TimingOptions::default(),
    };
    let (report, map) = extract_simulated(&spec, &options)?;
    if let Some(path) = &args.output {
        map.write(path)
            .with_context(|| format!("cannot write the track map to {}", path.display()))?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{}: {} tracks by {}, exact: {}",
            report.drive, report.tracks, report.method, report.exact
        );
        if let Some(t) = report.translations_per_track {
            println!("  {:.3} translations per track", t);
        }
        if let Some(h) = report.simulated_hours {
            println!("  {:.3} simulated hours, {} uncertain tracks", h, report.uncertain_tracks);
        }
        if let Some(d) = &report.comparison.first_difference {
            println!("  first difference: {d}");
        }
    }
    Ok(())
}
