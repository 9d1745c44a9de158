//! Timing-only extraction (traxtents §4.1.1). Written below.

use crate::map::TrackMap;
use crate::probe::{Probe, ProbeError};

#[derive(Clone, Debug, Default)]
pub struct TimingOptions {}

pub struct TimingExtraction {
    pub map: TrackMap,
}

pub fn extract<P: Probe + ?Sized>(probe: &mut P, options: &TimingOptions) -> Result<TimingExtraction, ProbeError> {
    let _ = options;
    Err(ProbeError::Unsupported { probe: probe.name(), command: "timing", reason: "not yet".into() })
}
