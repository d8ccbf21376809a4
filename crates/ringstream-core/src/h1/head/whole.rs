//! The one-pass paths: a request line or a field line of the usual shape,
//! complete when first looked at, validated and split at once, and the
//! byte-class runs they take as text.

use super::field::Field;
use super::line::RequestLine;
use super::target::TargetForm;
use super::target::PATH_QUERY;
use crate::h1::syntax::TCHAR;
use crate::h1::version::Version;
use crate::Limits;

/// Offset of the first control byte (below 0x20: HTAB, CR and LF among
/// them) or DEL in `s`, looking at eight bytes at a time (the last few one
/// by one).
#[inline(never)]
fn find_control(s: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut off = 0;
    for chunk in s.chunks_exact(8) {
        let Ok(word) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let w = u64::from_le_bytes(word);
        // With the high bits cleared, no sum below carries out of its
        // byte: x + 0x60 has the high bit set for x of 0x20 and more, and
        // x + 1 for x = 0x7f alone. So `found` has the high bit of exactly
        // the ASCII bytes below 0x20 or equal to 0x7f.
        let x = w & !HI;
        let found = (!(x + LO * 0x60) | (x + LO)) & !w & HI;
        if found != 0 {
            return Some(off + (found.trailing_zeros() / 8) as usize);
        }
        off += 8;
    }
    let tail = s.get(off..)?;
    tail.iter()
        .position(|&b| b < 0x20 || b == 0x7f)
        .map(|p| off + p)
}

/// A request line recognized whole by [`whole_request_line`].
pub(super) struct WholeRequestLine<'b> {
    pub(super) line: RequestLine,
    pub(super) method: &'b str,
    pub(super) target: &'b str,
    /// Offset of the CR ending the line.
    pub(super) cr: usize,
}

/// `HTTP/1.1` and `HTTP/1.0` as little-endian words, to compare eight
/// bytes at once.
const HTTP_11: u64 = u64::from_le_bytes(*b"HTTP/1.1");
const HTTP_10: u64 = u64::from_le_bytes(*b"HTTP/1.0");

/// A whole, valid request line of the usual shape at `head[start..]`: a
/// method other than `CONNECT` within the method limit, SP, an origin-form
/// target within the target limit, SP, `HTTP/1.1` or `HTTP/1.0`, CRLF, all
/// within `head`. `None` for any other line (or one not complete yet),
/// which the general scan and [`request_line`] then judge: the lines this
/// accepts are lines `request_line` accepts, with the same result.
///
/// [`request_line`]: super::line::request_line
#[inline]
pub(super) fn whole_request_line<'b>(
    head: &'b [u8],
    start: usize,
    limits: &Limits,
) -> Option<WholeRequestLine<'b>> {
    let method = method_at(head, start);
    let method_end = start + method.len();
    if method.is_empty()
        || method.len() > limits.max_method_len
        || head.get(method_end) != Some(&b' ')
        || method == "CONNECT"
    {
        return None;
    }
    let target_start = method_end + 1;
    if head.get(target_start) != Some(&b'/') {
        return None;
    }
    let target = path_query(head, target_start);
    let target_end = target_start + target.len();
    if target.len() > limits.max_target_len || head.get(target_end) != Some(&b' ') {
        return None;
    }
    let at = target_end + 1;
    let word = u64::from_le_bytes(head.get(at..at + 8)?.try_into().ok()?);
    let version = if word == HTTP_11 {
        Version::Http11
    } else if word == HTTP_10 {
        Version::Http10
    } else {
        return None;
    };
    if head.get(at + 8..at + 10) != Some(b"\r\n") {
        return None;
    }
    Some(WholeRequestLine {
        line: RequestLine {
            version,
            form: TargetForm::Origin,
            method_len: method.len(),
            target_len: target.len(),
        },
        method,
        target,
        cr: at + 8,
    })
}

/// A whole, valid field line at `head[start..]`: a token, a colon, a field
/// value and CRLF, all within `head`. Returns the field (its value without
/// surrounding whitespace) and the offset of the CR; `None` for a line
/// that is not complete or not of that shape, which [`field_line`] then
/// judges once its end has arrived (the lines this accepts are exactly
/// those `field_line` accepts).
///
/// [`field_line`]: super::line::field_line
#[inline]
pub(super) fn whole_field_line(head: &[u8], start: usize) -> Option<(Field<'_>, usize)> {
    let name = tchars(head, start);
    let colon = start + name.len();
    if name.is_empty() || head.get(colon) != Some(&b':') {
        return None;
    }
    let mut from = colon + 1;
    while let Some(b' ' | b'\t') = head.get(from) {
        from += 1;
    }
    let cr = value_end(head, from)?;
    let mut to = cr;
    while to > from && matches!(head.get(to - 1), Some(b' ' | b'\t')) {
        to -= 1;
    }
    let value = head.get(from..to)?;
    Some((Field { name, value }, cr))
}

/// The offset of the CR ending a field value that starts at `head[from]`:
/// every byte up to it is a field-value byte (HTAB, SP, VCHAR, obs-text)
/// and it is followed by LF within `head`. `None` otherwise.
#[inline]
fn value_end(head: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    loop {
        let c = at + find_control(head.get(at..)?)?;
        match head.get(c) {
            Some(b'\t') => at = c + 1,
            Some(b'\r') => return (head.get(c + 1) == Some(&b'\n')).then_some(c),
            _ => return None,
        }
    }
}

/// The longest run of tchars at `head[from..]`, as text.
#[inline]
fn tchars(head: &[u8], from: usize) -> &str {
    let rest = head.get(from..).unwrap_or_default();
    let run = rest.get(..run_of(rest, &TCHAR)).unwrap_or_default();
    // SAFETY: every byte of `run` is a tchar, and every tchar is ASCII
    // (`h1::TCHAR` holds no byte above 0x7e; the test
    // `token_and_uri_tables_are_ascii` checks it), so `run` is UTF-8.
    unsafe { core::str::from_utf8_unchecked(run) }
}

/// The longest run of tchars at `head[from..]`, as text, as [`tchars`]
/// finds it, with the run of the usual methods found at once.
#[inline]
fn method_at(head: &[u8], from: usize) -> &str {
    let rest = head.get(from..).unwrap_or_default();
    let len = match rest.get(..5) {
        Some([b'G', b'E', b'T', b' ', _]) => 3,
        Some(b"POST ") => 4,
        _ => run_of(rest, &TCHAR),
    };
    let run = rest.get(..len).unwrap_or_default();
    // SAFETY: `run` is `GET`, `POST` or a run of tchars, which are ASCII
    // (the test `token_and_uri_tables_are_ascii` checks it), so it is
    // UTF-8.
    unsafe { core::str::from_utf8_unchecked(run) }
}

/// The longest run at `head[from..]` of path-and-query characters and
/// `%XX` escapes, as text: an origin-form target, by the rules of
/// `is_path_query`, when it starts with `/` and is followed by SP.
#[inline]
fn path_query(head: &[u8], from: usize) -> &str {
    let rest = head.get(from..).unwrap_or_default();
    let hex = |j: usize| rest.get(j).is_some_and(u8::is_ascii_hexdigit);
    let mut i = 0;
    loop {
        i += run_of(rest.get(i..).unwrap_or_default(), &PATH_QUERY);
        if rest.get(i) == Some(&b'%') && hex(i + 1) && hex(i + 2) {
            i += 3;
        } else {
            break;
        }
    }
    let run = rest.get(..i).unwrap_or_default();
    // SAFETY: every byte of `run` is either in `PATH_QUERY`, which holds
    // only ASCII (the test `token_and_uri_tables_are_ascii` checks it), or
    // part of an escape: `%` and two ASCII hex digits. So `run` is UTF-8.
    unsafe { core::str::from_utf8_unchecked(run) }
}

/// The length of the longest prefix of `s` whose bytes are all in `class`,
/// looking at the bytes four at a time (one bounds check for four).
#[inline(always)]
fn run_of(s: &[u8], class: &[bool; 256]) -> usize {
    let is = |b: u8| class[usize::from(b)];
    let mut i = 0;
    while let Some(&[a, b, c, d]) = s.get(i..i + 4) {
        if !is(a) {
            return i;
        }
        if !is(b) {
            return i + 1;
        }
        if !is(c) {
            return i + 2;
        }
        if !is(d) {
            return i + 3;
        }
        i += 4;
    }
    while let Some(&b) = s.get(i) {
        if !is(b) {
            break;
        }
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h1::syntax::is_tchar_byte;

    /// The byte classes whose runs are taken as text without a UTF-8 check
    /// hold only ASCII.
    #[test]
    fn token_and_uri_tables_are_ascii() {
        for b in 0x80..=0xffu8 {
            assert!(!is_tchar_byte(b), "{b:#04x}");
            assert!(!PATH_QUERY[usize::from(b)], "{b:#04x}");
        }
        assert!(!b"%0123456789abcdefABCDEF".iter().any(|b| !b.is_ascii()));
        let bytes: [u8; 256] = core::array::from_fn(|i| i as u8);
        for from in 0..bytes.len() {
            assert!(tchars(&bytes, from).is_ascii());
            assert!(method_at(&bytes, from).is_ascii());
            assert!(path_query(&bytes, from).is_ascii());
        }
    }

    /// The methods found at once are the runs of tchars a scan finds.
    #[test]
    fn method_fast_path_matches_the_tchar_run() {
        for line in [
            &b"GET / "[..],
            b"GET\t/",
            b"GETX /",
            b"GET",
            b"GET ",
            b"POST /",
            b"POST",
            b"POSTS /",
            b"POS /",
            b"get /",
        ] {
            assert_eq!(method_at(line, 0), tchars(line, 0), "{line:?}");
        }
    }

    /// The word test for control bytes finds the first of them, as a byte
    /// scan does, wherever it is and whatever follows it.
    #[test]
    fn find_control_matches_a_byte_scan() {
        let naive = |s: &[u8]| s.iter().position(|&b| b < 0x20 || b == 0x7f);
        for bad in 0..=255u8 {
            for at in 0..24 {
                let mut buf = [b'a'; 24];
                buf[at] = bad;
                if at + 1 < buf.len() {
                    buf[at + 1] = 0x80;
                }
                for from in 0..buf.len() {
                    assert_eq!(find_control(&buf[from..]), naive(&buf[from..]), "{bad}");
                }
            }
        }
        let all: [u8; 256] = core::array::from_fn(|i| (255 - i) as u8);
        for from in 0..all.len() {
            assert_eq!(find_control(&all[from..]), naive(&all[from..]));
        }
    }

    /// The four-at-a-time run of a byte class ends where a byte scan ends.
    #[test]
    fn run_of_matches_a_byte_scan() {
        let naive = |s: &[u8]| s.iter().position(|&b| !TCHAR[usize::from(b)]);
        for at in 0..12 {
            for len in at..12 {
                let mut buf = [b'a'; 12];
                buf[at] = b' ';
                let s = &buf[..len];
                assert_eq!(run_of(s, &TCHAR), naive(s).unwrap_or(s.len()));
            }
        }
    }
}
