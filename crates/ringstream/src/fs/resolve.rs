//! Step 1: the request path to a regular file below the root.
//!
//! The path is decoded by [`path`], joined to the canonicalized root and
//! canonicalized itself, so every symlink is resolved before the
//! confinement check. A directory becomes its index file, or a redirect to
//! the slash form when the request lacked the trailing slash.

use std::fs::Metadata;
use std::io;
use std::path::{Path, PathBuf};

use http::{Response, Uri};

use super::answers::{bad_request, forbidden, io_error, not_found, redirect_to_slash};
use super::path::{self, PathError};
use super::{FileBody, Settings};

/// The regular file a request names.
pub(crate) struct Target {
    /// The root, canonicalized.
    pub(crate) root: PathBuf,
    /// The path asked for, below `root` but not canonicalized: its name
    /// gives the `Content-Type`, and its variants are `NAME.br`/`NAME.gz`.
    pub(crate) requested: PathBuf,
    /// `requested` with every symlink resolved; a regular file below `root`.
    pub(crate) resolved: PathBuf,
}

/// Finds the file `uri` names below the root of `settings`, or the response
/// that refuses it: `400` for a malformed path, `404` for one that is not
/// served or missing, `403` when the file system denies access, and `301`
/// for a directory requested without its trailing slash.
pub(crate) async fn locate(settings: &Settings, uri: &Uri) -> Result<Target, Response<FileBody>> {
    let relative = match path::decode_request_path(uri.path(), &settings.prefix, settings.hidden) {
        Ok(relative) => relative,
        Err(PathError::Malformed) => return Err(bad_request()),
        Err(PathError::NotServed) => return Err(not_found()),
    };
    let Ok(root) = tokio::fs::canonicalize(&settings.root).await else {
        tracing::warn!(root = %settings.root.display(), "static root is not accessible");
        return Err(not_found());
    };

    let mut requested = root.join(&relative.path);
    let (mut resolved, mut meta) = inspect(&root, &requested).await?;
    if meta.is_dir() {
        if !relative.trailing_slash {
            return Err(redirect_to_slash(uri));
        }
        let Some(index) = &settings.index else {
            return Err(not_found());
        };
        requested = requested.join(index);
        (resolved, meta) = inspect(&root, &requested).await?;
    }
    if !meta.is_file() {
        return Err(not_found());
    }
    Ok(Target {
        root,
        requested,
        resolved,
    })
}

/// [`resolve`]s `path` and reads the metadata of what it names.
async fn inspect(root: &Path, path: &Path) -> Result<(PathBuf, Metadata), Response<FileBody>> {
    let resolved = resolve(root, path).await?;
    match tokio::fs::metadata(&resolved).await {
        Ok(meta) => Ok((resolved, meta)),
        Err(e) => Err(io_error(&e)),
    }
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
pub(crate) async fn regular_file_in(root: &Path, path: &Path) -> Option<PathBuf> {
    let resolved = tokio::fs::canonicalize(path).await.ok()?;
    if !resolved.starts_with(root) {
        return None;
    }
    let meta = tokio::fs::metadata(&resolved).await.ok()?;
    meta.is_file().then_some(resolved)
}
