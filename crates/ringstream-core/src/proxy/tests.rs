use alloc::vec::Vec;

use proptest::prelude::*;

use super::*;

const MAX: usize = 4096;

/// A version 2 header: `command` (0 LOCAL, 1 PROXY), `family` byte,
/// `addresses` and `tlvs` as given, the length written to match.
fn v2(command: u8, family: u8, addresses: &[u8], tlvs: &[u8]) -> Vec<u8> {
    let mut header = SIGNATURE.to_vec();
    header.push(0x20 | command);
    header.push(family);
    let len = (addresses.len() + tlvs.len()) as u16;
    header.extend_from_slice(&len.to_be_bytes());
    header.extend_from_slice(addresses);
    header.extend_from_slice(tlvs);
    header
}

const INET: [u8; 12] = [203, 0, 113, 7, 192, 0, 2, 1, 0xc7, 0x38, 0x01, 0xbb];

#[test]
fn v1_names_the_client_over_ipv4_and_ipv6() {
    let header = parse(b"PROXY TCP4 203.0.113.7 192.0.2.1 51000 443\r\nrest", MAX)
        .unwrap()
        .unwrap();
    assert_eq!(header.source(), Some("203.0.113.7:51000".parse().unwrap()));
    assert_eq!(header.destination(), Some("192.0.2.1:443".parse().unwrap()));
    assert_eq!(header.len(), 44);
    assert_eq!(header.tlvs().count(), 0);

    let header = parse(b"PROXY TCP6 2001:db8::7 2001:db8::1 65535 0\r\n", MAX)
        .unwrap()
        .unwrap();
    assert_eq!(
        header.source(),
        Some("[2001:db8::7]:65535".parse().unwrap())
    );
    assert_eq!(header.destination().unwrap().port(), 0);
}

#[test]
fn v1_unknown_carries_no_address_and_may_say_anything() {
    for line in [
        &b"PROXY UNKNOWN\r\n"[..],
        b"PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n",
    ] {
        let header = parse(line, MAX).unwrap().unwrap();
        assert_eq!(header.source(), None);
        assert_eq!(header.command(), Command::Proxy);
        assert_eq!(header.len(), line.len());
    }
}

#[test]
fn every_prefix_of_a_header_waits_for_more() {
    let mut tlvs = alloc::vec![0x01, 0, 2, b'h', b'2'];
    tlvs.extend_from_slice(&[0x05, 0, 3, 1, 2, 3]);
    let headers = [
        b"PROXY TCP4 203.0.113.7 192.0.2.1 51000 443\r\n".to_vec(),
        v2(1, 0x11, &INET, &tlvs),
    ];
    for header in headers {
        for n in 0..header.len() {
            assert_eq!(parse(&header[..n], MAX), Ok(None), "{n} of {:?}", header);
        }
        assert!(parse(&header, MAX).unwrap().is_some());
    }
}

#[test]
fn a_v1_line_that_breaks_the_grammar_is_refused() {
    let bad: [&[u8]; 16] = [
        b"PROXY TCP4 203.0.113.7 192.0.2.1 51000 443\n",
        b"PROXY TCP4 203.0.113.7 192.0.2.1 51000 443\rx",
        b"PROXY TCP4  203.0.113.7 192.0.2.1 51000 443\r\n",
        b"PROXY TCP4 203.0.113.7 192.0.2.1 51000\r\n",
        b"PROXY TCP4 203.0.113.7 192.0.2.1 51000 443 9\r\n",
        b"PROXY TCP4 203.0.113.7 192.0.2.1 65536 443\r\n",
        b"PROXY TCP4 203.0.113.7 192.0.2.1 051000 443\r\n",
        b"PROXY TCP4 203.0.113.7 192.0.2.1 -1 443\r\n",
        b"PROXY TCP4 203.0.113.256 192.0.2.1 1 443\r\n",
        b"PROXY TCP4 203.0.113.07 192.0.2.1 1 443\r\n",
        b"PROXY TCP4 2001:db8::7 192.0.2.1 1 443\r\n",
        b"PROXY TCP6 203.0.113.7 2001:db8::1 1 443\r\n",
        b"PROXY UDP4 203.0.113.7 192.0.2.1 1 443\r\n",
        b"PROXY tcp4 203.0.113.7 192.0.2.1 1 443\r\n",
        b"PROXY \r\n",
        b"PROXY TCP4 203.0.113.7 192.0.2.1 1 443 \r\n",
    ];
    for line in bad {
        assert_eq!(
            parse(line, MAX),
            Err(Error::BadLine),
            "{}",
            alloc::string::String::from_utf8_lossy(line)
        );
    }
}

#[test]
fn a_v1_line_without_crlf_within_107_bytes_is_too_long() {
    let mut line = b"PROXY UNKNOWN ".to_vec();
    line.resize(106, b'x');
    assert_eq!(parse(&line, MAX), Ok(None));
    line.push(b'x');
    assert_eq!(parse(&line, MAX), Err(Error::LineTooLong));
    // 105 bytes and CRLF: the longest line allowed.
    let mut longest = b"PROXY UNKNOWN ".to_vec();
    longest.resize(105, b'x');
    longest.extend_from_slice(b"\r\n");
    assert_eq!(parse(&longest, MAX).unwrap().unwrap().len(), MAX_V1_LEN);
}

#[test]
fn bytes_that_begin_no_header_are_not_proxy() {
    for bytes in [
        &b"GET / HTTP/1.1\r\n"[..],
        b"\x16\x03\x01",
        b"PRI * HTTP/2.0",
        b"PROXX",
        b"\r\n\r\n\0\r\nQUIX",
    ] {
        assert_eq!(parse(bytes, MAX), Err(Error::NotProxy), "{bytes:?}");
    }
    assert_eq!(parse(b"", MAX), Ok(None));
}

#[test]
fn v2_proxy_names_the_client_and_local_does_not() {
    let header = v2(1, 0x11, &INET, &[]);
    let parsed = parse(&header, MAX).unwrap().unwrap();
    assert_eq!(parsed.version(), 2);
    assert_eq!(parsed.command(), Command::Proxy);
    assert_eq!(parsed.source(), Some("203.0.113.7:51000".parse().unwrap()));
    assert_eq!(parsed.destination(), Some("192.0.2.1:443".parse().unwrap()));
    assert_eq!(parsed.len(), 28);

    let mut inet6 = [0u8; 36];
    inet6[..16].copy_from_slice(
        &"2001:db8::7"
            .parse::<core::net::Ipv6Addr>()
            .unwrap()
            .octets(),
    );
    inet6[16..32].copy_from_slice(
        &"2001:db8::1"
            .parse::<core::net::Ipv6Addr>()
            .unwrap()
            .octets(),
    );
    inet6[32..].copy_from_slice(&[0x01, 0x02, 0x01, 0xbb]);
    let header = v2(1, 0x21, &inet6, &[]);
    let parsed = parse(&header, MAX).unwrap().unwrap();
    assert_eq!(parsed.source(), Some("[2001:db8::7]:258".parse().unwrap()));

    // LOCAL: a health check; any addresses it carries are ignored.
    let header = v2(0, 0x11, &INET, &[]);
    let parsed = parse(&header, MAX).unwrap().unwrap();
    assert_eq!(parsed.command(), Command::Local);
    assert_eq!(parsed.source(), None);
    let header = v2(0, 0x00, &[], &[]);
    let parsed = parse(&header, MAX).unwrap().unwrap();
    assert_eq!((parsed.command(), parsed.len()), (Command::Local, 16));
    // Unix sockets and the unspecified family: no address the server uses.
    let header = v2(1, 0x31, &[0; 216], &[]);
    let parsed = parse(&header, MAX).unwrap().unwrap();
    assert_eq!(parsed.source(), None);
    let header = v2(1, 0x00, &[], &[]);
    assert_eq!(parse(&header, MAX).unwrap().unwrap().source(), None);
}

#[test]
fn a_v2_header_that_breaks_its_rules_is_refused() {
    let mut bad_version = v2(1, 0x11, &INET, &[]);
    bad_version[12] = 0x11;
    assert_eq!(parse(&bad_version, MAX), Err(Error::BadVersion));
    let mut bad_command = v2(1, 0x11, &INET, &[]);
    bad_command[12] = 0x22;
    assert_eq!(parse(&bad_command, MAX), Err(Error::BadCommand));
    // A datagram, an unknown family.
    assert_eq!(parse(&v2(1, 0x12, &INET, &[]), MAX), Err(Error::BadFamily));
    assert_eq!(parse(&v2(1, 0x41, &INET, &[]), MAX), Err(Error::BadFamily));
    // Shorter than its addresses.
    assert_eq!(
        parse(&v2(1, 0x11, &INET[..8], &[]), MAX),
        Err(Error::BadLength)
    );
    assert_eq!(parse(&v2(1, 0x21, &INET, &[]), MAX), Err(Error::BadLength));
    // Longer than the server takes: refused from its first 16 bytes.
    let mut long = v2(1, 0x11, &INET, &[]);
    long[14..16].copy_from_slice(&1000u16.to_be_bytes());
    assert_eq!(parse(&long[..16], 100), Err(Error::TooLong));
    assert_eq!(parse(&long[..16], 1016), Ok(None));
    // An extension past the end.
    assert_eq!(
        parse(&v2(1, 0x11, &INET, &[0x01, 0, 5, b'h']), MAX),
        Err(Error::BadTlv)
    );
    assert_eq!(
        parse(&v2(1, 0x11, &INET, &[0x01, 0]), MAX),
        Err(Error::BadTlv)
    );
}

#[test]
fn the_extensions_of_the_balancers_are_read() {
    let mut tlvs = Vec::new();
    tlvs.extend_from_slice(&[0x01, 0, 8]);
    tlvs.extend_from_slice(b"http/1.1");
    tlvs.extend_from_slice(&[0x02, 0, 11]);
    tlvs.extend_from_slice(b"example.com");
    tlvs.extend_from_slice(&[0x05, 0, 4, 9, 8, 7, 6]);
    // SSL: client over TLS, verified, version and cipher sub-extensions.
    let mut ssl = alloc::vec![0x01, 0, 0, 0, 0];
    ssl.extend_from_slice(&[0x21, 0, 7]);
    ssl.extend_from_slice(b"TLSv1.3");
    ssl.extend_from_slice(&[0x23, 0, 22]);
    ssl.extend_from_slice(b"TLS_AES_128_GCM_SHA256");
    tlvs.extend_from_slice(&[0x20, 0, ssl.len() as u8]);
    tlvs.extend_from_slice(&ssl);
    tlvs.extend_from_slice(&[0xEA, 0, 4, 0x01, b'v', b'p', b'c']);
    tlvs.extend_from_slice(&[0xEE, 0, 5, 0x01, 0x78, 0x56, 0x34, 0x12]);
    tlvs.extend_from_slice(&[0xE0, 0, 8, 0, 0, 0, 0, 0, 0, 1, 2]);
    let header = v2(1, 0x11, &INET, &tlvs);
    let tlvs = parse(&header, MAX).unwrap().unwrap().tlvs();
    assert_eq!(tlvs.alpn(), Some(&b"http/1.1"[..]));
    assert_eq!(tlvs.authority(), Some(&b"example.com"[..]));
    assert_eq!(tlvs.unique_id(), Some(&[9, 8, 7, 6][..]));
    let ssl = tlvs.ssl().unwrap();
    assert_eq!((ssl.client, ssl.verified), (1, true));
    assert_eq!(ssl.version, Some(&b"TLSv1.3"[..]));
    assert_eq!(ssl.cipher, Some(&b"TLS_AES_128_GCM_SHA256"[..]));
    assert_eq!(ssl.common_name, None);
    assert_eq!(tlvs.aws_vpce_id(), Some(&b"vpc"[..]));
    assert_eq!(tlvs.azure_link_id(), Some(0x1234_5678));
    assert_eq!(tlvs.gcp_psc_id(), Some(0x0102));
    assert_eq!(tlvs.count(), 7);
}

#[test]
fn a_crc32c_extension_is_checked() {
    let mut header = v2(1, 0x11, &INET, &[0x03, 0, 4, 0, 0, 0, 0]);
    let crc = crc32c::of(&header);
    let at = header.len() - 4;
    header[at..].copy_from_slice(&crc.to_be_bytes());
    assert!(parse(&header, MAX).unwrap().is_some());
    header[0x10] ^= 1;
    assert_eq!(parse(&header, MAX), Err(Error::BadChecksum));
}

proptest! {
    /// Whatever the bytes, the parser answers (a header, more, or an
    /// error) without panicking; a header it finds lies within them.
    #[test]
    fn any_bytes_get_an_answer(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        if let Ok(Some(header)) = parse(&bytes, 256) {
            prop_assert!(header.len() <= bytes.len());
            let _ = header.tlvs().count();
        }
    }

    /// A v2 signature followed by anything: answered, never a panic.
    #[test]
    fn any_v2_body_gets_an_answer(rest in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut bytes = SIGNATURE.to_vec();
        bytes.extend_from_slice(&rest);
        if let Ok(Some(header)) = parse(&bytes, MAX) {
            prop_assert!(header.len() <= bytes.len());
            let _ = header.tlvs().ssl();
        }
    }

    /// A v1 line for any addresses is read back as written.
    #[test]
    fn v1_lines_read_back(a in any::<[u8; 4]>(), b in any::<[u8; 4]>(), p in any::<u16>(), q in any::<u16>()) {
        let source = core::net::SocketAddr::from((a, p));
        let destination = core::net::SocketAddr::from((b, q));
        let line = alloc::format!(
            "PROXY TCP4 {} {} {} {}\r\n",
            source.ip(), destination.ip(), p, q
        );
        let header = parse(line.as_bytes(), MAX).unwrap().unwrap();
        prop_assert_eq!(header.source(), Some(source));
        prop_assert_eq!(header.destination(), Some(destination));
        prop_assert_eq!(header.len(), line.len());
    }
}
