//! Version 2's extensions: type, 16-bit length, value; and the types the
//! specification and the cloud balancers define.

use super::error::Error;

/// `PP2_TYPE_ALPN`: the protocol the client negotiated with the balancer.
pub(super) const ALPN: u8 = 0x01;
/// `PP2_TYPE_AUTHORITY`: the host name the client asked for (TLS SNI).
pub(super) const AUTHORITY: u8 = 0x02;
/// `PP2_TYPE_CRC32C`: a checksum of the whole header.
pub(super) const CRC32C: u8 = 0x03;
/// `PP2_TYPE_UNIQUE_ID`: the balancer's id for the connection.
pub(super) const UNIQUE_ID: u8 = 0x05;
/// `PP2_TYPE_SSL`: how the client's TLS went.
pub(super) const SSL: u8 = 0x20;
/// `PP2_SUBTYPE_SSL_VERSION`, inside [`SSL`].
const SSL_VERSION: u8 = 0x21;
/// `PP2_SUBTYPE_SSL_CN`, inside [`SSL`].
const SSL_CN: u8 = 0x22;
/// `PP2_SUBTYPE_SSL_CIPHER`, inside [`SSL`].
const SSL_CIPHER: u8 = 0x23;
/// Google Cloud's Private Service Connect id (a 64-bit number).
const GCP: u8 = 0xE0;
/// AWS's VPC endpoint id, subtype 1 of type 0xEA.
const AWS: u8 = 0xEA;
/// Azure's Private Link id, subtype 1 of type 0xEE (a 32-bit number,
/// little-endian).
const AZURE: u8 = 0xEE;

/// One extension.
///
/// # Examples
///
/// ```
/// use ringstream_core::proxy::{Tlv, Tlvs};
///
/// let bytes = [0x01, 0, 2, b'h', b'2', 0x05, 0, 3, b'i', b'd', b'7'];
/// let tlvs: Vec<Tlv<'_>> = Tlvs::checked(&bytes).collect();
/// assert_eq!(tlvs, [
///     Tlv { kind: 0x01, value: &b"h2"[..] }, // ALPN
///     Tlv { kind: 0x05, value: &b"id7"[..] }, // unique id
/// ]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tlv<'a> {
    /// Its type.
    pub kind: u8,
    /// Its value.
    pub value: &'a [u8],
}

/// The extensions of a version 2 header, in order (see
/// [`Header::tlvs`](super::header::Header::tlvs)).
///
/// # Examples
///
/// ```
/// use ringstream_core::proxy::{parse, SIGNATURE};
///
/// let mut header = SIGNATURE.to_vec();
/// // PROXY over TCP/IPv4, 12 bytes of addresses and 10 of extensions.
/// header.extend_from_slice(&[0x21, 0x11, 0, 22]);
/// header.extend_from_slice(&[203, 0, 113, 7, 192, 0, 2, 1, 0xc7, 0x38, 0x01, 0xbb]);
/// header.extend_from_slice(&[0x01, 0, 2, b'h', b'2']); // ALPN
/// header.extend_from_slice(&[0x02, 0, 2, b'a', b'b']); // authority
/// let parsed = parse(&header, 4096)?.unwrap();
/// let tlvs = parsed.tlvs();
/// assert_eq!(tlvs.alpn(), Some(&b"h2"[..]));
/// assert_eq!(tlvs.authority(), Some(&b"ab"[..]));
/// assert_eq!(tlvs.count(), 2);
/// # Ok::<(), ringstream_core::proxy::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tlvs<'a> {
    rest: &'a [u8],
}

impl<'a> Tlvs<'a> {
    /// `bytes` must have passed [`check`].
    pub(super) fn new(bytes: &'a [u8]) -> Tlvs<'a> {
        Tlvs { rest: bytes }
    }

    /// The extensions in `bytes` (a header's extension bytes, as
    /// [`Header::tlvs`](super::header::Header::tlvs) reads them), or none if they
    /// do not each fit.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::proxy::Tlvs;
    ///
    /// assert_eq!(Tlvs::checked(&[0x01, 0, 2, b'h', b'2']).alpn(), Some(&b"h2"[..]));
    /// assert_eq!(Tlvs::checked(&[0x01, 0, 9]).count(), 0);
    /// ```
    pub fn checked(bytes: &'a [u8]) -> Tlvs<'a> {
        match check(bytes) {
            Ok(()) => Tlvs { rest: bytes },
            Err(_) => Tlvs { rest: &[] },
        }
    }

    /// The extensions' bytes, as they were sent.
    pub fn as_bytes(self) -> &'a [u8] {
        self.rest
    }

    /// The value of the first extension of type `kind`.
    pub fn get(self, kind: u8) -> Option<&'a [u8]> {
        Iterator::find(&mut self.into_iter(), |t: &Tlv<'a>| t.kind == kind).map(|t| t.value)
    }

    /// The protocol the client negotiated with the balancer (ALPN).
    pub fn alpn(self) -> Option<&'a [u8]> {
        self.get(ALPN)
    }

    /// The host name the client asked the balancer for.
    pub fn authority(self) -> Option<&'a [u8]> {
        self.get(AUTHORITY)
    }

    /// The balancer's unique id for the connection.
    pub fn unique_id(self) -> Option<&'a [u8]> {
        self.get(UNIQUE_ID)
    }

    /// How the client's TLS with the balancer went.
    pub fn ssl(self) -> Option<SslInfo<'a>> {
        let value = self.get(SSL)?;
        if value.len() < 5 {
            return None;
        }
        let subs = Tlvs::new(&value[5..]);
        check(&value[5..]).ok()?;
        Some(SslInfo {
            client: value[0],
            verified: value[1..5] == [0, 0, 0, 0],
            version: subs.get(SSL_VERSION),
            common_name: subs.get(SSL_CN),
            cipher: subs.get(SSL_CIPHER),
        })
    }

    /// AWS's VPC endpoint id (Network Load Balancer through PrivateLink).
    pub fn aws_vpce_id(self) -> Option<&'a [u8]> {
        self.get(AWS)
            .and_then(|v| v.split_first())
            .filter(|(subtype, _)| **subtype == 0x01)
            .map(|(_, id)| id)
    }

    /// Azure's Private Link id.
    pub fn azure_link_id(self) -> Option<u32> {
        let value = self.get(AZURE)?;
        match value {
            [0x01, a, b, c, d] => Some(u32::from_le_bytes([*a, *b, *c, *d])),
            _ => None,
        }
    }

    /// Google Cloud's Private Service Connect id.
    pub fn gcp_psc_id(self) -> Option<u64> {
        let value: [u8; 8] = self.get(GCP)?.try_into().ok()?;
        Some(u64::from_be_bytes(value))
    }
}

impl<'a> Iterator for Tlvs<'a> {
    type Item = Tlv<'a>;

    fn next(&mut self) -> Option<Tlv<'a>> {
        let (head, rest) = self.rest.split_at_checked(3)?;
        let len = usize::from(u16::from_be_bytes([head[1], head[2]]));
        let (value, rest) = rest.split_at_checked(len)?;
        self.rest = rest;
        Some(Tlv {
            kind: head[0],
            value,
        })
    }
}

/// The `PP2_TYPE_SSL` extension.
///
/// # Examples
///
/// ```
/// use ringstream_core::proxy::Tlvs;
///
/// // Over TLS (client bit 1), verified (0), with the TLS version.
/// let mut ssl = vec![0x01, 0, 0, 0, 0, 0x21, 0, 7];
/// ssl.extend_from_slice(b"TLSv1.3");
/// let mut bytes = vec![0x20, 0, ssl.len() as u8];
/// bytes.extend_from_slice(&ssl);
/// let info = Tlvs::checked(&bytes).ssl().unwrap();
/// assert_eq!(info.client, 0x01);
/// assert!(info.verified);
/// assert_eq!(info.version, Some(&b"TLSv1.3"[..]));
/// assert_eq!(info.common_name, None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SslInfo<'a> {
    /// `PP2_CLIENT_SSL` (1), `PP2_CLIENT_CERT_CONN` (2),
    /// `PP2_CLIENT_CERT_SESS` (4) bits.
    pub client: u8,
    /// The client's certificate, if any, was verified.
    pub verified: bool,
    /// The TLS version (`TLSv1.3`).
    pub version: Option<&'a [u8]>,
    /// The common name of the client's certificate.
    pub common_name: Option<&'a [u8]>,
    /// The cipher (`TLS_AES_128_GCM_SHA256`).
    pub cipher: Option<&'a [u8]>,
}

/// Checks that the extensions in `bytes` each fit.
pub(super) fn check(mut bytes: &[u8]) -> Result<(), Error> {
    while !bytes.is_empty() {
        let Some((head, rest)) = bytes.split_at_checked(3) else {
            return Err(Error::BadTlv);
        };
        let len = usize::from(u16::from_be_bytes([head[1], head[2]]));
        let Some((_, rest)) = rest.split_at_checked(len) else {
            return Err(Error::BadTlv);
        };
        bytes = rest;
    }
    Ok(())
}
