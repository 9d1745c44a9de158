//! Postmark (Katcher, NetApp TR3022, 1997) as a list of program [`Step`]s
//! over FreeBSD FFS: create a pool of small files, run transactions (each a
//! read or an append, then a create or a delete, files chosen at random),
//! delete what is left.
//!
//! Defaults ([`PostmarkConfig::v1_11`]) as in PostMark's `postmark.c`: 500
//! files of 500 to 10,000 bytes, 500 transactions, read and write block
//! 512 bytes, read/append and create/delete biases 5 (of 10), stdio buffered
//! I/O; v1.11's change log touches only `read_file`, so these are v1.11's
//! defaults too (checked against the v1.51 source, whose change log lists no
//! change of defaults).
//!
//! What FFS does to the disk for it, as the model has it:
//! - creating a file makes two synchronous metadata writes, the new inode's
//!   block and then the directory block (FFS without soft updates orders
//!   metadata updates with synchronous writes: Ganger and Patt, "Metadata
//!   update performance in file systems", OSDI 1994, §2); removing one makes
//!   two, the directory block and then the inode's block;
//! - data goes through the cache as delayed writes (buffered by stdio in
//!   `st_blksize` = 8 KB pieces, one `write` per block); the syncer writes it
//!   after 30 s unless the file is deleted first;
//! - reads of files in the cache cost only CPU.
//!
//! Simplified: no fragments (every file takes whole 8 KB blocks; FFS gives a
//! 5 KB file five 1 KB fragments), one directory block, inodes numbered from
//! the lowest free, Postmark's own random generator (the Mersenne Twister
//! since v1.5, its own before) replaced by a seeded `splitmix64`, no
//! directory reads or `open`/`close` CPU beyond the per-call cost.

use crate::block::BlockNumber;
use crate::program::{FileHandle, Step};

/// Postmark's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PostmarkConfig {
    pub files: usize,
    pub transactions: usize,
    pub size_low_bytes: u64,
    pub size_high_bytes: u64,
    /// Chance in 10 of a read rather than an append.
    pub bias_read: u64,
    /// Chance in 10 of a create rather than a delete.
    pub bias_create: u64,
    pub seed: u64,
}

impl PostmarkConfig {
    /// PostMark v1.11's defaults (see the module documentation); its seed 42.
    pub fn v1_11() -> PostmarkConfig {
        PostmarkConfig {
            files: 500,
            transactions: 500,
            size_low_bytes: 500,
            size_high_bytes: 10_000,
            bias_read: 5,
            bias_create: 5,
            seed: 42,
        }
    }
}

/// Where FFS keeps the metadata Postmark's creates and deletes write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MetadataLayout {
    /// The directory's one block.
    pub directory_block: BlockNumber,
    /// The first block of the inode table of the directory's group.
    pub inode_table: BlockNumber,
    pub inodes_per_block: u64,
    /// The group the files' blocks start in.
    pub group: usize,
    pub block_bytes: u64,
}

/// The steps and where the phases are marked: `marks[0]` after the pool is
/// created, `marks[1]` after the transactions, `marks[2]` at the end.
pub struct PostmarkRun {
    pub steps: Vec<Step>,
    pub transactions: usize,
    pub files_created: usize,
}

struct Generator {
    state: u64,
}

impl Generator {
    /// `splitmix64`: a seeded, well-mixed sequence.
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Postmark's `RND(x)`: 0 when `x` is 0, else uniform in `0..x`.
    fn below(&mut self, x: u64) -> u64 {
        if x == 0 {
            0
        } else {
            self.next() % x
        }
    }
}

struct Slot {
    handle: FileHandle,
    size: u64,
    inode: u64,
}

struct Builder {
    config: PostmarkConfig,
    layout: MetadataLayout,
    random: Generator,
    /// Postmark's file table: twice `files` slots.
    table: Vec<Option<Slot>>,
    free_inodes: std::collections::BTreeSet<u64>,
    next_inode: u64,
    created: usize,
    steps: Vec<Step>,
}

impl Builder {
    fn pages(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.layout.block_bytes)
    }

    fn inode_block(&self, inode: u64) -> BlockNumber {
        self.layout
            .inode_table
            .plus(inode / self.layout.inodes_per_block.max(1))
    }

    fn create(&mut self) {
        let Some(slot) = self.table.iter().position(Option::is_none) else {
            return;
        };
        let inode = match self.free_inodes.pop_first() {
            Some(inode) => inode,
            None => {
                self.next_inode += 1;
                self.next_inode - 1
            }
        };
        let config = self.config;
        let size = config.size_low_bytes
            + self
                .random
                .below(config.size_high_bytes - config.size_low_bytes);
        let handle = FileHandle(self.created);
        self.created += 1;
        self.steps.extend([
            Step::Create {
                file: handle,
                group: self.layout.group,
            },
            Step::MetadataWrite {
                block: self.inode_block(inode),
            },
            Step::MetadataWrite {
                block: self.layout.directory_block,
            },
        ]);
        for page in 0..self.pages(size) {
            self.steps.push(Step::Write {
                file: handle,
                first: page,
                pages: 1,
            });
        }
        self.steps.push(Step::Close { file: handle });
        self.table[slot] = Some(Slot {
            handle,
            size,
            inode,
        });
    }

    fn delete(&mut self, slot: usize) {
        if let Some(file) = self.table[slot].take() {
            self.steps.extend([
                Step::MetadataWrite {
                    block: self.layout.directory_block,
                },
                Step::MetadataWrite {
                    block: self.inode_block(file.inode),
                },
                Step::Delete { file: file.handle },
            ]);
            self.free_inodes.insert(file.inode);
        }
    }

    /// Postmark's `find_used_file`: a random slot until one is in use.
    fn used_slot(&mut self) -> Option<usize> {
        if self.table.iter().all(Option::is_none) {
            return None;
        }
        loop {
            let slot = self.random.below(self.table.len() as u64) as usize;
            if self.table[slot].is_some() {
                return Some(slot);
            }
        }
    }

    fn read(&mut self, slot: usize) {
        let Some(file) = &self.table[slot] else {
            return;
        };
        let (handle, pages) = (file.handle, self.pages(file.size));
        for page in 0..pages {
            self.steps.push(Step::Read {
                file: handle,
                first: page,
                pages: 1,
            });
        }
    }

    fn append(&mut self, slot: usize) {
        let high = self.config.size_high_bytes;
        let Some(file) = &self.table[slot] else {
            return;
        };
        if file.size >= high {
            return;
        }
        let (handle, size) = (file.handle, file.size);
        let added = self.random.below(high - size) + 1;
        let first = size / self.layout.block_bytes;
        let end = self.pages(size + added);
        for page in first..end {
            self.steps.push(Step::Write {
                file: handle,
                first: page,
                pages: 1,
            });
        }
        self.steps.push(Step::Close { file: handle });
        if let Some(file) = self.table[slot].as_mut() {
            file.size += added;
        }
    }
}

/// Postmark's run as steps (see the module documentation).
pub fn postmark(config: PostmarkConfig, layout: MetadataLayout) -> PostmarkRun {
    let mut builder = Builder {
        config,
        layout,
        random: Generator { state: config.seed },
        table: (0..2 * config.files).map(|_| None).collect(),
        free_inodes: Default::default(),
        next_inode: 0,
        created: 0,
        steps: Vec::new(),
    };
    for _ in 0..config.files {
        builder.create();
    }
    builder.steps.push(Step::Mark);
    for _ in 0..config.transactions {
        let Some(slot) = builder.used_slot() else {
            break;
        };
        if builder.random.below(10) < config.bias_read {
            builder.read(slot);
        } else {
            builder.append(slot);
        }
        if builder.random.below(10) < config.bias_create {
            builder.create();
        } else if let Some(slot) = builder.used_slot() {
            builder.delete(slot);
        }
    }
    builder.steps.push(Step::Mark);
    for slot in 0..builder.table.len() {
        builder.delete(slot);
    }
    builder.steps.push(Step::Mark);
    PostmarkRun {
        steps: builder.steps,
        transactions: config.transactions,
        files_created: builder.created,
    }
}
