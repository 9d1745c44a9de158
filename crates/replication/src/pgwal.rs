//! A reader of PostgreSQL's `pg_waldump` text output (PostgreSQL 15's format, and
//! 16's and later's `off: N` / `old_off: N` / `new_off: N` descriptions): one line
//! per WAL record,
//!
//! ```text
//! rmgr: Heap        len (rec/tot):    171/   171, tx:        736, lsn: 0/02188A60, prev 0/02188A28, desc: UPDATE off 50 xmax 736 flags 0x03 ; new off 22 xmax 0, blkref #0: rel 1663/5/16396 blk 1639, blkref #1: rel 1663/5/16396 blk 433
//! ```
//!
//! Each block reference becomes one [`LogRecord`] on that block's page (pages are
//! numbered relation by relation, fork by fork, in the order of the relations'
//! identifiers); the record's size is its total length split over its block
//! references. Kind: descriptions starting with `INSERT` (heap and index inserts)
//! are inserts, `DELETE` deletes, everything else with a block reference
//! (updates, HOT updates, pruning, locks) updates. A `COMMIT` ends its
//! transaction: its last record with a block reference carries
//! `ends_transaction`. Records without block references (commits, locks, file
//! creation) write no page and give no record.
//!
//! **Rows.** A record's row ([`RecordId`]) is its page and a tuple offset, the
//! offset at which the row's chain of versions on that page began. PostgreSQL
//! writes every update as a new tuple version (`off` the old one, `new off` the
//! new one); an update that stays on its page (a HOT update, or an `UPDATE` with
//! one block reference) continues the old version's row, so a row updated again
//! and again on its page (pgbench's branches and tellers) is one row, the
//! "identical record" the paper's folding coalesces. An update that moves the
//! row to another page (two block references: `#0` the new page, `#1` the old)
//! gives the old page a record on the old version's row (its `xmax` is set) and
//! starts a row at the new version (compaction keys rows by page, so a chain
//! across pages would fold nothing). An insert starts a row at its offset; locks
//! and deletes name the row of the version at their offset; records without an
//! offset (pruning, multi-inserts) are one page-level row.
//!
//! A dump is read line by line ([`parse_reader`]); only the records that carry
//! block references and the commits are kept until pages are numbered at the end.
//!
//! Bad input is an error naming the line and what was wrong with it (a dump whose
//! last line has no line end was cut short and is refused, and so is a line that is
//! not UTF-8); lines that
//! `pg_waldump` writes about itself (`pg_waldump: ...`) and blank lines are skipped,
//! and so is the note it prints before the first record when its start is not a
//! record's (`first record is after 0/4600000, at 0/4601698, skipping over 5784
//! bytes`: `pg_waldump -p pg_wal` with no start LSN prints it); that note anywhere
//! after the first record is an error, and so is an LSN not above the one before
//! it (pg_waldump writes them in increasing order; see `lsn_out_of_order`).

use crate::log::{LogRecord, Lsn, PageId, RecordId, RecordKind};
use std::collections::HashMap;
use std::io::BufRead;

/// Why a dump could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WalError {
    #[error("{source_name}:{line}: {problem} (in {text:?})")]
    Line {
        source_name: String,
        line: usize,
        problem: String,
        text: String,
    },
    #[error("{source_name}: no WAL record with a block reference")]
    Empty { source_name: String },
    #[error(
        "{source_name}: the relations' highest block numbers add up to {pages} pages, \
         more than the {max} (a 1 TiB database) the study numbers",
        max = PAGES_MAX
    )]
    TooManyPages { source_name: String, pages: u64 },
    #[error("{source_name}: reading after line {line}: {problem}")]
    Read {
        source_name: String,
        line: usize,
        problem: String,
    },
}

/// A dump read into records.
#[derive(Clone, Debug, PartialEq)]
pub struct WalLog {
    pub records: Vec<LogRecord>,
    /// Pages the relations occupy (block numbers seen, per relation and fork).
    pub pages: u64,
    pub transactions: u64,
    pub wal_records: u64,
}

/// One block reference before pages are numbered.
struct BlockRef {
    /// The relation's index in [`Relations`].
    relation: u32,
    block: u64,
}

/// The relations (tablespace, database, relation, fork) block references name,
/// each given an index as it is first seen, with the highest block seen in it.
/// Fork names are kept once, in `forks`; a relation names its fork by position.
#[derive(Default)]
struct Relations {
    index: HashMap<(u64, u64, u64, usize), u32>,
    forks: Vec<String>,
    /// Per index: the relation's key in `index` and its highest block.
    seen: Vec<((u64, u64, u64, usize), u64)>,
}

impl Relations {
    fn block(&mut self, ids: [u64; 3], fork: &str, block: u64) -> BlockRef {
        let fork_id = match self.forks.iter().position(|f| f == fork) {
            Some(at) => at,
            None => {
                self.forks.push(fork.to_string());
                self.forks.len() - 1
            }
        };
        let key = (ids[0], ids[1], ids[2], fork_id);
        let seen = &mut self.seen;
        let relation = *self.index.entry(key).or_insert_with(|| {
            seen.push((key, 0));
            (seen.len() - 1) as u32
        });
        let highest = &mut self.seen[relation as usize].1;
        *highest = (*highest).max(block);
        BlockRef { relation, block }
    }

    /// Each relation's first page: relations in order (tablespace, database,
    /// relation, fork name), each as many pages as its highest block + 1; and the
    /// pages in all.
    fn number_pages(&self) -> (Vec<u64>, u64) {
        let order_key = |index: usize| {
            let ((space, database, relation, fork), _) = self.seen[index];
            (space, database, relation, self.forks[fork].as_str())
        };
        let mut order: Vec<usize> = (0..self.seen.len()).collect();
        order.sort_by(|&a, &b| order_key(a).cmp(&order_key(b)));
        let mut base = vec![0; self.seen.len()];
        let mut pages = 0;
        for index in order {
            base[index] = pages;
            pages += self.seen[index].1 + 1;
        }
        (base, pages)
    }
}

/// A WAL record that matters to the study: one with block references (its
/// references are `blocks[first_block..first_block + block_count]` of the
/// parse), or a commit.
struct Parsed {
    /// The record's position in the WAL (`lsn: X/Y` as one number).
    lsn: u64,
    transaction: u64,
    /// The tuple offset the record names (`new off` for an update; 0 for none).
    offset: u64,
    /// An update's old version (`off` before `new off`).
    old_offset: Option<u64>,
    bytes: u32,
    first_block: usize,
    block_count: usize,
    kind: RecordKind,
    commit: bool,
}

fn field<'a>(text: &'a str, name: &str) -> Result<&'a str, String> {
    let at = text
        .find(name)
        .ok_or_else(|| format!("no `{name}` field"))?;
    let rest = text[at + name.len()..].trim_start();
    Ok(rest.split([',', ' ']).next().unwrap_or(""))
}

/// The number after the earliest of `keys` that starts a word of `text` (at its
/// start or after a space), if any: `off ` matches " off 5" but not "old_off 5".
fn word_number(text: &str, keys: &[&str], what: &str) -> Result<Option<u64>, String> {
    let found = keys
        .iter()
        .filter_map(|key| {
            text.match_indices(key)
                .find(|&(at, _)| at == 0 || text[..at].ends_with(' '))
                .map(|(at, _)| (at, at + key.len()))
        })
        .min();
    let Some((_, after)) = found else {
        return Ok(None);
    };
    let token = text[after..].split_whitespace().next().unwrap_or("");
    number(token.trim_end_matches([',', ';', ':']), what).map(Some)
}

fn number(text: &str, what: &str) -> Result<u64, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("{what} {text:?} is not a number"))
}

/// Parse one record line; its block references go to `blocks`.
fn parse_line(
    line: &str,
    relations: &mut Relations,
    blocks: &mut Vec<BlockRef>,
) -> Result<Parsed, String> {
    let rest = line
        .strip_prefix("rmgr:")
        .ok_or("not a `rmgr:` record line")?;
    let (head, desc) = rest.split_once("desc: ").ok_or("no `desc:` field")?;
    let lengths = field(head, "len (rec/tot):")?;
    let total = head
        .split_once("len (rec/tot):")
        .and_then(|(_, after)| after.split_once('/'))
        .map(|(_, tot)| tot.trim_start().split(',').next().unwrap_or(""))
        .ok_or_else(|| format!("length {lengths:?} is not rec/tot"))?;
    let bytes = number(total, "total length")?;
    let transaction = number(field(head, "tx:")?, "transaction id")?;
    let lsn_text = field(head, "lsn:")?;
    let (high, low) = lsn_text
        .split_once('/')
        .ok_or_else(|| format!("LSN {lsn_text:?} is not X/Y"))?;
    let hex = |h: &str| {
        u64::from_str_radix(h, 16).map_err(|_| format!("LSN {lsn_text:?} is not hexadecimal"))
    };
    // Kept to check the order; records are numbered in the order they come.
    let lsn = (hex(high)? << 32) | hex(low)?;
    let mut parts = desc.split(", blkref #");
    let description = parts.next().unwrap_or("");
    let word = description.split_whitespace().next().unwrap_or("");
    let kind = if word.starts_with("INSERT") || word.starts_with("MULTI_INSERT") {
        RecordKind::Insert
    } else if word.starts_with("DELETE") {
        RecordKind::Delete
    } else {
        RecordKind::Update
    };
    // PostgreSQL 15 writes "UPDATE off 50 xmax 736 flags 0x03 ; new off 22 xmax 0"
    // and "INSERT off 3 flags 0x00"; 16 and later "UPDATE old_xmax: 736, old_off: 50,
    // ..., new_off: 22" and "INSERT off: 3, flags: 0x00".
    let new_offset = word_number(description, &["new off ", "new_off: "], "new tuple offset")?;
    let old_offset = match new_offset {
        Some(_) if word.contains("UPDATE") => {
            let before_new = description
                .split_once("new off ")
                .or_else(|| description.split_once("new_off: "))
                .map_or(description, |(before, _)| before);
            let old = word_number(before_new, &["off ", "old_off: "], "old tuple offset")?;
            Some(old.ok_or("an update without its old tuple offset (`off`, `old_off:`)")?)
        }
        _ => None,
    };
    let offset = match new_offset {
        Some(new) => new,
        None => word_number(description, &["off ", "off: "], "tuple offset")?.unwrap_or(0),
    };
    let first_block = blocks.len();
    for reference in parts {
        let (_, after) = reference
            .split_once(": rel ")
            .ok_or_else(|| format!("block reference {reference:?} has no `rel`"))?;
        let mut words = after.split_whitespace();
        let relation = words.next().ok_or("block reference without a relation")?;
        let not_ids = || format!("relation {relation:?} is not spc/db/rel");
        let mut id_words = relation.split('/');
        let mut ids = [0u64; 3];
        for id in &mut ids {
            *id = id_words
                .next()
                .and_then(|w| w.parse().ok())
                .ok_or_else(not_ids)?;
        }
        if id_words.next().is_some() {
            return Err(not_ids());
        }
        let mut fork = "main";
        let mut block = None;
        while let Some(w) = words.next() {
            match w {
                "fork" => fork = words.next().ok_or("`fork` without a name")?,
                "blk" => {
                    let text = words.next().ok_or("`blk` without a number")?;
                    let number = number(text.trim_end_matches(','), "block number")?;
                    if number > BLOCK_NUMBER_MAX {
                        return Err(format!(
                            "block number {number} is beyond PostgreSQL's 32-bit block numbers"
                        ));
                    }
                    block = Some(number);
                }
                _ => {}
            }
        }
        let block = block.ok_or_else(|| format!("block reference {reference:?} has no `blk`"))?;
        blocks.push(relations.block(ids, fork, block));
    }
    Ok(Parsed {
        lsn,
        bytes: u32::try_from(bytes).map_err(|_| format!("total length {bytes} too large"))?,
        transaction,
        kind,
        commit: head.trim_start().starts_with("Transaction") && word == "COMMIT",
        offset,
        old_offset,
        first_block,
        block_count: blocks.len() - first_block,
    })
}

/// An LSN as PostgreSQL writes it (`%X/%08X`).
fn lsn_text(lsn: u64) -> String {
    format!("{:X}/{:08X}", lsn >> 32, lsn & 0xFFFF_FFFF)
}

/// Why `lsn` cannot follow `previous` (its LSN and line), if it cannot. An LSN
/// is the record's position in the WAL and pg_waldump reads the WAL forward, so
/// within one dump each LSN is above the one before: across segment files, and
/// across a timeline switch too (a timeline branches at an LSN and continues
/// forward from it). Refused, not warned about: a repeated or earlier LSN means
/// dumps put together out of order or overlapping, and the records would be
/// replayed in an order PostgreSQL never wrote them.
fn lsn_out_of_order(previous: Option<(u64, usize)>, lsn: u64) -> Option<String> {
    let (previous, previous_line) = previous?;
    (lsn <= previous).then(|| {
        format!(
            "LSN {} is not after the previous record's {} (line {previous_line}): \
             pg_waldump writes LSNs in increasing order; are several dumps \
             concatenated or reordered?",
            lsn_text(lsn),
            lsn_text(previous)
        )
    })
}

/// `pg_waldump`'s note that it skipped to the first whole record (its
/// `first record is after %X/%X, at %X/%X, skipping over %u bytes`).
fn is_start_note(line: &str) -> bool {
    line.starts_with("first record is after ")
        && line.contains(", at ")
        && line.contains(", skipping over ")
}

/// Read a dump held in memory (`source_name` names it in errors).
pub fn parse(source_name: &str, text: &str) -> Result<WalLog, WalError> {
    parse_reader(source_name, text.as_bytes())
}

/// Longest line read: pg_waldump's longest records (many block references) run to a
/// few kilobytes; a longer line is not its output (`/dev/zero` would have none end).
pub const LINE_BYTES_MAX: u64 = 64 * 1024;
/// Largest block number PostgreSQL writes: `BlockNumber` is 32 bits and its last
/// value, `InvalidBlockNumber`, marks no block.
pub const BLOCK_NUMBER_MAX: u64 = 0xFFFF_FFFE;
/// Most pages the relations may occupy in all: pages are numbered densely (each
/// relation as many as its highest block + 1) and the study keeps a table entry per
/// page, so one stray block number must not size it. 2^27 pages of 8 KiB: a 1 TiB
/// database.
pub const PAGES_MAX: u64 = 1 << 27;

/// Read a dump line by line from `input` (`source_name` names it in errors): a
/// dump of a million pgbench transactions is a gigabyte of text, which is never
/// held whole. Only records with block references and commits are kept.
pub fn parse_reader(source_name: &str, mut input: impl BufRead) -> Result<WalLog, WalError> {
    let mut relations = Relations::default();
    let mut parsed = Vec::new();
    let mut blocks = Vec::new();
    let mut wal_records = 0u64;
    // The last record's LSN and line, to check the dump's order.
    let mut previous_lsn: Option<(u64, usize)> = None;
    let mut bytes = Vec::new();
    let mut line = 0;
    loop {
        bytes.clear();
        let read = std::io::Read::take(input.by_ref(), LINE_BYTES_MAX + 1)
            .read_until(b'\n', &mut bytes)
            .map_err(|e| WalError::Read {
                source_name: source_name.to_string(),
                line,
                problem: e.to_string(),
            })?;
        if read == 0 {
            break;
        }
        line += 1;
        let line_error = |problem: &str| WalError::Line {
            source_name: source_name.to_string(),
            line,
            problem: problem.to_string(),
            text: String::from_utf8_lossy(&bytes)
                .trim()
                .chars()
                .take(120)
                .collect(),
        };
        if bytes.len() as u64 > LINE_BYTES_MAX {
            return Err(line_error(
                "the line is longer than 65536 bytes: not pg_waldump output",
            ));
        }
        if !bytes.ends_with(b"\n") {
            // pg_waldump ends every line; a last line without its end was cut
            // short (and may still look like a complete record).
            return Err(line_error(
                "the dump ends in the middle of this line (truncated)",
            ));
        }
        let Ok(text) = std::str::from_utf8(&bytes) else {
            return Err(line_error("not UTF-8 text"));
        };
        let text = match line {
            1 => spinstack_sim::input_file::strip_bom(text),
            _ => text,
        };
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed.starts_with("pg_waldump:") {
            continue;
        }
        if wal_records == 0 && is_start_note(trimmed) {
            continue;
        }
        let record = parse_line(trimmed, &mut relations, &mut blocks)
            .map_err(|problem| line_error(&problem))?;
        if let Some(problem) = lsn_out_of_order(previous_lsn, record.lsn) {
            return Err(line_error(&problem));
        }
        previous_lsn = Some((record.lsn, line));
        wal_records += 1;
        if record.commit || record.block_count > 0 {
            parsed.push(record);
        }
    }
    let (base, pages) = relations.number_pages();
    if pages > PAGES_MAX {
        return Err(WalError::TooManyPages {
            source_name: source_name.to_string(),
            pages,
        });
    }
    let mut records = Vec::new();
    let mut last_of_transaction: HashMap<u64, usize> = HashMap::new();
    let mut rows = RowChains::default();
    let mut transactions = 0;
    for p in &parsed {
        if p.commit {
            transactions += 1;
            if let Some(&index) = last_of_transaction.get(&p.transaction) {
                let record: &mut LogRecord = &mut records[index];
                record.ends_transaction = true;
            }
            continue;
        }
        let share = p.bytes / p.block_count.max(1) as u32;
        let references = &blocks[p.first_block..p.first_block + p.block_count];
        for (index, b) in references.iter().enumerate() {
            let page = base[b.relation as usize] + b.block;
            let row = rows.row_of(page, index, p);
            records.push(LogRecord {
                // Numbered in order: the records of one WAL record share its LSN.
                lsn: Lsn(records.len() as u64),
                record: RecordId((page << 16) | (row & 0xffff)),
                page: PageId(page),
                bytes: share.max(1),
                kind: p.kind,
                ends_transaction: false,
            });
            if p.transaction != 0 {
                last_of_transaction.insert(p.transaction, records.len() - 1);
            }
        }
    }
    if records.is_empty() {
        return Err(WalError::Empty {
            source_name: source_name.to_string(),
        });
    }
    Ok(WalLog {
        records,
        pages,
        transactions,
        wal_records,
    })
}

/// Where each tuple version's row began on its page (see the module
/// documentation): (page, offset of a version) → offset of its row's first version.
#[derive(Default)]
struct RowChains {
    first_version: HashMap<(u64, u64), u64>,
}

impl RowChains {
    /// The row of `record`'s block reference `index` (on `page`); an update or
    /// insert also records where its new version's row began.
    fn row_of(&mut self, page: u64, index: usize, record: &Parsed) -> u64 {
        let row_at = |chains: &Self, offset: u64| {
            chains
                .first_version
                .get(&(page, offset))
                .copied()
                .unwrap_or(offset)
        };
        match (record.old_offset, record.block_count, index) {
            // An update on one page: the new version continues the old one's row.
            (Some(old), 1, _) => {
                let row = row_at(self, old);
                self.first_version.insert((page, record.offset), row);
                row
            }
            // A row moved off its page: the new page's version starts a row ...
            (Some(_), _, 0) => {
                self.first_version
                    .insert((page, record.offset), record.offset);
                record.offset
            }
            // ... and the old page's record is on the old version's row.
            (Some(old), _, _) => row_at(self, old),
            (None, _, _) if record.kind == RecordKind::Insert => {
                self.first_version
                    .insert((page, record.offset), record.offset);
                record.offset
            }
            (None, _, _) => row_at(self, record.offset),
        }
    }
}
