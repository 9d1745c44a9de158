//! What the two video-server experiments (traxtents §5.4) share: the stream rate,
//! the array, round length and start-up latency, the disk's streaming bandwidth,
//! and a deterministic parallel map for independent simulations.
//!
//! §5.4: a server fetches one I/O of `IOsize` per stream per round; a round lasts as
//! long as one I/O's worth of video plays (`IOsize` / bit rate), and a newly admitted
//! stream waits at most (D + 1) rounds on a D-disk array ("the worst-case startup
//! latency is round time times (D + 1)").

use super::fig1_efficiency::max_streaming_efficiency;
use crate::drives::{self, Zone};
use spinstack_disk::spec::DriveSpec;
use spinstack_sim::units::{Sectors, SECTOR_BYTES};

/// A 4 Mb/s stream, in bytes per second. The paper's "4 Mb/s" with 10^6 bits per
/// megabit (the networking convention); its "80 streams ... 40 MB/s" gives the
/// same 0.5 MB/s per stream.
pub const STREAM_BYTES_PER_SECOND: f64 = 500_000.0;

/// Disks in the paper's array (§5.4.1: "each containing 10 Quantum Atlas 10K II
/// disks").
pub const DISKS: u32 = 10;

/// The paper's I/O sizes: the first zone's track (264 KB) and two tracks (528 KB).
pub const PAPER_TRACK_KB: f64 = 264.0;

/// Seconds of video one I/O of `sectors` holds: the round length at that I/O size.
pub fn round_seconds(sectors: Sectors) -> f64 {
    (sectors.0 * SECTOR_BYTES) as f64 / STREAM_BYTES_PER_SECOND
}

/// Worst-case start-up latency on the array for rounds of `round_seconds`.
pub fn startup_seconds(round_seconds: f64) -> f64 {
    f64::from(DISKS + 1) * round_seconds
}

/// The first zone's streaming bandwidth in bytes per second: the media rate (one
/// track per revolution) times the share the track and cylinder skews leave (the
/// paper's "each disk's 40 MB/s streaming bandwidth").
pub fn streaming_bytes_per_second(spec: &DriveSpec, zone: &Zone) -> f64 {
    let track_bytes = (zone.sectors_per_track.0 * SECTOR_BYTES) as f64;
    let media = track_bytes / (drives::revolution(spec).as_ms_f64() / 1e3);
    media * max_streaming_efficiency(spec, zone)
}

/// Disk efficiency of `streams` streams per disk: the share of the streaming
/// bandwidth they use (the paper's "36 streams ... 45% ... efficiency" is 36 × 0.5
/// MB/s over 40 MB/s).
pub fn stream_efficiency(streams: u32, streaming_bytes_per_second: f64) -> f64 {
    f64::from(streams) * STREAM_BYTES_PER_SECOND / streaming_bytes_per_second
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves the round and start-up arithmetic: a 264 KB (528-sector) I/O holds
    // 270336 B / 500000 B/s = 0.540672 s of video, and 10 disks wait 11 rounds.
    #[test]
    fn round_and_startup_of_a_track() {
        let round = round_seconds(Sectors(528));
        assert!((round - 0.540672).abs() < 1e-9, "{round}");
        assert!((startup_seconds(round) - 5.947392).abs() < 1e-9);
    }
}
