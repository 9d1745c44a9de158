//! The plan search against known frontiers: a stand-in simulation that holds for
//! every plan whose batch interval is at most a chosen one and fails beyond it
//! (the paper's model: a longer interval leaves a larger backlog). The search must
//! return a plan that held within its resolution of the frontier, on the branch of
//! s its range allows (s ≥ 2 when the measured speed-up is, else s ≤ it), report
//! the nearest failure beyond it, and stay within its bound on simulations.

use spinstack_replication::search::{
    interval_ratio, longest_holding, max_simulations, speedup_for_interval, Verdict,
    INTERVAL_RESOLUTION, MIN_SPEEDUP,
};

struct Outcome(bool);

impl Verdict for Outcome {
    fn held(&self) -> bool {
        self.0
    }
}

/// The search with every plan of interval ratio up to `frontier` holding: (s that
/// held, s that failed, simulations).
fn search(max: f64, frontier: f64) -> (Option<f64>, Option<f64>, u32) {
    let found = longest_holding(max, |s| Ok::<_, ()>(Outcome(interval_ratio(s) <= frontier)))
        .expect("no error");
    (
        found.held.map(|(s, _)| s),
        found.failed.map(|(s, _)| s),
        found.simulations,
    )
}

// Proves the two roots of s²/(s − 1) = k give back k, one on each side of 2.
#[test]
fn speedups_for_an_interval() {
    for s in [1.05, 1.3, 1.79, 2.0, 2.39, 6.17, 28.94] {
        let k = interval_ratio(s);
        let high = speedup_for_interval(k, true);
        let low = speedup_for_interval(k, false);
        assert!((interval_ratio(high) - k).abs() < 1e-9 * k, "{s}");
        assert!((interval_ratio(low) - k).abs() < 1e-9 * k, "{s}");
        assert!(high >= 2.0 - 1e-9 && low <= 2.0 + 1e-9, "{s}: {low} {high}");
        assert!((high - s).abs() < 1e-6 || (low - s).abs() < 1e-6, "{s}");
    }
}

// Proves the search finds a frontier anywhere in its range to its resolution,
// on the right branch, within its bound on simulations.
#[test]
fn finds_the_frontier_within_its_resolution() {
    for max in [1.5, 1.82, 2.39, 6.17, 28.94, 50.0] {
        let (shortest, longest) = if max >= 2.0 {
            (4.0, interval_ratio(max))
        } else {
            (interval_ratio(max), interval_ratio(MIN_SPEEDUP))
        };
        for fraction in [0.0, 0.06, 0.3, 0.5, 0.71, 0.93] {
            let frontier = shortest * (longest / shortest).powf(fraction);
            let (held, failed, simulations) = search(max, frontier);
            let held = held.unwrap_or_else(|| panic!("{max} {frontier}: nothing held"));
            assert!(held <= max + 1e-9 && (held >= 2.0 - 1e-9) == (max >= 2.0));
            let k = interval_ratio(held);
            assert!(
                k <= frontier * (1.0 + 1e-9),
                "{max} {frontier}: held {held}"
            );
            assert!(
                k >= frontier / (1.0 + INTERVAL_RESOLUTION),
                "{max} {frontier}: held {held} (k {k}), short of the frontier"
            );
            if let Some(failed) = failed {
                let beyond = interval_ratio(failed);
                assert!(beyond > frontier && beyond <= k * (1.0 + INTERVAL_RESOLUTION));
            }
            assert!(simulations <= max_simulations(max), "{max}: {simulations}");
        }
    }
    assert_eq!(max_simulations(30.0), 8);
}

// Proves the edges: every plan holding stops within the resolution of the
// branch's longest interval without trying it; nothing holding tries the shortest
// interval (s = 2, or the measured speed-up below 2) last and reports it; a
// measured speed-up at or below MIN_SPEEDUP is tried alone.
#[test]
fn edges_of_the_range() {
    let (held, failed, _) = search(28.94, f64::INFINITY);
    let k = interval_ratio(held.expect("holds"));
    assert!(
        k * (1.0 + INTERVAL_RESOLUTION) >= interval_ratio(28.94),
        "{k}"
    );
    assert_eq!(failed, None);
    let (held, failed, simulations) = search(28.94, 0.0);
    assert_eq!(held, None);
    assert_eq!(failed, Some(2.0));
    assert_eq!(simulations, max_simulations(28.94));
    let (held, failed, _) = search(1.82, 0.0);
    assert_eq!((held, failed), (None, Some(1.82)));
    let (held, _, _) = search(1.82, f64::INFINITY);
    let held = held.expect("holds");
    assert!(held < MIN_SPEEDUP * (1.0 + INTERVAL_RESOLUTION), "{held}");
    assert_eq!(search(1.03, 100.0), (Some(1.03), None, 1));
    assert_eq!(search(1.03, 1.0), (None, Some(1.03), 1));
}

// Proves an error of the simulation ends the search with that error.
#[test]
fn an_error_ends_the_search() {
    let result = longest_holding(10.0, |s| {
        if s > 3.0 {
            Err(format!("failed at {s}"))
        } else {
            Ok(Outcome(true))
        }
    });
    assert!(result.is_err());
}
