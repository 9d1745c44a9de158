//! The host link a drive is attached through, named after the drive:
//! `atlas10k@80MB/s`, `drives/mine.toml@160MB/s`.
//!
//! A drive file carries the link its parameters were extracted on (the catalog's
//! DIXtrac Atlas 10K: 0.099 ms per sector, about 5 MB/s, the machine DIXtrac ran on).
//! The link belongs to the machine, not the drive: the papers' testbeds attach the
//! same drives through 80 MB/s Ultra2 Wide or 160 MB/s Ultra160 adapters. A reference
//! with a link suffix is that drive with its host-link time per sector replaced, for
//! reads and writes alike; nothing else of the drive changes. Because the suffix is
//! part of the drive's name, it travels wherever the name does: volume files,
//! superblocks, `serve --timing model`.
//!
//! The unit is written `MB/s` (10^6 bytes per second), as interface ratings are.

use crate::spec::DriveSpec;
use spinstack_sim::units::SECTOR_BYTES;

/// Slowest link accepted: 0.1 MB/s (5 ms per sector; SCSI-1 ran at 5 MB/s).
pub const LINK_MB_PER_S_MIN: f64 = 0.1;
/// Fastest link accepted: 100,000 MB/s (5.12 ns per sector), past any SCSI, SAS or
/// Fibre Channel link; a zero-time link is a drive file's business, not a rate.
pub const LINK_MB_PER_S_MAX: f64 = 100_000.0;

/// The unit a link suffix ends with.
const UNIT: &str = "MB/s";

/// A host link's rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostLink {
    megabytes_per_second: f64,
}

impl HostLink {
    /// A link of `megabytes_per_second` (10^6 bytes per second), refused outside
    /// [`LINK_MB_PER_S_MIN`]..=[`LINK_MB_PER_S_MAX`].
    pub fn new(megabytes_per_second: f64) -> Result<HostLink, String> {
        if !(LINK_MB_PER_S_MIN..=LINK_MB_PER_S_MAX).contains(&megabytes_per_second) {
            return Err(format!(
                "a host link of {megabytes_per_second:?} MB/s is outside \
                 {LINK_MB_PER_S_MIN}..={LINK_MB_PER_S_MAX} MB/s"
            ));
        }
        Ok(HostLink {
            megabytes_per_second,
        })
    }

    pub fn megabytes_per_second(self) -> f64 {
        self.megabytes_per_second
    }

    /// Milliseconds one 512-byte sector takes on the link.
    pub fn sector_transfer_ms(self) -> f64 {
        SECTOR_BYTES as f64 / (self.megabytes_per_second * 1e6) * 1e3
    }

    /// `spec` attached through this link: its host-link time per sector replaced for
    /// reads and writes; its name left to the caller.
    pub fn attach(self, spec: &mut DriveSpec) {
        spec.firmware.bus_sector_transfer_ms = self.sector_transfer_ms();
        spec.firmware.bus_write_sector_transfer_ms = None;
    }
}

/// A drive reference split into the drive (catalog name or path) and its link, when
/// the reference ends with `@<rate>MB/s`. A reference whose text after its last `@`
/// does not end with `MB/s` is all drive (a path may hold an `@`); one that does must
/// give a valid rate.
pub fn split_reference(reference: &str) -> Result<(&str, Option<HostLink>), String> {
    let Some((drive, suffix)) = reference.rsplit_once('@') else {
        return Ok((reference, None));
    };
    let Some(rate) = suffix.strip_suffix(UNIT) else {
        return Ok((reference, None));
    };
    let bad = |why: String| {
        format!("`{reference}`: the host link after `@` must be a rate such as 80MB/s; {why}")
    };
    if drive.is_empty() {
        return Err(bad("no drive is named before it".to_string()));
    }
    let megabytes_per_second: f64 = rate
        .trim()
        .parse()
        .map_err(|_| bad(format!("`{rate}` is not a number")))?;
    let link = HostLink::new(megabytes_per_second).map_err(bad)?;
    Ok((drive, Some(link)))
}

/// The name a drive attached through `link` goes by: `atlas10k@80MB/s`.
pub fn linked_name(drive_name: &str, link: HostLink) -> String {
    format!("{drive_name}@{}{UNIT}", link.megabytes_per_second)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reference without a suffix, or with an `@` that is not a link, is all drive.
    #[test]
    fn references_without_a_link_are_left_whole() {
        assert_eq!(split_reference("atlas10k").unwrap(), ("atlas10k", None));
        assert_eq!(
            split_reference("/home/a@b/drive.toml").unwrap(),
            ("/home/a@b/drive.toml", None)
        );
    }

    /// The suffix parses to the rate it names, and the drive part is what precedes it.
    #[test]
    fn a_link_suffix_names_its_rate() {
        let (drive, link) = split_reference("atlas10k@80MB/s").unwrap();
        assert_eq!(drive, "atlas10k");
        let link = link.unwrap();
        assert_eq!(link.megabytes_per_second(), 80.0);
        // 512 B at 80 * 10^6 B/s.
        assert!((link.sector_transfer_ms() - 0.0064).abs() < 1e-12);
        let (drive, link) = split_reference("d/x.toml@160MB/s").unwrap();
        assert_eq!(
            (drive, link.unwrap().megabytes_per_second()),
            ("d/x.toml", 160.0)
        );
        assert_eq!(
            linked_name("atlas10k", HostLink::new(80.0).unwrap()),
            "atlas10k@80MB/s"
        );
        assert_eq!(linked_name("x", HostLink::new(2.5).unwrap()), "x@2.5MB/s");
    }

    /// Bad rates are refused with the reference and the reason, never taken as a name.
    #[test]
    fn bad_links_are_refused_by_name() {
        for (reference, says) in [
            ("atlas10k@fastMB/s", "`fast` is not a number"),
            ("atlas10k@MB/s", "`` is not a number"),
            ("atlas10k@0MB/s", "outside"),
            ("atlas10k@-80MB/s", "outside"),
            ("atlas10k@NaNMB/s", "outside"),
            ("atlas10k@infMB/s", "outside"),
            ("atlas10k@1e9MB/s", "outside"),
            // Said as written, not as 300 digits of decimal expansion.
            (
                "atlas10k@1e-300MB/s",
                "a host link of 1e-300 MB/s is outside",
            ),
            ("@80MB/s", "no drive is named"),
        ] {
            let error = split_reference(reference).unwrap_err();
            assert!(error.contains(reference), "{error}");
            assert!(error.contains(says), "{reference}: {error}");
        }
    }
}
