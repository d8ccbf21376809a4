//! Step 5: the response — the steps run in order, the headers they agree
//! on, and the body.

use std::io;

use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, Response, StatusCode, Uri};
use ringstream_core::h1::HttpDate;
use tokio::io::AsyncSeekExt;

use super::answers::{io_error, method_not_allowed, text};
use super::ranges::{self, Span};
use super::selected::Selected;
use super::validators::{self, Precondition};
use super::variant;
use super::{resolve, FileBody, Settings};

/// Answers one request: resolves the path, selects the representation,
/// evaluates the preconditions, chooses the span and builds the response.
pub(crate) async fn respond(
    settings: &Settings,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
) -> Response<FileBody> {
    let is_head = *method == Method::HEAD;
    if *method != Method::GET && !is_head {
        return method_not_allowed();
    }
    let target = match resolve::locate(settings, uri).await {
        Ok(target) => target,
        Err(response) => return response,
    };
    // The type comes from the name asked for, not from a symlink target or
    // a variant.
    let mime = settings.content_type(&target.requested);
    let selected = match variant::select(settings, &target, headers).await {
        Ok(selected) => selected,
        Err(e) => return io_error(&e),
    };

    let mut common = validator_headers(&selected);
    match validators::preconditions(headers, &selected) {
        Precondition::Proceed => {}
        Precondition::NotModified => return with_headers(StatusCode::NOT_MODIFIED, common),
        Precondition::Failed => {
            let mut response = text(StatusCode::PRECONDITION_FAILED, "412 Precondition Failed\n");
            response.headers_mut().extend(common);
            return response;
        }
    }

    common.insert(header::CONTENT_TYPE, mime);
    if let Some(encoding) = selected.encoding {
        common.insert(
            header::CONTENT_ENCODING,
            HeaderValue::from_static(encoding.token()),
        );
    }
    let Some(span) = ranges::span(headers, &selected, is_head, &mut common) else {
        return ranges::unsatisfiable(selected.len, common);
    };
    common.insert(header::CONTENT_LENGTH, HeaderValue::from(span.len));
    if is_head {
        return with_headers(span.status, common);
    }
    file_response(settings, selected, span, common).await
}

/// The headers every answer about `selected` carries, `304` and `412`
/// included: `Accept-Ranges`, the validators, and `Vary` when the file
/// has a precompressed variant.
fn validator_headers(selected: &Selected) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    if let Ok(etag) = HeaderValue::from_str(&selected.etag) {
        headers.insert(header::ETAG, etag);
    }
    if let Some(secs) = selected.last_modified {
        if let Ok(date) = HeaderValue::from_str(HttpDate::from_unix_secs(secs).as_str()) {
            headers.insert(header::LAST_MODIFIED, date);
        }
    }
    if selected.has_variant {
        headers.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    }
    headers
}

/// A response of `status` with `headers` and no body (`HEAD`, `304`).
fn with_headers(status: StatusCode, headers: HeaderMap) -> Response<FileBody> {
    let mut response = Response::new(FileBody::headers_only());
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

/// The `span` of `selected`, streamed in blocks of the configured size.
async fn file_response(
    settings: &Settings,
    selected: Selected,
    span: Span,
    headers: HeaderMap,
) -> Response<FileBody> {
    let mut file = selected.file;
    if span.start > 0 {
        if let Err(e) = file.seek(io::SeekFrom::Start(span.start)).await {
            return io_error(&e);
        }
    }
    let mut response = Response::new(FileBody::file(file, span.len, settings.block_size));
    *response.status_mut() = span.status;
    *response.headers_mut() = headers;
    response
}
