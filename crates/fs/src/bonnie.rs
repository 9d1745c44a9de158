//! Bonnie's sequential block write (Tim Bray's Bonnie, `Bonnie.c`) as a list of
//! program [`Step`]s: create the file, write it from start to end in `Chunk`
//! (16 KB) `write` calls, close it. Bonnie times the phase up to the close
//! without an fsync, so the steps end with a [`Step::Mark`] at the close: data
//! still dirty then counts as written.

use crate::program::{FileHandle, Step};

/// Bonnie's `Chunk`: each `write` call is 16 KB.
pub const CHUNK_BYTES: u64 = 16 * 1024;

/// The block-write phase for a file of `file_pages` pages of `page_bytes`
/// bytes: one write per `Chunk` (a last partial chunk is written whole, as
/// Bonnie sizes its file in chunks), then the close and a mark.
pub fn block_write(file: FileHandle, file_pages: u64, page_bytes: u64) -> Vec<Step> {
    let chunk_pages = (CHUNK_BYTES / page_bytes.max(1)).max(1);
    let mut steps = vec![Step::Create { file, group: 0 }];
    steps.extend((0..file_pages.div_ceil(chunk_pages)).map(|k| Step::Write {
        file,
        first: k * chunk_pages,
        pages: chunk_pages,
    }));
    steps.extend([Step::Close { file }, Step::Mark]);
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proves the phase writes every page once, in order, in 16 KB calls, and ends
    // with the close and the mark Bonnie's timing stops at.
    #[test]
    fn writes_the_file_once_in_chunks() {
        let file = FileHandle(0);
        let steps = block_write(file, 10, 4096);
        let writes: Vec<(u64, u64)> = steps
            .iter()
            .filter_map(|step| match *step {
                Step::Write { first, pages, .. } => Some((first, pages)),
                _ => None,
            })
            .collect();
        assert_eq!(writes, vec![(0, 4), (4, 4), (8, 4)]);
        assert!(matches!(steps[0], Step::Create { .. }));
        assert!(matches!(
            steps[steps.len() - 2..],
            [Step::Close { .. }, Step::Mark]
        ));
    }
}
