//! Tests of `spinstack_volume::map`, one module per level plus the plans and the error
//! paths, built as one test binary (one link instead of eight). Randomized tests are
//! proptest properties: a failing case prints its (shrunk) inputs, including any
//! `seed`, so it can be replayed.

mod common;
mod errors;
mod executor;
mod logical_tracks;
mod mirror;
mod plan_read;
mod plan_write;
mod raid0;
mod raid10;
mod raid5;
mod track_aligned;
