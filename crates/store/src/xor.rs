//! XOR of byte buffers, the parity arithmetic of RAID-5.
//!
//! The loops work on 32-byte chunks as four `u64` lanes with no data-dependent
//! branches, a shape LLVM turns into vector instructions (two SSE2 or one AVX2 XOR per
//! chunk) without `unsafe` or target-specific code; only the last < 32 bytes are
//! handled word by word and then byte by byte.

/// Bytes per unrolled step: four `u64` lanes.
const CHUNK_BYTES: usize = 32;
const WORD_BYTES: usize = 8;

/// Bytes of `dst` processed against every source before moving on in
/// [`xor_many`], so that block of `dst` stays in the L1 cache across sources.
const BLOCK_BYTES: usize = 4096;

/// `dst ^= src`, byte for byte. Panics when the lengths differ: that is a caller bug,
/// never a property of the data.
pub fn xor_into(dst: &mut [u8], src: &[u8]) {
    assert_eq!(
        dst.len(),
        src.len(),
        "xor_into: destination is {} bytes but source is {}",
        dst.len(),
        src.len()
    );
    let mut dst_chunks = dst.chunks_exact_mut(CHUNK_BYTES);
    let mut src_chunks = src.chunks_exact(CHUNK_BYTES);
    for (d, s) in (&mut dst_chunks).zip(&mut src_chunks) {
        xor_chunk(d, s);
    }
    xor_tail(dst_chunks.into_remainder(), src_chunks.remainder());
}

/// `dst ^= srcs[0] ^ srcs[1] ^ ...`. To compute parity from scratch, copy the first
/// source into `dst` and pass the others. Panics when a length differs from `dst`'s.
pub fn xor_many(dst: &mut [u8], srcs: &[&[u8]]) {
    for (index, src) in srcs.iter().enumerate() {
        assert_eq!(
            dst.len(),
            src.len(),
            "xor_many: destination is {} bytes but source {index} is {}",
            dst.len(),
            src.len()
        );
    }
    for (block_index, block) in dst.chunks_mut(BLOCK_BYTES).enumerate() {
        let start = block_index * BLOCK_BYTES;
        let range = start..start + block.len();
        // Sources two at a time: one pass over `dst` per pair halves its loads and stores.
        let mut pairs = srcs.chunks_exact(2);
        for pair in &mut pairs {
            xor2_into(block, &pair[0][range.clone()], &pair[1][range.clone()]);
        }
        if let [last] = pairs.remainder() {
            xor_into(block, &last[range]);
        }
    }
}

/// `dst ^= a ^ b`; all three the same length (checked by the caller).
fn xor2_into(dst: &mut [u8], a: &[u8], b: &[u8]) {
    debug_assert!(dst.len() == a.len() && dst.len() == b.len());
    let mut dst_chunks = dst.chunks_exact_mut(CHUNK_BYTES);
    let mut a_chunks = a.chunks_exact(CHUNK_BYTES);
    let mut b_chunks = b.chunks_exact(CHUNK_BYTES);
    for ((d, a), b) in (&mut dst_chunks).zip(&mut a_chunks).zip(&mut b_chunks) {
        xor_chunk(d, a);
        xor_chunk(d, b);
    }
    let dst_tail = dst_chunks.into_remainder();
    xor_tail(dst_tail, a_chunks.remainder());
    xor_tail(dst_tail, b_chunks.remainder());
}

/// XORs one 32-byte chunk as four `u64` lanes.
#[inline(always)]
fn xor_chunk(dst: &mut [u8], src: &[u8]) {
    // Fixed-size arrays let LLVM drop the bounds checks and keep the lanes in registers.
    let dst: &mut [u8; CHUNK_BYTES] = dst.try_into().expect("chunk is 32 bytes");
    let src: &[u8; CHUNK_BYTES] = src.try_into().expect("chunk is 32 bytes");
    for lane in 0..CHUNK_BYTES / WORD_BYTES {
        let at = lane * WORD_BYTES;
        let d = u64::from_ne_bytes(dst[at..at + WORD_BYTES].try_into().expect("8 bytes"));
        let s = u64::from_ne_bytes(src[at..at + WORD_BYTES].try_into().expect("8 bytes"));
        dst[at..at + WORD_BYTES].copy_from_slice(&(d ^ s).to_ne_bytes());
    }
}

/// The last < 32 bytes: whole words, then single bytes.
fn xor_tail(dst: &mut [u8], src: &[u8]) {
    let mut dst_words = dst.chunks_exact_mut(WORD_BYTES);
    let mut src_words = src.chunks_exact(WORD_BYTES);
    for (d, s) in (&mut dst_words).zip(&mut src_words) {
        let word = u64::from_ne_bytes((&*d).try_into().expect("8 bytes"))
            ^ u64::from_ne_bytes(s.try_into().expect("8 bytes"));
        d.copy_from_slice(&word.to_ne_bytes());
    }
    for (d, s) in dst_words
        .into_remainder()
        .iter_mut()
        .zip(src_words.remainder())
    {
        *d ^= s;
    }
}
