//! Static files: [`ServeDir`] serves a directory tree over HTTP.
//!
//! [`ServeDir`] is a `tower_service::Service` for any request body type, so
//! it runs on the ringstream [`server`](crate::server) as well as on any
//! other tower-compatible server. It streams files from disk in blocks
//! ([`FileBody`]) and handles what a static-file server is expected to:
//!
//! - `GET` and `HEAD`; any other method gets `405` with `Allow: GET, HEAD`;
//! - `Content-Type` from the file extension ([`content_type`]);
//! - validators: a strong `ETag` and `Last-Modified`, and the preconditions
//!   of RFC 9110 §13 (`If-Match`, `If-Unmodified-Since`, `If-None-Match`,
//!   `If-Modified-Since`, evaluated in the order of §13.2.2);
//! - a single byte range (`Range`, `If-Range`, `206`/`416`);
//! - precompressed `FILE.br` / `FILE.gz` variants chosen by
//!   `Accept-Encoding`;
//! - directory index files and the redirect from `/dir` to `/dir/`;
//! - confinement to the root: see [`ServeDir`] for the exact rules.
//!
//! # Examples
//!
//! ```no_run
//! use ringstream::fs::ServeDir;
//! use ringstream::server::Server;
//!
//! # async fn run() -> Result<(), ringstream::Error> {
//! let files = ServeDir::new("public").precompressed_gzip().precompressed_br();
//! Server::bind("127.0.0.1:8080").await?.serve(files).await
//! # }
//! ```

mod body;
mod date;
mod mime;
mod negotiate;
mod path;

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::UNIX_EPOCH;

use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Request, Response, StatusCode, Uri};
use ringstream_core::h1::HttpDate;
use tokio::io::AsyncSeekExt;
use tower_service::Service;

pub use body::FileBody;
pub use mime::{content_type, DEFAULT_CONTENT_TYPE};

use negotiate::{Encoding, RangeRequest};
use path::PathError;

/// The default read size of a file body: 64 KiB, in bytes.
pub const DEFAULT_BLOCK_SIZE: usize = 64 * 1024;

/// The default index file looked up in a directory.
pub const DEFAULT_INDEX_FILE: &str = "index.html";

/// A service that serves the files below a root directory.
///
/// `ServeDir` is cheap to clone (its settings are shared) and never fails
/// (`Error = Infallible`): every problem becomes an HTTP status. The request
/// body is ignored.
///
/// # Mapping a path to a file
///
/// 1. With [`strip_prefix`](Self::strip_prefix), paths outside the prefix
///    are `404`.
/// 2. The path is split on `/` and each segment percent-decoded. A bad
///    escape, invalid UTF-8 or a NUL byte is `400`; a `.` or `..` segment
///    (in any spelling: `%2e%2e`, `%2E%2E`), a segment containing an
///    encoded `/` (`..%2f`) or a backslash is `404`.
/// 3. Hidden files — any segment starting with `.` — are `404` unless
///    [`serve_hidden`](Self::serve_hidden) is set, so a `.git` directory
///    or `.env` file under the root never leaks by default.
/// 4. The joined path is canonicalized (every symlink resolved) and must
///    still lie inside the canonicalized root; otherwise it is `404`. A
///    symlink from inside the root to another place inside it is followed.
///    Only regular files are served, so a FIFO or device node is `404`.
/// 5. A directory requested without a trailing slash is redirected with
///    `301` to the slash form (query kept), so relative links in its index
///    resolve; with the slash, its index file (default `index.html`) is
///    served, or `404` when there is none (no listings are generated).
///
/// # Validators
///
/// The `ETag` is strong: `"<inode>-<size>-<mtime in ns>"` in hex, taken
/// from the open file, so any write that changes the size, the modification
/// time or replaces the file (new inode) changes it. `Last-Modified` is the
/// modification time in IMF-fixdate form. A precompressed variant has its
/// own tag, as it is a different file.
///
/// `If-Modified-Since` is compared in whole seconds: a date at or after the
/// file's modification time (including one in the future) gives `304`.
///
/// # Ranges
///
/// One `bytes` range is honoured on `GET` (`206` with `Content-Range`);
/// an unsatisfiable one gives `416` with `Content-Range: bytes */<len>`.
/// A `Range` header listing several ranges, or a malformed one, is
/// ignored and the whole file is sent with `200`, as RFC 9110 §14.2
/// allows. `If-Range` (an entity-tag compared strongly, or the exact
/// `Last-Modified` date) that does not match also yields the whole file.
///
/// # Precompressed variants
///
/// Off by default. With [`precompressed_br`](Self::precompressed_br) and/or
/// [`precompressed_gzip`](Self::precompressed_gzip), a request for `FILE`
/// whose `Accept-Encoding` accepts `br` (or `gzip`) gets `FILE.br` (or
/// `FILE.gz`) when that file exists, with `Content-Encoding`, the
/// `Content-Type` of `FILE`, and `Vary: Accept-Encoding`. The highest
/// `q` wins; on equal weights Brotli is preferred. `q=0` rules a coding
/// out, and so does its absence unless `*` is listed. Every response for a
/// file that has a variant carries `Vary: Accept-Encoding`, the identity
/// one included. The identity file is always available as a fallback.
///
/// # Examples
///
/// ```
/// use ringstream::fs::ServeDir;
/// use tower_service::Service;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let dir = std::env::temp_dir().join(format!("serve-dir-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// std::fs::write(dir.join("hello.txt"), "hello\n").unwrap();
///
/// let mut files = ServeDir::new(&dir);
/// let request = http::Request::get("/hello.txt").body(()).unwrap();
/// let response = files.call(request).await.unwrap();
/// assert_eq!(response.status(), 200);
/// assert_eq!(response.headers()["content-type"], "text/plain; charset=utf-8");
/// assert_eq!(response.headers()["content-length"], "6");
///
/// let request = http::Request::get("/../etc/passwd").body(()).unwrap();
/// assert_eq!(files.call(request).await.unwrap().status(), 404);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ServeDir {
    settings: Arc<Settings>,
}

#[derive(Debug, Clone)]
struct Settings {
    root: PathBuf,
    prefix: String,
    index: Option<String>,
    block_size: usize,
    br: bool,
    gzip: bool,
    hidden: bool,
}

impl ServeDir {
    /// Serve the files below `root`.
    ///
    /// The root is resolved on every request, so it may be created or
    /// replaced after the service is built; while it does not exist every
    /// request is `404`.
    pub fn new(root: impl Into<PathBuf>) -> ServeDir {
        ServeDir {
            settings: Arc::new(Settings {
                root: root.into(),
                prefix: String::new(),
                index: Some(DEFAULT_INDEX_FILE.to_owned()),
                block_size: DEFAULT_BLOCK_SIZE,
                br: false,
                gzip: false,
                hidden: false,
            }),
        }
    }

    /// Serve `FILE.gz` for `FILE` to clients that accept `gzip`.
    pub fn precompressed_gzip(mut self) -> ServeDir {
        Arc::make_mut(&mut self.settings).gzip = true;
        self
    }

    /// Serve `FILE.br` for `FILE` to clients that accept `br`.
    pub fn precompressed_br(mut self) -> ServeDir {
        Arc::make_mut(&mut self.settings).br = true;
        self
    }

    /// The file served for a directory path ending in `/` (default
    /// [`DEFAULT_INDEX_FILE`]). It must be a plain file name.
    pub fn index_file(mut self, name: impl Into<String>) -> ServeDir {
        Arc::make_mut(&mut self.settings).index = Some(name.into());
        self
    }

    /// Serve no index file: every directory path is `404` (the redirect to
    /// the slash form still happens).
    pub fn without_index_file(mut self) -> ServeDir {
        Arc::make_mut(&mut self.settings).index = None;
        self
    }

    /// Read files `bytes` at a time (default [`DEFAULT_BLOCK_SIZE`]); `0`
    /// is taken as `1`. This is the most file data a response holds in
    /// memory at once.
    pub fn block_size(mut self, bytes: usize) -> ServeDir {
        Arc::make_mut(&mut self.settings).block_size = bytes.max(1);
        self
    }

    /// Mount the tree under `prefix` (such as `/static`): `/static/a.css`
    /// serves `ROOT/a.css`, and paths outside the prefix are `404`.
    /// Leading and trailing slashes are normalised, so `static/` works too.
    pub fn strip_prefix(mut self, prefix: impl AsRef<str>) -> ServeDir {
        let trimmed = prefix.as_ref().trim_matches('/');
        let normalised = if trimmed.is_empty() {
            String::new()
        } else {
            format!("/{trimmed}")
        };
        Arc::make_mut(&mut self.settings).prefix = normalised;
        self
    }

    /// Serve hidden files (path segments starting with `.`) when `serve`
    /// is `true`. Off by default.
    pub fn serve_hidden(mut self, serve: bool) -> ServeDir {
        Arc::make_mut(&mut self.settings).hidden = serve;
        self
    }

    /// The root directory as given to [`new`](Self::new).
    pub fn root(&self) -> &Path {
        &self.settings.root
    }
}

impl<B> Service<Request<B>> for ServeDir {
    type Response = Response<FileBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> ResponseFuture {
        let settings = Arc::clone(&self.settings);
        let (parts, _body) = request.into_parts();
        let (method, uri, headers) = (parts.method, parts.uri, parts.headers);
        ResponseFuture {
            inner: Box::pin(async move { Ok(respond(&settings, &method, &uri, &headers).await) }),
        }
    }
}

/// The future returned by [`ServeDir`]'s `call`.
pub struct ResponseFuture {
    inner: Pin<Box<dyn Future<Output = Result<Response<FileBody>, Infallible>> + Send>>,
}

impl Future for ResponseFuture {
    type Output = Result<Response<FileBody>, Infallible>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.inner.as_mut().poll(cx)
    }
}

impl fmt::Debug for ResponseFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}

/// A file chosen to answer the request, open and measured.
struct Selected {
    file: tokio::fs::File,
    len: u64,
    etag: String,
    last_modified: Option<u64>,
    encoding: Option<Encoding>,
}

async fn respond(
    settings: &Settings,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
) -> Response<FileBody> {
    let is_head = *method == Method::HEAD;
    if *method != Method::GET && !is_head {
        let mut response = text(StatusCode::METHOD_NOT_ALLOWED, "405 Method Not Allowed\n");
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let relative = match path::decode_request_path(uri.path(), &settings.prefix, settings.hidden) {
        Ok(relative) => relative,
        Err(PathError::Malformed) => return text(StatusCode::BAD_REQUEST, "400 Bad Request\n"),
        Err(PathError::NotServed) => return not_found(),
    };
    let Ok(root) = tokio::fs::canonicalize(&settings.root).await else {
        tracing::warn!(root = %settings.root.display(), "static root is not accessible");
        return not_found();
    };

    let mut requested = root.join(&relative.path);
    let mut resolved = match resolve(&root, &requested).await {
        Ok(resolved) => resolved,
        Err(response) => return response,
    };
    let mut meta = match tokio::fs::metadata(&resolved).await {
        Ok(meta) => meta,
        Err(e) => return io_error(&e),
    };
    if meta.is_dir() {
        if !relative.trailing_slash {
            return redirect_to_slash(uri);
        }
        let Some(index) = &settings.index else {
            return not_found();
        };
        requested = requested.join(index);
        resolved = match resolve(&root, &requested).await {
            Ok(resolved) => resolved,
            Err(response) => return response,
        };
        meta = match tokio::fs::metadata(&resolved).await {
            Ok(meta) => meta,
            Err(e) => return io_error(&e),
        };
    }
    if !meta.is_file() {
        return not_found();
    }
    // The type comes from the name asked for, not from a symlink target or
    // a variant.
    let mime = content_type(&requested);

    let mut offered = Vec::with_capacity(2);
    if settings.br {
        offered.push(Encoding::Br);
    }
    if settings.gzip {
        offered.push(Encoding::Gzip);
    }
    let mut has_variant = false;
    let mut variant = None;
    if !offered.is_empty() {
        let acceptable = negotiate::acceptable_encodings(
            headers
                .get(header::ACCEPT_ENCODING)
                .map(HeaderValue::as_bytes),
            &offered,
        );
        for &encoding in &offered {
            let mut name = requested.clone().into_os_string();
            name.push(encoding.suffix());
            let Some(path) = regular_file_in(&root, Path::new(&name)).await else {
                continue;
            };
            has_variant = true;
            let rank = acceptable.iter().position(|&e| e == encoding);
            if let Some(rank) = rank {
                if variant.as_ref().is_none_or(|(best, _, _)| rank < *best) {
                    variant = Some((rank, encoding, path));
                }
            }
        }
    }

    let selected = match variant {
        Some((_, encoding, path)) => open(&path, Some(encoding)).await,
        None => open(&resolved, None).await,
    };
    let selected = match selected {
        Ok(selected) => selected,
        Err(e) => return io_error(&e),
    };

    let mut common = HeaderMap::new();
    common.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    if let Ok(etag) = HeaderValue::from_str(&selected.etag) {
        common.insert(header::ETAG, etag);
    }
    if let Some(secs) = selected.last_modified {
        if let Ok(date) = HeaderValue::from_str(HttpDate::from_unix_secs(secs).as_str()) {
            common.insert(header::LAST_MODIFIED, date);
        }
    }
    if has_variant {
        common.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    }

    match preconditions(headers, &selected) {
        Precondition::Proceed => {}
        Precondition::NotModified => {
            let mut response = Response::new(FileBody::headers_only());
            *response.status_mut() = StatusCode::NOT_MODIFIED;
            *response.headers_mut() = common;
            return response;
        }
        Precondition::Failed => {
            let mut response = text(StatusCode::PRECONDITION_FAILED, "412 Precondition Failed\n");
            response.headers_mut().extend(common);
            return response;
        }
    }

    common.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    if let Some(encoding) = selected.encoding {
        common.insert(
            header::CONTENT_ENCODING,
            HeaderValue::from_static(encoding.token()),
        );
    }

    let range = match headers.get(header::RANGE) {
        Some(value) if !is_head && if_range_allows(headers, &selected) => {
            negotiate::parse_range(value.as_bytes(), selected.len)
        }
        _ => RangeRequest::Full,
    };
    let (status, start, len) = match range {
        RangeRequest::Full => (StatusCode::OK, 0, selected.len),
        RangeRequest::Partial { start, end } => {
            let content_range = format!("bytes {start}-{end}/{}", selected.len);
            if let Ok(value) = HeaderValue::from_str(&content_range) {
                common.insert(header::CONTENT_RANGE, value);
            }
            (StatusCode::PARTIAL_CONTENT, start, end - start + 1)
        }
        RangeRequest::Unsatisfiable => {
            let mut response = text(
                StatusCode::RANGE_NOT_SATISFIABLE,
                "416 Range Not Satisfiable\n",
            );
            common.remove(header::CONTENT_TYPE);
            common.remove(header::CONTENT_ENCODING);
            response.headers_mut().extend(common);
            if let Ok(value) = HeaderValue::from_str(&format!("bytes */{}", selected.len)) {
                response.headers_mut().insert(header::CONTENT_RANGE, value);
            }
            return response;
        }
    };
    common.insert(header::CONTENT_LENGTH, HeaderValue::from(len));

    let body = if is_head {
        FileBody::headers_only()
    } else {
        let mut file = selected.file;
        if start > 0 {
            if let Err(e) = file.seek(io::SeekFrom::Start(start)).await {
                return io_error(&e);
            }
        }
        FileBody::file(file, len, settings.block_size)
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    *response.headers_mut() = common;
    response
}

/// Canonicalizes `path` and checks that it stays below `root` (itself
/// canonical).
async fn resolve(root: &Path, path: &Path) -> Result<PathBuf, Response<FileBody>> {
    match tokio::fs::canonicalize(path).await {
        Ok(resolved) if resolved.starts_with(root) => Ok(resolved),
        Ok(_) => Err(not_found()),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Err(forbidden()),
        // Missing, not a directory, a symlink loop, a name too long: all
        // mean there is nothing to serve under that name.
        Err(_) => Err(not_found()),
    }
}

/// `path` resolved, if it is a regular file below `root`.
async fn regular_file_in(root: &Path, path: &Path) -> Option<PathBuf> {
    let resolved = tokio::fs::canonicalize(path).await.ok()?;
    if !resolved.starts_with(root) {
        return None;
    }
    let meta = tokio::fs::metadata(&resolved).await.ok()?;
    meta.is_file().then_some(resolved)
}

async fn open(path: &Path, encoding: Option<Encoding>) -> io::Result<Selected> {
    let file = tokio::fs::File::open(path).await?;
    let meta = file.metadata().await?;
    if !meta.is_file() {
        return Err(io::Error::from(io::ErrorKind::NotFound));
    }
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok());
    let etag = format!(
        "\"{:x}-{:x}-{:x}\"",
        inode(&meta),
        meta.len(),
        mtime.map_or(0, |d| d.as_nanos())
    );
    Ok(Selected {
        file,
        len: meta.len(),
        etag,
        last_modified: mtime.map(|d| d.as_secs()),
        encoding,
    })
}

#[cfg(unix)]
fn inode(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_meta: &std::fs::Metadata) -> u64 {
    0
}

enum Precondition {
    Proceed,
    NotModified,
    Failed,
}

/// RFC 9110 §13.2.2, steps 1–4, for `GET`/`HEAD` on an existing file.
fn preconditions(headers: &HeaderMap, selected: &Selected) -> Precondition {
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
        (Some(value), None) => date::parse_http_date(value.as_bytes()),
        _ => None,
    }
}

/// RFC 9110 §13.1.5: whether `If-Range` (if any) lets the range apply.
fn if_range_allows(headers: &HeaderMap, selected: &Selected) -> bool {
    let Some(value) = headers.get(header::IF_RANGE) else {
        return true;
    };
    let bytes = value.as_bytes().trim_ascii();
    if bytes.starts_with(b"\"") || bytes.starts_with(b"W/") {
        return negotiate::if_range_tag_matches(bytes, &selected.etag);
    }
    match (date::parse_http_date(bytes), selected.last_modified) {
        (Some(date), Some(modified)) => i64::try_from(modified).is_ok_and(|m| m == date),
        _ => false,
    }
}

fn redirect_to_slash(uri: &Uri) -> Response<FileBody> {
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

fn text(status: StatusCode, body: &'static str) -> Response<FileBody> {
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

fn not_found() -> Response<FileBody> {
    text(StatusCode::NOT_FOUND, "404 Not Found\n")
}

fn forbidden() -> Response<FileBody> {
    text(StatusCode::FORBIDDEN, "403 Forbidden\n")
}

fn io_error(e: &io::Error) -> Response<FileBody> {
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
