//! # spinstack-replication: power-aware disaster recovery (Goda and Kitsuregawa)
//!
//! **What it models.** A primary site ships its database log synchronously to a
//! secondary (RPO = 0: a commit is acknowledged only once the secondary's log
//! volume holds its log). The secondary keeps its log volume always on and applies
//! the log to its data volume either at once, in LSN order (conventional), or in
//! batches after eager compaction in a window buffer (power-aware): records of the
//! same row folded into one, the rest sorted by physical page. Between batches the
//! data volume's drives sleep; the batch plan (§3.1) keeps every failover within
//! the RTO. Everything that takes time on a disk is simulated on the drive model
//! (`spinstack-disk`, its power meter with the paper's Table 2 figures):
//!
//! * [`log`], [`tpcc`], [`pgwal`] — log records and their sources: a TPC-C
//!   generator and a reader of PostgreSQL's `pg_waldump` output;
//! * [`compact`] — eager compaction;
//! * [`plan`] — the batch plan (T_wnd, T_apl) and its refusals;
//! * [`search`] — the plan with the longest batch interval that holds in
//!   simulation;
//! * [`buffer_pool`], [`volume`], [`apply`] — the database buffer pool, the data
//!   volume of N drives and the appliers;
//! * [`site`] — the primary's R_gen and the conventional secondary;
//! * [`timeline`], [`failover`], [`energy`] — the power-aware secondary over time,
//!   disaster trials, energy bookkeeping;
//! * [`study`] — one configuration end to end, and a parallel grid of them.
//!
//! **Invariants** (tested): compaction leaves every row with the final image the
//! original log leaves; the plan's T_wnd and T_apl are the paper's formulas; every
//! drive's time in states and transitions adds up to the run (asserted in every
//! run); in every accepted configuration each failover trial holds the RTO and
//! loses no acknowledged transaction (only a simulated plan that held is accepted;
//! reported, and asserted in tests); a run is a pure function of its configuration
//! and seed.
//!
//! **What it does not do.** No real database engine: the primary's throughput is
//! its data volume's I/O rate over the I/O per transaction its buffer pool
//! produces (the CPU and the log volume are assumed never to limit it); redo does
//! not read log from the log volume (its cost is not charged); the 6,400 data
//! drives of the paper's configuration are represented by a simulated volume of a
//! few drives (8 by default, an assumption; see [`energy`]); the inter-site link
//! never fails.

pub mod apply;
pub mod buffer_pool;
pub mod compact;
pub mod energy;
pub mod failover;
pub mod log;
pub mod pgwal;
pub mod plan;
pub mod search;
pub mod site;
pub mod study;
pub mod timeline;
pub mod tpcc;
pub mod volume;
