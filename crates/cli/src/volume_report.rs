//! What `spinstack simulate` reports about a volume after a run: its level, capacity
//! and each member's traffic, as JSON and as text. Both ways of driving a volume (a
//! synthetic workload, a replayed trace) end with this report.

use serde::Serialize;
use spinstack_sim::device::BlockDevice;
use spinstack_volume::timed::DabCounters;
use spinstack_volume::{build, config};

/// A volume's level, members and what each member received.
#[derive(Serialize, Debug)]
pub(crate) struct VolumeReport {
    file: String,
    level: &'static str,
    capacity_sectors: u64,
    members: Vec<MemberReport>,
    /// Raw drive sectors that hold neither data nor parity (parity levels).
    #[serde(skip_serializing_if = "Option::is_none")]
    unused_sectors: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    buffer: Option<DabCounters>,
    notes: Vec<String>,
}

#[derive(Serialize, Debug)]
pub(crate) struct MemberReport {
    name: String,
    requests: u64,
    sectors: u64,
    /// Member requests that covered exactly one whole track of the member.
    whole_track_requests: u64,
}

/// What a volume report needs from the build besides the volume itself.
pub(crate) struct BuiltNames {
    pub member_names: Vec<String>,
    pub notes: Vec<String>,
}

/// The volume's level, capacity and each member's traffic after a run.
pub(crate) fn volume_report(
    path: &std::path::Path,
    spec: &config::VolumeSpec,
    built: BuiltNames,
    volume: &build::Volume,
) -> VolumeReport {
    let BuiltNames {
        member_names,
        notes,
    } = built;
    let members = member_names
        .into_iter()
        .zip(volume.member_stats())
        .map(|(name, stats)| MemberReport {
            name,
            requests: stats.requests,
            sectors: stats.sectors,
            whole_track_requests: stats.whole_track_requests,
        })
        .collect();
    VolumeReport {
        file: path.display().to_string(),
        level: spec.level.name(),
        capacity_sectors: volume.capacity().0,
        members,
        unused_sectors: volume.unused_sectors().map(|s| s.0),
        buffer: volume.buffer_counters(),
        notes,
    }
}

/// The volume's lines of the text report.
pub(crate) fn print_volume(volume: &VolumeReport) {
    {
        println!(
            "{} of {} members, {} sectors{}",
            volume.level,
            volume.members.len(),
            volume.capacity_sectors,
            volume.unused_sectors.map_or(String::new(), |s| format!(
                " ({s} raw sectors hold neither data nor parity)"
            ))
        );
        println!("member  requests   sectors  whole-track  name");
        for (index, member) in volume.members.iter().enumerate() {
            println!(
                "{index:>6}  {:>8}  {:>8}  {:>11}  {}",
                member.requests, member.sectors, member.whole_track_requests, member.name
            );
        }
        if let Some(buffer) = &volume.buffer {
            println!("buffer: {buffer:?}");
        }
    }
}
