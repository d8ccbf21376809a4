//! Step 2: the representation to send — a precompressed variant the client
//! accepts (`FILE.br`, `FILE.gz`), or the file itself — opened and
//! measured.

use std::io;
use std::path::Path;

use http::header::{self, HeaderMap, HeaderValue};

use super::resolve::{regular_file_in, Target};
use super::selected::Selected;
use super::{validators, Settings};
use ringstream_core::h1::negotiate::{self, ContentCoding};

/// Chooses and opens the representation of `target`: the variant with the
/// best rank in `Accept-ContentCoding` among those enabled in `settings` that
/// exist as regular files below the root, or else the file itself.
pub(crate) async fn select(
    settings: &Settings,
    target: &Target,
    headers: &HeaderMap,
) -> io::Result<Selected> {
    let offered = offered(settings);
    let mut has_variant = false;
    let mut variant = None;
    if !offered.is_empty() {
        let acceptable = negotiate::acceptable_codings(
            headers
                .get(header::ACCEPT_ENCODING)
                .map(HeaderValue::as_bytes),
            &offered,
        );
        for &encoding in &offered {
            let mut name = target.requested.clone().into_os_string();
            name.push(encoding.suffix());
            let Some(path) = regular_file_in(&target.root, Path::new(&name)).await else {
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
    let mut selected = match variant {
        Some((_, encoding, path)) => open(&path, Some(encoding)).await?,
        None => open(&target.resolved, None).await?,
    };
    selected.has_variant = has_variant;
    Ok(selected)
}

/// The codings enabled in `settings`, Brotli first (it wins ties).
fn offered(settings: &Settings) -> Vec<ContentCoding> {
    let mut offered = Vec::with_capacity(2);
    if settings.br {
        offered.push(ContentCoding::Br);
    }
    if settings.gzip {
        offered.push(ContentCoding::Gzip);
    }
    offered
}

/// Opens `path` and takes its length and validators from the open file, so
/// they describe the bytes that will be read.
async fn open(path: &Path, encoding: Option<ContentCoding>) -> io::Result<Selected> {
    let file = tokio::fs::File::open(path).await?;
    let meta = file.metadata().await?;
    if !meta.is_file() {
        return Err(io::Error::from(io::ErrorKind::NotFound));
    }
    let (etag, last_modified) = validators::of(&meta);
    Ok(Selected {
        file,
        len: meta.len(),
        etag,
        last_modified,
        encoding,
        has_variant: false,
    })
}
