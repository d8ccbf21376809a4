//! Turning a request path into a path below the root, or refusing to.

use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

/// Why a request path was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathError {
    /// The path cannot be decoded: a bad `%` escape, invalid UTF-8 or a
    /// NUL byte. Answered with `400`.
    Malformed,
    /// The path names something that is not served: outside the mount
    /// prefix, a `.` or `..` segment, an encoded `/` or a backslash, or a
    /// hidden segment. Answered with `404`.
    NotServed,
}

/// A decoded request path, relative to the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RelativePath {
    /// The segments joined with the host separator; empty for the root.
    pub(crate) path: PathBuf,
    /// Whether the request path ended in `/` (or was the mount point with
    /// nothing after it, which counts as "no").
    pub(crate) trailing_slash: bool,
}

/// Decodes `raw` (the request's path, still percent-encoded), after
/// removing `prefix` (already normalised to `/x/y` form, or empty).
///
/// The path is split on `/` first and each segment percent-decoded after,
/// so `%2F` can never introduce a separator; empty segments (`//`) are
/// skipped. A segment is refused when it decodes to `.`, `..`, anything
/// containing `/`, `\` or NUL, anything the host would read as more than
/// one plain path component (a drive prefix on Windows), or — unless
/// `hidden` — anything beginning with `.`.
pub(crate) fn decode_request_path(
    raw: &str,
    prefix: &str,
    hidden: bool,
) -> Result<RelativePath, PathError> {
    let rest = raw.strip_prefix(prefix).ok_or(PathError::NotServed)?;
    if rest.is_empty() {
        return Ok(RelativePath {
            path: PathBuf::new(),
            trailing_slash: false,
        });
    }
    let rest = rest.strip_prefix('/').ok_or(PathError::NotServed)?;
    let mut path = PathBuf::new();
    for raw_segment in rest.split('/') {
        if raw_segment.is_empty() {
            continue;
        }
        let segment = percent_decode(raw_segment)?;
        if segment.contains(&0) {
            return Err(PathError::Malformed);
        }
        let text = std::str::from_utf8(&segment).map_err(|_| PathError::Malformed)?;
        if text == "." || text == ".." || text.contains(['/', '\\']) {
            return Err(PathError::NotServed);
        }
        if text.starts_with('.') && !hidden {
            return Err(PathError::NotServed);
        }
        let mut components = Path::new(text).components();
        match (components.next(), components.next()) {
            (Some(Component::Normal(_)), None) => {}
            _ => return Err(PathError::NotServed),
        }
        path.push(text);
    }
    Ok(RelativePath {
        path,
        trailing_slash: rest.is_empty() || rest.ends_with('/'),
    })
}

/// Percent-decodes one segment (RFC 3986 §2.1), borrowing it when it has
/// no escape. The decoding is the `percent-encoding` crate's; it passes a
/// `%` that starts no escape through as is, so the escapes are checked
/// here first: every `%` must be followed by two hex digits.
fn percent_decode(raw: &str) -> Result<Cow<'_, [u8]>, PathError> {
    let mut rest = raw.as_bytes();
    while let Some(at) = rest.iter().position(|&b| b == b'%') {
        match rest.get(at + 1..at + 3) {
            Some([hi, lo]) if hi.is_ascii_hexdigit() && lo.is_ascii_hexdigit() => {
                rest = rest.get(at + 3..).unwrap_or_default();
            }
            _ => return Err(PathError::Malformed),
        }
    }
    Ok(percent_encoding::percent_decode_str(raw).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(raw: &str, prefix: &str) -> (PathBuf, bool) {
        let r = decode_request_path(raw, prefix, false).expect(raw);
        (r.path, r.trailing_slash)
    }

    #[test]
    fn plain_paths() {
        assert_eq!(ok("/", ""), (PathBuf::new(), true));
        assert_eq!(ok("/a/b.txt", ""), (PathBuf::from("a/b.txt"), false));
        assert_eq!(ok("/sub/", ""), (PathBuf::from("sub"), true));
        assert_eq!(ok("/sub", ""), (PathBuf::from("sub"), false));
        assert_eq!(ok("//a//b", ""), (PathBuf::from("a/b"), false));
        assert_eq!(
            ok("/hello%20world.txt", ""),
            (PathBuf::from("hello world.txt"), false)
        );
        assert_eq!(ok("/caf%C3%A9", ""), (PathBuf::from("café"), false));
        assert_eq!(ok("/a..b", ""), (PathBuf::from("a..b"), false));
    }

    #[test]
    fn mount_prefix() {
        assert_eq!(ok("/static", "/static"), (PathBuf::new(), false));
        assert_eq!(ok("/static/", "/static"), (PathBuf::new(), true));
        assert_eq!(
            ok("/static/a.css", "/static"),
            (PathBuf::from("a.css"), false)
        );
        for raw in ["/staticx/a.css", "/other/a.css", "/", "/stat"] {
            assert_eq!(
                decode_request_path(raw, "/static", false),
                Err(PathError::NotServed)
            );
        }
    }

    // The classic traversal spellings never leave the root.
    #[test]
    fn traversal_is_refused() {
        for raw in [
            "/..",
            "/../outside.txt",
            "/a/../../outside.txt",
            "/%2e%2e/outside.txt",
            "/%2E%2E/outside.txt",
            "/.%2e/outside.txt",
            "/sub/..%2f..%2foutside.txt",
            "/sub/..%2F..%2Foutside.txt",
            "/..%5coutside.txt",
            "/a\\..\\b",
            "/.",
            "/./index.html",
            "/%2f/etc/passwd",
            "/.git/config",
            "/.env",
        ] {
            assert_eq!(
                decode_request_path(raw, "", false),
                Err(PathError::NotServed),
                "{raw}"
            );
        }
    }

    #[test]
    fn undecodable_paths_are_malformed() {
        for raw in [
            "/%00",
            "/a%00b",
            "/%zz",
            "/%4",
            "/%",
            "/%ff%fe",
            "/a%2",
            "/%4/b",
            "/%%41",
            "/%g0",
            "/%0g",
            "/%+1",
            "/ok/%2e%",
            "/%C3",
            "/%C3%28",
            "/%ED%A0%80",
            "/%C0%AE%C0%AE/outside.txt",
        ] {
            assert_eq!(
                decode_request_path(raw, "", false),
                Err(PathError::Malformed),
                "{raw}"
            );
        }
    }

    // One decoding only: `%25` is a literal `%`, so a double-encoded dot
    // or slash is a plain name, never a separator or a `..`.
    #[test]
    fn escapes_are_decoded_once() {
        assert_eq!(ok("/%252e%252e/x", ""), (PathBuf::from("%2e%2e/x"), false));
        assert_eq!(ok("/a%252fb", ""), (PathBuf::from("a%2fb"), false));
        assert_eq!(ok("/%41%62c", ""), (PathBuf::from("Abc"), false));
        assert_eq!(ok("/a+b", ""), (PathBuf::from("a+b"), false));
        for raw in ["/a%5cb", "/a%2Fb", "/%2e", "/%2E%2e", "/%2e%2e%2f"] {
            assert_eq!(
                decode_request_path(raw, "", false),
                Err(PathError::NotServed),
                "{raw}"
            );
        }
    }

    #[test]
    fn hidden_files_on_request() {
        let r = decode_request_path("/.well-known/x", "", true).unwrap();
        assert_eq!(r.path, PathBuf::from(".well-known/x"));
        assert_eq!(
            decode_request_path("/../x", "", true),
            Err(PathError::NotServed)
        );
    }
}
