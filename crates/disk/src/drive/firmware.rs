//! Firmware parameters converted once to picoseconds, and the host-link pipeline
//! (notes §4.1, §4.2, §5).

use super::mechanics::{ms_to_ps, Picoseconds};
use crate::spec::{FirmwareSpec, ReadAheadMode};

/// Overheads indexed by the previous completed request: `[after read, after write]`.
pub type AfterLast = [Picoseconds; 2];

#[derive(Clone, Debug)]
pub struct Firmware {
    pub bus_read_ps: Picoseconds,
    pub bus_write_ps: Picoseconds,
    pub per_request_ps: Picoseconds,
    pub read_hit: AfterLast,
    pub read_miss: AfterLast,
    pub write_hit: AfterLast,
    pub write_miss: AfterLast,
    pub read_disconnect: AfterLast,
    pub read_completion_ps: Picoseconds,
    pub write_completion_ps: Picoseconds,
    pub data_prep_ps: Picoseconds,
    pub reselect_ps: Picoseconds,
    pub write_disconnect_ps: Picoseconds,
    pub min_seek_delay_ps: Picoseconds,
    pub extra_write_disconnect: bool,
    pub hold_bus_read: bool,
    /// A track read out of LBN order (zero latency) goes to the host only once all
    /// of it is buffered (`BusPolicySpec::zero_latency_track_whole_before_bus`).
    pub whole_track_before_bus: bool,
    /// A write-through write seeks only once its data is buffered
    /// (`BusPolicySpec::write_through_seek_after_data`).
    pub seek_after_write_data: bool,
    /// A request abandons a read-ahead positioning in flight
    /// (`CacheSpec::abandon_read_ahead_positioning`).
    pub abandon_read_ahead_positioning: bool,
    pub never_disconnect: bool,
    pub caching: bool,
    pub segments: usize,
    pub segment_sectors: u64,
    pub read_water_mark: f64,
    pub water_mark_by_request: bool,
    pub read_ahead: ReadAheadMode,
    pub max_read_ahead: u64,
    pub read_ahead_on_idle_hit: bool,
    pub read_any_free_blocks: bool,
    pub read_hits_on_write_data: bool,
    /// A read whose first block is the next one the running read-ahead will bring
    /// counts as a (partial) hit on it (DiskSim's `Allow almost read hits`).
    pub almost_read_hits: bool,
    /// So does a read whose first block the running read-ahead will reach before
    /// its limit (`CacheSpec::almost_read_hits_ahead_of_prefetch`).
    pub almost_read_hits_ahead: bool,
    /// A read served from the running read-ahead's segment keeps it going to its
    /// limit (`CacheSpec::read_hit_keeps_read_ahead`).
    pub read_hit_keeps_read_ahead: bool,
    pub write_back: bool,
    pub combine_sequential_writes: bool,
    pub immediate_read: bool,
    pub immediate_write: bool,
}

impl Firmware {
    /// `cache_disabled` turns the whole cache off (and with it the read-ahead);
    /// `read_ahead_disabled` only the read-ahead (`DriveOptions`).
    pub fn new(spec: &FirmwareSpec, cache_disabled: bool, read_ahead_disabled: bool) -> Firmware {
        let scale = spec.overhead_time_scale;
        let o = &spec.overheads;
        let s = |ms: f64| ms_to_ps(ms * scale);
        let c = &spec.cache;
        let caching = c.enabled && !cache_disabled;
        let bus = ms_to_ps(spec.bus_sector_transfer_ms);
        Firmware {
            bus_read_ps: bus,
            // DiskSim's bus may give writes their own block time (hp_c2247a).
            bus_write_ps: spec.bus_write_sector_transfer_ms.map_or(bus, ms_to_ps),
            per_request_ps: s(spec.per_request_overhead_ms),
            read_hit: [s(o.read_hit_after_read_ms), s(o.read_hit_after_write_ms)],
            read_miss: [s(o.read_miss_after_read_ms), s(o.read_miss_after_write_ms)],
            write_hit: [s(o.write_hit_after_read_ms), s(o.write_hit_after_write_ms)],
            write_miss: [
                s(o.write_miss_after_read_ms),
                s(o.write_miss_after_write_ms),
            ],
            read_disconnect: [
                s(o.read_disconnect_after_read_ms),
                s(o.read_disconnect_after_write_ms),
            ],
            read_completion_ps: s(o.read_completion_ms),
            write_completion_ps: s(o.write_completion_ms),
            data_prep_ps: s(o.data_preparation_ms),
            reselect_ps: s(o.first_reselect_ms),
            write_disconnect_ps: s(o.write_disconnect_ms),
            min_seek_delay_ps: ms_to_ps(o.minimum_seek_delay_ms),
            extra_write_disconnect: o.extra_write_disconnect,
            hold_bus_read: spec.bus.hold_bus_for_whole_read,
            whole_track_before_bus: spec.bus.zero_latency_track_whole_before_bus,
            seek_after_write_data: spec.bus.write_through_seek_after_data,
            abandon_read_ahead_positioning: c.abandon_read_ahead_positioning,
            never_disconnect: spec.bus.never_disconnect,
            caching,
            segments: c.segments.max(1) as usize,
            segment_sectors: c.segment_sectors.max(1) as u64,
            read_water_mark: c.high_water_mark,
            water_mark_by_request: c.watermark_by_request_size,
            read_ahead: if caching && !read_ahead_disabled {
                c.read_ahead
            } else {
                ReadAheadMode::Off
            },
            max_read_ahead: c.max_read_ahead_sectors as u64,
            read_ahead_on_idle_hit: c.read_ahead_on_idle_hit,
            read_any_free_blocks: c.read_any_free_blocks && caching,
            read_hits_on_write_data: c.read_hits_on_write_data,
            almost_read_hits: c.allow_almost_read_hits && caching,
            almost_read_hits_ahead: c.almost_read_hits_ahead_of_prefetch && caching,
            read_hit_keeps_read_ahead: c.read_hit_keeps_read_ahead && caching,
            write_back: c.fast_write_level >= 1 && caching,
            combine_sequential_writes: c.combine_sequential_writes,
            immediate_read: spec.zero_latency_reads_with_cache(caching),
            immediate_write: spec.immediate_buffer_write,
        }
    }

    /// Blocks that must be buffered before a read reconnects to the bus.
    pub fn read_water_mark_blocks(&self, request_blocks: u64) -> u64 {
        let w = if self.water_mark_by_request {
            (self.segment_sectors.min(request_blocks) as f64 * self.read_water_mark) as u64
        } else {
            (self.segment_sectors as f64 * self.read_water_mark).ceil() as u64
        };
        w.max(1).min(request_blocks.max(1))
    }
}

/// How the host link behaves for one transfer.
#[derive(Clone, Copy, Debug)]
pub struct BusPlan {
    /// First instant the disk is connected and ready to move data.
    pub connect_ps: Picoseconds,
    pub per_block_ps: Picoseconds,
    /// Stay connected and wait when the buffer runs dry (else disconnect and
    /// reconnect at the water mark).
    pub hold: bool,
    pub water_mark: u64,
    /// Delay of a reconnection (reselect + data preparation).
    pub reconnect_ps: Picoseconds,
    /// Delay of a disconnection when the buffer runs dry.
    pub disconnect_ps: Picoseconds,
}

/// Move blocks to the host in LBN order, in chunks of whatever contiguous run is
/// buffered. `ready[i]` is when block i *and every block before it* are buffered
/// (non-decreasing). Returns (end of the
/// last chunk, bus busy time).
#[cfg(test)]
pub fn bus_pipeline(ready: &[Picoseconds], plan: BusPlan) -> (Picoseconds, Picoseconds) {
    let (end, busy, _) = bus_pipeline_until(ready, plan, Picoseconds::MAX);
    (end, busy)
}

/// [`bus_pipeline`], also returning how much of the bus busy time fell before
/// `until` (for the time breakdown: bus transfer overlapped with media work).
pub fn bus_pipeline_until(
    ready: &[Picoseconds],
    plan: BusPlan,
    until: Picoseconds,
) -> (Picoseconds, Picoseconds, Picoseconds) {
    let n = ready.len();
    // A block can go only once it and every block before it are buffered.
    debug_assert!(
        ready.windows(2).all(|w| w[0] <= w[1]),
        "ready times in order"
    );
    let in_order = ready;
    let mut sent = 0usize;
    let mut now = plan.connect_ps;
    let mut busy = 0;
    let mut busy_before = 0;
    while sent < n {
        let mut avail = in_order[sent..].iter().take_while(|&&t| t <= now).count();
        if avail == 0 {
            if plan.hold {
                now = in_order[sent];
            } else {
                let need = (sent + plan.water_mark as usize).min(n) - 1;
                now = (now + plan.disconnect_ps).max(in_order[need]) + plan.reconnect_ps;
            }
            avail = in_order[sent..].iter().take_while(|&&t| t <= now).count();
        }
        let chunk = avail.max(1);
        let length = chunk as i64 * plan.per_block_ps;
        busy_before += (until.min(now + length) - now).clamp(0, length);
        now += length;
        busy += length;
        sent += chunk;
    }
    (now, busy, busy_before)
}

/// When the first `water_mark` blocks (in LBN order) are all buffered.
pub fn water_mark_time(ready: &[Picoseconds], water_mark: u64) -> Picoseconds {
    let k = (water_mark as usize).clamp(1, ready.len().max(1));
    ready
        .iter()
        .take(k)
        .copied()
        .max()
        .unwrap_or(Picoseconds::MIN)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves a full hit costs one chunk of n blocks and a slow-media read waits
    // block by block when the bus is held.
    #[test]
    fn pipeline_chunks() {
        let plan = BusPlan {
            connect_ps: 100,
            per_block_ps: 10,
            hold: true,
            water_mark: 1,
            reconnect_ps: 0,
            disconnect_ps: 0,
        };
        assert_eq!(bus_pipeline(&[i64::MIN; 3], plan).0, 130);
        assert_eq!(bus_pipeline(&[200, 300, 400], plan).0, 410);
        // Out-of-order media (zero latency) is given as running maxima.
        assert_eq!(bus_pipeline(&[300, 300, 400], plan).0, 410);
        let plan = BusPlan {
            hold: false,
            water_mark: 2,
            reconnect_ps: 5,
            ..plan
        };
        // Connect at 100, nothing buffered: reconnect when 2 blocks are in (300) + 5.
        // Then the last block: reconnect at 400 + 5, one block.
        assert_eq!(bus_pipeline(&[200, 300, 400], plan).0, 415);
    }
}
