//! A database buffer pool of 8 KB frames with CLOCK replacement (the usual
//! approximation of LRU in database engines): what misses, and which dirty pages
//! are written back when evicted. Pages are numbered densely, so the page → frame
//! map is a vector.

use crate::log::PageId;

const NO_FRAME: u32 = u32::MAX;

/// What one page access cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Access {
    /// The page had to be read.
    pub miss: bool,
    /// A dirty page was evicted and must be written first.
    pub write_back: Option<PageId>,
}

#[derive(Clone, Copy)]
struct Frame {
    page: u64,
    referenced: bool,
    dirty: bool,
}

/// See the module documentation.
#[derive(Clone)]
pub struct BufferPool {
    frames: Vec<Frame>,
    capacity: usize,
    frame_of: Vec<u32>,
    hand: usize,
}

impl BufferPool {
    /// A pool of `frames` frames (at least one) over pages below `pages` (grown on demand).
    pub fn new(frames: usize, pages: u64) -> BufferPool {
        BufferPool {
            frames: Vec::with_capacity(frames.max(1)),
            capacity: frames.max(1),
            frame_of: vec![NO_FRAME; pages as usize],
            hand: 0,
        }
    }

    /// Whether every frame holds a page (from then on each miss evicts one).
    pub fn is_full(&self) -> bool {
        self.frames.len() == self.capacity
    }

    /// Access `page`, marking it dirty when `write`.
    pub fn access(&mut self, page: PageId, write: bool) -> Access {
        let index = page.0 as usize;
        if index >= self.frame_of.len() {
            self.frame_of.resize(index + 1 + index / 4, NO_FRAME);
        }
        let frame = self.frame_of[index];
        if frame != NO_FRAME {
            let f = &mut self.frames[frame as usize];
            f.referenced = true;
            f.dirty |= write;
            return Access::default();
        }
        let fresh = Frame {
            page: page.0,
            referenced: true,
            dirty: write,
        };
        if self.frames.len() < self.capacity {
            self.frame_of[index] = self.frames.len() as u32;
            self.frames.push(fresh);
            return Access {
                miss: true,
                write_back: None,
            };
        }
        loop {
            let f = &mut self.frames[self.hand];
            if f.referenced {
                f.referenced = false;
                self.hand = (self.hand + 1) % self.capacity;
                continue;
            }
            let victim = *f;
            *f = fresh;
            self.frame_of[victim.page as usize] = NO_FRAME;
            self.frame_of[index] = self.hand as u32;
            self.hand = (self.hand + 1) % self.capacity;
            return Access {
                miss: true,
                write_back: victim.dirty.then_some(PageId(victim.page)),
            };
        }
    }
}
