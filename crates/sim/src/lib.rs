//! # spinstack-sim: units, requests, the event engine, statistics, traces, workloads
//!
//! **What it models.** Virtual time: one clock in integer nanoseconds shared by many
//! components (thousands of drives and the layers above them). Requests go down,
//! completions come up.
//!
//! **Invariants.** No wall clock inside; a run is a pure function of its inputs and
//! its seed; events at equal times are served in the order they were scheduled.
//!
//! **What it does not model.** Anything about a particular device: that is the
//! business of the crates that implement [`device::BlockDevice`].

pub mod device;
pub mod request;
pub mod stats;
pub mod trace;
pub mod units;
