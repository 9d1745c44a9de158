//! Timing extraction with the drive's read cache and read-ahead left as shipped:
//! shows what the caching mode page buys (the papers turned the cache off).
use spinstack_extract::map::compare;
use spinstack_extract::sim_probe::{Jitter, SimulatedProbe};
use spinstack_extract::timing::{extract, TimingOptions};
use spinstack_extract::truth::true_map;
fn main() {
    let name = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "atlas10k".to_string());
    let spec = spinstack_disk::catalog::resolve(&name).expect("catalog drive");
    let mut probe = SimulatedProbe::with_drive(&spec).expect("drive");
    probe.set_jitter(Some(Jitter::typical(1)));
    let truth = true_map(probe.layout(), &name);
    match extract(&mut probe, &TimingOptions::default()) {
        Ok(found) => {
            let verdict = compare(&found.map, &truth);
            println!(
                "{name} cache as shipped: exact {}, {} of {} tracks match, {} uncertain",
                verdict.exact,
                verdict.matching_tracks,
                verdict.true_tracks,
                found.map.uncertain_tracks()
            );
        }
        Err(e) => println!("{name}: {e}"),
    }
}
