//! # spinstack-lab: the experiments that reproduce the papers
//!
//! **What it models.** Nothing new: it drives the disk model (and later the volume,
//! file-system and replica layers) with the workloads each paper describes, measures
//! what the paper measured, and writes the paper's number next to ours. One module
//! per figure or table under [`experiments`] (the validation paper's boundary and
//! zero-latency tests wrap spinstack-extract's data functions); the [`harness`] writes each one's
//! `data.csv`, `plot.svg`/`plot.png`, `summary.md` and `summary.json`; [`report`]
//! gathers them into one page.
//!
//! **Invariants.** Every experiment is a pure function of its [`harness::Scale`] and
//! seed: the same command twice writes byte-identical files. No experiment reads a
//! file from outside the project (drives come from the built-in catalog). Claims are
//! checked against a stated tolerance (10% relative unless the paper's value is zero
//! or a range, which get an absolute bound) and a miss is reported with its reason, never tuned away.
//! A verdict is always derived from the claim's numbers, never stored and read back;
//! only claims of kind `check` count (inputs, calibrations and rules are decided by
//! construction).
//! `tests/pinned.rs` pins every experiment's headline numbers.
//!
//! **What it does not model.** Host-side costs the papers' testbeds had (device-driver
//! and SCSI adapter overheads between requests): requests are issued at the instant
//! the previous one completes.

pub mod claim;
pub mod driver;
pub mod drives;
pub mod experiments;
pub mod harness;
pub mod plot;
pub mod report;
pub mod table;

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The I/O error is part of the message, not a separate cause, so that it is
    /// printed once.
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("unknown experiment `{id}` (known: {known})")]
    UnknownExperiment { id: String, known: String },
    #[error("drive `{name}`: {problem}")]
    Drive { name: String, problem: String },
    #[error("experiment {id}: plotting failed: {problem}")]
    Plot { id: String, problem: String },
    #[error("experiment {id}: {problem}")]
    Run { id: String, problem: String },
    #[error("{path}: not a summary this version can read: {problem}")]
    BadResult { path: PathBuf, problem: String },
    #[error("{path}: no experiment results found (run `spinstack reproduce --all` first)")]
    NoResults { path: PathBuf },
}

pub use experiments::{all, find};
