//! The byte-level format of a write-intent record (documented in the parent module)
//! and its validation.

use super::IntentError;
use spinstack_sim::units::{Sectors, SECTOR_BYTES};

pub(super) const MAGIC: [u8; 8] = *b"SPNINTNT";
pub(super) const FORMAT_VERSION: u32 = 1;
const SECTOR: usize = SECTOR_BYTES as usize;
/// The most regions a record may have. The in-memory state costs 12 bytes a region,
/// so this bounds what a damaged or hostile header can make `open` allocate (3 GiB);
/// 2^28 regions of 1 MiB cover 256 TiB.
pub const MAX_REGIONS: u64 = 1 << 28;
/// Regions per bitmap sector: one bit each.
pub(super) const REGIONS_PER_SECTOR: u64 = SECTOR_BYTES * 8;

// Field offsets inside the header sector.
const MAGIC_AT: usize = 0;
const VERSION_AT: usize = 8;
const REGION_SECTORS_AT: usize = 16;
const REGION_COUNT_AT: usize = 24;
const GENERATION_AT: usize = 32;
const CHECKSUM_AT: usize = 40;

/// The decoded header sector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Header {
    pub region_sectors: Sectors,
    pub region_count: u64,
    pub generation: u64,
}

impl Header {
    pub fn encode(&self) -> [u8; SECTOR] {
        let mut sector = [0u8; SECTOR];
        sector[MAGIC_AT..MAGIC_AT + 8].copy_from_slice(&MAGIC);
        sector[VERSION_AT..VERSION_AT + 4].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        put_u64(&mut sector, REGION_SECTORS_AT, self.region_sectors.0);
        put_u64(&mut sector, REGION_COUNT_AT, self.region_count);
        put_u64(&mut sector, GENERATION_AT, self.generation);
        let checksum = crc32c(&sector[..CHECKSUM_AT]);
        sector[CHECKSUM_AT..CHECKSUM_AT + 4].copy_from_slice(&checksum.to_le_bytes());
        sector
    }

    /// Decodes and validates a header sector against the record store's capacity:
    /// magic, version, checksum, then the geometry.
    pub fn decode(sector: &[u8; SECTOR], store_capacity: Sectors) -> Result<Header, IntentError> {
        let magic: [u8; 8] = sector[MAGIC_AT..MAGIC_AT + 8].try_into().expect("8 bytes");
        if magic != MAGIC {
            return Err(IntentError::BadMagic { found: magic });
        }
        let version = get_u32(sector, VERSION_AT);
        if version != FORMAT_VERSION {
            return Err(IntentError::UnsupportedVersion { found: version });
        }
        let stored = get_u32(sector, CHECKSUM_AT);
        let computed = crc32c(&sector[..CHECKSUM_AT]);
        if stored != computed {
            return Err(IntentError::BadChecksum { stored, computed });
        }
        let header = Header {
            region_sectors: Sectors(get_u64(sector, REGION_SECTORS_AT)),
            region_count: get_u64(sector, REGION_COUNT_AT),
            generation: get_u64(sector, GENERATION_AT),
        };
        check_geometry(header.region_sectors, header.region_count, store_capacity)?;
        Ok(header)
    }
}

/// Sectors a record for `region_count` regions occupies (header plus bitmap), or
/// `None` when that does not fit a `u64`.
pub fn record_sectors(region_count: u64) -> Option<Sectors> {
    region_count
        .div_ceil(REGIONS_PER_SECTOR)
        .checked_add(1)
        .map(Sectors)
}

/// Checks a record's geometry: non-zero sizes, a volume size that fits a `u64`, and a
/// record store large enough for the header and bitmap.
pub(super) fn check_geometry(
    region_sectors: Sectors,
    region_count: u64,
    store_capacity: Sectors,
) -> Result<(), IntentError> {
    let why = if region_sectors.0 == 0 {
        Some("a region must hold at least one sector")
    } else if region_count == 0 {
        Some("the volume must have at least one region")
    } else if region_count > MAX_REGIONS {
        Some("more than 2^28 regions (choose larger regions)")
    } else if region_sectors.0.checked_mul(region_count).is_none() {
        Some("region size times region count does not fit a 64-bit sector count")
    } else {
        None
    };
    if let Some(why) = why {
        return Err(IntentError::BadGeometry {
            region_sectors,
            region_count,
            why,
        });
    }
    let needed = record_sectors(region_count).expect("region_count / 4096 + 1 fits");
    if needed > store_capacity {
        return Err(IntentError::StoreTooSmall {
            region_count,
            needed,
            capacity: store_capacity,
        });
    }
    Ok(())
}

fn put_u64(sector: &mut [u8], at: usize, value: u64) {
    sector[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

fn get_u64(sector: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(sector[at..at + 8].try_into().expect("8 bytes"))
}

fn get_u32(sector: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(sector[at..at + 4].try_into().expect("4 bytes"))
}

/// CRC-32C (Castagnoli, reflected, as iSCSI, ext4 and btrfs use it).
pub fn crc32c(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc = CRC32C_TABLE[((crc ^ u32::from(byte)) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

const CRC32C_TABLE: [u32; 256] = crc32c_table();

const fn crc32c_table() -> [u32; 256] {
    const POLYNOMIAL_REFLECTED: u32 = 0x82F6_3B78;
    let mut table = [0u32; 256];
    let mut index = 0;
    while index < 256 {
        let mut crc = index as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ POLYNOMIAL_REFLECTED
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[index] = crc;
        index += 1;
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves the checksum is standard CRC-32C (the check value of the catalogue).
    #[test]
    fn crc32c_check_value() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    }

    // Proves a header survives encode then decode unchanged.
    #[test]
    fn header_round_trip() {
        let header = Header {
            region_sectors: Sectors(128),
            region_count: 5000,
            generation: 7,
        };
        assert_eq!(
            Header::decode(&header.encode(), Sectors(3)).unwrap(),
            header
        );
    }
}
