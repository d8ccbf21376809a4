//! Masking and unmasking payloads in place (RFC 6455 §5.3).

/// XORs `buf` in place with the masking `key`, as the payload bytes that
/// start `offset` bytes into the frame's payload: byte `i` of `buf` is
/// XORed with `key[(offset + i) % 4]`. Masking and unmasking are the same
/// operation.
///
/// `offset` lets a payload be unmasked in pieces as it arrives: pass the
/// number of payload bytes already handled. The work is done eight bytes
/// at a time, on `u64` words, which the compiler widens to vector
/// registers where it can.
///
/// # Examples
///
/// The masked "Hello" of RFC 6455 §5.7, unmasked in two pieces:
///
/// ```
/// use ringstream_core::ws::apply_mask;
///
/// let key = [0x37, 0xfa, 0x21, 0x3d];
/// let mut payload = [0x7f, 0x9f, 0x4d, 0x51, 0x58];
/// let (first, rest) = payload.split_at_mut(2);
/// apply_mask(first, key, 0);
/// apply_mask(rest, key, 2);
/// assert_eq!(&payload, b"Hello");
/// ```
#[inline]
pub fn apply_mask(buf: &mut [u8], key: [u8; 4], offset: usize) {
    let mut key = key;
    key.rotate_left(offset % 4);
    let [a, b, c, d] = key;
    let word = u64::from_ne_bytes([a, b, c, d, a, b, c, d]);
    let mut words = buf.chunks_exact_mut(8);
    for chunk in &mut words {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(chunk);
        chunk.copy_from_slice(&(u64::from_ne_bytes(bytes) ^ word).to_ne_bytes());
    }
    // Every word is a multiple of 4 bytes long, so the tail starts at key[0].
    for (byte, k) in words.into_remainder().iter_mut().zip(key.iter().cycle()) {
        *byte ^= k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn reference(buf: &mut [u8], key: [u8; 4], offset: usize) {
        for (i, b) in buf.iter_mut().enumerate() {
            *b ^= key[(offset + i) % 4];
        }
    }

    #[test]
    fn matches_the_byte_at_a_time_reference_at_every_offset_and_length() {
        let key = [0x12, 0x34, 0xab, 0xcd];
        let data: Vec<u8> = (0..100u8).map(|i| i.wrapping_mul(37)).collect();
        for offset in 0..12 {
            for len in 0..=data.len() {
                let mut fast = data[..len].to_vec();
                let mut slow = fast.clone();
                apply_mask(&mut fast, key, offset);
                reference(&mut slow, key, offset);
                assert_eq!(fast, slow, "offset {offset} len {len}");
            }
        }
    }

    #[test]
    fn unmasking_in_pieces_equals_unmasking_whole() {
        let key = [0xde, 0xad, 0xbe, 0xef];
        let data: Vec<u8> = (0..=255u8).collect();
        let mut whole = data.clone();
        apply_mask(&mut whole, key, 0);
        for a in 0..data.len() {
            for b in [a, a + 1, a + 7, a + 9, data.len()] {
                let b = b.min(data.len());
                let mut pieces = data.clone();
                let (x, rest) = pieces.split_at_mut(a);
                let (y, z) = rest.split_at_mut(b - a);
                apply_mask(x, key, 0);
                apply_mask(y, key, a);
                apply_mask(z, key, b);
                assert_eq!(pieces, whole, "{a} {b}");
            }
        }
    }
}
