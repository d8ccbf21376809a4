//! Response encoding through the public API: framing rule, head writer,
//! body encoders and the `Date` value.

// Most cases write into `Vec<u8>`, which needs `alloc`; the fixed-buffer
// paths are in `out.rs` and `fixed_ring.rs`.
#![cfg(feature = "alloc")]

use proptest::prelude::*;
use ringstream_core::h1::date::{DateCache, HttpDate, HTTP_DATE_LEN, MAX_HTTP_DATE_SECS};
use ringstream_core::h1::decode::Decoder;
use ringstream_core::h1::encode::{ChunkedEncoder, LengthEncoder};
use ringstream_core::h1::response::{reason_phrase, write_response_head, ResponseHead};
use ringstream_core::h1::Version;
use ringstream_core::h1::{response_framing, ResponseFraming, CRLF};
use ringstream_core::{Error, Limits};

const DATE: &[u8] = b"Sun, 06 Nov 1994 08:49:37 GMT";

// ---------------------------------------------------------------------------
// ChunkedEncoder
// ---------------------------------------------------------------------------

/// RFC 9112 §7.1: chunk-size is the data length in hex, then CRLF.
#[test]
fn rfc9112_7_1_chunk_prefix_is_hex_size_and_crlf() {
    let lower = ChunkedEncoder::new();
    let upper = ChunkedEncoder::uppercase();
    let cases: &[(u64, &[u8], &[u8])] = &[
        (1, b"1\r\n", b"1\r\n"),
        (0xf, b"f\r\n", b"F\r\n"),
        (0x10, b"10\r\n", b"10\r\n"),
        (1460, b"5b4\r\n", b"5B4\r\n"),
        (65_536, b"10000\r\n", b"10000\r\n"),
        (0xdead_beef, b"deadbeef\r\n", b"DEADBEEF\r\n"),
        (u64::MAX, b"ffffffffffffffff\r\n", b"FFFFFFFFFFFFFFFF\r\n"),
    ];
    for &(len, l, u) in cases {
        let prefix = lower.chunk_prefix(len).unwrap();
        assert_eq!(prefix.as_ref(), l);
        assert_eq!(prefix.as_bytes(), l);
        assert_eq!(prefix.len(), l.len());
        assert_eq!(upper.chunk_prefix(len).unwrap().as_ref(), u);
    }
    assert_eq!(CRLF, b"\r\n");
    assert_eq!(ChunkedEncoder::CRLF, b"\r\n");
}

/// RFC 9112 §7.1: a zero-size chunk is the last chunk, so empty data must
/// never be framed as a chunk.
#[test]
fn rfc9112_7_1_empty_data_is_never_a_chunk() {
    assert!(ChunkedEncoder::new().chunk_prefix(0).is_none());
    let mut out = Vec::new();
    ChunkedEncoder::new().write_chunk(b"", &mut out).unwrap();
    assert!(out.is_empty());
    ChunkedEncoder::new()
        .write_chunk(b"hello", &mut out)
        .unwrap();
    assert_eq!(out, b"5\r\nhello\r\n");
}

/// RFC 9112 §7.1 and §7.1.2: last-chunk, trailer section, final CRLF.
#[test]
fn rfc9112_7_1_2_last_chunk_writes_trailers() {
    let mut out = Vec::new();
    ChunkedEncoder::new()
        .last_chunk(std::iter::empty(), &mut out)
        .unwrap();
    assert_eq!(out, b"0\r\n\r\n");

    let mut out = b"prefix".to_vec();
    ChunkedEncoder::new()
        .last_chunk(
            [
                ("x-sha256", &b"abc"[..]),
                ("X-Empty", b""),
                ("x-a", b"a b\tc"),
            ],
            &mut out,
        )
        .unwrap();
    assert_eq!(
        out,
        b"prefix0\r\nx-sha256: abc\r\nX-Empty: \r\nx-a: a b\tc\r\n\r\n"
    );
}

/// RFC 9110 §5.5 / §6.5.1: a trailer cannot inject lines, and framing
/// fields cannot be sent as trailers; `out` is untouched on error.
#[test]
fn rfc9110_6_5_1_last_chunk_validates_trailers() {
    let enc = ChunkedEncoder::new();
    let cases: &[(&str, &[u8], Error)] = &[
        ("x-a", b"1\r\nContent-Length: 0", Error::InvalidTrailer),
        ("x-a", b"1\nx", Error::InvalidTrailer),
        ("x-a", b"\x00", Error::InvalidTrailer),
        ("x-a", b" padded", Error::InvalidTrailer),
        ("x-a", b"padded\t", Error::InvalidTrailer),
        ("", b"v", Error::InvalidFieldName),
        ("bad name", b"v", Error::InvalidFieldName),
        ("x:y", b"v", Error::InvalidFieldName),
        ("Content-Length", b"5", Error::ForbiddenTrailer),
        ("transfer-encoding", b"chunked", Error::ForbiddenTrailer),
        ("HOST", b"example.com", Error::ForbiddenTrailer),
    ];
    for &(name, value, error) in cases {
        let mut out = b"kept".to_vec();
        let result = enc.last_chunk([("x-ok", &b"1"[..]), (name, value)], &mut out);
        assert_eq!(result, Err(error), "{name:?}: {value:?}");
        assert_eq!(out, b"kept");
    }
}

#[test]
fn chunked_encoding_decodes_back() {
    let enc = ChunkedEncoder::uppercase();
    let mut wire = Vec::new();
    for piece in [&b"a"[..], b"", &[7u8; 3000], b"tail"] {
        enc.write_chunk(piece, &mut wire).unwrap();
    }
    enc.last_chunk([("x-n", &b"4"[..])], &mut wire).unwrap();
    let mut d = Decoder::chunked(Limits::DEFAULT);
    let mut body = Vec::new();
    let mut input = &wire[..];
    loop {
        let p = d.decode(input).unwrap();
        body.extend_from_slice(&input[p.data.clone()]);
        input = &input[p.consumed..];
        if p.finished {
            break;
        }
    }
    assert_eq!(body.len(), 1 + 3000 + 4);
    assert_eq!(d.trailers().collect::<Vec<_>>(), [("x-n", &b"4"[..])]);
}

/// RFC 9112 §7.1: `chunk-size = 1*HEXDIG` — a size line padded with
/// leading zeros (reserved before the chunk's length was known) is the
/// same size, and the core's decoder reads it back; a length wider than
/// the reserved line is refused, as are zero and more than 16 digits.
#[test]
fn padded_chunk_sizes_decode_back() {
    let enc = ChunkedEncoder::new();
    assert_eq!(
        enc.chunk_prefix_padded(0x5b4, 5).unwrap().as_ref(),
        b"005b4\r\n"
    );
    assert_eq!(
        enc.chunk_prefix_padded(0x5b4, 3).unwrap().as_ref(),
        b"5b4\r\n"
    );
    assert!(enc.chunk_prefix_padded(0x5b4, 2).is_none());
    assert!(enc.chunk_prefix_padded(0, 4).is_none());
    assert!(enc.chunk_prefix_padded(1, 17).is_none());
    assert_eq!(
        enc.chunk_prefix_padded(u64::MAX, 16).unwrap().as_ref(),
        b"ffffffffffffffff\r\n"
    );

    let mut encoder = ringstream_core::h1::Encoder::new(ResponseFraming::Chunked);
    let reserved = encoder.padded_prefix_len(4096);
    assert_eq!(reserved, 6);
    let mut wire = Vec::new();
    for piece in [&b"x"[..], &[9u8; 300], &[1u8; 4096]] {
        let frame = encoder.encode_padded(piece.len(), reserved).unwrap();
        assert_eq!(frame.prefix().len(), reserved);
        wire.extend_from_slice(frame.prefix());
        wire.extend_from_slice(piece);
        wire.extend_from_slice(frame.suffix());
    }
    assert_eq!(
        encoder.encode_padded(0x1_0000, reserved),
        Err(Error::OutOfSpace)
    );
    encoder.finish([], &mut wire).unwrap();
    assert!(wire.starts_with(b"0001\r\nx\r\n012c\r\n"));
    let mut d = Decoder::chunked(Limits::DEFAULT);
    let mut body = Vec::new();
    let mut input = &wire[..];
    loop {
        let p = d.decode(input).unwrap();
        body.extend_from_slice(&input[p.data.clone()]);
        input = &input[p.consumed..];
        if p.finished {
            break;
        }
    }
    assert_eq!(body.len(), 1 + 300 + 4096);
    assert!(input.is_empty());
}

// ---------------------------------------------------------------------------
// LengthEncoder
// ---------------------------------------------------------------------------

/// RFC 9112 §6.2: a Content-Length body must be exactly that long; the
/// encoder refuses bytes over the length before they are sent.
#[test]
fn rfc9112_6_2_length_encoder_counts_exactly() {
    let mut enc = LengthEncoder::new(10);
    assert_eq!(enc.remaining(), 10);
    enc.encode(4).unwrap();
    assert_eq!(enc.finish(), Err(Error::BodyUnderflow));
    assert_eq!(enc.encode(7), Err(Error::BodyOverflow));
    assert_eq!(enc.remaining(), 6, "a refused write is not counted");
    enc.encode(0).unwrap();
    enc.encode(6).unwrap();
    assert_eq!(enc.finish(), Ok(()));
    assert_eq!(enc.encode(1), Err(Error::BodyOverflow));

    let enc = LengthEncoder::new(0);
    assert_eq!(enc.finish(), Ok(()));
    let mut enc = LengthEncoder::new(u64::MAX);
    enc.encode(usize::MAX).unwrap();
    assert_eq!(enc.remaining(), u64::MAX - usize::MAX as u64);
    assert_eq!(Error::BodyOverflow.status(), 500);
}

// ---------------------------------------------------------------------------
// Response framing
// ---------------------------------------------------------------------------

/// RFC 9112 §6.3 rules 1 and 2, RFC 9110 §9.3.2 (HEAD) and §15.4.5 (304).
#[test]
fn rfc9112_6_3_response_framing_rule() {
    use ResponseFraming::*;
    for v in [Version::Http10, Version::Http11] {
        // HEAD and 304 advertise the length the body would have.
        assert_eq!(
            response_framing(true, 200, v, Some(7)),
            NoBody {
                content_length: Some(7)
            }
        );
        assert_eq!(
            response_framing(true, 200, v, None),
            NoBody {
                content_length: None
            }
        );
        assert_eq!(
            response_framing(false, 304, v, Some(7)),
            NoBody {
                content_length: Some(7)
            }
        );
        // 1xx and 204 never carry a length.
        for status in [100, 101, 103, 199, 204] {
            for head in [false, true] {
                assert_eq!(
                    response_framing(head, status, v, Some(7)),
                    NoBody {
                        content_length: None
                    },
                    "{status}"
                );
            }
        }
        assert_eq!(response_framing(false, 200, v, Some(0)), Length(0));
        assert_eq!(response_framing(false, 404, v, Some(9)), Length(9));
    }
    assert_eq!(response_framing(false, 200, Version::Http11, None), Chunked);
    assert_eq!(
        response_framing(false, 200, Version::Http10, None),
        CloseDelimited
    );
    assert!(CloseDelimited.requires_close());
    assert!(!Chunked.requires_close());
    assert!(Chunked.has_body());
    assert!(!NoBody {
        content_length: Some(1)
    }
    .has_body());
}

// ---------------------------------------------------------------------------
// Head writer
// ---------------------------------------------------------------------------

fn head(
    version: Version,
    status: u16,
    reason: Option<&str>,
    fields: &[(&[u8], &[u8])],
    framing: ResponseFraming,
    close: bool,
) -> Result<String, Error> {
    let mut out = Vec::new();
    write_response_head(
        &mut out,
        &ResponseHead {
            status,
            reason,
            date: DATE,
            server: None,
            server_fields: None,
            version,
        },
        fields.iter().copied(),
        framing,
        close,
    )?;
    Ok(String::from_utf8(out).unwrap())
}

/// RFC 9112 §4: status-line = HTTP-version SP status-code SP [reason-phrase].
#[test]
fn rfc9112_4_status_line() {
    let h = head(
        Version::Http11,
        404,
        None,
        &[],
        ResponseFraming::Length(0),
        false,
    );
    assert!(h.unwrap().starts_with("HTTP/1.1 404 Not Found\r\n"));
    let h = head(
        Version::Http10,
        200,
        Some("Fine"),
        &[],
        ResponseFraming::Length(0),
        false,
    );
    assert!(h.unwrap().starts_with("HTTP/1.0 200 Fine\r\n"));
    // An unregistered code has an empty reason but keeps the SP.
    let h = head(
        Version::Http11,
        599,
        None,
        &[],
        ResponseFraming::Length(0),
        false,
    );
    assert!(h.unwrap().starts_with("HTTP/1.1 599 \r\n"));
    assert_eq!(reason_phrase(200), "OK");
    assert_eq!(reason_phrase(413), "Content Too Large");
    assert_eq!(reason_phrase(431), "Request Header Fields Too Large");
}

#[test]
fn head_with_length_date_fields_and_close() {
    let h = head(
        Version::Http11,
        200,
        None,
        &[(b"content-type", b"text/plain"), (b"x-id", b"7")],
        ResponseFraming::Length(12),
        true,
    )
    .unwrap();
    assert_eq!(
        h,
        "HTTP/1.1 200 OK\r\n\
         date: Sun, 06 Nov 1994 08:49:37 GMT\r\n\
         content-type: text/plain\r\n\
         x-id: 7\r\n\
         content-length: 12\r\n\
         connection: close\r\n\
         \r\n"
    );
}

/// RFC 9112 §6.1: the writer owns the framing fields, so a caller's
/// `Content-Length` or `Transfer-Encoding` is never duplicated or left to
/// contradict the framing actually used.
#[test]
fn rfc9112_6_1_caller_framing_fields_are_skipped() {
    let h = head(
        Version::Http11,
        200,
        None,
        &[
            (b"Content-Length", b"999"),
            (b"transfer-encoding", b"gzip"),
            (b"TRANSFER-ENCODING", b"chunked"),
            (b"x-keep", b"yes"),
        ],
        ResponseFraming::Chunked,
        false,
    )
    .unwrap();
    assert_eq!(
        h,
        "HTTP/1.1 200 OK\r\n\
         date: Sun, 06 Nov 1994 08:49:37 GMT\r\n\
         x-keep: yes\r\n\
         transfer-encoding: chunked\r\n\
         \r\n"
    );
}

/// RFC 9110 §9.3.2 / §15.3.5: HEAD advertises the length, 204 does not;
/// RFC 9112 §6.3: a close-delimited body says `connection: close`.
#[test]
fn rfc9110_head_204_and_close_delimited_heads() {
    let h = head(
        Version::Http11,
        200,
        None,
        &[],
        ResponseFraming::NoBody {
            content_length: Some(42),
        },
        false,
    )
    .unwrap();
    assert!(h.ends_with("content-length: 42\r\n\r\n"), "{h}");
    let h = head(
        Version::Http11,
        204,
        None,
        &[(b"content-length", b"5")],
        response_framing(false, 204, Version::Http11, Some(5)),
        false,
    )
    .unwrap();
    assert_eq!(
        h,
        "HTTP/1.1 204 No Content\r\ndate: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n"
    );
    let h = head(
        Version::Http10,
        200,
        None,
        &[],
        ResponseFraming::CloseDelimited,
        false,
    )
    .unwrap();
    assert!(h.ends_with("GMT\r\nconnection: close\r\n\r\n"), "{h}");
}

#[test]
fn empty_date_is_omitted() {
    let mut out = Vec::new();
    write_response_head(
        &mut out,
        &ResponseHead {
            status: 200,
            reason: None,
            date: b"",
            server: None,
            server_fields: None,
            version: Version::Http11,
        },
        [],
        ResponseFraming::Length(0),
        false,
    )
    .unwrap();
    assert_eq!(out, b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
}

/// RFC 9110 §5.5 / §15: invalid status codes, names and values (CRLF
/// injection) are refused and leave `out` untouched.
#[test]
fn rfc9110_5_5_head_writer_refuses_injection() {
    let ok: &[(&[u8], &[u8])] = &[];
    type Fields<'a> = &'a [(&'a [u8], &'a [u8])];
    let cases: &[(u16, Option<&str>, Fields, Error)] = &[
        (99, None, ok, Error::InvalidStatus),
        (1000, None, ok, Error::InvalidStatus),
        (200, Some("OK\r\nx: y"), ok, Error::InvalidFieldValue),
        (
            200,
            None,
            &[(b"x-a", b"1\r\nset-cookie: evil")],
            Error::InvalidFieldValue,
        ),
        (200, None, &[(b"x-a", b"1\n")], Error::InvalidFieldValue),
        (200, None, &[(b"x-a", b"\x00")], Error::InvalidFieldValue),
        (200, None, &[(b"x a", b"1")], Error::InvalidFieldName),
        (200, None, &[(b"", b"1")], Error::InvalidFieldName),
        (200, None, &[(b"x:", b"1")], Error::InvalidFieldName),
    ];
    for &(status, reason, fields, error) in cases {
        let mut out = b"kept".to_vec();
        let result = write_response_head(
            &mut out,
            &ResponseHead {
                status,
                reason,
                date: DATE,
                server: None,
                server_fields: None,
                version: Version::Http11,
            },
            fields.iter().copied(),
            ResponseFraming::Length(1),
            false,
        );
        assert_eq!(result, Err(error), "{status} {reason:?} {fields:?}");
        assert_eq!(out, b"kept");
    }
    let mut out = Vec::new();
    let bad_date = write_response_head(
        &mut out,
        &ResponseHead {
            status: 200,
            reason: None,
            date: b"today\r\nx: y",
            server: None,
            server_fields: None,
            version: Version::Http11,
        },
        [],
        ResponseFraming::Length(1),
        false,
    );
    assert_eq!(bad_date, Err(Error::InvalidFieldValue));
    assert!(out.is_empty());
}

// ---------------------------------------------------------------------------
// Date
// ---------------------------------------------------------------------------

/// RFC 9110 §5.6.7: IMF-fixdate, with the RFC's own example.
#[test]
fn rfc9110_5_6_7_imf_fixdate() {
    let cases: &[(u64, &str)] = &[
        (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (784_111_777, "Sun, 06 Nov 1994 08:49:37 GMT"),
        (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
        (1_700_000_000, "Tue, 14 Nov 2023 22:13:20 GMT"),
        (1_709_210_096, "Thu, 29 Feb 2024 12:34:56 GMT"),
        (4_107_542_400, "Mon, 01 Mar 2100 00:00:00 GMT"),
        (MAX_HTTP_DATE_SECS, "Fri, 31 Dec 9999 23:59:59 GMT"),
        (u64::MAX, "Fri, 31 Dec 9999 23:59:59 GMT"),
    ];
    for &(secs, text) in cases {
        let date = HttpDate::from_unix_secs(secs);
        assert_eq!(date.as_str(), text, "{secs}");
        assert_eq!(date.as_bytes(), text.as_bytes());
        assert_eq!(date.to_string(), text);
    }
}

#[test]
fn date_cache_reformats_when_the_second_changes() {
    let mut cache = DateCache::new();
    assert_eq!(cache.get(), b"Thu, 01 Jan 1970 00:00:00 GMT");
    assert_eq!(cache.update(784_111_777), DATE);
    assert_eq!(cache.update(784_111_777), DATE);
    assert_eq!(cache.update(784_111_778), b"Sun, 06 Nov 1994 08:49:38 GMT");
    assert_eq!(cache.get(), b"Sun, 06 Nov 1994 08:49:38 GMT");
    assert_eq!(cache.update(0), b"Thu, 01 Jan 1970 00:00:00 GMT");
    assert_eq!(HTTP_DATE_LEN, 29);
}

/// A slow, obviously correct reference: walk years and months.
fn reference_date(secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let leap = |y: u64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let mut days = secs / 86_400;
    let weekday = DAYS[(days % 7) as usize];
    let mut year = 1970;
    loop {
        let len = if leap(year) { 366 } else { 365 };
        if days < len {
            break;
        }
        days -= len;
        year += 1;
    }
    let mut month = 0;
    loop {
        let len = match month {
            1 if leap(year) => 29,
            1 => 28,
            3 | 5 | 8 | 10 => 30,
            _ => 31,
        };
        if days < len {
            break;
        }
        days -= len;
        month += 1;
    }
    let rem = secs % 86_400;
    format!(
        "{weekday}, {:02} {} {year:04} {:02}:{:02}:{:02} GMT",
        days + 1,
        MONTHS[month],
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

proptest! {
    #[test]
    fn http_date_matches_a_calendar_walk(secs in 0..=MAX_HTTP_DATE_SECS) {
        let date = HttpDate::from_unix_secs(secs);
        prop_assert_eq!(date.as_str(), reference_date(secs));
    }

    #[test]
    fn chunk_prefix_parses_back(len in 1u64.., upper in any::<bool>()) {
        let enc = if upper { ChunkedEncoder::uppercase() } else { ChunkedEncoder::new() };
        let prefix = enc.chunk_prefix(len).unwrap();
        let text = std::str::from_utf8(prefix.as_ref()).unwrap();
        let hex = text.strip_suffix("\r\n").unwrap();
        prop_assert_eq!(u64::from_str_radix(hex, 16).unwrap(), len);
        prop_assert!(!hex.starts_with('0'));
    }
}
