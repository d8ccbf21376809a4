//! The built-in `Content-Type` table.

use std::path::Path;

/// The type served for a name whose extension is not in the table.
pub const DEFAULT_CONTENT_TYPE: &str = "application/octet-stream";

/// The `Content-Type` for a file name, chosen by its extension
/// (case-insensitively) from a small built-in table; text types carry
/// `; charset=utf-8`. Unknown or missing extensions give
/// [`DEFAULT_CONTENT_TYPE`].
///
/// | extension | type |
/// |---|---|
/// | `html`, `htm` | `text/html; charset=utf-8` |
/// | `css` | `text/css; charset=utf-8` |
/// | `js`, `mjs` | `text/javascript; charset=utf-8` |
/// | `json`, `map` | `application/json` |
/// | `txt` | `text/plain; charset=utf-8` |
/// | `csv` | `text/csv; charset=utf-8` |
/// | `xml` | `text/xml; charset=utf-8` |
/// | `svg` | `image/svg+xml` |
/// | `png`, `jpg`, `jpeg`, `gif`, `webp` | `image/…` |
/// | `ico` | `image/x-icon` |
/// | `wasm` | `application/wasm` |
/// | `woff2` | `font/woff2` |
/// | `pdf` | `application/pdf` |
///
/// # Examples
///
/// ```
/// use std::path::Path;
/// use ringstream::fs::content_type;
///
/// assert_eq!(content_type(Path::new("index.HTML")), "text/html; charset=utf-8");
/// assert_eq!(content_type(Path::new("app.mjs")), "text/javascript; charset=utf-8");
/// assert_eq!(content_type(Path::new("blob")), "application/octet-stream");
/// ```
pub fn content_type(path: &Path) -> &'static str {
    let Some(ext) = path.extension().and_then(|e| e.to_str()) else {
        return DEFAULT_CONTENT_TYPE;
    };
    let mut lower = [0u8; 8];
    let Some(slot) = lower.get_mut(..ext.len()) else {
        return DEFAULT_CONTENT_TYPE;
    };
    slot.copy_from_slice(ext.as_bytes());
    slot.make_ascii_lowercase();
    match &*slot {
        b"html" | b"htm" => "text/html; charset=utf-8",
        b"css" => "text/css; charset=utf-8",
        b"js" | b"mjs" => "text/javascript; charset=utf-8",
        b"json" | b"map" => "application/json",
        b"txt" => "text/plain; charset=utf-8",
        b"csv" => "text/csv; charset=utf-8",
        b"xml" => "text/xml; charset=utf-8",
        b"svg" => "image/svg+xml",
        b"png" => "image/png",
        b"jpg" | b"jpeg" => "image/jpeg",
        b"gif" => "image/gif",
        b"webp" => "image/webp",
        b"ico" => "image/x-icon",
        b"wasm" => "application/wasm",
        b"woff2" => "font/woff2",
        b"pdf" => "application/pdf",
        _ => DEFAULT_CONTENT_TYPE,
    }
}
