//! The grammar's building blocks (RFC 9110 §5.5, §5.6): tokens, field
//! values, optional whitespace, lists, decimals and the line terminator,
//! shared by the head parser, the decoders and the writers.

/// The line terminator of HTTP/1.1 framing.
pub const CRLF: &[u8] = b"\r\n";

/// `VCHAR / obs-text`: a byte allowed inside a field value (RFC 9110 §5.5).
#[inline]
pub(crate) const fn is_field_vchar(b: u8) -> bool {
    matches!(b, 0x21..=0x7e | 0x80..=0xff)
}

/// `SP / HTAB`.
#[inline]
pub(crate) const fn is_ws(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// The elements of a comma-separated list, OWS trimmed. Empty elements are
/// yielded (as empty slices) so the caller can refuse them.
pub(crate) fn list(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value.split(|&b| b == b',').map(trim_ows)
}

/// Whether the comma-separated list `value` (RFC 9110 §5.6.1) has the
/// element `token`, compared case-insensitively: `Connection: keep-alive,
/// Upgrade` lists `upgrade`.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::list_contains;
///
/// assert!(list_contains(b"keep-alive, Upgrade", b"upgrade"));
/// assert!(list_contains(b" close ,", b"close"));
/// assert!(!list_contains(b"upgraded", b"upgrade"));
/// ```
pub fn list_contains(value: &[u8], token: &[u8]) -> bool {
    list(value).any(|element| element.eq_ignore_ascii_case(token))
}

/// `1*DIGIT` as a `u64`; `None` if empty, not all digits, or too large.
pub(crate) fn parse_decimal(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.iter().try_fold(0u64, |n, &b| {
        if !b.is_ascii_digit() {
            return None;
        }
        n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
    })
}

/// `s` without optional whitespace (`OWS`: SP, HTAB) at either end.
pub(crate) fn trim_ows(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .unwrap_or(s.len());
    trim_end_ows(s.get(start..).unwrap_or_default())
}

/// `s` without optional whitespace at its end.
pub(crate) fn trim_end_ows(s: &[u8]) -> &[u8] {
    let end = s
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .map_or(0, |p| p + 1);
    s.get(..end).unwrap_or_default()
}

/// `tchar` (RFC 9110 §5.6.2).
#[inline]
pub(crate) const fn is_tchar(b: u8) -> bool {
    matches!(
        b,
        b'!' | b'#'
            | b'$'
            | b'%'
            | b'&'
            | b'\''
            | b'*'
            | b'+'
            | b'-'
            | b'.'
            | b'^'
            | b'_'
            | b'`'
            | b'|'
            | b'~'
            | b'0'..=b'9'
            | b'a'..=b'z'
            | b'A'..=b'Z'
    )
}

/// Whether `s` is a non-empty token (RFC 9110 §5.6.2).
pub(crate) fn is_token(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(|&b| TCHAR[usize::from(b)])
}

/// `tchar` (RFC 9110 §5.6.2) by table lookup, for loops over many bytes.
#[inline]
pub(crate) fn is_tchar_byte(b: u8) -> bool {
    TCHAR[usize::from(b)]
}

/// RFC 9110 §5.6.2 tchar, by byte value.
pub(crate) static TCHAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = is_tchar(b);
        i += 1;
    }
    t
};

/// Whether every byte of `v` is allowed in a field value, looking at eight
/// bytes at a time: only a word holding a control byte (HTAB included) or
/// DEL is checked byte by byte.
pub(crate) fn is_field_value(v: &[u8]) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const DEL: u64 = LO * 0x7f;
    let mut chunks = v.chunks_exact(8);
    for chunk in &mut chunks {
        let Ok(word) = <[u8; 8]>::try_from(chunk) else {
            return false;
        };
        let w = u64::from_le_bytes(word);
        let del = w ^ DEL;
        // Non-zero when some byte is below 0x20 or equals 0x7f.
        let suspect = ((w.wrapping_sub(LO * 0x20) & !w) | (del.wrapping_sub(LO) & !del)) & HI;
        if suspect != 0 && !chunk.iter().all(|&b| FIELD_BYTE[usize::from(b)]) {
            return false;
        }
    }
    chunks
        .remainder()
        .iter()
        .all(|&b| FIELD_BYTE[usize::from(b)])
}

/// Bytes allowed in a field value: HTAB, SP, VCHAR, obs-text
/// (RFC 9110 §5.5), by byte value.
static FIELD_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = b == b'\t' || (b >= b' ' && b <= b'~') || b >= 0x80;
        i += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_value_check_matches_the_table() {
        let naive = |s: &[u8]| s.iter().all(|&b| FIELD_BYTE[usize::from(b)]);
        for bad in 0u8..=255 {
            for at in 0..20 {
                let mut v = [b'x'; 20];
                v[at] = bad;
                for from in 0..v.len() {
                    assert_eq!(
                        is_field_value(&v[from..]),
                        naive(&v[from..]),
                        "{bad} at {at}"
                    );
                }
            }
        }
    }
}
