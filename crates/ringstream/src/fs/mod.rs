//! Static files: [`ServeDir`] serves a directory tree over HTTP.
//!
//! [`ServeDir`] is a `tower_service::Service` for any request body type, so
//! it runs on the ringstream [`server`](crate::server) as well as on any
//! other tower-compatible server. It streams files from disk in blocks
//! ([`FileBody`]) and handles what a static-file server is expected to:
//!
//! - `GET` and `HEAD`; any other method gets `405` with `Allow: GET, HEAD`;
//! - `Content-Type` from the file extension ([`content_type`], a maintained
//!   table of about 1,400 extensions), overridable per extension
//!   ([`ServeDir::mime_type`]);
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

// A request passes through these steps in order; `response::respond`
// runs them one after another:
//
// 1. `resolve`: the request path to a regular file below the root (or the
//    index file of a directory, or a redirect to the slash form);
// 2. `variant`: a precompressed variant chosen by `Accept-Encoding`, or the
//    file itself, opened and measured;
// 3. `validators`: `ETag` and `Last-Modified`, and the preconditions of
//    RFC 9110 §13;
// 4. `ranges`: the part of the file to send (`Range`, `If-Range`);
// 5. `response`: the headers and the streaming `FileBody`.
//
// `path` maps a target onto the root (percent-decoding by the
// `percent-encoding` crate); the meaning of the validators, ranges and
// `Accept-Encoding` comes from the core (`ringstream_core::h1::negotiate`).
// The one header syntax parsed here is the HTTP-date of the date
// conditions, by the `httpdate` crate (a std crate, out of the no_std
// core's reach); the core compares the seconds.
mod answers;
mod body;
mod mime;
mod path;
mod ranges;
mod resolve;
mod response;
mod selected;
mod validators;
mod variant;

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::header::HeaderValue;
use http::{Request, Response};
use tower_service::Service;

pub use body::FileBody;
pub use mime::{content_type, DEFAULT_CONTENT_TYPE};

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
/// # Content types
///
/// `Content-Type` comes from the extension of the name asked for (not of a
/// symlink's target or a precompressed variant), by the table of
/// [`content_type`]: about 1,400 extensions, text types with
/// `; charset=utf-8`, and `application/octet-stream` for the rest.
/// [`mime_type`](Self::mime_type) sets the type of an extension, over the
/// table or in addition to it.
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
    /// `Content-Type` values set with [`ServeDir::mime_type`], by lowercase
    /// extension; consulted before the built-in table.
    mime_types: Vec<(String, HeaderValue)>,
}

impl Settings {
    /// The `Content-Type` of a file named `path`: an extension's override
    /// if one was set, otherwise [`content_type`].
    fn content_type(&self, path: &Path) -> HeaderValue {
        let extension = path.extension().and_then(|e| e.to_str());
        if let Some(extension) = extension.filter(|_| !self.mime_types.is_empty()) {
            if let Some((_, value)) = self
                .mime_types
                .iter()
                .find(|(e, _)| e.eq_ignore_ascii_case(extension))
            {
                return value.clone();
            }
        }
        HeaderValue::from_static(content_type(path))
    }
}

impl ServeDir {
    /// Serve the files below `root`.
    ///
    /// The root is resolved on every request, so it may be created or
    /// replaced after the service is built; while it does not exist every
    /// request is `404`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::fs::ServeDir;
    /// use tower_service::Service;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let dir = std::env::temp_dir().join(format!("ringstream-doc-{}-{}", "new", std::process::id()));
    /// let mut files = ServeDir::new(&dir);
    /// assert_eq!(files.root(), dir.as_path());
    ///
    /// // No root yet: every request is 404.
    /// let get = || http::Request::get("/app.js").body(()).unwrap();
    /// assert_eq!(files.call(get()).await.unwrap().status(), 404);
    ///
    /// // Created afterwards: served.
    /// std::fs::create_dir_all(&dir).unwrap();
    /// std::fs::write(dir.join("app.js"), "run();").unwrap();
    /// let response = files.call(get()).await.unwrap();
    /// assert_eq!(response.status(), 200);
    /// assert_eq!(response.headers()["content-type"], "text/javascript; charset=utf-8");
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # });
    /// ```
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
                mime_types: Vec::new(),
            }),
        }
    }

    /// Serve `FILE.gz` for `FILE` to clients that accept `gzip`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::fs::ServeDir;
    /// use tower_service::Service;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let dir = std::env::temp_dir().join(format!("ringstream-doc-{}-{}", "gzip", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// std::fs::write(dir.join("app.css"), "body {}").unwrap();
    /// // Made at build time, by `gzip -k app.css` say.
    /// std::fs::write(dir.join("app.css.gz"), b"\x1f\x8b...").unwrap();
    ///
    /// let mut files = ServeDir::new(&dir).precompressed_gzip();
    /// let request = http::Request::get("/app.css").header("accept-encoding", "gzip, br").body(()).unwrap();
    /// let response = files.call(request).await.unwrap();
    /// assert_eq!(response.headers()["content-encoding"], "gzip");
    /// assert_eq!(response.headers()["content-type"], "text/css; charset=utf-8");
    /// assert_eq!(response.headers()["vary"], "Accept-Encoding");
    ///
    /// // A client that does not accept gzip gets the file itself.
    /// let request = http::Request::get("/app.css").body(()).unwrap();
    /// let response = files.call(request).await.unwrap();
    /// assert!(response.headers().get("content-encoding").is_none());
    /// assert_eq!(response.headers()["content-length"], "7");
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # });
    /// ```
    pub fn precompressed_gzip(mut self) -> ServeDir {
        Arc::make_mut(&mut self.settings).gzip = true;
        self
    }

    /// Serve `FILE.br` for `FILE` to clients that accept `br`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::fs::ServeDir;
    /// use tower_service::Service;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let dir = std::env::temp_dir().join(format!("ringstream-doc-br-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// std::fs::write(dir.join("app.js"), "run();").unwrap();
    /// std::fs::write(dir.join("app.js.br"), b"...").unwrap();
    /// std::fs::write(dir.join("app.js.gz"), b"...").unwrap();
    ///
    /// let mut files = ServeDir::new(&dir).precompressed_br().precompressed_gzip();
    /// // On equal weights Brotli is preferred; a higher `q` wins.
    /// let get = |accept: &str| http::Request::get("/app.js").header("accept-encoding", accept).body(()).unwrap();
    /// let response = files.call(get("gzip, br")).await.unwrap();
    /// assert_eq!(response.headers()["content-encoding"], "br");
    /// let response = files.call(get("gzip, br;q=0.5")).await.unwrap();
    /// assert_eq!(response.headers()["content-encoding"], "gzip");
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # });
    /// ```
    pub fn precompressed_br(mut self) -> ServeDir {
        Arc::make_mut(&mut self.settings).br = true;
        self
    }

    /// The file served for a directory path ending in `/` (default
    /// [`DEFAULT_INDEX_FILE`]). It must be a plain file name.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::fs::ServeDir;
    /// use tower_service::Service;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let dir = std::env::temp_dir().join(format!("ringstream-doc-{}-{}", "index", std::process::id()));
    /// std::fs::create_dir_all(dir.join("docs")).unwrap();
    /// std::fs::write(dir.join("docs/README.txt"), "read me").unwrap();
    ///
    /// let mut files = ServeDir::new(&dir).index_file("README.txt");
    /// let response = files.call(http::Request::get("/docs/").body(()).unwrap()).await.unwrap();
    /// assert_eq!(response.status(), 200);
    /// assert_eq!(response.headers()["content-length"], "7");
    ///
    /// // Without the slash: redirected to the slash form first.
    /// let response = files.call(http::Request::get("/docs").body(()).unwrap()).await.unwrap();
    /// assert_eq!(response.status(), 301);
    /// assert_eq!(response.headers()["location"], "/docs/");
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # });
    /// ```
    pub fn index_file(mut self, name: impl Into<String>) -> ServeDir {
        Arc::make_mut(&mut self.settings).index = Some(name.into());
        self
    }

    /// Serve no index file: every directory path is `404` (the redirect to
    /// the slash form still happens).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::fs::ServeDir;
    /// use tower_service::Service;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let dir = std::env::temp_dir().join(format!("ringstream-doc-{}-{}", "no-index", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// std::fs::write(dir.join("index.html"), "<h1>hi</h1>").unwrap();
    ///
    /// let mut files = ServeDir::new(&dir).without_index_file();
    /// let response = files.call(http::Request::get("/").body(()).unwrap()).await.unwrap();
    /// assert_eq!(response.status(), 404);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # });
    /// ```
    pub fn without_index_file(mut self) -> ServeDir {
        Arc::make_mut(&mut self.settings).index = None;
        self
    }

    /// Read files `bytes` at a time (default [`DEFAULT_BLOCK_SIZE`]); `0`
    /// is taken as `1`. This is the most file data a response holds in
    /// memory at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::fs::ServeDir;
    /// use tower_service::Service;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let dir = std::env::temp_dir().join(format!("ringstream-doc-{}-{}", "block", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// std::fs::write(dir.join("data.bin"), vec![7u8; 10_000]).unwrap();
    ///
    /// // At most 4 KiB of the file in memory at a time.
    /// let mut files = ServeDir::new(&dir).block_size(4096);
    /// let response = files.call(http::Request::get("/data.bin").body(()).unwrap()).await.unwrap();
    /// let mut body = response.into_body();
    /// let mut sizes = Vec::new();
    /// while let Some(frame) = http_body_util::BodyExt::frame(&mut body).await {
    ///     sizes.push(frame.unwrap().into_data().unwrap().len());
    /// }
    /// assert_eq!(sizes, [4096, 4096, 1808]);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # });
    /// ```
    pub fn block_size(mut self, bytes: usize) -> ServeDir {
        Arc::make_mut(&mut self.settings).block_size = bytes.max(1);
        self
    }

    /// Mount the tree under `prefix` (such as `/static`): `/static/a.css`
    /// serves `ROOT/a.css`, and paths outside the prefix are `404`.
    /// Leading and trailing slashes are normalised, so `static/` works too.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::fs::ServeDir;
    /// use tower_service::Service;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let dir = std::env::temp_dir().join(format!("ringstream-doc-{}-{}", "prefix", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// std::fs::write(dir.join("a.css"), "p {}").unwrap();
    ///
    /// let mut files = ServeDir::new(&dir).strip_prefix("static/");
    /// let get = |path: &str| http::Request::get(path).body(()).unwrap();
    /// assert_eq!(files.call(get("/static/a.css")).await.unwrap().status(), 200);
    /// assert_eq!(files.call(get("/a.css")).await.unwrap().status(), 404);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # });
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::fs::ServeDir;
    /// use tower_service::Service;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let dir = std::env::temp_dir().join(format!("ringstream-doc-{}-{}", "hidden", std::process::id()));
    /// std::fs::create_dir_all(dir.join(".well-known")).unwrap();
    /// std::fs::write(dir.join(".well-known/security.txt"), "Contact: ops").unwrap();
    /// let get = || http::Request::get("/.well-known/security.txt").body(()).unwrap();
    ///
    /// assert_eq!(ServeDir::new(&dir).call(get()).await.unwrap().status(), 404);
    /// let mut files = ServeDir::new(&dir).serve_hidden(true);
    /// assert_eq!(files.call(get()).await.unwrap().status(), 200);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # });
    /// ```
    pub fn serve_hidden(mut self, serve: bool) -> ServeDir {
        Arc::make_mut(&mut self.settings).hidden = serve;
        self
    }

    /// Serve files whose extension is `extension` as `content_type`,
    /// instead of what the built-in table ([`content_type`]) says or for an
    /// extension the table does not know. The extension is the part of the
    /// name after its last `.`, given with or without the dot and compared
    /// case-insensitively; setting one twice keeps the last value. The
    /// type is sent as given, so a text type needs its own `charset`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::fs::ServeDir;
    ///
    /// let files = ServeDir::new("public")
    ///     .mime_type("md", "text/plain; charset=utf-8")
    ///     .mime_type(".glb", "model/gltf-binary");
    /// ```
    ///
    /// # Panics
    ///
    /// If `content_type` is not a valid header value (it holds a control
    /// character such as CR or LF).
    pub fn mime_type<V>(mut self, extension: impl AsRef<str>, content_type: V) -> ServeDir
    where
        V: TryInto<HeaderValue>,
    {
        let Ok(value) = content_type.try_into() else {
            panic!("ServeDir::mime_type: the content type is not a valid header value");
        };
        let extension = extension.as_ref();
        let extension = extension
            .strip_prefix('.')
            .unwrap_or(extension)
            .to_ascii_lowercase();
        let mime_types = &mut Arc::make_mut(&mut self.settings).mime_types;
        match mime_types.iter_mut().find(|(e, _)| *e == extension) {
            Some((_, slot)) => *slot = value,
            None => mime_types.push((extension, value)),
        }
        self
    }

    /// The root directory as given to [`new`](Self::new).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::path::Path;
    /// use ringstream::fs::ServeDir;
    ///
    /// // Kept as given: not made absolute, not checked.
    /// assert_eq!(ServeDir::new("public").root(), Path::new("public"));
    /// ```
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
            inner: Box::pin(async move {
                Ok(response::respond(&settings, &method, &uri, &headers).await)
            }),
        }
    }
}

/// The future returned by [`ServeDir`]'s `call`.
///
/// # Examples
///
/// ```
/// use ringstream::fs::{ResponseFuture, ServeDir};
/// use tower_service::Service;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let mut files = ServeDir::new("no-such-dir");
/// let future: ResponseFuture = files.call(http::Request::post("/").body(()).unwrap());
/// // It never fails: every problem is an HTTP status.
/// let response = future.await.unwrap();
/// assert_eq!(response.status(), 405);
/// assert_eq!(response.headers()["allow"], "GET, HEAD");
/// # });
/// ```
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
