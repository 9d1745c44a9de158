//! # spinstack-sim: units, requests, the event engine, statistics, traces, workloads
//!
//! **What it models.** Virtual time: one clock in integer nanoseconds shared by many
//! components (thousands of drives and the layers above them). Requests go down,
//! completions come up.
//!
//! **Invariants.** No wall clock inside; a run is a pure function of its inputs and
//! its seed; events at equal times are served in the order they were scheduled.
//!
//! **Modules.** [`units`], [`request`] and [`device`] are the contracts: requests
//! (read, write, trim, flush; force-unit-access), completions with a status and,
//! from drives, a drive detail; the `BlockDevice` trait with its control commands
//! (power, failure) routed down member paths. [`engine`] runs many devices on one
//! clock; [`driver`] is the one event loop over it (a `Host` whose callbacks issue
//! requests and set wake-ups; closed and open loops are two such hosts);
//! [`members`] is the member bookkeeping every layer over devices shares (parent
//! and child tables, per-member FIFOs, merged requests, delayed work);
//! [`rng`] is the workspace's one seeded random-number source; [`workload`] makes
//! seeded synthetic requests; [`trace`] reads DiskSim validate
//! traces; [`stats`] summarises response times and computes DiskSim's demerit;
//! [`fake`] is a fixed-service device for tests and benchmarks.
//!
//! **What it does not model.** Anything about a particular device: that is the
//! business of the crates that implement [`device::BlockDevice`].

pub mod device;
pub mod driver;
pub mod engine;
pub mod fake;
pub mod input_file;
pub mod members;
pub mod parallel;
pub mod request;
pub mod rng;
pub mod stats;
pub mod trace;
pub mod units;
pub mod workload;
