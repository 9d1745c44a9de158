//! # spinstack-serve: a volume served over NBD
//!
//! **What it does.** Puts a store (a persistent array from `spinstack-array`, or any
//! [`BlockStore`](spinstack_store::BlockStore)) behind the NBD server of
//! `spinstack-nbd`, optionally paced in real time by the drive model of the same
//! volume, and answers control commands (status, fail, rebuild, scrub) while serving.
//!
//! **Modules.** [`backend`]: commands on the store; [`pacer`]: replies held until the
//! timed model completes them; [`latency`]: response-time percentiles in bounded
//! memory.
//!
//! **Invariants.** The data path never waits for the model (bytes are applied in
//! arrival order under one lock), and a reply never leaves before its data was
//! applied; a flush's reply means every earlier acknowledged write on every
//! connection is durable.

pub mod backend;
pub mod control;
pub mod latency;
pub mod model;
pub mod pacer;

pub use backend::StoreBackend;
pub use latency::{LatencyHistogram, LatencySummary};
pub use pacer::{ModelSnapshot, Pacer};
