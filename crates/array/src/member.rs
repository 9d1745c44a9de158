//! [`MemberStore`]: the data sectors of a member file (after its two superblock
//! slots) as a [`BlockStore`], plus the superblock I/O on the same file and the
//! directory's exclusive lock.

use crate::error::ArrayError;
use crate::superblock::{self, OtherSlot, Superblock, DATA_OFFSET_SECTORS, SLOT_BYTES};
use spinstack_sim::units::{Lbn, Sectors};
use spinstack_store::store::check_range;
use spinstack_store::{BlockStore, FileStore, StoreError};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// A window of a [`FileStore`]: `capacity` sectors from `offset`. Used for the
/// member data (offset 16, [`MemberStore::data`]) and the write-intent file (offset 0).
#[derive(Debug)]
pub struct MemberStore {
    file: FileStore,
    offset: Sectors,
    capacity: Sectors,
    /// Member data only: the file is lost once it is shorter than the window.
    fail_when_cut_short: bool,
}

/// Why a member file cut short is failed (the error the volume fails it on).
const CUT_SHORT: &str =
    "use of a member file cut short (shorter than its superblock says: truncated?)";

impl MemberStore {
    pub fn new(file: FileStore, offset: Sectors, capacity: Sectors) -> Result<Self, StoreError> {
        check_range(file.capacity(), Lbn(offset.0), capacity)?;
        Ok(MemberStore {
            file,
            offset,
            capacity,
            fail_when_cut_short: false,
        })
    }

    /// A member's data sectors (after its superblock slots). A member file found
    /// shorter than that (cut short under the open array: an unexpected end of file
    /// on a read, or a length check before a write, trim or flush) answers
    /// [`StoreError::Failed`], so the volume fails the member as md fails a device
    /// that errors this way. It is not a bad sector to correct: the range past the
    /// cut is lost, correcting only what clients read would re-extend the file with
    /// holes (zeros) where its parity or copies were, and a later failure would then
    /// serve wrong data while the array said it was healthy (finding V3).
    pub fn data(file: FileStore, member_size: Sectors) -> Result<Self, StoreError> {
        let mut store = MemberStore::new(file, Sectors(DATA_OFFSET_SECTORS), member_size)?;
        store.fail_when_cut_short = true;
        Ok(store)
    }

    /// For member data, [`StoreError::Failed`] when the file no longer holds the
    /// whole window. One `fstat` per write, trim and flush: a write past the cut
    /// would otherwise extend the file and leave the rest of the cut as holes that
    /// read back as zeros, with no error to say so.
    fn check_not_cut_short(&self) -> Result<(), StoreError> {
        if !self.fail_when_cut_short {
            return Ok(());
        }
        let needed_bytes = Sectors(self.offset.0 + self.capacity.0).bytes();
        if self.file.len_bytes()? < needed_bytes {
            return Err(StoreError::Failed {
                operation: CUT_SHORT,
            });
        }
        Ok(())
    }
}

impl BlockStore for MemberStore {
    fn capacity(&self) -> Sectors {
        self.capacity
    }
    fn read(&mut self, lbn: Lbn, buf: &mut [u8]) -> Result<(), StoreError> {
        spinstack_store::store::check_buffer(self.capacity, lbn, buf.len())?;
        match self.file.read(lbn.offset(self.offset), buf) {
            // The file ends before the sectors asked for: it was cut short.
            Err(StoreError::IoAt { source, .. })
                if self.fail_when_cut_short
                    && source.kind() == std::io::ErrorKind::UnexpectedEof =>
            {
                Err(StoreError::Failed {
                    operation: CUT_SHORT,
                })
            }
            other => other,
        }
    }
    fn write(&mut self, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError> {
        spinstack_store::store::check_buffer(self.capacity, lbn, buf.len())?;
        self.check_not_cut_short()?;
        self.file.write(lbn.offset(self.offset), buf)
    }
    fn flush(&mut self) -> Result<(), StoreError> {
        self.check_not_cut_short()?;
        self.file.flush()
    }
    fn trim(&mut self, lbn: Lbn, sectors: Sectors) -> Result<(), StoreError> {
        check_range(self.capacity, lbn, sectors)?;
        self.check_not_cut_short()?;
        self.file.trim(lbn.offset(self.offset), sectors)
    }
}

/// `DIR/member-K.img`.
pub fn member_path(dir: &Path, member: u32) -> PathBuf {
    dir.join(format!("member-{member}.img"))
}

/// `DIR/intent.img`: the write-intent record (format: `spinstack_store::intent`).
pub fn intent_path(dir: &Path) -> PathBuf {
    dir.join("intent.img")
}

/// A member file's superblock handle: its own descriptor, so superblocks can be
/// written whatever the volume does with the data store.
#[derive(Debug)]
pub struct SuperblockFile {
    pub path: PathBuf,
    file: File,
}

impl SuperblockFile {
    /// Opens a member file for reading and writing; refuses anything but a regular
    /// file (a FIFO would block the read), and says so of a dangling symbolic link.
    pub fn open(path: &Path) -> Result<SuperblockFile, ArrayError> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|source| {
                let dangling = source.kind() == std::io::ErrorKind::NotFound
                    && path.symlink_metadata().is_ok_and(|m| m.is_symlink());
                match (dangling, std::fs::read_link(path)) {
                    (true, Ok(target)) => ArrayError::Mismatch {
                        file: path.to_path_buf(),
                        problem: format!(
                            "a symbolic link to {}, which does not exist",
                            target.display()
                        ),
                    },
                    _ => ArrayError::io(path)(source),
                }
            })?;
        let metadata = file.metadata().map_err(ArrayError::io(path))?;
        if !metadata.is_file() {
            return Err(ArrayError::Mismatch {
                file: path.to_path_buf(),
                problem: "not a regular file".into(),
            });
        }
        Ok(SuperblockFile {
            path: path.to_path_buf(),
            file,
        })
    }

    /// The newest valid superblock, with the other slot's problem when only one
    /// decodes, or an error naming the file and both slots.
    pub fn read_with_other_slot(&self) -> Result<(Superblock, Option<OtherSlot>), ArrayError> {
        let mut head = vec![0u8; 2 * SLOT_BYTES];
        let mut read = 0;
        while read < head.len() {
            match self.file.read_at(&mut head[read..], read as u64) {
                Ok(0) => break,
                Ok(n) => read += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(source) => return Err(ArrayError::io(&self.path)(source)),
            }
        }
        superblock::newest_and_other(&head[..read]).map_err(|(slot0, slot1)| {
            ArrayError::BadSuperblock {
                file: self.path.clone(),
                slot0,
                slot1,
            }
        })
    }

    /// The file's length in bytes now.
    pub fn len_bytes(&self) -> Result<u64, ArrayError> {
        self.file
            .metadata()
            .map(|m| m.len())
            .map_err(ArrayError::io(&self.path))
    }

    /// Writes `block` into the slot of its generation and makes it durable.
    pub fn write(&self, block: &Superblock) -> Result<(), ArrayError> {
        let at = superblock::slot_sector(block.generation) * 512;
        self.file
            .write_all_at(&block.encode(), at)
            .and_then(|()| self.file.sync_data())
            .map_err(ArrayError::io(&self.path))
    }
}

/// Creates a member file: both slots (the second one zeroed: invalid) plus
/// `member_size` data sectors, sparse.
pub fn create_member_file(path: &Path, member_size: Sectors) -> Result<FileStore, ArrayError> {
    let sectors = Sectors(member_size.0 + DATA_OFFSET_SECTORS);
    FileStore::create(path, sectors).map_err(|source| ArrayError::Store {
        path: path.to_path_buf(),
        source,
    })
}

/// The data store of an existing member file, checked against the superblock's size.
pub fn open_member_store(path: &Path, member_size: Sectors) -> Result<MemberStore, ArrayError> {
    let store_error = |source| ArrayError::Store {
        path: path.to_path_buf(),
        source,
    };
    let file = FileStore::open(path).map_err(store_error)?;
    let needed = member_size.0 + DATA_OFFSET_SECTORS;
    if file.capacity().0 < needed {
        return Err(ArrayError::Mismatch {
            file: path.to_path_buf(),
            problem: format!(
                "file holds {} sectors but its superblock says {needed} (truncated?)",
                file.capacity().0
            ),
        });
    }
    MemberStore::data(file, member_size).map_err(store_error)
}

/// `path` opened for reading and writing, made empty if missing, never truncated.
pub(crate) fn open_or_create(path: &Path) -> Result<File, ArrayError> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(ArrayError::io(path))
}

/// The exclusive lock on `DIR/lock` (flock), held while an [`crate::Array`] is
/// open; the file holds the holder's pid for the error message of the next one.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

impl DirLock {
    pub fn take(dir: &Path) -> Result<DirLock, ArrayError> {
        use std::os::fd::AsRawFd;
        let path = dir.join("lock");
        let mut file = open_or_create(&path)?;
        // SAFETY: a plain system call on a descriptor `file` keeps open.
        let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if locked != 0 {
            let error = std::io::Error::last_os_error();
            if error.raw_os_error() == Some(libc::EWOULDBLOCK) {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                let pid = pid.trim();
                return Err(ArrayError::Locked {
                    dir: dir.to_path_buf(),
                    pid: if pid.is_empty() {
                        "unknown".into()
                    } else {
                        pid.to_string()
                    },
                });
            }
            return Err(ArrayError::io(&path)(error));
        }
        let pid = std::process::id().to_string();
        file.set_len(0)
            .and_then(|()| file.seek(SeekFrom::Start(0)))
            .and_then(|_| file.write_all(pid.as_bytes()))
            .map_err(ArrayError::io(&path))?;
        Ok(DirLock { _file: file })
    }
}
