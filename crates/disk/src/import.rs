//! DiskSim parameter import: `.parv` → `.diskspecs` → `.model` → `.seek` into a
//! [`DriveSpec`]. OWNER: param helper.

use crate::spec::DriveSpec;
use std::path::Path;

/// An import failure, naming the file, line and parameter.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ImportError {
    pub message: String,
}

/// Load the drive described by a DiskSim `.parv` file (following its `source` chain).
pub fn load_parv(path: &Path) -> Result<DriveSpec, ImportError> {
    Err(ImportError {
        message: format!("{}: DiskSim import is not implemented yet", path.display()),
    })
}
