//! Is the plan's correction by the worst failover trial sound, and what does it
//! cost? For one site and window, this studies the batch plan at a ladder of fixed
//! speed-ups s = R_apl/R_gen (no correction: plan, timeline, trials, once each)
//! and prints, per s, the batch interval, the backlog a recovery faces, the worst
//! trial's apply time, the RTO violations and the power; then what `study_point`
//! (the corrected plan) chose. The largest s whose trials all hold is what a
//! perfect correction would find. For exploring the model; not part of any result.
//!
//! `cargo run --release -p spinstack-replication --example plan_frontier -- \
//!  [W] [transactions] [window MB] [RTO s] [s_min] [s_max] [step] [cycles] [data drives]`

use spinstack_replication::apply::Applier;
use spinstack_replication::energy;
use spinstack_replication::failover::{run_trials, TrialConfig};
use spinstack_replication::log::PAGE_BYTES;
use spinstack_replication::plan::{plan, PlanInput};
use spinstack_replication::site::{Site, SiteConfig};
use spinstack_replication::study::{study_point, PointConfig};
use spinstack_replication::timeline::{run_timeline, Arrivals, TimelineConfig};
use spinstack_replication::volume::DataVolume;
use spinstack_sim::device::StandbyLevel;
use spinstack_sim::parallel::map_in_order;
use spinstack_sim::units::Nanoseconds;
use std::time::Instant;

fn arg<T: std::str::FromStr>(index: usize, default: T) -> T {
    std::env::args()
        .nth(index)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

/// The applier `study` builds for the first simulated drive (its share of the
/// buffer pool, warmed on the warm-up records).
fn applier(site: &Site) -> Applier {
    let drives = site.config.data_drives as u64;
    let frames = site.config.buffer_pool_bytes / PAGE_BYTES / drives;
    let mut applier = Applier::new(true, frames as usize, site.workload.pages);
    let warm: Vec<_> = site.workload.records[..site.workload.first_measured]
        .iter()
        .filter(|r| r.page.0 % drives == 0)
        .copied()
        .collect();
    applier.warm(&warm);
    applier
}

fn main() {
    let warehouses: u32 = arg(1, 160);
    let transactions: u64 = arg(2, 1_000_000);
    let window_mb: u64 = arg(3, 512);
    let rto_s: f64 = arg(4, 100.0);
    let s_min: f64 = arg(5, 10.0);
    let s_max: f64 = arg(6, 40.0);
    let step: f64 = arg(7, 2.0);
    let cycles: u32 = arg(8, 3);
    let seed = 20020128;
    let spec = spinstack_disk::catalog::get("ultrastar36z15").expect("catalog");
    let standby = &spec.power.standby[0];
    let (spin_up, spin_down) = (
        Nanoseconds::from_ms_f64(standby.exit_ms),
        Nanoseconds::from_ms_f64(standby.enter_ms),
    );
    let started = Instant::now();
    let mut config = SiteConfig::new(warehouses, transactions, seed);
    config.data_drives = arg(9, config.data_drives);
    let site = Site::measure(config, spec.clone()).expect("site");
    let r_gen = site.primary.r_gen_bytes_per_s;
    println!(
        "W = {warehouses}: {} data drives, database {:.1}% of each, R_gen {:.0} B/s (site in {:.1?})",
        site.config.data_drives,
        100.0 * site.primary.database_share_of_drive,
        r_gen,
        started.elapsed()
    );
    let rto = Nanoseconds::from_ms_f64(rto_s * 1e3);
    let window = window_mb << 20;
    let log_bytes_per_s = r_gen / site.config.data_drives as f64
        * f64::from(energy::P5_595.data_drives)
        / f64::from(energy::P5_595.log_drives);
    let (log_watts, _) = energy::log_drive_watts(&spec, log_bytes_per_s, 20_000).expect("log");
    let records = site.workload.measured();
    let mut ladder = Vec::new();
    let mut s = s_min;
    while s <= s_max + 1e-9 {
        ladder.push(s);
        s += step;
    }
    let started = Instant::now();
    let rows = map_in_order(
        &ladder,
        |&s| {
            let batch = plan(&PlanInput {
                r_gen_bytes_per_s: r_gen,
                r_apl_bytes_per_s: s * r_gen,
                rto,
                spin_up,
                spin_down,
            })
            .expect("plan");
            let backlog = r_gen * (batch.batch_interval_s - batch.apply_time_s);
            let arrivals = Arrivals::new(records, r_gen, backlog);
            let volume = DataVolume::new(&site.spec, site.config.data_drives, site.workload.pages)
                .expect("volume");
            let timeline = run_timeline(
                volume,
                applier(&site),
                &arrivals,
                &TimelineConfig {
                    batch_interval: Nanoseconds::from_ms_f64(batch.batch_interval_s * 1e3),
                    spin_up,
                    spin_down,
                    standby: StandbyLevel(0),
                    window_bytes: window,
                    cycles,
                    queue_depth: site.config.apply_queue_depth,
                    sleeps: true,
                    simulated_drives: 1,
                },
            )
            .expect("timeline");
            let trials = run_trials(
                &timeline,
                &arrivals,
                &TrialConfig {
                    trials: 1000,
                    seed,
                    rto,
                    spin_up,
                    spin_down,
                    inter_site_latency: Nanoseconds::from_ms(1),
                    calibrated_bytes_per_s: s * r_gen,
                },
            );
            // The backlog windows of the first batch: its bytes and apply time.
            let first = timeline.cycles[0];
            let backlog_end = arrivals.arrived(first.spin_up_ordered);
            let (mut bytes, mut apply_ns) = (0u64, 0u64);
            for w in timeline.windows.iter().filter(|w| w.start < backlog_end) {
                bytes += arrivals.bytes_between(w.start, w.end);
                apply_ns += (w.applied.finished - w.applied.started).0;
            }
            let watts = energy::mean_watts(&timeline.energy, timeline.span);
            let normalized = energy::normalized_power(
                &energy::P5_595,
                watts,
                site.conventional.watts_per_drive,
                log_watts,
            );
            (
                batch,
                backlog,
                bytes,
                apply_ns,
                trials,
                timeline.fell_behind,
                normalized,
            )
        },
        || (),
    );
    println!(
        "{:>6} {:>8} {:>10} {:>12} {:>10} {:>9} {:>9} {:>6} {:>5} {:>7}",
        "s",
        "T_wnd_s",
        "backlog_MB",
        "backlog_B/s",
        "apply_s",
        "worst_s",
        "viol",
        "fell",
        "saved",
        "s_eff"
    );
    for (s, (batch, backlog, bytes, apply_ns, trials, fell, normalized)) in ladder.iter().zip(&rows)
    {
        let apply_s = *apply_ns as f64 / 1e9;
        println!(
            "{:>6.2} {:>8.0} {:>10.1} {:>12.0} {:>10.1} {:>9.1} {:>9} {:>6} {:>5.1} {:>7.2}",
            s,
            batch.batch_interval_s,
            backlog / 1048576.0,
            *bytes as f64 / apply_s.max(1e-9),
            apply_s,
            trials.worst_recovery_s,
            trials.rto_violations,
            fell,
            100.0 * (1.0 - normalized),
            *bytes as f64 / apply_s.max(1e-9) / r_gen,
        );
    }
    println!("ladder in {:.1?}", started.elapsed());
    let started = Instant::now();
    let mut point = PointConfig::new(Some(window), rto, seed);
    point.cycles = cycles;
    let r = study_point(&site, &point).expect("study");
    println!(
        "corrected plan: s = {:.2} after {} attempts (calibrated {:.2}), T_wnd {:.0} s, worst recovery {:.1} s, {} violations, saved {:.1}% ({:.1?})",
        r.apply_speedup,
        r.plan_attempts,
        r.calibrated_r_apl_per_s / r_gen,
        r.batch_interval_s.unwrap_or(f64::NAN),
        r.worst_recovery_s.unwrap_or(f64::NAN),
        r.rto_violations,
        100.0 * (1.0 - r.normalized_power.unwrap_or(f64::NAN)),
        started.elapsed()
    );
}
