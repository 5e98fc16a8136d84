//! Deterministic blob contents, so that every byte a server returns can be
//! checked without keeping what was sent: a seed names the bytes.

use bytes::Bytes;

/// `len` bytes derived from `seed` (splitmix64, eight bytes per step).
pub fn pattern(seed: u64, len: usize) -> Bytes {
    let mut out = vec![0u8; len];
    fill(seed, &mut out);
    Bytes::from(out)
}

/// Fills `buf` with the bytes [`pattern`] gives for `seed`.
pub fn fill(seed: u64, buf: &mut [u8]) {
    let mut state = seed ^ 0x9E37_79B9_7F4A_7C15;
    let mut chunks = buf.chunks_exact_mut(8);
    for chunk in &mut chunks {
        chunk.copy_from_slice(&splitmix(&mut state).to_le_bytes());
    }
    let rest = chunks.into_remainder();
    let last = splitmix(&mut state).to_le_bytes();
    let n = rest.len();
    rest.copy_from_slice(&last[..n]);
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A seed for a name (FNV-1a), so blobs named differently differ.
pub fn seed_of(name: &str) -> u64 {
    name.bytes().fold(0xCBF2_9CE4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

/// The size of one appended block in the appenders workload.
pub const APPEND_BLOCK: usize = 1024;

/// One appended block: a 16-byte header `w<writer:04> s<seq:08>\n` naming
/// who wrote it, then bytes derived from both.
pub fn append_block(writer: u32, seq: u32) -> Bytes {
    let mut out = vec![0u8; APPEND_BLOCK];
    let header = format!("w{writer:04} s{seq:08}\n");
    out[..16].copy_from_slice(header.as_bytes());
    fill(
        (u64::from(writer) << 32) | u64::from(seq),
        &mut out[16..APPEND_BLOCK],
    );
    Bytes::from(out)
}

/// Reads back the writer and sequence number of a block made by
/// [`append_block`], or `None` when its bytes are not such a block.
pub fn parse_append_block(block: &[u8]) -> Option<(u32, u32)> {
    if block.len() != APPEND_BLOCK {
        return None;
    }
    let header = std::str::from_utf8(&block[..16]).ok()?;
    let rest = header.strip_prefix('w')?.strip_suffix('\n')?;
    let (w, s) = rest.split_once(" s")?;
    let (writer, seq) = (w.parse().ok()?, s.parse().ok()?);
    (append_block(writer, seq) == block).then_some((writer, seq))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_is_deterministic_and_seeded() {
        assert_eq!(pattern(7, 4096), pattern(7, 4096));
        assert_ne!(pattern(7, 4096), pattern(8, 4096));
        assert_eq!(pattern(7, 13)[..], pattern(7, 4096)[..13]);
    }

    #[test]
    fn append_blocks_round_trip_and_reject_damage() {
        let block = append_block(15, 999);
        assert_eq!(parse_append_block(&block), Some((15, 999)));
        let mut damaged = block.to_vec();
        damaged[500] ^= 1;
        assert_eq!(parse_append_block(&damaged), None);
    }
}
