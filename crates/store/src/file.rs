//! [`FileStore`]: one sparse file, addressed by positional reads and writes.

use crate::store::{check_buffer, check_capacity, check_range, BlockStore, StoreError, ZEROS};
use spinstack_sim::units::{Lbn, Sectors, SECTOR_BYTES};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

/// A store backed by one regular file whose length is the capacity.
///
/// Reads and writes are `pread`/`pwrite` at `lbn * 512`; `flush` is `fdatasync`;
/// `trim` punches a hole (`fallocate(PUNCH_HOLE | KEEP_SIZE)`), or writes zeros where
/// the file system does not punch holes. Created files are sparse: only written
/// sectors take space. Every error names the file.
#[derive(Debug)]
pub struct FileStore {
    file: File,
    path: PathBuf,
    capacity: Sectors,
    /// False once the file system has refused to punch a hole: later trims write zeros.
    punch_holes: bool,
}

impl FileStore {
    /// Creates a new sparse file of `capacity` sectors, reading as zeros. Refuses to
    /// replace an existing file (it might be a member holding someone's data).
    pub fn create(path: impl AsRef<Path>, capacity: Sectors) -> Result<FileStore, StoreError> {
        let path = path.as_ref().to_path_buf();
        check_capacity(capacity)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|source| io_error("create", &path, source))?;
        if let Err(source) = file.set_len(capacity.bytes()) {
            // Best effort: do not leave a zero-length file behind the error.
            let _ = std::fs::remove_file(&path);
            return Err(io_error("set the length of", &path, source));
        }
        Ok(FileStore {
            file,
            path,
            capacity,
            punch_holes: true,
        })
    }

    /// Opens an existing file for reading and writing; its length must be a positive
    /// whole number of sectors.
    pub fn open(path: impl AsRef<Path>) -> Result<FileStore, StoreError> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|source| io_error("open", &path, source))?;
        let metadata = file
            .metadata()
            .map_err(|source| io_error("read the metadata of", &path, source))?;
        let len_bytes = metadata.len();
        let why = if !metadata.is_file() {
            Some("not a regular file")
        } else if len_bytes == 0 {
            Some("empty (a store needs at least one sector)")
        } else if Sectors::from_bytes(len_bytes).is_none() {
            Some("not a whole number of 512-byte sectors")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(StoreError::BadFileLength {
                path,
                len_bytes,
                why,
            });
        }
        let capacity = Sectors(len_bytes / SECTOR_BYTES);
        check_capacity(capacity)?;
        Ok(FileStore {
            file,
            path,
            capacity,
            punch_holes: true,
        })
    }

    /// The file's path, as given to `create` or `open`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `trim` may punch holes (the default). With `false`, trims write zeros,
    /// keeping the file fully allocated; this is also what happens by itself once the
    /// file system refuses to punch a hole.
    pub fn set_punch_holes(&mut self, punch_holes: bool) {
        self.punch_holes = punch_holes;
    }

    /// Whether trims punch holes: false once set so, or once the file system refused.
    pub fn punches_holes(&self) -> bool {
        self.punch_holes
    }

    /// The file's length in bytes now (`fstat`), which is less than the capacity once
    /// something else has cut the file short under this store.
    pub fn len_bytes(&self) -> Result<u64, StoreError> {
        let metadata = self
            .file
            .metadata()
            .map_err(|source| io_error("read the metadata of", &self.path, source))?;
        Ok(metadata.len())
    }

    /// Bytes the file system has allocated to the file (less than the capacity when
    /// the file is sparse).
    pub fn allocated_bytes(&self) -> Result<u64, StoreError> {
        let metadata = self
            .file
            .metadata()
            .map_err(|source| io_error("read the metadata of", &self.path, source))?;
        // `st_blocks` counts 512-byte units whatever the file system's block size.
        Ok(metadata.blocks() * 512)
    }

    fn io_error_at(
        &self,
        operation: &'static str,
        lbn: Lbn,
        sectors: Sectors,
        source: io::Error,
    ) -> StoreError {
        StoreError::IoAt {
            operation,
            path: self.path.clone(),
            lbn,
            sectors,
            source,
        }
    }

    /// Writes zeros over `sectors` from `lbn`, in chunks, without allocating.
    fn write_zeros(&mut self, lbn: Lbn, sectors: Sectors) -> io::Result<()> {
        let end_bytes = lbn.offset(sectors).0 * SECTOR_BYTES;
        let mut at_bytes = lbn.0 * SECTOR_BYTES;
        while at_bytes < end_bytes {
            let chunk_bytes = (end_bytes - at_bytes).min(ZEROS.len() as u64);
            self.file
                .write_all_at(&ZEROS[..chunk_bytes as usize], at_bytes)?;
            at_bytes += chunk_bytes;
        }
        Ok(())
    }
}

fn io_error(operation: &'static str, path: &Path, source: io::Error) -> StoreError {
    StoreError::Io {
        operation,
        path: path.to_path_buf(),
        source,
    }
}

/// Punches a hole over `len_bytes` from `offset_bytes`, keeping the file's size.
/// `Ok(false)` when the file system does not support it.
#[cfg(target_os = "linux")]
fn punch_hole(file: &File, offset_bytes: u64, len_bytes: u64) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    // Both fit: `check_capacity` keeps every byte offset of a store within `i64`.
    let offset = libc::off_t::try_from(offset_bytes).map_err(io::Error::other)?;
    let len = libc::off_t::try_from(len_bytes).map_err(io::Error::other)?;
    let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
    loop {
        // SAFETY: plain system call on a descriptor `file` keeps open for the call.
        let result = unsafe { libc::fallocate(file.as_raw_fd(), mode, offset, len) };
        if result == 0 {
            return Ok(true);
        }
        let error = io::Error::last_os_error();
        match error.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => return Ok(false),
            _ => return Err(error),
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn punch_hole(_file: &File, _offset_bytes: u64, _len_bytes: u64) -> io::Result<bool> {
    Ok(false)
}

impl BlockStore for FileStore {
    fn capacity(&self) -> Sectors {
        self.capacity
    }

    fn read(&mut self, lbn: Lbn, buf: &mut [u8]) -> Result<(), StoreError> {
        let sectors = check_buffer(self.capacity, lbn, buf.len())?;
        self.file
            .read_exact_at(buf, lbn.0 * SECTOR_BYTES)
            .map_err(|source| self.io_error_at("read", lbn, sectors, source))
    }

    fn write(&mut self, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError> {
        let sectors = check_buffer(self.capacity, lbn, buf.len())?;
        self.file
            .write_all_at(buf, lbn.0 * SECTOR_BYTES)
            .map_err(|source| self.io_error_at("write", lbn, sectors, source))
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        self.file
            .sync_data()
            .map_err(|source| io_error("flush (fdatasync)", &self.path, source))
    }

    fn trim(&mut self, lbn: Lbn, sectors: Sectors) -> Result<(), StoreError> {
        check_range(self.capacity, lbn, sectors)?;
        if sectors.0 == 0 {
            return Ok(());
        }
        if self.punch_holes {
            match punch_hole(&self.file, lbn.0 * SECTOR_BYTES, sectors.bytes()) {
                Ok(true) => return Ok(()),
                Ok(false) => self.punch_holes = false,
                Err(source) => return Err(self.io_error_at("trim", lbn, sectors, source)),
            }
        }
        self.write_zeros(lbn, sectors)
            .map_err(|source| self.io_error_at("trim (writing zeros)", lbn, sectors, source))
    }
}
