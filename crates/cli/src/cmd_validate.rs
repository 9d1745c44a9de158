//! `spinstack validate`: replay DiskSim validation traces and print the demerit.

use anyhow::Context;
use spinstack_disk::validate::{disksim_demerit_ms, replay, ValidateReport};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `spinstack validate`.
#[derive(clap::Args)]
pub struct Args {
    /// Drive: a DiskSim `.parv` path or a catalog name (omit with --all).
    #[arg(required_unless_present = "all")]
    drive: Option<String>,
    /// DiskSim validate trace (`R|W tag blkno bcount service_us think_us`).
    #[arg(required_unless_present = "all")]
    trace: Option<PathBuf>,
    /// Run every drive of a folder laid out as params/NAME.parv + traces/NAME.trace.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["drive", "trace"])]
    all: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Also print the first N requests: measured and simulated response, breakdown.
    #[arg(long, value_name = "N", default_value_t = 0)]
    show: usize,
    /// Write every request as CSV (operation, lbn, sectors, simulated ms, cache hit).
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(dir) = &args.all {
        return run_all(dir, args.json);
    }
    let (Some(drive), Some(trace)) = (&args.drive, &args.trace) else {
        anyhow::bail!("give a drive and a trace, or --all DIR");
    };
    let report = run_one(drive, trace)?;
    if let Some(path) = &args.csv {
        let mut out = String::from("operation,lbn,sectors,simulated_ms,cache_hit\n");
        for c in &report.completions {
            out += &format!(
                "{:?},{},{},{:.6},{}\n",
                c.request.operation,
                c.request.lbn.0,
                c.request.sectors.0,
                c.response_time().as_ms_f64(),
                c.cache_hit()
            );
        }
        std::fs::write(path, out).with_context(|| format!("writing {}", path.display()))?;
    }
    for c in report.completions.iter().take(args.show) {
        let b = &c.breakdown();
        println!(
            "#{:<5} {:?} {:>9} +{:<4} sim {:>10.6} ms  hit {:<5} ovh {:.3} seek {:.3} lat {:.3} hsw {:.3} media {:.3} bus {:.3}",
            c.request.id.0 + 1,
            c.request.operation,
            c.request.lbn.0,
            c.request.sectors.0,
            c.response_time().as_ms_f64(),
            c.cache_hit(),
            b.overhead.as_ms_f64(),
            b.seek.as_ms_f64(),
            b.rotational_latency.as_ms_f64(),
            b.head_switch.as_ms_f64(),
            b.media_transfer.as_ms_f64(),
            b.bus_transfer.as_ms_f64(),
        );
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{}: {} requests, demerit {:.4} ms, mean measured {:.3} ms, mean simulated {:.3} ms",
            report.drive,
            report.requests,
            report.demerit_ms,
            report.mean_measured_ms,
            report.mean_simulated_ms
        );
    }
    Ok(())
}

fn run_one(drive: &str, trace: &Path) -> anyhow::Result<ValidateReport> {
    let spec = crate::load_drive(drive).with_context(|| format!("loading drive {drive}"))?;
    let records = spinstack_sim::trace::read_validate_trace(trace)
        .with_context(|| format!("reading trace {}", trace.display()))?;
    let mut report = replay(&spec, &records)
        .with_context(|| format!("replaying {} on {}", trace.display(), spec.name))?;
    if let Some(stem) = Path::new(drive).file_stem().and_then(|s| s.to_str()) {
        if drive.ends_with(".parv") {
            report.drive = stem.to_string();
        }
    }
    Ok(report)
}

/// One row of the `--all` table.
#[derive(serde::Serialize)]
struct Row {
    drive: String,
    requests: Option<usize>,
    demerit_ms: Option<f64>,
    mean_measured_ms: Option<f64>,
    mean_simulated_ms: Option<f64>,
    disksim_demerit_ms: Option<f64>,
    error: Option<String>,
}

fn run_all(dir: &Path, json: bool) -> anyhow::Result<()> {
    let params = dir.join("params");
    let traces = dir.join("traces");
    let mut names: Vec<String> = std::fs::read_dir(&traces)
        .with_context(|| format!("listing {}", traces.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let p = e.path();
            (p.extension()? == "trace").then(|| p.file_stem()?.to_str().map(String::from))?
        })
        .collect();
    names.sort();
    anyhow::ensure!(
        !names.is_empty(),
        "{}: no NAME.trace files: nothing to validate",
        traces.display()
    );
    let rows: Vec<Row> = names
        .iter()
        .map(|name| {
            let parv = params.join(format!("{name}.parv"));
            let trace = traces.join(format!("{name}.trace"));
            let result = run_one(&parv.to_string_lossy(), &trace);
            let report = result.as_ref().ok();
            Row {
                drive: name.clone(),
                requests: report.map(|r| r.requests),
                demerit_ms: report.map(|r| r.demerit_ms),
                mean_measured_ms: report.map(|r| r.mean_measured_ms),
                mean_simulated_ms: report.map(|r| r.mean_simulated_ms),
                disksim_demerit_ms: disksim_demerit_ms(name),
                error: result.err().map(|e| crate::error_text(&e)),
            }
        })
        .collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print_table(&rows)?;
    }
    // The table is printed whole, then a failed row fails the command, so a script
    // (or CI) cannot take a broken drive for a validated one.
    let failed: Vec<&str> = rows
        .iter()
        .filter(|row| row.error.is_some())
        .map(|row| row.drive.as_str())
        .collect();
    anyhow::ensure!(
        failed.is_empty(),
        "{} of {} drives could not be replayed: {} (see the table)",
        failed.len(),
        rows.len(),
        failed.join(", ")
    );
    Ok(())
}

fn print_table(rows: &[Row]) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:<12} {:>8} {:>11} {:>13} {:>12} {:>14}  verdict",
        "drive", "requests", "demerit ms", "DiskSim ms", "mean meas.", "mean sim."
    )?;
    for row in rows {
        let disksim = row
            .disksim_demerit_ms
            .map_or("none".to_string(), |d| format!("{d:.3}"));
        let (Some(requests), Some(demerit), Some(measured), Some(simulated)) = (
            row.requests,
            row.demerit_ms,
            row.mean_measured_ms,
            row.mean_simulated_ms,
        ) else {
            writeln!(
                out,
                "{:<12} {:>8} {:>11} {:>13}  error: {}",
                row.drive,
                "-",
                "-",
                disksim,
                row.error.as_deref().unwrap_or("unknown")
            )?;
            continue;
        };
        let verdict = match row.disksim_demerit_ms {
            Some(d) if demerit <= d => "at or below DiskSim",
            // DiskSim's figures are rounded to three decimals.
            Some(d) if demerit < d + 0.0005 => "equal to DiskSim's 3 decimals",
            Some(_) => "above DiskSim",
            None => "no DiskSim figure",
        };
        writeln!(
            out,
            "{:<12} {:>8} {:>11.4} {:>13} {:>12.3} {:>14.3}  {}",
            row.drive, requests, demerit, disksim, measured, simulated, verdict
        )?;
    }
    Ok(())
}
