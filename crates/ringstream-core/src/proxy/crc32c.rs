//! CRC32C (Castagnoli), as version 2's `PP2_TYPE_CRC32C` extension
//! carries it: over the whole header, with the extension's own value
//! counted as zeros. Bitwise: a header is checked once per connection.

use super::tlv::CRC32C;

/// The reflected Castagnoli polynomial.
const POLY: u32 = 0x82F6_3B78;

fn update(mut crc: u32, byte: u8) -> u32 {
    crc ^= u32::from(byte);
    for _ in 0..8 {
        crc = if crc & 1 == 1 {
            (crc >> 1) ^ POLY
        } else {
            crc >> 1
        };
    }
    crc
}

/// The CRC32C of `bytes`.
#[cfg(test)]
pub(super) fn of(bytes: &[u8]) -> u32 {
    !bytes.iter().fold(!0, |crc, &b| update(crc, b))
}

/// The CRC32C of `header` (a whole version 2 header whose extensions
/// start at `tlvs_at`), the value of its CRC32C extension taken as zeros.
pub(super) fn of_header(header: &[u8], tlvs_at: usize) -> u32 {
    // Where the extension's 4-byte value is.
    let mut at = tlvs_at;
    let mut zeroed = None;
    while at + 3 <= header.len() {
        let len = usize::from(u16::from_be_bytes([header[at + 1], header[at + 2]]));
        if header[at] == CRC32C {
            zeroed = Some(at + 3..at + 3 + len);
            break;
        }
        at += 3 + len;
    }
    let crc = header.iter().enumerate().fold(!0, |crc, (i, &b)| {
        let b = if zeroed.as_ref().is_some_and(|r| r.contains(&i)) {
            0
        } else {
            b
        };
        update(crc, b)
    });
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_value_of_the_standard_is_met() {
        // The check value of CRC-32C (RFC 3720 B.4): "123456789".
        assert_eq!(of(b"123456789"), 0xE306_9283);
        assert_eq!(of(b""), 0);
    }
}
