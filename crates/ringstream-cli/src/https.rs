//! HTTPS for `ringstream serve`: the development certificate of
//! `--tls-self-signed` and the plain-HTTP listener of `--redirect-http`,
//! which sends every request to the HTTPS port.

use std::convert::Infallible;
use std::fmt::Write as _;
use std::future::{ready, Ready};
use std::task::{Context, Poll};
use std::time::SystemTime;

use http::header::{HeaderValue, CONTENT_TYPE, HOST, LOCATION};
use http::uri::Authority;
use http::{Request, Response, StatusCode, Uri};
use ringstream::Incoming;
use sha2::{Digest as _, Sha256};

/// The names the development certificate is for.
pub const SELF_SIGNED_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// How long the development certificate is valid from its making (a day
/// before it too, for clocks that run behind): under the 825 days Apple's
/// platforms accept for a server certificate, and longer than a
/// development server runs.
const SELF_SIGNED_DAYS: i64 = 90;

/// A certificate signed by its own key, for [`SELF_SIGNED_NAMES`]: what
/// `ringstream serve --tls-self-signed` serves. A client trusts it by
/// taking the certificate itself as a trust anchor (curl's `--cacert`,
/// a browser's certificate import), or by its SHA-256 fingerprint.
pub struct SelfSigned {
    /// The certificate, as PEM.
    pub cert_pem: String,
    /// Its private key, as PEM (PKCS#8).
    pub key_pem: String,
    /// The certificate, as DER: what its fingerprint is taken of.
    pub cert_der: Vec<u8>,
}

impl std::fmt::Debug for SelfSigned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key stays out of logs.
        f.debug_struct("SelfSigned")
            .field("fingerprint", &self.fingerprint())
            .finish_non_exhaustive()
    }
}

impl SelfSigned {
    /// A new key (ECDSA P-256) and a certificate for it, for
    /// `localhost`, `127.0.0.1` and `::1`, valid from a day ago for 90
    /// days, for TLS servers (extended key usage `serverAuth`).
    ///
    /// # Errors
    ///
    /// rcgen's, when the key or the certificate cannot be made.
    pub fn generate() -> Result<SelfSigned, rcgen::Error> {
        let mut params = rcgen::CertificateParams::new(
            SELF_SIGNED_NAMES
                .iter()
                .map(|name| name.to_string())
                .collect::<Vec<_>>(),
        )?;
        let mut name = rcgen::DistinguishedName::new();
        name.push(
            rcgen::DnType::CommonName,
            "ringstream development certificate",
        );
        params.distinguished_name = name;
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        let now = time::OffsetDateTime::from(SystemTime::now());
        params.not_before = now - time::Duration::days(1);
        params.not_after = now + time::Duration::days(SELF_SIGNED_DAYS);
        let key = rcgen::KeyPair::generate()?;
        let cert = params.self_signed(&key)?;
        Ok(SelfSigned {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            cert_der: cert.der().to_vec(),
        })
    }

    /// The certificate's SHA-256 fingerprint, as [`fingerprint`] writes it.
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.cert_der)
    }
}

/// The SHA-256 fingerprint of a DER certificate as browsers and
/// `openssl x509 -fingerprint -sha256` show it: upper-case hex bytes
/// joined by colons.
///
/// # Examples
///
/// ```
/// let print = ringstream_cli::https::fingerprint(b"");
/// assert!(print.starts_with("E3:B0:C4:42:"));
/// assert_eq!(print.len(), 32 * 3 - 1);
/// ```
pub fn fingerprint(der: &[u8]) -> String {
    let digest = Sha256::digest(der);
    let mut out = String::with_capacity(digest.len() * 3);
    for (i, byte) in digest.iter().enumerate() {
        if i > 0 {
            out.push(':');
        }
        let _ = write!(out, "{byte:02X}");
    }
    out
}

/// The service of `--redirect-http`: every request is answered with
/// `308 Permanent Redirect` to the same path and query over HTTPS, on the
/// host the client asked for (its `Host` without the port) and the HTTPS
/// port (left out when it is 443). A request whose `Host` is missing or
/// is no host gets `400`. 308, not 301, so that a `POST` is repeated as
/// a `POST`.
#[derive(Clone, Copy, Debug)]
pub struct RedirectToHttps {
    https_port: u16,
}

impl RedirectToHttps {
    /// Redirects to HTTPS on `https_port`.
    pub fn new(https_port: u16) -> RedirectToHttps {
        RedirectToHttps { https_port }
    }

    /// The answer to a request with `host` (its `Host` field) and `uri`
    /// (its target).
    pub fn respond(&self, host: Option<&HeaderValue>, uri: &Uri) -> Response<String> {
        match https_location(host, uri, self.https_port) {
            Some(location) => Response::builder()
                .status(StatusCode::PERMANENT_REDIRECT)
                .header(LOCATION, location)
                .body(String::new()),
            None => Response::builder()
                .status(StatusCode::BAD_REQUEST)
                .header(CONTENT_TYPE, "text/plain; charset=utf-8")
                .body(String::from(
                    "a request to be redirected to https:// needs a Host field\n",
                )),
        }
        .expect("a valid status and header values")
    }
}

impl tower_service::Service<Request<Incoming>> for RedirectToHttps {
    type Response = Response<String>;
    type Error = Infallible;
    type Future = Ready<Result<Response<String>, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Incoming>) -> Self::Future {
        ready(Ok(self.respond(req.headers().get(HOST), req.uri())))
    }
}

/// `https://<host><:port><path-and-query>`, or `None` without a usable
/// host. The target's own authority (absolute form) is not used: `Host`
/// names the server the client asked for.
fn https_location(host: Option<&HeaderValue>, uri: &Uri, https_port: u16) -> Option<HeaderValue> {
    let authority = Authority::try_from(host?.as_bytes()).ok()?;
    let host = authority.host();
    if host.is_empty() {
        return None;
    }
    let path = uri
        .path_and_query()
        .map(|pq| pq.as_str())
        .filter(|pq| pq.starts_with('/'))
        .unwrap_or("/");
    let location = if https_port == 443 {
        format!("https://{host}{path}")
    } else {
        format!("https://{host}:{https_port}{path}")
    };
    HeaderValue::try_from(location).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn location(host: Option<&str>, target: &str, port: u16) -> Option<String> {
        let host = host.map(|h| HeaderValue::from_str(h).unwrap());
        let uri: Uri = target.parse().unwrap();
        https_location(host.as_ref(), &uri, port).map(|v| v.to_str().unwrap().to_string())
    }

    #[test]
    fn the_location_keeps_host_path_and_query_and_takes_the_https_port() {
        assert_eq!(
            location(Some("example.com:8080"), "/a/b?c=d&e", 8443).as_deref(),
            Some("https://example.com:8443/a/b?c=d&e")
        );
        assert_eq!(
            location(Some("Example.com"), "/", 443).as_deref(),
            Some("https://Example.com/")
        );
        assert_eq!(
            location(Some("[::1]:80"), "/x", 443).as_deref(),
            Some("https://[::1]/x")
        );
        assert_eq!(
            location(Some("127.0.0.1"), "/x?", 4443).as_deref(),
            Some("https://127.0.0.1:4443/x?")
        );
        // Absolute form: the path and query of the target, the host of Host.
        assert_eq!(
            location(Some("a.test"), "http://b.test:81/p?q", 443).as_deref(),
            Some("https://a.test/p?q")
        );
        // `OPTIONS *` is sent to the root.
        assert_eq!(
            location(Some("a.test"), "*", 443).as_deref(),
            Some("https://a.test/")
        );
    }

    #[test]
    fn no_host_or_a_bad_one_gets_none() {
        assert_eq!(location(None, "/", 443), None);
        assert_eq!(location(Some(""), "/", 443), None);
        assert_eq!(location(Some("a b"), "/", 443), None);
        assert_eq!(location(Some("a.test/evil"), "/", 443), None);
    }

    #[test]
    fn the_service_answers_308_or_400() {
        let redirect = RedirectToHttps::new(8443);
        let host = HeaderValue::from_static("localhost:8080");
        let found = redirect.respond(Some(&host), &"/p?q".parse().unwrap());
        assert_eq!(found.status(), StatusCode::PERMANENT_REDIRECT);
        assert_eq!(found.headers()[LOCATION], "https://localhost:8443/p?q");
        let refused = redirect.respond(None, &"/p".parse().unwrap());
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    }

    #[test]
    fn the_development_certificate_is_for_the_local_names() {
        let cert = SelfSigned::generate().unwrap();
        assert!(cert.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(cert.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        assert_eq!(cert.fingerprint(), fingerprint(&cert.cert_der));
        assert!(!format!("{cert:?}").contains("PRIVATE"));
        // rustls takes it, and it is a fresh key every time.
        let tls = ringstream::server::tls::TlsConfig::from_pem(
            cert.cert_pem.as_bytes(),
            cert.key_pem.as_bytes(),
        );
        assert!(tls.is_ok(), "{tls:?}");
        assert_ne!(SelfSigned::generate().unwrap().cert_der, cert.cert_der);
    }

    #[test]
    fn a_fingerprint_is_colon_separated_upper_case_hex() {
        // SHA-256 of "abc".
        assert_eq!(
            fingerprint(b"abc"),
            "BA:78:16:BF:8F:01:CF:EA:41:41:40:DE:5D:AE:22:23:\
             B0:03:61:A3:96:17:7A:9C:B4:10:FF:61:F2:00:15:AD"
        );
    }
}
