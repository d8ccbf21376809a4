//! Body decoders through the public API: every wire vector is fed whole, one
//! byte at a time, and split at every offset, and must decode the same way.
//!
//! Without `alloc` the chunked decoder checks trailer fields as strictly
//! and drops them: the same tests run, and the decoded trailers are
//! compared only with `alloc`.

use proptest::prelude::*;
use ringstream_core::h1::decode::{ChunkedDecoder, Decoder, LengthDecoder};
use ringstream_core::h1::encode::ChunkedEncoder;
use ringstream_core::h1::CRLF;
use ringstream_core::{Error, Limits, SliceBuf};

// ---------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------

#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    /// Ok(()) when the body finished, or the first error.
    result: Result<(), Error>,
    body: Vec<u8>,
    trailers: Vec<(String, Vec<u8>)>,
    /// Bytes left over after a finished body.
    rest: Vec<u8>,
}

/// Feeds `pieces` to `decoder` the way a connection would: append to a
/// buffer, decode until no progress, drop what was consumed. Checks the
/// `Progress` invariants on every call.
fn feed<'a>(mut decoder: Decoder, pieces: impl IntoIterator<Item = &'a [u8]>) -> Outcome {
    let mut pieces = pieces.into_iter();
    let mut buf = Vec::new();
    let mut body = Vec::new();
    let finish = |decoder: &Decoder, result, body, rest| Outcome {
        result,
        body,
        trailers: trailers_of(decoder),
        rest,
    };
    while let Some(piece) = pieces.next() {
        buf.extend_from_slice(piece);
        loop {
            match decoder.decode(&buf) {
                Err(e) => {
                    // A failed decoder stays failed.
                    assert_eq!(decoder.decode(&buf), Err(e));
                    assert_eq!(decoder.finish_eof(), Err(e));
                    return finish(&decoder, Err(e), body, Vec::new());
                }
                Ok(p) => {
                    assert!(p.consumed <= buf.len(), "{p:?} over {}", buf.len());
                    assert!(p.data.start <= p.data.end, "{p:?}");
                    assert!(p.data.end <= p.consumed, "{p:?}");
                    body.extend_from_slice(&buf[p.data.clone()]);
                    buf.drain(..p.consumed);
                    if p.finished {
                        assert!(decoder.is_finished());
                        for piece in pieces.by_ref() {
                            buf.extend_from_slice(piece);
                        }
                        return finish(&decoder, Ok(()), body, buf);
                    }
                    if p.consumed == 0 {
                        break;
                    }
                }
            }
        }
    }
    let result = decoder.finish_eof();
    finish(&decoder, result, body, buf)
}

/// The trailer fields `decoder` kept: none without `alloc`.
fn trailers_of(decoder: &Decoder) -> Vec<(String, Vec<u8>)> {
    #[cfg(feature = "alloc")]
    return decoder
        .trailers()
        .map(|(n, v)| (n.to_owned(), v.to_vec()))
        .collect();
    #[cfg(not(feature = "alloc"))]
    {
        let _ = decoder;
        Vec::new()
    }
}

/// The trailer fields a decoder keeps of `sent`: all with `alloc`, none
/// without.
fn kept(sent: &[(String, Vec<u8>)]) -> Vec<(String, Vec<u8>)> {
    if cfg!(feature = "alloc") {
        sent.to_vec()
    } else {
        Vec::new()
    }
}

fn chunked() -> Decoder {
    Decoder::chunked(Limits::DEFAULT)
}

/// Decodes `wire` whole, one byte at a time, and split in two at every
/// offset; all must agree. Returns the whole-input outcome.
fn decode_every_split(make: impl Fn() -> Decoder, wire: &[u8]) -> Outcome {
    let whole = feed(make(), [wire]);
    let bytes = feed(make(), wire.chunks(1));
    assert_eq!(whole, bytes, "one byte at a time differs");
    for at in 0..=wire.len() {
        let (a, b) = wire.split_at(at);
        let split = feed(make(), [a, b]);
        assert_eq!(whole, split, "split at {at} differs");
    }
    whole
}

fn accepts(wire: &[u8], body: &[u8]) -> Outcome {
    let outcome = decode_every_split(chunked, wire);
    assert_eq!(
        outcome.result,
        Ok(()),
        "{:?}",
        String::from_utf8_lossy(wire)
    );
    assert_eq!(outcome.body, body);
    outcome
}

fn rejects_with(limits: Limits, wire: &[u8], error: Error) {
    let outcome = decode_every_split(|| Decoder::chunked(limits), wire);
    assert_eq!(
        outcome.result,
        Err(error),
        "{:?}",
        String::from_utf8_lossy(wire)
    );
}

fn rejects(wire: &[u8], error: Error) {
    rejects_with(Limits::DEFAULT, wire, error);
}

// ---------------------------------------------------------------------------
// Chunked: accepted syntax
// ---------------------------------------------------------------------------

/// RFC 9112 §7.1: a chunked body is a series of chunks and a last chunk.
#[test]
fn rfc9112_7_1_decodes_chunks_and_last_chunk() {
    let out = accepts(b"5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n", b"hello, world");
    assert!(out.trailers.is_empty());
    assert!(out.rest.is_empty());
}

/// RFC 9112 §7.1: chunk-size is 1*HEXDIG, so leading zeros and both cases
/// of hex digits are valid.
#[test]
fn rfc9112_7_1_accepts_leading_zeros_and_mixed_case_hex() {
    accepts(b"000a\r\n0123456789\r\n00\r\n\r\n", b"0123456789");
    accepts(b"A\r\n0123456789\r\n0\r\n\r\n", b"0123456789");
    let body = vec![b'x'; 0xabc];
    let mut wire = b"aBc\r\n".to_vec();
    wire.extend_from_slice(&body);
    wire.extend_from_slice(b"\r\n0\r\n\r\n");
    assert_eq!(feed(chunked(), [&wire[..]]).body, body);
}

/// RFC 9112 §7.1.1: chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS value ] )
/// with token or quoted-string values; unknown extensions are ignored.
#[test]
fn rfc9112_7_1_1_accepts_extensions_with_bws_tokens_and_quoted_strings() {
    accepts(b"3;a\r\nabc\r\n0\r\n\r\n", b"abc");
    accepts(b"3 \t; a = b\r\nabc\r\n0\r\n\r\n", b"abc");
    accepts(b"3;a=b;c=\"d e\";f\r\nabc\r\n0;last=1\r\n\r\n", b"abc");
    accepts(
        b"3;q=\"say \\\"hi\\\" \\\\ ok\"\r\nabc\r\n0\r\n\r\n",
        b"abc",
    );
    accepts(b"3;a=\"\"\r\nabc\r\n0\r\n\r\n", b"abc");
    accepts(b"3;a=\"caf\xc3\xa9\"\r\nabc\r\n0\r\n\r\n", b"abc");
    accepts(b"3;a=\"x\" ;b\r\nabc\r\n0\r\n\r\n", b"abc");
}

/// RFC 9112 §7.1.1: the BWS of `chunk-ext` comes before `;` or `=`, so
/// whitespace between an extension and the CRLF is refused; before the
/// next `;` it is fine.
#[test]
fn rfc9112_7_1_1_rejects_whitespace_after_an_extension() {
    rejects(b"5;a \r\nhello\r\n0\r\n\r\n", Error::InvalidChunkExtension);
    rejects(b"3;a=b \r\nabc\r\n0\r\n\r\n", Error::InvalidChunkExtension);
    rejects(b"3;a\t\r\nabc\r\n0\r\n\r\n", Error::InvalidChunkExtension);
    rejects(
        b"3\r\nabc\r\n0;b=\"c\" \r\n\r\n",
        Error::InvalidChunkExtension,
    );
    accepts(b"3;a=b ;c\r\nabc\r\n0\r\n\r\n", b"abc");
    accepts(b"3;a ;c = d\r\nabc\r\n0\r\n\r\n", b"abc");
}

/// RFC 9112 §7.1: `chunk-size [ chunk-ext ] CRLF`, and the BWS of
/// `chunk-ext` only comes before a `;`: whitespace after the size with no
/// extension after it is refused, on a data chunk or the last chunk, as
/// soon as the CR arrives.
#[test]
fn rfc9112_7_1_rejects_whitespace_after_the_size_without_an_extension() {
    rejects(b"5 \r\nhello\r\n0\r\n\r\n", Error::InvalidChunkSize);
    rejects(b"5\t\r\nhello\r\n0\r\n\r\n", Error::InvalidChunkSize);
    rejects(b"5 \t \r\nhello\r\n0\r\n\r\n", Error::InvalidChunkSize);
    rejects(b"5\r\nhello\r\n0 \r\n\r\n", Error::InvalidChunkSize);
    rejects(b"0\t\r\n\r\n", Error::InvalidChunkSize);
    // A bare LF after the whitespace is still a bare LF.
    rejects(b"5 \nhello\r\n0\r\n\r\n", Error::BareLf);
    // Refused at the CR, before its LF or any data arrives.
    let mut d = ChunkedDecoder::new(Limits::DEFAULT);
    assert_eq!(d.decode(b"5 ").map(|p| p.consumed), Ok(2));
    assert_eq!(d.decode(b"\r"), Err(Error::InvalidChunkSize));
    // BWS before `;` stays valid.
    accepts(b"5 ;ext\r\nhello\r\n0 \t;last\r\n\r\n", b"hello");
}

/// RFC 9112 §7.1.2: trailer fields follow the last chunk; values are
/// trimmed of surrounding whitespace like any field value.
#[test]
fn rfc9112_7_1_2_collects_trailers() {
    let out = accepts(
        b"3\r\nabc\r\n0\r\nX-Checksum: 900150983cd24fb0\r\nX-Empty:\r\nX-Pad: \t v w \t\r\n\r\n",
        b"abc",
    );
    assert_eq!(
        out.trailers,
        kept(&[
            ("X-Checksum".to_owned(), b"900150983cd24fb0".to_vec()),
            ("X-Empty".to_owned(), b"".to_vec()),
            ("X-Pad".to_owned(), b"v w".to_vec()),
        ])
    );
}

/// A trailer whose *value* looks like a request line (`GET /admin
/// HTTP/1.1`) is an ordinary field: it is returned as a trailer and never
/// read as the start of a new request. (A trailer *line* that is only a
/// request line has no colon and is rejected; see
/// `rfc9112_7_1_2_rejects_malformed_trailer_lines`.)
#[test]
fn rfc9112_7_1_2_accepts_a_trailer_value_that_looks_like_a_request_line() {
    let out = accepts(b"0\r\nX-Note: GET /admin HTTP/1.1\r\n\r\n", b"");
    assert_eq!(
        out.trailers,
        kept(&[("X-Note".to_owned(), b"GET /admin HTTP/1.1".to_vec())])
    );
    assert!(out.rest.is_empty());
}

/// RFC 9112 §6.3: bytes after the end of the chunked body belong to the
/// next message and are never consumed.
#[test]
fn rfc9112_6_3_leaves_the_next_message_alone() {
    let out = accepts(b"2\r\nhi\r\n0\r\n\r\nGET / HTTP/1.1\r\n", b"hi");
    assert_eq!(out.rest, b"GET / HTTP/1.1\r\n");
}

/// Each call hands out at most one data run, then the framing that follows
/// it up to the next chunk's data.
#[test]
fn one_data_run_per_call() {
    let wire = b"1\r\na\r\n1\r\nb\r\n0\r\n\r\n";
    let mut d = ChunkedDecoder::new(Limits::DEFAULT);
    let p = d.decode(wire).unwrap();
    assert_eq!((p.consumed, p.data.clone(), p.finished), (9, 3..4, false));
    let p = d.decode(&wire[9..]).unwrap();
    assert_eq!((p.consumed, p.data.clone(), p.finished), (8, 0..1, true));
    assert!(d.is_finished());
    let p = d.decode(b"more").unwrap();
    assert_eq!((p.consumed, p.data.is_empty(), p.finished), (0, true, true));
}

#[test]
fn remaining_hint_tracks_the_current_chunk() {
    let mut d = Decoder::chunked(Limits::DEFAULT);
    assert_eq!(d.remaining_hint(), None);
    let p = d.decode(b"10\r\nabcd").unwrap();
    assert_eq!(p.data, 4..8);
    assert_eq!(d.remaining_hint(), Some(12));
    d.decode(b"efghijklmnop\r\n0\r\n\r\n").unwrap();
    assert_eq!(d.remaining_hint(), Some(0));
}

#[test]
fn empty_input_is_need_more() {
    let mut d = ChunkedDecoder::new(Limits::DEFAULT);
    let p = d.decode(b"").unwrap();
    assert_eq!(
        (p.consumed, p.data.is_empty(), p.finished),
        (0, true, false)
    );
    assert!(!d.is_finished());
    assert_eq!(d.remaining_hint(), None);
}

/// A framing error right after valid data: the data is delivered first and
/// the error is reported by the next call.
#[test]
fn data_before_an_error_is_delivered() {
    let mut d = ChunkedDecoder::new(Limits::DEFAULT);
    let wire = b"5\r\nhello\r\nZ";
    let p = d.decode(wire).unwrap();
    assert_eq!(&wire[p.data.clone()], b"hello");
    assert_eq!(p.consumed, 10);
    assert_eq!(d.decode(b"Z"), Err(Error::InvalidChunkSize));
    assert_eq!(d.decode(b"0\r\n\r\n"), Err(Error::InvalidChunkSize));
    assert_eq!(d.finish_eof(), Err(Error::InvalidChunkSize));
    assert!(!d.is_finished());
}

#[test]
fn truncated_chunked_body_is_unexpected_eof() {
    for wire in [
        &b""[..],
        b"5",
        b"5\r\nhel",
        b"5\r\nhello",
        b"5\r\nhello\r\n",
        b"0\r\n",
        b"0\r\nA: b\r\n",
        b"0\r\n\r",
    ] {
        assert_eq!(
            decode_every_split(chunked, wire).result,
            Err(Error::UnexpectedEof),
            "{wire:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// Chunked: rejected syntax
// ---------------------------------------------------------------------------

/// RFC 9112 §7.1: chunk-size = 1*HEXDIG.
#[test]
fn rfc9112_7_1_rejects_non_hex_or_empty_chunk_size() {
    rejects(b"g\r\nabc\r\n0\r\n\r\n", Error::InvalidChunkSize);
    rejects(b"5g\r\nhello\r\n0\r\n\r\n", Error::InvalidChunkSize);
    rejects(b"\r\n\r\n", Error::InvalidChunkSize);
    rejects(b";a=b\r\n", Error::InvalidChunkSize);
    rejects(b" 5\r\nhello\r\n0\r\n\r\n", Error::InvalidChunkSize);
}

/// RFC 9112 §7.1: no `0x`, sign or digit-separator prefixes.
#[test]
fn rfc9112_7_1_rejects_prefixes_and_signs() {
    rejects(b"0x5\r\nhello\r\n0\r\n\r\n", Error::InvalidChunkSize);
    rejects(b"+5\r\nhello\r\n0\r\n\r\n", Error::InvalidChunkSize);
    rejects(b"-5\r\nhello\r\n0\r\n\r\n", Error::InvalidChunkSize);
    rejects(b"_5\r\nhello\r\n0\r\n\r\n", Error::InvalidChunkSize);
    rejects(b"1_0\r\n", Error::InvalidChunkSize);
}

/// RFC 9112 §7.1: whitespace inside the size would let two parsers disagree
/// on the length (request smuggling).
#[test]
fn rfc9112_7_1_rejects_whitespace_inside_the_size() {
    rejects(
        b"1 0\r\n0123456789abcdef\r\n0\r\n\r\n",
        Error::InvalidChunkSize,
    );
    rejects(b"1\t0\r\n", Error::InvalidChunkSize);
}

/// RFC 9112 §7.1: a size that does not fit in 64 bits is refused, not
/// wrapped.
#[test]
fn rfc9112_7_1_rejects_size_overflow() {
    rejects(b"10000000000000000\r\n", Error::ChunkSizeOverflow);
    rejects(b"fffffffffffffffff\r\n", Error::ChunkSizeOverflow);
    // The largest size is accepted without a body limit (and the body is
    // then truncated)...
    let unlimited = Limits {
        max_body_len: u64::MAX,
        ..Limits::DEFAULT
    };
    let out = feed(
        Decoder::chunked(unlimited),
        [&b"ffffffffffffffff\r\nabc"[..]],
    );
    assert_eq!(out.body, b"abc");
    assert_eq!(out.result, Err(Error::UnexpectedEof));
    // ...and over the default limit of 1 GiB it is refused (413).
    rejects(b"ffffffffffffffff\r\nabc", Error::BodyTooLarge);
    // Leading zeros do not count towards overflow.
    accepts(b"00000000000000000000001\r\nx\r\n0\r\n\r\n", b"x");
}

/// RFC 9112 §2.2: a bare LF is not a line terminator in chunked framing.
#[test]
fn rfc9112_2_2_rejects_bare_lf_in_framing() {
    rejects(b"5\nhello\r\n0\r\n\r\n", Error::BareLf); // size line
    rejects(b"5;a=b\nhello\r\n0\r\n\r\n", Error::BareLf); // extension
    rejects(b"5;a=\"b\nhello\r\n0\r\n\r\n", Error::BareLf); // quoted-string
    rejects(b"5\r\nhello\n0\r\n\r\n", Error::BareLf); // after data
    rejects(b"0\r\nA: b\n\r\n", Error::BareLf); // trailer line
    rejects(b"0\r\n\n", Error::BareLf); // final CRLF
    rejects(b"0\n\r\n", Error::BareLf); // last-chunk line
}

/// RFC 9112 §2.2: a bare CR is not a line terminator either.
#[test]
fn rfc9112_2_2_rejects_bare_cr_in_framing() {
    rejects(b"5\rhello\r\n0\r\n\r\n", Error::BareCr); // size line
    rejects(b"5\r\nhello\rX0\r\n\r\n", Error::BareCr); // after data
    rejects(b"0\r\nA: b\rX\r\n\r\n", Error::BareCr); // trailer line
    rejects(b"0\r\n\rX", Error::BareCr); // final CRLF
}

/// RFC 9112 §7.1: chunk data is followed by CRLF; more data than the size
/// announced is an error, not the start of the next chunk.
#[test]
fn rfc9112_7_1_rejects_missing_crlf_after_data() {
    rejects(b"5\r\nhelloX\r\n0\r\n\r\n", Error::MissingChunkCrlf);
    rejects(b"3\r\nhello\r\n0\r\n\r\n", Error::MissingChunkCrlf);
}

/// RFC 9112 §7.1.1: extensions are tokens and quoted-strings; control
/// characters and stray separators are refused.
#[test]
fn rfc9112_7_1_1_rejects_control_characters_and_bad_extension_syntax() {
    rejects(
        b"5;a=\x01\r\nhello\r\n0\r\n\r\n",
        Error::InvalidChunkExtension,
    );
    rejects(
        b"5;\x7f\r\nhello\r\n0\r\n\r\n",
        Error::InvalidChunkExtension,
    );
    rejects(
        b"5;a=\"\x00\"\r\nhello\r\n0\r\n\r\n",
        Error::InvalidChunkExtension,
    );
    rejects(b"5;a=\"\\\x01\"\r\n", Error::InvalidChunkExtension);
    rejects(b"5;a=\"x\r\nhello\r\n", Error::InvalidChunkExtension);
    rejects(b"5;\r\nhello\r\n0\r\n\r\n", Error::InvalidChunkExtension);
    rejects(b"5;a=\r\nhello\r\n0\r\n\r\n", Error::InvalidChunkExtension);
    rejects(b"5;a b\r\nhello\r\n0\r\n\r\n", Error::InvalidChunkExtension);
    rejects(
        b"5;a=b c\r\nhello\r\n0\r\n\r\n",
        Error::InvalidChunkExtension,
    );
    rejects(
        b"5;a=\"b\"c\r\nhello\r\n0\r\n\r\n",
        Error::InvalidChunkExtension,
    );
    rejects(b"5;a=@\r\nhello\r\n0\r\n\r\n", Error::InvalidChunkExtension);
    rejects(
        b"5;a==b\r\nhello\r\n0\r\n\r\n",
        Error::InvalidChunkExtension,
    );
}

/// RFC 9112 §7.1.1: a server limits the extension bytes it accepts.
#[test]
fn rfc9112_7_1_1_rejects_extensions_over_the_limit() {
    let limits = Limits {
        max_chunk_ext_len: 8,
        ..Limits::DEFAULT
    };
    // Exactly 8 extension bytes pass...
    let ok = feed(
        Decoder::chunked(limits),
        [&b"1;abcdefg\r\nx\r\n0\r\n\r\n"[..]],
    );
    assert_eq!(ok.result, Ok(()));
    // ...9 do not, and neither does whitespace padding.
    rejects_with(
        limits,
        b"1;abcdefgh\r\nx\r\n0\r\n\r\n",
        Error::ChunkExtensionTooLong,
    );
    rejects_with(limits, b"1         ;a\r\n", Error::ChunkExtensionTooLong);
    // The limit is per line.
    let ok = feed(
        Decoder::chunked(limits),
        [&b"1;abcdefg\r\nx\r\n1;abcdefg\r\ny\r\n0;abcdefg\r\n\r\n"[..]],
    );
    assert_eq!(ok.result, Ok(()));
    assert_eq!(ok.body, b"xy");
}

/// RFC 9110 §15.5.14: the chunk sizes add up to at most
/// `Limits::max_body_len` (inclusive); the chunk that would cross it is
/// refused at its size line, after the data before it, and none of its own
/// data is handed out.
#[test]
fn chunked_body_is_held_to_the_body_limit() {
    let limits = Limits {
        max_body_len: 10,
        ..Limits::DEFAULT
    };
    let at_limit = decode_every_split(
        || Decoder::chunked(limits),
        b"5\r\nhello\r\n5;x=y\r\nworld\r\n0\r\nA: 1\r\n\r\n",
    );
    assert_eq!(at_limit.result, Ok(()));
    assert_eq!(at_limit.body, b"helloworld");

    let over = decode_every_split(
        || Decoder::chunked(limits),
        b"5\r\nhello\r\n6\r\nworld!\r\n0\r\n\r\n",
    );
    assert_eq!(over.result, Err(Error::BodyTooLarge));
    assert_eq!(over.body, b"hello", "data before the refused chunk");

    // One chunk over the limit: nothing is handed out.
    rejects_with(
        limits,
        b"b\r\nhello world\r\n0\r\n\r\n",
        Error::BodyTooLarge,
    );
    // Zero-length chunks and leading zeros do not count.
    let zeros = decode_every_split(
        || Decoder::chunked(limits),
        b"000a\r\n0123456789\r\n0\r\n\r\n",
    );
    assert_eq!(zeros.result, Ok(()));
    // A limit of 0 allows only the last chunk.
    let none = Limits {
        max_body_len: 0,
        ..Limits::DEFAULT
    };
    assert_eq!(
        feed(Decoder::chunked(none), [&b"0\r\n\r\n"[..]]).result,
        Ok(())
    );
    rejects_with(none, b"1\r\nx\r\n0\r\n\r\n", Error::BodyTooLarge);
    assert_eq!(Error::BodyTooLarge.status(), 413);
}

/// `Decoder::new` holds a `Content-Length` body and a read-until-close body
/// to the body limit too: the first refused before any data, the second
/// after the data up to the limit.
#[test]
fn decoder_new_holds_every_framing_to_the_body_limit() {
    use ringstream_core::h1::BodyFraming;
    let limits = Limits {
        max_body_len: 5,
        ..Limits::DEFAULT
    };
    let ok = decode_every_split(|| Decoder::new(BodyFraming::Length(5), limits), b"hello");
    assert_eq!((ok.result, &ok.body[..]), (Ok(()), &b"hello"[..]));
    let over = decode_every_split(|| Decoder::new(BodyFraming::Length(6), limits), b"hello!");
    assert_eq!(
        (over.result, &over.body[..]),
        (Err(Error::BodyTooLarge), &b""[..])
    );

    let eof = || Decoder::new(BodyFraming::CloseDelimited, limits);
    let ok = decode_every_split(eof, b"hello");
    assert_eq!((ok.result, &ok.body[..]), (Ok(()), &b"hello"[..]));
    let over = decode_every_split(eof, b"hello!");
    assert_eq!(
        (over.result, &over.body[..]),
        (Err(Error::BodyTooLarge), &b"hello"[..])
    );
    // `Decoder::eof()` has no limit.
    let mut unlimited = Decoder::eof();
    assert_eq!(unlimited.decode(&[0; 64]).unwrap().data, 0..64);
}

/// RFC 9112 §7.1.2: the trailer section is bounded in size and count.
#[test]
fn rfc9112_7_1_2_rejects_trailers_over_the_limits() {
    let limits = Limits {
        max_trailers_len: 16,
        max_trailer_fields: 2,
        ..Limits::DEFAULT
    };
    // "A: 1234567890\r\n" is 15 bytes.
    let ok = feed(
        Decoder::chunked(limits),
        [&b"0\r\nA: 1234567890\r\n\r\n"[..]],
    );
    assert_eq!(ok.result, Ok(()));
    rejects_with(
        limits,
        b"0\r\nA: 12345678901234\r\n\r\n",
        Error::TrailersTooLarge,
    );
    rejects_with(
        limits,
        b"0\r\nA: 1234567890\r\nB: 1\r\n\r\n",
        Error::TrailersTooLarge,
    );
    let limits = Limits {
        max_trailer_fields: 2,
        ..Limits::DEFAULT
    };
    let ok = feed(
        Decoder::chunked(limits),
        [&b"0\r\nA: 1\r\nB: 2\r\n\r\n"[..]],
    );
    assert_eq!(ok.result, Ok(()));
    rejects_with(
        limits,
        b"0\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n",
        Error::TrailersTooLarge,
    );
    // A huge line is refused as it arrives, not after it is buffered.
    let mut wire = b"0\r\nA: ".to_vec();
    wire.extend(std::iter::repeat_n(b'v', 1 << 20));
    let out = feed(Decoder::chunked(Limits::DEFAULT), [&wire[..]]);
    assert_eq!(out.result, Err(Error::TrailersTooLarge));
}

/// RFC 9110 §6.5.1: fields that frame or route the message must not be
/// sent as trailers.
#[test]
fn rfc9110_6_5_1_rejects_framing_fields_in_trailers() {
    rejects(b"0\r\nContent-Length: 5\r\n\r\n", Error::ForbiddenTrailer);
    rejects(
        b"0\r\ntransfer-encoding: chunked\r\n\r\n",
        Error::ForbiddenTrailer,
    );
    rejects(b"0\r\nHOST: evil.example\r\n\r\n", Error::ForbiddenTrailer);
    rejects(
        b"0\r\nX-Ok: 1\r\ncOnTeNt-LeNgTh: 0\r\n\r\n",
        Error::ForbiddenTrailer,
    );
}

/// RFC 9112 §7.1.2 and §5: trailer lines are field lines; lines without a
/// colon (such as a bare request line), bad names, whitespace before the
/// colon, control characters and obs-fold are refused.
#[test]
fn rfc9112_7_1_2_rejects_malformed_trailer_lines() {
    rejects(b"0\r\nGET / HTTP/1.1\r\n\r\n", Error::InvalidTrailer);
    rejects(b"0\r\nno-colon\r\n\r\n", Error::InvalidTrailer);
    rejects(b"0\r\n: empty-name\r\n\r\n", Error::InvalidTrailer);
    rejects(b"0\r\nbad@name: x\r\n\r\n", Error::InvalidTrailer);
    rejects(b"0\r\nbad name: x\r\n\r\n", Error::InvalidTrailer);
    rejects(b"0\r\nA : b\r\n\r\n", Error::InvalidTrailer);
    rejects(b"0\r\n A: b\r\n\r\n", Error::InvalidTrailer);
    rejects(b"0\r\nA: b\x00c\r\n\r\n", Error::InvalidTrailer);
    rejects(b"0\r\nA: b\x7f\r\n\r\n", Error::InvalidTrailer);
    rejects(b"0\r\nA: b\r\n  folded\r\n\r\n", Error::ObsFold);
    rejects(b"0\r\nA: b\r\n\tfolded\r\n\r\n", Error::ObsFold);
}

// ---------------------------------------------------------------------------
// Length and read-until-close
// ---------------------------------------------------------------------------

/// RFC 9112 §6.2: a Content-Length body is exactly that many bytes.
#[test]
fn rfc9112_6_2_length_body_takes_exactly_its_length() {
    let out = decode_every_split(|| Decoder::length(5), b"helloGET /");
    assert_eq!(out.result, Ok(()));
    assert_eq!(out.body, b"hello");
    assert_eq!(out.rest, b"GET /");
}

/// RFC 9112 §8: a body cut short by the peer closing is incomplete.
#[test]
fn rfc9112_8_truncated_length_body_is_unexpected_eof() {
    let out = decode_every_split(|| Decoder::length(10), b"hello");
    assert_eq!(out.result, Err(Error::UnexpectedEof));
    assert_eq!(out.body, b"hello");

    let mut d = LengthDecoder::new(10);
    d.decode(b"abc").unwrap();
    assert_eq!(d.remaining(), 7);
    assert_eq!(d.finish_eof(), Err(Error::UnexpectedEof));
    assert_eq!(d.decode(b"defghij"), Err(Error::UnexpectedEof));
    assert!(!d.is_finished());
}

#[test]
fn zero_length_is_finished_immediately() {
    let mut d = Decoder::length(0);
    assert!(d.is_finished());
    let p = d.decode(b"next").unwrap();
    assert_eq!((p.consumed, p.data.is_empty(), p.finished), (0, true, true));
    assert_eq!(d.finish_eof(), Ok(()));
    assert!(trailers_of(&d).is_empty());
}

#[test]
fn huge_length_is_bounded_by_the_input() {
    let mut d = Decoder::length(u64::MAX);
    let p = d.decode(b"abc").unwrap();
    assert_eq!((p.consumed, p.data.clone(), p.finished), (3, 0..3, false));
    assert_eq!(d.remaining_hint(), Some(u64::MAX - 3));
}

/// RFC 9112 §6.3 rule 8: a body without length is read until close.
#[test]
fn rfc9112_6_3_read_until_close_body() {
    let mut d = Decoder::eof();
    let p = d.decode(b"all of it").unwrap();
    assert_eq!((p.consumed, p.data.clone(), p.finished), (9, 0..9, false));
    assert!(!d.is_finished());
    assert_eq!(d.remaining_hint(), None);
    assert_eq!(d.finish_eof(), Ok(()));
    assert!(d.is_finished());
    assert!(d.decode(b"x").unwrap().finished);
}

// ---------------------------------------------------------------------------
// Fuzz regressions
// ---------------------------------------------------------------------------

/// Inputs that stress the decoder's edges (and any input the `chunked`
/// fuzz target finds) never panic and decode the same at every split.
#[test]
fn edge_inputs_do_not_panic() {
    let cases: &[&[u8]] = &[b"0\r\n:\r\n\r\n", b"0\r\n\xff: \xff\r\n\r\n"];
    for case in cases {
        let _ = decode_every_split(chunked, case);
    }
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

fn token() -> impl Strategy<Value = String> {
    "[!#$%&'*+.^_`|~0-9A-Za-z-]{1,8}"
}

/// One extension, rendered with random BWS and a token, quoted-string or no
/// value.
fn extension() -> impl Strategy<Value = String> {
    let ws = "[ \t]{0,2}";
    let value = prop_oneof![
        Just(String::new()),
        token().prop_map(|t| format!("={t}")),
        "[ -~]{0,10}".prop_map(|s| {
            let escaped: String = s
                .chars()
                .flat_map(|c| match c {
                    '"' | '\\' => vec!['\\', c],
                    c => vec![c],
                })
                .collect();
            format!("=\"{escaped}\"")
        }),
    ];
    (ws, ws, token(), ws, value).prop_map(|(a, b, name, c, value)| {
        if value.is_empty() {
            format!("{a};{b}{name}")
        } else {
            // BWS around "=".
            format!(
                "{a};{b}{name}{c}{}",
                value.replacen('=', &format!("={c}"), 1)
            )
        }
    })
}

fn trailer() -> impl Strategy<Value = (String, Vec<u8>)> {
    let name = token().prop_filter("framing fields are forbidden", |n| {
        !["content-length", "transfer-encoding", "host"]
            .iter()
            .any(|f| n.eq_ignore_ascii_case(f))
    });
    let value = prop_oneof![
        Just(Vec::new()),
        "[!-~]([ -~\t]{0,12}[!-~])?".prop_map(String::into_bytes),
        proptest::collection::vec(0x80u8..=0xff, 1..4),
    ];
    (name, value)
}

/// Chunk sizes: mostly tiny, some medium, a few large.
fn chunk_sizes() -> impl Strategy<Value = Vec<usize>> {
    proptest::collection::vec(
        prop_oneof![
            6 => 1usize..8,
            3 => 8usize..300,
            1 => 300usize..20_000,
        ],
        0..40,
    )
}

struct Encoded {
    wire: Vec<u8>,
    body: Vec<u8>,
    trailers: Vec<(String, Vec<u8>)>,
}

fn encoded() -> impl Strategy<Value = Encoded> {
    (
        chunk_sizes(),
        proptest::collection::vec(proptest::option::of(extension()), 0..40),
        proptest::collection::vec(trailer(), 0..5),
        any::<bool>(),
        any::<u8>(),
    )
        .prop_map(|(sizes, exts, trailers, upper, seed)| {
            let encoder = if upper {
                ChunkedEncoder::uppercase()
            } else {
                ChunkedEncoder::new()
            };
            let mut wire = Vec::new();
            let mut body = Vec::new();
            for (i, &size) in sizes.iter().enumerate() {
                let data: Vec<u8> = (0..size)
                    .map(|j| (j as u8).wrapping_mul(31).wrapping_add(seed ^ i as u8))
                    .collect();
                let prefix = encoder.chunk_prefix(size as u64).unwrap();
                let line = prefix.as_ref();
                match exts.get(i).cloned().flatten() {
                    Some(ext) => {
                        // Put the extension between the hex size and CRLF.
                        wire.extend_from_slice(&line[..line.len() - 2]);
                        wire.extend_from_slice(ext.as_bytes());
                        wire.extend_from_slice(CRLF);
                    }
                    None => wire.extend_from_slice(line),
                }
                wire.extend_from_slice(&data);
                wire.extend_from_slice(CRLF);
                body.extend_from_slice(&data);
            }
            // At most 5 trailers, each of at most 26 bytes.
            let mut last = [0u8; 512];
            let mut out = SliceBuf::new(&mut last);
            encoder
                .last_chunk(
                    trailers.iter().map(|(n, v)| (n.as_str(), v.as_slice())),
                    &mut out,
                )
                .unwrap();
            wire.extend_from_slice(out.written());
            Encoded {
                wire,
                body,
                trailers,
            }
        })
}

impl std::fmt::Debug for Encoded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(&self.wire))
    }
}

/// Cuts `wire` into pieces of the given sizes (cycled; zero means one byte).
fn split<'a>(wire: &'a [u8], sizes: &[usize]) -> Vec<&'a [u8]> {
    let mut pieces = Vec::new();
    let mut rest = wire;
    let mut i = 0;
    while !rest.is_empty() {
        let n = sizes
            .get(i % sizes.len().max(1))
            .copied()
            .unwrap_or(1)
            .max(1);
        let (a, b) = rest.split_at(n.min(rest.len()));
        pieces.push(a);
        rest = b;
        i += 1;
    }
    pieces
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Encode → decode round trip at arbitrary split points.
    #[test]
    fn chunked_round_trips_at_any_split(
        enc in encoded(),
        sizes in proptest::collection::vec(0usize..5000, 1..16),
        next in proptest::collection::vec(any::<u8>(), 0..8),
    ) {
        let mut wire = enc.wire.clone();
        wire.extend_from_slice(&next);
        let out = feed(chunked(), split(&wire, &sizes));
        prop_assert_eq!(out.result, Ok(()));
        prop_assert_eq!(&out.body, &enc.body);
        prop_assert_eq!(&out.trailers, &kept(&enc.trailers));
        prop_assert_eq!(&out.rest, &next);
    }

    /// Encode → decode round trip one byte at a time.
    #[test]
    fn chunked_round_trips_one_byte_at_a_time(enc in encoded()) {
        let out = feed(chunked(), enc.wire.chunks(1));
        prop_assert_eq!(out.result, Ok(()));
        prop_assert_eq!(&out.body, &enc.body);
        prop_assert_eq!(&out.trailers, &kept(&enc.trailers));
    }

    /// Arbitrary bytes never panic and never break the Progress contract
    /// (`feed` asserts it on every call).
    #[test]
    fn chunked_never_panics_on_arbitrary_bytes(
        wire in proptest::collection::vec(any::<u8>(), 0..512),
        sizes in proptest::collection::vec(0usize..64, 1..8),
    ) {
        let _ = feed(chunked(), split(&wire, &sizes));
    }

    /// A valid body with one byte replaced never panics, and any split
    /// decodes it the same way.
    #[test]
    fn chunked_mutations_are_split_independent(
        enc in encoded(),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        sizes in proptest::collection::vec(0usize..32, 1..8),
    ) {
        let mut wire = enc.wire.clone();
        let i = at.index(wire.len());
        wire[i] = byte;
        let whole = feed(chunked(), [&wire[..]]);
        let pieces = feed(chunked(), split(&wire, &sizes));
        prop_assert_eq!(whole, pieces);
    }

    /// A Content-Length body decodes the same at any split.
    #[test]
    fn length_is_split_independent(
        body in proptest::collection::vec(any::<u8>(), 0..2000),
        extra in proptest::collection::vec(any::<u8>(), 0..16),
        sizes in proptest::collection::vec(0usize..300, 1..8),
    ) {
        let mut wire = body.clone();
        wire.extend_from_slice(&extra);
        let out = feed(Decoder::length(body.len() as u64), split(&wire, &sizes));
        prop_assert_eq!(out.result, Ok(()));
        prop_assert_eq!(out.body, body);
        prop_assert_eq!(out.rest, extra);
    }
}
