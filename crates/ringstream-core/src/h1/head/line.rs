//! Lines of a request head judged by the general rules: where a line
//! ends, a whole request line or field line validated, and the fields of
//! lines validated by earlier calls split again.

use super::field::Field;
use super::target::target_form;
use super::target::TargetForm;
use crate::h1::syntax::{is_field_value, is_tchar_byte, is_token, trim_end_ows, trim_ows};
use crate::h1::version::Version;
use crate::{Error, Limits};

/// Offset of the first CR or LF in `s`, looking at eight bytes at a time
/// (the last few one by one).
pub(super) fn find_line_end(s: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const CR: u64 = LO * b'\r' as u64;
    const LF: u64 = LO * b'\n' as u64;
    let mut off = 0;
    for chunk in s.chunks_exact(8) {
        let Ok(word) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let w = u64::from_le_bytes(word);
        let (cr, lf) = (w ^ CR, w ^ LF);
        // The high bit of every byte of `cr` or `lf` that is zero (a byte
        // above a zero one may be flagged too, never one below it).
        let found = ((cr.wrapping_sub(LO) & !cr) | (lf.wrapping_sub(LO) & !lf)) & HI;
        if found != 0 {
            // The lowest flag is the first CR or LF (little-endian: byte 0
            // is the low one).
            return Some(off + (found.trailing_zeros() / 8) as usize);
        }
        off += 8;
    }
    let tail = s.get(off..)?;
    tail.iter()
        .position(|&b| b == b'\r' || b == b'\n')
        .map(|p| off + p)
}

/// A validated request line.
pub(super) struct RequestLine {
    pub(super) version: Version,
    pub(super) form: TargetForm,
    pub(super) method_len: usize,
    pub(super) target_len: usize,
}

/// Checks bytes of a method, in order, the first being byte `at` of the
/// method (RFC 9110 §9.1, §5.6.2; RFC 9112 §3): each must be a tchar
/// ([`Error::InvalidMethod`]), and a tchar past `max_len` bytes is
/// [`Error::MethodTooLong`]. So a byte that cannot start or continue a
/// request line, or a method longer than any the server implements, is
/// refused on arrival rather than when its line ends.
#[inline]
pub(super) fn method_bytes(bytes: &[u8], at: usize, max_len: usize) -> Result<(), Error> {
    let room = max_len.saturating_sub(at).min(bytes.len());
    let (within, over) = bytes.split_at(room);
    if !within.iter().all(|&b| is_tchar_byte(b)) {
        return Err(Error::InvalidMethod);
    }
    match over.first() {
        None => Ok(()),
        Some(&b) if is_tchar_byte(b) => Err(Error::MethodTooLong),
        Some(_) => Err(Error::InvalidMethod),
    }
}

/// Validates a whole request line (without its CRLF): `method SP target SP
/// version`, checked in that order. The method bytes are checked before
/// the SP ending the method is looked for, as `track_request_line` does
/// while the line arrives.
pub(super) fn request_line(line: &[u8], limits: &Limits) -> Result<RequestLine, Error> {
    let sp1 = line.iter().position(|&b| b == b' ');
    let method = line.get(..sp1.unwrap_or(line.len())).unwrap_or_default();
    method_bytes(method, 0, limits.max_method_len)?;
    let sp1 = sp1.ok_or(Error::MalformedHead)?;
    if method.is_empty() {
        return Err(Error::InvalidMethod);
    }
    let rest = line.get(sp1 + 1..).unwrap_or_default();
    let sp2 = rest.iter().position(|&b| b == b' ');
    let target = rest.get(..sp2.unwrap_or(rest.len())).unwrap_or_default();
    if target.len() > limits.max_target_len {
        return Err(Error::TargetTooLong);
    }
    let sp2 = sp2.ok_or(Error::MalformedHead)?;
    let version = rest.get(sp2 + 1..).unwrap_or_default();
    let version = match version {
        b"HTTP/1.1" => Version::Http11,
        b"HTTP/1.0" => Version::Http10,
        [b'H', b'T', b'T', b'P', b'/', major, b'.', minor]
            if major.is_ascii_digit() && minor.is_ascii_digit() =>
        {
            return Err(Error::UnsupportedVersion)
        }
        _ => return Err(Error::MalformedHead),
    };
    if target.is_empty() {
        return Err(Error::MalformedHead);
    }
    let form = target_form(method, target)?;
    Ok(RequestLine {
        version,
        form,
        method_len: method.len(),
        target_len: target.len(),
    })
}

/// Validates one field line (without its CRLF). `first` is the line right
/// after the request line. Returns the offset of the colon.
pub(super) fn field_line(line: &[u8], first: bool) -> Result<usize, Error> {
    if let Some(b' ' | b'\t') = line.first() {
        return Err(if first {
            Error::WhitespaceBeforeFirstField
        } else {
            Error::ObsFold
        });
    }
    let colon = line
        .iter()
        .position(|&b| b == b':')
        .ok_or(Error::MalformedHead)?;
    let name = line.get(..colon).unwrap_or_default();
    let trimmed = trim_end_ows(name);
    if trimmed.len() < name.len() && is_token(trimmed) {
        return Err(Error::WhitespaceBeforeColon);
    }
    if !is_token(name) {
        return Err(Error::InvalidFieldName);
    }
    let value = line.get(colon + 1..).unwrap_or_default();
    if !is_field_value(value) {
        return Err(Error::InvalidFieldValue);
    }
    Ok(colon)
}

/// Writes the fields of the first `count` field lines of `head`, which
/// start at `fields_start`, to `fields`.
#[cold]
#[inline(never)]
pub(super) fn split_again<'b>(
    head: &'b [u8],
    fields_start: usize,
    count: usize,
    fields: &mut [Field<'b>],
) -> Result<(), Error> {
    let lines = ValidatedLines {
        rest: head.get(fields_start..).unwrap_or_default(),
        at: fields_start,
    };
    for (index, (at, line)) in lines.take(count).enumerate() {
        let slot = fields.get_mut(index).ok_or(Error::TooManyFields)?;
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or(Error::MalformedHead)?;
        *slot = Field {
            name: ascii_str(head.get(at..at + colon))?,
            value: trim_ows(line.get(colon + 1..).unwrap_or_default()),
        };
    }
    Ok(())
}

/// The lines of validated head bytes, without their CRLF, each with its
/// offset in the head.
struct ValidatedLines<'b> {
    rest: &'b [u8],
    /// Where `rest` starts in the head.
    at: usize,
}

impl<'b> Iterator for ValidatedLines<'b> {
    type Item = (usize, &'b [u8]);

    fn next(&mut self) -> Option<(usize, &'b [u8])> {
        let end = find_line_end(self.rest)?;
        let line = self.rest.get(..end)?;
        let at = self.at;
        self.rest = self.rest.get(end + 2..).unwrap_or_default();
        self.at += end + 2;
        Some((at, line))
    }
}

/// A piece of a validated head that is ASCII by validation (a method, a
/// target, a field name), as text, checked again: the piece may have been
/// validated by an earlier call.
#[inline]
pub(super) fn ascii_str(piece: Option<&[u8]>) -> Result<&str, Error> {
    piece
        .and_then(|bytes| core::str::from_utf8(bytes).ok())
        .ok_or(Error::MalformedHead)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_line_end_matches_a_byte_scan() {
        let naive = |s: &[u8]| s.iter().position(|&b| b == b'\r' || b == b'\n');
        let mut buf = [b'a'; 40];
        assert_eq!(find_line_end(&buf), None);
        for at in 0..buf.len() {
            for end in [b'\r', b'\n'] {
                buf = [b'a'; 40];
                buf[at] = end;
                // Bytes that trip the word test without being CR or LF.
                if at + 1 < buf.len() {
                    buf[at + 1] = 0x0c;
                }
                for from in 0..buf.len() {
                    assert_eq!(find_line_end(&buf[from..]), naive(&buf[from..]));
                }
            }
        }
        let tricky = [0x0eu8, 0x0c, 0x8d, 0x8a, 0x0b, 0x0d, 0x00, 0xff, 0x0a];
        for from in 0..tricky.len() {
            assert_eq!(find_line_end(&tricky[from..]), naive(&tricky[from..]));
        }
    }
}
