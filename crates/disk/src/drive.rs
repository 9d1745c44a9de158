//! The timed drive: mechanics + firmware over a [`Layout`], served through
//! [`BlockDevice`]. OWNER: drive-timing helper. The signatures here are the
//! contract other crates code against.

use crate::layout::{Layout, LayoutError};
use crate::spec::DriveSpec;
use spinstack_sim::device::{BlockDevice, DeviceError};
use spinstack_sim::request::{BlockRequest, Completion};
use spinstack_sim::units::{Nanoseconds, Sectors};

/// Knobs that are not facts about the drive but about the experiment.
#[derive(Clone, Debug, Default)]
pub struct DriveOptions {
    /// Overrides the spec's command-queue depth (e.g. 16 for SPTF experiments).
    pub queue_depth: Option<u32>,
    /// Overrides the spec's scheduling policy.
    pub policy: Option<crate::spec::SchedulingPolicy>,
    /// Disable the drive's cache and read-ahead (as the extraction papers do).
    pub cache_disabled: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    #[error(transparent)]
    Layout(#[from] LayoutError),
    #[error("invalid drive spec {name}: {problem}")]
    Invalid { name: String, problem: String },
}

/// One simulated drive.
pub struct Drive {
    layout: Layout,
}

impl Drive {
    pub fn new(spec: &DriveSpec, options: DriveOptions) -> Result<Drive, DriveError> {
        let _ = options;
        Ok(Drive {
            layout: Layout::new(&spec.layout)?,
        })
    }
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
}

impl BlockDevice for Drive {
    fn capacity(&self) -> Sectors {
        self.layout.capacity()
    }
    fn submit(&mut self, request: BlockRequest) -> Result<(), DeviceError> {
        let _ = request;
        todo!("drive-timing helper")
    }
    fn next_event_time(&self) -> Option<Nanoseconds> {
        todo!()
    }
    fn advance(&mut self, now: Nanoseconds, completed: &mut Vec<Completion>) {
        let _ = (now, completed);
        todo!()
    }
}
