//! Tests of `spinstack_volume::bytes`, the real-bytes RAID, built as one test binary.
//! Randomized tests use a seeded `Xoshiro256StarStar` and print their seed (and the
//! operation index) on failure; `VOLUME_MODEL_OPS` and `VOLUME_MODEL_SEED` replay or
//! lengthen the model runs.

mod bad_input;
mod common;
mod crash;
mod dab;
mod failures;
mod member_errors;
mod model;
mod scrub;
