//! The simulated probe: a modelled drive answering SCSI-like commands from its
//! [`Layout`] and timed reads from a timing model, in simulated time.
//!
//! Timed reads come from the full drive model ([`Drive`], with its cache and
//! read-ahead switched off by the caching mode page, as the papers did) or from
//! [`AnalyticTimer`], a small rotation + head-switch + seek model kept for unit
//! tests of the algorithms and as a cross-check. Host measurement noise
//! ([`Jitter`]) is added on both sides of each read: a delay before the command
//! reaches the drive and a delay before the host notices the completion, each
//! half-normal, plus rare long stalls (a host being descheduled).

use crate::probe::{CacheSetting, Capabilities, Probe, ProbeError, TimedRead};
use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_disk::layout::{Layout, LayoutError, Pbn, SectorContent};
use spinstack_disk::spec::{
    DriveSpec, LayoutSpec, SeekSpec, SparingScheme, SurfaceOrder, ZoneSpec, ZonedLayoutSpec,
};
use spinstack_sim::engine::{DeviceCompletion, DeviceId, Engine, EngineOptions};
use spinstack_sim::request::{BlockRequest, Operation, RequestId};
use spinstack_sim::rng::SplitMix64;
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};

/// Host-side measurement noise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Jitter {
    /// Scale of the half-normal delay on each side of a read.
    pub sigma_ns: u64,
    /// Chance that one side of a read suffers a long stall.
    pub stall_probability: f64,
    /// Mean of the (exponential) stall.
    pub stall_mean_ns: u64,
    pub seed: u64,
}

impl Jitter {
    /// Noise of a quiet Linux host timing O_DIRECT reads: tens of microseconds,
    /// with a stall of about a millisecond in one read side out of two hundred.
    pub fn typical(seed: u64) -> Jitter {
        Jitter {
            sigma_ns: 30_000,
            stall_probability: 0.005,
            stall_mean_ns: 1_000_000,
            seed,
        }
    }
}

/// Where timed reads come from.
enum Timing {
    /// The drive runs in an engine of its own (device 0): the one event loop.
    Drive {
        spec: Box<DriveSpec>,
        engine: Box<Engine<Drive>>,
        next_id: u64,
    },
    Analytic(Box<AnalyticTimer>),
}

/// A modelled drive behind the probe interface.
pub struct SimulatedProbe {
    name: String,
    layout: Layout,
    timing: Timing,
    clock: Nanoseconds,
    jitter: Option<(Jitter, SplitMix64)>,
    defects: Option<Vec<Pbn>>,
    reads: u64,
}

impl SimulatedProbe {
    /// A probe over the full drive model, its caching as shipped until changed.
    pub fn with_drive(spec: &DriveSpec) -> Result<SimulatedProbe, ProbeError> {
        let engine = build_drive(spec, false)?;
        let layout = engine.devices()[0].layout().clone();
        Ok(SimulatedProbe::new(
            &spec.name,
            layout,
            Timing::Drive {
                spec: Box::new(spec.clone()),
                engine,
                next_id: 0,
            },
        ))
    }

    /// A probe whose reads follow [`AnalyticTimer`].
    pub fn with_analytic_timing(spec: &DriveSpec) -> Result<SimulatedProbe, ProbeError> {
        let layout = Layout::new(&spec.layout).map_err(|e| layout_failure(&spec.name, e))?;
        let timer = AnalyticTimer::new(spec, layout.clone());
        Ok(SimulatedProbe::new(
            &spec.name,
            layout,
            Timing::Analytic(Box::new(timer)),
        ))
    }

    /// A probe that answers only the SCSI commands (for layouts with no drive),
    /// its reads timed by [`AnalyticTimer`] with a host link faster than the
    /// media (0.01 ms a sector).
    pub fn translate_only(name: &str, layout: &LayoutSpec) -> Result<SimulatedProbe, ProbeError> {
        SimulatedProbe::translate_only_with_link(name, layout, PLACEHOLDER_BUS_SECTOR_MS)
    }

    /// [`SimulatedProbe::translate_only`] with a host link that sends one sector
    /// in `bus_sector_transfer_ms` (slower than the media where that exceeds the
    /// media's sector time, as on the Atlas 10K).
    pub fn translate_only_with_link(
        name: &str,
        layout: &LayoutSpec,
        bus_sector_transfer_ms: f64,
    ) -> Result<SimulatedProbe, ProbeError> {
        let layout = Layout::new(layout).map_err(|e| layout_failure(name, e))?;
        let mut spec = placeholder_spec(name, layout.spec().clone());
        spec.firmware.bus_sector_transfer_ms = bus_sector_transfer_ms;
        let timer = AnalyticTimer::new(&spec, layout.clone());
        Ok(SimulatedProbe::new(
            name,
            layout,
            Timing::Analytic(Box::new(timer)),
        ))
    }

    fn new(name: &str, layout: Layout, timing: Timing) -> SimulatedProbe {
        SimulatedProbe {
            name: name.to_string(),
            layout,
            timing,
            clock: Nanoseconds::ZERO,
            jitter: None,
            defects: None,
            reads: 0,
        }
    }

    pub fn set_jitter(&mut self, jitter: Option<Jitter>) {
        self.jitter = jitter.map(|j| (j, SplitMix64::new(j.seed)));
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Timed reads served so far.
    pub fn reads(&self) -> u64 {
        self.reads
    }

    fn jitter_delay(&mut self) -> Nanoseconds {
        let Some((j, rng)) = self.jitter.as_mut() else {
            return Nanoseconds::ZERO;
        };
        let mut delay = (rng.normal().abs() * j.sigma_ns as f64) as u64;
        if rng.unit_f64() < j.stall_probability {
            delay += rng.exponential(j.stall_mean_ns as f64) as u64;
        }
        Nanoseconds(delay)
    }

    fn out_of_range(&self, command: &'static str, lbn: Lbn, sectors: u64) -> ProbeError {
        ProbeError::OutOfRange {
            probe: self.name.clone(),
            command,
            lbn,
            sectors,
            capacity: self.layout.capacity(),
        }
    }

    fn serve(
        &mut self,
        arrival: Nanoseconds,
        lbn: Lbn,
        sectors: Sectors,
    ) -> Result<Nanoseconds, ProbeError> {
        let name = self.name.clone();
        match &mut self.timing {
            Timing::Analytic(timer) => timer
                .serve(arrival, lbn, sectors)
                .map_err(|e| layout_failure(&name, e)),
            Timing::Drive {
                engine, next_id, ..
            } => {
                *next_id += 1;
                serve_on_drive(engine, RequestId(*next_id), arrival, lbn, sectors).map_err(
                    |detail| ProbeError::Failed {
                        probe: name,
                        command: "READ",
                        detail,
                    },
                )
            }
        }
    }

    /// The drive's defect list: slipped (factory) and remapped (grown) defects,
    /// placed from the spec's zone-relative units by the zoned layout's documented
    /// position rule (cylinder-major, surface order, sector).
    fn defect_list_from_spec(&self) -> Vec<Pbn> {
        let LayoutSpec::Zoned(zoned) = self.layout.spec() else {
            return Vec::new();
        };
        let whole_tracks = zoned.sparing == SparingScheme::TracksPerZone;
        let mut found = Vec::new();
        for zone in &zoned.zones {
            let units = zone.slips.iter().chain(zone.defects.iter().map(|(d, _)| d));
            for &unit in units {
                let position = if whole_tracks {
                    unit * u64::from(zone.sectors_per_track)
                } else {
                    unit
                };
                found.push(zoned_position_to_pbn(zoned, zone, position));
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }
}

/// Zone-relative physical position → PBN, as `layout/zoned.rs` documents it.
fn zoned_position_to_pbn(spec: &ZonedLayoutSpec, zone: &ZoneSpec, position: u64) -> Pbn {
    let spt = u64::from(zone.sectors_per_track.max(1));
    let per_cylinder = spt * u64::from(spec.surfaces.max(1));
    let cylinder = zone.first_cylinder + (position / per_cylinder) as u32;
    let index = ((position % per_cylinder) / spt) as u32;
    let reversed = match spec.surface_order {
        SurfaceOrder::Fixed => false,
        SurfaceOrder::ReverseOnOddZoneCylinder => (cylinder - zone.first_cylinder) % 2 == 1,
        SurfaceOrder::ReverseOnOddCylinder => cylinder % 2 == 1,
    };
    let surface = if reversed {
        spec.surfaces - 1 - index
    } else {
        index
    };
    Pbn {
        cylinder,
        surface,
        sector: (position % spt) as u32,
    }
}

fn layout_failure(name: &str, error: LayoutError) -> ProbeError {
    ProbeError::Failed {
        probe: name.to_string(),
        command: "layout",
        detail: error.to_string(),
    }
}

/// The drive model in an engine of its own, as device 0.
fn build_drive(spec: &DriveSpec, cache_disabled: bool) -> Result<Box<Engine<Drive>>, ProbeError> {
    let options = DriveOptions {
        cache_disabled,
        queue_depth: Some(1),
        ..DriveOptions::default()
    };
    let drive = Drive::new(spec, options).map_err(|e| ProbeError::Failed {
        probe: spec.name.clone(),
        command: "drive model",
        detail: e.to_string(),
    })?;
    let mut engine = Box::new(Engine::new(EngineOptions::default()));
    engine.add_device(drive);
    Ok(engine)
}

/// Submit one read at `arrival` and run the engine until it completes.
fn serve_on_drive(
    engine: &mut Engine<Drive>,
    id: RequestId,
    arrival: Nanoseconds,
    lbn: Lbn,
    sectors: Sectors,
) -> Result<Nanoseconds, String> {
    if arrival < engine.now() {
        return Err(format!(
            "a read at {arrival} precedes the drive's clock {}",
            engine.now()
        ));
    }
    let mut completed: Vec<DeviceCompletion> = Vec::with_capacity(1);
    engine.run_until(arrival, &mut completed);
    let request = BlockRequest::new(id, Operation::Read, lbn, sectors, arrival);
    engine
        .submit(DeviceId(0), request)
        .map_err(|e| e.to_string())?;
    engine.run_until_idle(&mut completed);
    completed
        .iter()
        .find(|c| c.completion.request.id == id)
        .map(|c| c.completion.done)
        .ok_or_else(|| format!("the drive model never completed the read of {lbn}"))
}

impl Probe for SimulatedProbe {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            translate: true,
            defect_list: true,
            timed_reads: true,
            cache_control: true,
        }
    }

    fn read_capacity(&mut self) -> Result<Sectors, ProbeError> {
        Ok(self.layout.capacity())
    }

    fn read_defect_list(&mut self) -> Result<Vec<Pbn>, ProbeError> {
        if self.defects.is_none() {
            self.defects = Some(self.defect_list_from_spec());
        }
        Ok(self.defects.clone().unwrap_or_default())
    }

    fn translate_lbn(&mut self, lbn: Lbn) -> Result<Pbn, ProbeError> {
        self.layout
            .lbn_to_pbn(lbn)
            .map_err(|_| self.out_of_range("translate address", lbn, 1))
    }

    fn translate_pbn(&mut self, pbn: Pbn) -> Result<SectorContent, ProbeError> {
        self.layout
            .pbn_to_lbn(pbn)
            .map_err(|e| layout_failure(&self.name, e))
    }

    fn set_caching(&mut self, setting: CacheSetting) -> Result<(), ProbeError> {
        if let Timing::Drive { spec, engine, .. } = &mut self.timing {
            let disabled = setting == CacheSetting::ReadCacheAndPrefetchOff;
            *engine = build_drive(spec, disabled)?;
        }
        Ok(())
    }

    fn now(&self) -> Nanoseconds {
        self.clock
    }

    fn wait_until(&mut self, instant: Nanoseconds) {
        self.clock = self.clock.max(instant);
    }

    fn timed_read(&mut self, lbn: Lbn, sectors: Sectors) -> Result<TimedRead, ProbeError> {
        if sectors.0 == 0 || lbn.0 + sectors.0 > self.layout.capacity().0 {
            return Err(self.out_of_range("READ", lbn, sectors.0));
        }
        let issued = self.clock;
        let arrival = issued + self.jitter_delay();
        let done = self.serve(arrival, lbn, sectors)?;
        let noticed = done + self.jitter_delay();
        self.clock = noticed;
        self.reads += 1;
        Ok(TimedRead {
            issued,
            completed: noticed,
        })
    }
}

/// The placeholder drive's host link: faster than any media sector.
const PLACEHOLDER_BUS_SECTOR_MS: f64 = 0.01;

/// A spec with no timing facts, for layouts built by hand (tests, property runs).
fn placeholder_spec(name: &str, layout: LayoutSpec) -> DriveSpec {
    use spinstack_disk::spec::*;
    DriveSpec {
        name: name.to_string(),
        description: "layout only".to_string(),
        provenance: vec![],
        layout,
        mechanics: MechanicsSpec {
            rpm: 10_000,
            seek: SeekSpec::Published {
                single_cylinder_ms: 0.8,
                average_ms: 4.5,
                full_stroke_ms: 10.0,
            },
            head_switch_ms: 0.3,
            write_settle_ms: 0.0,
        },
        firmware: FirmwareSpec {
            bus_sector_transfer_ms: PLACEHOLDER_BUS_SECTOR_MS,
            bus_write_sector_transfer_ms: None,
            per_request_overhead_ms: 0.0,
            overhead_time_scale: 1.0,
            overheads: OverheadSpec::default(),
            bus: BusPolicySpec::default(),
            cache: CacheSpec {
                enabled: false,
                segments: 1,
                segment_sectors: 64,
                max_write_segments: 1,
                separate_write_segment: false,
                low_water_mark: 0.0,
                high_water_mark: 0.0,
                watermark_by_request_size: false,
                read_ahead: ReadAheadMode::Off,
                min_read_ahead_sectors: 0,
                max_read_ahead_sectors: 0,
                read_ahead_over_requested: 0,
                read_ahead_on_idle_hit: false,
                read_any_free_blocks: false,
                allow_almost_read_hits: false,
                read_hits_on_write_data: false,
                fast_write_level: 0,
                combine_sequential_writes: false,
                stop_prefetch_in_sector: false,
                disconnect_write_if_seek: false,
                write_hit_stops_prefetch: false,
                read_directly_to_buffer: false,
                immediate_transfer_partial_hit: false,
                preseek_level: 0,
                abandon_read_ahead_positioning: false,
                almost_read_hits_ahead_of_prefetch: false,
                read_hit_keeps_read_ahead: false,
            },
            queue: QueueSpec {
                max_queue_length: 1,
                policy: SchedulingPolicy::Fcfs,
            },
            immediate_buffer_read: false,
            immediate_buffer_write: false,
        },
        power: PowerSpec::default(),
    }
}

/// Angle ticks in one revolution (the layout's angle unit).
const TICKS_PER_TURN: u128 = 1 << 32;

/// A small timing model: command overhead, seek or head switch, rotational wait
/// and media transfer sector by sector (angles from the layout), each sector sent
/// to the host once read and once the link has sent the one before. Where the
/// link keeps up with the media this is the host transfer of the last sector;
/// where it is slower (the Atlas 10K's 0.099 ms a sector against 0.018 ms on the
/// platter) a long read ends when its bytes reach the host, as on the real
/// drive. No cache, no zero-latency access. Time runs in angle ticks (2^32 per
/// revolution) so that consecutive sectors meet exactly.
pub struct AnalyticTimer {
    layout: Layout,
    revolution_ps: u128,
    command_ticks: u128,
    /// Host transfer of one sector.
    bus_sector_ticks: u128,
    completion_ticks: u128,
    head_switch_ticks: u128,
    seek: SeekSpec,
    cylinders: u32,
    /// Cylinder and surface under the head.
    head: (u32, u32),
    /// When the arm is next free, in ticks.
    free_at: u128,
}

impl AnalyticTimer {
    pub fn new(spec: &DriveSpec, layout: Layout) -> AnalyticTimer {
        let revolution_ps = 60_000_000_000_000u128 / u128::from(spec.mechanics.rpm.max(1));
        let ticks = |ms: f64| (ms.max(0.0) * 1e9) as u128 * TICKS_PER_TURN / revolution_ps;
        let firmware = &spec.firmware;
        AnalyticTimer {
            cylinders: layout.cylinders(),
            layout,
            revolution_ps,
            command_ticks: ticks(
                firmware.per_request_overhead_ms + firmware.overheads.read_miss_after_read_ms,
            ),
            bus_sector_ticks: ticks(firmware.bus_sector_transfer_ms),
            completion_ticks: ticks(firmware.overheads.read_completion_ms),
            head_switch_ticks: ticks(spec.mechanics.head_switch_ms),
            seek: spec.mechanics.seek.clone(),
            head: (0, 0),
            free_at: 0,
        }
    }

    fn to_ticks(&self, t: Nanoseconds) -> u128 {
        u128::from(t.0) * 1000 * TICKS_PER_TURN / self.revolution_ps
    }

    fn to_ns(&self, ticks: u128) -> Nanoseconds {
        Nanoseconds((ticks * self.revolution_ps).div_ceil(TICKS_PER_TURN * 1000) as u64)
    }

    fn move_ticks(&self, to: (u32, u32)) -> u128 {
        let distance = self.head.0.abs_diff(to.0);
        if distance == 0 {
            return if to.1 == self.head.1 {
                0
            } else {
                self.head_switch_ticks
            };
        }
        let ms = seek_ms(&self.seek, distance, self.cylinders);
        (ms * 1e9) as u128 * TICKS_PER_TURN / self.revolution_ps
    }

    /// Completion instant of a read of `sectors` from `lbn` arriving at `arrival`.
    pub fn serve(
        &mut self,
        arrival: Nanoseconds,
        lbn: Lbn,
        sectors: Sectors,
    ) -> Result<Nanoseconds, LayoutError> {
        let mut now = self.to_ticks(arrival).max(self.free_at) + self.command_ticks;
        // When the link has sent every sector read so far.
        let mut sent = 0u128;
        for offset in 0..sectors.0 {
            let pbn = self.layout.lbn_to_pbn(Lbn(lbn.0 + offset))?;
            let track = (pbn.cylinder, pbn.surface);
            now += self.move_ticks(track);
            self.head = track;
            let spt = u128::from(self.layout.sectors_per_track(pbn.cylinder, pbn.surface)?);
            let start = u128::from(self.layout.angle_of(pbn)?.0);
            let position = now % TICKS_PER_TURN;
            now += (start + TICKS_PER_TURN - position) % TICKS_PER_TURN;
            now += TICKS_PER_TURN / spt;
            sent = sent.max(now) + self.bus_sector_ticks;
        }
        self.free_at = now;
        Ok(self.to_ns(sent + self.completion_ticks))
    }
}

/// Seek time for `distance` cylinders from the spec's curve (approximate for the
/// published-figures form: a + b·√d through single-cylinder and full-stroke).
fn seek_ms(seek: &SeekSpec, distance: u32, cylinders: u32) -> f64 {
    let d = f64::from(distance);
    match seek {
        SeekSpec::Extracted { points } => interpolate(points, distance),
        SeekSpec::Hpl(h) | SeekSpec::HplPlus10 { hpl: h, .. } => {
            if distance < h.boundary_cylinders {
                h.short_base_ms + h.short_sqrt_ms * d.sqrt()
            } else {
                h.long_base_ms + h.long_per_cylinder_ms * d
            }
        }
        SeekSpec::Published {
            single_cylinder_ms,
            full_stroke_ms,
            ..
        } => {
            let span = (f64::from(cylinders.max(2)) - 1.0).sqrt() - 1.0;
            single_cylinder_ms
                + (full_stroke_ms - single_cylinder_ms) * (d.sqrt() - 1.0) / span.max(1.0)
        }
    }
}

fn interpolate(points: &[spinstack_disk::spec::SeekPoint], distance: u32) -> f64 {
    let Some(last) = points.last() else {
        return 0.0;
    };
    let index = points.partition_point(|p| p.distance_cylinders < distance);
    if index == 0 {
        return points[0].time_ms;
    }
    if index >= points.len() {
        return last.time_ms;
    }
    let (a, b) = (points[index - 1], points[index]);
    let span = f64::from(b.distance_cylinders - a.distance_cylinders).max(1.0);
    a.time_ms + (b.time_ms - a.time_ms) * f64::from(distance - a.distance_cylinders) / span
}
