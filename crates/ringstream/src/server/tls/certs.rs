//! Certificates: read from PEM, checked against their keys, and chosen per
//! connection by the name the client asked for (SNI).

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::tls::TlsError;

/// Where a certificate chain and its key come from: PEM text, or PEM files
/// read again on every reload.
#[derive(Clone)]
pub(super) enum Pem {
    Files { cert: PathBuf, key: PathBuf },
    Text { cert: Vec<u8>, key: Vec<u8> },
}

impl fmt::Debug for Pem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pem::Files { cert, key } => f
                .debug_struct("Files")
                .field("cert", cert)
                .field("key", key)
                .finish(),
            // The key stays out of logs.
            Pem::Text { .. } => f.write_str("Text"),
        }
    }
}

impl Pem {
    /// The chain and its key, checked to belong together.
    pub(super) fn load(&self, provider: &CryptoProvider) -> Result<CertifiedKey, TlsError> {
        let (chain, key) = match self {
            Pem::Files { cert, key } => (read_chain(cert)?, read_key(key)?),
            Pem::Text { cert, key } => (
                parse_chain(cert).map_err(|e| TlsError::pem("certificate", e))?,
                PrivateKeyDer::from_pem_slice(key).map_err(|e| TlsError::pem("private key", e))?,
            ),
        };
        if chain.is_empty() {
            return Err(TlsError::new("no certificate in the PEM input"));
        }
        CertifiedKey::from_der(chain, key, provider)
            .map_err(|e| TlsError::rustls("the private key does not fit the certificate", e))
    }
}

fn read_chain(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = std::fs::read(path).map_err(|e| TlsError::io(path, e))?;
    parse_chain(&pem).map_err(|e| TlsError::pem_file(path, e))
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let pem = std::fs::read(path).map_err(|e| TlsError::io(path, e))?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| TlsError::pem_file(path, e))
}

fn parse_chain(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, rustls_pki_types::pem::Error> {
    CertificateDer::pem_slice_iter(pem).collect()
}

/// Reads the certificates of a PEM file or text (trust anchors for client
/// certificates).
pub(super) fn load_roots(pem: &Pem) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    match pem {
        Pem::Files { cert, .. } => read_chain(cert),
        Pem::Text { cert, .. } => parse_chain(cert).map_err(|e| TlsError::pem("certificate", e)),
    }
}

/// The certificate for each server name a client may ask for, and the one
/// for clients that ask for none or for another name.
#[derive(Debug, Default)]
pub(super) struct Certificates {
    default: Option<Arc<CertifiedKey>>,
    /// Lower-case names; `*.example.com` entries stand for one label.
    by_name: HashMap<String, Arc<CertifiedKey>>,
}

impl Certificates {
    pub(super) fn set_default(&mut self, key: CertifiedKey) {
        self.default = Some(Arc::new(key));
    }

    pub(super) fn insert(&mut self, name: &str, key: CertifiedKey) {
        self.by_name
            .insert(name.to_ascii_lowercase(), Arc::new(key));
    }

    pub(super) fn is_empty(&self) -> bool {
        self.default.is_none() && self.by_name.is_empty()
    }

    /// The certificate for `name`: its own, else a wildcard's for its
    /// parent domain, else the default.
    pub(super) fn find(&self, name: Option<&str>) -> Option<Arc<CertifiedKey>> {
        if let Some(name) = name {
            let name = name.to_ascii_lowercase();
            if let Some(key) = self.by_name.get(&name) {
                return Some(key.clone());
            }
            if let Some((_, parent)) = name.split_once('.') {
                if let Some(key) = self.by_name.get(&format!("*.{parent}")) {
                    return Some(key.clone());
                }
            }
        }
        self.default.clone()
    }
}

impl ResolvesServerCert for Certificates {
    fn resolve(&self, client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.find(client_hello.server_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(tag: u8) -> CertifiedKey {
        let pair = rcgen::KeyPair::generate().unwrap();
        let der = PrivateKeyDer::try_from(pair.serialize_der()).unwrap();
        let provider = rustls::crypto::aws_lc_rs::default_provider();
        let signing = provider.key_provider.load_private_key(der).unwrap();
        CertifiedKey::new(vec![CertificateDer::from(vec![tag])], signing)
    }

    fn tag(found: Option<Arc<CertifiedKey>>) -> Option<u8> {
        found.map(|k| k.cert[0].as_ref()[0])
    }

    #[test]
    fn a_name_finds_its_own_then_a_wildcard_then_the_default() {
        let mut certs = Certificates::default();
        assert!(certs.is_empty());
        assert_eq!(tag(certs.find(Some("a.example"))), None);
        certs.insert("A.Example", key(1));
        certs.insert("*.example", key(2));
        assert_eq!(tag(certs.find(Some("a.example"))), Some(1));
        assert_eq!(tag(certs.find(Some("a.EXAMPLE"))), Some(1));
        assert_eq!(tag(certs.find(Some("b.example"))), Some(2));
        // A wildcard stands for one label only.
        assert_eq!(tag(certs.find(Some("c.b.example"))), None);
        assert_eq!(tag(certs.find(None)), None);
        certs.set_default(key(3));
        assert_eq!(tag(certs.find(Some("c.b.example"))), Some(3));
        assert_eq!(tag(certs.find(None)), Some(3));
    }
}
