//! The short answers every step of serving a file may give instead of the
//! file: a redirect to the slash form, `400`, `403`, `404`, `405`, `500`.

use std::io;

use http::header::{self, HeaderValue};
use http::{Response, StatusCode, Uri};

use super::FileBody;

/// `301` from a directory path to its slash form, query kept.
pub(crate) fn redirect_to_slash(uri: &Uri) -> Response<FileBody> {
    // Collapse leading slashes: `//host/dir` must not become the
    // protocol-relative `Location: //host/dir/`.
    let mut location = format!("/{}/", uri.path().trim_start_matches('/'));
    if let Some(query) = uri.query() {
        location.push('?');
        location.push_str(query);
    }
    let mut response = Response::new(FileBody::empty());
    *response.status_mut() = StatusCode::MOVED_PERMANENTLY;
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

/// A response of `status` with a short plain-text `body`.
pub(crate) fn text(status: StatusCode, body: &'static str) -> Response<FileBody> {
    let mut response = Response::new(FileBody::from_static(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
    response
}

/// `405` with `Allow: GET, HEAD`.
pub(crate) fn method_not_allowed() -> Response<FileBody> {
    let mut response = text(StatusCode::METHOD_NOT_ALLOWED, "405 Method Not Allowed\n");
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
    response
}

/// `400`, for a request path that cannot be decoded.
pub(crate) fn bad_request() -> Response<FileBody> {
    text(StatusCode::BAD_REQUEST, "400 Bad Request\n")
}

/// `404`.
pub(crate) fn not_found() -> Response<FileBody> {
    text(StatusCode::NOT_FOUND, "404 Not Found\n")
}

/// `403`, when the file system denies access.
pub(crate) fn forbidden() -> Response<FileBody> {
    text(StatusCode::FORBIDDEN, "403 Forbidden\n")
}

/// The answer to a failed file-system call: `404`, `403`, or `500` (logged).
pub(crate) fn io_error(e: &io::Error) -> Response<FileBody> {
    match e.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => not_found(),
        io::ErrorKind::PermissionDenied => forbidden(),
        _ => {
            tracing::warn!(error = %e, "static file could not be read");
            text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "500 Internal Server Error\n",
            )
        }
    }
}
