//! Conditional and range requests and content negotiation, on header bytes:
//! entity-tag lists (RFC 9110 §8.8.3, §13.1), byte ranges (§14) and
//! `Accept-Encoding` (§12.5.3); and the date conditions (§13.1.3–§13.1.5),
//! on dates the caller has parsed into seconds. A static-file responder
//! asks these what a request's validators and preferences mean for one
//! representation.

use core::ops::Deref;

use super::syntax::{list, parse_decimal};

/// One entity-tag from a list: its opaque part (quotes included) and
/// whether it carried the `W/` weakness prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EntityTag<'a> {
    weak: bool,
    opaque: &'a [u8],
}

/// Splits an `If-None-Match`/`If-Match` value (`*` or a comma-separated list
/// of entity-tags) and reports whether `ours` matches any member.
///
/// `ours` is a full strong tag including quotes (`"abc"`). With `weak`
/// comparison (§8.8.3.2) the `W/` prefixes are ignored; with strong
/// comparison a weak member never matches. A malformed list matches
/// nothing.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::negotiate::etag_list_matches;
///
/// let ours = "\"v2\"";
/// assert!(etag_list_matches(b"\"v1\", W/\"v2\"", ours, true));
/// assert!(!etag_list_matches(b"W/\"v2\"", ours, false));
/// assert!(etag_list_matches(b"*", ours, false));
/// ```
pub fn etag_list_matches(value: &[u8], ours: &str, weak: bool) -> bool {
    let value = value.trim_ascii();
    if value == b"*" {
        return true;
    }
    let mut rest = value;
    loop {
        rest = skip_list_separators(rest);
        if rest.is_empty() {
            return false;
        }
        let Some((tag, after)) = entity_tag(rest) else {
            return false;
        };
        if tag.opaque == ours.as_bytes() && (weak || !tag.weak) {
            return true;
        }
        rest = after.trim_ascii_start();
        match rest.first() {
            None => return false,
            Some(b',') => {}
            Some(_) => return false,
        }
    }
}

/// Whether an `If-Range` value that is an entity-tag strongly matches
/// `ours` (RFC 9110 §13.1.5: a weak tag never matches).
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::negotiate::if_range_tag_matches;
///
/// assert!(if_range_tag_matches(b"\"v2\"", "\"v2\""));
/// assert!(!if_range_tag_matches(b"W/\"v2\"", "\"v2\""));
/// ```
pub fn if_range_tag_matches(value: &[u8], ours: &str) -> bool {
    match entity_tag(value.trim_ascii()) {
        Some((tag, rest)) => rest.is_empty() && !tag.weak && tag.opaque == ours.as_bytes(),
        None => false,
    }
}

/// RFC 9110 §13.1.3: whether a representation last modified at
/// `last_modified` has changed since the `If-Modified-Since` date `since`;
/// when it has not, a `GET` or `HEAD` is answered with `304`.
///
/// Both are seconds since the Unix epoch; the caller parses the field (any
/// of the three HTTP-date forms, and ignores the field when that fails, as
/// §13.1.3 asks). A date at or after the modification time — one in the
/// future included — means "not modified". A representation without a
/// modification time counts as modified.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::negotiate::modified_since;
///
/// let last_modified = Some(784_111_777);
/// assert!(modified_since(last_modified, 784_111_776));
/// assert!(!modified_since(last_modified, 784_111_777));
/// assert!(modified_since(None, 784_111_777));
/// ```
pub fn modified_since(last_modified: Option<u64>, since: u64) -> bool {
    last_modified.is_none_or(|modified| modified > since)
}

/// RFC 9110 §13.1.4: whether a representation last modified at
/// `last_modified` is unchanged since the `If-Unmodified-Since` date
/// `since`; when it is not, the request fails with `412`.
///
/// Both are seconds since the Unix epoch, parsed by the caller. A
/// representation without a modification time cannot be shown unchanged,
/// so the condition fails.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::negotiate::unmodified_since;
///
/// let last_modified = Some(784_111_777);
/// assert!(unmodified_since(last_modified, 784_111_777));
/// assert!(!unmodified_since(last_modified, 784_111_776));
/// assert!(!unmodified_since(None, 784_111_777));
/// ```
pub fn unmodified_since(last_modified: Option<u64>, since: u64) -> bool {
    last_modified.is_some_and(|modified| modified <= since)
}

/// RFC 9110 §13.1.5: whether an `If-Range` value that is an HTTP-date
/// (`date`, parsed by the caller) lets the range apply to a representation
/// last modified at `last_modified`: only an exact match does.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::negotiate::if_range_date_matches;
///
/// assert!(if_range_date_matches(Some(784_111_777), 784_111_777));
/// assert!(!if_range_date_matches(Some(784_111_777), 784_111_778));
/// assert!(!if_range_date_matches(None, 784_111_777));
/// ```
pub fn if_range_date_matches(last_modified: Option<u64>, date: u64) -> bool {
    last_modified == Some(date)
}

fn skip_list_separators(mut s: &[u8]) -> &[u8] {
    while let Some((&b, rest)) = s.split_first() {
        if b == b',' || b == b' ' || b == b'\t' {
            s = rest;
        } else {
            break;
        }
    }
    s
}

/// `entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE`
fn entity_tag(s: &[u8]) -> Option<(EntityTag<'_>, &[u8])> {
    let (weak, s) = match s.strip_prefix(b"W/") {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    if s.first() != Some(&b'"') {
        return None;
    }
    let body = s.get(1..)?;
    let close = body.iter().position(|&b| b == b'"')?;
    let inner = body.get(..close)?;
    // etagc = %x21 / %x23-7E / obs-text
    if !inner
        .iter()
        .all(|&b| b == 0x21 || (0x23..=0x7e).contains(&b) || b >= 0x80)
    {
        return None;
    }
    let opaque = s.get(..close + 2)?;
    let rest = s.get(close + 2..)?;
    Some((EntityTag { weak, opaque }, rest))
}

/// What a `Range` header asks of a representation of a known length.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::negotiate::{parse_range, RangeRequest};
///
/// assert_eq!(parse_range(b"items=1-2", 10), RangeRequest::Full);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeRequest {
    /// Serve the whole representation with `200`: the header is absent,
    /// malformed, uses another unit, or lists more than one range.
    Full,
    /// Serve the inclusive byte range `start..=end` with `206`.
    Partial {
        /// First byte offset.
        start: u64,
        /// Last byte offset, inclusive.
        end: u64,
    },
    /// No requested byte exists: `416` with `Content-Range: bytes */len`.
    Unsatisfiable,
}

/// Interprets a `Range` value against a representation of `len` bytes
/// (RFC 9110 §14.1.2).
///
/// Only a single `bytes` range is honoured; a header listing several ranges
/// is ignored and the whole representation is served, which §14.2 allows
/// and which spares the server a `multipart/byteranges` body. A malformed
/// header is also ignored (§14.2: "MAY ignore"). `bytes=a-b` past the end is
/// clamped to the last byte; `bytes=-n` selects the last `n` bytes (all of
/// them when `n` exceeds the length); a first position at or past the end,
/// or `bytes=-0`, is unsatisfiable.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::negotiate::{parse_range, RangeRequest};
///
/// assert_eq!(parse_range(b"bytes=0-99", 1000), RangeRequest::Partial { start: 0, end: 99 });
/// assert_eq!(parse_range(b"bytes=-10", 1000), RangeRequest::Partial { start: 990, end: 999 });
/// assert_eq!(parse_range(b"bytes=2000-", 1000), RangeRequest::Unsatisfiable);
/// assert_eq!(parse_range(b"bytes=0-1, 5-6", 1000), RangeRequest::Full);
/// ```
pub fn parse_range(value: &[u8], len: u64) -> RangeRequest {
    let value = value.trim_ascii();
    let Some(eq) = value.iter().position(|&b| b == b'=') else {
        return RangeRequest::Full;
    };
    let (unit, set) = (
        value.get(..eq).unwrap_or_default(),
        value.get(eq + 1..).unwrap_or_default(),
    );
    if !unit.trim_ascii().eq_ignore_ascii_case(b"bytes") {
        return RangeRequest::Full;
    }
    // Empty list elements are allowed by the list syntax; more than one real
    // range means "whole file".
    let mut specs = list(set).filter(|s| !s.is_empty());
    let (Some(spec), None) = (specs.next(), specs.next()) else {
        return RangeRequest::Full;
    };
    let Some(dash) = spec.iter().position(|&b| b == b'-') else {
        return RangeRequest::Full;
    };
    let first = spec.get(..dash).unwrap_or_default();
    let last = spec.get(dash + 1..).unwrap_or_default();
    byte_range(first, last, len)
}

/// One `first-last` range spec, split at its dash, against `len` bytes.
fn byte_range(first: &[u8], last: &[u8], len: u64) -> RangeRequest {
    match (first.is_empty(), last.is_empty()) {
        // "-n": suffix range.
        (true, false) => match parse_decimal(last) {
            Some(0) => RangeRequest::Unsatisfiable,
            Some(_) if len == 0 => RangeRequest::Unsatisfiable,
            Some(n) => RangeRequest::Partial {
                start: len.saturating_sub(n),
                end: len - 1,
            },
            None => RangeRequest::Full,
        },
        // "a-": from a to the end.
        (false, true) => match parse_decimal(first) {
            Some(a) if a >= len => RangeRequest::Unsatisfiable,
            Some(a) => RangeRequest::Partial {
                start: a,
                end: len - 1,
            },
            None => RangeRequest::Full,
        },
        // "a-b"
        (false, false) => match (parse_decimal(first), parse_decimal(last)) {
            (Some(a), Some(b)) if a <= b => {
                if a >= len {
                    RangeRequest::Unsatisfiable
                } else {
                    RangeRequest::Partial {
                        start: a,
                        end: b.min(len - 1),
                    }
                }
            }
            _ => RangeRequest::Full,
        },
        (true, true) => RangeRequest::Full,
    }
}

/// A content coding a precompressed variant of a representation may use.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::negotiate::ContentCoding;
///
/// assert_eq!(ContentCoding::Br.token(), "br");
/// assert_eq!(ContentCoding::Gzip.suffix(), ".gz");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentCoding {
    /// Brotli, `FILE.br`.
    Br,
    /// gzip, `FILE.gz`.
    Gzip,
}

impl ContentCoding {
    /// The `Content-Encoding` token.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::negotiate::ContentCoding;
    ///
    /// assert_eq!(ContentCoding::Gzip.token(), "gzip");
    /// ```
    pub const fn token(self) -> &'static str {
        match self {
            ContentCoding::Br => "br",
            ContentCoding::Gzip => "gzip",
        }
    }

    /// The conventional file-name suffix of a variant precompressed with
    /// this coding.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::negotiate::ContentCoding;
    ///
    /// assert_eq!(ContentCoding::Br.suffix(), ".br");
    /// ```
    pub const fn suffix(self) -> &'static str {
        match self {
            ContentCoding::Br => ".br",
            ContentCoding::Gzip => ".gz",
        }
    }
}

/// The acceptable encodings among `offered`, most preferred first
/// (RFC 9110 §12.5.3), each at most once.
///
/// Each coding's weight is its own `q` (`x-gzip` counts as `gzip`), else the
/// weight of `*`, else 0 — an absent header accepts no content coding here,
/// so a client that says nothing gets the identity file. Weight 0, or a
/// malformed weight, rules a coding out. Higher weight wins; on a tie Brotli
/// comes first, as it is the smaller of the two.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::negotiate::{acceptable_codings, ContentCoding};
///
/// let offered = [ContentCoding::Gzip, ContentCoding::Br];
/// let accept = b"gzip;q=0.8, br";
/// let acceptable = acceptable_codings(Some(accept), &offered);
/// assert_eq!(*acceptable, [ContentCoding::Br, ContentCoding::Gzip]);
/// assert_eq!(acceptable.iter().position(|&c| c == ContentCoding::Gzip), Some(1));
/// assert!(acceptable_codings(None, &offered).is_empty());
/// assert!(acceptable_codings(Some(b"br;q=0"), &[ContentCoding::Br]).is_empty());
/// ```
pub fn acceptable_codings(accept: Option<&[u8]>, offered: &[ContentCoding]) -> AcceptableCodings {
    let mut chosen = AcceptableCodings::NONE;
    let Some(accept) = accept else {
        return chosen;
    };
    let mut star = None;
    let mut br = None;
    let mut gzip = None;
    for item in list(accept) {
        let mut parts = item.split(|&b| b == b';');
        let coding = parts.next().unwrap_or_default().trim_ascii();
        if coding.is_empty() {
            continue;
        }
        let mut weight = Some(1000);
        for param in parts {
            let param = param.trim_ascii();
            if let Some(q) = param
                .strip_prefix(b"q=")
                .or_else(|| param.strip_prefix(b"Q="))
            {
                weight = qvalue(q);
            }
        }
        let weight = weight.unwrap_or(0);
        let slot = if coding == b"*" {
            &mut star
        } else if coding.eq_ignore_ascii_case(b"br") {
            &mut br
        } else if coding.eq_ignore_ascii_case(b"gzip") || coding.eq_ignore_ascii_case(b"x-gzip") {
            &mut gzip
        } else {
            continue;
        };
        // Repeated codings: keep the most permissive weight.
        *slot = Some(slot.map_or(weight, |w: u16| w.max(weight)));
    }
    let weight = |e: ContentCoding| {
        let own = match e {
            ContentCoding::Br => br,
            ContentCoding::Gzip => gzip,
        };
        own.or(star).unwrap_or(0)
    };
    for &e in offered {
        if weight(e) > 0 && !chosen.contains(&e) {
            chosen.push(e);
        }
    }
    // Higher weight first; on a tie, the better rank.
    if let [a, b] = chosen.as_mut_slice() {
        let key = |e: ContentCoding| (core::cmp::Reverse(weight(e)), rank(e));
        if key(*b) < key(*a) {
            core::mem::swap(a, b);
        }
    }
    chosen
}

fn rank(e: ContentCoding) -> u8 {
    match e {
        ContentCoding::Br => 0,
        ContentCoding::Gzip => 1,
    }
}

/// The content codings a request accepts, most preferred first, from
/// [`acceptable_codings`]: a slice (through `Deref`) of at most one of each
/// [`ContentCoding`], held inline.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::negotiate::{acceptable_codings, ContentCoding};
///
/// let acceptable = acceptable_codings(Some(b"gzip"), &[ContentCoding::Br, ContentCoding::Gzip]);
/// assert_eq!(acceptable.len(), 1);
/// assert_eq!(acceptable[0], ContentCoding::Gzip);
/// for coding in acceptable.iter() {
///     assert_eq!(coding.suffix(), ".gz");
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcceptableCodings {
    codings: [ContentCoding; 2],
    len: u8,
}

impl AcceptableCodings {
    /// No coding is acceptable.
    const NONE: AcceptableCodings = AcceptableCodings {
        codings: [ContentCoding::Br; 2],
        len: 0,
    };

    /// The codings, most preferred first.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::negotiate::{acceptable_codings, ContentCoding};
    ///
    /// let offered = [ContentCoding::Br, ContentCoding::Gzip];
    /// assert_eq!(acceptable_codings(Some(b"br"), &offered).as_slice(), [ContentCoding::Br]);
    /// assert!(acceptable_codings(None, &offered).as_slice().is_empty());
    /// ```
    #[inline]
    pub fn as_slice(&self) -> &[ContentCoding] {
        self.codings.get(..usize::from(self.len)).unwrap_or(&[])
    }

    fn as_mut_slice(&mut self) -> &mut [ContentCoding] {
        self.codings
            .get_mut(..usize::from(self.len))
            .unwrap_or(&mut [])
    }

    /// Appends `e`; the caller adds each coding once, so there is room.
    fn push(&mut self, e: ContentCoding) {
        if let Some(slot) = self.codings.get_mut(usize::from(self.len)) {
            *slot = e;
            self.len += 1;
        }
    }
}

impl Deref for AcceptableCodings {
    type Target = [ContentCoding];

    #[inline]
    fn deref(&self) -> &[ContentCoding] {
        self.as_slice()
    }
}

impl AsRef<[ContentCoding]> for AcceptableCodings {
    #[inline]
    fn as_ref(&self) -> &[ContentCoding] {
        self.as_slice()
    }
}

/// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`, in
/// thousandths.
fn qvalue(q: &[u8]) -> Option<u16> {
    let (int, frac) = match q.iter().position(|&b| b == b'.') {
        Some(dot) => (q.get(..dot)?, q.get(dot + 1..)?),
        None => (q, &b""[..]),
    };
    if frac.len() > 3 || !frac.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut thousandths = 0u16;
    for i in 0..3 {
        let d = frac.get(i).map_or(0, |b| u16::from(b - b'0'));
        thousandths = thousandths * 10 + d;
    }
    match int {
        b"0" => Some(thousandths),
        b"1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TAG: &str = "\"1a-2b-3c\"";

    // RFC 9110 §13.1.2: If-None-Match uses the weak comparison.
    #[test]
    fn if_none_match_lists() {
        assert!(etag_list_matches(b"*", TAG, true));
        assert!(etag_list_matches(b"\"1a-2b-3c\"", TAG, true));
        assert!(etag_list_matches(b"W/\"1a-2b-3c\"", TAG, true));
        assert!(etag_list_matches(b"\"x\", \"1a-2b-3c\"", TAG, true));
        assert!(etag_list_matches(b" , \"x\" ,W/\"1a-2b-3c\" ", TAG, true));
        assert!(!etag_list_matches(b"\"x\", \"y\"", TAG, true));
        assert!(!etag_list_matches(b"1a-2b-3c", TAG, true));
        assert!(!etag_list_matches(b"\"x\" \"1a-2b-3c\"", TAG, true));
        assert!(!etag_list_matches(b"", TAG, true));
        // A comma inside a tag is part of the tag.
        assert!(etag_list_matches(b"\"a,b\"", "\"a,b\"", true));
    }

    // RFC 9110 §13.1.1: If-Match uses the strong comparison.
    #[test]
    fn strong_comparison_rejects_weak_tags() {
        assert!(etag_list_matches(b"\"1a-2b-3c\"", TAG, false));
        assert!(!etag_list_matches(b"W/\"1a-2b-3c\"", TAG, false));
        assert!(if_range_tag_matches(b"\"1a-2b-3c\"", TAG));
        assert!(!if_range_tag_matches(b"W/\"1a-2b-3c\"", TAG));
        assert!(!if_range_tag_matches(b"\"1a-2b-3c\", \"x\"", TAG));
    }

    // RFC 9110 §13.1.3, §13.1.4, §13.1.5, around a modification time.
    #[test]
    fn date_conditions() {
        let m = Some(1_000);
        assert!(modified_since(m, 0));
        assert!(modified_since(m, 999));
        assert!(!modified_since(m, 1_000));
        assert!(!modified_since(m, u64::MAX));
        assert!(modified_since(None, 0));

        assert!(unmodified_since(m, 1_000));
        assert!(unmodified_since(m, u64::MAX));
        assert!(!unmodified_since(m, 999));
        assert!(!unmodified_since(None, u64::MAX));

        assert!(if_range_date_matches(m, 1_000));
        assert!(!if_range_date_matches(m, 999));
        assert!(!if_range_date_matches(m, 1_001));
        assert!(!if_range_date_matches(None, 1_000));
    }

    // RFC 9110 §14.1.2 examples, against a 10000-byte representation.
    #[test]
    fn single_ranges() {
        use RangeRequest::*;
        let r = |s: &str| parse_range(s.as_bytes(), 10_000);
        assert_eq!(r("bytes=0-499"), Partial { start: 0, end: 499 });
        assert_eq!(
            r("bytes=500-999"),
            Partial {
                start: 500,
                end: 999
            }
        );
        assert_eq!(
            r("bytes=-500"),
            Partial {
                start: 9500,
                end: 9999
            }
        );
        assert_eq!(
            r("bytes=9500-"),
            Partial {
                start: 9500,
                end: 9999
            }
        );
        assert_eq!(r("bytes=0-0"), Partial { start: 0, end: 0 });
        assert_eq!(
            r("bytes=-1"),
            Partial {
                start: 9999,
                end: 9999
            }
        );
        assert_eq!(
            r("bytes=0-99999"),
            Partial {
                start: 0,
                end: 9999
            }
        );
        assert_eq!(
            r("bytes=-99999"),
            Partial {
                start: 0,
                end: 9999
            }
        );
        assert_eq!(r("BYTES = 1-2"), Partial { start: 1, end: 2 });
        assert_eq!(r("bytes=1-2,"), Partial { start: 1, end: 2 });
        assert_eq!(r("bytes=10000-"), Unsatisfiable);
        assert_eq!(r("bytes=10000-20000"), Unsatisfiable);
        assert_eq!(r("bytes=-0"), Unsatisfiable);
        assert_eq!(parse_range(b"bytes=0-", 0), Unsatisfiable);
        assert_eq!(parse_range(b"bytes=-5", 0), Unsatisfiable);
    }

    // RFC 9110 §14.2: a server may ignore what it does not handle.
    #[test]
    fn ignored_ranges() {
        let r = |s: &str| parse_range(s.as_bytes(), 10_000);
        for value in [
            "",
            "bytes",
            "bytes=",
            "bytes=-",
            "bytes=5-1",
            "bytes=a-b",
            "bytes=1-2-3",
            "bytes=0-1,5-6",
            "items=0-5",
            "bytes=99999999999999999999999-",
            "bytes=+1-2",
        ] {
            assert_eq!(r(value), RangeRequest::Full, "{value}");
        }
    }

    #[test]
    fn accept_encoding_weights() {
        use ContentCoding::*;
        let both = [Br, Gzip];
        let a = |s: &str| acceptable_codings(Some(s.as_bytes()), &both);
        assert!(acceptable_codings(None, &both).is_empty());
        assert_eq!(*a("gzip"), [Gzip]);
        assert_eq!(*a("gzip, deflate, br"), [Br, Gzip]);
        assert_eq!(*a("gzip;q=1.0, br;q=0.5"), [Gzip, Br]);
        assert!(a("gzip;q=0").is_empty());
        assert_eq!(*a("gzip ; q=0.000, br"), [Br]);
        assert_eq!(*a("*"), [Br, Gzip]);
        assert_eq!(*a("*;q=0.5, br;q=0"), [Gzip]);
        assert_eq!(*a("x-gzip"), [Gzip]);
        assert_eq!(*a("GZIP;Q=0.3"), [Gzip]);
        assert!(a("gzip;q=2").is_empty());
        assert!(a("gzip;q=0.1234").is_empty());
        assert!(a("identity").is_empty());
        assert_eq!(*acceptable_codings(Some(b"br, gzip"), &[Gzip]), [Gzip]);
        // Offered in either order, or twice: each once, best first.
        assert_eq!(
            *acceptable_codings(Some(b"br, gzip"), &[Gzip, Br]),
            [Br, Gzip]
        );
        assert_eq!(*acceptable_codings(Some(b"gzip"), &[Gzip, Gzip]), [Gzip]);
        assert_eq!(
            *acceptable_codings(Some(b"br;q=0.2, gzip;q=0.9"), &[Br, Br, Gzip]),
            [Gzip, Br]
        );
    }

    #[test]
    fn qvalues() {
        assert_eq!(qvalue(b"1"), Some(1000));
        assert_eq!(qvalue(b"1.000"), Some(1000));
        assert_eq!(qvalue(b"0.5"), Some(500));
        assert_eq!(qvalue(b"0.05"), Some(50));
        assert_eq!(qvalue(b"0."), Some(0));
        assert_eq!(qvalue(b"1.5"), None);
        assert_eq!(qvalue(b""), None);
        assert_eq!(qvalue(b"0.x"), None);
    }
}
