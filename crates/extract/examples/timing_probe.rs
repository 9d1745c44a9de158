//! Prints boundary-test δ samples at true boundaries and inside tracks (sanity check).
use spinstack_extract::probe::{CacheSetting, Probe};
use spinstack_extract::sim_probe::{Jitter, SimulatedProbe};
use spinstack_sim::units::{Lbn, Sectors};
fn main() {
    let name = std::env::args().nth(1).unwrap_or("atlas10k".into());
    let spec = spinstack_disk::catalog::resolve(&name).unwrap();
    let mut probe = SimulatedProbe::with_drive(&spec).unwrap();
    probe.set_caching(CacheSetting::ReadCacheAndPrefetchOff).unwrap();
    if std::env::args().nth(2).is_some() { probe.set_jitter(Some(Jitter::typical(1))); }
    let tracks = probe.layout().tracks();
    let mut rs = vec![];
    for _ in 0..8 { rs.push(probe.timed_read(Lbn(0), Sectors(1)).unwrap().response().0); }
    println!("repeat read(0,1): {:?}", rs);
    for t in &tracks[..8] {
        for x in [t.end().0 - 1, t.first.0 + 5] {
            let mut v = vec![];
            probe.timed_read(Lbn(x), Sectors(1)).unwrap();
            for i in 0..6 { let s = if i % 2 == 0 {2} else {1}; v.push(probe.timed_read(Lbn(x), Sectors(s)).unwrap().response().0 as i64); }
            println!("x={x} boundary={} {:?}", x == t.end().0 - 1, v);
        }
    }
}
