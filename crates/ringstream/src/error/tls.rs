//! [`TlsError`]: why a TLS configuration could not be built.

use std::error::Error as StdError;
use std::fmt;
use std::path::Path;

/// A TLS configuration could not be built or reloaded: a file that cannot
/// be read, PEM that does not parse, a key that does not fit its
/// certificate. The message says which; the source, when there is one,
/// is the underlying error.
///
/// # Examples
///
/// ```
/// use ringstream::server::tls::TlsConfig;
///
/// let e = TlsConfig::from_pem_files("/nonexistent/cert.pem", "key.pem").unwrap_err();
/// assert!(e.to_string().contains("/nonexistent/cert.pem"), "{e}");
/// ```
#[derive(Debug)]
pub struct TlsError {
    message: String,
    source: Option<Box<dyn StdError + Send + Sync>>,
}

impl TlsError {
    pub(crate) fn new(message: impl Into<String>) -> TlsError {
        TlsError {
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn io(path: &Path, e: std::io::Error) -> TlsError {
        TlsError {
            message: format!("cannot read {}: {e}", path.display()),
            source: Some(Box::new(e)),
        }
    }

    pub(crate) fn pem(what: &str, e: rustls_pki_types::pem::Error) -> TlsError {
        TlsError {
            message: format!("{what}: {e}"),
            source: Some(Box::new(e)),
        }
    }

    pub(crate) fn pem_file(path: &Path, e: rustls_pki_types::pem::Error) -> TlsError {
        TlsError {
            message: format!("{}: {e}", path.display()),
            source: Some(Box::new(e)),
        }
    }

    pub(crate) fn rustls(what: &str, e: rustls::Error) -> TlsError {
        TlsError {
            message: format!("{what}: {e}"),
            source: Some(Box::new(e)),
        }
    }
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl StdError for TlsError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn StdError + 'static))
    }
}
