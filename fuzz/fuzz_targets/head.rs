//! Fuzzes the request-head parser: no input may panic, the answer must
//! not depend on how the bytes are split between calls, and a head it
//! accepts is tokenized exactly as `httparse` tokenizes it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringstream_core::h1::{Field, HeadParser, RequestHead};
use ringstream_core::Limits;

fuzz_target!(|data: &[u8]| {
    // The first byte picks a split point and small or default limits.
    let Some((&control, wire)) = data.split_first() else {
        return;
    };
    let limits = if control & 0x80 == 0 {
        Limits::DEFAULT
    } else {
        Limits {
            max_head_len: 256,
            max_fields: 4,
            max_target_len: 16,
            ..Limits::DEFAULT
        }
    };

    let mut fields = [Field::EMPTY; 64];
    let whole = HeadParser::new(limits)
        .parse(wire, &mut fields)
        .map(|h| h.map(|h| (h, fields)));

    let split = usize::from(control & 0x7f) * wire.len() / 127;
    let mut parser = HeadParser::new(limits);
    let mut fields2 = [Field::EMPTY; 64];
    let first = parser.parse(&wire[..split], &mut fields2);
    let first_is_final = !matches!(first, Ok(None));
    let first = first.map(|h| h.map(|h| (h, fields2)));
    let again = if first_is_final {
        first
    } else {
        let mut fields3 = [Field::EMPTY; 64];
        parser
            .parse(wire, &mut fields3)
            .map(|h| h.map(|h| (h, fields3)))
    };
    match (&whole, &again) {
        (Ok(Some((a, fa))), Ok(Some((b, fb)))) => {
            assert_eq!(a, b);
            assert_eq!(a.fields(fa), b.fields(fb));
            assert!(a.head_len <= wire.len());
            assert!(a.head_len <= limits.max_head_len);
            same_tokens_as_httparse(&wire[..a.head_len], a, a.fields(fa));
        }
        (Ok(Some(_)), _) | (_, Ok(Some(_))) => {
            // A head found in a prefix is the same head in the whole buffer.
            panic!("split changed the answer: {whole:?} vs {again:?}");
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        (Ok(None), Ok(None)) => {}
        _ => panic!("split changed the answer: {whole:?} vs {again:?}"),
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
