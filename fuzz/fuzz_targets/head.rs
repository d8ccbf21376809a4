//! Fuzzes the request-head parser: no input may panic, and the answer must
//! not depend on how the bytes are split between calls.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringstream_core::h1::{Field, HeadParser};
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
