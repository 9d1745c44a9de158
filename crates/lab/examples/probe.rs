use spinstack_lab::driver::{Workload};
use spinstack_lab::drives;
use spinstack_lab::experiments::common::{measure, Alignment, Point};
use spinstack_sim::request::Direction;
fn main() {
    let spec = drives::with_zero_bus_transfer(&drives::spec("atlas10k2").unwrap());
    let zone = drives::first_zone(&spec, &drives::layout(&spec).unwrap()).unwrap();
    let run = measure(&Point { spec: &spec, zone: &zone, workload: Workload::OneReq, alignment: Alignment::Aligned, direction: Direction::Read, sectors: zone.sectors_per_track, requests: 40, seed: 1 }).unwrap();
    for c in run.measured() {
        let b = c.breakdown;
        println!("{:>8} resp {:.3} ovh {:.3} seek {:.3} rot {:.3} hs {:.3} media {:.3} bus {:.3} ovl {:.3} hit {}", c.request.lbn.0, c.response_time().as_ms_f64(), b.overhead.as_ms_f64(), b.seek.as_ms_f64(), b.rotational_latency.as_ms_f64(), b.head_switch.as_ms_f64(), b.media_transfer.as_ms_f64(), b.bus_transfer.as_ms_f64(), b.overlap.as_ms_f64(), c.cache_hit);
    }
}
