//! How the ext2 experiments lay their files out: created one after the other
//! in group 0, each written as a writer extends it, optionally with another
//! file between.

use spinstack_fs::{Allocator, BlockNumber, BlockRun};

/// A writer extends a file 8 blocks (32 KB) at a time, so ext2's preallocation
/// decides the layout as it does for a real writer.
pub(crate) const WRITE_PIECE_BLOCKS: u64 = 8;

/// A laid-out file: its data runs and its indirect blocks.
pub(crate) type LaidOut = (Vec<BlockRun>, Vec<BlockNumber>);

/// Creates `files` files of `blocks` blocks in group 0, each extended
/// `WRITE_PIECE_BLOCKS` at a time as a writer would, and closed.
pub(crate) fn lay_out(
    allocator: &mut Allocator,
    files: usize,
    blocks: u64,
) -> Result<Vec<LaidOut>, String> {
    lay_out_apart(allocator, files, blocks, 0)
}

/// As [`lay_out`], with another file of `gap_blocks` blocks created after
/// each (none for 0), which moves where the next one starts.
pub(crate) fn lay_out_apart(
    allocator: &mut Allocator,
    files: usize,
    blocks: u64,
    gap_blocks: u64,
) -> Result<Vec<LaidOut>, String> {
    let mut laid_out = Vec::new();
    for _ in 0..files {
        let file = allocator.create(0).map_err(|e| e.to_string())?;
        for _ in 0..blocks / WRITE_PIECE_BLOCKS {
            allocator
                .allocate(file, WRITE_PIECE_BLOCKS)
                .map_err(|e| e.to_string())?;
        }
        allocator.close(file).map_err(|e| e.to_string())?;
        let file_runs = allocator
            .runs(file)
            .ok_or_else(|| "a created file has no runs".to_string())?;
        let indirect = allocator.indirect_blocks(file).unwrap_or_default();
        laid_out.push((file_runs.to_vec(), indirect.to_vec()));
        if gap_blocks > 0 {
            let other = allocator.create(0).map_err(|e| e.to_string())?;
            allocator
                .allocate(other, gap_blocks)
                .map_err(|e| e.to_string())?;
            allocator.close(other).map_err(|e| e.to_string())?;
        }
    }
    Ok(laid_out)
}
