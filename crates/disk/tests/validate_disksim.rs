//! Replays DiskSim's validation traces (../shared/disksim) and checks the demerit
//! and the first simulated responses against DiskSim's own (notes §4.2, §7).
//! Skips with a message when the folder is absent.

use spinstack_disk::import::load_parv;
use spinstack_disk::validate::{disksim_demerit_ms, replay, ValidateReport};
use spinstack_sim::trace::read_validate_trace;
use std::path::PathBuf;

fn disksim_dir() -> Option<PathBuf> {
    let what = "replay DiskSim's validation traces";
    spinstack_testdata::disksim("params", what)?;
    spinstack_testdata::disksim("traces", what)?;
    Some(spinstack_testdata::disksim_root())
}

fn run(dir: &std::path::Path, name: &str) -> ValidateReport {
    let spec = load_parv(&dir.join(format!("params/{name}.parv"))).expect("parv loads");
    let records =
        read_validate_trace(&dir.join(format!("traces/{name}.trace"))).expect("trace reads");
    let report = replay(&spec, &records).expect("replay runs");
    if let Ok(out) = std::env::var("SPINSTACK_VALIDATE_CSV_DIR") {
        let mut csv = String::from("operation,lbn,sectors,measured_ms,simulated_ms,cache_hit\n");
        for (c, r) in report.completions.iter().zip(&records) {
            csv += &format!(
                "{:?},{},{},{:.6},{:.6},{}\n",
                c.request.operation,
                c.request.lbn.0,
                c.request.sectors.0,
                r.measured.as_ms_f64(),
                c.response_time().as_ms_f64(),
                c.cache_hit()
            );
        }
        std::fs::write(PathBuf::from(out).join(format!("{name}.csv")), csv).unwrap();
    }
    report
}

/// Proves the first simulated responses equal DiskSim's (notes §7) to 0.01 ms:
/// overheads, seek curves, rotation, layout and cache hits all take part.
#[test]
fn first_responses_match_disksim() {
    let Some(dir) = disksim_dir() else { return };
    let cases: [(&str, [f64; 5]); 2] = [
        (
            "hp_c2247a",
            [21.649336, 1.375470, 1.375470, 17.155068, 10.248487],
        ),
        (
            "dec_rz26",
            [18.405622, 28.707888, 23.128547, 28.387959, 17.885208],
        ),
    ];
    for (name, expected) in cases {
        let report = run(&dir, name);
        for (i, want) in expected.iter().enumerate() {
            let got = report.simulated_ms[i];
            assert!(
                (got - want).abs() < 0.01,
                "{name} request #{}: ours {got:.6} ms, DiskSim {want:.6} ms",
                i + 1
            );
        }
    }
}

/// Drives whose demerit we reach at or below DiskSim's own figure. DiskSim's
/// README rounds its figures to three decimals, so the bound is the figure plus
/// half a unit of the last digit (cheetah4LP: ours 0.3181, DiskSim WD 0.318228).
const ASSERTED: &[&str] = &[
    "atlas_III",
    "barracuda",
    "cheetah4LP",
    "dec_rz26",
    "hp_c2247a",
    "hp_c3323a",
];

/// Drives with no DiskSim figure to reach: the bound is only a regression guard a
/// little above what we measured. st41601n: ours 0.0836 vs about 0.083 in older
/// DiskSim releases (4.0 cannot run it).
const GUARDED: &[(&str, f64)] = &[("st41601n", 0.09)];

/// Proves the demerit of every asserted drive is at or below DiskSim's, and that
/// the others have not regressed past their guards.
#[test]
fn demerit_at_or_below_disksim() {
    let Some(dir) = disksim_dir() else { return };
    let mut failures = Vec::new();
    let targets = ASSERTED
        .iter()
        .map(|name| {
            (
                *name,
                disksim_demerit_ms(name).expect("DiskSim figure") + 0.0005,
            )
        })
        .chain(GUARDED.iter().copied());
    for (name, bound) in targets {
        let report = run(&dir, name);
        eprintln!(
            "{name}: demerit {:.4} ms (bound {bound:.4}), mean measured {:.3}, simulated {:.3}",
            report.demerit_ms, report.mean_measured_ms, report.mean_simulated_ms
        );
        if report.demerit_ms > bound {
            failures.push(format!("{name}: {:.4} > {bound:.4}", report.demerit_ms));
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
}

/// Regression test for issue 2 (dec_rz26 above DiskSim): proves that importing
/// dec_rz26 does not apply `Immediate buffer read` (set without `Read any free
/// blocks`; see `immediate_reads_as_disksim_runs_them` in import.rs) and that its
/// demerit lands between DiskSim's own
/// two builds (WD 0.340575, 4.0 0.340367) to within 0.0003 ms.
#[test]
fn dec_rz26_disksim_figure_without_zero_latency_reads() {
    let Some(dir) = disksim_dir() else { return };
    let spec = load_parv(&dir.join("params/dec_rz26.parv")).expect("parv loads");
    assert!(
        !spec.firmware.immediate_buffer_read,
        "the import must not apply dec_rz26's Immediate buffer read"
    );
    assert!(spec
        .provenance
        .iter()
        .any(|line| line.starts_with("Immediate buffer read = 1")));
    // Its first responses are checked by `first_responses_match_disksim`.
    let report = run(&dir, "dec_rz26");
    let (wd, orig) = (0.340575, 0.340367);
    eprintln!(
        "dec_rz26 without zero-latency reads: {:.6} ms",
        report.demerit_ms
    );
    assert!(
        (report.demerit_ms - (wd + orig) / 2.0).abs() < 0.0003,
        "demerit {:.6} ms, DiskSim WD {wd} / 4.0 {orig}",
        report.demerit_ms
    );
}

/// Prints the table for every traced drive, asserted or not; fails only if a
/// replay fails or a demerit is not a finite number.
#[test]
fn demerit_table_report() {
    let Some(dir) = disksim_dir() else { return };
    let names = ASSERTED
        .iter()
        .copied()
        .chain(GUARDED.iter().map(|(name, _)| *name));
    for name in names {
        let report = run(&dir, name);
        assert!(
            report.demerit_ms.is_finite(),
            "{name}: demerit is not finite"
        );
        eprintln!(
            "{name:<12} demerit {:.6} ms  DiskSim {:?}  mean measured {:.3}  simulated {:.3}",
            report.demerit_ms,
            disksim_demerit_ms(name),
            report.mean_measured_ms,
            report.mean_simulated_ms
        );
    }
}
