//! `xor_into` and `xor_many` agree with a byte-by-byte reference for every length
//! (0..300 bytes covers empty, the byte tail, the word tail and several 32-byte
//! chunks; larger lengths cross `xor_many`'s 4 KiB blocks) and for slices starting at
//! any alignment. On failure proptest prints the minimal failing case.

use proptest::prelude::*;
use spinstack_store::xor::{xor_into, xor_many};

fn reference(dst: &mut [u8], srcs: &[&[u8]]) {
    for src in srcs {
        for (d, s) in dst.iter_mut().zip(src.iter()) {
            *d ^= s;
        }
    }
}

fn len() -> impl Strategy<Value = usize> {
    prop_oneof![0..300usize, 0..10_000usize]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    // Proves xor_into is byte-wise XOR at every length and alignment.
    #[test]
    fn xor_into_matches_bytewise(len in len(), skew in 0..8usize, seed in any::<u8>()) {
        let src_backing: Vec<u8> = (0..len + 8).map(|i| (i as u8).wrapping_mul(seed | 1)).collect();
        let mut dst: Vec<u8> = (0..len).map(|i| (i as u8) ^ seed).collect();
        let src = &src_backing[skew..skew + len];
        let mut expected = dst.clone();
        reference(&mut expected, &[src]);
        xor_into(&mut dst, src);
        prop_assert_eq!(dst, expected);
    }

    // Proves xor_many equals repeated byte-wise XOR for 0..7 sources.
    #[test]
    fn xor_many_matches_bytewise(len in len(), sources in 0..7usize, seed in any::<u64>()) {
        let srcs: Vec<Vec<u8>> = (0..sources)
            .map(|k| (0..len).map(|i| (seed as usize + i * 7 + k * 13) as u8).collect())
            .collect();
        let views: Vec<&[u8]> = srcs.iter().map(Vec::as_slice).collect();
        let mut dst: Vec<u8> = (0..len).map(|i| (i * 3) as u8).collect();
        let mut expected = dst.clone();
        reference(&mut expected, &views);
        xor_many(&mut dst, &views);
        prop_assert_eq!(dst, expected);
    }
}

// Proves parity works as RAID-5 needs: any one lost source is the XOR of the parity
// and the others.
#[test]
fn parity_recovers_a_lost_source() {
    let data: Vec<Vec<u8>> = (0..4u8)
        .map(|k| (0..4096).map(|i| (i as u8) ^ (k * 37)).collect())
        .collect();
    let mut parity = data[0].clone();
    let rest: Vec<&[u8]> = data[1..].iter().map(Vec::as_slice).collect();
    xor_many(&mut parity, &rest);
    let mut rebuilt = parity.clone();
    let survivors: Vec<&[u8]> = [0usize, 1, 3].iter().map(|&k| data[k].as_slice()).collect();
    xor_many(&mut rebuilt, &survivors);
    assert_eq!(rebuilt, data[2]);
}

// Proves a length mismatch is caught (a caller bug), not silently truncated.
#[test]
#[should_panic(expected = "destination is 4 bytes but source is 5")]
fn xor_into_rejects_mismatched_lengths() {
    xor_into(&mut [0u8; 4], &[0u8; 5]);
}

// Proves xor_many names the offending source.
#[test]
#[should_panic(expected = "source 1 is 3")]
fn xor_many_rejects_mismatched_lengths() {
    xor_many(&mut [0u8; 4], &[&[0u8; 4], &[0u8; 3]]);
}
