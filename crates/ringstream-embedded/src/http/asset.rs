//! Static assets from flash: a page, a script or a stylesheet built into
//! the firmware as `&'static [u8]`, with an entity-tag computed at compile
//! time and an optional precompressed gzip variant.
//!
//! The decisions are the core's ([`negotiate`]): which coding the client
//! accepts ([`acceptable_codings`](negotiate::acceptable_codings), its
//! q-values honoured) and whether a validator matches
//! ([`etag_list_matches`](negotiate::etag_list_matches)); the response
//! framing, and the length a `304` or a `HEAD` advertises, are the
//! [`Exchange`](ringstream_core::h1::Exchange)'s. This file only strings
//! them together, as the tokio server's static-file responder does for
//! files on disk.

use core::fmt;

use embedded_io_async::{Read, Write};
use ringstream_core::h1::negotiate::{self, ContentCoding};

use super::{Error, Request, Responder, Sent};

/// Length of an [`Asset`]'s entity-tag in bytes: 16 hexadecimal digits
/// between double quotes.
pub const ETAG_LEN: usize = 18;

/// FNV-1a's 64-bit offset basis.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a's 64-bit prime.
const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// A static asset: the bytes of one path, served from where they lie.
///
/// Everything is fixed when the firmware is built: the path, the
/// `Content-Type`, the bytes (`&'static [u8]`, in flash with
/// `include_bytes!`), an optional gzip variant of the same bytes, and the
/// entity-tags. [`Asset::new`] is a `const fn` that computes the tag — a
/// 64-bit FNV-1a hash of the bytes, as a strong tag of 16 hexadecimal
/// digits (`"cbf29ce484222325"`) — so a `const` or `static` asset costs
/// no work at run time and no build script; the gzip variant gets its own
/// tag, from its own bytes, as a different representation must (RFC 9110
/// §8.8.3). Nothing is allocated.
///
/// [`serve`](Self::serve) answers a request for it:
///
/// - `GET` and `HEAD`; any other method gets `405` with `Allow: GET,
///   HEAD`, as the tokio server's static-file responder answers;
/// - the gzip variant, with `Content-Encoding: gzip`, when there is one
///   and the request's `Accept-Encoding` accepts `gzip` (with a non-zero
///   q-value, its own or that of `*`); else the bytes themselves. Every
///   response of an asset with a variant carries `Vary: Accept-Encoding`;
/// - `If-None-Match` naming the chosen representation's tag (weak
///   comparison, so `W/"…"` matches too), or `*`: `304` with the `ETag`
///   and no body; `If-Match` that does not name it (strong comparison):
///   `412` (RFC 9110 §13.2.2). An asset has no modification time, so
///   `If-Modified-Since` does not apply;
/// - `Content-Type` from the asset, `ETag`, and the caller's fields (a
///   `Cache-Control`, say) after them, on `200` and `304` alike.
///
/// The bytes go out through [`Responder::write_all`], which writes a piece
/// at least as large as the transmit buffer from where it lies: a large
/// asset is written from flash to the connection without passing through
/// the buffer.
///
/// Byte ranges (`Range`, `206`) are not served: a client asking for one
/// gets the whole asset with `200`, as RFC 9110 §14.2 allows.
///
/// # Large assets
///
/// The hashes are computed during constant evaluation, which rustc stops
/// with an error (the deny-by-default lint `long_running_const_eval`)
/// when one evaluation runs very long: past about 1 MiB of bytes in one
/// asset, its gzip variant included (Rust 1.85 to 1.95). A firmware with larger
/// assets can `#![allow(long_running_const_eval)]`, or give the tags
/// itself with [`with_etags`](Self::with_etags).
///
/// # Examples
///
/// A table of assets in a `static`, looked up by path:
///
/// ```
/// use ringstream_embedded::embedded_io_async::{Read, Write};
/// use ringstream_embedded::http::{App, Asset, Error, Request, Responder, Sent};
///
/// // In firmware: `include_bytes!("../web/app.js")`, and
/// // `include_bytes!("../web/app.js.gz")` made by `gzip -9n`.
/// # static APP_JS_GZ: &[u8] = &[
/// #     0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x4b, 0xce, 0xcf, 0x2b, 0xce,
/// #     0xcf, 0x49, 0xd5, 0xcb, 0xc9, 0x4f, 0xd7, 0x50, 0xcf, 0xc8, 0x54, 0xd7, 0x04, 0x00, 0xb0,
/// #     0x38, 0xc4, 0x57, 0x11, 0x00, 0x00, 0x00,
/// # ];
/// static ASSETS: [Asset; 2] = [
///     Asset::new("/", "text/html; charset=utf-8", b"<h1>hello</h1>"),
///     Asset::new("/app.js", "text/javascript", b"console.log('hi')")
///         .with_gzip(APP_JS_GZ),
/// ];
///
/// struct Device;
///
/// impl App for Device {
///     async fn handle<IO: Read + Write>(
///         &self,
///         request: &Request<'_>,
///         responder: &mut Responder<'_, IO>,
///     ) -> Result<Sent, Error<IO::Error>> {
///         match Asset::find(&ASSETS, request.path()) {
///             Some(asset) => {
///                 let cache = [("cache-control", &b"max-age=3600"[..])];
///                 asset.serve(request, responder, &cache).await
///             }
///             None => responder.send(404, &[], b"").await,
///         }
///     }
/// }
///
/// // The tags were computed when the program was built.
/// const INDEX: Asset = Asset::new("/", "text/html", b"<h1>hello</h1>");
/// assert_eq!(INDEX.etag().len(), 18);
/// assert_ne!(ASSETS[1].gzip_etag(), Some(ASSETS[1].etag()));
/// ```
#[derive(Clone, Copy)]
pub struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
    gzip: Option<&'static [u8]>,
    etag: [u8; ETAG_LEN],
    gzip_etag: [u8; ETAG_LEN],
}

impl Asset {
    /// The asset at `path` (compared exactly with the request path by
    /// [`find`](Self::find)), of type `content_type`, made of `body`; its
    /// entity-tag is computed from `body`, at compile time when the asset
    /// is a `const` or a `static`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::http::Asset;
    ///
    /// const EMPTY: Asset = Asset::new("/empty", "text/plain", b"");
    /// // FNV-1a of nothing is its offset basis.
    /// assert_eq!(EMPTY.etag(), "\"cbf29ce484222325\"");
    /// assert_eq!(EMPTY.gzip(), None);
    /// ```
    pub const fn new(path: &'static str, content_type: &'static str, body: &'static [u8]) -> Asset {
        Asset {
            path,
            content_type,
            body,
            gzip: None,
            etag: etag_of(body),
            gzip_etag: [0; ETAG_LEN],
        }
    }

    /// The same asset with `gzip`, the gzip-compressed form of its bytes
    /// (made when the firmware is built, with `gzip -9n`), served to a
    /// client that accepts gzip; its own tag is computed from `gzip`.
    ///
    /// # Examples
    ///
    /// See [`Asset`].
    pub const fn with_gzip(self, gzip: &'static [u8]) -> Asset {
        Asset {
            gzip: Some(gzip),
            gzip_etag: etag_of(gzip),
            ..self
        }
    }

    /// The same asset with caller-given entity-tags — 16 hexadecimal
    /// digits of the bytes' and of the gzip variant's own (a build
    /// number, a hash from the build) — instead of computed ones, for an
    /// asset too large to hash during constant evaluation. Call it after
    /// [`with_gzip`](Self::with_gzip), which computes the variant's tag.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::http::Asset;
    ///
    /// const FIRMWARE_PAGE: Asset = Asset::new("/", "text/html", b"<p>v1.2</p>")
    ///     .with_etags(*b"0000000000010200", *b"0000000000010201");
    /// assert_eq!(FIRMWARE_PAGE.etag(), "\"0000000000010200\"");
    /// ```
    ///
    /// # Panics
    ///
    /// If a tag is not 16 ASCII hexadecimal digits; in a `const`, that is
    /// a compile error.
    pub const fn with_etags(self, identity: [u8; 16], gzip: [u8; 16]) -> Asset {
        Asset {
            etag: quoted(identity),
            gzip_etag: quoted(gzip),
            ..self
        }
    }

    /// The asset whose path is `path` among `assets`, the first one if
    /// several have it.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::http::Asset;
    ///
    /// static ASSETS: [Asset; 2] = [
    ///     Asset::new("/", "text/html", b"<h1>hello</h1>"),
    ///     Asset::new("/style.css", "text/css", b"h1 { color: teal }"),
    /// ];
    /// assert_eq!(Asset::find(&ASSETS, "/style.css").map(Asset::content_type), Some("text/css"));
    /// assert!(Asset::find(&ASSETS, "/missing").is_none());
    /// ```
    pub fn find<'a>(assets: &'a [Asset], path: &str) -> Option<&'a Asset> {
        assets.iter().find(|asset| asset.path == path)
    }

    /// The path it is served at.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::http::Asset;
    ///
    /// const INDEX: Asset = Asset::new("/", "text/html", b"<h1>hello</h1>");
    /// assert_eq!(INDEX.path(), "/");
    /// ```
    pub const fn path(&self) -> &'static str {
        self.path
    }

    /// Its `Content-Type`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::http::Asset;
    ///
    /// const STYLE: Asset = Asset::new("/style.css", "text/css", b"h1 { color: teal }");
    /// assert_eq!(STYLE.content_type(), "text/css");
    /// ```
    pub const fn content_type(&self) -> &'static str {
        self.content_type
    }

    /// Its bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::http::Asset;
    ///
    /// const INDEX: Asset = Asset::new("/", "text/html", b"<h1>hello</h1>");
    /// assert_eq!(INDEX.body(), b"<h1>hello</h1>");
    /// ```
    pub const fn body(&self) -> &'static [u8] {
        self.body
    }

    /// Its gzip variant, if it has one.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::http::Asset;
    ///
    /// // In firmware, `include_bytes!("index.html.gz")`.
    /// const GZIP: &[u8] = b"\x1f\x8b\x08\x00";
    /// const INDEX: Asset = Asset::new("/", "text/html", b"<h1>hello</h1>").with_gzip(GZIP);
    /// assert_eq!(INDEX.gzip(), Some(GZIP));
    /// assert_eq!(Asset::new("/", "text/html", b"").gzip(), None);
    /// ```
    pub const fn gzip(&self) -> Option<&'static [u8]> {
        self.gzip
    }

    /// The strong entity-tag of its bytes, quotes included.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::http::{Asset, ETAG_LEN};
    ///
    /// const INDEX: Asset = Asset::new("/", "text/html", b"<h1>hello</h1>");
    /// // A strong tag: 16 hexadecimal digits in quotes.
    /// assert_eq!(INDEX.etag().len(), ETAG_LEN);
    /// assert!(INDEX.etag().starts_with('"') && INDEX.etag().ends_with('"'));
    /// ```
    pub const fn etag(&self) -> &str {
        tag_str(&self.etag)
    }

    /// The strong entity-tag of its gzip variant, quotes included.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::http::Asset;
    ///
    /// const INDEX: Asset = Asset::new("/", "text/html", b"<h1>hello</h1>").with_gzip(b"\x1f\x8b");
    /// // The gzip variant has a tag of its own.
    /// assert_ne!(INDEX.gzip_etag(), Some(INDEX.etag()));
    /// assert_eq!(Asset::new("/", "text/html", b"").gzip_etag(), None);
    /// ```
    pub const fn gzip_etag(&self) -> Option<&str> {
        match self.gzip {
            Some(_) => Some(tag_str(&self.gzip_etag)),
            None => None,
        }
    }

    /// Answers `request` with this asset: `200` with the bytes or their
    /// gzip variant, `304`, `412` or `405`, as the type's documentation
    /// says. `fields` follow the asset's own fields on `200` and `304`
    /// (RFC 9110 §15.4.5 asks a `304` to carry the `Cache-Control` and
    /// `Vary` the `200` would); the core writes the framing fields and
    /// drops any among them.
    ///
    /// # Examples
    ///
    /// See [`Asset`].
    ///
    /// # Errors
    ///
    /// Those of [`Responder::start`], [`Responder::write_all`] and
    /// [`Responder::finish`]: [`Error::Misuse`] when a response was
    /// already started, [`Error::Response`] for a field the core refuses,
    /// an I/O error or [`Error::TimedOut`] while sending.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe (see [`Responder::send`]).
    pub async fn serve<IO: Read + Write>(
        &self,
        request: &Request<'_>,
        responder: &mut Responder<'_, IO>,
        fields: &[(&str, &[u8])],
    ) -> Result<Sent, Error<IO::Error>> {
        if !matches!(request.method(), "GET" | "HEAD") {
            let fields = [
                ("content-type", &b"text/plain; charset=utf-8"[..]),
                ("allow", &b"GET, HEAD"[..]),
            ];
            return responder
                .send(405, &fields, b"405 Method Not Allowed\n")
                .await;
        }
        // The representation: the gzip variant when the client accepts
        // gzip (the core weighs the q-values), else the bytes themselves.
        let gzip = self.gzip.filter(|_| {
            let accept = request.field("accept-encoding");
            !negotiate::acceptable_codings(accept, &[ContentCoding::Gzip]).is_empty()
        });
        let (body, etag) = match gzip {
            Some(gzip) => (gzip, tag_str(&self.gzip_etag)),
            None => (self.body, tag_str(&self.etag)),
        };
        let vary = self.gzip.map(|_| ("vary", &b"Accept-Encoding"[..]));
        // RFC 9110 §13.2.2: `If-Match`, then `If-None-Match`.
        if let Some(value) = request.field("if-match") {
            if !negotiate::etag_list_matches(value, etag, false) {
                let own = [("etag", etag.as_bytes())];
                let text = [("content-type", &b"text/plain; charset=utf-8"[..])];
                let all = own.into_iter().chain(vary).chain(text);
                let body = b"412 Precondition Failed\n";
                responder
                    .start_with(412, all, Some(body.len() as u64))
                    .await?;
                responder.write_all(body).await?;
                return responder.finish().await;
            }
        }
        let not_modified = request
            .field("if-none-match")
            .is_some_and(|value| negotiate::etag_list_matches(value, etag, true));
        let own = [
            Some(("content-type", self.content_type.as_bytes())),
            Some(("etag", etag.as_bytes())),
            gzip.map(|_| ("content-encoding", ContentCoding::Gzip.token().as_bytes())),
            vary,
        ];
        let all = own.into_iter().flatten().chain(fields.iter().copied());
        // A `304` carries no body; the core decides what length it
        // advertises (none: the length is the `200`'s business).
        let status = if not_modified { 304 } else { 200 };
        responder
            .start_with(status, all, Some(body.len() as u64))
            .await?;
        if !not_modified {
            responder.write_all(body).await?;
        }
        responder.finish().await
    }
}

/// The path, type, lengths and tags; not the bytes, which may be many.
impl fmt::Debug for Asset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Asset")
            .field("path", &self.path)
            .field("content_type", &self.content_type)
            .field("len", &self.body.len())
            .field("etag", &self.etag())
            .field("gzip_len", &self.gzip.map(<[u8]>::len))
            .field("gzip_etag", &self.gzip_etag())
            .finish()
    }
}

/// The strong entity-tag of `bytes`: their 64-bit FNV-1a hash in
/// lowercase hexadecimal, between double quotes.
const fn etag_of(bytes: &[u8]) -> [u8; ETAG_LEN] {
    // Eight bytes a turn: constant evaluation counts the steps it takes,
    // and this is the shortest walk it allows (no index, no bound check).
    let mut hash = FNV_OFFSET;
    let mut rest = bytes;
    while let [a, b, c, d, e, f, g, h, tail @ ..] = rest {
        hash = (hash ^ *a as u64).wrapping_mul(FNV_PRIME);
        hash = (hash ^ *b as u64).wrapping_mul(FNV_PRIME);
        hash = (hash ^ *c as u64).wrapping_mul(FNV_PRIME);
        hash = (hash ^ *d as u64).wrapping_mul(FNV_PRIME);
        hash = (hash ^ *e as u64).wrapping_mul(FNV_PRIME);
        hash = (hash ^ *f as u64).wrapping_mul(FNV_PRIME);
        hash = (hash ^ *g as u64).wrapping_mul(FNV_PRIME);
        hash = (hash ^ *h as u64).wrapping_mul(FNV_PRIME);
        rest = tail;
    }
    while let [a, tail @ ..] = rest {
        hash = (hash ^ *a as u64).wrapping_mul(FNV_PRIME);
        rest = tail;
    }
    let mut digits = [0u8; 16];
    let mut d = 0;
    while d < 16 {
        let nibble = (hash >> (60 - 4 * d)) & 0xf;
        digits[d] = b"0123456789abcdef"[nibble as usize];
        d += 1;
    }
    quoted(digits)
}

/// `digits` between double quotes; panics (a compile error in a `const`)
/// unless they are ASCII hexadecimal digits, so the tag is valid text.
const fn quoted(digits: [u8; 16]) -> [u8; ETAG_LEN] {
    let mut tag = [b'"'; ETAG_LEN];
    let mut d = 0;
    while d < 16 {
        assert!(
            digits[d].is_ascii_hexdigit(),
            "an entity-tag is 16 hexadecimal digits"
        );
        tag[d + 1] = digits[d];
        d += 1;
    }
    tag
}

/// A tag as text: it is ASCII by construction.
const fn tag_str(tag: &[u8; ETAG_LEN]) -> &str {
    match core::str::from_utf8(tag) {
        Ok(tag) => tag,
        Err(_) => "\"\"",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The FNV-1a test vectors of its authors (64-bit, "a" and "foobar").
    #[test]
    fn etags_are_fnv1a_64_in_hex() {
        assert_eq!(&etag_of(b"a"), b"\"af63dc4c8601ec8c\"");
        assert_eq!(&etag_of(b"foobar"), b"\"85944171f73967e8\"");
        // Past the eight-byte turns: 8 + 1 bytes.
        assert_eq!(&etag_of(b"foobarbaz"), &etag_of_bytewise(b"foobarbaz"));
        for len in 0..20 {
            let bytes = &b"the quick brown fox jumps"[..len];
            assert_eq!(etag_of(bytes), etag_of_bytewise(bytes), "{len}");
        }
    }

    /// The same hash, one byte a turn.
    fn etag_of_bytewise(bytes: &[u8]) -> [u8; ETAG_LEN] {
        let hash = bytes.iter().fold(FNV_OFFSET, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(FNV_PRIME)
        });
        let mut digits = [0u8; 16];
        for (d, digit) in digits.iter_mut().enumerate() {
            *digit = b"0123456789abcdef"[((hash >> (60 - 4 * d)) & 0xf) as usize];
        }
        quoted(digits)
    }
}
