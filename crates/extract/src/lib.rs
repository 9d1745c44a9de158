//! # spinstack-extract: track-boundary extraction (overview written below)

pub mod map;
pub mod probe;
pub mod rng;
pub mod sim_probe;
pub mod truth;
pub mod scsi;
pub mod run;
pub mod timing;
