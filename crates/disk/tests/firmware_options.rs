//! The three firmware options the Atlas 10K II's catalog entry turns on (issue 12
//! §3), each against the same drive with the option off (DiskSim's behaviour):
//! a zero-latency track read goes to the host only when all of it is buffered, a
//! write-through write seeks only after its data is in, and a request abandons a
//! read-ahead head or cylinder switch in flight. Each of these tests measures
//! first-zone track-sized requests in a seeded closed loop (the seed is in each
//! message). And the Maxtor Atlas 10K V's option (issue 9): a read that starts a
//! few sectors ahead of the running read-ahead rides it; the hand-made drives'
//! option that a read served from the running read-ahead keeps it going past the
//! track it is reading; and `DriveOptions::read_ahead_disabled`.

use spinstack_disk::drive::{Drive, DriveOptions};
use spinstack_disk::spec::DriveSpec;
use spinstack_sim::driver::{run_closed_loop, RequestSpec};
use spinstack_sim::engine::{Engine, EngineOptions};
use spinstack_sim::request::{Completion, Operation};
use spinstack_sim::rng::SplitMix64;
use spinstack_sim::units::{Lbn, Nanoseconds, Sectors};

fn atlas10k2() -> DriveSpec {
    spinstack_disk::catalog::get("atlas10k2").expect("catalog has atlas10k2")
}

/// `count` onereq requests of one whole first-zone track each (track-aligned),
/// random tracks among the first 2,000; the first two completions are dropped.
fn aligned_tracks(
    spec: &DriveSpec,
    operation: Operation,
    count: u64,
    seed: u64,
) -> Vec<Completion> {
    let mut drive = Drive::new(spec, DriveOptions::default()).expect("drive builds");
    let layout = drive.layout().clone();
    let first_track = layout.track_of(Lbn(0)).expect("LBN 0");
    let mut rng = SplitMix64::new(seed);
    let mut left = count;
    let mut engine = Engine::new(EngineOptions::default());
    engine.add_device(&mut drive);
    let mut out = Vec::new();
    let mut next = |_| {
        left = left.checked_sub(1)?;
        let probe = Lbn(rng.next_u64() % (2_000 * first_track.sectors.0));
        let track = layout.track_of(probe).expect("LBN on the drive");
        Some(RequestSpec {
            operation,
            lbn: track.first,
            sectors: Sectors(track.sectors.0),
            think_after: Nanoseconds::ZERO,
        })
    };
    run_closed_loop(&mut engine, 1, &mut next, |done| out.push(done.completion)).expect("runs");
    out.split_off(2)
}

fn mean_ms(completions: &[Completion], of: impl Fn(&Completion) -> Nanoseconds) -> f64 {
    completions.iter().map(|c| of(c).as_ms_f64()).sum::<f64>() / completions.len() as f64
}

/// Proves `zero_latency_track_whole_before_bus`: with it (the catalog entry) an
/// aligned track read overlaps under 1% of its bus transfer with its media work
/// (the paper's Fig. 7: 3%); without it, blocks go as soon as they and the blocks
/// before them are in, and about half overlaps.
#[test]
fn zero_latency_track_is_sent_whole() {
    let seed = 12;
    let on = atlas10k2();
    assert!(on.firmware.bus.zero_latency_track_whole_before_bus);
    let mut off = on.clone();
    off.firmware.bus.zero_latency_track_whole_before_bus = false;
    let share = |spec: &DriveSpec| {
        let runs = aligned_tracks(spec, Operation::Read, 300, seed);
        mean_ms(&runs, |c| c.breakdown().overlap) / mean_ms(&runs, |c| c.breakdown().bus_transfer)
    };
    let (with, without) = (share(&on), share(&off));
    assert!(
        with < 0.01,
        "seed {seed}: overlap {with:.3} with the option"
    );
    assert!(
        (0.3..0.7).contains(&without),
        "seed {seed}: overlap {without:.3} without it"
    );
}

/// Proves `write_through_seek_after_data`: with it an aligned track write takes
/// about the whole bus transfer longer than without it (the seek no longer runs
/// while the data crosses), and its seek begins only after that transfer.
#[test]
fn write_through_seeks_after_its_data() {
    let seed = 13;
    let on = atlas10k2();
    assert!(on.firmware.bus.write_through_seek_after_data);
    assert_eq!(on.firmware.cache.fast_write_level, 0, "write-through");
    let mut off = on.clone();
    off.firmware.bus.write_through_seek_after_data = false;
    let with = aligned_tracks(&on, Operation::Write, 300, seed);
    let without = aligned_tracks(&off, Operation::Write, 300, seed);
    let bus_ms = mean_ms(&with, |c| c.breakdown().bus_transfer);
    let gap_ms =
        mean_ms(&with, Completion::response_time) - mean_ms(&without, Completion::response_time);
    assert!(
        gap_ms > 0.8 * bus_ms && gap_ms < 1.2 * bus_ms,
        "seed {seed}: {gap_ms:.3} ms longer, bus transfer {bus_ms:.3} ms"
    );
    let overlap_ms = mean_ms(&with, |c| c.breakdown().overlap);
    assert!(
        overlap_ms < 0.01,
        "seed {seed}: data overlapped the seek by {overlap_ms:.3} ms"
    );
}

/// Proves `abandon_read_ahead_positioning`: with an infinitely fast bus the next
/// aligned track read arrives while the read-ahead switches to the next track;
/// with the option it starts at once (response = overhead + seek + one revolution,
/// to within a quarter millisecond on average), without it it waits for the switch.
#[test]
fn read_ahead_switch_in_flight_is_abandoned() {
    let seed = 14;
    let mut on = atlas10k2();
    on.firmware.bus_sector_transfer_ms = 0.0;
    assert!(on.firmware.cache.abandon_read_ahead_positioning);
    let mut off = on.clone();
    off.firmware.cache.abandon_read_ahead_positioning = false;
    let revolution_ms = 60_000.0 / f64::from(on.mechanics.rpm);
    let beyond_seek_and_turn = |spec: &DriveSpec| {
        let runs = aligned_tracks(spec, Operation::Read, 300, seed);
        let misses: Vec<Completion> = runs
            .into_iter()
            .filter(|c| !c.drive.is_some_and(|d| d.cache_hit))
            .collect();
        mean_ms(&misses, Completion::response_time)
            - mean_ms(&misses, |c| c.breakdown().seek)
            - revolution_ms
    };
    let (with, without) = (beyond_seek_and_turn(&on), beyond_seek_and_turn(&off));
    assert!(
        with < 0.25,
        "seed {seed}: {with:.3} ms beyond seek + revolution with the option"
    );
    assert!(
        without > with + 0.2,
        "seed {seed}: {without:.3} ms without it, {with:.3} ms with it"
    );
}

fn maxtor() -> DriveSpec {
    spinstack_disk::catalog::get("maxtor10kv-czk").expect("catalog has maxtor10kv-czk")
}

/// `starts.len()` reads of `sectors` each at the given first LBNs, one at a time
/// with no think time: the completions and when the last one was done.
/// Sectors of the drive's first track (LBN 0's).
fn first_track_sectors(spec: &DriveSpec) -> u64 {
    Drive::new(spec, DriveOptions::default())
        .expect("drive builds")
        .layout()
        .track_of(Lbn(0))
        .expect("LBN 0")
        .sectors
        .0
}

fn reads_at(spec: &DriveSpec, starts: &[u64], sectors: u64) -> (Vec<Completion>, Nanoseconds) {
    reads_with(
        spec,
        DriveOptions::default(),
        starts,
        sectors,
        Nanoseconds::ZERO,
    )
}

/// As `reads_at`, with drive options and `think` between a completion and the
/// next read.
fn reads_with(
    spec: &DriveSpec,
    options: DriveOptions,
    starts: &[u64],
    sectors: u64,
    think: Nanoseconds,
) -> (Vec<Completion>, Nanoseconds) {
    let mut drive = Drive::new(spec, options).expect("drive builds");
    let mut engine = Engine::new(EngineOptions::default());
    engine.add_device(&mut drive);
    let mut out = Vec::new();
    let mut next_start = starts.iter();
    let mut next = |_| {
        Some(RequestSpec {
            operation: Operation::Read,
            lbn: Lbn(*next_start.next()?),
            sectors: Sectors(sectors),
            think_after: think,
        })
    };
    run_closed_loop(&mut engine, 1, &mut next, |done| out.push(done.completion)).expect("runs");
    let end = out
        .iter()
        .map(|c| c.done)
        .max()
        .unwrap_or(Nanoseconds::ZERO);
    (out, end)
}

/// Proves `almost_read_hits_ahead_of_prefetch` (the Maxtor's entry): reads of 24
/// sectors, each starting 8 sectors past the last one's end (a RAID-5 member's
/// pieces around the 4 KB parity chunk it holds), stream from the running
/// read-ahead, where with DiskSim's rule alone each one misses the sector that
/// passed during its command overhead and waits about a revolution. The skipped
/// sectors only pass under the head: the median read takes the media time of 32
/// first-zone sectors, and each read sends only its own 24 sectors over the bus.
#[test]
fn read_ahead_of_the_prefetch_rides_it() {
    let on = maxtor();
    assert!(on.firmware.cache.almost_read_hits_ahead_of_prefetch);
    let mut off = on.clone();
    off.firmware.cache.almost_read_hits_ahead_of_prefetch = false;
    let revolution_ms = 60_000.0 / f64::from(on.mechanics.rpm);
    let strided: Vec<u64> = (0..2_000).map(|k| 32 * k).collect();
    let (with, _) = reads_at(&on, &strided, 24);
    let (without, _) = reads_at(&off, &strided, 24);
    let median = |runs: &[Completion]| {
        let mut ms: Vec<f64> = runs.iter().map(|c| c.response_time().as_ms_f64()).collect();
        ms.sort_by(f64::total_cmp);
        ms[ms.len() / 2]
    };
    let first_track = first_track_sectors(&on);
    let stride_ms = 32.0 * revolution_ms / first_track as f64;
    assert!(
        (median(&with) - stride_ms).abs() < 0.1 * stride_ms,
        "median {:.4} ms with the option, 32 sectors pass in {stride_ms:.4} ms",
        median(&with)
    );
    assert!(
        median(&without) > 0.9 * revolution_ms,
        "median {:.3} ms without it",
        median(&without)
    );
    let bus_ms = 24.0 * on.firmware.bus_sector_transfer_ms;
    for c in &with {
        let sent = c.breakdown().bus_transfer.as_ms_f64();
        assert!((sent - bus_ms).abs() < 1e-6, "{sent} ms on the bus");
    }
}

/// Proves the option's bound: a read that starts further ahead of the running
/// read-ahead than a new positioning needs (about 1.6 first-zone tracks: riding
/// would wait some 9 ms) repositions instead, within a revolution plus the
/// command overhead and a track switch.
#[test]
fn read_far_ahead_of_the_prefetch_repositions() {
    let spec = maxtor();
    assert!(spec.firmware.cache.almost_read_hits_ahead_of_prefetch);
    let (runs, _) = reads_at(&spec, &[0, 24 + 1_800], 24);
    let revolution_ms = 60_000.0 / f64::from(spec.mechanics.rpm);
    let far = runs[1].response_time().as_ms_f64();
    assert!(
        far < revolution_ms + 1.0,
        "{far:.3} ms for the read 1,800 sectors ahead"
    );
}

/// `count` contiguous reads of `sectors` each from LBN 0.
fn sequential(count: u64, sectors: u64) -> Vec<u64> {
    (0..count).map(|k| k * sectors).collect()
}

fn misses(runs: &[Completion]) -> usize {
    runs.iter().filter(|c| !c.cache_hit()).count()
}

/// Proves `read_hit_keeps_read_ahead` (every hand-made entry): 8-sector reads,
/// each 0.2 ms after the last one completed, are read ahead of by the drive
/// (its media brings 8 first-zone sectors in about 0.04 ms). With the option a
/// hit keeps the read-ahead going to a segment's worth (2,600 sectors) past the
/// read, so no read after the first waits for the platter; without it
/// (DiskSim-imported drives' rule) each hit stops the read-ahead at the end of
/// the track it is reading, and the reader waits for the platter once a track
/// (3,000 reads are 21 first-zone tracks).
#[test]
fn read_hit_keeps_the_read_ahead_going() {
    let on = maxtor();
    assert!(on.firmware.cache.read_hit_keeps_read_ahead);
    let mut off = on.clone();
    off.firmware.cache.read_hit_keeps_read_ahead = false;
    let starts = sequential(3_000, 8);
    let think = Nanoseconds::from_us(200);
    let run = |spec: &DriveSpec| reads_with(spec, DriveOptions::default(), &starts, 8, think);
    let ((with, with_end), (without, without_end)) = (run(&on), run(&off));
    // Longer than a millisecond: more than overheads, bus and a few sectors of
    // media; the platter was waited for.
    let waited = |runs: &[Completion]| {
        runs.iter()
            .filter(|c| c.response_time() > Nanoseconds::from_ms(1))
            .count()
    };
    let tracks = 3_000 * 8 / 1_144;
    assert_eq!(
        waited(&with),
        1,
        "only the first read waits with the option"
    );
    assert!(
        waited(&without) >= tracks,
        "{} reads waited without it, {tracks} tracks read",
        waited(&without)
    );
    assert!(with_end < without_end);
}

/// Proves `read_hit_keeps_read_ahead` for a reader faster than the media: 24 KiB
/// (48-sector) reads back to back ride the read-ahead. With the option they
/// stream within 15% of the media time of their sectors (the rest is a track
/// switch every 24 reads); without it the read-ahead stops at every track's
/// end, and each track costs at least the command overhead (0.15 ms) a read
/// pays before it positions again.
#[test]
fn read_hit_keeps_a_fast_reader_streaming() {
    let on = maxtor();
    let mut off = on.clone();
    off.firmware.cache.read_hit_keeps_read_ahead = false;
    let reads = 2_000;
    let starts = sequential(reads, 48);
    let (_, with_end) = reads_at(&on, &starts, 48);
    let (_, without_end) = reads_at(&off, &starts, 48);
    let first_track = first_track_sectors(&on);
    let revolution_ms = 60_000.0 / f64::from(on.mechanics.rpm);
    let media_ms = 48.0 * revolution_ms / first_track as f64;
    let per_read = |end: Nanoseconds| end.as_ms_f64() / reads as f64;
    assert!(
        per_read(with_end) < 1.15 * media_ms,
        "{:.4} ms per read with the option, media {media_ms:.4} ms",
        per_read(with_end)
    );
    let tracks = (reads * 48 / first_track) as f64;
    let lost_per_track = (without_end.as_ms_f64() - with_end.as_ms_f64()) / tracks;
    assert!(
        lost_per_track > on.firmware.overheads.read_miss_after_read_ms,
        "{lost_per_track:.3} ms lost per track without it ({:.4} ms per read, {:.4} with)",
        per_read(without_end),
        per_read(with_end)
    );
}

/// Proves `DriveOptions::read_ahead_disabled` turns the prefetch off and keeps
/// the cache: with it every sequential read (0.2 ms apart) misses, and reading
/// a block again is a hit; with the whole cache off it is not.
#[test]
fn read_ahead_disabled_keeps_the_cache() {
    let spec = maxtor();
    let think = Nanoseconds::from_us(200);
    let no_read_ahead = DriveOptions {
        read_ahead_disabled: true,
        ..DriveOptions::default()
    };
    let starts = sequential(200, 8);
    let (runs, _) = reads_with(&spec, no_read_ahead.clone(), &starts, 8, think);
    assert_eq!(misses(&runs), 200, "no read-ahead: every read misses");
    let (again, _) = reads_with(&spec, no_read_ahead, &[0, 0], 8, think);
    assert!(again[1].cache_hit(), "the cache still holds what was read");
    let no_cache = DriveOptions {
        cache_disabled: true,
        ..DriveOptions::default()
    };
    let (again, _) = reads_with(&spec, no_cache, &[0, 0], 8, think);
    assert!(!again[1].cache_hit(), "with the cache off, a reread misses");
    let (with_read_ahead, _) = reads_with(&spec, DriveOptions::default(), &starts, 8, think);
    assert_eq!(misses(&with_read_ahead), 1);
}
