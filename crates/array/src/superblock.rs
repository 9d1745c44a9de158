//! The member superblock: what every member file says about the array and itself.
//!
//! # On-disk format (version 1)
//!
//! A member file is laid out in 512-byte sectors:
//!
//! | sectors | contents |
//! |---:|---|
//! | 0 ..= 7 | superblock slot 0 (4096 bytes) |
//! | 8 ..= 15 | superblock slot 1 (4096 bytes) |
//! | 16 .. 16 + member data size | the member's data sectors (member LBN 0 is file sector 16) |
//!
//! A superblock of generation `g` is written to slot `g % 2`, so an update never
//! overwrites the newest valid copy: a write torn by a crash leaves the other slot
//! (generation `g - 1`) intact. Reading takes the valid slot with the higher
//! generation; a member with no valid slot cannot be used: assembly treats it as
//! failed when the level survives without it, and otherwise refuses the array, naming
//! the file and both slots' problems.
//!
//! Each slot, all integers little-endian:
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 8 | magic, ASCII `SPNARRAY` |
//! | 8 | 4 | format version, `u32` = 1 |
//! | 12 | 4 | slot length in bytes, `u32` = 4096 (any other value is refused) |
//! | 16 | 16 | volume id (random, shared by all members of one array) |
//! | 32 | 8 | generation, `u64`: +1 at every superblock update (open, close, fail, rebuild start, rebuild cursor, rebuild end) |
//! | 40 | 8 | roles generation, `u64`: the generation at which the role table (offset 128) last changed |
//! | 48 | 1 | level: 0 single, 1 raid0, 2 raid1, 3 raid10, 4 raid5, 5 raid5-track-aligned |
//! | 49 | 1 | track units (raid5-track-aligned only, else 0): 1 whole-track, 2 smallest-track, 3 largest-track |
//! | 50 | 1 | buffer write policy: 0 no buffer, 1 write-through, 2 write-back |
//! | 51 | 1 | flags: bit 0 = clean (closed cleanly; 0 while open); other bits zero |
//! | 52 | 4 | member count, `u32`, 1 ..= 64 |
//! | 56 | 4 | this member's index, `u32` < member count |
//! | 60 | 4 | buffer blocks, `u32` (0 without a buffer) |
//! | 64 | 8 | member data size in sectors, `u64` ≥ 1 |
//! | 72 | 8 | data offset in sectors, `u64` = 16 |
//! | 80 | 8 | chunk in sectors, `u64` (raid0/raid10/raid5: ≥ 1; other levels 0) |
//! | 88 | 8 | buffer block in sectors, `u64` (0 without a buffer) |
//! | 96 | 8 | rebuild cursor, `u64`: rebuild units (RAID-5 stripes, mirror member rows) known rebuilt and flushed on the member in role "rebuilding"; at most the member data size (a unit is at least a sector), and assembly refuses one beyond the level's rebuild units |
//! | 104 | 4 | copies of each chunk, `u32` (raid10: 2; other levels 0) |
//! | 108 | 4 | length `N` of the disk names in bytes, `u32` ≤ 2048 |
//! | 112 | 8 | corrected read sectors, `u64`: this member file's sectors rewritten after a read error, rebuilt from the redundancy (md's per-device count); a fresh member file starts at 0 |
//! | 120 | 8 | reserved, zero |
//! | 128 | 64 | role table: byte `m` is member `m`'s role, 0 active, 1 failed, 2 rebuilding (at most one); bytes past the member count zero |
//! | 192 | 2048 | disk model names, UTF-8, `N` bytes: catalog names or paths separated by `\n` (none: default drive; one: every member; else one per member), no other control characters, then zeros |
//! | 2240 | 1852 | reserved, zero |
//! | 4092 | 4 | CRC-32C (Castagnoli) of bytes 0 .. 4092 |
//!
//! Decoding checks, in order: length, magic, version, checksum, then every field's
//! range (slot length first); the first problem found is reported with its byte
//! offset. Reserved bytes
//! are written as zero and not checked (a later minor version may use them). The
//! corrected-read count took bytes 112 .. 120 that way: a superblock written before
//! it reads as 0 there.

use spinstack_sim::units::Sectors;
use spinstack_store::intent::crc32c;
use spinstack_volume::config::{BufferSpec, Level, TrackUnits};
use spinstack_volume::dab::WritePolicy;

/// Bytes in one superblock slot.
pub const SLOT_BYTES: usize = 4096;
/// Sectors in one slot.
pub const SLOT_SECTORS: u64 = (SLOT_BYTES / 512) as u64;
/// The member's data starts after both slots.
pub const DATA_OFFSET_SECTORS: u64 = 2 * SLOT_SECTORS;
/// The most members an array may have (the role table's size).
pub const MAX_MEMBERS: u32 = 64;
/// The most bytes of disk names.
pub const MAX_DISK_NAME_BYTES: usize = 2048;

const MAGIC: [u8; 8] = *b"SPNARRAY";
const FORMAT_VERSION: u32 = 1;
const CHECKSUM_AT: usize = SLOT_BYTES - 4;
const ROLES_AT: usize = 128;
const NAMES_AT: usize = 192;

/// A member's role, as the role table records it.
///
/// | from | event | to |
/// |---|---|---|
/// | `Active` | `fail_member`, or found stale / missing at assembly | `Failed` |
/// | `Failed` | `start_rebuild` (a fresh member file) | `Rebuilding` |
/// | `Rebuilding` | the rebuild cursor reaches the end | `Active` |
/// | `Rebuilding` | `fail_member`, or found stale / missing at assembly | `Failed` |
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemberRole {
    Active,
    Failed,
    Rebuilding,
}

impl MemberRole {
    /// The role in plain words, as the role table's documentation and JSON name it.
    pub fn name(self) -> &'static str {
        match self {
            MemberRole::Active => "active",
            MemberRole::Failed => "failed",
            MemberRole::Rebuilding => "rebuilding",
        }
    }

    fn code(self) -> u8 {
        match self {
            MemberRole::Active => 0,
            MemberRole::Failed => 1,
            MemberRole::Rebuilding => 2,
        }
    }
    fn from_code(code: u8) -> Option<MemberRole> {
        match code {
            0 => Some(MemberRole::Active),
            1 => Some(MemberRole::Failed),
            2 => Some(MemberRole::Rebuilding),
            _ => None,
        }
    }
}

impl std::fmt::Display for MemberRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A decoded superblock.
#[derive(Clone, Debug, PartialEq)]
pub struct Superblock {
    pub volume_id: [u8; 16],
    pub generation: u64,
    pub roles_generation: u64,
    pub level: Level,
    pub track_units: Option<TrackUnits>,
    pub buffer: Option<BufferSpec>,
    pub clean: bool,
    pub members: u32,
    pub index: u32,
    pub member_size: Sectors,
    pub chunk: Option<Sectors>,
    pub rebuild_cursor: u64,
    pub copies: u32,
    pub disks: Vec<String>,
    pub roles: Vec<MemberRole>,
    /// This member's sectors rewritten after a read error (offset 112).
    pub corrected_read_sectors: u64,
}

/// Why a superblock slot does not decode: the byte offset and the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("superblock byte {offset}: {problem}")]
pub struct SuperblockError {
    pub offset: usize,
    pub problem: String,
}

fn bad(offset: usize, problem: impl Into<String>) -> SuperblockError {
    SuperblockError {
        offset,
        problem: problem.into(),
    }
}

fn level_code(level: Level) -> u8 {
    match level {
        Level::Single => 0,
        Level::Raid0 => 1,
        Level::Raid1 => 2,
        Level::Raid10 => 3,
        Level::Raid5 => 4,
        Level::Raid5TrackAligned => 5,
    }
}

fn level_from_code(code: u8) -> Option<Level> {
    Some(match code {
        0 => Level::Single,
        1 => Level::Raid0,
        2 => Level::Raid1,
        3 => Level::Raid10,
        4 => Level::Raid5,
        5 => Level::Raid5TrackAligned,
        _ => return None,
    })
}

fn units_code(units: Option<TrackUnits>) -> u8 {
    match units {
        None => 0,
        Some(TrackUnits::WholeTrack) => 1,
        Some(TrackUnits::SmallestTrack) => 2,
        Some(TrackUnits::LargestTrack) => 3,
    }
}

/// Whether a level stripes in chunks (and so records one).
pub fn level_uses_chunk(level: Level) -> bool {
    matches!(level, Level::Raid0 | Level::Raid10 | Level::Raid5)
}

impl Superblock {
    /// The 4096 bytes of one slot.
    pub fn encode(&self) -> Vec<u8> {
        let mut slot = vec![0u8; SLOT_BYTES];
        slot[0..8].copy_from_slice(&MAGIC);
        put_u32(&mut slot, 8, FORMAT_VERSION);
        put_u32(&mut slot, 12, SLOT_BYTES as u32);
        slot[16..32].copy_from_slice(&self.volume_id);
        put_u64(&mut slot, 32, self.generation);
        put_u64(&mut slot, 40, self.roles_generation);
        slot[48] = level_code(self.level);
        slot[49] = units_code(self.track_units);
        slot[50] = match self.buffer.map(|b| b.policy) {
            None => 0,
            Some(WritePolicy::WriteThrough) => 1,
            Some(WritePolicy::WriteBack) => 2,
        };
        slot[51] = u8::from(self.clean);
        put_u32(&mut slot, 52, self.members);
        put_u32(&mut slot, 56, self.index);
        put_u32(&mut slot, 60, self.buffer.map_or(0, |b| b.blocks));
        put_u64(&mut slot, 64, self.member_size.0);
        put_u64(&mut slot, 72, DATA_OFFSET_SECTORS);
        put_u64(&mut slot, 80, self.chunk.map_or(0, |c| c.0));
        put_u64(&mut slot, 88, self.buffer.map_or(0, |b| b.block.0));
        put_u64(&mut slot, 96, self.rebuild_cursor);
        put_u32(&mut slot, 104, self.copies);
        put_u64(&mut slot, 112, self.corrected_read_sectors);
        let names = self.disks.join("\n");
        let names = &names.as_bytes()[..names.len().min(MAX_DISK_NAME_BYTES)];
        put_u32(&mut slot, 108, names.len() as u32);
        for (m, role) in self.roles.iter().enumerate().take(MAX_MEMBERS as usize) {
            slot[ROLES_AT + m] = role.code();
        }
        slot[NAMES_AT..NAMES_AT + names.len()].copy_from_slice(names);
        let checksum = crc32c(&slot[..CHECKSUM_AT]);
        put_u32(&mut slot, CHECKSUM_AT, checksum);
        slot
    }

    /// Decodes one slot; never panics, whatever the bytes.
    pub fn decode(slot: &[u8]) -> Result<Superblock, SuperblockError> {
        if slot.len() != SLOT_BYTES {
            return Err(bad(
                0,
                format!("slot is {} bytes, expected {SLOT_BYTES}", slot.len()),
            ));
        }
        if slot[0..8] != MAGIC {
            return Err(bad(0, "no superblock (magic is not \"SPNARRAY\")"));
        }
        let version = get_u32(slot, 8);
        if version != FORMAT_VERSION {
            return Err(bad(
                8,
                format!("unknown format version {version} (this build reads 1)"),
            ));
        }
        let stored = get_u32(slot, CHECKSUM_AT);
        let computed = crc32c(&slot[..CHECKSUM_AT]);
        if stored != computed {
            return Err(bad(
                CHECKSUM_AT,
                format!("bad checksum: stored {stored:#010x}, computed {computed:#010x}"),
            ));
        }
        decode_fields(slot)
    }
}

fn decode_fields(slot: &[u8]) -> Result<Superblock, SuperblockError> {
    let slot_length = get_u32(slot, 12);
    if slot_length as usize != SLOT_BYTES {
        return Err(bad(
            12,
            format!("slot length {slot_length} bytes, expected {SLOT_BYTES}"),
        ));
    }
    let level = level_from_code(slot[48])
        .ok_or_else(|| bad(48, format!("unknown level code {}", slot[48])))?;
    let track_units = match (level, slot[49]) {
        (Level::Raid5TrackAligned, 1) => Some(TrackUnits::WholeTrack),
        (Level::Raid5TrackAligned, 2) => Some(TrackUnits::SmallestTrack),
        (Level::Raid5TrackAligned, 3) => Some(TrackUnits::LargestTrack),
        (Level::Raid5TrackAligned, code) => {
            return Err(bad(49, format!("unknown track units code {code}")))
        }
        (_, 0) => None,
        (_, code) => {
            return Err(bad(
                49,
                format!("track units code {code} on a level without tracks"),
            ))
        }
    };
    if slot[51] > 1 {
        return Err(bad(51, format!("unknown flags {:#04x}", slot[51])));
    }
    let members = get_u32(slot, 52);
    if members == 0 || members > MAX_MEMBERS {
        return Err(bad(
            52,
            format!("member count {members} is not 1 ..= {MAX_MEMBERS}"),
        ));
    }
    if (members as usize) < level.minimum_members() || (level == Level::Single && members != 1) {
        return Err(bad(
            52,
            format!("{members} members do not make a {}", level.name()),
        ));
    }
    let index = get_u32(slot, 56);
    if index >= members {
        return Err(bad(
            56,
            format!("member index {index} but the array has {members} members"),
        ));
    }
    let member_size = Sectors(get_u64(slot, 64));
    let max_sectors = (i64::MAX as u64) / 512 - DATA_OFFSET_SECTORS;
    if member_size.0 == 0 || member_size.0 > max_sectors {
        return Err(bad(
            64,
            format!("member data size {} sectors is not usable", member_size.0),
        ));
    }
    let data_offset = get_u64(slot, 72);
    if data_offset != DATA_OFFSET_SECTORS {
        return Err(bad(
            72,
            format!("data offset {data_offset}, expected {DATA_OFFSET_SECTORS}"),
        ));
    }
    let chunk = get_u64(slot, 80);
    let chunk = match (level_uses_chunk(level), chunk) {
        (true, 0) => {
            return Err(bad(
                80,
                format!("a {} needs a chunk, found 0", level.name()),
            ))
        }
        (true, chunk) if chunk > member_size.0 => {
            return Err(bad(
                80,
                format!("chunk {chunk} sectors exceeds the member size"),
            ))
        }
        (true, chunk) => Some(Sectors(chunk)),
        (false, 0) => None,
        (false, chunk) => return Err(bad(80, format!("chunk {chunk} on a {}", level.name()))),
    };
    let rebuild_cursor = get_u64(slot, 96);
    // Every rebuild unit (stripe, member row, track) spans at least one sector.
    if rebuild_cursor > member_size.0 {
        return Err(bad(
            96,
            format!(
                "rebuild cursor {rebuild_cursor} is beyond the {} sectors of a member",
                member_size.0
            ),
        ));
    }
    let buffer = decode_buffer(slot)?;
    let copies = get_u32(slot, 104);
    let expected_copies = if level == Level::Raid10 { 2 } else { 0 };
    if copies != expected_copies {
        return Err(bad(
            104,
            format!(
                "{copies} copies, expected {expected_copies} for {}",
                level.name()
            ),
        ));
    }
    let roles = decode_roles(slot, members)?;
    let disks = decode_disks(slot, members)?;
    Ok(Superblock {
        volume_id: slot[16..32].try_into().map_err(|_| bad(16, "volume id"))?,
        generation: get_u64(slot, 32),
        roles_generation: get_u64(slot, 40),
        level,
        track_units,
        buffer,
        clean: slot[51] == 1,
        members,
        index,
        member_size,
        chunk,
        rebuild_cursor,
        copies,
        disks,
        roles,
        corrected_read_sectors: get_u64(slot, 112),
    })
}

fn decode_buffer(slot: &[u8]) -> Result<Option<BufferSpec>, SuperblockError> {
    let blocks = get_u32(slot, 60);
    let block = get_u64(slot, 88);
    let policy = match slot[50] {
        0 if blocks == 0 && block == 0 => return Ok(None),
        0 => return Err(bad(60, "buffer geometry without a buffer policy")),
        1 => WritePolicy::WriteThrough,
        2 => WritePolicy::WriteBack,
        code => return Err(bad(50, format!("unknown buffer policy code {code}"))),
    };
    if blocks == 0 {
        return Err(bad(60, "a buffer needs at least one block"));
    }
    if block == 0
        || block
            .checked_mul(u64::from(blocks))
            .is_none_or(|s| s > (16 << 30) / 512)
    {
        return Err(bad(
            88,
            format!("buffer of {blocks} blocks of {block} sectors is not usable"),
        ));
    }
    Ok(Some(BufferSpec {
        block: Sectors(block),
        blocks,
        policy,
    }))
}

fn decode_roles(slot: &[u8], members: u32) -> Result<Vec<MemberRole>, SuperblockError> {
    let mut roles = Vec::with_capacity(members as usize);
    for m in 0..MAX_MEMBERS as usize {
        let code = slot[ROLES_AT + m];
        if m >= members as usize {
            if code != 0 {
                return Err(bad(
                    ROLES_AT + m,
                    format!("role of member {m}, past the member count"),
                ));
            }
            continue;
        }
        let role = MemberRole::from_code(code).ok_or_else(|| {
            bad(
                ROLES_AT + m,
                format!("unknown role code {code} of member {m}"),
            )
        })?;
        roles.push(role);
    }
    if roles
        .iter()
        .filter(|r| **r == MemberRole::Rebuilding)
        .count()
        > 1
    {
        return Err(bad(ROLES_AT, "more than one member is rebuilding"));
    }
    Ok(roles)
}

fn decode_disks(slot: &[u8], members: u32) -> Result<Vec<String>, SuperblockError> {
    let len = get_u32(slot, 108) as usize;
    if len > MAX_DISK_NAME_BYTES {
        return Err(bad(
            108,
            format!("disk names of {len} bytes, at most {MAX_DISK_NAME_BYTES}"),
        ));
    }
    let text = std::str::from_utf8(&slot[NAMES_AT..NAMES_AT + len])
        .map_err(|e| bad(NAMES_AT + e.valid_up_to(), "disk names are not UTF-8"))?;
    let disks: Vec<String> = if text.is_empty() {
        Vec::new()
    } else {
        text.split('\n').map(str::to_string).collect()
    };
    if disks.len() > 1 && disks.len() != members as usize {
        return Err(bad(
            NAMES_AT,
            format!("{} disk names for {members} members", disks.len()),
        ));
    }
    if disks.iter().any(String::is_empty) {
        return Err(bad(NAMES_AT, "an empty disk name"));
    }
    // A name is a catalog name or a path: a control character (a NUL, say) is damage,
    // and would reach error messages that quote the name.
    if let Some(at) = text.find(|c: char| c != '\n' && c.is_control()) {
        return Err(bad(NAMES_AT + at, "a disk name holds a control character"));
    }
    Ok(disks)
}

fn put_u64(slot: &mut [u8], at: usize, value: u64) {
    slot[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

fn put_u32(slot: &mut [u8], at: usize, value: u32) {
    slot[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

fn get_u64(slot: &[u8], at: usize) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&slot[at..at + 8]);
    u64::from_le_bytes(bytes)
}

fn get_u32(slot: &[u8], at: usize) -> u32 {
    let mut bytes = [0u8; 4];
    bytes.copy_from_slice(&slot[at..at + 4]);
    u32::from_le_bytes(bytes)
}

/// Which slot a superblock of `generation` goes to, as a sector offset in the file.
pub fn slot_sector(generation: u64) -> u64 {
    (generation % 2) * SLOT_SECTORS
}

/// The newest valid superblock of a member file's first [`DATA_OFFSET_SECTORS`]
/// sectors (`head`), or the problem with each slot.
pub fn newest(head: &[u8]) -> Result<Superblock, (SuperblockError, SuperblockError)> {
    newest_and_other(head).map(|(block, _)| block)
}

/// Why one slot of a member file does not decode, while the other does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherSlot {
    /// 0 or 1.
    pub slot: usize,
    /// Its offset counts from the start of the file.
    pub problem: SuperblockError,
}

/// [`newest`], with the problem of the other slot when only one decodes: a member
/// whose newest slot is damaged falls back to its older one, and assembly says why.
pub fn newest_and_other(
    head: &[u8],
) -> Result<(Superblock, Option<OtherSlot>), (SuperblockError, SuperblockError)> {
    let slot = |i: usize| {
        head.get(i * SLOT_BYTES..(i + 1) * SLOT_BYTES)
            .unwrap_or(&[])
    };
    match (Superblock::decode(slot(0)), Superblock::decode(slot(1))) {
        (Ok(a), Ok(b)) => Ok((if b.generation > a.generation { b } else { a }, None)),
        (Ok(a), Err(problem)) => {
            let mut problem = problem;
            problem.offset += SLOT_BYTES;
            Ok((a, Some(OtherSlot { slot: 1, problem })))
        }
        (Err(problem), Ok(b)) => Ok((b, Some(OtherSlot { slot: 0, problem }))),
        (Err(a), Err(mut b)) => {
            b.offset += SLOT_BYTES;
            Err((a, b))
        }
    }
}
