//! The PROXY header parser on any bytes, whole and fed in two parts: it
//! answers without panicking, a header it finds lies within the bytes and
//! names its extensions safely, and a header found in part is the same
//! when the bytes are whole.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringstream_core::proxy::parse;

fuzz_target!(|input: (u16, &[u8])| {
    let (max, bytes) = input;
    let max = usize::from(max);
    let whole = parse(bytes, max);
    if let Ok(Some(header)) = &whole {
        assert!(header.len() <= bytes.len());
        let _ = header.tlvs().count();
        let _ = header.tlvs().ssl();
        // The header alone reads the same.
        assert_eq!(parse(&bytes[..header.len()], max), whole);
    }
    // A prefix never finds a different header than the whole.
    let cut = bytes.len() / 2;
    if let Ok(Some(header)) = parse(&bytes[..cut], max) {
        assert_eq!(whole, Ok(Some(header)));
    }
});
