//! Request-head parsing: RFC 9112 / RFC 9110 conformance, request-smuggling
//! vectors, limits, split-point independence and robustness.
//!
//! Every accepted vector is also fed one byte more at a time and split at
//! every offset; every rejected vector is fed one byte more at a time: the
//! answer must not depend on how the bytes arrived.

use proptest::prelude::*;
use ringstream_core::h1::{BodyFraming, Field, HeadParser, RequestHead, TargetForm, Version};
use ringstream_core::{Error, Limits};

/// An owned copy of a parsed head, to compare results across calls.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Parsed {
    method: String,
    target: String,
    form: TargetForm,
    version: Version,
    framing: BodyFraming,
    keep_alive: bool,
    expect_continue: bool,
    head_len: usize,
    fields: Vec<(String, Vec<u8>)>,
}

impl Parsed {
    fn new(head: &RequestHead<'_>, fields: &[Field<'_>]) -> Parsed {
        Parsed {
            method: head.method.to_owned(),
            target: head.target.to_owned(),
            form: head.target_form,
            version: head.version,
            framing: head.framing,
            keep_alive: head.keep_alive,
            expect_continue: head.expect_continue,
            head_len: head.head_len,
            fields: head
                .fields(fields)
                .iter()
                .map(|f| (f.name.to_owned(), f.value.to_vec()))
                .collect(),
        }
    }
}

fn parse_with(
    parser: &mut HeadParser,
    buf: &[u8],
    nfields: usize,
) -> Result<Option<Parsed>, Error> {
    let mut fields = vec![Field::EMPTY; nfields];
    parser
        .parse(buf, &mut fields)
        .map(|h| h.map(|h| Parsed::new(&h, &fields)))
}

fn parse_limits(wire: &[u8], limits: Limits) -> Result<Option<Parsed>, Error> {
    parse_with(&mut HeadParser::new(limits), wire, 128)
}

/// Feeds `wire` one byte more at a time to one parser; returns the first
/// answer that is not "need more", and checks every earlier one was.
fn trickle(wire: &[u8], limits: Limits) -> Result<Option<Parsed>, Error> {
    let mut parser = HeadParser::new(limits);
    let mut fields = vec![Field::EMPTY; 128];
    for end in 0..=wire.len() {
        match parser.parse(&wire[..end], &mut fields) {
            Ok(None) => continue,
            Ok(Some(h)) => {
                let p = Parsed::new(&h, &fields);
                assert_eq!(p.head_len, end, "head found before its last byte");
                return Ok(Some(p));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

/// Parses an accepted vector whole, trickled and split at every offset, and
/// checks all three agree.
fn accept_limits(wire: &[u8], limits: Limits) -> Parsed {
    let whole = parse_limits(wire, limits)
        .unwrap_or_else(|e| panic!("rejected with {e:?}: {:?}", String::from_utf8_lossy(wire)))
        .expect("complete head");
    assert_eq!(trickle(wire, limits), Ok(Some(whole.clone())), "trickled");
    if wire.len() <= 4096 {
        for split in 0..wire.len() {
            let mut parser = HeadParser::new(limits);
            let first = parse_with(&mut parser, &wire[..split], 128);
            match first {
                Ok(None) => {}
                Ok(Some(p)) => assert_eq!(p, whole, "split at {split}"),
                Err(e) => panic!("split at {split}: {e:?}"),
            }
            assert_eq!(
                parse_with(&mut parser, wire, 128),
                Ok(Some(whole.clone())),
                "split at {split}"
            );
        }
    }
    // A parser answers the same head again for the same buffer.
    let mut parser = HeadParser::new(limits);
    let again = parse_with(&mut parser, wire, 128);
    assert_eq!(parse_with(&mut parser, wire, 128), again);
    whole
}

fn accept(wire: &[u8]) -> Parsed {
    accept_limits(wire, Limits::DEFAULT)
}

/// Checks a rejected vector answers `expected` whole and trickled, and that
/// the parser stays failed.
fn reject_limits(wire: &[u8], limits: Limits, expected: Error) {
    let mut parser = HeadParser::new(limits);
    assert_eq!(
        parse_with(&mut parser, wire, 128),
        Err(expected),
        "whole: {:?}",
        String::from_utf8_lossy(&wire[..wire.len().min(200)])
    );
    assert_eq!(parse_with(&mut parser, wire, 128), Err(expected), "sticky");
    assert_eq!(trickle(wire, limits), Err(expected), "trickled");
}

fn reject(wire: &[u8], expected: Error) {
    reject_limits(wire, Limits::DEFAULT, expected)
}

/// Checks a rejected vector answers `expected` as soon as its first `at`
/// bytes have arrived, not later: every shorter prefix is "need more", and
/// the answer is the same whole, trickled, and split at every offset.
fn reject_at_limits(wire: &[u8], at: usize, limits: Limits, expected: Error) {
    let shown = String::from_utf8_lossy(&wire[..wire.len().min(80)]).into_owned();
    reject_limits(wire, limits, expected);
    let mut parser = HeadParser::new(limits);
    for end in 0..at {
        assert_eq!(
            parse_with(&mut parser, &wire[..end], 128),
            Ok(None),
            "{shown:?}: answered after {end} bytes"
        );
    }
    assert_eq!(
        parse_with(&mut parser, &wire[..at], 128),
        Err(expected),
        "{shown:?}: not answered after {at} bytes"
    );
    assert_eq!(
        parse_limits(&wire[..at], limits),
        Err(expected),
        "{shown:?}: first {at} bytes whole"
    );
    if wire.len() <= 4096 {
        for split in 0..wire.len() {
            let mut parser = HeadParser::new(limits);
            let first = parse_with(&mut parser, &wire[..split], 128);
            assert!(
                first == Ok(None) || first == Err(expected),
                "{shown:?}: split at {split}: {first:?}"
            );
            assert_eq!(
                parse_with(&mut parser, wire, 128),
                Err(expected),
                "{shown:?}: split at {split}"
            );
        }
    }
}

fn reject_at(wire: &[u8], at: usize, expected: Error) {
    reject_at_limits(wire, at, Limits::DEFAULT, expected)
}

/// `GET / HTTP/1.1` with `Host: example.com` and the given extra field lines.
fn get_with(fields: &str) -> Vec<u8> {
    format!("GET / HTTP/1.1\r\nHost: example.com\r\n{fields}\r\n").into_bytes()
}

/// `POST /` HTTP/1.1 with `Host` and the given extra field lines.
fn post_with(fields: &str) -> Vec<u8> {
    format!("POST /submit HTTP/1.1\r\nHost: example.com\r\n{fields}\r\n").into_bytes()
}

// ---- accepted heads ------------------------------------------------------

/// RFC 9112 §3.2.1: origin-form, the everyday request.
#[test]
fn rfc9112_3_2_1_origin_form_get() {
    let p = accept(b"GET /a/b?c=d&e=%20f HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n");
    assert_eq!(p.method, "GET");
    assert_eq!(p.target, "/a/b?c=d&e=%20f");
    assert_eq!(p.form, TargetForm::Origin);
    assert_eq!(p.version, Version::Http11);
    assert_eq!(p.framing, BodyFraming::None);
    assert!(p.keep_alive);
    assert!(!p.expect_continue);
    assert_eq!(
        p.fields,
        vec![
            ("Host".to_owned(), b"example.com".to_vec()),
            ("Accept".to_owned(), b"*/*".to_vec())
        ]
    );
}

/// RFC 9112 §3.2.2: a server MUST accept absolute-form; scheme is
/// case-insensitive (RFC 9110 §4.2.3).
#[test]
fn rfc9112_3_2_2_absolute_form() {
    let p = accept(b"GET http://example.com/x?y HTTP/1.1\r\nHost: example.com\r\n\r\n");
    assert_eq!(p.form, TargetForm::Absolute);
    assert_eq!(p.target, "http://example.com/x?y");
    let p = accept(b"GET HTTPS://Example.COM:8443 HTTP/1.1\r\nHost: example.com\r\n\r\n");
    assert_eq!(p.form, TargetForm::Absolute);
    let p = accept(b"GET http://[::1]:8080/ HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n");
    assert_eq!(p.form, TargetForm::Absolute);
}

/// RFC 9112 §3.2.3: authority-form is for CONNECT.
#[test]
fn rfc9112_3_2_3_authority_form_with_connect() {
    let p = accept(b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
    assert_eq!(p.form, TargetForm::Authority);
    assert_eq!(p.target, "example.com:443");
}

/// RFC 9112 §3.2.4: asterisk-form is for OPTIONS.
#[test]
fn rfc9112_3_2_4_asterisk_form_with_options() {
    let p = accept(b"OPTIONS * HTTP/1.1\r\nHost: example.com\r\n\r\n");
    assert_eq!(p.form, TargetForm::Asterisk);
}

/// RFC 9112 §3.2: Host is required on HTTP/1.1 only; HTTP/1.0 may omit it.
#[test]
fn rfc9112_3_2_host_optional_on_http10() {
    let p = accept(b"GET / HTTP/1.0\r\n\r\n");
    assert_eq!(p.version, Version::Http10);
    assert!(!p.keep_alive);
    let p = accept(b"GET / HTTP/1.0\r\nHost: example.com\r\n\r\n");
    assert_eq!(p.fields.len(), 1);
}

/// RFC 9110 §7.2: IP literals, ports and an empty port are fine.
#[test]
fn rfc9110_7_2_host_values_accepted() {
    accept(b"GET / HTTP/1.1\r\nHost: [2001:db8::1]:8080\r\n\r\n");
    accept(b"GET / HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n");
    accept(b"GET / HTTP/1.1\r\nHost: xn--bcher-kva.example\r\n\r\n");
    accept(b"GET / HTTP/1.1\r\nhOsT: example.com:\r\n\r\n");
}

/// RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the
/// request line; those bytes still belong to the head.
#[test]
fn rfc9112_2_2_empty_lines_before_request_line_ignored() {
    let wire = b"\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n";
    let p = accept(wire);
    assert_eq!(p.method, "GET");
    assert_eq!(p.head_len, wire.len());
}

/// RFC 9112 §2.2 / RFC 9110 §5.5: the head ends at CRLF CRLF; what follows is
/// the body and is not looked at.
#[test]
fn rfc9112_2_1_head_len_stops_before_body() {
    let head = b"POST /submit HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n";
    let mut wire = head.to_vec();
    wire.extend_from_slice(b"he\r\nllo\x00\r");
    let p = parse_limits(&wire, Limits::DEFAULT).unwrap().unwrap();
    assert_eq!(p.head_len, head.len());
    assert_eq!(p.framing, BodyFraming::Length(5));
}

/// RFC 9110 §5.5: obs-text (0x80–0xFF) and HTAB are allowed in a value; the
/// whitespace around a value is not part of it.
#[test]
fn rfc9110_5_5_value_bytes_and_ows_trimming() {
    let p = accept(&get_with("X-Name: \t caf\u{e9} \tb\t \r\n"));
    assert_eq!(p.fields[1].1, b"caf\xc3\xa9 \tb");
    let p = accept(&get_with("X-Empty:\r\n"));
    assert_eq!(p.fields[1].1, b"");
}

/// RFC 9110 §5.5: obs-text need not be UTF-8 (a Latin-1 `é` is the byte
/// 0xE9 alone); the method, the target and every field name around such a
/// value still come out as text.
#[test]
fn rfc9110_5_5_obs_text_that_is_not_utf8() {
    let p = accept(b"GET /caf%C3%A9 HTTP/1.1\r\nHost: a\r\nX-Name: caf\xe9\r\nAccept: */*\r\n\r\n");
    assert_eq!(
        (p.method.as_str(), p.target.as_str()),
        ("GET", "/caf%C3%A9")
    );
    let names: Vec<&str> = p.fields.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["Host", "X-Name", "Accept"]);
    assert_eq!(p.fields[1].1, b"caf\xe9");
}

/// RFC 9112 §6.3 item 6 / RFC 9110 §8.6: Content-Length gives the length.
#[test]
fn rfc9112_6_3_content_length() {
    assert_eq!(
        accept(&post_with("Content-Length: 42\r\n")).framing,
        BodyFraming::Length(42)
    );
    assert_eq!(
        accept(&post_with("Content-Length: 0\r\n")).framing,
        BodyFraming::Length(0)
    );
    assert_eq!(
        accept(&post_with("Content-Length: 007\r\n")).framing,
        BodyFraming::Length(7)
    );
    // The largest length parses (the default body limit then refuses it).
    let unlimited = Limits {
        max_body_len: u64::MAX,
        ..Limits::DEFAULT
    };
    assert_eq!(
        accept_limits(
            &post_with("Content-Length: 18446744073709551615\r\n"),
            unlimited
        )
        .framing,
        BodyFraming::Length(u64::MAX)
    );
}

/// RFC 9110 §5.5: ` 5 ` is the value `5` (OWS around a field value is not
/// part of it).
#[test]
fn rfc9110_5_5_content_length_with_surrounding_ows() {
    assert_eq!(
        accept(&post_with("Content-Length:  5 \t\r\n")).framing,
        BodyFraming::Length(5)
    );
}

/// RFC 9110 §8.6: a list of identical values, or repeated fields with the
/// same value, may be taken as that one value.
#[test]
fn rfc9110_8_6_content_length_identical_list_merged() {
    assert_eq!(
        accept(&post_with("Content-Length: 5, 5\r\n")).framing,
        BodyFraming::Length(5)
    );
    assert_eq!(
        accept(&post_with("Content-Length: 5\r\nContent-Length: 5\r\n")).framing,
        BodyFraming::Length(5)
    );
}

/// RFC 9112 §6.3 item 4: `chunked` as the final (and only) coding; codings
/// are case-insensitive (RFC 9112 §7).
#[test]
fn rfc9112_6_3_chunked() {
    assert_eq!(
        accept(&post_with("Transfer-Encoding: chunked\r\n")).framing,
        BodyFraming::Chunked
    );
    assert_eq!(
        accept(&post_with("transfer-encoding:   CHUNKED  \r\n")).framing,
        BodyFraming::Chunked
    );
}

/// RFC 9112 §6.3 item 7: a request with neither Content-Length nor
/// Transfer-Encoding has no body.
#[test]
fn rfc9112_6_3_no_framing_means_no_body() {
    assert_eq!(accept(&post_with("")).framing, BodyFraming::None);
}

/// RFC 9112 §9.3: persistence truth table over version and Connection.
#[test]
fn rfc9112_9_3_keep_alive_truth_table() {
    let cases: &[(&str, &str, bool)] = &[
        ("1.1", "", true),
        ("1.1", "Connection: close\r\n", false),
        ("1.1", "Connection: CLOSE\r\n", false),
        ("1.1", "Connection: keep-alive\r\n", true),
        ("1.1", "Connection: Upgrade, Close\r\n", false),
        ("1.1", "Connection: te\r\nConnection: close\r\n", false),
        ("1.1", "Connection: keep-alive, close\r\n", false),
        ("1.0", "", false),
        ("1.0", "Connection: keep-alive\r\n", true),
        ("1.0", "Connection: Keep-Alive\r\n", true),
        ("1.0", "Connection: foo,  keep-alive \r\n", true),
        ("1.0", "Connection: keep-alive, close\r\n", false),
        ("1.0", "Connection: close\r\n", false),
        ("1.0", "Connection: keep-alivex\r\n", false),
    ];
    for &(version, fields, expected) in cases {
        let wire = format!("GET / HTTP/{version}\r\nHost: a\r\n{fields}\r\n");
        assert_eq!(
            accept(wire.as_bytes()).keep_alive,
            expected,
            "HTTP/{version} {fields:?}"
        );
    }
}

/// RFC 9110 §10.1.1: `Expect: 100-continue` (case-insensitive) on HTTP/1.1;
/// ignored on HTTP/1.0; other expectations are left in the fields.
#[test]
fn rfc9110_10_1_1_expect_continue() {
    assert!(accept(&post_with("Expect: 100-continue\r\nContent-Length: 3\r\n")).expect_continue);
    assert!(accept(&post_with("Expect: 100-Continue\r\n")).expect_continue);
    assert!(!accept(&post_with("")).expect_continue);
    let p = accept(&post_with("Expect: something-else\r\n"));
    assert!(!p.expect_continue);
    assert_eq!(
        p.fields[1],
        ("Expect".to_owned(), b"something-else".to_vec())
    );
    let p = accept(b"POST / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n");
    assert!(!p.expect_continue);
}

/// RFC 9110 §5.1: field names are case-insensitive; lookup helper.
#[test]
fn rfc9110_5_1_field_lookup_is_case_insensitive() {
    let wire = b"GET / HTTP/1.1\r\nHost: a\r\nX-Trace: 1\r\nx-trace: 2\r\n\r\n";
    let mut parser = HeadParser::new(Limits::DEFAULT);
    let mut fields = [Field::EMPTY; 8];
    let head = parser.parse(wire, &mut fields).unwrap().unwrap();
    assert_eq!(head.field_count, 3);
    assert_eq!(head.field(&fields, "X-TRACE"), Some(&b"1"[..]));
    assert_eq!(head.field(&fields, "absent"), None);
}

/// RFC 9112 §5: a head with exactly `max_fields` fields and exactly
/// `max_head_len` bytes is accepted (limits are inclusive).
#[test]
fn limits_are_inclusive() {
    let limits = Limits {
        max_fields: 3,
        ..Limits::DEFAULT
    };
    accept_limits(&get_with("A: 1\r\nB: 2\r\n"), limits);
    let wire = get_with("A: 1\r\n");
    accept_limits(
        &wire,
        Limits {
            max_head_len: wire.len(),
            ..Limits::DEFAULT
        },
    );
    let target = "/".repeat(100);
    accept_limits(
        format!("GET {target} HTTP/1.1\r\nHost: a\r\n\r\n").as_bytes(),
        Limits {
            max_target_len: 100,
            ..Limits::DEFAULT
        },
    );
}

/// RFC 9110 §15.5.14: a `Content-Length` above `Limits::max_body_len` is
/// refused with the head (413), before any body byte is read — with
/// `Expect: 100-continue` too; a body of exactly the limit is accepted. The
/// check comes after every other: a malformed framing stays a 400.
#[test]
fn content_length_over_the_body_limit_is_413() {
    let limits = Limits {
        max_body_len: 100,
        ..Limits::DEFAULT
    };
    let post =
        |fields: &str| format!("POST /upload HTTP/1.1\r\nHost: a\r\n{fields}\r\n").into_bytes();
    let at = accept_limits(&post("Content-Length: 100\r\n"), limits);
    assert_eq!(at.framing, BodyFraming::Length(100));
    reject_limits(
        &post("Content-Length: 101\r\n"),
        limits,
        Error::BodyTooLarge,
    );
    reject_limits(
        &post("Expect: 100-continue\r\nContent-Length: 101\r\n"),
        limits,
        Error::BodyTooLarge,
    );
    reject_limits(
        b"POST / HTTP/1.0\r\nContent-Length: 101\r\n\r\n",
        limits,
        Error::BodyTooLarge,
    );
    assert_eq!(Error::BodyTooLarge.status(), 413);
    // Other framing errors come first.
    reject_limits(
        &post("Content-Length: 101\r\nTransfer-Encoding: chunked\r\n"),
        limits,
        Error::ContentLengthWithTransferEncoding,
    );
    reject_limits(
        &post("Content-Length: 101, 102\r\n"),
        limits,
        Error::InvalidContentLength,
    );
    // A chunked head is not judged by the limit (its decoder is).
    accept_limits(&post("Transfer-Encoding: chunked\r\n"), limits);
    // The default is 1 GiB, and `u64::MAX` turns the limit off.
    accept(&post("Content-Length: 1073741824\r\n"));
    reject(&post("Content-Length: 1073741825\r\n"), Error::BodyTooLarge);
    accept_limits(
        &post("Content-Length: 18446744073709551615\r\n"),
        Limits {
            max_body_len: u64::MAX,
            ..Limits::DEFAULT
        },
    );
}

/// The parser is reusable: `reset` starts the next request.
#[test]
fn reset_parses_the_next_request() {
    let mut parser = HeadParser::new(Limits::DEFAULT);
    let first = b"GET /one HTTP/1.1\r\nHost: a\r\n\r\n";
    let second = b"GET /two HTTP/1.1\r\nHost: a\r\n\r\n";
    assert_eq!(
        parse_with(&mut parser, first, 8).unwrap().unwrap().target,
        "/one"
    );
    parser.reset();
    assert_eq!(parse_with(&mut parser, &second[..10], 8), Ok(None));
    assert_eq!(
        parse_with(&mut parser, second, 8).unwrap().unwrap().target,
        "/two"
    );
    // After an error too.
    parser.reset();
    assert_eq!(
        parse_with(&mut parser, b"GET / HTTP/1.1\r\n\r\n", 8),
        Err(Error::MissingHost)
    );
    parser.reset();
    assert!(parse_with(&mut parser, first, 8).unwrap().is_some());
}

/// A 16 KiB head fed one byte at a time: the scan resumes where it stopped,
/// so this is O(n) overall (the test asserts results, not time).
#[test]
fn sixteen_kib_head_trickled_one_byte_at_a_time() {
    let mut fields = String::new();
    let mut i = 0;
    loop {
        let line = format!("X-Field-{i}: {}\r\n", "v".repeat(150));
        if fields.len() + line.len() > 16 * 1024 - 64 {
            break;
        }
        fields.push_str(&line);
        i += 1;
    }
    let wire = get_with(&fields);
    assert!(wire.len() > 15 * 1024 && wire.len() <= 16 * 1024);
    let p = accept(&wire);
    assert_eq!(p.fields.len(), i + 1);
    assert_eq!(p.head_len, wire.len());
}

// ---- request line ----------------------------------------------------------

/// RFC 9110 §9.1 / §5.6.2: the method is a token.
#[test]
fn rfc9110_9_1_method_must_be_a_token() {
    reject(b"G(T / HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidMethod);
    reject(
        b"GE\x00T / HTTP/1.1\r\nHost: a\r\n\r\n",
        Error::InvalidMethod,
    );
    reject(b" GET / HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidMethod);
    reject(
        b"G\xc3\xa9T / HTTP/1.1\r\nHost: a\r\n\r\n",
        Error::InvalidMethod,
    );
}

/// RFC 9112 §2.2, §3 / RFC 9110 §5.6.2: after any empty lines the first
/// byte of a request is a tchar; one that is not (NUL, 0xFF, the record
/// header of a TLS ClientHello sent to a plain-text port, a space) is
/// refused as soon as it arrives, without waiting for a line end that may
/// never come.
#[test]
fn rfc9112_3_a_byte_that_cannot_start_a_request_is_refused_at_once() {
    reject_at(b"\x00", 1, Error::InvalidMethod);
    reject_at(b"\xff", 1, Error::InvalidMethod);
    reject_at(b"\x16", 1, Error::InvalidMethod);
    reject_at(b" ", 1, Error::InvalidMethod);
    reject_at(b"\t", 1, Error::InvalidMethod);
    reject_at(
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
        1,
        Error::InvalidMethod,
    );
    reject_at(
        b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
        1,
        Error::InvalidMethod,
    );
    // After empty lines, the first byte of the request line.
    reject_at(b"\r\n\x16\x03\x01", 3, Error::InvalidMethod);
    reject_at(b"\r\n\r\n\x00", 5, Error::InvalidMethod);
    // A CR may wait for its LF; a bare LF or a CR then anything else is
    // refused when it arrives.
    let mut parser = HeadParser::new(Limits::DEFAULT);
    assert_eq!(parse_with(&mut parser, b"\r", 8), Ok(None));
    assert_eq!(parse_with(&mut parser, b"\r\n", 8), Ok(None));
    reject_at(b"\n", 1, Error::MalformedHead);
    reject_at(b"\r\x16", 2, Error::BareCr);
    reject_at(b"\r\n\n", 3, Error::MalformedHead);
}

/// RFC 9110 §9.1: every method byte is checked as it arrives, not when the
/// SP ending the method (or the line end) comes.
#[test]
fn rfc9110_9_1_a_non_token_method_byte_is_refused_on_arrival() {
    reject_at(b"GET\x00", 4, Error::InvalidMethod);
    reject_at(
        b"G\xffT / HTTP/1.1\r\nHost: a\r\n\r\n",
        2,
        Error::InvalidMethod,
    );
    reject_at(
        b"PO(ST / HTTP/1.1\r\nHost: a\r\n\r\n",
        3,
        Error::InvalidMethod,
    );
    reject_at(
        b"GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n",
        4,
        Error::InvalidMethod,
    );
    reject_at(b"\r\nGE\x01T / HTTP/1.1\r\n", 5, Error::InvalidMethod);
    // A method without a SP is refused when its line ends, the same way
    // whole or trickled.
    reject_at(b"GET\r\nHost: a\r\n\r\n", 5, Error::MalformedHead);
    reject_at(b"G\x00T\r\n", 2, Error::InvalidMethod);
    // The tchars that are not letters are valid method bytes.
    let p = accept(b"M-1.!#$%&'*+^_`|~ / HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(p.method, "M-1.!#$%&'*+^_`|~");
}

/// RFC 9112 §3: a method longer than any the server implements SHOULD get
/// 501. A 100 KB method is refused as soon as its byte past
/// `max_method_len` arrives, not as a too-large head (431) once 16 KiB have.
#[test]
fn rfc9112_3_overlong_method_is_501_as_soon_as_the_limit_is_passed() {
    let max = Limits::DEFAULT.max_method_len;
    let long = "A".repeat(100 * 1024);
    let wire = format!("{long} / HTTP/1.1\r\nHost: a\r\n\r\n");
    reject_at(wire.as_bytes(), max + 1, Error::MethodTooLong);
    assert_eq!(Error::MethodTooLong.status(), 501);
    // No SP, no line end at all.
    reject_at(long.as_bytes(), max + 1, Error::MethodTooLong);
    // Split at every offset, and after empty lines.
    let wire = format!("{} / HTTP/1.1\r\nHost: a\r\n\r\n", "M".repeat(max + 1));
    reject_at(wire.as_bytes(), max + 1, Error::MethodTooLong);
    let wire = format!("\r\n\r\n{} / HTTP/1.1\r\n", "M".repeat(max + 1));
    reject_at(wire.as_bytes(), max + 5, Error::MethodTooLong);
    // A method of exactly the limit is fine.
    let wire = format!("{} / HTTP/1.1\r\nHost: a\r\n\r\n", "M".repeat(max));
    assert_eq!(accept(wire.as_bytes()).method.len(), max);
    // The first offending byte decides: a non-token byte at the limit is an
    // invalid method, a token byte there a method too long.
    let wire = format!("{}\x00 / HTTP/1.1\r\n", "M".repeat(max));
    reject_at(wire.as_bytes(), max + 1, Error::InvalidMethod);
    let wire = format!("{}M\x00 / HTTP/1.1\r\n", "M".repeat(max));
    reject_at(wire.as_bytes(), max + 1, Error::MethodTooLong);
    // A complete request line is judged the same way.
    let wire = format!("{}M\r\n", "M".repeat(max));
    reject_at(wire.as_bytes(), max + 1, Error::MethodTooLong);
}

/// `Limits::max_method_len` is inclusive and configurable.
#[test]
fn max_method_len_is_configurable() {
    let limits = Limits {
        max_method_len: 4,
        ..Limits::DEFAULT
    };
    accept_limits(b"POST / HTTP/1.1\r\nHost: a\r\n\r\n", limits);
    reject_at_limits(
        b"PATCH / HTTP/1.1\r\nHost: a\r\n\r\n",
        5,
        limits,
        Error::MethodTooLong,
    );
    let limits = Limits {
        max_method_len: 0,
        ..Limits::DEFAULT
    };
    reject_at_limits(b"GET / HTTP/1.1\r\n", 1, limits, Error::MethodTooLong);
    reject_at_limits(b"\x16\x03\x01", 1, limits, Error::InvalidMethod);
}

/// RFC 9112 §3: `method SP request-target SP HTTP-version`, single spaces.
#[test]
fn rfc9112_3_request_line_shape() {
    reject(b"GET\r\nHost: a\r\n\r\n", Error::MalformedHead);
    reject(b"GET /\r\nHost: a\r\n\r\n", Error::MalformedHead);
    reject(b"GET  / HTTP/1.1\r\nHost: a\r\n\r\n", Error::MalformedHead);
    reject(b"GET / HTTP/1.1 \r\nHost: a\r\n\r\n", Error::MalformedHead);
    reject(
        b"GET /a b HTTP/1.1\r\nHost: a\r\n\r\n",
        Error::MalformedHead,
    );
    reject(b"GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidMethod);
}

/// RFC 9112 §2.3: HTTP/2.0, HTTP/0.9, HTTP/1.2 are well-formed versions we
/// do not speak: 505.
#[test]
fn rfc9112_2_3_other_versions_are_505() {
    for v in ["HTTP/2.0", "HTTP/0.9", "HTTP/1.2", "HTTP/3.0", "HTTP/9.9"] {
        let wire = format!("GET / {v}\r\nHost: a\r\n\r\n");
        reject(wire.as_bytes(), Error::UnsupportedVersion);
        assert_eq!(Error::UnsupportedVersion.status(), 505);
    }
}

/// RFC 9112 §2.3: a version that is not `HTTP/DIGIT.DIGIT` (case-sensitive)
/// is a malformed request line: 400.
#[test]
fn rfc9112_2_3_garbage_versions_are_400() {
    for v in [
        "http/1.1",
        "HTTP/1",
        "HTTP/1.10",
        "HTTP/2",
        "HTTPS/1.1",
        "HTTP/1.x",
        "1.1",
    ] {
        let wire = format!("GET / {v}\r\nHost: a\r\n\r\n");
        reject(wire.as_bytes(), Error::MalformedHead);
    }
}

/// RFC 9112 §3.2: each target form only with its method.
#[test]
fn rfc9112_3_2_target_form_with_wrong_method() {
    // asterisk-form without OPTIONS
    reject(b"GET * HTTP/1.1\r\nHost: a\r\n\r\n", Error::InvalidTarget);
    // authority-form without CONNECT
    reject(
        b"GET example.com:443 HTTP/1.1\r\nHost: a\r\n\r\n",
        Error::InvalidTarget,
    );
    // CONNECT with origin-form, absolute-form, asterisk-form
    reject(
        b"CONNECT / HTTP/1.1\r\nHost: a\r\n\r\n",
        Error::InvalidTarget,
    );
    reject(
        b"CONNECT http://a:443/ HTTP/1.1\r\nHost: a\r\n\r\n",
        Error::InvalidTarget,
    );
    reject(
        b"CONNECT * HTTP/1.1\r\nHost: a\r\n\r\n",
        Error::InvalidTarget,
    );
    // authority-form needs a port (RFC 9112 §3.2.3)
    reject(
        b"CONNECT example.com HTTP/1.1\r\nHost: a\r\n\r\n",
        Error::InvalidTarget,
    );
    reject(
        b"CONNECT example.com: HTTP/1.1\r\nHost: a\r\n\r\n",
        Error::InvalidTarget,
    );
    // methods are case-sensitive: `options` is not OPTIONS
    reject(
        b"options * HTTP/1.1\r\nHost: a\r\n\r\n",
        Error::InvalidTarget,
    );
}

/// RFC 9112 §3.2 / RFC 3986: malformed targets are 400.
#[test]
fn rfc9112_3_2_malformed_targets() {
    for t in [
        "relative/path",
        "ftp://example.com/",
        "http:/example.com/",
        "http://",
        "http:///path",
        "http://user@example.com/",
        "http://exa%zzmple.com/",
        "http://example.com:99999/",
        "/a#fragment",
        "/%zz",
        "/%4",
        "/a\"b",
        "/a<b>",
        "/caf\u{e9}",
        "/a\\b",
        "/{x}",
    ] {
        let wire = format!("GET {t} HTTP/1.1\r\nHost: a\r\n\r\n");
        reject(wire.as_bytes(), Error::InvalidTarget);
    }
    reject(
        b"GET /a\x7fb HTTP/1.1\r\nHost: a\r\n\r\n",
        Error::InvalidTarget,
    );
    reject(
        b"GET /a\x00b HTTP/1.1\r\nHost: a\r\n\r\n",
        Error::InvalidTarget,
    );
}

/// RFC 9112 §3 / RFC 9110 §15.5.15: a 10 KB target is 414, detected from the
/// request line alone, before the head is complete.
#[test]
fn rfc9112_3_10kb_target_is_414() {
    let target = format!("/{}", "a".repeat(10 * 1024));
    let wire = format!("GET {target} HTTP/1.1\r\nHost: a\r\n\r\n");
    reject(wire.as_bytes(), Error::TargetTooLong);
    assert_eq!(Error::TargetTooLong.status(), 414);
    // Only part of the request line has arrived.
    let partial = &wire.as_bytes()[..9 * 1024];
    assert_eq!(
        parse_limits(partial, Limits::DEFAULT),
        Err(Error::TargetTooLong)
    );
    // One byte over a small limit.
    reject_limits(
        b"GET /abcd HTTP/1.1\r\nHost: a\r\n\r\n",
        Limits {
            max_target_len: 4,
            ..Limits::DEFAULT
        },
        Error::TargetTooLong,
    );
}

// ---- line structure ----------------------------------------------------------

/// RFC 9112 §2.2: a bare CR anywhere in the head is rejected.
#[test]
fn rfc9112_2_2_bare_cr_rejected() {
    reject(b"GET / HTTP/1.1\rHost: a\r\n\r\n", Error::BareCr);
    reject(b"GET /\r HTTP/1.1\r\nHost: a\r\n\r\n", Error::BareCr);
    reject(
        b"GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n",
        Error::BareCr,
    );
    reject(b"GET / HTTP/1.1\r\nHost: a\r\n\r\r\n", Error::BareCr);
    reject(b"\rGET / HTTP/1.1\r\nHost: a\r\n\r\n", Error::BareCr);
}

/// A bad method or an overlong target ahead of a bare CR or LF is what is
/// reported: the first offending byte decides, whole or trickled.
#[test]
fn request_line_errors_come_before_a_bad_line_end() {
    reject(b"G@T / HTTP/1.1\rX", Error::InvalidMethod);
    reject(b"G@T / HTTP/1.1\nX", Error::InvalidMethod);
    let long = format!(
        "GET /{} HTTP/1.1\rX",
        "a".repeat(Limits::DEFAULT.max_target_len)
    );
    reject(long.as_bytes(), Error::TargetTooLong);
    let long = format!("GET /{}\r\n", "a".repeat(Limits::DEFAULT.max_target_len));
    reject(long.as_bytes(), Error::TargetTooLong);
}

/// RFC 9112 §2.2: ringstream does not accept a bare LF as a line end.
#[test]
fn rfc9112_2_2_bare_lf_rejected() {
    reject(b"GET / HTTP/1.1\nHost: a\r\n\r\n", Error::MalformedHead);
    reject(b"GET / HTTP/1.1\r\nHost: a\n\r\n", Error::MalformedHead);
    reject(b"GET / HTTP/1.1\r\nHost: a\r\n\n", Error::MalformedHead);
    reject(b"\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", Error::MalformedHead);
    reject(
        b"GET / HTTP/1.1\r\nX: a\nb\r\nHost: a\r\n\r\n",
        Error::MalformedHead,
    );
}

/// RFC 9112 §2.2: whitespace between the request line and the first field
/// is rejected.
#[test]
fn rfc9112_2_2_whitespace_before_first_field() {
    reject(
        b"GET / HTTP/1.1\r\n Host: a\r\n\r\n",
        Error::WhitespaceBeforeFirstField,
    );
    reject(
        b"GET / HTTP/1.1\r\n\tHost: a\r\n\r\n",
        Error::WhitespaceBeforeFirstField,
    );
}

/// RFC 9112 §5.2: obs-fold in a request is rejected.
#[test]
fn rfc9112_5_2_obs_fold_rejected() {
    reject(
        b"GET / HTTP/1.1\r\nHost: a\r\nX-Long: part1\r\n part2\r\n\r\n",
        Error::ObsFold,
    );
    reject(
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip,\r\n\tchunked\r\n\r\n",
        Error::ObsFold,
    );
}

/// RFC 9112 §5.1: no whitespace between a field name and the colon (MUST
/// reject with 400) — also the smuggling classic `Transfer-Encoding : chunked`.
#[test]
fn rfc9112_5_1_whitespace_before_colon() {
    reject(
        &post_with("Transfer-Encoding : chunked\r\n"),
        Error::WhitespaceBeforeColon,
    );
    reject(
        &post_with("Content-Length\t: 5\r\n"),
        Error::WhitespaceBeforeColon,
    );
    reject(
        b"GET / HTTP/1.1\r\nHost : a\r\n\r\n",
        Error::WhitespaceBeforeColon,
    );
}

/// RFC 9110 §5.1: a field name is a non-empty token; a line needs a colon.
#[test]
fn rfc9110_5_1_field_name_must_be_a_token() {
    reject(&get_with("X(Bad): 1\r\n"), Error::InvalidFieldName);
    reject(&get_with(": no-name\r\n"), Error::InvalidFieldName);
    reject(&get_with("Two Words: 1\r\n"), Error::InvalidFieldName);
    reject(&get_with("Caf\u{e9}: 1\r\n"), Error::InvalidFieldName);
    reject(&get_with("NoColonHere\r\n"), Error::MalformedHead);
}

/// RFC 9110 §5.5: NUL, other CTLs and DEL are not allowed in a value —
/// including the smuggling vector `Transfer-Encoding: \x0bchunked`.
#[test]
fn rfc9110_5_5_ctl_in_value_rejected() {
    reject(&get_with("X: a\x00b\r\n"), Error::InvalidFieldValue);
    reject(&get_with("X: \x00\r\n"), Error::InvalidFieldValue);
    reject(&get_with("X: a\x7fb\r\n"), Error::InvalidFieldValue);
    reject(&get_with("X: a\x1bb\r\n"), Error::InvalidFieldValue);
    reject(
        &post_with("Transfer-Encoding: \x0bchunked\r\n"),
        Error::InvalidFieldValue,
    );
    reject(
        &post_with("Transfer-Encoding: chunked\x0c\r\n"),
        Error::InvalidFieldValue,
    );
}

// ---- Host ----------------------------------------------------------------------

/// RFC 9112 §3.2: an HTTP/1.1 request without Host is 400.
#[test]
fn rfc9112_3_2_missing_host_on_http11() {
    reject(b"GET / HTTP/1.1\r\n\r\n", Error::MissingHost);
    reject(
        b"GET / HTTP/1.1\r\nHost-Name: a\r\n\r\n",
        Error::MissingHost,
    );
    reject(b"GET http://a/ HTTP/1.1\r\n\r\n", Error::MissingHost);
}

/// RFC 9112 §3.2: more than one Host is 400, on 1.1 and on 1.0.
#[test]
fn rfc9112_3_2_two_host_fields() {
    reject(
        b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        Error::DuplicateHost,
    );
    reject(
        b"GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n",
        Error::DuplicateHost,
    );
    reject(
        b"GET / HTTP/1.0\r\nHost: a\r\nHOST: b\r\n\r\n",
        Error::DuplicateHost,
    );
}

/// RFC 9112 §3.2: an empty Host says the target has no authority, but an
/// HTTP/1.1 request needs one (an origin-form target has none but the one
/// Host carries): 400, whatever the target form. HTTP/1.0 may leave Host
/// out, and an empty one is taken the same way.
#[test]
fn rfc9112_3_2_empty_host_on_http11_is_400() {
    for wire in [
        &b"GET / HTTP/1.1\r\nHost:\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nHost: \t \r\n\r\n",
        b"GET / HTTP/1.1\r\nAccept: */*\r\nhost:\r\nX-A: 1\r\n\r\n",
        b"OPTIONS * HTTP/1.1\r\nHost:\r\n\r\n",
        b"GET http://example.com/ HTTP/1.1\r\nHost:\r\n\r\n",
        b"CONNECT example.com:443 HTTP/1.1\r\nHost:\r\n\r\n",
    ] {
        reject(wire, Error::InvalidHost);
    }
    assert_eq!(Error::InvalidHost.status(), 400);
    // Fields are judged in order: an empty first Host is the error before
    // a second Host is.
    reject(
        b"GET / HTTP/1.1\r\nHost:\r\nHost: a\r\n\r\n",
        Error::InvalidHost,
    );
    reject(
        b"GET / HTTP/1.1\r\nHost: a\r\nHost:\r\n\r\n",
        Error::DuplicateHost,
    );
    let p = accept(b"GET / HTTP/1.0\r\nHost:\r\n\r\n");
    assert_eq!(p.version, Version::Http10);
    accept(b"GET / HTTP/1.0\r\n\r\n");
}

/// RFC 9112 §3.2 / RFC 9110 §7.2: a Host value that is not uri-host[:port].
#[test]
fn rfc9110_7_2_invalid_host_values() {
    for v in [
        "a b", "a/b", "user@a", "a:99999", "a:8o", "[::1", "[::1]x", "[zz]", ":80", "a,b:1:2",
        "a\"b", "%zz", "a:1:2",
    ] {
        let wire = format!("GET / HTTP/1.1\r\nHost: {v}\r\n\r\n");
        reject(wire.as_bytes(), Error::InvalidHost);
    }
}

// ---- limits ----------------------------------------------------------------------

/// RFC 6585 §5: a 200 KB header line is 431 as soon as the buffer passes the
/// head limit, complete or not.
#[test]
fn rfc6585_5_200kb_header_line_is_431() {
    let wire = get_with(&format!("X-Big: {}\r\n", "b".repeat(200 * 1024)));
    reject(&wire, Error::HeadTooLarge);
    assert_eq!(Error::HeadTooLarge.status(), 431);
    let partial = &wire[..Limits::DEFAULT.max_head_len + 1];
    assert_eq!(
        parse_limits(partial, Limits::DEFAULT),
        Err(Error::HeadTooLarge)
    );
    assert_eq!(
        parse_limits(&wire[..Limits::DEFAULT.max_head_len], Limits::DEFAULT),
        Ok(None)
    );
}

/// RFC 6585 §5: one byte over `max_head_len` is 431, even when the extra
/// byte is the final LF.
#[test]
fn rfc6585_5_head_one_byte_over_is_431() {
    let wire = get_with("A: 1\r\n");
    reject_limits(
        &wire,
        Limits {
            max_head_len: wire.len() - 1,
            ..Limits::DEFAULT
        },
        Error::HeadTooLarge,
    );
}

/// RFC 6585 §5: more fields than `max_fields` is 431.
#[test]
fn rfc6585_5_too_many_fields_is_431() {
    let many: String = (0..101).map(|i| format!("X-{i}: v\r\n")).collect();
    reject(&get_with(&many), Error::TooManyFields);
    reject_limits(
        &get_with("A: 1\r\nB: 2\r\nC: 3\r\n"),
        Limits {
            max_fields: 3,
            ..Limits::DEFAULT
        },
        Error::TooManyFields,
    );
    assert_eq!(Error::TooManyFields.status(), 431);
}

/// The caller's field storage caps the count when shorter than the limit;
/// `max_fields` above `MAX_FIELDS` is clamped to it.
#[test]
fn field_storage_and_max_fields_clamp() {
    let wire = get_with("A: 1\r\nB: 2\r\n");
    let mut parser = HeadParser::new(Limits::DEFAULT);
    assert_eq!(parse_with(&mut parser, &wire, 2), Err(Error::TooManyFields));
    let mut parser = HeadParser::new(Limits::DEFAULT);
    assert_eq!(
        parse_with(&mut parser, &wire, 3)
            .unwrap()
            .unwrap()
            .fields
            .len(),
        3
    );

    let limits = Limits {
        max_fields: 10_000,
        max_head_len: 64 * 1024,
        ..Limits::DEFAULT
    };
    let at_cap: String = (0..ringstream_core::h1::MAX_FIELDS - 1)
        .map(|i| format!("X-{i}: v\r\n"))
        .collect();
    let mut parser = HeadParser::new(limits);
    let p = parse_with(&mut parser, &get_with(&at_cap), 1000)
        .unwrap()
        .unwrap();
    assert_eq!(p.fields.len(), ringstream_core::h1::MAX_FIELDS);
    let over: String = (0..ringstream_core::h1::MAX_FIELDS)
        .map(|i| format!("X-{i}: v\r\n"))
        .collect();
    let mut parser = HeadParser::new(limits);
    assert_eq!(
        parse_with(&mut parser, &get_with(&over), 1000),
        Err(Error::TooManyFields)
    );
}

// ---- body framing and smuggling ---------------------------------------------------

/// RFC 9112 §6.1 / §6.3 item 3: CL.TE — both framing fields are rejected
/// (ringstream's choice: the classic smuggling vector).
#[test]
fn rfc9112_6_3_smuggling_cl_te() {
    reject(
        &post_with("Content-Length: 6\r\nTransfer-Encoding: chunked\r\n"),
        Error::ContentLengthWithTransferEncoding,
    );
}

/// RFC 9112 §6.1 / §6.3 item 3: TE.CL, the same pair the other way round.
#[test]
fn rfc9112_6_3_smuggling_te_cl() {
    reject(
        &post_with("Transfer-Encoding: chunked\r\nContent-Length: 4\r\n"),
        Error::ContentLengthWithTransferEncoding,
    );
    reject(
        &post_with("Transfer-Encoding: gzip, chunked\r\nContent-Length: 4\r\n"),
        Error::ContentLengthWithTransferEncoding,
    );
}

/// RFC 9112 §6.1: chunked MUST NOT be applied more than once.
#[test]
fn rfc9112_6_1_chunked_twice() {
    reject(
        &post_with("Transfer-Encoding: chunked, chunked\r\n"),
        Error::InvalidTransferEncoding,
    );
    reject(
        &post_with("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n"),
        Error::InvalidTransferEncoding,
    );
}

/// RFC 9112 §6.3 item 4: when chunked is not the final coding the length
/// cannot be determined: 400. `xchunked` is not `chunked`.
#[test]
fn rfc9112_6_3_final_coding_not_chunked() {
    reject(
        &post_with("Transfer-Encoding: xchunked\r\n"),
        Error::InvalidTransferEncoding,
    );
    reject(
        &post_with("Transfer-Encoding: chunked, gzip\r\n"),
        Error::InvalidTransferEncoding,
    );
    reject(
        &post_with("Transfer-Encoding: gzip\r\n"),
        Error::InvalidTransferEncoding,
    );
    reject(
        &post_with("Transfer-Encoding: identity\r\n"),
        Error::InvalidTransferEncoding,
    );
    reject(
        &post_with("Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n"),
        Error::InvalidTransferEncoding,
    );
    reject(
        &post_with("Transfer-Encoding: chunked;x=1\r\n"),
        Error::InvalidTransferEncoding,
    );
    reject(
        &post_with("Transfer-Encoding: \"chunked\"\r\n"),
        Error::InvalidTransferEncoding,
    );
    reject(
        &post_with("Transfer-Encoding: chunked chunked\r\n"),
        Error::InvalidTransferEncoding,
    );
}

/// RFC 9112 §6.1: an empty Transfer-Encoding or an empty list element
/// leaves the framing undeterminable: 400.
#[test]
fn rfc9112_6_1_empty_transfer_encoding() {
    reject(
        &post_with("Transfer-Encoding:\r\n"),
        Error::InvalidTransferEncoding,
    );
    reject(
        &post_with("Transfer-Encoding:   \r\n"),
        Error::InvalidTransferEncoding,
    );
    reject(
        &post_with("Transfer-Encoding: ,chunked\r\n"),
        Error::InvalidTransferEncoding,
    );
    reject(
        &post_with("Transfer-Encoding: chunked,\r\n"),
        Error::InvalidTransferEncoding,
    );
    reject(
        &post_with("Transfer-Encoding:\r\nTransfer-Encoding: chunked\r\n"),
        Error::InvalidTransferEncoding,
    );
}

/// RFC 9112 §6.1: a transfer coding ringstream does not implement is 501
/// when the framing is otherwise sound (chunked last, once).
#[test]
fn rfc9112_6_1_unknown_coding_is_501() {
    for te in [
        "gzip, chunked",
        "deflate,chunked",
        "compress , chunked",
        "x-custom, chunked",
    ] {
        reject(
            &post_with(&format!("Transfer-Encoding: {te}\r\n")),
            Error::UnknownTransferCoding,
        );
    }
    reject(
        &post_with("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n"),
        Error::UnknownTransferCoding,
    );
    assert_eq!(Error::UnknownTransferCoding.status(), 501);
}

/// RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 request is faulty framing.
#[test]
fn rfc9112_6_1_transfer_encoding_on_http10() {
    reject(
        b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
        Error::TransferEncodingOnHttp10,
    );
}

/// RFC 9110 §8.6: Content-Length is 1*DIGIT: no sign, no hex, no inner
/// whitespace, no overflow.
#[test]
fn rfc9110_8_6_content_length_syntax() {
    for cl in [
        "+5",
        "-1",
        "0x5",
        "5 5",
        "5\t5",
        "5.0",
        "1e3",
        "five",
        "",
        "18446744073709551616",
        "99999999999999999999",
        "5,,5",
        "5,",
        ",5",
        "\"5\"",
    ] {
        reject(
            &post_with(&format!("Content-Length: {cl}\r\n")),
            Error::InvalidContentLength,
        );
    }
}

/// RFC 9110 §8.6 / RFC 9112 §6.3 item 5: differing values are 400, in a list
/// or across repeated fields.
#[test]
fn rfc9112_6_3_differing_content_lengths() {
    reject(
        &post_with("Content-Length: 5, 6\r\n"),
        Error::InvalidContentLength,
    );
    reject(
        &post_with("Content-Length: 5\r\nContent-Length: 6\r\n"),
        Error::InvalidContentLength,
    );
    reject(
        &post_with("Content-Length: 5, 5\r\nContent-Length: 6\r\n"),
        Error::InvalidContentLength,
    );
}

/// Every rejection answers the status its error maps to.
#[test]
fn statuses_of_head_errors() {
    assert_eq!(Error::InvalidTarget.status(), 400);
    assert_eq!(Error::BareCr.status(), 400);
    assert_eq!(Error::ObsFold.status(), 400);
    assert_eq!(Error::WhitespaceBeforeColon.status(), 400);
    assert_eq!(Error::ContentLengthWithTransferEncoding.status(), 400);
    assert_eq!(Error::InvalidTransferEncoding.status(), 400);
    assert_eq!(Error::TransferEncodingOnHttp10.status(), 400);
}

// ---- allocations -----------------------------------------------------------------

/// Counts heap allocations made by the current thread, so the check below is
/// not disturbed by tests running in parallel.
struct CountingAlloc;

thread_local! {
    static ALLOCS: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
}

// SAFETY: forwards every call unchanged to the system allocator; the counter
// is a const-initialised thread-local `Cell`, which never allocates.
unsafe impl std::alloc::GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

fn allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCS.with(|c| c.get());
    f();
    ALLOCS.with(|c| c.get()) - before
}

/// The server's budget is a handful of allocations per request: parsing a
/// head, trickled or whole, accepted or rejected, makes none.
#[test]
fn parsing_allocates_nothing() {
    let wire = b"POST /x?y=1 HTTP/1.1\r\nHost: example.com\r\nContent-Length: 3\r\n\
                 Connection: keep-alive\r\nExpect: 100-continue\r\nAccept: */*\r\n\r\nabc";
    let bad = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n";
    let mut fields = [Field::EMPTY; 64];
    let mut parser = HeadParser::new(Limits::DEFAULT);
    let n = allocations_during(|| {
        for end in 0..wire.len() {
            let _ = parser.parse(&wire[..end], &mut fields);
        }
        let head = parser.parse(wire, &mut fields).unwrap().unwrap();
        assert_eq!(head.framing, BodyFraming::Length(3));
        assert!(head.expect_continue);
        parser.reset();
        assert_eq!(
            parser.parse(bad, &mut fields),
            Err(Error::UnknownTransferCoding)
        );
    });
    assert_eq!(n, 0);
    // The counter does see allocations.
    assert!(allocations_during(|| drop(std::hint::black_box(vec![0u8; 16]))) >= 1);
}

// ---- robustness ----------------------------------------------------------------------

fn valid_heads() -> Vec<Vec<u8>> {
    vec![
        b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n".to_vec(),
        b"POST /x?y=1 HTTP/1.1\r\nHost: a:80\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc"
            .to_vec(),
        b"PUT /u HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n"
            .to_vec(),
        b"OPTIONS * HTTP/1.0\r\n\r\n".to_vec(),
        b"CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n".to_vec(),
    ]
}

/// Parses `wire` whole and trickled; both must agree and nothing may panic.
fn check_consistent(wire: &[u8], limits: Limits) {
    let whole = parse_limits(wire, limits);
    let trickled = trickle(wire, limits);
    match (&whole, &trickled) {
        (Ok(Some(_)), _) | (Err(_), _) => assert_eq!(whole, trickled),
        (Ok(None), _) => assert_eq!(trickled, Ok(None)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// No input makes the parser panic, and the answer does not depend on
    /// how the bytes were split.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        check_consistent(&bytes, Limits::DEFAULT);
        check_consistent(&bytes, Limits { max_head_len: 64, max_fields: 2, max_target_len: 8, max_method_len: 4, ..Limits::DEFAULT });
    }

    /// Mutations of valid heads (replace, insert, delete bytes) never panic
    /// and answer the same whole or trickled.
    #[test]
    fn mutated_valid_heads_never_panic(
        which in 0usize..5,
        edits in proptest::collection::vec((any::<u16>(), any::<u8>(), 0u8..3), 1..6),
    ) {
        let mut wire = valid_heads()[which].clone();
        for (pos, byte, op) in edits {
            let at = usize::from(pos) % (wire.len() + 1);
            match op {
                0 if at < wire.len() => wire[at] = byte,
                1 => wire.insert(at, byte),
                _ if at < wire.len() => { wire.remove(at); }
                _ => wire.push(byte),
            }
        }
        check_consistent(&wire, Limits::DEFAULT);
    }

    /// Valid heads built from random parts are accepted at every split.
    #[test]
    fn generated_valid_heads_are_split_independent(
        path in "/[a-z0-9/._~-]{0,20}",
        names in proptest::collection::vec("[A-Za-z][A-Za-z0-9-]{0,10}", 0..6),
        value in "[ -~]{0,20}",
        len in any::<u32>(),
    ) {
        let mut wire = format!("POST {path} HTTP/1.1\r\nHost: example.com\r\n");
        for n in &names {
            let lower = n.to_ascii_lowercase();
            if ["host", "content-length", "transfer-encoding"].contains(&lower.as_str()) {
                continue;
            }
            wire.push_str(&format!("{n}: {value}\r\n"));
        }
        wire.push_str(&format!("Content-Length: {len}\r\n\r\n"));
        let unlimited = Limits { max_body_len: u64::MAX, ..Limits::DEFAULT };
        let p = accept_limits(wire.as_bytes(), unlimited);
        prop_assert_eq!(p.framing, BodyFraming::Length(u64::from(len)));
        prop_assert_eq!(p.head_len, wire.len());
    }
}

/// A later call with smaller field storage than the head needs is refused
/// rather than truncating the fields.
#[test]
fn shrinking_field_storage_after_the_head_is_refused() {
    let wire = get_with("A: 1\r\nB: 2\r\n");
    let mut parser = HeadParser::new(Limits::DEFAULT);
    assert!(parse_with(&mut parser, &wire, 8).unwrap().is_some());
    assert_eq!(parse_with(&mut parser, &wire, 2), Err(Error::TooManyFields));
    let mut parser = HeadParser::new(Limits::DEFAULT);
    assert_eq!(
        parse_with(&mut parser, &wire[..wire.len() - 1], 8),
        Ok(None)
    );
    assert_eq!(parse_with(&mut parser, &wire, 2), Err(Error::TooManyFields));
}

/// Storage too short for a head within the limits is not a final verdict:
/// the same parser, called again with `field_lines()` entries, parses the
/// head (whole or trickled), while a head over `max_fields` stays rejected
/// whatever the storage.
#[test]
fn short_field_storage_can_be_retried_with_more() {
    let wire = get_with("A: 1\r\nB: 2\r\nC: 3\r\n");
    let mut parser = HeadParser::new(Limits::DEFAULT);
    assert_eq!(parse_with(&mut parser, &wire, 2), Err(Error::TooManyFields));
    assert_eq!(parser.field_lines(), 4);
    let needed = parser.field_lines();
    let p = parse_with(&mut parser, &wire, needed).unwrap().unwrap();
    assert_eq!(p.fields.len(), 4);
    assert_eq!(p.head_len, wire.len());

    // Trickled: the short storage only matters once the head is complete.
    let mut parser = HeadParser::new(Limits::DEFAULT);
    for end in 1..wire.len() {
        assert_eq!(parse_with(&mut parser, &wire[..end], 1), Ok(None), "{end}");
    }
    assert_eq!(parse_with(&mut parser, &wire, 1), Err(Error::TooManyFields));
    assert_eq!(
        parse_with(&mut parser, &wire, 16)
            .unwrap()
            .unwrap()
            .fields
            .len(),
        4
    );

    let limits = Limits {
        max_fields: 3,
        ..Limits::DEFAULT
    };
    let mut parser = HeadParser::new(limits);
    assert_eq!(parse_with(&mut parser, &wire, 2), Err(Error::TooManyFields));
    assert_eq!(
        parse_with(&mut parser, &wire, 64),
        Err(Error::TooManyFields)
    );
}

// ---- httparse as a reference tokenizer ----------------------------------------------

/// Method, target and fields (name, value) of a head.
type Tokens = (String, String, Vec<(String, Vec<u8>)>);

/// What `httparse` makes of a complete head: method, target and fields with
/// the values trimmed of surrounding whitespace (which `httparse` leaves
/// trailing).
fn httparse_tokens(wire: &[u8]) -> Option<Tokens> {
    let mut headers = [httparse::EMPTY_HEADER; 128];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(wire) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return None,
    }
    let trim = |v: &[u8]| {
        let v = v.trim_ascii_start();
        let end = v
            .iter()
            .rposition(|&b| b != b' ' && b != b'\t')
            .map_or(0, |p| p + 1);
        v[..end].to_vec()
    };
    Some((
        req.method?.to_owned(),
        req.path?.to_owned(),
        req.headers
            .iter()
            .map(|h| (h.name.to_owned(), trim(h.value)))
            .collect(),
    ))
}

/// Checks that a head ringstream accepts is tokenized exactly as `httparse`
/// tokenizes it.
fn check_same_tokens_as_httparse(wire: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(Some(p)) = parse_limits(wire, Limits::DEFAULT) {
        let reference = httparse_tokens(&wire[..p.head_len]);
        prop_assert!(reference.is_some(), "httparse refuses an accepted head");
        let (method, target, fields) = reference.unwrap_or_default();
        prop_assert_eq!(&p.method, &method);
        prop_assert_eq!(&p.target, &target);
        prop_assert_eq!(&p.fields, &fields);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// Generated heads with arbitrary field values (obs-text, tabs and
    /// whitespace around them included) split into the same method, target
    /// and fields as `httparse` finds.
    #[test]
    fn fields_match_httparse(
        method in "[A-Z]{1,7}",
        path in "/[a-zA-Z0-9/._~?=&-]{0,30}(%[0-9A-F]{2})?",
        fields in proptest::collection::vec(
            ("[A-Za-z0-9!#$&'*+.^_`|~-]{1,12}", "[ \t]{0,2}", proptest::collection::vec(
                prop_oneof![0x20u8..0x7f, 0x80u8..=0xff, Just(b'\t')], 0..24), "[ \t]{0,2}"),
            0..12),
        leading_empty_lines in 0usize..3,
    ) {
        let mut wire = b"\r\n".repeat(leading_empty_lines);
        wire.extend_from_slice(format!("{method} {path} HTTP/1.1\r\nHost: example.com\r\n").as_bytes());
        for (name, before, value, after) in &fields {
            let lower = name.to_ascii_lowercase();
            if ["host", "content-length", "transfer-encoding", "expect", "connection"]
                .contains(&lower.as_str())
            {
                continue;
            }
            wire.extend_from_slice(format!("{name}:{before}").as_bytes());
            wire.extend_from_slice(value);
            wire.extend_from_slice(format!("{after}\r\n").as_bytes());
        }
        wire.extend_from_slice(b"\r\n");
        prop_assert!(matches!(parse_limits(&wire, Limits::DEFAULT), Ok(Some(_))), "generated head refused");
        check_same_tokens_as_httparse(&wire)?;
    }

    /// Mutated valid heads: whenever ringstream accepts one, `httparse`
    /// tokenizes it the same way.
    #[test]
    fn accepted_mutations_match_httparse(
        which in 0usize..5,
        edits in proptest::collection::vec((any::<u16>(), any::<u8>(), 0u8..3), 1..6),
    ) {
        let mut wire = valid_heads()[which].clone();
        for (pos, byte, op) in edits {
            let at = usize::from(pos) % (wire.len() + 1);
            match op {
                0 if at < wire.len() => wire[at] = byte,
                1 => wire.insert(at, byte),
                _ if at < wire.len() => { wire.remove(at); }
                _ => wire.push(byte),
            }
        }
        check_same_tokens_as_httparse(&wire)?;
    }
}
