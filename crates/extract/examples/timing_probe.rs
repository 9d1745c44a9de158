//! Prints boundary-test δ samples at a given LBN with jitter (sanity check): timing_probe DRIVE LBN
use spinstack_extract::probe::{CacheSetting, Probe};
use spinstack_extract::sim_probe::{Jitter, SimulatedProbe};
use spinstack_sim::units::{Lbn, Sectors};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let spec = spinstack_disk::catalog::resolve(&args[1]).unwrap();
    let mut probe = SimulatedProbe::with_drive(&spec).unwrap();
    probe.set_caching(CacheSetting::ReadCacheAndPrefetchOff).unwrap();
    probe.set_jitter(Some(Jitter::typical(7)));
    let x: u64 = args[2].parse().unwrap();
    let mut v = vec![];
    for i in 0..2000 {
        if i % 3 == 0 { probe.timed_read(Lbn(x / 2), Sectors(1)).unwrap(); }
        let a = probe.timed_read(Lbn(x), Sectors(1)).unwrap().completed.0 as i64;
        let b = probe.timed_read(Lbn(x), Sectors(2)).unwrap().completed.0 as i64;
        v.push((b - a) % 5985037);
    }
    v.sort();
    let n = v.len();
    println!("min {} p1 {} p10 {} p50 {} p90 {} p99 {} max {}", v[0], v[n/100], v[n/10], v[n/2], v[9*n/10], v[99*n/100], v[n-1]);
    println!("{:?}", &v[n-40..]);
}
