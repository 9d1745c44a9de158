//! The built-in drive catalog (TOML files embedded in the binary). OWNER: catalog helper.

use crate::spec::DriveSpec;

/// Find a drive by catalog name, or load it from a `.parv` or `.toml` path.
pub fn resolve(name_or_path: &str) -> Result<DriveSpec, crate::import::ImportError> {
    crate::import::load_parv(std::path::Path::new(name_or_path))
}
