//! `spinstack extract`: track boundaries of a catalog drive (simulated, checked
//! against the model's own map) or of a real block device (read-only); exporters
//! for an extracted map; the `boundary-test` and `zero-latency-test` experiments.

use anyhow::{bail, Context};
use spinstack_extract::device::DeviceProbe;
use spinstack_extract::experiments::{write_boundary_test, write_zero_latency_test};
use spinstack_extract::export::{bad_blocks_list, summarize, summary_markdown};
use spinstack_extract::probe::Probe;
use spinstack_extract::run::{extract_device, extract_simulated, Method, RunOptions};
use spinstack_extract::sim_probe::Jitter;
use spinstack_extract::timing::{max_regions, TimingOptions};
use spinstack_sim::units::Sectors;
use spinstack_trackmap::TrackMap;
use std::path::{Path, PathBuf};

/// Arguments of `spinstack extract`.
#[derive(clap::Args)]
pub struct Args {
    /// Catalog drive name (or a .parv / .toml path, either optionally with its host
    /// link, atlas10k@80MB/s) to extract in simulation.
    #[arg(long, conflicts_with_all = ["device", "map"])]
    disk: Option<String>,
    /// A real block device or file to probe, read-only (never written).
    #[arg(long, conflicts_with = "map")]
    device: Option<PathBuf>,
    /// An existing track map to export (with --bad-blocks or --summary).
    #[arg(long)]
    map: Option<PathBuf>,
    /// scsi (walk/jump, validation paper), scsi-literal (walk on every size change,
    /// as published), zone-aware (DIXtrac-style), timing (read times only).
    #[arg(long, default_value = "scsi")]
    method: String,
    /// Turn host measurement jitter off for the timing method (on by default).
    #[arg(long)]
    no_jitter: bool,
    /// Seed of the jitter and of the experiments.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Interleaved extraction cursors for the timing method (cache defeat); up
    /// to 16 when absent, at most one per 4096 sectors of the disk.
    #[arg(long)]
    regions: Option<usize>,
    /// Write the extracted track map to this file.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Write the mke2fs bad-blocks list for this file-system block size (bytes).
    #[arg(long, value_name = "BLOCK_BYTES")]
    bad_blocks: Option<u64>,
    /// Where the bad-blocks list goes (default: standard output).
    #[arg(long, requires = "bad_blocks")]
    bad_blocks_out: Option<PathBuf>,
    /// Print the map summary (zones, track sizes, serpentine, excluded blocks).
    #[arg(long)]
    summary: bool,
    /// Run a verification experiment instead: boundary-test or zero-latency-test.
    #[arg(long)]
    experiment: Option<String>,
    /// Directory the experiment writes into (DIR/ID/...).
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// Reads (boundary-test) or pairs (zero-latency-test) per drive.
    #[arg(long, default_value_t = 2000)]
    count: usize,
    /// Print reports as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(id) = &args.experiment {
        return run_experiment(&args, id);
    }
    let Some(method) = Method::parse(&args.method) else {
        bail!(
            "unknown method `{}`: use scsi, scsi-literal, zone-aware or timing",
            args.method
        );
    };
    anyhow::ensure!(
        args.regions != Some(0),
        "--regions must be at least 1 (the timing method's extraction cursors)"
    );
    // Said, not ignored: only extraction by read timings has cursors to spread.
    let times_reads = args.device.is_some() || (args.disk.is_some() && method == Method::Timing);
    anyhow::ensure!(
        args.regions.is_none() || (args.map.is_none() && times_reads),
        "--regions applies to extraction by read timings (--method timing, or --device); \
         the SCSI methods translate addresses and --map only exports, so nothing would use it"
    );
    // Checked before an extraction that may take minutes, not after it.
    if let Some(block_bytes) = args.bad_blocks {
        anyhow::ensure!(
            block_bytes > 0 && block_bytes % 512 == 0,
            "--bad-blocks {block_bytes}: a file-system block size in bytes, a positive \
             multiple of 512"
        );
    }
    let timing = TimingOptions {
        regions: args.regions.unwrap_or(TimingOptions::default().regions),
        ..TimingOptions::default()
    };
    let map = if let Some(path) = &args.map {
        Some(TrackMap::read(path)?)
    } else if let Some(device) = &args.device {
        if args.regions.is_some() {
            let capacity = DeviceProbe::open(device)?.read_capacity()?;
            check_regions(args.regions, capacity, &device.display().to_string())?;
        }
        let (report, map) = extract_device(device, &timing)?;
        print_report(&report, &report.message, args.json)?;
        // No tracks is a finding; asked-for exports that cannot be written are an error.
        let exports_asked = args.output.is_some() || args.bad_blocks.is_some() || args.summary;
        if map.is_none() && exports_asked {
            bail!(
                "{}: nothing to export (--output, --bad-blocks or --summary): no track map",
                device.display()
            );
        }
        map
    } else if let Some(disk) = &args.disk {
        let spec = crate::load_drive(disk)?;
        if method == Method::Timing {
            let capacity = spinstack_disk::layout::Layout::new(&spec.layout)?.capacity();
            check_regions(args.regions, capacity, &spec.name)?;
        }
        let options = RunOptions {
            method,
            jitter: (!args.no_jitter).then(|| Jitter::typical(args.seed)),
            timing,
        };
        let (report, map) = extract_simulated(&spec, &options)?;
        let text = format!(
            "{}: {} tracks by {}, exact: {}{}",
            report.drive,
            report.tracks,
            report.method,
            report.exact,
            report
                .translations_per_track
                .map(|t| format!(", {t:.3} translations per track"))
                .or(report.simulated_hours.map(|h| format!(
                    ", {h:.3} simulated hours, {} uncertain tracks",
                    report.uncertain_tracks
                )))
                .unwrap_or_default()
        );
        print_report(&report, &text, args.json)?;
        Some(map)
    } else {
        bail!("give --disk NAME (a catalog drive), --device PATH, --map FILE or --experiment ID");
    };
    if let Some(map) = map {
        export(&args, &map)?;
    }
    Ok(())
}

fn print_report<T: serde::Serialize>(report: &T, text: &str, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        println!("{text}");
    }
    Ok(())
}

fn export(args: &Args, map: &TrackMap) -> anyhow::Result<()> {
    if let Some(path) = &args.output {
        map.write(path)
            .with_context(|| format!("cannot write the track map to {}", path.display()))?;
    }
    if let Some(block_bytes) = args.bad_blocks {
        let list = bad_blocks_list(map, block_bytes).map_err(anyhow::Error::msg)?;
        match &args.bad_blocks_out {
            Some(path) => write_text(path, &list)?,
            None => {
                use std::io::Write as _;
                // A closed pipe (`| head`) ends the output quietly.
                let _ = std::io::stdout().lock().write_all(list.as_bytes());
            }
        }
    }
    if args.summary {
        let summary = summarize(map);
        if args.json {
            println!("{}", serde_json::to_string_pretty(&summary)?);
        } else {
            print!("{}", summary_markdown(&summary));
        }
    }
    Ok(())
}

/// An explicit `--regions` is refused past the disk's bound rather than
/// clamped to it (inputs finding 25): a run asked for N regions must not use
/// fewer without a word. Absent, the default means "up to 16".
fn check_regions(regions: Option<usize>, capacity: Sectors, disk: &str) -> anyhow::Result<()> {
    let most = max_regions(capacity);
    match regions {
        Some(regions) if regions as u64 > most => bail!(
            "--regions {regions} is out of range: the timing method splits {disk}'s {capacity} \
             into at most {most} regions (one per 4096-sector stretch)"
        ),
        _ => Ok(()),
    }
}

fn write_text(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

fn run_experiment(args: &Args, id: &str) -> anyhow::Result<()> {
    let directory = args.out.join(id);
    let summary = match id {
        "boundary-test" => {
            let spec = crate::load_drive(args.disk.as_deref().unwrap_or("maxtor10kv-czk"))?;
            write_boundary_test(&spec, args.count, args.seed, &directory)
        }
        "zero-latency-test" => {
            let names = match &args.disk {
                Some(name) => vec![name.as_str()],
                None => vec!["maxtor10kv-czk", "cheetahx15", "map3367nc"],
            };
            let specs = names
                .iter()
                .map(|n| crate::load_drive(n))
                .collect::<Result<Vec<_>, _>>()?;
            write_zero_latency_test(&specs, args.count, args.seed, &directory)
        }
        other => bail!("unknown experiment `{other}`: use boundary-test or zero-latency-test"),
    }
    .map_err(anyhow::Error::msg)?;
    println!("{summary}");
    println!("(written to {})", directory.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct ExtractCommandLine {
        #[command(flatten)]
        args: Args,
    }

    /// A device with no track structure and an export asked for is an error (before,
    /// `--device EMPTY --output MAP` printed the finding, wrote no map and exited 0);
    /// the finding alone is not.
    #[test]
    fn exports_from_a_device_without_tracks_are_an_error() {
        let dir = std::env::temp_dir().join(format!("spinstack-extract-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let device = dir.join("empty.img");
        std::fs::write(&device, b"").unwrap();
        let path = device.to_str().unwrap();
        let map = dir.join("map.txt");
        let words = [
            "extract",
            "--device",
            path,
            "--output",
            map.to_str().unwrap(),
        ];
        let error = run(ExtractCommandLine::parse_from(words).args)
            .unwrap_err()
            .to_string();
        assert!(error.contains("nothing to export"), "{error}");
        assert!(!map.exists());
        run(ExtractCommandLine::parse_from(["extract", "--device", path]).args).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Options that were clamped or checked only after a whole extraction are
    /// refused first, naming the option: --regions 0 (was silently 1) and a
    /// --bad-blocks size that is not a multiple of 512 (was refused after the
    /// extraction had run).
    #[test]
    fn refuses_bad_options_before_extracting() {
        for (words, says) in [
            (
                &["extract", "--disk", "atlas10k", "--regions", "0"][..],
                "--regions must be at least 1",
            ),
            (
                &["extract", "--disk", "atlas10k", "--bad-blocks", "3000"][..],
                "--bad-blocks 3000",
            ),
            // Was silently ignored (noticed 2026-11-28 with inputs finding 25).
            (
                &[
                    "extract",
                    "--disk",
                    "atlas10k",
                    "--method",
                    "scsi",
                    "--regions",
                    "4",
                ][..],
                "--regions applies to extraction by read timings",
            ),
            (
                &["extract", "--disk", "atlas10k", "--bad-blocks", "0"][..],
                "--bad-blocks 0",
            ),
        ] {
            let args = ExtractCommandLine::parse_from(words).args;
            let error = run(args).unwrap_err().to_string();
            assert!(error.contains(says), "{words:?}: {error}");
        }
    }

    /// Guards inputs finding 25: `--regions 18446744073709551615` was accepted
    /// and silently clamped to one region per 4096-sector stretch. Proves a
    /// count past that bound is refused before any timed read, naming the
    /// option, the value and the bound (`max_regions`, the one the cursors are
    /// made with). On the old code the run went ahead and returned Ok. On a
    /// small device the default stays "up to 16" and runs, while an explicit
    /// count past the device's bound is refused the same way.
    #[test]
    fn refuses_more_regions_than_the_disk_has_stretches() {
        let spec = crate::load_drive("atlas10k").unwrap();
        let capacity = spinstack_disk::layout::Layout::new(&spec.layout)
            .unwrap()
            .capacity();
        let most = spinstack_extract::timing::max_regions(capacity);
        for regions in [u64::MAX, most + 1] {
            let words = ["extract", "--disk", "atlas10k", "--method", "timing"];
            let regions_text = regions.to_string();
            let args = ExtractCommandLine::parse_from(
                words.iter().copied().chain(["--regions", &regions_text]),
            )
            .args;
            let error = run(args).unwrap_err().to_string();
            assert!(
                error.contains(&format!("--regions {regions} is out of range"))
                    && error.contains(&format!(
                        "atlas10k's {capacity} into at most {most} regions"
                    )),
                "{regions}: {error}"
            );
        }
        let dir = std::env::temp_dir().join(format!("spinstack-regions-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let device = dir.join("small.img");
        std::fs::write(&device, vec![0u8; 1 << 20]).unwrap();
        let path = device.to_str().unwrap();
        let words = ["extract", "--device", path];
        run(ExtractCommandLine::parse_from(words).args).unwrap();
        let args = ExtractCommandLine::parse_from(words.iter().copied().chain(["--regions", "2"]));
        let error = run(args.args).unwrap_err().to_string();
        assert!(error.contains("--regions 2 is out of range"), "{error}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
