//! Feeds arbitrary bytes to the chunked decoder in arbitrary split sizes and
//! checks it never panics, never reports ranges outside its input, and
//! decodes the same way whatever the splits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringstream_core::h1::decode::Decoder;
use ringstream_core::{Error, Limits};

/// Small limits so the trailer, extension and body limits are reached too.
const LIMITS: Limits = Limits {
    max_chunk_ext_len: 16,
    max_trailers_len: 64,
    max_trailer_fields: 3,
    max_body_len: 4096,
    ..Limits::DEFAULT
};

#[derive(Debug, PartialEq)]
struct Outcome {
    result: Result<bool, Error>,
    body: Vec<u8>,
    trailers: Vec<(String, Vec<u8>)>,
    consumed: usize,
}

/// Decodes `wire` fed in pieces whose sizes cycle through `splits`.
fn run(wire: &[u8], splits: &[u8]) -> Outcome {
    let mut decoder = Decoder::chunked(LIMITS);
    let mut buf: Vec<u8> = Vec::new();
    let mut body = Vec::new();
    let mut consumed = 0usize;
    let mut offset = 0usize;
    let mut i = 0usize;
    let mut result = Ok(false);
    'feed: while offset < wire.len() {
        let size = splits
            .get(i % splits.len().max(1))
            .map_or(wire.len(), |&s| usize::from(s).max(1));
        i += 1;
        let end = offset.saturating_add(size).min(wire.len());
        buf.extend_from_slice(&wire[offset..end]);
        offset = end;
        loop {
            match decoder.decode(&buf) {
                Err(e) => {
                    assert_eq!(
                        decoder.decode(&buf),
                        Err(e),
                        "a failed decoder stays failed"
                    );
                    result = Err(e);
                    break 'feed;
                }
                Ok(p) => {
                    assert!(p.consumed <= buf.len());
                    assert!(p.data.start <= p.data.end);
                    assert!(p.data.end <= p.consumed);
                    body.extend_from_slice(&buf[p.data.clone()]);
                    buf.drain(..p.consumed);
                    consumed += p.consumed;
                    if p.finished {
                        assert!(decoder.is_finished());
                        result = Ok(true);
                        break 'feed;
                    }
                    if p.consumed == 0 {
                        break;
                    }
                }
            }
        }
    }
    if result == Ok(false) {
        result = decoder.finish_eof().map(|()| true);
        if result.is_err() {
            assert!(!decoder.is_finished());
        }
    }
    let trailers = decoder
        .trailers()
        .map(|(n, v)| (n.to_owned(), v.to_vec()))
        .collect();
    Outcome {
        result,
        body,
        trailers,
        consumed,
    }
}

fuzz_target!(|input: &[u8]| {
    // The first byte says how many of the following bytes are split sizes.
    let Some((&n, rest)) = input.split_first() else {
        return;
    };
    let n = usize::from(n % 16).min(rest.len());
    let (splits, wire) = rest.split_at(n);
    let pieces = run(wire, splits);
    let whole = run(wire, &[]);
    assert_eq!(pieces.result, whole.result);
    assert_eq!(pieces.body, whole.body);
    assert_eq!(pieces.trailers, whole.trailers);
    if whole.result == Ok(true) {
        assert_eq!(pieces.consumed, whole.consumed);
    }
    assert!(whole.body.len() <= wire.len());
});
