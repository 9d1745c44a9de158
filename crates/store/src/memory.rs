//! [`MemoryStore`]: a sparse store in RAM, for tests, benchmarks and small volumes.

use crate::store::{check_buffer, check_capacity, check_range, BlockStore, StoreError};
use spinstack_sim::units::{Lbn, Sectors, SECTOR_BYTES};
use std::collections::HashMap;
use std::ops::Range;

/// Bytes in one page of a [`MemoryStore`]: the unit of allocation and of freeing.
pub const PAGE_BYTES: usize = 64 * 1024;

/// A sparse in-memory store. Pages of [`PAGE_BYTES`] are allocated on first write; a
/// page never written (or freed by a trim covering it whole) reads as zeros. A trim
/// covering part of a page zeroes that part. `flush` has nothing to do: the bytes
/// live exactly as long as the store.
///
/// Pages are kept in a hash map rather than a vector indexed by page number so that a
/// terabyte-sized store costs only what has been written.
#[derive(Debug)]
pub struct MemoryStore {
    capacity: Sectors,
    pages: HashMap<u64, Box<[u8]>>,
}

impl MemoryStore {
    /// An all-zero store of `capacity` sectors; refuses zero and sizes whose byte
    /// count does not fit an `i64`.
    pub fn new(capacity: Sectors) -> Result<MemoryStore, StoreError> {
        check_capacity(capacity)?;
        Ok(MemoryStore {
            capacity,
            pages: HashMap::new(),
        })
    }

    /// Pages currently allocated (each [`PAGE_BYTES`]).
    pub fn allocated_pages(&self) -> usize {
        self.pages.len()
    }

    /// Bytes of page memory currently allocated.
    pub fn allocated_bytes(&self) -> u64 {
        (self.pages.len() * PAGE_BYTES) as u64
    }
}

/// One piece of a byte range that falls inside one page.
struct PageSpan {
    page: u64,
    /// Bytes inside the page.
    in_page: Range<usize>,
    /// The same bytes inside the caller's buffer (or range, counted from its start).
    in_buffer: Range<usize>,
}

/// Splits `len_bytes` bytes from `offset_bytes` into per-page spans, in order.
fn page_spans(offset_bytes: u64, len_bytes: usize) -> impl Iterator<Item = PageSpan> {
    let page_bytes = PAGE_BYTES as u64;
    let mut done = 0usize;
    std::iter::from_fn(move || {
        if done == len_bytes {
            return None;
        }
        let at = offset_bytes + done as u64;
        let start = (at % page_bytes) as usize;
        let take = (PAGE_BYTES - start).min(len_bytes - done);
        let span = PageSpan {
            page: at / page_bytes,
            in_page: start..start + take,
            in_buffer: done..done + take,
        };
        done += take;
        Some(span)
    })
}

fn zeroed_page() -> Box<[u8]> {
    // `vec![0; n]` asks the allocator for zeroed memory, which the OS supplies lazily.
    vec![0u8; PAGE_BYTES].into_boxed_slice()
}

impl BlockStore for MemoryStore {
    fn capacity(&self) -> Sectors {
        self.capacity
    }

    fn read(&mut self, lbn: Lbn, buf: &mut [u8]) -> Result<(), StoreError> {
        check_buffer(self.capacity, lbn, buf.len())?;
        for span in page_spans(lbn.0 * SECTOR_BYTES, buf.len()) {
            let out = &mut buf[span.in_buffer];
            match self.pages.get(&span.page) {
                Some(page) => out.copy_from_slice(&page[span.in_page]),
                None => out.fill(0),
            }
        }
        Ok(())
    }

    fn write(&mut self, lbn: Lbn, buf: &[u8]) -> Result<(), StoreError> {
        check_buffer(self.capacity, lbn, buf.len())?;
        for span in page_spans(lbn.0 * SECTOR_BYTES, buf.len()) {
            let page = self.pages.entry(span.page).or_insert_with(zeroed_page);
            page[span.in_page].copy_from_slice(&buf[span.in_buffer]);
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        // Nothing is cached between the caller and the pages.
        Ok(())
    }

    fn trim(&mut self, lbn: Lbn, sectors: Sectors) -> Result<(), StoreError> {
        check_range(self.capacity, lbn, sectors)?;
        let start_bytes = lbn.0 * SECTOR_BYTES;
        let end_bytes = start_bytes + sectors.bytes();
        let page_bytes = PAGE_BYTES as u64;
        // Pages wholly inside the range are freed; the partial pages at either end zeroed.
        let first_whole = start_bytes.div_ceil(page_bytes);
        let end_whole = end_bytes / page_bytes;
        let head_end_bytes = (first_whole * page_bytes).min(end_bytes);
        let tail_start_bytes = (end_whole * page_bytes).max(head_end_bytes);
        self.zero_within_pages(start_bytes, head_end_bytes);
        self.zero_within_pages(tail_start_bytes, end_bytes);
        let whole_pages = first_whole..end_whole.max(first_whole);
        // A trim of a huge, mostly empty range visits the allocated pages, not the range.
        if whole_pages.end - whole_pages.start > self.pages.len() as u64 {
            self.pages.retain(|page, _| !whole_pages.contains(page));
        } else {
            for page in whole_pages {
                self.pages.remove(&page);
            }
        }
        Ok(())
    }
}

impl MemoryStore {
    /// Zeroes bytes `start_bytes..end_bytes` (within one page) where allocated.
    fn zero_within_pages(&mut self, start_bytes: u64, end_bytes: u64) {
        debug_assert!(end_bytes - start_bytes <= PAGE_BYTES as u64);
        for span in page_spans(start_bytes, (end_bytes - start_bytes) as usize) {
            if let Some(page) = self.pages.get_mut(&span.page) {
                page[span.in_page].fill(0);
            }
        }
    }
}
