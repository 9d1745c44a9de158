//! `spinstack disks`: list the built-in drive catalog, as a table or as JSON.

use anyhow::Context;
use serde::Serialize;
use spinstack_disk::catalog;
use spinstack_disk::layout::Layout;
use spinstack_disk::spec::{DriveSpec, LayoutSpec};

/// Arguments of `spinstack disks`.
#[derive(clap::Args)]
pub struct Args {
    /// Print a JSON list of objects instead of a table.
    #[arg(long)]
    json: bool,
}

/// One catalog drive as listed. Capacity comes from the built layout (what the model
/// exports), not from the data sheet.
#[derive(Serialize)]
struct DriveRow {
    name: String,
    description: String,
    capacity_sectors: u64,
    capacity_gb: f64,
    rpm: u32,
    zones: usize,
    sectors_per_track_min: u32,
    sectors_per_track_max: u32,
    zero_latency: bool,
    /// The host link the model times, MB/s (10^6 bytes per second) for reads.
    host_link_mb_per_s: f64,
    layout: &'static str,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let rows = catalog::all()?
        .iter()
        .map(row_of)
        .collect::<anyhow::Result<Vec<_>>>()?;
    let text = if args.json {
        serde_json::to_string_pretty(&rows)? + "\n"
    } else {
        table(&rows)
    };
    write_stdout(&text)
}

/// Write to stdout; a closed pipe (`spinstack disks | head`) is not an error.
fn write_stdout(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(error).context("writing to stdout")
        }
        _ => Ok(()),
    }
}

fn row_of(spec: &DriveSpec) -> anyhow::Result<DriveRow> {
    let layout = Layout::new(&spec.layout)
        .with_context(|| format!("catalog drive `{}`: layout does not build", spec.name))?;
    let capacity = layout.capacity();
    let (zones, track_sizes): (usize, Vec<u32>) = match &spec.layout {
        LayoutSpec::Zoned(zoned) => (
            zoned.zones.len(),
            zoned
                .zones
                .iter()
                .map(|zone| zone.sectors_per_track)
                .collect(),
        ),
        LayoutSpec::Serpentine(serpentine) => (
            serpentine.zones.len(),
            serpentine
                .zones
                .iter()
                .flat_map(|zone| zone.sectors_per_track_by_surface.iter().copied())
                .collect(),
        ),
    };
    Ok(DriveRow {
        name: spec.name.clone(),
        description: spec.description.clone(),
        capacity_sectors: capacity.0,
        capacity_gb: capacity.bytes() as f64 / 1e9,
        rpm: spec.mechanics.rpm,
        zones,
        sectors_per_track_min: track_sizes.iter().copied().min().unwrap_or(0),
        sectors_per_track_max: track_sizes.iter().copied().max().unwrap_or(0),
        zero_latency: spec.firmware.zero_latency_reads(),
        host_link_mb_per_s: spec.firmware.host_link_mb_per_s(),
        layout: match spec.layout {
            LayoutSpec::Zoned(_) => "zoned",
            LayoutSpec::Serpentine(_) => "serpentine",
        },
    })
}

fn table(rows: &[DriveRow]) -> String {
    use std::fmt::Write;
    let name_width = rows
        .iter()
        .map(|row| row.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = writeln!(
        out,
        "{:<name_width$}  {:>8}  {:>11}  {:>5}  {:>5}  {:>10}  {:>4}  {:>6}  {:<10}  description",
        "name", "GB", "sectors", "RPM", "zones", "spt", "ZL", "link", "layout"
    );
    for row in rows {
        let spt = format!(
            "{}..{}",
            row.sectors_per_track_min, row.sectors_per_track_max
        );
        let _ = writeln!(
            out,
            "{:<name_width$}  {:>8.2}  {:>11}  {:>5}  {:>5}  {:>10}  {:>4}  {:>6.1}  {:<10}  {}",
            row.name,
            row.capacity_gb,
            row.capacity_sectors,
            row.rpm,
            row.zones,
            spt,
            if row.zero_latency { "yes" } else { "no" },
            row.host_link_mb_per_s,
            row.layout,
            row.description
        );
    }
    out.push_str("(GB = 10^9 bytes; spt = sectors per track, smallest..largest; ");
    out.push_str("ZL = zero-latency reads in the model;\n");
    out.push_str(
        " link = the host link the model times, MB/s: the one the drive's parameters were\n",
    );
    out.push_str(
        " extracted on or its data sheet's; NAME@80MB/s attaches the drive through another)\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalog_drive_gets_a_consistent_row() {
        // The listing is built from the layout: capacities match the layout's, track-size
        // ranges are ordered, and the JSON carries every listed field.
        for spec in catalog::all().expect("catalog parses") {
            let row = row_of(&spec).expect("row");
            let layout = Layout::new(&spec.layout).expect("layout");
            assert_eq!(row.capacity_sectors, layout.capacity().0, "{}", row.name);
            assert!(row.sectors_per_track_min > 0, "{}", row.name);
            assert!(
                row.sectors_per_track_min <= row.sectors_per_track_max,
                "{}",
                row.name
            );
            let json = serde_json::to_value(&row).expect("json");
            for field in [
                "name",
                "description",
                "capacity_sectors",
                "capacity_gb",
                "rpm",
                "zones",
                "sectors_per_track_min",
                "sectors_per_track_max",
                "zero_latency",
                "host_link_mb_per_s",
                "layout",
            ] {
                assert!(json.get(field).is_some(), "{}: no `{field}`", row.name);
            }
        }
    }
}
