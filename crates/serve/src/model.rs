//! The timed model of a persistent array, for `serve --timing model`: the same
//! level, chunk, track-unit policy and buffer as the array, over the drives its
//! superblocks name (catalog models).
//!
//! The model's host cost is zero: the CPU work of the RAID layer happens for real in
//! the serving process, in wall time, so modelling it as well would count it twice.

use spinstack_array::{member_disks, ArraySpec, TrackUnits};
use spinstack_disk::drive::DriveOptions;
use spinstack_volume::build::{build, Volume};
use spinstack_volume::config::{VolumeSpec, DEFAULT_STRIPE_CACHE};
use spinstack_volume::timed::{HostCost, ReadBalance};

/// Why the model could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("timing model: {0}")]
    Build(String),
    #[error(
        "timing model: the array holds {array_sectors} sectors but the model of its drives \
         only {model_sectors}; member size exceeds a drive's capacity"
    )]
    TooLarge {
        array_sectors: u64,
        model_sectors: u64,
    },
}

/// The volume spec of `spec`'s timed model.
pub fn volume_spec(spec: &ArraySpec) -> VolumeSpec {
    VolumeSpec {
        level: spec.level,
        chunk: spec.chunk,
        members: member_disks(spec),
        copies: 2,
        track_units: spec.track_units.unwrap_or(TrackUnits::WholeTrack),
        read_balance: ReadBalance::default(),
        fill_in_parity: spec.level.fill_in_parity_by_default(),
        stripe_cache: DEFAULT_STRIPE_CACHE,
        delayed_stripes: true,
        buffer: spec.buffer,
        plug: None,
        host: HostCost::NONE,
        origin: None,
    }
}

/// Builds the timed model of an array of `array_sectors` sectors.
pub fn model_volume(spec: &ArraySpec, array_sectors: u64) -> Result<Volume, ModelError> {
    let built = build(&volume_spec(spec), &DriveOptions::default())
        .map_err(|error| ModelError::Build(error.to_string()))?;
    let model_sectors = spinstack_sim::device::BlockDevice::capacity(&built.volume).0;
    if model_sectors < array_sectors {
        return Err(ModelError::TooLarge {
            array_sectors,
            model_sectors,
        });
    }
    Ok(built.volume)
}
