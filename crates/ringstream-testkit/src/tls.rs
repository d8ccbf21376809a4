//! A certificate authority of a test's own, made at run time, and the
//! certificates it signs, for the TLS wire tests.

use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::CertificateDer;

/// A certificate authority (ECDSA P-256), new for every test.
pub struct Authority {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

/// A certificate and its private key, as PEM.
pub struct Issued {
    pub cert: String,
    pub key: String,
}

impl Issued {
    /// The certificate's DER bytes.
    pub fn der(&self) -> Vec<u8> {
        CertificateDer::from_pem_slice(self.cert.as_bytes())
            .unwrap()
            .as_ref()
            .to_vec()
    }

    /// Writes `cert.pem` and `key.pem` into `dir`; returns their paths.
    pub fn write(&self, dir: &Path) -> (PathBuf, PathBuf) {
        let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        std::fs::write(&cert, &self.cert).unwrap();
        std::fs::write(&key, &self.key).unwrap();
        (cert, key)
    }
}

impl Authority {
    /// A new authority with a key of its own.
    pub fn new() -> Authority {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        Authority { issuer }
    }

    /// A certificate for `names` (DNS names or IP addresses), signed by
    /// this authority.
    pub fn issue(&self, names: &[&str]) -> Issued {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(names)
            .unwrap()
            .signed_by(&key, &self.issuer)
            .unwrap();
        Issued {
            cert: cert.pem(),
            key: key.serialize_pem(),
        }
    }

    /// The authority's own certificate, DER.
    pub fn der(&self) -> CertificateDer<'static> {
        self.issuer.der().clone()
    }

    /// The authority's own certificate, PEM.
    pub fn pem(&self) -> String {
        self.issuer.pem()
    }
}

impl Default for Authority {
    fn default() -> Self {
        Authority::new()
    }
}
