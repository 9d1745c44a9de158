//! The map type, its constructor (which enforces tiling) and its queries.

use serde::Serialize;
use spinstack_sim::units::{Lbn, Sectors};

/// Where a track lies: its cylinder and its (physical) surface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct TrackLocation {
    pub cylinder: u32,
    pub surface: u32,
}

/// A physical sector: cylinder, surface, and the sector's logical-order index on
/// that track (sector 0 holds the track's lowest LBN slot, as in DiskSim).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SectorLocation {
    pub cylinder: u32,
    pub surface: u32,
    pub sector: u32,
}

/// One track: the LBNs `[first, first + sectors)`. A track on its own proves
/// nothing; a [`TrackMap`] holding it proves it fits with its neighbours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Track {
    pub first: Lbn,
    pub sectors: Sectors,
    /// Where the track lies, when the method observed it (timing-only extraction
    /// does not).
    pub location: Option<TrackLocation>,
    /// The method could not decide this track's boundaries with its stated
    /// confidence.
    pub uncertain: bool,
}

impl Track {
    /// One past the track's last LBN.
    pub fn end(&self) -> Lbn {
        self.first.offset(self.sectors)
    }
    pub fn contains(&self, lbn: Lbn) -> bool {
        lbn >= self.first && lbn < self.end()
    }
}

/// An LBN stored away from its home track (a remapped defect). Its home track is
/// the map's track covering it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RemappedLbn {
    pub lbn: Lbn,
    pub stored_at: SectorLocation,
}

/// Why a list of tracks does not tile `[0, capacity)`. `index` counts tracks (or
/// remapped entries) from 0, in the order given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TilingError {
    #[error("track {index} at {first} is empty (0 sectors)")]
    EmptyTrack { index: usize, first: Lbn },
    #[error("track {index} at {first} leaves a gap: the map so far ends at {expected}")]
    Gap {
        index: usize,
        first: Lbn,
        expected: Lbn,
    },
    #[error(
        "track {index} at {first} overlaps the tracks before it: the map so far ends at {expected}"
    )]
    Overlap {
        index: usize,
        first: Lbn,
        expected: Lbn,
    },
    #[error("track {index} at {first} (+{}) runs past the capacity of {capacity}", sectors.0)]
    PastCapacity {
        index: usize,
        first: Lbn,
        sectors: Sectors,
        capacity: Sectors,
    },
    #[error("the tracks end at {end} but the capacity is {capacity}: the map is incomplete")]
    Incomplete { end: Lbn, capacity: Sectors },
    #[error("remapped entry {index}, {lbn}, is past the capacity of {capacity}")]
    RemappedPastCapacity {
        index: usize,
        lbn: Lbn,
        capacity: Sectors,
    },
}

/// A drive's track map: tracks that tile `[0, capacity)` in LBN order, and the
/// LBNs stored away from their home track. See the crate documentation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TrackMap {
    drive: String,
    method: String,
    capacity: Sectors,
    tracks: Vec<Track>,
    remapped: Vec<RemappedLbn>,
}

impl TrackMap {
    /// A map of `drive` found by `method`, if `tracks` tile `[0, capacity)` and
    /// every remapped LBN is below `capacity`; otherwise the first violation, in
    /// track order. A capacity of 0 with no tracks is a (trivially tiled) map.
    pub fn new(
        drive: impl Into<String>,
        method: impl Into<String>,
        capacity: Sectors,
        tracks: Vec<Track>,
        remapped: Vec<RemappedLbn>,
    ) -> Result<TrackMap, TilingError> {
        check_tiling(&tracks, capacity)?;
        if let Some((index, r)) = remapped
            .iter()
            .enumerate()
            .find(|(_, r)| r.lbn.0 >= capacity.0)
        {
            return Err(TilingError::RemappedPastCapacity {
                index,
                lbn: r.lbn,
                capacity,
            });
        }
        Ok(TrackMap {
            drive: drive.into(),
            method: method.into(),
            capacity,
            tracks,
            remapped,
        })
    }

    /// The drive the map describes, as its header names it.
    pub fn drive(&self) -> &str {
        &self.drive
    }
    /// How the map was found (`scsi-walk-jump`, `timing`, `truth`, ...).
    pub fn method(&self) -> &str {
        &self.method
    }
    /// The LBNs the drive exports; the tracks end exactly here.
    pub fn capacity(&self) -> Sectors {
        self.capacity
    }
    /// Every track, in LBN order.
    pub fn tracks(&self) -> &[Track] {
        &self.tracks
    }
    pub fn track_count(&self) -> usize {
        self.tracks.len()
    }
    /// LBNs stored away from their home track, in the order given.
    pub fn remapped(&self) -> &[RemappedLbn] {
        &self.remapped
    }
    pub fn uncertain_track_count(&self) -> usize {
        self.tracks.iter().filter(|t| t.uncertain).count()
    }
    /// Each track's length, in LBN order.
    pub fn track_sizes(&self) -> impl ExactSizeIterator<Item = Sectors> + '_ {
        self.tracks.iter().map(|t| t.sectors)
    }

    /// Index (in [`TrackMap::tracks`]) of the track holding `lbn`; `None` past
    /// the capacity.
    pub fn track_index_of(&self, lbn: Lbn) -> Option<usize> {
        if lbn.0 >= self.capacity.0 {
            return None;
        }
        // Tiling: track 0 starts at LBN 0 <= lbn, so at least one track starts at
        // or before `lbn`, and the last of them holds it.
        Some(self.tracks.partition_point(|t| t.first <= lbn) - 1)
    }

    /// The track holding `lbn`; `None` past the capacity.
    pub fn track_containing(&self, lbn: Lbn) -> Option<Track> {
        self.track_index_of(lbn).map(|index| self.tracks[index])
    }

    /// The first track start strictly after `lbn`: where an extent starting at
    /// `lbn` must stop so as not to cross onto another track. `None` when `lbn`
    /// is on the last track or past the capacity (the map then ends at
    /// [`TrackMap::capacity`]).
    pub fn next_boundary_after(&self, lbn: Lbn) -> Option<Lbn> {
        let next = self.tracks.partition_point(|t| t.first <= lbn);
        self.tracks.get(next).map(|t| t.first)
    }

    /// How many whole tracks `[lbn, lbn + sectors)` covers, if it is not empty
    /// and starts and ends on track boundaries (the capacity counts as the end
    /// of the last track); `None` otherwise. `Some(1)`: exactly one track.
    pub fn whole_tracks(&self, lbn: Lbn, sectors: Sectors) -> Option<usize> {
        if sectors.0 == 0 {
            return None;
        }
        let first = self.track_index_of(lbn)?;
        if self.tracks[first].first != lbn {
            return None;
        }
        let end = lbn.0.checked_add(sectors.0)?;
        if end > self.capacity.0 {
            return None;
        }
        // The first track starting at or after `end`: `end` is a boundary when
        // that track starts exactly there, or when no track is left and `end` is
        // the capacity (already known not to be exceeded).
        let after = self.tracks.partition_point(|t| t.first.0 < end);
        let ends_on_boundary = self
            .tracks
            .get(after)
            .map_or(end == self.capacity.0, |t| t.first.0 == end);
        ends_on_boundary.then_some(after - first)
    }

    /// Whether `[lbn, lbn + sectors)` is non-empty and starts and ends on track
    /// boundaries.
    pub fn is_track_aligned(&self, lbn: Lbn, sectors: Sectors) -> bool {
        self.whole_tracks(lbn, sectors).is_some()
    }

    /// Numbers of the blocks, `block_size` sectors each and numbered from LBN 0,
    /// that hold a track boundary strictly inside them, in increasing order and
    /// each once: the blocks a file system of that block size must never use if
    /// no block is to span two tracks (the `mke2fs -l` bad-block list of the
    /// Linux validation paper's ext2 integration). The capacity is not a
    /// boundary: the partial block past it is the file system's business.
    ///
    /// # Panics
    /// If `block_size` is 0 sectors.
    pub fn boundary_crossing_blocks(&self, block_size: Sectors) -> impl Iterator<Item = u64> + '_ {
        assert!(block_size.0 > 0, "a block of 0 sectors");
        let block_sectors = block_size.0;
        let mut last_listed = None;
        // Track 0's start (LBN 0) is no boundary between tracks.
        self.tracks
            .iter()
            .skip(1)
            .map(|t| t.first.0)
            .filter(move |boundary| boundary % block_sectors != 0)
            .map(move |boundary| boundary / block_sectors)
            // Tracks shorter than a block put several boundaries in one block.
            .filter(move |&block| last_listed.replace(block) != Some(block))
    }
}

/// The first way `tracks` fail to tile `[0, capacity)`, in track order.
fn check_tiling(tracks: &[Track], capacity: Sectors) -> Result<(), TilingError> {
    // Where the next track must start; it never passes the capacity, so the
    // room left (`capacity - expected`) cannot underflow and comparing a track's
    // length with it cannot overflow.
    let mut expected = Lbn(0);
    for (index, track) in tracks.iter().enumerate() {
        let first = track.first;
        if track.sectors.0 == 0 {
            return Err(TilingError::EmptyTrack { index, first });
        }
        if first < expected {
            return Err(TilingError::Overlap {
                index,
                first,
                expected,
            });
        }
        if first > expected {
            return Err(TilingError::Gap {
                index,
                first,
                expected,
            });
        }
        if track.sectors.0 > capacity.0 - expected.0 {
            return Err(TilingError::PastCapacity {
                index,
                first,
                sectors: track.sectors,
                capacity,
            });
        }
        expected = track.end();
    }
    if expected.0 != capacity.0 {
        return Err(TilingError::Incomplete {
            end: expected,
            capacity,
        });
    }
    Ok(())
}
