//! Step 3: the validators of a file (`ETag`, `Last-Modified`) and the
//! conditional requests that compare against them (RFC 9110 §13).
//!
//! The HTTP-dates of `If-Modified-Since`, `If-Unmodified-Since` and
//! `If-Range` are parsed here, by the `httpdate` crate; the comparisons are
//! the core's (`negotiate`), on seconds since the Unix epoch.

use std::fs::Metadata;
use std::time::UNIX_EPOCH;

use http::header::{self, HeaderMap, HeaderName, HeaderValue};

use super::selected::Selected;
use ringstream_core::h1::negotiate;

/// The strong entity-tag of a file, `"<inode>-<size>-<mtime in ns>"` in
/// hex, and its modification time in seconds since the Unix epoch (if the
/// platform reports one).
pub(crate) fn of(meta: &Metadata) -> (String, Option<u64>) {
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok());
    let etag = format!(
        "\"{:x}-{:x}-{:x}\"",
        inode(meta),
        meta.len(),
        mtime.map_or(0, |d| d.as_nanos())
    );
    (etag, mtime.map(|d| d.as_secs()))
}

#[cfg(unix)]
fn inode(meta: &Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_meta: &Metadata) -> u64 {
    0
}

/// The outcome of the preconditions.
pub(crate) enum Precondition {
    /// No precondition stops the request.
    Proceed,
    /// `If-None-Match` or `If-Modified-Since` holds: `304`.
    NotModified,
    /// `If-Match` or `If-Unmodified-Since` fails: `412`.
    Failed,
}

/// RFC 9110 §13.2.2, steps 1–4, for `GET`/`HEAD` on an existing file.
pub(crate) fn preconditions(headers: &HeaderMap, selected: &Selected) -> Precondition {
    let modified = selected.last_modified;
    if let Some(value) = headers.get(header::IF_MATCH) {
        if !negotiate::etag_list_matches(value.as_bytes(), &selected.etag, false) {
            return Precondition::Failed;
        }
    } else if let Some(since) = single_date(headers, &header::IF_UNMODIFIED_SINCE) {
        if !negotiate::unmodified_since(modified, since) {
            return Precondition::Failed;
        }
    }
    if let Some(value) = headers.get(header::IF_NONE_MATCH) {
        if negotiate::etag_list_matches(value.as_bytes(), &selected.etag, true) {
            return Precondition::NotModified;
        }
    } else if let Some(since) = single_date(headers, &header::IF_MODIFIED_SINCE) {
        if !negotiate::modified_since(modified, since) {
            return Precondition::NotModified;
        }
    }
    Precondition::Proceed
}

/// The date of a field that must occur once and hold a valid HTTP-date;
/// otherwise the field is ignored (RFC 9110 §13.1.3, §13.1.4).
fn single_date(headers: &HeaderMap, name: &HeaderName) -> Option<u64> {
    let mut values = headers.get_all(name).iter();
    match (values.next(), values.next()) {
        (Some(value), None) => http_date(value),
        _ => None,
    }
}

/// An HTTP-date in any of the three forms of RFC 9110 §5.6.7 (IMF-fixdate,
/// RFC 850, asctime), in seconds since the Unix epoch; `None` when the
/// value is not one. The day name must agree with the date, and dates
/// before 1970 are not taken, as `httpdate` parses them.
fn http_date(value: &HeaderValue) -> Option<u64> {
    let text = value.to_str().ok()?;
    let date = httpdate::parse_http_date(text).ok()?;
    date.duration_since(UNIX_EPOCH).ok().map(|d| d.as_secs())
}

/// RFC 9110 §13.1.5: whether `If-Range` (if any) lets the range apply.
pub(crate) fn if_range_allows(headers: &HeaderMap, selected: &Selected) -> bool {
    let Some(value) = headers.get(header::IF_RANGE) else {
        return true;
    };
    let bytes = value.as_bytes().trim_ascii();
    if bytes.starts_with(b"\"") || bytes.starts_with(b"W/") {
        return negotiate::if_range_tag_matches(bytes, &selected.etag);
    }
    http_date(value)
        .is_some_and(|date| negotiate::if_range_date_matches(selected.last_modified, date))
}

#[cfg(test)]
mod tests {
    use super::http_date;
    use http::header::HeaderValue;
    use ringstream_core::h1::HttpDate;

    fn parse(text: &str) -> Option<u64> {
        http_date(&HeaderValue::from_str(text).expect(text))
    }

    // RFC 9110 §5.6.7: the three forms of the same instant.
    #[test]
    fn three_formats_agree() {
        let expected = Some(784_111_777);
        assert_eq!(parse("Sun, 06 Nov 1994 08:49:37 GMT"), expected);
        assert_eq!(parse("Sunday, 06-Nov-94 08:49:37 GMT"), expected);
        assert_eq!(parse("Sun Nov  6 08:49:37 1994"), expected);
        assert_eq!(parse("  Sun, 06 Nov 1994 08:49:37 GMT "), expected);
    }

    // What the `Last-Modified` field says parses back to the same second,
    // so `If-Range` and `If-Modified-Since` can echo it exactly.
    #[test]
    fn round_trips_the_core_formatter() {
        for secs in [
            0u64,
            951_782_400,
            1_700_000_000,
            4_102_444_799,
            253_402_300_799,
        ] {
            let date = HttpDate::from_unix_secs(secs);
            assert_eq!(parse(date.as_str()), Some(secs), "{date}");
        }
    }

    #[test]
    fn rejects_malformed_dates() {
        for bad in [
            "",
            "yesterday",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 31 Apr 1994 08:49:37 GMT",
            "Sun, 29 Feb 1900 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Xyz, 06 Nov 1994 08:49:37 GMT",
            "Sun, 0x Nov 1994 08:49:37 GMT",
            "1994-11-06T08:49:37Z",
            "Sun, 06 Nov 1994 08:49:37 GMT garbage",
            // The day name does not agree with the date.
            "Mon, 06 Nov 1994 08:49:37 GMT",
            // Before the epoch: no file is that old.
            "Wed, 31 Dec 1969 23:59:59 GMT",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        let not_text = HeaderValue::from_bytes(b"Sun, 06 Nov 1994 08:49:37 GMT\xff").unwrap();
        assert_eq!(http_date(&not_text), None);
    }

    #[test]
    fn two_digit_years_pivot_at_70() {
        assert_eq!(parse("Thursday, 01-Jan-70 00:00:00 GMT"), Some(0));
        assert_eq!(parse("Saturday, 01-Jan-00 00:00:00 GMT"), Some(946_684_800));
    }
}
