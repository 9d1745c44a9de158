//! Extraction by SCSI address translation (SEND/RECEIVE DIAGNOSTIC, page 0x40).
//!
//! Two algorithms share one engine:
//!
//! * **Walk/jump** (validation paper §2.3): walk sector by sector from LBN 0 until
//!   the cylinder or surface changes; that gives the first track and its size S.
//!   Then, from each new boundary T, translate T+S−1 and T+S: if the first is still
//!   on T's track and the second is not, T+S is the next boundary. Otherwise the
//!   size changed and the paper walks sector by sector from T. The
//!   [`Fallback::RecentSizesThenBisect`] variant first tries the few track sizes
//!   seen lately (serpentine drives alternate between per-surface sizes), then
//!   bisects between T and the jump point; "LBN x is on T's track" is monotone in x
//!   because every track holds one contiguous LBN range.
//! * **Zone-aware** (in the spirit of DIXtrac, traxtents §4.1.2): the same engine,
//!   plus galloping over runs of identical tracks. It learns the order in which
//!   tracks follow one another (the period of the cylinder/surface moves), predicts
//!   the next k tracks, and verifies the prediction at both ends of the run: the
//!   first predicted track must end, and the last one start and end, at the
//!   predicted places and sector slots, and the LBN k·S ahead must start the track
//!   after. A track shorter than S (a slip) shifts the slot; a zone change breaks
//!   the size or the order; either makes a check fail and the gallop halves.
//!   Cylinders holding a defect from READ DEFECT LIST are never galloped over, and
//!   the moves over them do not teach the period (slipped cylinders that recur would
//!   teach their own order); runs of tracks of one or two sectors are walked. The
//!   checks are a DIXtrac-style wager on regularity, not a proof: the property test
//!   (`tests/scsi_properties.rs`) runs it on random layouts far less regular than
//!   drives', and a sweep of 1,600,000 of them found no inexact map after these rules
//!   (before them, 2 in 80,000).
//!
//! Both read the defect list first (READ DEFECT LIST + reverse translation, DIXtrac
//! step 5) to learn which LBNs are remapped away from their home track, so that a
//! remapped LBN is judged by its home track and recorded in the map.

use crate::probe::{Probe, ProbeError, Translator};
use serde::Serialize;
use spinstack_disk::layout::{Pbn, SectorContent};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_trackmap::{RemappedLbn, Track, TrackLocation, TrackMap};
use std::collections::{BTreeMap, HashSet, VecDeque};

/// What the walk/jump algorithm does when the jump check fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Fallback {
    /// As the paper: walk sector by sector from the last boundary.
    WalkFromBoundary,
    /// Try recently seen track sizes, then bisect.
    RecentSizesThenBisect,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ScsiAlgorithm {
    WalkJump(Fallback),
    ZoneAware,
}

impl ScsiAlgorithm {
    pub fn method_name(self) -> &'static str {
        match self {
            ScsiAlgorithm::WalkJump(Fallback::WalkFromBoundary) => "scsi-walk-jump-literal",
            ScsiAlgorithm::WalkJump(Fallback::RecentSizesThenBisect) => "scsi-walk-jump",
            ScsiAlgorithm::ZoneAware => "scsi-zone-aware",
        }
    }
}

/// The result of one SCSI extraction.
#[derive(Clone, Debug)]
pub struct ScsiExtraction {
    pub map: TrackMap,
    /// Address translations sent to the drive (both directions).
    pub translations: u64,
    /// Tracks accepted by galloping (zone-aware only).
    pub galloped_tracks: u64,
}

impl ScsiExtraction {
    pub fn translations_per_track(&self) -> f64 {
        self.translations as f64 / self.map.track_count().max(1) as f64
    }
}

/// Extract the track map of the drive behind `probe` by address translation.
pub fn extract<P: Probe + ?Sized>(
    probe: &mut P,
    algorithm: ScsiAlgorithm,
) -> Result<ScsiExtraction, ProbeError> {
    let drive = probe.name();
    if !probe.capabilities().translate {
        return Err(ProbeError::Unsupported {
            probe: drive,
            command: "SEND/RECEIVE DIAGNOSTIC translate address",
            reason: "the device does not answer address translation".to_string(),
        });
    }
    let capacity = probe.read_capacity()?;
    let use_defect_list = probe.capabilities().defect_list;
    let mut engine = Engine::new(Translator::new(probe), capacity.0, algorithm);
    if use_defect_list {
        engine.learn_remaps()?;
    }
    engine.run()?;
    let translations = engine.translator.issued();
    let remapped = engine
        .remapped
        .iter()
        .map(|(&lbn, r)| RemappedLbn {
            lbn: Lbn(lbn),
            stored_at: r.stored_at.into(),
        })
        .collect();
    // The engine walks from 0 to the capacity track after track, so its tracks
    // tile unless the drive's answers contradict each other.
    let map = TrackMap::new(
        drive.clone(),
        algorithm.method_name(),
        capacity,
        engine.tracks,
        remapped,
    )
    .map_err(|tiling| ProbeError::Failed {
        probe: drive,
        command: "assembling the track map",
        detail: tiling.to_string(),
    })?;
    Ok(ScsiExtraction {
        map,
        translations,
        galloped_tracks: engine.galloped,
    })
}

/// (cylinder, surface) as the engine computes with it.
type Location = (u32, u32);

fn track_location((cylinder, surface): Location) -> TrackLocation {
    TrackLocation { cylinder, surface }
}

fn engine_location(location: TrackLocation) -> Location {
    (location.cylinder, location.surface)
}

#[derive(Clone, Copy, Debug)]
struct Remap {
    home: Location,
    stored_at: Pbn,
}

/// Recent distinct track sizes kept for the fallback.
const RECENT_SIZES_BOUND: usize = 4;
/// Track-order moves remembered for learning the period.
const MOVE_HISTORY_BOUND: usize = 1024;
/// The longest track-order period looked for (serpentine bands of 32 cylinders on
/// 4 surfaces need 2·4·32).
const LONGEST_PERIOD: usize = 320;
const LONGEST_GALLOP: u64 = 512;
/// The shortest track galloped over.
const MINIMUM_GALLOP_TRACK_SECTORS: u64 = 3;
/// Moves a short period must explain before it is trusted.
const MINIMUM_PERIOD_EVIDENCE: usize = 12;

struct Engine<'a, P: Probe + ?Sized> {
    translator: Translator<'a, P>,
    capacity: u64,
    algorithm: ScsiAlgorithm,
    remapped: BTreeMap<u64, Remap>,
    defective_cylinders: HashSet<u32>,
    tracks: Vec<Track>,
    recent_sizes: VecDeque<u64>,
    moves: VecDeque<(i64, i64)>,
    period: Option<usize>,
    gallop: u64,
    galloped: u64,
    /// Sector slots of the first and last LBN of the last track, when known
    /// without a translation (after a gallop, every track repeats them).
    slots: Option<(u32, u32)>,
}

impl<'a, P: Probe + ?Sized> Engine<'a, P> {
    fn new(translator: Translator<'a, P>, capacity: u64, algorithm: ScsiAlgorithm) -> Self {
        Engine {
            translator,
            capacity,
            algorithm,
            remapped: BTreeMap::new(),
            defective_cylinders: HashSet::new(),
            tracks: Vec::new(),
            recent_sizes: VecDeque::new(),
            moves: VecDeque::new(),
            period: None,
            gallop: 4,
            galloped: 0,
            slots: None,
        }
    }

    /// DIXtrac step 5: for each remapped defect, find the LBN whose home it is
    /// (from the nearest data sector on the same track) and where it now lives.
    fn learn_remaps(&mut self) -> Result<(), ProbeError> {
        let defects = self.translator.probe().read_defect_list()?;
        for defect in defects {
            // Spares shared by a cylinder carry a defect's effect to its other tracks.
            self.defective_cylinders.insert(defect.cylinder);
            if self.translator.pbn(defect)? != SectorContent::Remapped {
                continue; // a slipped defect holds no LBN: nothing moved
            }
            if let Some(lbn) = self.home_lbn_of(defect)? {
                let stored_at = self.translator.lbn(Lbn(lbn))?;
                let home = (defect.cylinder, defect.surface);
                self.remapped.insert(lbn, Remap { home, stored_at });
            }
        }
        Ok(())
    }

    /// The LBN whose home slot is `defect`: one past the nearest earlier data
    /// sector, counting remapped slots in between (they hold LBNs too).
    fn home_lbn_of(&mut self, defect: Pbn) -> Result<Option<u64>, ProbeError> {
        let mut lbns_between = 1;
        for sector in (0..defect.sector).rev() {
            let pbn = Pbn { sector, ..defect };
            match self.translator.pbn(pbn)? {
                SectorContent::Data(lbn) => return Ok(Some(lbn.0 + lbns_between)),
                SectorContent::Remapped => lbns_between += 1,
                SectorContent::Unused => {}
            }
        }
        // No data before it on the track: use the first data sector after it.
        let mut lbns_between = 1;
        for sector in defect.sector + 1.. {
            let pbn = Pbn { sector, ..defect };
            match self.translator.pbn(pbn) {
                Ok(SectorContent::Data(lbn)) => return Ok(lbn.0.checked_sub(lbns_between)),
                Ok(SectorContent::Remapped) => lbns_between += 1,
                Ok(SectorContent::Unused) => {}
                Err(_) => return Ok(None), // ran off the track
            }
        }
        Ok(None)
    }

    /// The home track of `lbn`.
    fn home(&mut self, lbn: u64) -> Result<Location, ProbeError> {
        if let Some(r) = self.remapped.get(&lbn) {
            return Ok(r.home);
        }
        let pbn = self.translator.lbn(Lbn(lbn))?;
        Ok((pbn.cylinder, pbn.surface))
    }

    /// Whether `lbn` lies on the track at `location` (`capacity` never does).
    fn on(&mut self, lbn: u64, location: Location) -> Result<bool, ProbeError> {
        Ok(lbn < self.capacity && self.home(lbn)? == location)
    }

    /// Whether the track starting at `start` (at `location`) ends exactly at `end`.
    fn ends_at(&mut self, start: u64, location: Location, end: u64) -> Result<bool, ProbeError> {
        if end <= start || end > self.capacity {
            return Ok(false);
        }
        Ok(self.on(end - 1, location)? && !self.on(end, location)?)
    }

    fn run(&mut self) -> Result<(), ProbeError> {
        let mut start = 0;
        while start < self.capacity {
            if self.algorithm == ScsiAlgorithm::ZoneAware {
                let after = self.try_gallop(start)?;
                if after != start {
                    start = after;
                    continue;
                }
            }
            self.slots = None;
            let location = self.home(start)?;
            let end = self.track_end(start, location)?;
            self.accept(start, end, location);
            start = end;
        }
        Ok(())
    }

    fn accept(&mut self, start: u64, end: u64, location: Location) {
        let size = end - start;
        if let Some(last) = self
            .tracks
            .last()
            .and_then(|t| t.location)
            .map(engine_location)
        {
            let step = (
                i64::from(location.0) - i64::from(last.0),
                i64::from(location.1) - i64::from(last.1),
            );
            if self.defective_cylinders.contains(&last.0)
                || self.defective_cylinders.contains(&location.0)
            {
                // A slip or defect bends a cylinder's track order; a period learned
                // over it could describe the slips (slipped cylinders that happen to
                // recur) rather than the zone, and a gallop checks only its two ends.
                self.forget_moves();
            } else {
                self.record_move(step);
            }
        }
        self.tracks.push(Track {
            first: Lbn(start),
            sectors: Sectors(size),
            location: Some(track_location(location)),
            uncertain: false,
        });
        if self.recent_sizes.front() != Some(&size) {
            self.recent_sizes.retain(|&s| s != size);
            self.recent_sizes.push_front(size);
            self.recent_sizes.truncate(RECENT_SIZES_BOUND);
        }
        assert!(self.recent_sizes.len() <= RECENT_SIZES_BOUND);
    }

    /// One past the last LBN of the track that starts at `start`.
    fn track_end(&mut self, start: u64, location: Location) -> Result<u64, ProbeError> {
        if let Some(&size) = self.recent_sizes.front() {
            if self.ends_at(start, location, start + size)? {
                return Ok(start + size);
            }
        }
        let literal = self.algorithm == ScsiAlgorithm::WalkJump(Fallback::WalkFromBoundary);
        if literal || self.recent_sizes.is_empty() {
            return self.walk(start, location);
        }
        let others: Vec<u64> = self.recent_sizes.iter().skip(1).copied().collect();
        for size in others {
            if self.ends_at(start, location, start + size)? {
                return Ok(start + size);
            }
        }
        self.bisect(start, location)
    }

    fn walk(&mut self, start: u64, location: Location) -> Result<u64, ProbeError> {
        let mut lbn = start + 1;
        while self.on(lbn, location)? {
            lbn += 1;
        }
        Ok(lbn)
    }

    /// Smallest LBN after `start` off its track: widen until off, then bisect.
    fn bisect(&mut self, start: u64, location: Location) -> Result<u64, ProbeError> {
        let mut on = start;
        let mut span = self.recent_sizes.iter().copied().max().unwrap_or(1).max(1);
        let mut off = loop {
            let probe_at = (start + span).min(self.capacity);
            if !self.on(probe_at, location)? {
                break probe_at;
            }
            on = probe_at;
            span *= 2;
        };
        while off - on > 1 {
            let middle = on + (off - on) / 2;
            if self.on(middle, location)? {
                on = middle;
            } else {
                off = middle;
            }
        }
        Ok(off)
    }

    /// Starts learning the track order afresh.
    fn forget_moves(&mut self) {
        self.moves.clear();
        self.period = None;
    }

    fn record_move(&mut self, step: (i64, i64)) {
        if let Some(p) = self.period {
            let n = self.moves.len();
            if n < p || self.moves[n - p] != step {
                self.period = None;
            }
        }
        self.moves.push_back(step);
        if self.moves.len() > MOVE_HISTORY_BOUND {
            self.moves.pop_front();
        }
        assert!(self.moves.len() <= MOVE_HISTORY_BOUND);
        if self.period.is_none() && self.algorithm == ScsiAlgorithm::ZoneAware {
            self.period = self.find_period();
        }
    }

    /// The smallest period the latest moves repeat with, seen at least twice in a
    /// row (older moves may belong to another zone's pattern).
    fn find_period(&self) -> Option<usize> {
        let n = self.moves.len();
        (1..=LONGEST_PERIOD.min(n / 2)).find(|&p| {
            let window = (2 * p).max(MINIMUM_PERIOD_EVIDENCE);
            window <= n && (n - window + p..n).all(|i| self.moves[i] == self.moves[i - p])
        })
    }

    /// The next `count` track locations after the last accepted one, by the period.
    fn predict(&self, count: u64) -> Option<Vec<Location>> {
        let p = self.period?;
        let mut location = engine_location(self.tracks.last()?.location?);
        let n = self.moves.len();
        let mut out = Vec::with_capacity(count as usize);
        for i in 0..count as usize {
            let step = self.moves[n - p + (i % p)];
            let cylinder = i64::from(location.0) + step.0;
            let surface = i64::from(location.1) + step.1;
            location = (u32::try_from(cylinder).ok()?, u32::try_from(surface).ok()?);
            out.push(location);
        }
        Some(out)
    }

    /// Accept as many identical tracks after `start` as a verified gallop allows;
    /// returns the new start.
    fn try_gallop(&mut self, start: u64) -> Result<u64, ProbeError> {
        let Some(last) = self.tracks.last().copied() else {
            return Ok(start);
        };
        let size = last.sectors.0;
        // On tracks of a sector or two a slot tells almost nothing (spare sectors
        // there are whole tracks), so such runs are walked, never galloped.
        if size < MINIMUM_GALLOP_TRACK_SECTORS {
            return Ok(start);
        }
        // Gallop only in a settled run of equal tracks, never just after an odd one.
        let run = self.tracks.iter().rev().take(MINIMUM_PERIOD_EVIDENCE);
        if self.tracks.len() < MINIMUM_PERIOD_EVIDENCE || run.clone().any(|t| t.sectors.0 != size) {
            return Ok(start);
        }
        let mut k = self.gallop.min((self.capacity - start) / size);
        while k >= 2 {
            if self.gallop_holds(start, size, k)? {
                let slots = self.slots;
                self.accept_gallop(start, size, k);
                self.slots = slots;
                self.gallop = (k * 2).min(LONGEST_GALLOP);
                return Ok(start + k * size);
            }
            k /= 2;
        }
        self.gallop = 4;
        Ok(start)
    }

    fn gallop_holds(&mut self, start: u64, size: u64, k: u64) -> Result<bool, ProbeError> {
        let Some(predicted) = self.predict(k) else {
            return Ok(false);
        };

        let end = start + k * size;
        let touched = [start, end - 1, end];
        if predicted
            .iter()
            .any(|l| self.defective_cylinders.contains(&l.0))
            || touched.iter().any(|l| self.remapped.contains_key(l))
        {
            return Ok(false);
        }
        let (first_slot, last_slot) = match self.slots {
            Some(slots) => slots,
            None => {
                let last = self.tracks.last().copied().expect("a track was accepted");
                let first_slot = self.translator.lbn(last.first)?.sector;
                (
                    first_slot,
                    self.translator.lbn(Lbn(last.end().0 - 1))?.sector,
                )
            }
        };
        self.slots = Some((first_slot, last_slot));
        // Each checked track must start and end at its predicted place and slots.
        // The two ends alone can be fooled where tracks shift by whole tracks (spare
        // tracks) or a zone change's tracks add up to whole tracks of this size, so
        // the first, middle and last predicted tracks are all checked.
        for index in [0, k / 2, k - 1] {
            let first = start + index * size;
            let location = predicted[index as usize];
            let first_pbn = self.translator.lbn(Lbn(first))?;
            let last_pbn = self.translator.lbn(Lbn(first + size - 1))?;
            if (first_pbn.cylinder, first_pbn.surface) != location
                || first_pbn.sector != first_slot
                || (last_pbn.cylinder, last_pbn.surface) != location
                || last_pbn.sector != last_slot
            {
                return Ok(false);
            }
        }
        if end == self.capacity {
            return Ok(true);
        }
        let after = self.translator.lbn(Lbn(end))?;
        let next = self.predict(k + 1).map(|p| p[p.len() - 1]);
        Ok(Some((after.cylinder, after.surface)) == next && after.sector == first_slot)
    }

    fn accept_gallop(&mut self, start: u64, size: u64, k: u64) {
        let predicted = self.predict(k).expect("verified by gallop_holds");
        for (i, location) in predicted.into_iter().enumerate() {
            self.accept(
                start + i as u64 * size,
                start + (i as u64 + 1) * size,
                location,
            );
        }
        self.galloped += k;
    }
}
