//! `DIR/update.img`: the superblock update record, which tells an update a crash
//! interrupted from member files put back from an older copy (finding V4).
//!
//! **Why.** A superblock update writes generation `G` to every member in turn, so a
//! crash part way leaves some members one generation behind. Assembly accepts those
//! when failing them would lose the array. But an old copy of a member file, put
//! back after the array moved on, is one generation behind too, and accepting it
//! serves its stale data as current. The superblocks alone cannot tell the two
//! apart: only a record written *around* the update can.
//!
//! **Protocol.** Before the first member superblock of generation `G` is written, the
//! record says "update `G` started" and is made durable (`fdatasync`); after the last
//! one, it says "update `G` finished" (not synced: a lost "finished" only falls back
//! to accepting, as before this record existed). At assembly, members one behind the
//! newest generation `N` are explained by a crash only when update `N` did not
//! finish. A record saying it finished proves every member then active got `N`, so a
//! member still at `N - 1` is an older copy: assembly refuses it, naming it, unless
//! forced ([`crate::Array::open_forced`]).
//!
//! **Byte format** (one 512-byte sector at offset 0, little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `SPNUPDAT` |
//! | 8..12 | format version, 1 |
//! | 16..32 | volume id (the superblocks') |
//! | 32..40 | generation of the last update started |
//! | 40..48 | generation of the last update finished (≤ started) |
//! | 48..52 | CRC-32C of bytes 0..48 |
//! | 52..512 | zero |
//!
//! **What it does not do.** A record that is missing (an array made before it
//! existed), unreadable or of another volume cannot vouch either way: assembly then
//! accepts as before and says why in the report. It does not guard copies two or more
//! generations behind: those are failed anyway (or the array refused).

use crate::error::ArrayError;
use spinstack_store::intent::crc32c;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

const MAGIC: [u8; 8] = *b"SPNUPDAT";
const FORMAT_VERSION: u32 = 1;
const RECORD_BYTES: usize = 512;
const VOLUME_ID_AT: usize = 16;
const STARTED_AT: usize = 32;
const FINISHED_AT: usize = 40;
const CHECKSUM_AT: usize = 48;

/// `DIR/update.img`.
pub fn update_record_path(dir: &Path) -> PathBuf {
    dir.join("update.img")
}

/// A decoded record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct UpdateRecord {
    pub volume_id: [u8; 16],
    pub started_generation: u64,
    pub finished_generation: u64,
}

impl UpdateRecord {
    fn encode(&self) -> [u8; RECORD_BYTES] {
        let mut sector = [0u8; RECORD_BYTES];
        sector[0..8].copy_from_slice(&MAGIC);
        sector[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        sector[VOLUME_ID_AT..VOLUME_ID_AT + 16].copy_from_slice(&self.volume_id);
        sector[STARTED_AT..STARTED_AT + 8].copy_from_slice(&self.started_generation.to_le_bytes());
        sector[FINISHED_AT..FINISHED_AT + 8]
            .copy_from_slice(&self.finished_generation.to_le_bytes());
        let checksum = crc32c(&sector[..CHECKSUM_AT]);
        sector[CHECKSUM_AT..CHECKSUM_AT + 4].copy_from_slice(&checksum.to_le_bytes());
        sector
    }

    /// Decodes a record; never panics, whatever the bytes. The error says which byte
    /// and why.
    fn decode(bytes: &[u8]) -> Result<UpdateRecord, String> {
        if bytes.len() < RECORD_BYTES {
            return Err(format!(
                "{} bytes long, a record is {RECORD_BYTES}",
                bytes.len()
            ));
        }
        if bytes[0..8] != MAGIC {
            return Err("byte 0: no update record (magic is not \"SPNUPDAT\")".into());
        }
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8"));
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
        let version = u32_at(8);
        if version != FORMAT_VERSION {
            return Err(format!(
                "byte 8: unknown format version {version} (this build reads 1)"
            ));
        }
        let stored = u32_at(CHECKSUM_AT);
        let computed = crc32c(&bytes[..CHECKSUM_AT]);
        if stored != computed {
            return Err(format!(
                "byte {CHECKSUM_AT}: bad checksum: stored {stored:#010x}, computed \
                 {computed:#010x}"
            ));
        }
        let record = UpdateRecord {
            volume_id: bytes[VOLUME_ID_AT..VOLUME_ID_AT + 16]
                .try_into()
                .expect("16"),
            started_generation: u64_at(STARTED_AT),
            finished_generation: u64_at(FINISHED_AT),
        };
        if record.finished_generation > record.started_generation {
            return Err(format!(
                "byte {FINISHED_AT}: update {} finished but only {} started",
                record.finished_generation, record.started_generation
            ));
        }
        Ok(record)
    }
}

/// What the directory's record says, read without writing anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RecordRead {
    Missing,
    /// The file exists but cannot be used; why, naming the file.
    Unreadable(String),
    Found(UpdateRecord),
}

/// Reads `DIR/update.img` (its first sector only: a hostile file cannot make this
/// read more).
pub(crate) fn read_record(dir: &Path) -> RecordRead {
    let path = update_record_path(dir);
    let unreadable = |why: String| RecordRead::Unreadable(format!("{}: {why}", path.display()));
    let file = match File::open(&path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return RecordRead::Missing,
        Err(error) => return unreadable(error.to_string()),
    };
    match file.metadata() {
        Ok(metadata) if metadata.is_file() => {}
        Ok(_) => return unreadable("not a regular file".into()),
        Err(error) => return unreadable(error.to_string()),
    }
    let mut bytes = Vec::with_capacity(RECORD_BYTES);
    if let Err(error) = file.take(RECORD_BYTES as u64).read_to_end(&mut bytes) {
        return unreadable(error.to_string());
    }
    match UpdateRecord::decode(&bytes) {
        Ok(record) => RecordRead::Found(record),
        Err(why) => unreadable(why),
    }
}

/// Whether members one generation behind the newest superblock can be the victims
/// of an interrupted update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Behind {
    /// The newest update started and did not finish: a crash explains them.
    Interrupted,
    /// The newest update finished on every member active then: they are older
    /// copies of their files.
    UpdateFinished,
    /// The record cannot vouch either way (why).
    CannotTell(String),
}

/// Judges members one behind `newest_generation` of volume `volume_id` by `read`.
pub(crate) fn judge_behind(
    read: &RecordRead,
    volume_id: [u8; 16],
    newest_generation: u64,
) -> Behind {
    match read {
        RecordRead::Missing => Behind::CannotTell(
            "there is no update record (update.img; an array made before it existed?)".into(),
        ),
        RecordRead::Unreadable(why) => Behind::CannotTell(why.clone()),
        RecordRead::Found(record) => {
            if record.volume_id != volume_id {
                Behind::CannotTell("the update record belongs to another volume".into())
            } else if record.started_generation < newest_generation {
                // Under the protocol "started" is durable before any superblock of
                // that generation: a record behind the superblocks was replaced.
                Behind::CannotTell(format!(
                    "the update record's last update ({}) is older than the superblocks' \
                     ({newest_generation}): it was replaced?",
                    record.started_generation
                ))
            } else if record.finished_generation >= newest_generation {
                Behind::UpdateFinished
            } else {
                Behind::Interrupted
            }
        }
    }
}

/// The open record, written around every superblock update ([`crate::Array`]'s
/// `persist`).
#[derive(Debug)]
pub(crate) struct UpdateRecordFile {
    path: PathBuf,
    file: File,
    volume_id: [u8; 16],
    /// The last update known to have finished on every member (0: none known).
    finished_generation: u64,
}

impl UpdateRecordFile {
    /// Opens `DIR/update.img`, making it if missing. `finished_generation` is the
    /// last update known finished: what the record said at assembly if it was this
    /// volume's, else 0 (never more than is known, or a crash in the next update
    /// could make a crash's victims look like old copies).
    pub fn open(
        dir: &Path,
        volume_id: [u8; 16],
        finished_generation: u64,
    ) -> Result<UpdateRecordFile, ArrayError> {
        let path = update_record_path(dir);
        let file = crate::member::open_or_create(&path)?;
        let metadata = file.metadata().map_err(ArrayError::io(&path))?;
        if !metadata.is_file() {
            return Err(ArrayError::Mismatch {
                file: path,
                problem: "not a regular file".into(),
            });
        }
        Ok(UpdateRecordFile {
            path,
            file,
            volume_id,
            finished_generation,
        })
    }

    /// The finished generation a record read at assembly lets us carry on.
    pub fn known_finished(read: &RecordRead, volume_id: [u8; 16]) -> u64 {
        match read {
            RecordRead::Found(record) if record.volume_id == volume_id => {
                record.finished_generation
            }
            _ => 0,
        }
    }

    /// "Update `generation` started", durable before it returns.
    pub fn start(&mut self, generation: u64) -> Result<(), ArrayError> {
        self.write(generation, self.finished_generation.min(generation))?;
        self.file.sync_data().map_err(ArrayError::io(&self.path))
    }

    /// "Update `generation` finished" (every member not failed has it).
    pub fn finish(&mut self, generation: u64) -> Result<(), ArrayError> {
        self.finished_generation = generation;
        self.write(generation, generation)
    }

    fn write(&self, started: u64, finished: u64) -> Result<(), ArrayError> {
        let record = UpdateRecord {
            volume_id: self.volume_id,
            started_generation: started,
            finished_generation: finished,
        };
        self.file
            .write_all_at(&record.encode(), 0)
            .map_err(ArrayError::io(&self.path))
    }
}

#[cfg(test)]
mod tests {
    //! The record's round trip, its decoder on hostile bytes, and the judgement of
    //! members behind.
    use super::*;

    const ID: [u8; 16] = [7; 16];

    fn record(started: u64, finished: u64) -> UpdateRecord {
        UpdateRecord {
            volume_id: ID,
            started_generation: started,
            finished_generation: finished,
        }
    }

    #[test]
    fn round_trip() {
        let r = record(9, 8);
        assert_eq!(UpdateRecord::decode(&r.encode()), Ok(r));
    }

    #[test]
    fn decoder_names_the_byte_it_refuses() {
        let good = record(3, 3).encode();
        let mut bad_magic = good;
        bad_magic[0] ^= 1;
        assert!(UpdateRecord::decode(&bad_magic)
            .unwrap_err()
            .starts_with("byte 0"));
        let mut bad_sum = good;
        bad_sum[STARTED_AT] ^= 1;
        assert!(UpdateRecord::decode(&bad_sum)
            .unwrap_err()
            .contains("checksum"));
        assert!(UpdateRecord::decode(&good[..100])
            .unwrap_err()
            .contains("100 bytes"));
        // finished > started cannot be written by the protocol.
        assert!(UpdateRecord::decode(&record(3, 4).encode())
            .unwrap_err()
            .contains("finished"));
    }

    proptest::proptest! {
        /// Any bytes, and any few edits of a valid record: an answer, never a panic,
        /// and an edited record is refused unless the edit changed nothing.
        #[test]
        fn decoder_never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..700)) {
            let _ = UpdateRecord::decode(&bytes);
        }

        #[test]
        fn an_edited_record_is_refused(at in 0usize..CHECKSUM_AT + 4, flip in 1u8..=255) {
            let mut bytes = record(5, 4).encode();
            bytes[at] ^= flip;
            proptest::prop_assert!(UpdateRecord::decode(&bytes).is_err());
        }
    }

    #[test]
    fn judgement_of_members_one_behind() {
        let found = |s, f| RecordRead::Found(record(s, f));
        // Update 5 started, 4 finished: members at 4 are a crash's victims.
        assert_eq!(judge_behind(&found(5, 4), ID, 5), Behind::Interrupted);
        // Update 6 started (no member has it yet), 4 finished: update 5 never
        // finished either, so members at 4 are still explained by a crash.
        assert_eq!(judge_behind(&found(6, 4), ID, 5), Behind::Interrupted);
        // Update 5 finished: members at 4 are old copies.
        assert_eq!(judge_behind(&found(5, 5), ID, 5), Behind::UpdateFinished);
        assert_eq!(judge_behind(&found(6, 5), ID, 5), Behind::UpdateFinished);
        for read in [
            RecordRead::Missing,
            RecordRead::Unreadable("x".into()),
            found(4, 4),
            RecordRead::Found(UpdateRecord {
                volume_id: [1; 16],
                ..record(5, 5)
            }),
        ] {
            assert!(
                matches!(judge_behind(&read, ID, 5), Behind::CannotTell(_)),
                "{read:?}"
            );
        }
    }
}
