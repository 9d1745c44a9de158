//! Where is the frontier of plans that hold, and did the search find it? For one
//! site and configuration this studies the point (`study_point`: the search of
//! `spinstack_replication::search`), then simulates the batch plan at a ladder of
//! fixed speed-ups s = R_apl/R_gen exactly as the search simulates each s it
//! tries, and prints per s the batch interval, the backlog a recovery faces and
//! the rate its windows applied at, the measured apply time per batch, the worst
//! trial, the RTO violations, whether a batch fell behind, and the power saved.
//! For exploring the model; not part of any result (the test
//! `the_plan_has_the_longest_interval_that_holds` checks the same on a small site).
//!
//! `cargo run --release -p spinstack-replication --example plan_frontier -- \
//!  [W] [transactions] [window MB|none] [RTO s] [s_min] [s_max] [steps] [cycles] [data drives]`
//!
//! The ladder has `steps` + 1 speed-ups from s_min to s_max, evenly spaced.

use spinstack_replication::energy;
use spinstack_replication::site::{Site, SiteConfig};
use spinstack_replication::study::{simulate_speedup, study_point, PointConfig, PointReport};
use spinstack_sim::parallel::map_in_order;
use spinstack_sim::units::Nanoseconds;
use std::time::Instant;

fn arg<T: std::str::FromStr>(index: usize, default: T) -> T {
    std::env::args()
        .nth(index)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let warehouses: u32 = arg(1, 160);
    let transactions: u64 = arg(2, 1_000_000);
    let window_mb: Option<u64> = std::env::args()
        .nth(3)
        .map_or(Some(512), |a| a.parse().ok());
    let rto_s: f64 = arg(4, 100.0);
    let (s_min, s_max, steps): (f64, f64, u32) = (arg(5, 10.0), arg(6, 40.0), arg(7, 15));
    let seed = 20020128;
    let spec = spinstack_disk::catalog::get("ultrastar36z15").expect("catalog");
    let started = Instant::now();
    let mut config = SiteConfig::new(warehouses, transactions, seed);
    config.data_drives = arg(9, config.data_drives);
    let site = Site::measure(config, spec).expect("site");
    let mut point = PointConfig::new(
        window_mb.map(|mb| mb << 20),
        Nanoseconds::from_ms_f64(rto_s * 1e3),
        seed,
    );
    point.cycles = arg(8, 1);
    println!(
        "W = {warehouses}: {} data drives, R_gen {:.0} B/s (site in {:.1?})",
        site.config.data_drives,
        site.primary.r_gen_bytes_per_s,
        started.elapsed()
    );
    let started = Instant::now();
    let report = study_point(&site, &point).expect("study");
    print_search(&report, started.elapsed());
    let ladder: Vec<f64> = (0..=steps)
        .map(|k| s_min + (s_max - s_min) * f64::from(k) / f64::from(steps.max(1)))
        .collect();
    let started = Instant::now();
    let rows = map_in_order(
        &ladder,
        |&s| simulate_speedup(&site, &point, s).expect("simulated"),
        || (),
    );
    println!(
        "{:>6} {:>8} {:>10} {:>11} {:>9} {:>8} {:>5} {:>5} {:>6}",
        "s", "T_wnd_s", "backlog_MB", "backlog_xRg", "apply_s", "worst_s", "viol", "fell", "saved"
    );
    let r_gen = site.primary.r_gen_bytes_per_s;
    for (s, row) in ladder.iter().zip(&rows) {
        let normalized = energy::normalized_power(
            &point.storage,
            row.aware_watts,
            report.data_watts_conventional,
            report.log_watts,
        );
        println!(
            "{:>6.2} {:>8.0} {:>10.1} {:>11.2} {:>9.1} {:>8.1} {:>5} {:>5} {:>6.1}",
            s,
            row.batch.batch_interval_s,
            s * r_gen * row.batch.apply_budget_s / 1048576.0,
            row.backlog_r_apl_per_s.unwrap_or(f64::NAN) / r_gen,
            row.measured_apply_time_s,
            row.trials.worst_recovery_s,
            row.trials.rto_violations,
            row.fell_behind,
            100.0 * (1.0 - normalized),
        );
    }
    println!("ladder in {:.1?}", started.elapsed());
}

fn print_search(r: &PointReport, took: std::time::Duration) {
    println!(
        "search: s = {:.2} of back-to-back {:.2} in {} simulations (smallest failing {:?}: {}), \
         T_wnd {:.0} s, measured apply {:.1} s, worst recovery {:.1} s, {} violations, saved \
         {:.1}%{} ({took:.1?})",
        r.apply_speedup,
        r.back_to_back_speedup(),
        r.plan_simulations,
        r.failing_speedup,
        r.failing_reason.as_deref().unwrap_or("-"),
        r.batch_interval_s.unwrap_or(f64::NAN),
        r.measured_apply_time_s.unwrap_or(f64::NAN),
        r.worst_recovery_s.unwrap_or(f64::NAN),
        r.rto_violations,
        100.0 * (1.0 - r.normalized_power.unwrap_or(f64::NAN)),
        r.plan_refused
            .as_deref()
            .map_or(String::new(), |why| format!("; refused: {why}")),
    );
}
