//! The search for the batch plan a configuration runs: the plan (the paper's §3.1
//! formulas at some s = R_apl/R_gen, see [`crate::plan`]) with the longest batch
//! interval that holds in simulation, i.e. whose batches keep up (none still
//! applying when the next is due) and whose failover trials all recover within the
//! RTO losing no acknowledged transaction.
//!
//! **Why the longest interval.** A plan's batch interval T_wnd = k(s) · T_RTO with
//! k(s) = s²/(s − 1) (T_RTO the RTO less spin-up and spin-down). Every T_wnd costs
//! one spin-up and one spin-down, and a batch applies the log of its interval at
//! whatever rate the volume achieves, so the longer the interval, the larger the
//! share of time asleep and the fewer the mode changes a day. k falls from s = 1
//! to its minimum 4 at s = 2 and rises after, so "the largest s" is the longest
//! interval only for s ≥ 2: measured at W = 16 with no window buffer over one cycle
//! (every s from 1.3 to 1.8 held), s = 1.3 gave T_wnd 332 s and saved 32.7%, s = 1.8
//! gave 239 s and saved 0.8%. (Below s = 2 a plan is now simulated over at least
//! twelve cycles, `crate::study::cycles_to_show`, and at W = 16 with no window none
//! holds: a backlog error grows by 1/(s − 1) a cycle there.) **Why a search.** A recovery must apply the backlog
//! R_gen · (T_wnd − T_apl) = s · R_gen · T_RTO within T_RTO, but a backlog's apply
//! time is not proportional to its size (a larger backlog folds more and sweeps
//! its pages more densely: on 8 drives at W = 160 a 262 MB backlog took 67 s, a
//! 505 MB one 73 s), so no single measurement predicts the interval that holds;
//! each plan tried is simulated in full (the timeline and 1,000 trials).
//!
//! **How.** s never exceeds s_max, the speed-up measured by applying full windows
//! back to back (a plan never assumes a rate nothing measured). When s_max ≥ 2 the
//! plans searched are s ∈ [2, s_max] (T_wnd from 4 · T_RTO up to k(s_max) · T_RTO,
//! growing with s: the largest s that holds). The plans at s < 2 are left out
//! then: each has the interval of the plan at s / (s − 1) > 2 (the same k) or a
//! longer one than k(s_max), which the paper's model (batches applying at s_max ×
//! R_gen) says cannot hold. A short simulation may still accept one (W = 160 with
//! no window: s_max = 2.39 allows 239 s, yet s = 1.5, T_wnd 266 s, held over one
//! cycle), but such a plan's first batch starts from the backlog s · R_gen · T_RTO,
//! below the one its batches settle at, and below s = 2 an error in the backlog
//! grows from cycle to cycle. When s_max < 2 the plans are s ∈ [[`MIN_SPEEDUP`],
//! s_max] (T_wnd shrinking with s: the smallest s that holds), each simulated over
//! at least twelve cycles (`crate::study::cycles_to_show`). Bisection on ln T_wnd narrows the bracket between
//! the longest interval known to hold (at first the branch's shortest, not yet
//! tried) and the shortest known to fail (at first the branch's longest, not
//! tried: it is the dearest to simulate) until they are within
//! [`INTERVAL_RESOLUTION`]; if nothing held, the shortest interval is tried last,
//! and when it fails no plan holds (the configuration is refused). That is at most
//! 1 + ⌈log₂(ln(k_longest / k_shortest) / ln(1 + INTERVAL_RESOLUTION))⌉
//! simulations (8 for s_max = 30). It assumes that holding is monotone in T_wnd (a
//! longer interval leaves a larger backlog); where it is not, the search may stop
//! short of the frontier, never beyond it: only a simulated plan that held is
//! accepted.

/// The smallest speed-up tried (when the measured one is below 2): a plan below it
/// would have the volume applying for more than 1/s = 95% of each batch interval,
/// and T_wnd = s²/(s − 1) · T_RTO grows without bound as s approaches 1.
pub const MIN_SPEEDUP: f64 = 1.05;

/// The search stops when the longest interval known to hold and the shortest
/// known to fail are within this fraction of each other.
pub const INTERVAL_RESOLUTION: f64 = 0.02;

/// T_wnd / T_RTO of the plan at speed-up `s` (> 1): s²/(s − 1).
pub fn interval_ratio(s: f64) -> f64 {
    s * s / (s - 1.0)
}

/// The speed-up whose plan has interval ratio `k` (≥ 4): the root of
/// s²/(s − 1) = k at or above 2 (`high`) or at or below 2.
pub fn speedup_for_interval(k: f64, high: bool) -> f64 {
    let root = (k * k - 4.0 * k).max(0.0).sqrt();
    if high {
        (k + root) / 2.0
    } else {
        (k - root) / 2.0
    }
}

/// What the search needs of a simulated plan.
pub trait Verdict {
    /// Whether the plan held (kept up and held the RTO in every trial, no
    /// acknowledged transaction lost).
    fn held(&self) -> bool;
}

/// What the search found.
pub struct Found<T> {
    /// The plan with the longest interval that held, with its s.
    pub held: Option<(f64, T)>,
    /// The plan with the shortest interval that failed, with its s (`None` when
    /// none did).
    pub failed: Option<(f64, T)>,
    /// Plans simulated.
    pub simulations: u32,
}

/// The speed-ups searched for `max_speedup`: (the shortest interval's, the
/// longest's, whether they are on the branch s ≥ 2).
fn branch(max_speedup: f64) -> (f64, f64, bool) {
    if max_speedup >= 2.0 {
        (2.0, max_speedup, true)
    } else {
        (max_speedup, MIN_SPEEDUP.min(max_speedup), false)
    }
}

/// The plan with the longest interval at s ≤ `max_speedup` (see the module
/// documentation) for which `simulate` holds, to [`INTERVAL_RESOLUTION`].
pub fn longest_holding<T: Verdict, E>(
    max_speedup: f64,
    mut simulate: impl FnMut(f64) -> Result<T, E>,
) -> Result<Found<T>, E> {
    let mut found = Found {
        held: None,
        failed: None,
        simulations: 0,
    };
    let mut try_at = |s: f64, found: &mut Found<T>| -> Result<bool, E> {
        let outcome = simulate(s)?;
        found.simulations += 1;
        let held = outcome.held();
        if held {
            found.held = Some((s, outcome));
        } else {
            found.failed = Some((s, outcome));
        }
        Ok(held)
    };
    let (shortest, longest, high) = branch(max_speedup);
    let (mut holds, mut fails) = (interval_ratio(shortest), interval_ratio(longest));
    while fails / holds > 1.0 + INTERVAL_RESOLUTION {
        let middle = (holds * fails).sqrt();
        if try_at(speedup_for_interval(middle, high), &mut found)? {
            holds = middle;
        } else {
            fails = middle;
        }
    }
    if found.held.is_none() {
        try_at(shortest, &mut found)?;
    }
    Ok(found)
}

/// The most simulations [`longest_holding`] runs for `max_speedup`.
pub fn max_simulations(max_speedup: f64) -> u32 {
    let (shortest, longest, _) = branch(max_speedup);
    let span = (interval_ratio(longest) / interval_ratio(shortest)).ln();
    let halvings = (span / (1.0 + INTERVAL_RESOLUTION).ln()).log2().ceil();
    1 + halvings.max(0.0) as u32
}
