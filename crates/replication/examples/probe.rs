//! Runs one site and a few configurations and prints their reports (for
//! exploring the model; not part of any result).
use spinstack_replication::site::{Site, SiteConfig};
use spinstack_replication::study::{run_points, PointConfig};
use spinstack_sim::units::Nanoseconds;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let warehouses: u32 = args.get(1).map_or(16, |a| a.parse().unwrap());
    let transactions: u64 = args.get(2).map_or(100_000, |a| a.parse().unwrap());
    let disk = args.get(3).map_or("ultrastar36z15", |a| a.as_str());
    let scale = transactions as f64 / 1e6;
    let t = Instant::now();
    let spec = spinstack_disk::catalog::get(disk).unwrap();
    let site = Site::measure(SiteConfig::new(warehouses, transactions, 1), spec).unwrap();
    eprintln!("site {:?} in {:?}", site.primary, t.elapsed());
    eprintln!(
        "conventional r_apl {} W {}",
        site.conventional.r_apl_bytes_per_s, site.conventional.watts_per_drive
    );
    let mut points = vec![PointConfig::new(None, Nanoseconds::from_ms(100_000), 1)];
    for mb in [32u64, 128, 512] {
        points.push(PointConfig::new(
            Some(((mb << 20) as f64 * scale) as u64),
            Nanoseconds::from_ms(100_000),
            1,
        ));
    }
    let t = Instant::now();
    for r in run_points(&site, &points, &|| ()) {
        let r = r.unwrap();
        eprintln!(
            "window {:?}: attempts {} tl {:?} speedup {:.2} kept {:.3} plan {:?} refused {:?} measured apply {:?} norm {:?} modes/day {:?} viol {} worst {:?} fell {}",
            r.window_bytes, r.plan_simulations, r.timeline_r_apl_per_s, r.apply_speedup, r.records_kept_by_compaction, r.plan, r.plan_refused, r.measured_apply_time_s,
            r.normalized_power, r.mode_changes_per_day, r.rto_violations, r.worst_recovery_s, r.fell_behind
        );
        eprintln!(
            "   aware {:?}\n   conv {:?}\n   log {:?}",
            r.drive_power_aware, r.drive_conventional, r.log_drive
        );
    }
    eprintln!("points in {:?}", t.elapsed());
}
