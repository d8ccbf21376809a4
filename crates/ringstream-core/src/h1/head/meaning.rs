//! What the fields of a validated head mean (`Host`, `Content-Length`,
//! `Transfer-Encoding`, `Connection`, `Upgrade`, `Expect`), and the list
//! and number syntax they share.

use super::field::Field;
use super::target::is_host_port;
use crate::h1::framing::BodyFraming;
use crate::h1::syntax::{is_token, list, parse_decimal, trim_ows};
use crate::h1::version::Version;
use crate::Error;

/// What the fields say about the message.
pub(super) struct Meaning {
    pub(super) framing: BodyFraming,
    pub(super) keep_alive: bool,
    pub(super) expect_continue: bool,
    pub(super) upgrade: bool,
}

/// Interprets `Host`, `Content-Length`, `Transfer-Encoding`, `Connection`
/// and `Expect`, in the order given in the module documentation.
pub(super) fn interpret(fields: &[Field<'_>], version: Version) -> Result<Meaning, Error> {
    let http11 = version == Version::Http11;
    let mut hosts = 0usize;
    let mut content_length: Option<u64> = None;
    let mut transfer_encoding = false;
    let mut close = false;
    let mut keep_alive_token = false;
    let mut expect_continue = false;
    let mut upgrade_token = false;
    let mut upgrade_field = false;
    for f in fields {
        // The names of interest have different lengths: the length picks
        // the one name a field may be.
        let name = f.name.as_bytes();
        let is = |wanted: &[u8]| is_name(name, wanted);
        match name.len() {
            4 if is(b"host") => {
                hosts += 1;
                if hosts > 1 {
                    return Err(Error::DuplicateHost);
                }
                // An empty value says the target has no authority (RFC 9112
                // §3.2), but every target form needs one: HTTP/1.1 must
                // carry it in `Host`. HTTP/1.0 may omit `Host`, and an
                // empty one means the same there.
                let valid = if f.value.is_empty() {
                    !http11
                } else {
                    is_host_port(f.value, false)
                };
                if !valid {
                    return Err(Error::InvalidHost);
                }
            }
            14 if is(b"content-length") => {
                for element in list(f.value) {
                    let n = parse_decimal(element).ok_or(Error::InvalidContentLength)?;
                    match content_length {
                        Some(prev) if prev != n => return Err(Error::InvalidContentLength),
                        _ => content_length = Some(n),
                    }
                }
                if content_length.is_none() {
                    return Err(Error::InvalidContentLength);
                }
            }
            17 if is(b"transfer-encoding") => transfer_encoding = true,
            10 if is(b"connection") => {
                for token in list(f.value) {
                    if token.eq_ignore_ascii_case(b"close") {
                        close = true;
                    } else if token.eq_ignore_ascii_case(b"keep-alive") {
                        keep_alive_token = true;
                    } else if token.eq_ignore_ascii_case(b"upgrade") {
                        upgrade_token = true;
                    }
                }
            }
            7 if is(b"upgrade") => upgrade_field = true,
            6 if is(b"expect") => {
                expect_continue |=
                    http11 && list(f.value).any(|e| e.eq_ignore_ascii_case(b"100-continue"));
            }
            _ => {}
        }
    }
    if http11 && hosts == 0 {
        return Err(Error::MissingHost);
    }
    let framing = if transfer_encoding {
        if !http11 {
            return Err(Error::TransferEncodingOnHttp10);
        }
        if content_length.is_some() {
            return Err(Error::ContentLengthWithTransferEncoding);
        }
        transfer_codings(fields)?;
        BodyFraming::Chunked
    } else {
        match content_length {
            Some(n) => BodyFraming::Length(n),
            None => BodyFraming::None,
        }
    };
    let keep_alive = if http11 {
        !close
    } else {
        keep_alive_token && !close
    };
    Ok(Meaning {
        framing,
        keep_alive,
        expect_continue,
        upgrade: http11 && upgrade_token && upgrade_field,
    })
}

/// Whether the field name `name`, a token, is `lower` (lowercase letters
/// and `-`, at least four bytes) in any case, comparing words: setting bit
/// 0x20 of each byte turns an uppercase letter into its lowercase and
/// leaves `-` alone, and turns no other tchar into a lowercase letter or
/// `-` (only CR, which is no tchar, would become `-`).
#[inline]
fn is_name(name: &[u8], lower: &[u8]) -> bool {
    fn word<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
        s.get(at..at + N)
            .and_then(|w| w.try_into().ok())
            .unwrap_or([0; N])
    }
    let n = lower.len();
    if name.len() != n || n < 4 {
        return false;
    }
    if n >= 8 {
        let same = |at: usize| {
            u64::from_le_bytes(word(name, at)) | 0x2020_2020_2020_2020
                == u64::from_le_bytes(word(lower, at))
        };
        // Whole words, then the last eight bytes (overlapping the words
        // before them when `n` is not a multiple of eight).
        let mut at = 0;
        while at + 8 < n {
            if !same(at) {
                return false;
            }
            at += 8;
        }
        same(n - 8)
    } else {
        let same = |at: usize| {
            u32::from_le_bytes(word(name, at)) | 0x2020_2020 == u32::from_le_bytes(word(lower, at))
        };
        same(0) && same(n - 4)
    }
}

/// Checks the transfer codings of all `Transfer-Encoding` fields, taken
/// together as one list (RFC 9112 §6.1, §6.3).
///
/// A list whose final coding is not a bare `chunked`, which names `chunked`
/// twice, or which holds an empty or malformed element leaves the body
/// length undeterminable: [`Error::InvalidTransferEncoding`] (400). A
/// well-framed list that also applies another coding (`gzip, chunked`) is
/// [`Error::UnknownTransferCoding`] (501): ringstream implements no
/// transfer coding but `chunked`.
fn transfer_codings(fields: &[Field<'_>]) -> Result<(), Error> {
    let mut chunked = 0usize;
    let mut last_chunked = false;
    let mut other = false;
    let mut any = false;
    for f in fields {
        if !f.name.eq_ignore_ascii_case("transfer-encoding") {
            continue;
        }
        for element in list(f.value) {
            any = true;
            let (coding, params) = match element.iter().position(|&b| b == b';') {
                Some(semi) => (trim_ows(element.get(..semi).unwrap_or_default()), true),
                None => (element, false),
            };
            if !is_token(coding) {
                return Err(Error::InvalidTransferEncoding);
            }
            last_chunked = coding.eq_ignore_ascii_case(b"chunked") && !params;
            if coding.eq_ignore_ascii_case(b"chunked") {
                chunked += 1;
            } else {
                other = true;
            }
        }
    }
    if !any || chunked != 1 || !last_chunked {
        return Err(Error::InvalidTransferEncoding);
    }
    if other {
        return Err(Error::UnknownTransferCoding);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h1::syntax::is_tchar_byte;

    /// The word comparison of field names agrees with a byte-by-byte
    /// case-insensitive one for every token that differs from a name of
    /// interest in one byte, at every place.
    #[test]
    fn name_comparison_matches_eq_ignore_ascii_case() {
        for lower in [
            &b"host"[..],
            b"expect",
            b"upgrade",
            b"connection",
            b"content-length",
            b"transfer-encoding",
        ] {
            let mut name = [0u8; 17];
            let name = &mut name[..lower.len()];
            for at in 0..lower.len() {
                for b in (0..=255u8).filter(|&b| is_tchar_byte(b)) {
                    name.copy_from_slice(lower);
                    name[at] = b;
                    assert_eq!(
                        is_name(name, lower),
                        name.eq_ignore_ascii_case(lower),
                        "{name:?}"
                    );
                    name.make_ascii_uppercase();
                    assert_eq!(
                        is_name(name, lower),
                        name.eq_ignore_ascii_case(lower),
                        "{name:?}"
                    );
                }
            }
            assert!(!is_name(&lower[1..], lower));
        }
    }

    #[test]
    fn decimal_parsing_is_checked() {
        assert_eq!(parse_decimal(b"0"), Some(0));
        assert_eq!(parse_decimal(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_decimal(b"18446744073709551616"), None);
        assert_eq!(parse_decimal(b""), None);
        assert_eq!(parse_decimal(b"+5"), None);
    }
}
