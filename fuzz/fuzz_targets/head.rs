//! Fuzzes the request-head parser: no input may panic, the answer must
//! not depend on how the bytes are split between calls, and a head it
//! accepts is tokenized exactly as `httparse` tokenizes it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringstream_core::h1::{Field, HeadParser, RequestHead};
use ringstream_core::Limits;

/// An owned answer of one `parse` call: the head and its fields.
type Answer<'b> = Result<Option<(RequestHead<'b>, [Field<'b>; 64])>, ringstream_core::Error>;

/// Feeds `prefixes` of `wire` (each a length) to one parser in turn, then
/// the whole of it, and returns the first final answer.
fn feed<'b>(parser: &mut HeadParser, wire: &'b [u8], prefixes: &[usize]) -> Answer<'b> {
    for &end in prefixes.iter().chain([&wire.len()]) {
        let mut fields = [Field::EMPTY; 64];
        match parser.parse(&wire[..end], &mut fields) {
            Ok(None) => {}
            answer => return answer.map(|h| h.map(|h| (h, fields))),
        }
    }
    Ok(None)
}

fn assert_same(whole: &Answer<'_>, other: &Answer<'_>, how: &str) {
    match (whole, other) {
        (Ok(Some((a, fa))), Ok(Some((b, fb)))) => {
            assert_eq!(a, b, "{how}");
            assert_eq!(a.fields(fa), b.fields(fb), "{how}");
        }
        (Err(a), Err(b)) => assert_eq!(a, b, "{how}"),
        (Ok(None), Ok(None)) => {}
        _ => panic!("{how} changed the answer: {whole:?} vs {other:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    // The first two bytes pick two split points and small or default limits.
    let Some((&[c1, c2], wire)) = data.split_first_chunk::<2>() else {
        return;
    };
    let limits = if c1 & 0x80 == 0 {
        Limits::DEFAULT
    } else {
        Limits {
            max_head_len: 256,
            max_fields: 4,
            max_target_len: 16,
            max_method_len: 8,
            ..Limits::DEFAULT
        }
    };
    let a = usize::from(c1 & 0x7f) * wire.len() / 127;
    let b = usize::from(c2) * wire.len() / 255;
    let (s1, s2) = (a.min(b), a.max(b));

    let mut parser = HeadParser::new(limits);
    let whole = feed(&mut parser, wire, &[]);
    if let Ok(Some((head, fields))) = &whole {
        assert!(head.head_len <= wire.len());
        assert!(head.head_len <= limits.max_head_len);
        same_tokens_as_httparse(&wire[..head.head_len], head, head.fields(fields));
    }
    // The same parser after `reset`.
    parser.reset();
    assert_same(&whole, &feed(&mut parser, wire, &[]), "reset");
    // Split at one point, at two.
    let mut parser = HeadParser::new(limits);
    assert_same(&whole, &feed(&mut parser, wire, &[s1]), "one split");
    let mut parser = HeadParser::new(limits);
    assert_same(&whole, &feed(&mut parser, wire, &[s1, s2]), "two splits");
    // A longer prefix, then a shorter one (the parser starts over), then
    // the whole: unless the longer prefix was already final.
    let mut parser = HeadParser::new(limits);
    let mut fields = [Field::EMPTY; 64];
    if matches!(parser.parse(&wire[..s2], &mut fields), Ok(None)) {
        assert_same(&whole, &feed(&mut parser, wire, &[s1]), "shorter buffer");
    }
});

/// `httparse` must accept the head and find the same method, target and
/// fields (values compared without surrounding whitespace).
fn same_tokens_as_httparse(head: &[u8], parsed: &RequestHead<'_>, fields: &[Field<'_>]) {
    let mut headers = [httparse::EMPTY_HEADER; 128];
    let mut req = httparse::Request::new(&mut headers);
    let status = req.parse(head);
    assert!(
        matches!(status, Ok(httparse::Status::Complete(n)) if n == head.len()),
        "httparse: {status:?}"
    );
    assert_eq!(req.method, Some(parsed.method));
    assert_eq!(req.path, Some(parsed.target));
    assert_eq!(req.headers.len(), fields.len());
    for (h, f) in req.headers.iter().zip(fields) {
        assert_eq!(h.name, f.name);
        // An accepted value holds no CR, LF or form feed: ASCII whitespace
        // around it is SP and HTAB only.
        assert_eq!(h.value.trim_ascii(), f.value);
    }
}
