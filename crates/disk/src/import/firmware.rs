//! `disksim_disk` (controller, cache, queue) → [`FirmwareSpec`].

use super::fields::{bad, Fields, Schema};
use super::ImportError;
use crate::spec::{
    BusPolicySpec, CacheSpec, FirmwareSpec, OverheadSpec, QueueSpec, ReadAheadMode,
    SchedulingPolicy,
};
use spinstack_param::{Block, ParamFile};
use std::collections::HashMap;

pub(super) const DISK_SCHEMA: Schema = Schema {
    used: &[
        "Model",
        "Scheduler",
        "Max queue length",
        "Per-request overhead time",
        "Time scale for overheads",
        "Bulk sector transfer time",
        "Hold bus entire read xfer",
        "Hold bus entire write xfer",
        "Never disconnect",
        "Allow almost read hits",
        "Allow sneaky full read hits",
        "Allow sneaky partial read hits",
        "Allow sneaky intermediate read hits",
        "Allow write prebuffering",
        "Allow read hits on write data",
        "Preseeking level",
        "Number of buffer segments",
        "Maximum number of write segments",
        "Segment size (in blks)",
        "Use separate write segment",
        "Low (write) water mark",
        "High (read) water mark",
        "Set watermark by reqsize",
        "Enable caching in buffer",
        "Buffer continuous read",
        "Minimum read-ahead (blks)",
        "Maximum read-ahead (blks)",
        "Read-ahead over requested",
        "Read-ahead on idle hit",
        "Read any free blocks",
        "Fast write level",
        "Immediate buffer read",
        "Immediate buffer write",
        "Combine seq writes",
        "Stop prefetch in sector",
        "Disconnect write if seek",
        "Write hit stop prefetch",
        "Read directly to buffer",
        "Immed transfer partial hit",
        "Read hit over. after read",
        "Read hit over. after write",
        "Read miss over. after read",
        "Read miss over. after write",
        "Write hit over. after read",
        "Write hit over. after write",
        "Write miss over. after read",
        "Write miss over. after write",
        "Read completion overhead",
        "Write completion overhead",
        "Data preparation overhead",
        "First reselect overhead",
        "Other reselect overhead",
        "Read disconnect afterread",
        "Read disconnect afterwrite",
        "Write disconnect overhead",
        "Extra write disconnect",
        "Extradisc command overhead",
        "Extradisc disconnect overhead",
        "Extradisc inter-disconnect delay",
        "Extradisc 2nd disconnect overhead",
        "Extradisc seek delta",
        "Minimum seek delay",
    ],
    // Reporting only, or read only by cylinder-mapping schedulers / nothing at all.
    ignored: &[
        "Print stats",
        "Avg sectors per cylinder",
        "Calc sector by sector",
    ],
};

/// Parameters of the on-board `disksim_ioqueue`; only the policy matters with
/// FCFS (see the notes §4.6), the rest only shape other policies.
const QUEUE_SCHEMA: Schema = Schema {
    used: &["Scheduling policy"],
    ignored: &[
        "Cylinder mapping strategy",
        "Write initiation delay",
        "Read initiation delay",
        "Sequential stream scheme",
        "Maximum concat size",
        "Overlapping request scheme",
        "Sequential stream diff maximum",
        "Scheduling timeout scheme",
        "Timeout time/weight",
        "Timeout scheduling",
        "Scheduling priority scheme",
        "Priority scheduling",
    ],
};

/// Per-sector host-link times of the bus the disk hangs on, in ms.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct BusTimes {
    pub read_ms: f64,
    pub write_ms: f64,
}

pub(super) fn firmware(
    file: &ParamFile,
    defs: &HashMap<&str, &Block>,
    f: &Fields,
    bus: BusTimes,
) -> Result<FirmwareSpec, ImportError> {
    for name in [
        "Allow sneaky full read hits",
        "Allow sneaky partial read hits",
        "Allow sneaky intermediate read hits",
        "Allow write prebuffering",
    ] {
        f.must_be_zero(name)?;
    }
    let bulk = f.duration_ms("Bulk sector transfer time")?;
    let read_ms = bus.read_ms.max(bulk);
    let write_ms = bus.write_ms.max(bulk);
    Ok(FirmwareSpec {
        bus_sector_transfer_ms: read_ms,
        bus_write_sector_transfer_ms: (write_ms != read_ms).then_some(write_ms),
        per_request_overhead_ms: f.duration_ms("Per-request overhead time")?,
        overhead_time_scale: f.float_in(
            "Time scale for overheads",
            0.0..=1.0e6,
            "expected a scale factor on the overheads of 0 to 1,000,000",
        )?,
        overheads: overheads(f)?,
        bus: BusPolicySpec {
            hold_bus_for_whole_read: f.flag("Hold bus entire read xfer")?,
            hold_bus_for_whole_write: f.flag("Hold bus entire write xfer")?,
            never_disconnect: f.flag("Never disconnect")?,
            zero_latency_track_whole_before_bus: false,
            write_through_seek_after_data: false,
        },
        cache: cache(f)?,
        queue: QueueSpec {
            max_queue_length: queue_length(f)?,
            policy: policy(file, defs, f)?,
        },
        immediate_buffer_read: f.flag("Immediate buffer read")?,
        immediate_buffer_write: f.flag("Immediate buffer write")?,
    })
}

fn overheads(f: &Fields) -> Result<OverheadSpec, ImportError> {
    Ok(OverheadSpec {
        read_hit_after_read_ms: f.duration_ms("Read hit over. after read")?,
        read_hit_after_write_ms: f.duration_ms("Read hit over. after write")?,
        read_miss_after_read_ms: f.duration_ms("Read miss over. after read")?,
        read_miss_after_write_ms: f.duration_ms("Read miss over. after write")?,
        write_hit_after_read_ms: f.duration_ms("Write hit over. after read")?,
        write_hit_after_write_ms: f.duration_ms("Write hit over. after write")?,
        write_miss_after_read_ms: f.duration_ms("Write miss over. after read")?,
        write_miss_after_write_ms: f.duration_ms("Write miss over. after write")?,
        read_completion_ms: f.duration_ms("Read completion overhead")?,
        write_completion_ms: f.duration_ms("Write completion overhead")?,
        data_preparation_ms: f.duration_ms("Data preparation overhead")?,
        first_reselect_ms: f.duration_ms("First reselect overhead")?,
        other_reselect_ms: f.duration_ms("Other reselect overhead")?,
        read_disconnect_after_read_ms: f.duration_ms("Read disconnect afterread")?,
        read_disconnect_after_write_ms: f.duration_ms("Read disconnect afterwrite")?,
        write_disconnect_ms: f.duration_ms("Write disconnect overhead")?,
        extra_write_disconnect: f.flag("Extra write disconnect")?,
        extra_disconnect_command_ms: f.duration_ms("Extradisc command overhead")?,
        extra_disconnect_ms: f.duration_ms("Extradisc disconnect overhead")?,
        extra_inter_disconnect_ms: f.duration_ms("Extradisc inter-disconnect delay")?,
        extra_second_disconnect_ms: f.duration_ms("Extradisc 2nd disconnect overhead")?,
        extra_disconnect_seek_delta_ms: f.duration_ms("Extradisc seek delta")?,
        minimum_seek_delay_ms: f.duration_ms("Minimum seek delay")?,
    })
}

fn cache(f: &Fields) -> Result<CacheSpec, ImportError> {
    let read_ahead = match f.int("Buffer continuous read")? {
        0 => ReadAheadMode::Off,
        1 => ReadAheadMode::StopAtTrackEnd,
        2 => ReadAheadMode::StopAtCylinderEnd,
        3 => ReadAheadMode::Continuous,
        4 => ReadAheadMode::ToEndOfNextTrack,
        v => {
            return Err(bad(
                f.need("Buffer continuous read")?,
                format!("must be 0..4, found {v}"),
            ))
        }
    };
    let over = f.int("Read-ahead over requested")?;
    if !(-1..=1).contains(&over) {
        return Err(bad(
            f.need("Read-ahead over requested")?,
            format!("must be -1, 0 or 1, found {over}"),
        ));
    }
    let enabled = f.flag("Enable caching in buffer")?;
    let segments = f.count_at_most(
        "Number of buffer segments",
        crate::spec_check::CACHE_SEGMENTS_MAX,
        "at most 4096 buffer segments",
    )?;
    let segment_sectors = f.count_at_most(
        "Segment size (in blks)",
        crate::spec_check::SEGMENT_SECTORS_MAX,
        "at most 16,777,216 sectors (8 GiB) a segment",
    )?;
    for (name, value) in [
        ("Number of buffer segments", segments),
        ("Segment size (in blks)", segment_sectors),
    ] {
        if enabled && value == 0 {
            return Err(bad(
                f.need(name)?,
                "is 0, but the cache is enabled: an enabled cache needs at least one \
                 segment of at least one sector"
                    .into(),
            ));
        }
    }
    let water_mark = |name: &str| {
        f.float_in(
            name,
            0.0..=1.0,
            "expected a water mark: a fraction of the buffer, 0 to 1",
        )
    };
    Ok(CacheSpec {
        enabled,
        segments,
        segment_sectors,
        max_write_segments: f.count("Maximum number of write segments")?,
        separate_write_segment: f.flag("Use separate write segment")?,
        low_water_mark: water_mark("Low (write) water mark")?,
        high_water_mark: water_mark("High (read) water mark")?,
        watermark_by_request_size: f.flag("Set watermark by reqsize")?,
        read_ahead,
        min_read_ahead_sectors: f.count("Minimum read-ahead (blks)")?,
        max_read_ahead_sectors: f.count("Maximum read-ahead (blks)")?,
        read_ahead_over_requested: over as i32,
        read_ahead_on_idle_hit: f.flag("Read-ahead on idle hit")?,
        read_any_free_blocks: f.flag("Read any free blocks")?,
        allow_almost_read_hits: f.flag("Allow almost read hits")?,
        read_hits_on_write_data: f.flag("Allow read hits on write data")?,
        fast_write_level: level(f, "Fast write level")?,
        combine_sequential_writes: f.flag("Combine seq writes")?,
        stop_prefetch_in_sector: f.flag("Stop prefetch in sector")?,
        disconnect_write_if_seek: f.flag("Disconnect write if seek")?,
        write_hit_stops_prefetch: f.flag("Write hit stop prefetch")?,
        read_directly_to_buffer: f.flag("Read directly to buffer")?,
        immediate_transfer_partial_hit: f.flag("Immed transfer partial hit")?,
        preseek_level: level(f, "Preseeking level")?,
        abandon_read_ahead_positioning: false,
        almost_read_hits_ahead_of_prefetch: false,
        read_hit_keeps_read_ahead: false,
    })
}

/// `Max queue length`: 1 to [`crate::spec_check::QUEUE_LENGTH_MAX`] requests.
fn queue_length(f: &Fields) -> Result<u32, ImportError> {
    let length = f.count_at_most(
        "Max queue length",
        crate::spec_check::QUEUE_LENGTH_MAX,
        "a drive queues 1 to 65,536 requests",
    )?;
    if length == 0 {
        return Err(bad(
            f.need("Max queue length")?,
            "is 0: a drive queues 1 to 65,536 requests".into(),
        ));
    }
    Ok(length)
}

/// A 0, 1 or 2 level.
fn level(f: &Fields, name: &str) -> Result<u8, ImportError> {
    match f.int(name)? {
        v @ 0..=2 => Ok(v as u8),
        v => Err(bad(f.need(name)?, format!("must be 0, 1 or 2, found {v}"))),
    }
}

fn policy(
    file: &ParamFile,
    defs: &HashMap<&str, &Block>,
    f: &Fields,
) -> Result<SchedulingPolicy, ImportError> {
    let p = f.need("Scheduler")?;
    let block = p.value.as_block().ok_or_else(|| {
        bad(
            p,
            format!(
                "expected a disksim_ioqueue block, found {}",
                p.value.kind_name()
            ),
        )
    })?;
    if file.base_type(defs, &block.type_name) != "disksim_ioqueue" {
        return Err(bad(
            p,
            format!(
                "expected a disksim_ioqueue block, found '{}'",
                block.type_name
            ),
        ));
    }
    let q = Fields::new(block, file.effective_params(defs, block), &QUEUE_SCHEMA)?;
    q.unused_durations(&["Write initiation delay", "Read initiation delay"])?;
    match q.int("Scheduling policy")? {
        1 => Ok(SchedulingPolicy::Fcfs),
        8 => Ok(SchedulingPolicy::Sptf),
        v => Err(bad(
            q.need("Scheduling policy")?,
            format!("scheduling policy {v} is not supported (1 = FCFS, 8 = SPTF)"),
        )),
    }
}
