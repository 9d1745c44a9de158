//! `DriveSpec`: everything that describes one drive model, as plain data.
//!
//! The spec is what the DiskSim importer produces and what the built-in catalog
//! stores (serialized as TOML). Times are kept as the facts were published:
//! milliseconds as `f64` with an `_ms` suffix; the model converts them to integer
//! picoseconds/nanoseconds once, when it is built. Sizes are in 512-byte sectors.

use serde::{Deserialize, Serialize};

/// A complete drive description.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriveSpec {
    /// Short catalog name, e.g. `atlas10k`.
    pub name: String,
    /// Human description: vendor, model, year.
    pub description: String,
    /// Where the figures come from and what was assumed (free text, one item per line).
    #[serde(default)]
    pub provenance: Vec<String>,
    pub layout: LayoutSpec,
    pub mechanics: MechanicsSpec,
    pub firmware: FirmwareSpec,
    #[serde(default)]
    pub power: PowerSpec,
}

/// Opens a provenance line that the user should see when the drive is loaded (a
/// file that loads but disagrees with itself): see [`DriveSpec::warnings`].
pub const WARNING_PREFIX: &str = "warning: ";

impl DriveSpec {
    /// The provenance lines that are warnings (without their prefix), for a
    /// command to print when it loads the drive.
    pub fn warnings(&self) -> impl Iterator<Item = &str> {
        self.provenance
            .iter()
            .filter_map(|line| line.strip_prefix(WARNING_PREFIX))
    }
}

// ---------------------------------------------------------------------------------
// Layout
// ---------------------------------------------------------------------------------

/// How LBNs are laid onto cylinders, surfaces and sectors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LayoutSpec {
    /// DiskSim's `dm_layout_g1`: zones of equal-size tracks, cylinder-major order,
    /// sparing schemes with slips and remapped defects.
    Zoned(ZonedLayoutSpec),
    /// Serpentine numbering (validation paper, Figure 2): within a band of cylinders
    /// LBNs run along one surface, then come back along the next surface; each
    /// surface may have its own track size.
    Serpentine(SerpentineLayoutSpec),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZonedLayoutSpec {
    pub surfaces: u32,
    pub cylinders: u32,
    pub surface_order: SurfaceOrder,
    pub sparing: SparingScheme,
    /// Cylinders per sparing range (scheme 8 only; DiskSim's `Rangesize for sparing`).
    #[serde(default = "one")]
    pub sparing_range_cylinders: u32,
    pub zones: Vec<ZoneSpec>,
}

fn one() -> u32 {
    1
}

/// Which physical head a logical surface index lands on (DiskSim's mapping scheme).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SurfaceOrder {
    /// Scheme 0: head = logical surface index.
    Fixed,
    /// Scheme 1: on cylinders at an odd offset from the zone's first cylinder the
    /// heads run in reverse.
    ReverseOnOddZoneCylinder,
    /// Scheme 2: the same, with parity of the absolute cylinder number.
    ReverseOnOddCylinder,
}

/// DiskSim's sparing schemes that occur in real parameter sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SparingScheme {
    /// 1: `spares` whole spare tracks at the end of each zone; slips are track numbers.
    TracksPerZone,
    /// 2: `spares` spare sectors at the end of each cylinder.
    SectorsPerCylinder,
    /// 3: `spares` spare sectors at the end of each track.
    SectorsPerTrack,
    /// 7: spares at the end of the disk; slips only shift LBNs.
    SlipToEndOfDisk,
    /// 8: `spares` spare sectors at the end of each range of cylinders.
    SectorsPerCylinderRange,
    /// 9: `spares` spare sectors at the end of each zone.
    SectorsPerZone,
}

impl SparingScheme {
    /// DiskSim's number for the scheme.
    pub fn disksim_number(self) -> u32 {
        match self {
            SparingScheme::TracksPerZone => 1,
            SparingScheme::SectorsPerCylinder => 2,
            SparingScheme::SectorsPerTrack => 3,
            SparingScheme::SlipToEndOfDisk => 7,
            SparingScheme::SectorsPerCylinderRange => 8,
            SparingScheme::SectorsPerZone => 9,
        }
    }
}

/// One zone (DiskSim "band") of a zoned layout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZoneSpec {
    pub first_cylinder: u32,
    /// Inclusive.
    pub last_cylinder: u32,
    pub sectors_per_track: u32,
    /// Angle of the zone's first LBN, in sectors (DiskSim truncates to whole sectors).
    #[serde(default)]
    pub first_block_offset_sectors: u32,
    /// Physical sectors at the zone front that carry no LBN.
    #[serde(default)]
    pub empty_sectors_at_front: u64,
    #[serde(default)]
    pub track_skew_sectors: u32,
    #[serde(default)]
    pub cylinder_skew_sectors: u32,
    /// Spare units per sparing region; the unit depends on the scheme.
    #[serde(default)]
    pub spares: u64,
    /// Slipped units, zone-relative (tracks for scheme 1, sectors otherwise).
    #[serde(default)]
    pub slips: Vec<u64>,
    /// Remapped defects as (defective, replacement), in the same units as slips.
    #[serde(default)]
    pub defects: Vec<(u64, u64)>,
}

impl ZoneSpec {
    /// Cylinders of the zone (both ends count). Meaningful once the layout has
    /// checked that the range is not reversed; a reversed one counts as one.
    pub fn cylinders(&self) -> u64 {
        u64::from(self.last_cylinder.saturating_sub(self.first_cylinder)) + 1
    }

    /// Physical sectors of the zone on `surfaces` surfaces, spares and slips included.
    pub fn physical_sectors(&self, surfaces: u32) -> u64 {
        self.cylinders() * u64::from(surfaces) * u64::from(self.sectors_per_track)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SerpentineLayoutSpec {
    pub surfaces: u32,
    pub cylinders: u32,
    /// Cylinders in one serpentine band (32 on the Maxtor Atlas 10K V).
    pub band_cylinders: u32,
    #[serde(default)]
    pub track_skew_sectors: u32,
    #[serde(default)]
    pub surface_switch_skew_sectors: u32,
    pub zones: Vec<SerpentineZoneSpec>,
}

/// A zone of a serpentine layout: a cylinder range with one track size per surface.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SerpentineZoneSpec {
    pub first_cylinder: u32,
    /// Inclusive.
    pub last_cylinder: u32,
    /// Track size of each surface in this zone, indexed by surface.
    pub sectors_per_track_by_surface: Vec<u32>,
}

// ---------------------------------------------------------------------------------
// Mechanics
// ---------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MechanicsSpec {
    pub rpm: u32,
    pub seek: SeekSpec,
    pub head_switch_ms: f64,
    /// Added to every non-zero positioning time of a write; may be negative.
    #[serde(default)]
    pub write_settle_ms: f64,
}

/// How seek time depends on distance in cylinders.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SeekSpec {
    /// A measured curve, linearly interpolated (DiskSim `extracted`).
    Extracted { points: Vec<SeekPoint> },
    /// HP-style equation: `d < boundary`: a + b·√d, else c + e·d (DiskSim `hpl`).
    Hpl(HplSeek),
    /// `Hpl` with the first ten distances given explicitly (DiskSim `hplplus10`).
    HplPlus10 {
        hpl: HplSeek,
        first_ten_ms: Vec<f64>,
    },
    /// Curve fitted through published single-cylinder, average and full-stroke
    /// times (for drives known only from a data sheet).
    Published {
        single_cylinder_ms: f64,
        average_ms: f64,
        full_stroke_ms: f64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeekPoint {
    pub distance_cylinders: u32,
    pub time_ms: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HplSeek {
    pub boundary_cylinders: u32,
    pub short_base_ms: f64,
    pub short_sqrt_ms: f64,
    pub long_base_ms: f64,
    pub long_per_cylinder_ms: f64,
    /// Single-cylinder seek time, if the equation overrides it (V6 != -1).
    #[serde(default)]
    pub single_cylinder_ms: Option<f64>,
}

// ---------------------------------------------------------------------------------
// Firmware (controller, cache, queue, host link)
// ---------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FirmwareSpec {
    /// Host-link time per sector: max(bus block time, drive bulk sector transfer time).
    /// For writes, see `bus_write_sector_transfer_ms`.
    pub bus_sector_transfer_ms: f64,
    /// Host-link time per sector for writes, when it differs from reads: DiskSim's
    /// bus has separate `Read`/`Write block transfer time`s and picks one by the
    /// request's direction (hp_c2247a: 0.1701 read, 0.18686 write). `None` = writes
    /// use `bus_sector_transfer_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bus_write_sector_transfer_ms: Option<f64>,
    #[serde(default)]
    pub per_request_overhead_ms: f64,
    #[serde(default = "one_f64")]
    pub overhead_time_scale: f64,
    pub overheads: OverheadSpec,
    pub bus: BusPolicySpec,
    pub cache: CacheSpec,
    pub queue: QueueSpec,
    /// Zero-latency (access-on-arrival) reads.
    pub immediate_buffer_read: bool,
    /// Zero-latency (access-on-arrival) writes.
    pub immediate_buffer_write: bool,
}

impl FirmwareSpec {
    /// Whether the model reads with zero latency (from wherever the head lands): the
    /// drive's own flag, or DiskSim's "read any free blocks" with the cache on, which
    /// buffers a request's sectors in whatever order they pass the head (the DIXtrac
    /// Ultrastar 18ES has it, though the traxtents paper says the drive lacks
    /// zero-latency access).
    pub fn zero_latency_reads(&self) -> bool {
        self.zero_latency_reads_with_cache(self.cache.enabled)
    }

    /// [`FirmwareSpec::zero_latency_reads`] with the cache `caching` or not (a drive
    /// option may turn it off): the rule the firmware applies.
    pub fn zero_latency_reads_with_cache(&self, caching: bool) -> bool {
        self.immediate_buffer_read || (self.cache.read_any_free_blocks && caching)
    }

    /// The host link's rate in MB/s (10^6 bytes per second) for reads, from its time
    /// per sector; infinite for a zero time (the papers' "infinitely fast bus").
    pub fn host_link_mb_per_s(&self) -> f64 {
        spinstack_sim::units::SECTOR_BYTES as f64 / (self.bus_sector_transfer_ms * 1e-3) / 1e6
    }
}

fn one_f64() -> f64 {
    1.0
}

/// Controller overheads (DiskSim names in comments).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OverheadSpec {
    pub read_hit_after_read_ms: f64,
    pub read_hit_after_write_ms: f64,
    pub read_miss_after_read_ms: f64,
    pub read_miss_after_write_ms: f64,
    pub write_hit_after_read_ms: f64,
    pub write_hit_after_write_ms: f64,
    pub write_miss_after_read_ms: f64,
    pub write_miss_after_write_ms: f64,
    pub read_completion_ms: f64,
    pub write_completion_ms: f64,
    pub data_preparation_ms: f64,
    pub first_reselect_ms: f64,
    pub other_reselect_ms: f64,
    pub read_disconnect_after_read_ms: f64,
    pub read_disconnect_after_write_ms: f64,
    pub write_disconnect_ms: f64,
    /// 4.0's extra disconnect for non-sequential writes after writes.
    #[serde(default)]
    pub extra_write_disconnect: bool,
    #[serde(default)]
    pub extra_disconnect_command_ms: f64,
    #[serde(default)]
    pub extra_disconnect_ms: f64,
    #[serde(default)]
    pub extra_inter_disconnect_ms: f64,
    #[serde(default)]
    pub extra_second_disconnect_ms: f64,
    #[serde(default)]
    pub extra_disconnect_seek_delta_ms: f64,
    /// A non-sequential write's positioning takes at least this long.
    #[serde(default)]
    pub minimum_seek_delay_ms: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BusPolicySpec {
    pub hold_bus_for_whole_read: bool,
    pub hold_bus_for_whole_write: bool,
    pub never_disconnect: bool,
    /// A zero-latency read that reads a track out of LBN order (it began mid-track
    /// and wrapped) sends none of that track's blocks to the host until the whole
    /// track part is in the buffer: the blocks are "read into an intermediate
    /// buffer, assembled in ascending LBN order, and sent to the host" (traxtents
    /// §2.3), and the Atlas 10K II's measured track-aligned reads overlap only 3%
    /// of their bus transfer with media transfer (§5.2, Fig. 7). Off (DiskSim's
    /// behaviour): blocks go in LBN order as soon as they and every block before
    /// them are buffered. Not a DiskSim parameter; off for every imported drive.
    #[serde(default, skip_serializing_if = "is_false")]
    pub zero_latency_track_whole_before_bus: bool,
    /// A write-through write (write-back off, or forced unit access) starts its
    /// seek only once all its data has crossed the host link, and a queued write's
    /// data crosses only after the write before it completed; so the data transfer
    /// is never hidden behind positioning or another write's media work. The Atlas
    /// 10K II's measured track-sized writes (traxtents §5.2: 10.0 / 13.9 ms onereq,
    /// 10.2 / 13.8 ms tworeq, aligned / unaligned) exceed overhead + seek
    /// (+ rotational latency and head switch) + one revolution by about the 264 KB
    /// transfer at 160 MB/s (1.7 ms), with or without queueing. Off (DiskSim's
    /// behaviour): the seek starts when the command's overhead is done and the data
    /// arrives while the arm moves. Not a DiskSim parameter.
    #[serde(default, skip_serializing_if = "is_false")]
    pub write_through_seek_after_data: bool,
}

fn is_false(flag: &bool) -> bool {
    !*flag
}

/// Read-ahead policy (DiskSim `Buffer continuous read`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadAheadMode {
    /// 0: no read-ahead beyond the request.
    Off,
    /// 1: up to the maximum, stopping at the first head or cylinder change.
    StopAtTrackEnd,
    /// 2: up to the maximum, stopping at the first cylinder change.
    StopAtCylinderEnd,
    /// 3: up to the maximum.
    Continuous,
    /// 4: to the end of the track after the request (the maximum is not consulted).
    ToEndOfNextTrack,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheSpec {
    pub enabled: bool,
    pub segments: u32,
    pub segment_sectors: u32,
    pub max_write_segments: u32,
    pub separate_write_segment: bool,
    /// Read from the file but not modelled: the write water mark does not gate the
    /// media write (see `Drive::write_min_buffered`).
    pub low_water_mark: f64,
    pub high_water_mark: f64,
    pub watermark_by_request_size: bool,
    pub read_ahead: ReadAheadMode,
    pub min_read_ahead_sectors: u32,
    pub max_read_ahead_sectors: u32,
    /// DiskSim's `Read-ahead over requested` as written in the file (-1, 0 or 1).
    pub read_ahead_over_requested: i32,
    pub read_ahead_on_idle_hit: bool,
    pub read_any_free_blocks: bool,
    pub allow_almost_read_hits: bool,
    pub read_hits_on_write_data: bool,
    /// 0 = write-through, 1 and 2 = write-back.
    pub fast_write_level: u8,
    pub combine_sequential_writes: bool,
    /// Read from the file but not modelled: a pre-empted prefetch stops at once
    /// (see `Drive::cut_prefetch`).
    pub stop_prefetch_in_sector: bool,
    pub disconnect_write_if_seek: bool,
    pub write_hit_stops_prefetch: bool,
    pub read_directly_to_buffer: bool,
    pub immediate_transfer_partial_hit: bool,
    pub preseek_level: u8,
    /// A request arriving while the read-ahead is still positioning onto its next
    /// track (a head switch, or a cylinder switch) abandons that positioning at once:
    /// the arm is free at the arrival, on the track it was leaving. Off (DiskSim's
    /// behaviour): the request waits until the positioning in flight has ended,
    /// which costs a track-aligned read that follows another one up to a head or
    /// cylinder switch, exactly the delay alignment is meant to save. Not a DiskSim
    /// parameter; off for every imported drive.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub abandon_read_ahead_positioning: bool,
    /// A read whose first block the running read-ahead has not reached yet, but
    /// will read into its segment before it stops (the block lies between the
    /// prefetch's position and the segment's read-ahead limit), rides that
    /// read-ahead: the media keeps streaming and the read waits for its blocks as
    /// they come under the head. The blocks passed on the way go into the buffer
    /// only; the host gets the read's own blocks. A firmware reading ahead
    /// continuously into a segment it has claimed for that LBN range serves such a
    /// read from the running prefetch instead of stopping it and repositioning to
    /// a sector the head is about to read anyway. It does so only when the
    /// read-ahead reaches the first block no later than stopping, paying the
    /// command overhead and positioning would: a firmware that schedules by
    /// positioning time knows both, and does not wait revolutions for a block a
    /// new positioning reaches within one. DiskSim's `Allow almost read hits`
    /// (`disksim_diskcache.c`) asks only whether the block just before the read's
    /// first block is in the buffer already, so a read that skips a few sectors
    /// ahead of the prefetch (a RAID-5 member's next piece after the parity chunk
    /// it holds) is a miss there and, with the command overhead, loses a
    /// revolution. Off (DiskSim's behaviour) for every imported drive.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub almost_read_hits_ahead_of_prefetch: bool,
    /// A read served from the segment the read-ahead is filling (a whole hit,
    /// or a partial hit whose remaining blocks the read-ahead is bringing)
    /// keeps the read-ahead going to the later of its limit and the read's own
    /// (`Read-ahead on idle hit` or not: in DiskSim that flag concerns a hit on
    /// a segment whose read-ahead has already stopped). This is what DiskSim's
    /// controller does: the hit takes the running access over
    /// (`disk_buffer_attempt_access_swap` raises the segment's read-ahead limit
    /// and leaves the media access scheduled; `disk_check_hda_pending` then
    /// neither seeks nor releases the HDA while it runs), and what firmware
    /// streaming a sequential read from its buffer does. Off: such a hit stops
    /// the read-ahead at the end of the track it is reading (at once, for a
    /// whole hit without `Read-ahead on idle hit`), so a sequential reader's next
    /// read past that track misses and waits for the platter. Off is spinstack's
    /// older rule, kept for the DiskSim-imported drives although it is not
    /// DiskSim's: on, their validation demerits move hp_c2247a 0.0876 -> 0.0893
    /// ms, hp_c3323a 0.3052 -> 0.3065 (its bound), barracuda 0.3489 -> 0.3491,
    /// st41601n 0.0836 -> 0.0822 (the rest unchanged), no closer to the measured
    /// drives; the same reason keeps a hit on an idle segment from starting a
    /// read-ahead (`Drive::full_hit`). On for every hand-made catalog entry.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_hit_keeps_read_ahead: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchedulingPolicy {
    /// First come, first served.
    Fcfs,
    /// Shortest positioning time first (seek + rotation, computed by the drive).
    Sptf,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSpec {
    /// The most requests outstanding at the drive (tagged command queue depth).
    pub max_queue_length: u32,
    pub policy: SchedulingPolicy,
}

// ---------------------------------------------------------------------------------
// Power
// ---------------------------------------------------------------------------------

/// Power states and transitions. Defaults are generic 3.5-inch 10K RPM figures
/// and say so in `provenance`; catalog drives from the disaster-recovery paper
/// carry their own (its Table 2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerSpec {
    /// Power while seeking or transferring.
    pub active_watts: f64,
    /// Power while spinning with no request.
    pub idle_watts: f64,
    /// Standby levels, shallowest first (at least one, at most four).
    pub standby: Vec<StandbyLevelSpec>,
}

/// Most standby levels a drive may list.
pub const MAX_STANDBY_LEVELS: usize = 4;

/// One standby level: its power and the time and energy of entering and leaving
/// it (spin-down and spin-up for a stopped spindle; unload and load of the heads;
/// slowing to and returning from a low RPM).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StandbyLevelSpec {
    /// What the drive's documentation calls it (`unload`, `low-rpm`, `standby`).
    pub name: String,
    pub watts: f64,
    pub enter_ms: f64,
    pub enter_joules: f64,
    pub exit_ms: f64,
    pub exit_joules: f64,
}

impl Default for PowerSpec {
    fn default() -> Self {
        // Ultrastar 36Z15 data-sheet class figures; used only where a drive has none.
        PowerSpec {
            active_watts: 13.5,
            idle_watts: 10.2,
            standby: vec![StandbyLevelSpec {
                name: "standby".to_string(),
                watts: 2.5,
                enter_ms: 1_500.0,
                enter_joules: 13.0,
                exit_ms: 10_900.0,
                exit_joules: 135.0,
            }],
        }
    }
}

impl PowerSpec {
    /// The first problem with the figures, if any: a level count outside 1..=4,
    /// or a wattage or energy that is negative or not finite.
    pub fn problem(&self) -> Option<String> {
        let levels = self.standby.len();
        if !(1..=MAX_STANDBY_LEVELS).contains(&levels) {
            return Some(format!(
                "power.standby lists {levels} levels; a drive has 1 to {}",
                MAX_STANDBY_LEVELS
            ));
        }
        let bad = |what: String, value: f64| {
            (!value.is_finite() || value < 0.0)
                .then(|| format!("{what} = {value}: must be finite and not negative"))
        };
        bad("power.active_watts".into(), self.active_watts)
            .or_else(|| bad("power.idle_watts".into(), self.idle_watts))
            .or_else(|| {
                self.standby.iter().enumerate().find_map(|(i, level)| {
                    bad(format!("power.standby[{i}].watts"), level.watts)
                        .or_else(|| {
                            bad(
                                format!("power.standby[{i}].enter_joules"),
                                level.enter_joules,
                            )
                        })
                        .or_else(|| {
                            bad(format!("power.standby[{i}].exit_joules"), level.exit_joules)
                        })
                })
            })
    }
}
