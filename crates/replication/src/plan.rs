//! The batch plan of the paper's §3.1: how long the secondary may leave its data
//! volume asleep (the batch interval T_wnd) and how long each batch applies for
//! (T_apl), given the primary's log generation rate R_gen, the secondary's log
//! application rate R_apl and the recovery time objective.
//!
//! With T_RTO the part of the RTO left for applying log once the spin-up and
//! spin-down penalties are taken out (a disaster may strike while the volume
//! spins down: it must finish, spin up again, then apply):
//!
//! ```text
//! T_RTO = RTO − T_up − T_down
//! T_wnd = R_apl² / ((R_apl − R_gen) · R_gen) · T_RTO
//! T_apl = R_apl / (R_apl − R_gen) · T_RTO
//! ```
//!
//! Why it holds the RTO: a batch catches up on the backlog while log keeps
//! arriving, so in steady state it applies for T_apl = R_gen · T_wnd / R_apl; the
//! backlog is largest just before the next batch, R_gen · (T_wnd − T_apl), and
//! applying it takes exactly T_RTO.
//!
//! The plan is refused (never silently clipped) when R_apl ≤ R_gen (the batches
//! could never catch up), RTO ≤ T_up + T_down (a disaster during a spin-down
//! could not be recovered in time: the Ultrastar 36Z15's 26 s + 15 s against an
//! RTO of 30 s) or the interval is beyond any representable time. It is computed
//! through s = R_apl / R_gen (T_wnd = s² / (s − 1) · T_RTO), which does not
//! overflow where R_apl² would.

use serde::Serialize;
use spinstack_sim::units::Nanoseconds;

/// What the planner needs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PlanInput {
    /// Log generation rate of the primary, bytes per second.
    pub r_gen_bytes_per_s: f64,
    /// Log application rate of the secondary, bytes of (uncompacted) log per second.
    pub r_apl_bytes_per_s: f64,
    pub rto: Nanoseconds,
    /// Time to leave standby (spin up).
    pub spin_up: Nanoseconds,
    /// Time to enter standby (spin down).
    pub spin_down: Nanoseconds,
}

/// The batch configuration.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BatchPlan {
    /// RTO − spin-up − spin-down, seconds.
    pub apply_budget_s: f64,
    /// T_wnd: time from one batch's start to the next, seconds.
    pub batch_interval_s: f64,
    /// T_apl: how long each batch applies, seconds.
    pub apply_time_s: f64,
    /// R_apl / R_gen.
    pub apply_speedup: f64,
}

/// Why no plan exists.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PlanError {
    #[error(
        "RTO {rto_s} s cannot be held: the data volume's spin-up ({spin_up_s} s) plus \
         spin-down ({spin_down_s} s) already take {needed_s} s, so a disaster during a \
         spin-down could not be recovered in time; choose an RTO above {needed_s} s or a \
         standby mode with shorter transitions"
    )]
    RtoTooShort {
        rto_s: f64,
        spin_up_s: f64,
        spin_down_s: f64,
        needed_s: f64,
    },
    #[error(
        "the secondary applies log at {r_apl:.0} B/s, not faster than the primary generates \
         it ({r_gen:.0} B/s): deferred batches could never catch up (a larger window \
         buffer compacts more)"
    )]
    ApplyNotFaster { r_gen: f64, r_apl: f64 },
    #[error("{what} must be a positive finite number, got {value}")]
    BadInput { what: &'static str, value: f64 },
    #[error(
        "R_gen {r_gen} B/s and R_apl {r_apl} B/s give a batch interval beyond any \
         representable time"
    )]
    OutOfRange { r_gen: f64, r_apl: f64 },
}

/// The plan for `input`, or why there is none.
pub fn plan(input: &PlanInput) -> Result<BatchPlan, PlanError> {
    for (what, value) in [
        ("R_gen", input.r_gen_bytes_per_s),
        ("R_apl", input.r_apl_bytes_per_s),
        ("RTO", input.rto.as_secs_f64()),
    ] {
        if !(value.is_finite() && value > 0.0) {
            return Err(PlanError::BadInput { what, value });
        }
    }
    let rto_s = input.rto.as_secs_f64();
    let spin_up_s = input.spin_up.as_secs_f64();
    let spin_down_s = input.spin_down.as_secs_f64();
    let needed_s = spin_up_s + spin_down_s;
    if rto_s <= needed_s {
        return Err(PlanError::RtoTooShort {
            rto_s,
            spin_up_s,
            spin_down_s,
            needed_s,
        });
    }
    let (r_gen, r_apl) = (input.r_gen_bytes_per_s, input.r_apl_bytes_per_s);
    if r_apl <= r_gen {
        return Err(PlanError::ApplyNotFaster { r_gen, r_apl });
    }
    let budget = rto_s - needed_s;
    // In terms of s = R_apl / R_gen (T_wnd = s² / (s − 1) · T_RTO, T_apl = s / (s − 1)
    // · T_RTO): the rates' own products overflow for rates near f64's range.
    let speedup = r_apl / r_gen;
    let per_budget = speedup / (speedup - 1.0);
    let batch = BatchPlan {
        apply_budget_s: budget,
        batch_interval_s: speedup * per_budget * budget,
        apply_time_s: per_budget * budget,
        apply_speedup: speedup,
    };
    if !(batch.batch_interval_s.is_finite() && batch.apply_time_s.is_finite()) {
        return Err(PlanError::OutOfRange { r_gen, r_apl });
    }
    Ok(batch)
}
