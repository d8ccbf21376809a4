//! Step 4: the part of the file to send (RFC 9110 §14).

use http::header::{self, HeaderMap, HeaderValue};
use http::{Response, StatusCode};

use super::answers::text;
use super::selected::Selected;
use super::validators::if_range_allows;
use super::FileBody;
use ringstream_core::h1::negotiate::{self, RangeRequest};

/// The bytes of the file a response carries.
pub(crate) struct Span {
    /// `200` for the whole file, `206` for a range.
    pub(crate) status: StatusCode,
    /// The offset of the first byte.
    pub(crate) start: u64,
    /// The number of bytes, in bytes.
    pub(crate) len: u64,
}

/// Chooses the span of `selected` to send, or `None` when the request
/// asks for a range the file cannot satisfy (answer it with
/// [`unsatisfiable`]).
///
/// A `Range` applies to `GET` only, and only when `If-Range` (if any)
/// matches; a satisfiable one adds `Content-Range` to `headers`.
pub(crate) fn span(
    request: &HeaderMap,
    selected: &Selected,
    is_head: bool,
    headers: &mut HeaderMap,
) -> Option<Span> {
    let range = match request.get(header::RANGE) {
        Some(value) if !is_head && if_range_allows(request, selected) => {
            negotiate::parse_range(value.as_bytes(), selected.len)
        }
        _ => RangeRequest::Full,
    };
    match range {
        RangeRequest::Full => Some(Span {
            status: StatusCode::OK,
            start: 0,
            len: selected.len,
        }),
        RangeRequest::Partial { start, end } => {
            let content_range = format!("bytes {start}-{end}/{}", selected.len);
            if let Ok(value) = HeaderValue::from_str(&content_range) {
                headers.insert(header::CONTENT_RANGE, value);
            }
            Some(Span {
                status: StatusCode::PARTIAL_CONTENT,
                start,
                len: end - start + 1,
            })
        }
        RangeRequest::Unsatisfiable => None,
    }
}

/// The `416` answer to a range that lies beyond a file of `len` bytes:
/// `headers` without `Content-Type` and `Content-Encoding` (they describe
/// the file, not the error text), and `Content-Range: bytes */<len>`.
pub(crate) fn unsatisfiable(len: u64, mut headers: HeaderMap) -> Response<FileBody> {
    let mut response = text(
        StatusCode::RANGE_NOT_SATISFIABLE,
        "416 Range Not Satisfiable\n",
    );
    headers.remove(header::CONTENT_TYPE);
    headers.remove(header::CONTENT_ENCODING);
    response.headers_mut().extend(headers);
    if let Ok(value) = HeaderValue::from_str(&format!("bytes */{len}")) {
        response.headers_mut().insert(header::CONTENT_RANGE, value);
    }
    response
}
