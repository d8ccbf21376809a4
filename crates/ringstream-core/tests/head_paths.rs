//! The two ways `HeadParser` reads a line give the same answers.
//!
//! A line that is complete when the parser first looks at it is read in one
//! pass when it has a usual shape (a `GET` or `POST`, an origin-form target,
//! `HTTP/1.1`, a field line with a token name); any other line, and any line
//! that arrives in pieces, goes through the general scan. A head parsed
//! whole takes the first way for its usual lines; the same head fed one
//! byte at a time takes the second for all of them; a head split in two
//! mixes both, with the fields of the earlier lines split again. These
//! tests feed heads near the edges of the one-pass shapes all three ways
//! and check the answers agree, and pin the answers at those edges.

use proptest::prelude::*;
use ringstream_core::h1::{BodyFraming, Field, HeadParser, TargetForm, Version};
use ringstream_core::{Error, Limits};

/// An owned answer: the head's parts and fields, or the error.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Parsed {
    method: String,
    target: String,
    form: TargetForm,
    version: Version,
    framing: BodyFraming,
    keep_alive: bool,
    expect_continue: bool,
    upgrade: bool,
    head_len: usize,
    fields: Vec<(String, Vec<u8>)>,
}

type Answer = Result<Option<Parsed>, Error>;

/// One call with fresh field storage (as the server does, with a new array
/// on each call).
fn call(parser: &mut HeadParser, buf: &[u8]) -> Answer {
    let mut fields = vec![Field::EMPTY; 128];
    parser.parse(buf, &mut fields).map(|head| {
        head.map(|h| Parsed {
            method: h.method.to_owned(),
            target: h.target.to_owned(),
            form: h.target_form,
            version: h.version,
            framing: h.framing,
            keep_alive: h.keep_alive,
            expect_continue: h.expect_continue,
            upgrade: h.upgrade,
            head_len: h.head_len,
            fields: h
                .fields(&fields)
                .iter()
                .map(|f| (f.name.to_owned(), f.value.to_vec()))
                .collect(),
        })
    })
}

/// Parses `wire` whole, one byte more at a time, and split in two at every
/// offset; checks the answers agree and returns the whole one.
fn answer_limits(wire: &[u8], limits: Limits) -> Answer {
    let whole = call(&mut HeadParser::new(limits), wire);

    let mut parser = HeadParser::new(limits);
    let mut trickled = Ok(None);
    for end in 0..=wire.len() {
        trickled = call(&mut parser, &wire[..end]);
        if trickled != Ok(None) {
            break;
        }
    }
    assert_eq!(
        trickled,
        whole,
        "trickled: {:?}",
        String::from_utf8_lossy(wire)
    );

    for split in 0..wire.len() {
        let mut parser = HeadParser::new(limits);
        let first = call(&mut parser, &wire[..split]);
        let answer = if first == Ok(None) {
            call(&mut parser, wire)
        } else {
            first
        };
        assert_eq!(
            answer,
            whole,
            "split at {split}: {:?}",
            String::from_utf8_lossy(wire)
        );
    }
    whole
}

fn answer(wire: &[u8]) -> Answer {
    answer_limits(wire, Limits::DEFAULT)
}

fn accepted(wire: &[u8]) -> Parsed {
    match answer(wire) {
        Ok(Some(p)) => p,
        other => panic!("{:?}: {other:?}", String::from_utf8_lossy(wire)),
    }
}

fn field<'p>(p: &'p Parsed, name: &str) -> Option<&'p [u8]> {
    p.fields
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| &v[..])
}

// ---- the request line --------------------------------------------------

/// Methods that start like `GET` or `POST` are methods of their own.
#[test]
fn methods_near_get_and_post() {
    for method in [
        "GET", "POST", "GETX", "GE", "G", "POS", "POSTS", "get", "PUT",
    ] {
        let wire = format!("{method} / HTTP/1.1\r\nHost: a\r\n\r\n");
        assert_eq!(accepted(wire.as_bytes()).method, method);
    }
}

/// `GET` or `POST` followed by anything but SP is not the usual line.
#[test]
fn get_followed_by_other_than_sp() {
    assert_eq!(
        answer(b"GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n"),
        Err(Error::InvalidMethod)
    );
    assert_eq!(
        answer(b"GET/ HTTP/1.1\r\nHost: a\r\n\r\n"),
        Err(Error::InvalidMethod)
    );
    assert_eq!(
        answer(b"POST\r\nHost: a\r\n\r\n"),
        Err(Error::MalformedHead)
    );
    assert_eq!(
        answer(b"GET  / HTTP/1.1\r\nHost: a\r\n\r\n"),
        Err(Error::MalformedHead)
    );
    assert_eq!(answer(b"GET "), Ok(None));
}

/// `CONNECT` never has an origin-form target; it has an authority.
#[test]
fn connect_is_left_to_the_general_scan() {
    assert_eq!(
        answer(b"CONNECT / HTTP/1.1\r\nHost: a\r\n\r\n"),
        Err(Error::InvalidTarget)
    );
    let p = accepted(b"CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n");
    assert_eq!(p.form, TargetForm::Authority);
    let p = accepted(b"CONNECX / HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(p.form, TargetForm::Origin);
}

/// Versions that start like `HTTP/1.1` but are not it.
#[test]
fn versions_near_http_1_1() {
    let with = |v: &str| answer(format!("GET / {v}\r\nHost: a\r\n\r\n").as_bytes());
    assert_eq!(accepted(b"GET / HTTP/1.0\r\n\r\n").version, Version::Http10);
    assert_eq!(with("HTTP/1.10"), Err(Error::MalformedHead));
    assert_eq!(with("HTTP/1.1 "), Err(Error::MalformedHead));
    assert_eq!(with("HTTP/1.2"), Err(Error::UnsupportedVersion));
    assert_eq!(with("HTTP/2.0"), Err(Error::UnsupportedVersion));
    assert_eq!(with("http/1.1"), Err(Error::MalformedHead));
    assert_eq!(with("HTTP/1."), Err(Error::MalformedHead));
    assert_eq!(
        answer(b"GET / HTTP/1.1\rHost: a\r\n\r\n"),
        Err(Error::BareCr)
    );
    assert_eq!(
        answer(b"GET / HTTP/1.1\nHost: a\r\n\r\n"),
        Err(Error::MalformedHead)
    );
}

/// Targets with escapes, and bytes a target may not hold.
#[test]
fn origin_form_targets() {
    let with = |t: &[u8]| {
        let mut wire = b"GET ".to_vec();
        wire.extend_from_slice(t);
        wire.extend_from_slice(b" HTTP/1.1\r\nHost: a\r\n\r\n");
        answer(&wire)
    };
    for ok in [
        &b"/"[..],
        b"/%41",
        b"/a%2fb?c=%20&d",
        b"/a/b;c=d/e?f=g@h:i",
        b"//",
    ] {
        assert_eq!(with(ok).unwrap().unwrap().target.as_bytes(), ok);
    }
    for bad in [
        &b"/a%2"[..],
        b"/a%zz",
        b"/a%",
        b"/#frag",
        b"/a\"b",
        b"/\xc3\xa9",
        b"/a\x7f",
        b"/a{b}",
        b"/a\x00",
    ] {
        assert_eq!(with(bad), Err(Error::InvalidTarget), "{bad:?}");
    }
}

/// The method and target limits hold on both ways.
#[test]
fn method_and_target_limits_at_their_edges() {
    let small = Limits {
        max_method_len: 4,
        max_target_len: 6,
        ..Limits::DEFAULT
    };
    let ok = answer_limits(b"POST /abcde HTTP/1.1\r\nHost: a\r\n\r\n", small);
    assert_eq!(ok.unwrap().unwrap().target, "/abcde");
    assert_eq!(
        answer_limits(b"POSTS / HTTP/1.1\r\nHost: a\r\n\r\n", small),
        Err(Error::MethodTooLong)
    );
    assert_eq!(
        answer_limits(b"GET /abcdef HTTP/1.1\r\nHost: a\r\n\r\n", small),
        Err(Error::TargetTooLong)
    );
    let tiny = Limits {
        max_method_len: 3,
        ..Limits::DEFAULT
    };
    assert_eq!(
        answer_limits(b"POST / HTTP/1.1\r\nHost: a\r\n\r\n", tiny),
        Err(Error::MethodTooLong)
    );
}

/// Empty lines before the request line, and a head cut by the size limit
/// inside its usual lines.
#[test]
fn leading_empty_lines_and_the_head_limit() {
    let p = accepted(b"\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(p.head_len, 31);
    let wire = b"GET / HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n";
    for max in 1..wire.len() {
        let limits = Limits {
            max_head_len: max,
            ..Limits::DEFAULT
        };
        assert_eq!(
            answer_limits(wire, limits),
            Err(Error::HeadTooLarge),
            "{max}"
        );
    }
    let limits = Limits {
        max_head_len: wire.len(),
        ..Limits::DEFAULT
    };
    assert!(matches!(answer_limits(wire, limits), Ok(Some(_))));
}

// ---- field lines -------------------------------------------------------

/// Names of the length of a name the parser interprets but another name,
/// and interpreted names in any case.
#[test]
fn interpreted_names_by_length_and_content() {
    let get =
        |fields: &str| accepted(format!("GET / HTTP/1.1\r\nHost: a\r\n{fields}\r\n").as_bytes());
    let post =
        |fields: &str| answer(format!("POST / HTTP/1.1\r\nHost: a\r\n{fields}\r\n").as_bytes());

    assert_eq!(get("Hosu: b\r\n").fields.len(), 2);
    assert_eq!(
        answer(b"GET / HTTP/1.1\r\nHosu: a\r\n\r\n"),
        Err(Error::MissingHost)
    );
    assert_eq!(
        answer(b"GET / HTTP/1.1\r\nHOST: a\r\nhOsT: b\r\n\r\n"),
        Err(Error::DuplicateHost)
    );
    assert_eq!(
        post("CONTENT-LENGTH: 5\r\n").unwrap().unwrap().framing,
        BodyFraming::Length(5)
    );
    for near in [
        "Content_Length: 5",
        "Content-Lengti: 5",
        "Dontent-Length: 5",
        "Content-Lengths: 5",
        "Content~Length: 5",
    ] {
        let p = post(&format!("{near}\r\n")).unwrap().unwrap();
        assert_eq!(p.framing, BodyFraming::None, "{near}");
    }
    assert_eq!(
        post("TRANSFER-ENCODING: chunked\r\n")
            .unwrap()
            .unwrap()
            .framing,
        BodyFraming::Chunked
    );
    for near in [
        "Transfer-Encodinh: chunked",
        "TransferaEncoding: chunked",
        "Transfer_Encoding: chunked",
        "Uransfer-Encoding: chunked",
    ] {
        let p = post(&format!("{near}\r\n")).unwrap().unwrap();
        assert_eq!(p.framing, BodyFraming::None, "{near}");
    }
    assert!(!get("connectioN: close\r\n").keep_alive);
    assert!(get("Connectiom: close\r\n").keep_alive);
    assert!(get("EXPECT: 100-continue\r\n").expect_continue);
    assert!(!get("Expecu: 100-continue\r\n").expect_continue);
    assert!(get("UPGRADE: websocket\r\nConnection: Upgrade\r\n").upgrade);
    assert!(!get("Upgradf: websocket\r\nConnection: Upgrade\r\n").upgrade);
}

/// Values: whitespace around them, HTAB, obs-text, and the bytes a value
/// may not hold, at every place in an eight-byte word.
#[test]
fn field_values_at_word_edges() {
    let with = |value: &[u8]| {
        let mut wire = b"GET / HTTP/1.1\r\nHost: a\r\nX-V:".to_vec();
        wire.extend_from_slice(value);
        wire.extend_from_slice(b"\r\n\r\n");
        answer(&wire)
    };
    let value_of = |value: &[u8]| {
        with(value)
            .unwrap()
            .map(|p| field(&p, "x-v").unwrap().to_vec())
    };
    assert_eq!(value_of(b"").unwrap(), b"");
    assert_eq!(value_of(b" \t ").unwrap(), b"");
    assert_eq!(value_of(b"  a b\tc \t").unwrap(), b"a b\tc");
    assert_eq!(value_of(b"\ta\x80\xff").unwrap(), b"a\x80\xff");
    for len in 0..20 {
        for at in 0..=len {
            let mut value = vec![b'v'; len];
            value.insert(at, b'\t');
            assert_eq!(value_of(&value).unwrap(), value.trim_ascii(), "{len} {at}");
            for (bad, error) in [
                (0x00, Error::InvalidFieldValue),
                (0x7f, Error::InvalidFieldValue),
                (0x0b, Error::InvalidFieldValue),
                (0x1f, Error::InvalidFieldValue),
                (b'\r', Error::BareCr),
                (b'\n', Error::MalformedHead),
            ] {
                let mut value = vec![b'v'; len];
                value.insert(at, bad);
                assert_eq!(with(&value), Err(error), "{bad:#04x} at {at} of {len}");
            }
        }
    }
}

/// Names and the shapes of a field line the one pass does not take.
#[test]
fn field_line_shapes() {
    let with = |line: &[u8]| {
        let mut wire = b"GET / HTTP/1.1\r\nHost: a\r\n".to_vec();
        wire.extend_from_slice(line);
        wire.extend_from_slice(b"\r\n\r\n");
        answer(&wire)
    };
    assert_eq!(with(b": v"), Err(Error::InvalidFieldName));
    assert_eq!(with(b"A b: v"), Err(Error::InvalidFieldName));
    assert_eq!(with(b"A : v"), Err(Error::WhitespaceBeforeColon));
    assert_eq!(with(b" A: v"), Err(Error::ObsFold));
    assert_eq!(with(b"A"), Err(Error::MalformedHead));
    assert_eq!(with(b"A\x80: v"), Err(Error::InvalidFieldName));
    assert_eq!(with(b"A:: v").unwrap().unwrap().fields[1].1, b": v");
    assert_eq!(
        answer(b"GET / HTTP/1.1\r\n Host: a\r\n\r\n"),
        Err(Error::WhitespaceBeforeFirstField)
    );
}

/// A head whose field lines are validated over several calls, with new
/// field storage each time, has all its fields.
#[test]
fn fields_of_earlier_calls_are_split_again() {
    let wire = b"GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
    for first in 0..wire.len() {
        for second in first..wire.len() {
            let mut parser = HeadParser::new(Limits::DEFAULT);
            assert_eq!(call(&mut parser, &wire[..first]), Ok(None));
            assert_eq!(call(&mut parser, &wire[..second]), Ok(None));
            let p = call(&mut parser, wire).unwrap().unwrap();
            let names: Vec<&str> = p.fields.iter().map(|(n, _)| &n[..]).collect();
            assert_eq!(names, ["Host", "A", "B", "C"], "{first} {second}");
            let values: Vec<&[u8]> = p.fields.iter().map(|(_, v)| &v[..]).collect();
            assert_eq!(values, [b"a", b"1", b"2", b"3"], "{first} {second}");
        }
    }
}

/// Bytes changed after an earlier call validated them (a logic error of
/// the caller) are never taken as text unchecked: the parser answers an
/// error rather than a method or a field name that is not UTF-8.
#[test]
fn bytes_changed_after_validation_are_checked_again() {
    let wire = b"GET / HTTP/1.1\r\nHost: a\r\nAb: 1\r\n\r\n".to_vec();

    let mut changed = wire.clone();
    let mut parser = HeadParser::new(Limits::DEFAULT);
    assert_eq!(call(&mut parser, &changed[..20]), Ok(None));
    changed[0] = 0xff;
    assert_eq!(call(&mut parser, &changed), Err(Error::MalformedHead));

    let mut changed = wire.clone();
    let mut parser = HeadParser::new(Limits::DEFAULT);
    assert_eq!(call(&mut parser, &changed[..32]), Ok(None));
    changed[25] = 0xc3;
    assert_eq!(call(&mut parser, &changed), Err(Error::MalformedHead));
}

// ---- generated heads ---------------------------------------------------

/// A piece of a head: mostly the usual shapes, sometimes one near them.
fn method() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "GET", "GET", "POST", "POST", "PUT", "GETX", "GE", "POSTS", "CONNECT", "OPTIONS", "get",
        "G\tET", "", "GET/",
    ])
}

fn target() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => "/[a-zA-Z0-9/._~?=&;:@!$'()*+,-]{0,24}".prop_map(String::into_bytes),
        1 => "/[a-z]{0,4}%[0-9a-fA-FgG]{0,2}[a-z]{0,3}".prop_map(String::into_bytes),
        1 => proptest::collection::vec(any::<u8>(), 0..6).prop_map(|mut v| { v.insert(0, b'/'); v }),
        1 => prop::sample::select(vec![
            b"*".to_vec(), b"http://a/b".to_vec(), b"a:443".to_vec(), b"".to_vec(), b"/#x".to_vec(),
        ]),
    ]
}

fn version() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "HTTP/1.1",
        "HTTP/1.1",
        "HTTP/1.0",
        "HTTP/1.10",
        "HTTP/1.2",
        "HTTP/1.",
        "HTTP/1.1 ",
        "http/1.1",
    ])
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "Host", "host", "HOST", "Hosu", "Content-Length", "content-length", "Content_Length",
            "Transfer-Encoding", "Connection", "connectioN", "Expect", "Upgrade", "Accept",
            "User-Agent", "X-A",
        ]).prop_map(str::to_owned),
        1 => "[!#$%&'*+.^_`|~0-9A-Za-z-]{1,12}",
        1 => "[ A-Za-z:\t\u{80}-]{0,6}",
    ]
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => "[ \t]{0,2}[!-~]{0,20}[ \t]{0,2}".prop_map(String::into_bytes),
        1 => prop::sample::select(vec![
            b" 5".to_vec(), b" 5, 5".to_vec(), b" chunked".to_vec(), b" close".to_vec(),
            b" keep-alive, Upgrade".to_vec(), b" 100-continue".to_vec(), b" a.example:80".to_vec(),
        ]),
        1 => proptest::collection::vec(
            prop_oneof![0x20u8..0x7f, 0x80u8..=0xff, Just(b'\t'), 0u8..0x20, Just(0x7f)], 0..20),
    ]
}

fn line_end() -> impl Strategy<Value = &'static str> {
    prop_oneof![20 => Just("\r\n"), 1 => Just("\n"), 1 => Just("\r"), 1 => Just("\r\r\n")]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Heads near the usual shapes answer the same whole, trickled and
    /// split, under default and small limits.
    #[test]
    fn generated_heads_answer_the_same_every_way(
        method in method(),
        sep in prop::sample::select(vec![" ", " ", " ", "\t", "  "]),
        target in target(),
        version in version(),
        rl_end in line_end(),
        fields in proptest::collection::vec((name(), value(), line_end()), 0..6),
        small in any::<bool>(),
    ) {
        let mut wire = format!("{method}{sep}").into_bytes();
        wire.extend_from_slice(&target);
        wire.extend_from_slice(format!(" {version}{rl_end}").as_bytes());
        for (name, value, end) in &fields {
            wire.extend_from_slice(name.as_bytes());
            wire.push(b':');
            wire.extend_from_slice(value);
            wire.extend_from_slice(end.as_bytes());
        }
        wire.extend_from_slice(b"\r\n");
        let limits = if small {
            Limits { max_head_len: 96, max_fields: 3, max_target_len: 12, max_method_len: 4, ..Limits::DEFAULT }
        } else {
            Limits::DEFAULT
        };
        // The answer itself may be anything; that it is the same every
        // way is what `answer_limits` checks.
        let _ = answer_limits(&wire, limits);
    }
}
