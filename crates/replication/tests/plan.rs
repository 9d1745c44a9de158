//! The batch planner against the paper's §3.1 formulas, typed in here
//! independently of the crate: T_wnd = R_apl² / ((R_apl − R_gen) R_gen) · T_RTO and
//! T_apl = R_apl / (R_apl − R_gen) · T_RTO, with T_RTO = RTO − T_up − T_down; and its
//! refusals (the paper's "RTO 30 s fails" on the Ultrastar 36Z15: 26 s + 15 s).

use spinstack_replication::plan::{plan, PlanError, PlanInput};
use spinstack_sim::units::Nanoseconds;

fn input(r_gen: f64, r_apl: f64, rto_s: u64, up_s: u64, down_s: u64) -> PlanInput {
    PlanInput {
        r_gen_bytes_per_s: r_gen,
        r_apl_bytes_per_s: r_apl,
        rto: Nanoseconds::from_ms(rto_s * 1000),
        spin_up: Nanoseconds::from_ms(up_s * 1000),
        spin_down: Nanoseconds::from_ms(down_s * 1000),
    }
}

// Proves T_wnd and T_apl are the paper's formulas over a grid of rates and RTOs,
// and that the plan holds the RTO: the backlog just before a batch,
// R_gen (T_wnd − T_apl), takes exactly the budget to apply.
#[test]
fn matches_the_papers_formulas() {
    for r_gen in [1.0e5, 3.2e5, 4.0e6] {
        for speedup in [1.1, 2.0, 20.5, 49.3] {
            for rto in [50u64, 100, 300, 1000] {
                let r_apl = r_gen * speedup;
                let p = plan(&input(r_gen, r_apl, rto, 26, 15)).expect("feasible");
                let t_rto = rto as f64 - 41.0;
                let t_wnd = r_apl * r_apl / ((r_apl - r_gen) * r_gen) * t_rto;
                let t_apl = r_apl / (r_apl - r_gen) * t_rto;
                assert!((p.batch_interval_s - t_wnd).abs() <= 1e-9 * t_wnd, "{p:?}");
                assert!((p.apply_time_s - t_apl).abs() <= 1e-9 * t_apl, "{p:?}");
                let recovery = r_gen * (p.batch_interval_s - p.apply_time_s) / r_apl;
                assert!(
                    (recovery - t_rto).abs() <= 1e-6 * t_rto,
                    "{recovery} vs {t_rto}"
                );
            }
        }
    }
}

// Proves Table 3 read backwards: with RTO 100 s on the Ultrastar (a 59 s budget),
// the paper's 536 / 1,070 / 2,150 s intervals need R_apl / R_gen of about
// 7.9, 17.1 and 35.4 (solving s² / (s − 1) = T_wnd / 59 s).
#[test]
fn table3_intervals_correspond_to_speedups() {
    for (speedup, interval) in [(7.94, 536.0), (17.07, 1070.0), (35.41, 2150.0)] {
        let p = plan(&input(1.0, speedup, 100, 26, 15)).expect("feasible");
        assert!(
            (p.batch_interval_s - interval).abs() / interval < 0.01,
            "{speedup}: {p:?}"
        );
    }
}

// Proves the refusals: RTO 30 s on the Ultrastar (26 s up + 15 s down), an
// application no faster than generation, and nonsense rates, each with a message
// naming the cause.
#[test]
fn refuses_what_it_cannot_hold() {
    let error = plan(&input(1.0, 20.0, 30, 26, 15)).unwrap_err();
    assert!(matches!(error, PlanError::RtoTooShort { .. }), "{error}");
    let message = error.to_string();
    assert!(message.contains("30 s") && message.contains("26 s") && message.contains("15 s"));
    assert!(plan(&input(1.0, 20.0, 41, 26, 15)).is_err());
    assert!(plan(&input(1.0, 20.0, 42, 26, 15)).is_ok());
    let error = plan(&input(5.0, 5.0, 100, 26, 15)).unwrap_err();
    assert!(matches!(error, PlanError::ApplyNotFaster { .. }), "{error}");
    let error = plan(&input(f64::NAN, 5.0, 100, 26, 15)).unwrap_err();
    assert!(matches!(error, PlanError::BadInput { .. }), "{error}");
    // The Deskstar's non-spinning mode (0.7 s each way) holds 30 s.
    let mut deskstar = input(1.0, 20.0, 30, 0, 0);
    deskstar.spin_up = Nanoseconds::from_ms(700);
    deskstar.spin_down = Nanoseconds::from_ms(700);
    assert!(plan(&deskstar).is_ok());
}

// Proves every accepted plan is finite and holds the RTO over rates across f64's
// range (before, 1e300 and 1e308 B/s overflowed R_apl² and printed "T_wnd NaN s"),
// and that a plan beyond representable time is refused, not returned.
#[test]
fn plans_are_finite_or_refused_across_the_range() {
    let rates = [1e-300, 1e-6, 1.0, 3.3e5, 1e12, 1e300, 1e308, f64::MAX];
    for r_gen in rates {
        for r_apl in rates {
            match plan(&input(r_gen, r_apl, 100, 26, 15)) {
                Ok(p) => {
                    assert!(r_apl > r_gen, "{r_gen} {r_apl}: {p:?}");
                    assert!(p.batch_interval_s.is_finite() && p.apply_time_s.is_finite());
                    assert!(p.batch_interval_s >= p.apply_time_s && p.apply_time_s >= 59.0);
                    let recovery_s = (p.batch_interval_s - p.apply_time_s) / p.apply_speedup;
                    assert!(
                        (recovery_s - 59.0).abs() <= 1e-6 * 59.0,
                        "{r_gen} {r_apl}: {p:?}"
                    );
                }
                Err(error) => assert!(
                    r_apl <= r_gen || matches!(error, PlanError::OutOfRange { .. }),
                    "{r_gen} {r_apl}: {error}"
                ),
            }
        }
    }
}
