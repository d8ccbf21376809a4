//! The server's TLS settings: [`TlsConfig`] and its builder.

use std::path::Path;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use rustls::crypto::CryptoProvider;
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};

use super::certs::{Certificates, Pem};
use crate::error::tls::TlsError;

/// The ALPN protocol of HTTP/1.1.
const HTTP_1_1: &[u8] = b"http/1.1";
/// The ALPN protocol of HTTP/2 over TLS.
#[cfg(feature = "http2")]
pub(crate) const H2: &[u8] = b"h2";

/// The ALPN protocols a configuration that names none gets, in the
/// server's order of preference: `h2` (with the `http2` feature), then
/// `http/1.1`.
fn default_alpn() -> Vec<Vec<u8>> {
    #[cfg(feature = "http2")]
    return vec![H2.to_vec(), HTTP_1_1.to_vec()];
    #[cfg(not(feature = "http2"))]
    return vec![HTTP_1_1.to_vec()];
}

/// The server's TLS settings, shared by every connection and reloadable
/// while they run. Clones share one configuration: a reload through any
/// of them is seen by all.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ringstream::server::tls::TlsConfig;
///
/// # let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
/// # let (cert_pem, key_pem) = (cert.cert.pem(), cert.signing_key.serialize_pem());
/// // `cert_pem` and `key_pem`: a certificate chain and its private key, as PEM.
/// let tls = TlsConfig::from_pem(cert_pem.as_bytes(), key_pem.as_bytes()).unwrap();
/// assert_eq!(tls.handshake_timeout(), TlsConfig::DEFAULT_HANDSHAKE_TIMEOUT);
/// assert_eq!(tls.current().alpn_protocols, [b"h2".to_vec(), b"http/1.1".to_vec()]);
///
/// // A clone is the same configuration, not a copy of it.
/// let shared = tls.clone();
/// let before = tls.current();
/// shared.reload().unwrap();
/// assert!(!std::sync::Arc::ptr_eq(&before, &tls.current()));
/// ```
#[derive(Clone, Debug)]
pub struct TlsConfig {
    inner: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    /// The configuration new connections are accepted with.
    current: RwLock<Arc<ServerConfig>>,
    /// What [`TlsConfig::reload`] builds it from again (`None` for a
    /// configuration given as a `rustls::ServerConfig`).
    source: Option<Source>,
    handshake_timeout: Duration,
    max_handshakes: usize,
}

/// Everything a configuration is built from, kept to build it again.
#[derive(Clone, Debug, Default)]
struct Source {
    default: Option<Pem>,
    names: Vec<(String, Pem)>,
    client_roots: Option<(Pem, bool)>,
}

impl Source {
    fn build(&self) -> Result<ServerConfig, TlsError> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let mut certificates = Certificates::default();
        if let Some(pem) = &self.default {
            certificates.set_default(pem.load(&provider)?);
        }
        for (name, pem) in &self.names {
            certificates.insert(name, pem.load(&provider)?);
        }
        if certificates.is_empty() {
            return Err(TlsError::new("no certificate configured"));
        }
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError::rustls("protocol versions", e))?;
        let builder = match &self.client_roots {
            None => builder.with_no_client_auth(),
            Some((pem, required)) => {
                let verifier = client_verifier(pem, *required, provider.clone())?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        let mut config = builder.with_cert_resolver(Arc::new(certificates));
        finish(&mut config)?;
        Ok(config)
    }
}

fn client_verifier(
    pem: &Pem,
    required: bool,
    provider: Arc<CryptoProvider>,
) -> Result<Arc<dyn rustls::server::danger::ClientCertVerifier>, TlsError> {
    let mut roots = RootCertStore::empty();
    for cert in super::certs::load_roots(pem)? {
        roots
            .add(cert)
            .map_err(|e| TlsError::rustls("a client CA certificate", e))?;
    }
    let builder = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
    let builder = if required {
        builder
    } else {
        builder.allow_unauthenticated()
    };
    builder
        .build()
        .map_err(|e| TlsError::new(format!("client certificate verifier: {e}")))
}

/// What every configuration gets: ALPN `h2` and `http/1.1` unless it names its
/// own protocols, and session tickets for resumed handshakes.
fn finish(config: &mut ServerConfig) -> Result<(), TlsError> {
    if config.alpn_protocols.is_empty() {
        config.alpn_protocols = default_alpn();
    }
    config.ticketer = rustls::crypto::aws_lc_rs::Ticketer::new()
        .map_err(|e| TlsError::rustls("session tickets", e))?;
    Ok(())
}

impl TlsConfig {
    /// The default deadline of a TLS handshake, from the first byte the
    /// client may send to the handshake's end.
    pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

    /// The default number of handshakes under way at once; further
    /// connections wait their turn (within their handshake deadline).
    pub const DEFAULT_MAX_HANDSHAKES: usize = 256;

    /// One certificate chain and its private key, from PEM files (the
    /// chain starts with the server's certificate). [`reload`](Self::reload)
    /// reads the files again.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::server::tls::TlsConfig;
    ///
    /// # let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    /// # let (cert_pem, key_pem) = (cert.cert.pem(), cert.signing_key.serialize_pem());
    /// let dir = std::env::temp_dir().join(format!("ringstream-doc-tls-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// std::fs::write(dir.join("cert.pem"), &cert_pem).unwrap();
    /// std::fs::write(dir.join("key.pem"), &key_pem).unwrap();
    ///
    /// let tls = TlsConfig::from_pem_files(dir.join("cert.pem"), dir.join("key.pem")).unwrap();
    /// assert!(!tls.current().alpn_protocols.is_empty());
    /// // A missing file is an error, not a panic.
    /// assert!(TlsConfig::from_pem_files(dir.join("none.pem"), dir.join("key.pem")).is_err());
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// [`TlsError`] when a file cannot be read or parsed, or the key does
    /// not fit the certificate.
    pub fn from_pem_files(
        cert: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Result<TlsConfig, TlsError> {
        TlsConfig::builder().certificate_files(cert, key).build()
    }

    /// One certificate chain and its private key, from PEM text.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::server::tls::TlsConfig;
    ///
    /// assert!(TlsConfig::from_pem(b"not a certificate", b"").is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// As [`from_pem_files`](Self::from_pem_files).
    pub fn from_pem(cert: &[u8], key: &[u8]) -> Result<TlsConfig, TlsError> {
        TlsConfig::builder().certificate_pem(cert, key).build()
    }

    /// A configuration built by hand: ALPN is set to `h2` and `http/1.1` when it
    /// names no protocol. [`reload`](Self::reload) has nothing to read
    /// again; [`replace`](Self::replace) swaps it.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ringstream::server::tls::TlsConfig;
    /// use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    ///
    /// # let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    /// # let (cert_der, key_der) = (cert.cert.der().to_vec(), cert.signing_key.serialize_der());
    /// // `cert_der` and `key_der`: a certificate and its PKCS #8 private key, DER.
    /// let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    /// let config = rustls::ServerConfig::builder_with_provider(provider)
    ///     .with_safe_default_protocol_versions()
    ///     .unwrap()
    ///     .with_no_client_auth()
    ///     .with_single_cert(
    ///         vec![CertificateDer::from(cert_der)],
    ///         PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key_der)),
    ///     )
    ///     .unwrap();
    /// let tls = TlsConfig::from_rustls(config);
    /// assert_eq!(tls.current().alpn_protocols, [b"h2".to_vec(), b"http/1.1".to_vec()]);
    /// // No files to read again.
    /// assert!(tls.reload().is_err());
    /// ```
    pub fn from_rustls(mut config: ServerConfig) -> TlsConfig {
        if config.alpn_protocols.is_empty() {
            config.alpn_protocols = default_alpn();
        }
        TlsConfig::with(config, None, TlsConfigBuilder::default())
    }

    /// A builder: several certificates chosen by server name (SNI),
    /// client certificates, the handshake's limits.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ringstream::server::tls::TlsConfig;
    ///
    /// # let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    /// # let (cert_pem, key_pem) = (cert.cert.pem(), cert.signing_key.serialize_pem());
    /// let tls = TlsConfig::builder()
    ///     .certificate_pem(cert_pem.as_bytes(), key_pem.as_bytes())
    ///     .handshake_timeout(Duration::from_secs(5))
    ///     .max_handshakes(64)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(tls.handshake_timeout(), Duration::from_secs(5));
    /// assert_eq!(tls.max_handshakes(), 64);
    /// ```
    pub fn builder() -> TlsConfigBuilder {
        TlsConfigBuilder::default()
    }

    fn with(config: ServerConfig, source: Option<Source>, limits: TlsConfigBuilder) -> TlsConfig {
        TlsConfig {
            inner: Arc::new(Shared {
                current: RwLock::new(Arc::new(config)),
                source,
                handshake_timeout: limits.handshake_timeout,
                max_handshakes: limits.max_handshakes,
            }),
        }
    }

    /// Builds the configuration again from its PEM files (or text), and
    /// accepts new connections with it. Open connections keep theirs. On
    /// an error the configuration in use stays.
    ///
    /// # Examples
    ///
    /// New certificates written over the old files:
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ringstream::server::tls::TlsConfig;
    ///
    /// let issue = || {
    ///     let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    ///     (cert.cert.pem(), cert.signing_key.serialize_pem())
    /// };
    /// let dir = std::env::temp_dir().join(format!("ringstream-doc-reload-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    /// let (cert_pem, key_pem) = issue();
    /// std::fs::write(&cert, cert_pem).unwrap();
    /// std::fs::write(&key, key_pem).unwrap();
    /// let tls = TlsConfig::from_pem_files(&cert, &key).unwrap();
    /// let old = tls.current();
    ///
    /// // Renewed on disk, then reloaded: new connections get the new one.
    /// let (cert_pem, key_pem) = issue();
    /// std::fs::write(&cert, cert_pem).unwrap();
    /// std::fs::write(&key, key_pem).unwrap();
    /// tls.reload().unwrap();
    /// assert!(!Arc::ptr_eq(&old, &tls.current()));
    ///
    /// // A broken file: the configuration in use stays.
    /// std::fs::write(&key, "garbage").unwrap();
    /// let current = tls.current();
    /// assert!(tls.reload().is_err());
    /// assert!(Arc::ptr_eq(&current, &tls.current()));
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// [`TlsError`] when a file cannot be read or parsed, a key does not
    /// fit its certificate, or the configuration was given as a
    /// `rustls::ServerConfig` (use [`replace`](Self::replace)).
    pub fn reload(&self) -> Result<(), TlsError> {
        let Some(source) = &self.inner.source else {
            return Err(TlsError::new(
                "a configuration given as a rustls::ServerConfig has no files to reload",
            ));
        };
        self.replace(source.build()?);
        Ok(())
    }

    /// Accepts new connections with `config` from now on (ALPN set as in
    /// [`from_rustls`](Self::from_rustls)).
    pub fn replace(&self, mut config: ServerConfig) {
        if config.alpn_protocols.is_empty() {
            config.alpn_protocols = default_alpn();
        }
        *self
            .inner
            .current
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(config);
    }

    /// The configuration new connections are accepted with.
    pub fn current(&self) -> Arc<ServerConfig> {
        self.inner
            .current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The deadline of a handshake.
    pub fn handshake_timeout(&self) -> Duration {
        self.inner.handshake_timeout
    }

    /// The most handshakes under way at once.
    pub fn max_handshakes(&self) -> usize {
        self.inner.max_handshakes
    }
}

/// Builds a [`TlsConfig`]; see [`TlsConfig::builder`].
///
/// # Examples
///
/// One certificate for `api.example.com`, another for every other name:
///
/// ```
/// use ringstream::server::tls::TlsConfig;
///
/// let issue = |name: &str| {
///     let cert = rcgen::generate_simple_self_signed(vec![name.into()]).unwrap();
///     (cert.cert.pem(), cert.signing_key.serialize_pem())
/// };
/// let (api_cert, api_key) = issue("api.example.com");
/// let (www_cert, www_key) = issue("www.example.com");
/// let tls = TlsConfig::builder()
///     .certificate_pem(www_cert.as_bytes(), www_key.as_bytes())
///     .sni_pem("api.example.com", api_cert.as_bytes(), api_key.as_bytes())
///     .build()
///     .unwrap();
/// assert_eq!(tls.max_handshakes(), TlsConfig::DEFAULT_MAX_HANDSHAKES);
/// ```
#[derive(Clone, Debug)]
pub struct TlsConfigBuilder {
    source: Source,
    handshake_timeout: Duration,
    max_handshakes: usize,
}

impl Default for TlsConfigBuilder {
    fn default() -> Self {
        TlsConfigBuilder {
            source: Source::default(),
            handshake_timeout: TlsConfig::DEFAULT_HANDSHAKE_TIMEOUT,
            max_handshakes: TlsConfig::DEFAULT_MAX_HANDSHAKES,
        }
    }
}

impl TlsConfigBuilder {
    /// The certificate for clients that name no server, or a name no
    /// other certificate is for: PEM files, read again on reload.
    pub fn certificate_files(mut self, cert: impl AsRef<Path>, key: impl AsRef<Path>) -> Self {
        self.source.default = Some(files(cert, key));
        self
    }

    /// [`certificate_files`](Self::certificate_files) from PEM text.
    pub fn certificate_pem(mut self, cert: &[u8], key: &[u8]) -> Self {
        self.source.default = Some(text(cert, key));
        self
    }

    /// The certificate for clients that ask for `name` (SNI); a name
    /// `*.example.com` stands for any one label in front of
    /// `example.com`. Names are matched without regard to case.
    pub fn sni_files(
        mut self,
        name: impl Into<String>,
        cert: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Self {
        self.source.names.push((name.into(), files(cert, key)));
        self
    }

    /// [`sni_files`](Self::sni_files) from PEM text.
    pub fn sni_pem(mut self, name: impl Into<String>, cert: &[u8], key: &[u8]) -> Self {
        self.source.names.push((name.into(), text(cert, key)));
        self
    }

    /// Asks clients for a certificate signed by one of the CA
    /// certificates in the PEM file `ca`; with `required`, a client
    /// without one fails the handshake, otherwise it is let in unnamed.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::server::tls::TlsConfig;
    ///
    /// # let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    /// # let (cert_pem, key_pem) = (cert.cert.pem(), cert.signing_key.serialize_pem());
    /// # let ca = rcgen::generate_simple_self_signed(vec!["clients".into()]).unwrap();
    /// # let dir = std::env::temp_dir().join(format!("ringstream-doc-ca-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # std::fs::write(dir.join("clients-ca.pem"), ca.cert.pem()).unwrap();
    /// // `clients-ca.pem`: the certificate of the CA that signs the clients'.
    /// let tls = TlsConfig::builder()
    ///     .certificate_pem(cert_pem.as_bytes(), key_pem.as_bytes())
    ///     .client_auth_file(dir.join("clients-ca.pem"), true)
    ///     .build()
    ///     .unwrap();
    /// # let _ = tls;
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn client_auth_file(mut self, ca: impl AsRef<Path>, required: bool) -> Self {
        self.source.client_roots = Some((files(ca, ""), required));
        self
    }

    /// [`client_auth_file`](Self::client_auth_file) from PEM text.
    pub fn client_auth_pem(mut self, ca: &[u8], required: bool) -> Self {
        self.source.client_roots = Some((text(ca, b""), required));
        self
    }

    /// The deadline of a handshake (default
    /// [`DEFAULT_HANDSHAKE_TIMEOUT`](TlsConfig::DEFAULT_HANDSHAKE_TIMEOUT)):
    /// a client that has not finished it by then is disconnected.
    pub fn handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// The most handshakes under way at once (default
    /// [`DEFAULT_MAX_HANDSHAKES`](TlsConfig::DEFAULT_MAX_HANDSHAKES), at
    /// least 1): a flood of clients that start a handshake and stall
    /// takes this many places, not the server's CPU or its other
    /// connections'.
    pub fn max_handshakes(mut self, max: usize) -> Self {
        self.max_handshakes = max.max(1);
        self
    }

    /// The configuration.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::server::tls::TlsConfig;
    ///
    /// # let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    /// # let (cert_pem, key_pem) = (cert.cert.pem(), cert.signing_key.serialize_pem());
    /// let tls = TlsConfig::builder().certificate_pem(cert_pem.as_bytes(), key_pem.as_bytes()).build();
    /// assert!(tls.is_ok());
    /// // Nothing to serve with.
    /// assert!(TlsConfig::builder().build().is_err());
    /// // A key that is not the certificate's.
    /// let other = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    /// let wrong_key = other.signing_key.serialize_pem();
    /// assert!(TlsConfig::builder().certificate_pem(cert_pem.as_bytes(), wrong_key.as_bytes()).build().is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`TlsError`] when no certificate was given, a file cannot be read
    /// or parsed, or a key does not fit its certificate.
    pub fn build(self) -> Result<TlsConfig, TlsError> {
        let config = self.source.build()?;
        let source = Some(self.source.clone());
        Ok(TlsConfig::with(config, source, self))
    }
}

fn files(cert: impl AsRef<Path>, key: impl AsRef<Path>) -> Pem {
    Pem::Files {
        cert: cert.as_ref().to_path_buf(),
        key: key.as_ref().to_path_buf(),
    }
}

fn text(cert: &[u8], key: &[u8]) -> Pem {
    Pem::Text {
        cert: cert.to_vec(),
        key: key.to_vec(),
    }
}
