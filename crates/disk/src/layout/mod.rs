//! LBN ↔ PBN mapping and track boundaries (pure: no timing).
//!
//! Two layouts: DiskSim's zoned `dm_layout_g1`
//! (module `zoned`, notes §2) and the serpentine numbering of the validation paper
//! (module `serpentine`). [`Layout::new`] validates the spec and precomputes tables
//! so that `lbn_to_pbn` and `track_of` are O(log zones + log slips) with no
//! allocation; `Layout` is cheap to clone (shared tables).
//!
//! Invariants (checked by the property tests): LBNs `0..capacity` and the
//! sectors reported as `SectorContent::Data` are in bijection through
//! `lbn_to_pbn`/`pbn_to_lbn`; `track_of(lbn)` contains `lbn`; `tracks()`
//! partitions `0..capacity` in LBN order. Where the zoned layout deliberately
//! differs from DiskSim is listed at the top of `zoned.rs`.

mod angle;
mod divide;
mod serpentine;
mod sparing;
mod track_map;
mod zoned;

use crate::spec::{LayoutSpec, ZonedLayoutSpec};
use angle::SectorGrid;
use serde::{Deserialize, Serialize};
use serpentine::SerpentineLayout;
use spinstack_sim::units::{Lbn, Sectors};
use std::sync::Arc;
use zoned::ZonedLayout;
pub use zoned::{ZonedProblem, MAX_CYLINDERS_PAST_COUNT};

/// A physical sector address. `sector` is the logical-order index on the track
/// (sector 0 holds the track's lowest LBN slot), as in DiskSim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Pbn {
    pub cylinder: u32,
    /// Physical head (surface) number.
    pub surface: u32,
    pub sector: u32,
}

/// What a physical sector holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SectorContent {
    Data(Lbn),
    /// Slipped, unused spare, or empty space at a zone front.
    Unused,
    /// A defective sector whose LBN was remapped elsewhere.
    Remapped,
}

/// One track's LBN range: the lowest and one past the highest LBN stored on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrackExtent {
    pub first: Lbn,
    pub sectors: Sectors,
    pub cylinder: u32,
    pub surface: u32,
}

impl TrackExtent {
    pub fn end(&self) -> Lbn {
        self.first.offset(self.sectors)
    }
    pub fn contains(&self, lbn: Lbn) -> bool {
        lbn >= self.first && lbn < self.end()
    }
}

/// One track's geometry from a single lookup ([`Layout::track_geometry`]):
/// its LBN range, physical size and rotational position, so that the angle
/// of any of its sectors needs no further lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrackGeometry {
    /// The LBNs whose home is this track, as [`Layout::track_of`] gives them.
    pub extent: TrackExtent,
    /// Physical sectors on the track, as [`Layout::sectors_per_track`] gives them.
    pub sectors_per_track: u32,
    /// Angle at which logical sector 0 starts passing under the head.
    pub first_angle: Angle,
    grid: SectorGrid,
}

impl TrackGeometry {
    /// The angle one sector spans: `floor(2^32 / sectors_per_track)`.
    #[inline]
    pub fn sector_width(&self) -> u32 {
        self.grid.sector_width
    }
    /// Equals [`Layout::angle_of`] for `Pbn { cylinder, surface, sector }` of
    /// this track; `sector` must be below `sectors_per_track`.
    #[inline]
    pub fn angle_of_sector(&self, sector: u32) -> Angle {
        debug_assert!(sector < self.sectors_per_track);
        self.grid.sector_angle(self.first_angle.0, sector)
    }
}

/// Angle as a fraction of a revolution: 2^32 is one full turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Angle(pub u32);

#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum LayoutError {
    #[error("{lbn} is beyond the drive's capacity of {capacity}")]
    LbnOutOfRange { lbn: Lbn, capacity: Sectors },
    #[error("physical address {pbn:?} does not exist on this drive")]
    PbnOutOfRange { pbn: Pbn },
    #[error("invalid layout: {0}")]
    Invalid(String),
}

/// A built layout: the spec plus precomputed tables for fast lookups.
#[derive(Clone, Debug)]
pub struct Layout {
    spec: LayoutSpec,
    model: Arc<Model>,
}

#[derive(Debug)]
enum Model {
    Zoned(ZonedLayout),
    Serpentine(SerpentineLayout),
}

/// Calls the same method on whichever model the layout holds.
macro_rules! dispatch {
    ($self:ident, $model:ident => $call:expr) => {
        match &*$self.model {
            Model::Zoned($model) => $call,
            Model::Serpentine($model) => $call,
        }
    };
}

impl Layout {
    pub fn new(spec: &LayoutSpec) -> Result<Layout, LayoutError> {
        let model = match spec {
            LayoutSpec::Zoned(zoned) => {
                Model::Zoned(ZonedLayout::new(zoned).map_err(|problem| problem.error)?)
            }
            LayoutSpec::Serpentine(serp) => Model::Serpentine(SerpentineLayout::new(serp)?),
        };
        Ok(Layout {
            spec: spec.clone(),
            model: Arc::new(model),
        })
    }
    /// [`Layout::new`] of a zoned spec, saying which zone a refusal is about (the
    /// DiskSim importer names that zone's file and line).
    pub fn new_zoned(spec: &ZonedLayoutSpec) -> Result<Layout, ZonedProblem> {
        let model = Model::Zoned(ZonedLayout::new(spec)?);
        Ok(Layout {
            spec: LayoutSpec::Zoned(spec.clone()),
            model: Arc::new(model),
        })
    }
    pub fn spec(&self) -> &LayoutSpec {
        &self.spec
    }
    /// LBNs the drive exports (derived from the layout, as DiskSim does).
    pub fn capacity(&self) -> Sectors {
        dispatch!(self, m => m.capacity())
    }
    pub fn cylinders(&self) -> u32 {
        dispatch!(self, m => m.cylinders())
    }
    pub fn surfaces(&self) -> u32 {
        dispatch!(self, m => m.surfaces())
    }
    /// Where `lbn` is stored: its replacement sector if its home sector is a
    /// remapped defect. `sector` is the logical-order index on the track.
    #[inline]
    pub fn lbn_to_pbn(&self, lbn: Lbn) -> Result<Pbn, LayoutError> {
        dispatch!(self, m => m.lbn_to_pbn(lbn))
    }
    pub fn pbn_to_lbn(&self, pbn: Pbn) -> Result<SectorContent, LayoutError> {
        dispatch!(self, m => m.pbn_to_lbn(pbn))
    }
    /// Physical sectors on the track at (cylinder, surface), counting spares and slips.
    #[inline]
    pub fn sectors_per_track(&self, cylinder: u32, surface: u32) -> Result<u32, LayoutError> {
        dispatch!(self, m => m.sectors_per_track(cylinder, surface))
    }
    /// The track holding `lbn`, as a track-boundary query: the lowest LBN and
    /// the count of LBNs on it. As in DiskSim, remapping is ignored: a remapped
    /// LBN belongs to its home (defective) track, whose LBN range stays
    /// contiguous; use [`Layout::is_remapped`] to learn that it lives elsewhere.
    #[inline]
    pub fn track_of(&self, lbn: Lbn) -> Result<TrackExtent, LayoutError> {
        dispatch!(self, m => m.track_of(lbn))
    }
    /// Whether `lbn` is stored in a replacement sector away from its home track.
    pub fn is_remapped(&self, lbn: Lbn) -> Result<bool, LayoutError> {
        match &*self.model {
            Model::Zoned(m) => m.is_remapped(lbn),
            Model::Serpentine(m) => m.lbn_to_pbn(lbn).map(|_| false),
        }
    }
    /// Every track that holds at least one LBN, in LBN order: the true track map.
    pub fn tracks(&self) -> Vec<TrackExtent> {
        dispatch!(self, m => m.tracks())
    }
    /// Angle at which the physical sector starts passing under the head.
    #[inline]
    pub fn angle_of(&self, pbn: Pbn) -> Result<Angle, LayoutError> {
        dispatch!(self, m => m.angle_of(pbn))
    }
    /// [`Layout::lbn_to_pbn`] and [`Layout::angle_of`] of that sector in one
    /// lookup: what a shortest-positioning-time scheduler needs per request.
    pub fn locate(&self, lbn: Lbn) -> Result<(Pbn, Angle), LayoutError> {
        dispatch!(self, m => m.locate(lbn))
    }
    /// [`Layout::track_of`] plus the track's size and rotational position, in
    /// one lookup: what a planner needs per track. Angles of the track's
    /// sectors then come from [`TrackGeometry::angle_of_sector`].
    pub fn track_geometry(&self, lbn: Lbn) -> Result<TrackGeometry, LayoutError> {
        dispatch!(self, m => m.track_geometry(lbn))
    }
}
