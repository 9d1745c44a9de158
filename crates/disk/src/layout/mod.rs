//! LBN ↔ PBN mapping and track boundaries (pure: no timing).
//!
//! OWNER: layout helper. The public API below is the contract other crates code
//! against; bodies marked `todo!` are to be written.

use crate::spec::LayoutSpec;
use serde::{Deserialize, Serialize};
use spinstack_sim::units::{Lbn, Sectors};

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

/// Angle as a fraction of a revolution: 2^32 is one full turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Angle(pub u32);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
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
}

impl Layout {
    pub fn new(spec: &LayoutSpec) -> Result<Layout, LayoutError> {
        let _ = spec;
        todo!("layout helper")
    }
    pub fn spec(&self) -> &LayoutSpec {
        &self.spec
    }
    /// LBNs the drive exports (derived from the layout, as DiskSim does).
    pub fn capacity(&self) -> Sectors {
        todo!()
    }
    pub fn cylinders(&self) -> u32 {
        todo!()
    }
    pub fn surfaces(&self) -> u32 {
        todo!()
    }
    pub fn lbn_to_pbn(&self, lbn: Lbn) -> Result<Pbn, LayoutError> {
        let _ = lbn;
        todo!()
    }
    pub fn pbn_to_lbn(&self, pbn: Pbn) -> Result<SectorContent, LayoutError> {
        let _ = pbn;
        todo!()
    }
    /// Physical sectors on the track at (cylinder, surface), counting spares and slips.
    pub fn sectors_per_track(&self, cylinder: u32, surface: u32) -> Result<u32, LayoutError> {
        let _ = (cylinder, surface);
        todo!()
    }
    /// The track holding `lbn`, as a track-boundary query.
    pub fn track_of(&self, lbn: Lbn) -> Result<TrackExtent, LayoutError> {
        let _ = lbn;
        todo!()
    }
    /// Every track that holds at least one LBN, in LBN order: the true track map.
    pub fn tracks(&self) -> Vec<TrackExtent> {
        todo!()
    }
    /// Angle at which the physical sector starts passing under the head.
    pub fn angle_of(&self, pbn: Pbn) -> Result<Angle, LayoutError> {
        let _ = pbn;
        todo!()
    }
}
