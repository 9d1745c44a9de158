//! The page cache: file pages in a memory bound, replaced by LRU or by Linux's
//! active/inactive lists, with each page's write-back state.
//!
//! A page's state machine ([`PageState`]):
//!
//! | state \ event       | `write` (now)               | `start_writeback` | `finish_writeback`   | eviction |
//! |---------------------|-----------------------------|-------------------|----------------------|----------|
//! | `Clean`             | `Dirty { since: now }`      | —                 | —                    | allowed  |
//! | `Dirty { since }`   | unchanged (first dirtying counts) | `WritingBack` | —                | refused  |
//! | `WritingBack`       | `Redirtied { since: now }`  | —                 | `Clean`              | refused  |
//! | `Redirtied { since }` | unchanged                 | —                 | `Dirty { since }`    | refused  |
//!
//! "—" is a call that does nothing to that page (and says so in its return).
//! Only `Clean` pages are ever evicted, so a dirty page leaves the cache only
//! through write-back, or when its file is truncated ([`PageCache::truncate_file`],
//! the data being gone).
//!
//! Replacement ([`Replacement`]): `Lru` keeps one list and evicts the least
//! recently used clean page. `ActiveInactive` is Linux 2.6's two lists with its
//! use-once rule (`mark_page_accessed`): a page read in joins the inactive list
//! unreferenced; an access marks an unreferenced page referenced where it
//! stands, and moves a referenced inactive page to the active list (so a page
//! has to be used twice to be promoted: a stream's pages, read once, stay
//! inactive and leave in the order they came, while its read-ahead, newer,
//! waits behind them); eviction takes the oldest clean inactive page, after
//! moving the active list's oldest pages to the inactive list while the active
//! list is the longer (the balance of the file lists in later 2.6 kernels,
//! `inactive_file_is_low`; 2.6.16's balance, driven by scanning pressure, is
//! not modelled). A write counts as an access, as `generic_file_buffered_write`
//! marks the page accessed; a read completing for a page already cached does
//! not (nobody read it).
//!
//! Regression (issue 9, ext2-streams): with one access promoting, every page a
//! stream had read was active when the 2 GB cache first filled, so the first
//! reclaim demoted half the cache past the streams' pending read-ahead, which
//! was then the oldest inactive and evicted first: start-up latencies rose by a
//! third for the twenty streams after the fill (0.58 against 0.46 s at streams
//! 91–100, two seeds), gone with LRU or a 16 GB cache.

use crate::allocator::FileId;
use spinstack_sim::units::Nanoseconds;
use std::collections::{BTreeMap, HashMap};

/// A page of a file: the file and the page's index within it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PageKey {
    pub file: FileId,
    pub index: u64,
}

/// How a page stands with respect to the disk; see the module's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageState {
    Clean,
    Dirty {
        since: Nanoseconds,
    },
    WritingBack,
    /// Written again while its write-back was in flight.
    Redirtied {
        since: Nanoseconds,
    },
}

impl PageState {
    /// Holds data the disk does not have yet (or is only now receiving).
    pub fn is_clean(self) -> bool {
        self == PageState::Clean
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replacement {
    Lru,
    ActiveInactive,
}

/// Why a page could not be brought in.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CacheError {
    #[error("a cache of {memory_bytes} bytes holds no {page_bytes}-byte page")]
    TooSmall { memory_bytes: u64, page_bytes: u64 },
    #[error("the cache is full of pages that are dirty ({dirty}) or being written back ({writing_back}); write some back first")]
    Full { dirty: usize, writing_back: usize },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    Active,
    Inactive,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    state: PageState,
    list: List,
    /// Recency: larger is more recent.
    stamp: u64,
    /// Accessed once since it joined its list (`PG_referenced`); only the
    /// active/inactive lists use it.
    referenced: bool,
}

/// One recency list, split by cleanliness so the oldest clean page (the
/// eviction victim) is found without walking past dirty ones.
#[derive(Clone, Debug, Default)]
struct RecencyList {
    clean: BTreeMap<u64, PageKey>,
    unclean: BTreeMap<u64, PageKey>,
}

impl RecencyList {
    fn len(&self) -> usize {
        self.clean.len() + self.unclean.len()
    }
    fn side(&mut self, clean: bool) -> &mut BTreeMap<u64, PageKey> {
        if clean {
            &mut self.clean
        } else {
            &mut self.unclean
        }
    }
    /// The oldest page of either side.
    fn oldest(&self) -> Option<(u64, PageKey)> {
        let clean = self.clean.first_key_value();
        let unclean = self.unclean.first_key_value();
        match (clean, unclean) {
            (Some(c), Some(u)) => Some(if c.0 < u.0 { c } else { u }),
            (c, u) => c.or(u),
        }
        .map(|(&stamp, &key)| (stamp, key))
    }
}

/// The cache. Invariant: it never holds more than `capacity_pages` pages, and
/// every page is in exactly one list, on the side its state says.
#[derive(Clone, Debug)]
pub struct PageCache {
    page_bytes: u64,
    capacity_pages: usize,
    replacement: Replacement,
    pages: HashMap<PageKey, Entry>,
    active: RecencyList,
    inactive: RecencyList,
    next_stamp: u64,
    dirty: usize,
    writing_back: usize,
}

impl PageCache {
    /// A cache of `memory_bytes` (the papers' 128 MB or 2 GB) in pages of
    /// `page_bytes` (Linux 4 KB; FFS's buffers are its 8 KB blocks).
    pub fn new(
        memory_bytes: u64,
        page_bytes: u64,
        replacement: Replacement,
    ) -> Result<PageCache, CacheError> {
        let capacity_pages = memory_bytes.checked_div(page_bytes).unwrap_or(0) as usize;
        if capacity_pages == 0 {
            return Err(CacheError::TooSmall {
                memory_bytes,
                page_bytes,
            });
        }
        Ok(PageCache {
            page_bytes,
            capacity_pages,
            replacement,
            pages: HashMap::new(),
            active: RecencyList::default(),
            inactive: RecencyList::default(),
            next_stamp: 0,
            dirty: 0,
            writing_back: 0,
        })
    }

    pub fn page_bytes(&self) -> u64 {
        self.page_bytes
    }
    pub fn capacity_pages(&self) -> usize {
        self.capacity_pages
    }
    pub fn len(&self) -> usize {
        self.pages.len()
    }
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }
    /// Bytes the cached pages take.
    pub fn bytes(&self) -> u64 {
        self.pages.len() as u64 * self.page_bytes
    }
    /// Pages dirty or redirtied (waiting for a write-back to start).
    pub fn dirty_pages(&self) -> usize {
        self.dirty
    }
    /// Pages whose write-back is in flight.
    pub fn writing_back_pages(&self) -> usize {
        self.writing_back
    }
    pub fn contains(&self, key: PageKey) -> bool {
        self.pages.contains_key(&key)
    }
    pub fn state(&self, key: PageKey) -> Option<PageState> {
        self.pages.get(&key).map(|e| e.state)
    }
    /// Pages on the active list (always 0 under `Lru`).
    pub fn active_pages(&self) -> usize {
        self.active.len()
    }

    /// A read of a page: `true` on a hit, `false` on a miss. Under `Lru` a hit
    /// makes the page the most recent; under `ActiveInactive` it is Linux's
    /// `mark_page_accessed` (see the module's doc).
    pub fn access(&mut self, key: PageKey) -> bool {
        let Some(entry) = self.pages.get(&key).copied() else {
            return false;
        };
        match self.replacement {
            Replacement::Lru => self.relink(key, entry, List::Inactive, entry.state),
            Replacement::ActiveInactive => self.mark_accessed(key, entry),
        }
        true
    }

    /// Linux 2.6's `mark_page_accessed`: inactive and unreferenced becomes
    /// referenced; inactive and referenced moves to the active list,
    /// unreferenced; active becomes referenced. Only the move changes a
    /// page's place in the lists.
    fn mark_accessed(&mut self, key: PageKey, entry: Entry) {
        if entry.list == List::Inactive && entry.referenced {
            self.unlink(key, entry);
            self.link(key, List::Active, entry.state, false);
        } else if let Some(page) = self.pages.get_mut(&key) {
            page.referenced = true;
        }
    }

    /// Brings a clean page in (a completed read), evicting clean pages as the
    /// bound needs; returns the evicted pages. A page already present is left
    /// as it is under `ActiveInactive` (nobody read it yet) and made the most
    /// recent under `Lru`. `Err(Full)` when every page is dirty or being
    /// written back.
    pub fn insert(&mut self, key: PageKey) -> Result<Vec<PageKey>, CacheError> {
        if let Some(entry) = self.pages.get(&key).copied() {
            if self.replacement == Replacement::Lru {
                self.relink(key, entry, List::Inactive, entry.state);
            }
            return Ok(Vec::new());
        }
        let evicted = self.make_room()?;
        self.link_new(key, PageState::Clean);
        Ok(evicted)
    }

    /// A write to a page at `now`: the page is brought in if absent (as
    /// [`PageCache::insert`]) and dirtied per the state table.
    pub fn write(&mut self, key: PageKey, now: Nanoseconds) -> Result<Vec<PageKey>, CacheError> {
        let evicted = if self.access(key) {
            Vec::new()
        } else {
            let evicted = self.make_room()?;
            self.link_new(key, PageState::Clean);
            // The write itself is the new page's first access.
            self.access(key);
            evicted
        };
        let entry = self.pages[&key];
        let state = match entry.state {
            PageState::Clean => PageState::Dirty { since: now },
            PageState::WritingBack => PageState::Redirtied { since: now },
            dirty => dirty,
        };
        self.relink(key, entry, entry.list, state);
        Ok(evicted)
    }

    /// Every dirty page (not yet being written back), oldest dirtying first.
    pub fn dirty_oldest_first(&self) -> Vec<(PageKey, Nanoseconds)> {
        let mut dirty: Vec<(PageKey, Nanoseconds)> = self
            .pages
            .iter()
            .filter_map(|(&key, e)| match e.state {
                PageState::Dirty { since } => Some((key, since)),
                _ => None,
            })
            .collect();
        dirty.sort_by_key(|&(key, since)| (since, key));
        dirty
    }

    /// Starts the write-back of these pages; returns those that were `Dirty`
    /// (the others are left as they are).
    pub fn start_writeback(&mut self, keys: &[PageKey]) -> Vec<PageKey> {
        let mut started = Vec::new();
        for &key in keys {
            if let Some(entry) = self.pages.get(&key).copied() {
                if let PageState::Dirty { .. } = entry.state {
                    self.relink(key, entry, entry.list, PageState::WritingBack);
                    started.push(key);
                }
            }
        }
        started
    }

    /// The write-back of these pages completed: `WritingBack` pages become
    /// clean, `Redirtied` ones dirty again.
    pub fn finish_writeback(&mut self, keys: &[PageKey]) {
        for &key in keys {
            if let Some(entry) = self.pages.get(&key).copied() {
                let state = match entry.state {
                    PageState::WritingBack => PageState::Clean,
                    PageState::Redirtied { since } => PageState::Dirty { since },
                    other => other,
                };
                self.relink(key, entry, entry.list, state);
            }
        }
    }

    /// Drops every page of `file`, dirty or not (the file was deleted or
    /// truncated: its data is gone). Returns how many pages were dropped.
    pub fn truncate_file(&mut self, file: FileId) -> usize {
        let keys: Vec<PageKey> = self
            .pages
            .keys()
            .copied()
            .filter(|k| k.file == file)
            .collect();
        for &key in &keys {
            let entry = self.pages[&key];
            self.unlink(key, entry);
            self.pages.remove(&key);
        }
        keys.len()
    }

    fn list_mut(&mut self, list: List) -> &mut RecencyList {
        match list {
            List::Active => &mut self.active,
            List::Inactive => &mut self.inactive,
        }
    }

    fn count(&mut self, state: PageState, delta: isize) {
        let counter = match state {
            PageState::Clean => return,
            PageState::Dirty { .. } | PageState::Redirtied { .. } => &mut self.dirty,
            PageState::WritingBack => &mut self.writing_back,
        };
        *counter = counter.wrapping_add_signed(delta);
    }

    fn unlink(&mut self, key: PageKey, entry: Entry) {
        let removed = self
            .list_mut(entry.list)
            .side(entry.state.is_clean())
            .remove(&entry.stamp);
        debug_assert_eq!(removed, Some(key), "the lists hold every page once");
        self.count(entry.state, -1);
    }

    fn link(&mut self, key: PageKey, list: List, state: PageState, referenced: bool) {
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        self.list_mut(list)
            .side(state.is_clean())
            .insert(stamp, key);
        self.count(state, 1);
        self.pages.insert(
            key,
            Entry {
                state,
                list,
                stamp,
                referenced,
            },
        );
    }

    fn link_new(&mut self, key: PageKey, state: PageState) {
        self.link(key, List::Inactive, state, false);
    }

    /// Moves a page to the most recent end of `list` with `state`, keeping
    /// whether it was referenced (Linux keeps `PG_referenced` when it
    /// deactivates an unmapped page).
    fn relink(&mut self, key: PageKey, entry: Entry, list: List, state: PageState) {
        self.unlink(key, entry);
        self.link(key, list, state, entry.referenced);
    }

    /// Evicts clean pages until one more page fits.
    fn make_room(&mut self) -> Result<Vec<PageKey>, CacheError> {
        let mut evicted = Vec::new();
        while self.pages.len() >= self.capacity_pages {
            self.balance();
            if self.inactive.clean.is_empty() && !self.demote_oldest_active() {
                return Err(CacheError::Full {
                    dirty: self.dirty,
                    writing_back: self.writing_back,
                });
            }
            if let Some((&stamp, &key)) = self.inactive.clean.first_key_value() {
                self.inactive.clean.remove(&stamp);
                self.pages.remove(&key);
                evicted.push(key);
            }
        }
        Ok(evicted)
    }

    /// Moves the active list's oldest page to the inactive list; `false` when
    /// the active list is empty.
    fn demote_oldest_active(&mut self) -> bool {
        let Some((_, key)) = self.active.oldest() else {
            return false;
        };
        let entry = self.pages[&key];
        self.relink(key, entry, List::Inactive, entry.state);
        true
    }

    /// Keeps the active list no longer than the inactive one; done when
    /// reclaiming, as Linux shrinks the active list only under memory pressure.
    fn balance(&mut self) {
        while self.replacement == Replacement::ActiveInactive
            && self.active.len() > self.inactive.len()
        {
            self.demote_oldest_active();
        }
    }
}
