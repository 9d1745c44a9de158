//! Runs one extraction method on every catalog drive and prints one JSON line each.
//! Usage: cargo run --release --example extract_catalog -- [scsi|scsi-literal|zone-aware|timing] [drive...]

use spinstack_extract::run::{extract_simulated, Method, RunOptions};
use spinstack_extract::sim_probe::Jitter;
use spinstack_extract::timing::TimingOptions;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let method = args
        .first()
        .and_then(|m| Method::parse(m))
        .unwrap_or(Method::Scsi);
    let names: Vec<String> = if args.len() > 1 {
        args[1..].to_vec()
    } else {
        spinstack_disk::catalog::names()
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    for name in names {
        let spec = match spinstack_disk::catalog::resolve(&name) {
            Ok(spec) => spec,
            Err(e) => {
                println!("{name}: cannot load: {e}");
                continue;
            }
        };
        let options = RunOptions {
            method,
            jitter: Some(Jitter::typical(1)),
            timing: TimingOptions::default(),
        };
        match extract_simulated(&spec, &options) {
            Ok((report, _)) => println!("{}", serde_json::to_string(&report).unwrap()),
            Err(e) => println!("{name}: {e}"),
        }
    }
}
