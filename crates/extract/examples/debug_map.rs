use spinstack_extract::sim_probe::SimulatedProbe;
use spinstack_extract::probe::Probe;
use spinstack_sim::units::Lbn;
fn main() {
    let name = std::env::args().nth(1).unwrap();
    let spec = spinstack_disk::catalog::resolve(&name).unwrap();
    let mut probe = SimulatedProbe::with_drive(&spec).unwrap();
    let tracks = probe.layout().tracks();
    for t in &tracks[505..520] {
        let a = probe.translate_lbn(t.first).unwrap();
        let b = probe.translate_lbn(Lbn(t.end().0-1)).unwrap();
        println!("{:?} first slot {} last slot {}", t, a.sector, b.sector);
    }
}
