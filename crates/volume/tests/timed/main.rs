//! Tests of `spinstack_volume::timed`: each level in simulated time over
//! fixed-service devices (exact member traffic and times) and over catalog drives
//! (the track-aligned RAID-5's whole-track requests), plus randomized runs that
//! check every request completes once with the right status, with members failing.
//! A failing randomized test prints its seed.

mod buffer;
mod common;
mod delayed;
mod mirrored;
mod parity;
mod plug;
mod power;
mod randomized;
mod striped;
mod track_aligned;
