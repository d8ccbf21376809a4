//! Request-target forms (RFC 9112 §3.2) and the RFC 3986 character
//! classes they are made of, shared with `Host` values.

use crate::h1::syntax::parse_decimal;
use crate::Error;

/// The form of a request-target (RFC 9112 §3.2).
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::{Field, HeadParser, TargetForm};
/// use ringstream_core::Limits;
///
/// let mut parser = HeadParser::new(Limits::DEFAULT);
/// let mut fields = [Field::EMPTY; 8];
/// let head = parser
///     .parse(b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", &mut fields)?
///     .expect("complete head");
/// assert_eq!(head.target_form, TargetForm::Asterisk);
/// # Ok::<(), ringstream_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TargetForm {
    /// `/path?query`: the usual form, for any method but `CONNECT`.
    Origin,
    /// `http://host[:port]/path?query` or the same with `https`.
    Absolute,
    /// `host:port`, only with `CONNECT`.
    Authority,
    /// `*`, only with `OPTIONS`.
    Asterisk,
}

/// Decides the form of `target` and whether `method` may use it
/// (RFC 9112 §3.2).
pub(super) fn target_form(method: &[u8], target: &[u8]) -> Result<TargetForm, Error> {
    let connect = method == b"CONNECT";
    let form = if target == b"*" {
        if method != b"OPTIONS" {
            return Err(Error::InvalidTarget);
        }
        TargetForm::Asterisk
    } else if target.first() == Some(&b'/') {
        if !is_path_query(target) {
            return Err(Error::InvalidTarget);
        }
        TargetForm::Origin
    } else if let Some(rest) = strip_scheme(target) {
        let end = rest
            .iter()
            .position(|&b| b == b'/' || b == b'?')
            .unwrap_or(rest.len());
        let authority = rest.get(..end).unwrap_or_default();
        let path = rest.get(end..).unwrap_or_default();
        if !is_host_port(authority, false) || !is_path_query(path) {
            return Err(Error::InvalidTarget);
        }
        TargetForm::Absolute
    } else if connect && is_host_port(target, true) {
        return Ok(TargetForm::Authority);
    } else {
        return Err(Error::InvalidTarget);
    };
    if connect {
        return Err(Error::InvalidTarget);
    }
    Ok(form)
}

/// The part of an absolute-form target after `http://` or `https://`
/// (scheme compared case-insensitively), if it has one of those schemes.
fn strip_scheme(target: &[u8]) -> Option<&[u8]> {
    for scheme in [&b"http://"[..], &b"https://"[..]] {
        if let Some(head) = target.get(..scheme.len()) {
            if head.eq_ignore_ascii_case(scheme) {
                return target.get(scheme.len()..);
            }
        }
    }
    None
}

/// Whether `v` is `uri-host [ ":" port ]` (RFC 9110 §7.2, RFC 3986 §3.2.2):
/// an IP-literal (`[` hex digits, `:` and `.` `]`) or a reg-name (unreserved,
/// sub-delims, `%XX`), then an optional port of at most 65535. The host must
/// not be empty; with `port_required` the port must be present and non-empty.
pub(super) fn is_host_port(v: &[u8], port_required: bool) -> bool {
    let (host_ok, port) = if v.first() == Some(&b'[') {
        let Some(close) = v.iter().position(|&b| b == b']') else {
            return false;
        };
        let inner = v.get(1..close).unwrap_or_default();
        let ok = !inner.is_empty()
            && inner
                .iter()
                .all(|&b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
        match v.get(close + 1..).unwrap_or_default() {
            [] => (ok, None),
            [b':', port @ ..] => (ok, Some(port)),
            _ => return false,
        }
    } else {
        // One pass over the reg-name up to the first `:`, which `REG_NAME`
        // does not hold and no escape holds either.
        let host_len = uri_run(v, &REG_NAME);
        let port = match v.get(host_len) {
            None => None,
            Some(b':') => Some(v.get(host_len + 1..).unwrap_or_default()),
            Some(_) => return false,
        };
        (host_len > 0, port)
    };
    if !host_ok {
        return false;
    }
    match port {
        None => !port_required,
        Some([]) => !port_required,
        Some(p) => p.len() <= 5 && parse_decimal(p).is_some_and(|n| n <= 65535),
    }
}

/// Whether `s` is `*( pchar / "/" / "?" )` (RFC 3986 path and query).
fn is_path_query(s: &[u8]) -> bool {
    is_uri_chars(s, &PATH_QUERY)
}

/// The length of the longest prefix of `s` whose bytes are `allowed` or
/// form `%XX` escapes.
#[inline]
fn uri_run(s: &[u8], allowed: &[bool; 256]) -> usize {
    let hex = |j: usize| s.get(j).is_some_and(u8::is_ascii_hexdigit);
    let mut i = 0;
    while let Some(&b) = s.get(i) {
        if allowed[usize::from(b)] {
            i += 1;
        } else if b == b'%' && hex(i + 1) && hex(i + 2) {
            i += 3;
        } else {
            break;
        }
    }
    i
}

/// Whether every byte of `s` is `allowed` or starts a `%XX` escape.
fn is_uri_chars(s: &[u8], allowed: &[bool; 256]) -> bool {
    uri_run(s, allowed) == s.len()
}

/// The bytes that stand for themselves in a path and query: `pchar`
/// (unreserved, sub-delims, `:` and `@`), `/` and `?` (RFC 3986 §3.3,
/// §3.4), by byte value.
pub(super) static PATH_QUERY: [bool; 256] = uri_table(b":@/?");

/// The bytes that stand for themselves in a `reg-name`: unreserved and
/// sub-delims (RFC 3986 §3.2.2), by byte value.
static REG_NAME: [bool; 256] = uri_table(b"");

/// Unreserved, sub-delims and `extra`, by byte value.
const fn uri_table(extra: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = is_unreserved(b) || is_sub_delim(b);
        i += 1;
    }
    let mut k = 0;
    while k < extra.len() {
        t[extra[k] as usize] = true;
        k += 1;
    }
    t
}

/// RFC 3986 unreserved.
const fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// RFC 3986 sub-delims.
const fn is_sub_delim(b: u8) -> bool {
    matches!(
        b,
        b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_tables_hold_rfc_3986_classes() {
        for b in 0..=255u8 {
            let base = is_unreserved(b) || is_sub_delim(b);
            assert_eq!(REG_NAME[usize::from(b)], base, "{b:#04x}");
            let path = base || matches!(b, b':' | b'@' | b'/' | b'?');
            assert_eq!(PATH_QUERY[usize::from(b)], path, "{b:#04x}");
        }
    }

    /// The one-pass host check answers as splitting at the first `:` and
    /// checking the host whole does.
    #[test]
    fn host_port_matches_a_split_at_the_first_colon() {
        fn split_first(v: &[u8], port_required: bool) -> bool {
            let (host, port) = match v.iter().position(|&b| b == b':') {
                Some(c) => (&v[..c], Some(&v[c + 1..])),
                None => (v, None),
            };
            if host.is_empty() || !is_uri_chars(host, &REG_NAME) {
                return false;
            }
            match port {
                None | Some([]) => !port_required,
                Some(p) => p.len() <= 5 && parse_decimal(p).is_some_and(|n| n <= 65535),
            }
        }
        let pieces: [&[u8]; 14] = [
            b"a",
            b"Z9",
            b":",
            b"%",
            b"%4",
            b"%4f",
            b"%g0",
            b"80",
            b"65535",
            b"99999",
            b"-._~",
            b"!$&'()*+,;=",
            b" ",
            b"\xff",
        ];
        let check = |v: &[u8]| {
            for required in [false, true] {
                assert_eq!(
                    is_host_port(v, required),
                    split_first(v, required),
                    "{v:?} {required}"
                );
            }
        };
        let mut buf = [0u8; 36];
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    let mut len = 0;
                    for piece in [a, b, c] {
                        buf[len..len + piece.len()].copy_from_slice(piece);
                        len += piece.len();
                    }
                    check(&buf[..len]);
                }
            }
        }
        for b in 0..=255u8 {
            for v in [&[b][..], &[b'a', b], &[b'a', b, b'1'], &[b'a', b':', b]] {
                check(v);
            }
        }
    }

    #[test]
    fn host_port_forms() {
        assert!(is_host_port(b"example.com", false));
        assert!(is_host_port(b"example.com:8080", true));
        assert!(is_host_port(b"[::1]:80", true));
        assert!(is_host_port(b"[::1]", false));
        assert!(!is_host_port(b"[::1]", true));
        assert!(!is_host_port(b"example.com:65536", false));
        assert!(!is_host_port(b"a b", false));
        assert!(!is_host_port(b"user@host", false));
        assert!(!is_host_port(b"host/path", false));
        assert!(!is_host_port(b"[]", false));
        assert!(!is_host_port(b":80", false));
    }
}
