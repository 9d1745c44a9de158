//! What the disaster-recovery experiments (Goda and Kitsuregawa,
//! power-aware-remote-replication-goda.txt) share: the site each one measures,
//! the grid runner, and the setup notes.
//!
//! **Scale.** The paper generated 1,000,000 TPC-C transactions per configuration;
//! `reproduce --dr-full-size` does the same. The default generates 100,000 (the
//! log is then replayed cyclically by the batch timeline): the rates, the plan
//! and the energy come from the same simulation, but no window holds more log
//! than the run produced (about 100 MB), so the 128 and 512 MB windows are then
//! effectively the whole log. Grid points run in parallel (spinstack-replication's
//! `run_points`, a library function with no global state).

use crate::harness::{RunContext, Scale};
use crate::LabError;
use spinstack_replication::site::{Site, SiteConfig};
use spinstack_replication::study::{run_points, PointConfig, PointReport};
use spinstack_sim::units::Nanoseconds;

pub const ULTRASTAR: &str = "ultrastar36z15";
pub const DESKSTAR: &str = "deskstar-t7k250";
pub const MB: u64 = 1 << 20;

/// Transactions per site at `scale`.
pub fn transactions(scale: &Scale) -> u64 {
    scale.dr_transactions
}

/// One site (primary + conventional secondary) for `warehouses` on `disk`.
pub fn site(id: &str, disk: &str, warehouses: u32, context: &RunContext) -> Result<Site, LabError> {
    let spec = spinstack_disk::catalog::get(disk).map_err(|e| LabError::Drive {
        name: disk.to_string(),
        problem: e.to_string(),
    })?;
    let config = SiteConfig::new(warehouses, transactions(&context.scale), context.seed);
    Site::measure(config, spec).map_err(|e| LabError::Run {
        id: id.to_string(),
        problem: e.to_string(),
    })
}

/// A point: window (None: no compaction), RTO in seconds.
pub fn point(window_mb: Option<u64>, rto_s: u64, seed: u64) -> PointConfig {
    PointConfig::new(
        window_mb.map(|mb| mb * MB),
        Nanoseconds::from_ms(rto_s * 1000),
        seed,
    )
}

/// Study `points` on `site` in parallel, advancing the progress bar per point.
pub fn run_grid(
    id: &str,
    site: &Site,
    points: &[PointConfig],
    context: &RunContext,
) -> Result<Vec<PointReport>, LabError> {
    let progress = context.progress;
    run_points(site, points, &|| progress.inc(1))
        .into_iter()
        .map(|r| {
            r.map_err(|e| LabError::Run {
                id: id.to_string(),
                problem: e.to_string(),
            })
        })
        .collect()
}

/// Percent of the conventional secondary's power saved (none when refused).
pub fn saved_percent(report: &PointReport) -> Option<f64> {
    report.normalized_power.map(|p| 100.0 * (1.0 - p))
}

pub fn window_label(window_bytes: Option<u64>) -> String {
    window_bytes.map_or("none".to_string(), |b| format!("{} MB", b / MB))
}

/// Paragraphs every dr experiment's summary carries.
pub fn setup_notes(site: &Site, scale: &Scale) -> Vec<String> {
    let p = &site.primary;
    vec![
        format!(
            "Site: TPC-C W = {}, {} transactions generated ({}), seed-determined; data volume of \
             {} simulated {} drives per site, pages striped page by page; 512 MB buffer pool \
             (CLOCK) at the primary and at the secondary; {} page I/Os outstanding per drive.",
            site.config.warehouses,
            site.config.transactions,
            if scale.dr_transactions >= Scale::DR_PAPER_TRANSACTIONS {
                "the paper's size"
            } else {
                "scaled; reproduce --dr-full-size runs the paper's 1,000,000"
            },
            site.config.data_drives,
            site.spec.name,
            site.config.queue_depth
        ),
        format!(
            "Primary (measured): {:.1} page I/Os per transaction ({:.1} reads), {:.1} records and \
             {:.0} B of log per transaction, {:.0} transactions/s, R_gen = {:.0} B/s on {} drives. \
             Assumed: CPU and log volume never limit the primary; the first tenth of the \
             transactions warm the buffer pool.",
            p.page_ios_per_transaction,
            p.page_reads_per_transaction,
            p.records_per_transaction,
            p.log_bytes_per_transaction,
            p.transactions_per_s,
            p.r_gen_bytes_per_s,
            site.config.data_drives
        ),
        format!(
            "Conventional secondary (measured): applies each record on arrival through its buffer \
             pool ({:.3} page I/Os per record), never sleeps: {:.2} W per data drive. Its fastest \
             rate is the 'no window' R_apl, {:.0} B/s.",
            site.conventional.page_ios_per_record,
            site.conventional.watts_per_drive,
            site.conventional.r_apl_bytes_per_s
        ),
        "Power-aware secondary: window buffer B; each window folded and sorted by page, applied \
         through the buffer pool (misses read in ascending order, evicted dirty pages written in \
         ascending order); R_apl measured by applying windows, then re-measured on the batch \
         timeline and the plan redone until the batches hold it (plan_attempts in data.csv); \
         proactive spin-up T_up before each batch, spin-down after. Secondary power = 94.4% data \
         drives (Table 1's p5 595 as the paper states it) + 5.6% always-on log drives (one \
         simulated at its share of the log), power-aware over conventional. Failover: 1,000 \
         seeded disaster instants per configuration; recovery = finish the transition, spin \
         up, apply the unapplied log (its measured window times)."
            .to_string(),
    ]
}
