//! `Content-Type` by file extension: the table of the `mime_guess` crate,
//! a few deliberate choices of ringstream's ahead of it, and `charset`
//! on text types.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{PoisonError, RwLock};

/// The type served for a name whose extension is not in the table.
pub const DEFAULT_CONTENT_TYPE: &str = "application/octet-stream";

/// The entries where ringstream answers differently from the table: the
/// current registrations of JavaScript modules (RFC 9239) and fonts
/// (RFC 8081), and source maps, which are JSON.
const PREFERRED: [(&str, &str); 4] = [
    ("mjs", "text/javascript; charset=utf-8"),
    ("map", "application/json"),
    ("woff", "font/woff"),
    ("otf", "font/otf"),
];

/// The `Content-Type` for a file name, chosen by its extension (the part
/// after the last `.`, compared case-insensitively). Unknown or missing
/// extensions give [`DEFAULT_CONTENT_TYPE`].
///
/// The table is the one of the [`mime_guess`] crate (about 1,400
/// extensions), with four entries of ringstream's own ahead of it: `mjs`
/// is `text/javascript` (RFC 9239), `woff` and `otf` are `font/woff` and
/// `font/otf` (RFC 8081), and `map` (a source map) is `application/json`.
/// Every `text/*` type carries `; charset=utf-8`; other types
/// (`application/json`, `image/svg+xml`, …) are sent bare.
///
/// A [`ServeDir`](super::ServeDir) answers with this type unless
/// [`ServeDir::mime_type`](super::ServeDir::mime_type) set another one for
/// the extension.
///
/// # Examples
///
/// ```
/// use std::path::Path;
/// use ringstream::fs::content_type;
///
/// assert_eq!(content_type(Path::new("index.HTML")), "text/html; charset=utf-8");
/// assert_eq!(content_type(Path::new("app.mjs")), "text/javascript; charset=utf-8");
/// assert_eq!(content_type(Path::new("film.mp4")), "video/mp4");
/// assert_eq!(content_type(Path::new("README.md")), "text/markdown; charset=utf-8");
/// assert_eq!(content_type(Path::new("blob")), "application/octet-stream");
/// ```
pub fn content_type(path: &Path) -> &'static str {
    path.extension()
        .and_then(|e| e.to_str())
        .map_or(DEFAULT_CONTENT_TYPE, for_extension)
}

/// The `Content-Type` for an extension given without its dot.
fn for_extension(extension: &str) -> &'static str {
    if let Some((_, preferred)) = PREFERRED
        .iter()
        .find(|(e, _)| e.eq_ignore_ascii_case(extension))
    {
        return preferred;
    }
    match mime_guess::from_ext(extension).first_raw() {
        None => DEFAULT_CONTENT_TYPE,
        Some(raw) if is_text(raw) => with_utf8_charset(raw),
        Some(raw) => raw,
    }
}

fn is_text(raw: &str) -> bool {
    raw.get(..5)
        .is_some_and(|top| top.eq_ignore_ascii_case("text/"))
}

/// `RAW; charset=utf-8`, for a type of the table.
///
/// The common ones are spelled out; any other is formatted on first use
/// and kept for the life of the process, as the `&'static str` the table
/// gives out. Only types of the compiled-in table reach this (no request
/// data), so what is kept is bounded by the table's few dozen text types.
fn with_utf8_charset(raw: &'static str) -> &'static str {
    match raw {
        "text/html" => "text/html; charset=utf-8",
        "text/css" => "text/css; charset=utf-8",
        "text/javascript" => "text/javascript; charset=utf-8",
        "text/plain" => "text/plain; charset=utf-8",
        "text/csv" => "text/csv; charset=utf-8",
        "text/xml" => "text/xml; charset=utf-8",
        "text/markdown" => "text/markdown; charset=utf-8",
        _ => interned_with_charset(raw),
    }
}

fn interned_with_charset(raw: &'static str) -> &'static str {
    static FORMATTED: RwLock<BTreeMap<&'static str, &'static str>> = RwLock::new(BTreeMap::new());
    if let Some(&value) = FORMATTED
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(raw)
    {
        return value;
    }
    let mut formatted = FORMATTED.write().unwrap_or_else(PoisonError::into_inner);
    formatted
        .entry(raw)
        .or_insert_with(|| Box::leak(format!("{raw}; charset=utf-8").into_boxed_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(name: &str) -> &'static str {
        content_type(Path::new(name))
    }

    // The types the built-in table of earlier versions gave are kept.
    #[test]
    fn common_web_types() {
        for (name, expected) in [
            ("index.html", "text/html; charset=utf-8"),
            ("index.htm", "text/html; charset=utf-8"),
            ("a.css", "text/css; charset=utf-8"),
            ("a.js", "text/javascript; charset=utf-8"),
            ("a.mjs", "text/javascript; charset=utf-8"),
            ("a.json", "application/json"),
            ("a.js.map", "application/json"),
            ("a.txt", "text/plain; charset=utf-8"),
            ("a.csv", "text/csv; charset=utf-8"),
            ("a.xml", "text/xml; charset=utf-8"),
            ("a.svg", "image/svg+xml"),
            ("a.png", "image/png"),
            ("a.jpg", "image/jpeg"),
            ("a.jpeg", "image/jpeg"),
            ("a.gif", "image/gif"),
            ("a.webp", "image/webp"),
            ("a.ico", "image/x-icon"),
            ("a.wasm", "application/wasm"),
            ("a.woff2", "font/woff2"),
            ("a.pdf", "application/pdf"),
        ] {
            assert_eq!(of(name), expected, "{name}");
        }
    }

    #[test]
    fn types_beyond_the_old_table() {
        for (name, expected) in [
            ("a.mp4", "video/mp4"),
            ("a.mp3", "audio/mpeg"),
            ("a.webm", "video/webm"),
            ("a.woff", "font/woff"),
            ("a.otf", "font/otf"),
            ("a.avif", "image/avif"),
            ("a.zip", "application/zip"),
            ("a.md", "text/markdown; charset=utf-8"),
            ("a.ics", "text/calendar; charset=utf-8"),
            ("a.vtt", "text/vtt; charset=utf-8"),
        ] {
            assert_eq!(of(name), expected, "{name}");
        }
    }

    #[test]
    fn case_insensitive_and_unknown() {
        assert_eq!(of("A.MP4"), "video/mp4");
        assert_eq!(of("A.Md"), "text/markdown; charset=utf-8");
        assert_eq!(of("A.MJS"), "text/javascript; charset=utf-8");
        assert_eq!(of("blob"), DEFAULT_CONTENT_TYPE);
        assert_eq!(of("blob."), DEFAULT_CONTENT_TYPE);
        assert_eq!(of(".env"), DEFAULT_CONTENT_TYPE);
        assert_eq!(of("a.no-such-extension"), DEFAULT_CONTENT_TYPE);
    }

    // A text type formatted on first use is the same string every time.
    #[test]
    fn uncommon_text_types_are_formatted_once() {
        let first = of("a.ics");
        let second = of("b.ICS");
        assert_eq!(first, "text/calendar; charset=utf-8");
        assert!(std::ptr::eq(first, second));
    }
}
