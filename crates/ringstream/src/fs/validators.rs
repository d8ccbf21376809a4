//! Step 3: the validators of a file (`ETag`, `Last-Modified`) and the
//! conditional requests that compare against them (RFC 9110 §13).

use std::fs::Metadata;
use std::time::UNIX_EPOCH;

use http::header::{self, HeaderMap, HeaderName};

use super::variant::Selected;
use ringstream_core::h1::{negotiate, parse_http_date};

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
    let modified = selected.last_modified.and_then(|s| i64::try_from(s).ok());
    if let Some(value) = headers.get(header::IF_MATCH) {
        if !negotiate::etag_list_matches(value.as_bytes(), &selected.etag, false) {
            return Precondition::Failed;
        }
    } else if let Some(since) = single_date(headers, &header::IF_UNMODIFIED_SINCE) {
        if modified.is_none_or(|m| m > since) {
            return Precondition::Failed;
        }
    }
    if let Some(value) = headers.get(header::IF_NONE_MATCH) {
        if negotiate::etag_list_matches(value.as_bytes(), &selected.etag, true) {
            return Precondition::NotModified;
        }
    } else if let Some(since) = single_date(headers, &header::IF_MODIFIED_SINCE) {
        if modified.is_some_and(|m| m <= since) {
            return Precondition::NotModified;
        }
    }
    Precondition::Proceed
}

/// The date of a field that must occur once and hold a valid HTTP-date;
/// otherwise the field is ignored (RFC 9110 §13.1.3, §13.1.4).
fn single_date(headers: &HeaderMap, name: &HeaderName) -> Option<i64> {
    let mut values = headers.get_all(name).iter();
    match (values.next(), values.next()) {
        (Some(value), None) => parse_http_date(value.as_bytes()),
        _ => None,
    }
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
    match (parse_http_date(bytes), selected.last_modified) {
        (Some(date), Some(modified)) => i64::try_from(modified).is_ok_and(|m| m == date),
        _ => false,
    }
}
