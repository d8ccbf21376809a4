//! [`Selected`]: the representation chosen to answer a request.

use ringstream_core::h1::negotiate::ContentCoding;

/// A file chosen to answer the request, open and measured.
pub(crate) struct Selected {
    /// The open file.
    pub(crate) file: tokio::fs::File,
    /// Its length in bytes when it was opened.
    pub(crate) len: u64,
    /// Its strong entity-tag, quotes included.
    pub(crate) etag: String,
    /// Its modification time in seconds since the Unix epoch, if known.
    pub(crate) last_modified: Option<u64>,
    /// The content coding of a precompressed variant; `None` for the file
    /// itself.
    pub(crate) encoding: Option<ContentCoding>,
    /// Whether the file has a variant on disk (chosen or not), so the
    /// response depends on `Accept-ContentCoding` and says so with `Vary`.
    pub(crate) has_variant: bool,
}
