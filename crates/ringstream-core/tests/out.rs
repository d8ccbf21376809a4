//! Output buffers (`WriteBuf`, `SliceBuf`) and the core's writers over
//! them: a server without a heap writes its response heads, chunk framing
//! and error responses straight into a fixed transmit buffer. A piece that
//! does not fit is an ordinary, typed result (`OutOfSpace`,
//! `Error::OutOfSpace`) and leaves the buffer as it was; one that fits
//! exactly is the same bytes the `Vec` path writes.
//!
//! The comparisons with the `Vec` path need `alloc`; the rest runs without.

use ringstream_core::h1::{
    write_error_response, write_response_head, ChunkedEncoder, ResponseFraming, ResponseHead,
};
use ringstream_core::{Error, OutOfSpace, SliceBuf, WriteBuf};

const DATE: &[u8] = b"Sun, 06 Nov 1994 08:49:37 GMT";

/// Fills the storage with a byte no writer produces, to tell written bytes
/// from untouched ones.
const UNTOUCHED: u8 = 0xa5;

// ---------------------------------------------------------------------------
// SliceBuf
// ---------------------------------------------------------------------------

#[test]
fn slice_buf_put_is_all_or_nothing() {
    let mut storage = [UNTOUCHED; 8];
    let mut out = SliceBuf::new(&mut storage);
    assert!(out.is_empty());
    assert_eq!(out.capacity(), 8);
    out.put(b"abc").unwrap();
    out.put(b"").unwrap();
    assert_eq!(out.put(b"defghi"), Err(OutOfSpace));
    assert_eq!(out.written(), b"abc");
    assert_eq!(out.room(), 5);
    out.put(b"defgh").unwrap();
    assert_eq!(out.room(), 0);
    assert_eq!(out.put(b"i"), Err(OutOfSpace));
    out.put(b"").unwrap();
    assert_eq!(out.written(), b"abcdefgh");
    assert_eq!(out.len(), 8);
}

#[test]
fn slice_buf_rewinds_to_a_mark_and_never_forward() {
    let mut storage = [0u8; 8];
    let mut out = SliceBuf::new(&mut storage);
    out.put(b"ab").unwrap();
    let mark = out.mark();
    out.put(b"cde").unwrap();
    out.rewind(mark);
    assert_eq!(out.written(), b"ab");
    out.rewind(7); // past the end: nothing to forget
    assert_eq!(out.written(), b"ab");
    out.clear();
    assert!(out.is_empty());
    out.put(b"xyz").unwrap();
    assert_eq!(out.into_written(), b"xyz");
}

#[test]
fn slice_buf_over_an_empty_slice_takes_only_nothing() {
    let mut out = SliceBuf::new(&mut []);
    assert_eq!(out.put(b""), Ok(()));
    assert_eq!(out.put(b"a"), Err(OutOfSpace));
}

#[test]
fn slice_buf_formats_whole_pieces() {
    use core::fmt::Write as _;
    let mut storage = [0u8; 8];
    let mut out = SliceBuf::new(&mut storage);
    write!(out, "{}-{}", 12, 34).unwrap();
    assert_eq!(out.written(), b"12-34");
    // "567" does not fit after "12-34" and "-": none of it is written.
    let n = std::hint::black_box(567);
    assert!(write!(out, "-{n}").is_err());
    assert_eq!(out.written(), b"12-34-");
}

#[test]
fn out_of_space_is_a_server_error() {
    assert_eq!(Error::from(OutOfSpace), Error::OutOfSpace);
    assert_eq!(Error::OutOfSpace.status(), 500);
    assert_eq!(
        Error::OutOfSpace.to_string(),
        "no room in the output buffer"
    );
    assert_eq!(OutOfSpace.to_string(), "no room in the output buffer");
}

/// A head refused for a bad field after others were written rewinds a
/// fixed buffer like a `Vec`.
#[test]
fn a_refused_head_rewinds_a_fixed_buffer() {
    let head = ResponseHead::new(200).date(DATE);
    let fields = [(&b"x-ok"[..], &b"fine"[..]), (b"x-bad", b"line\r\nbreak")];
    let mut storage = [UNTOUCHED; 256];
    let mut out = SliceBuf::new(&mut storage);
    out.put(b"kept").unwrap();
    let refused = write_response_head(&mut out, &head, fields, ResponseFraming::Length(0), false);
    assert_eq!(refused, Err(Error::InvalidFieldValue));
    assert_eq!(out.written(), b"kept");

    let trailers = [("x-ok", &b"1"[..]), ("content-length", b"2")];
    let refused = ChunkedEncoder::new().last_chunk(trailers, &mut out);
    assert_eq!(refused, Err(Error::ForbiddenTrailer));
    assert_eq!(out.written(), b"kept");
}

/// An empty chunk frames nothing and needs no room.
#[test]
fn an_empty_chunk_needs_no_room() {
    let mut out = SliceBuf::new(&mut []);
    assert_eq!(ChunkedEncoder::new().write_chunk(b"", &mut out), Ok(()));
}

/// A writer can run over a `dyn WriteBuf` (the tests above do) and over a
/// buffer type of the caller's.
#[test]
fn a_callers_buffer_type_works() {
    /// Keeps at most the first `cap` bytes, like a small transmit window.
    struct Window {
        bytes: Vec<u8>,
        cap: usize,
    }
    impl WriteBuf for Window {
        fn put(&mut self, bytes: &[u8]) -> Result<(), OutOfSpace> {
            if self.bytes.len() + bytes.len() > self.cap {
                return Err(OutOfSpace);
            }
            self.bytes.extend_from_slice(bytes);
            Ok(())
        }
        fn mark(&self) -> usize {
            self.bytes.len()
        }
        fn rewind(&mut self, mark: usize) {
            self.bytes.truncate(mark);
        }
    }
    let mut window = Window {
        bytes: Vec::new(),
        cap: 40,
    };
    assert_eq!(
        write_error_response(&mut window, 404, b""),
        Err(Error::OutOfSpace)
    );
    assert!(window.bytes.is_empty());
    window.cap = 200;
    write_error_response(&mut window, 404, b"").unwrap();
    assert!(window.bytes.ends_with(b"\r\n\r\nNot Found\n"));
}

/// The fixed buffers against the `Vec` path, which needs `alloc`.
#[cfg(feature = "alloc")]
mod against_vec {
    use super::*;
    use proptest::prelude::*;
    use ringstream_core::h1::{write_unavailable_response, Encoder};

    // -----------------------------------------------------------------------
    // Writers over a fixed buffer: too small, exact, with something before
    // -----------------------------------------------------------------------

    /// One of the core's writers, run over any buffer.
    type Writer = dyn Fn(&mut dyn WriteBuf) -> Result<(), Error>;

    /// The writers a server uses, each with a name for failure messages.
    fn writers() -> Vec<(&'static str, Box<Writer>)> {
        vec![
            (
                "head with fields and a length",
                Box::new(|out: &mut dyn WriteBuf| {
                    let head = ResponseHead::new(200).date(DATE).server(b"ringstream");
                    let fields = [
                        (&b"content-type"[..], &b"text/html; charset=utf-8"[..]),
                        (b"cache-control", b"no-cache"),
                        (b"content-length", b"99"), // the writer's own is written
                    ];
                    write_response_head(out, &head, fields, ResponseFraming::Length(1460), false)
                }),
            ),
            (
                "chunked head with a reason and close",
                Box::new(|out: &mut dyn WriteBuf| {
                    let head = ResponseHead::new(299).reason("Custom").date(DATE);
                    write_response_head(out, &head, [], ResponseFraming::Chunked, true)
                }),
            ),
            (
                "error response",
                Box::new(|out: &mut dyn WriteBuf| write_error_response(out, 431, DATE)),
            ),
            (
                "unavailable response",
                Box::new(|out: &mut dyn WriteBuf| write_unavailable_response(out, 30, DATE)),
            ),
            (
                "chunk",
                Box::new(|out: &mut dyn WriteBuf| {
                    Ok(ChunkedEncoder::new().write_chunk(b"hello, world", out)?)
                }),
            ),
            (
                "last chunk with trailers",
                Box::new(|out: &mut dyn WriteBuf| {
                    let trailers = [("x-checksum", &b"abc"[..]), ("x-count", b"12")];
                    Encoder::new(ResponseFraming::Chunked).finish(trailers, out)
                }),
            ),
        ]
    }

    /// Every writer into every buffer too small for it: `OutOfSpace`, and what
    /// the buffer held before is all it holds after.
    #[test]
    fn a_piece_that_does_not_fit_leaves_the_buffer_as_it_was() {
        for (name, write) in writers() {
            let mut whole = Vec::new();
            write(&mut whole).unwrap();
            for before in [&b""[..], b"HTTP/1.1 100 Continue\r\n\r\n"] {
                for size in before.len()..before.len() + whole.len() {
                    let mut storage = vec![UNTOUCHED; size];
                    let mut out = SliceBuf::new(&mut storage);
                    out.put(before).unwrap();
                    let result = write(&mut out);
                    assert_eq!(result, Err(Error::OutOfSpace), "{name}, {size} bytes");
                    assert_eq!(out.written(), before, "{name}, {size} bytes");
                }
            }
        }
    }

    /// Every writer into a buffer of exactly its size, and into a larger one:
    /// the bytes the `Vec` path writes.
    #[test]
    fn a_piece_that_fits_exactly_is_the_vec_bytes() {
        for (name, write) in writers() {
            let mut whole = Vec::new();
            write(&mut whole).unwrap();
            for extra in [0, 1, 100] {
                let mut storage = vec![UNTOUCHED; whole.len() + extra];
                let mut out = SliceBuf::new(&mut storage);
                write(&mut out).unwrap();
                assert_eq!(out.written(), &whole[..], "{name}, {extra} to spare");
                assert_eq!(out.room(), extra);
            }
        }
    }

    // -----------------------------------------------------------------------
    // Property: a fixed buffer of any size agrees with the `Vec` path
    // -----------------------------------------------------------------------

    fn field_name() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            Just(b"content-type".to_vec()),
            Just(b"Connection".to_vec()),
            Just(b"content-length".to_vec()),
            Just(b"x-bad name".to_vec()),
            "[a-z][a-z0-9-]{0,12}".prop_map(String::into_bytes),
        ]
    }

    fn field_value() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            Just(b"close".to_vec()),
            Just(b"12".to_vec()),
            Just(b"bad\nvalue".to_vec()),
            "[ -~]{0,24}".prop_map(String::into_bytes),
        ]
    }

    fn framing() -> impl Strategy<Value = ResponseFraming> {
        prop_oneof![
            Just(ResponseFraming::Chunked),
            Just(ResponseFraming::CloseDelimited),
            any::<u64>().prop_map(ResponseFraming::Length),
            proptest::option::of(any::<u64>())
                .prop_map(|content_length| ResponseFraming::NoBody { content_length }),
        ]
    }

    proptest! {
        /// Whatever the head and the buffer size, a `SliceBuf` holds exactly
        /// the `Vec`'s bytes when they fit, and nothing (with `OutOfSpace`)
        /// when they do not; a head the `Vec` path refuses is refused alike.
        #[test]
        fn fixed_buffer_agrees_with_vec(
            status in 100u16..1000,
            fields in proptest::collection::vec((field_name(), field_value()), 0..6),
            framing in framing(),
            close in any::<bool>(),
            size in 0usize..400,
        ) {
            let head = ResponseHead::new(status).date(DATE);
            let pairs = || fields.iter().map(|(n, v)| (&n[..], &v[..]));
            let mut vec = Vec::new();
            let expected = write_response_head(&mut vec, &head, pairs(), framing, close);
            let mut storage = vec![UNTOUCHED; size];
            let mut out = SliceBuf::new(&mut storage);
            let got = write_response_head(&mut out, &head, pairs(), framing, close);
            match expected {
                Ok(()) if vec.len() <= size => {
                    prop_assert_eq!(got, Ok(()));
                    prop_assert_eq!(out.written(), &vec[..]);
                }
                Ok(()) => {
                    prop_assert_eq!(got, Err(Error::OutOfSpace));
                    prop_assert!(out.is_empty());
                }
                Err(e) => {
                    // Validation runs as the head is written: a buffer too small
                    // to reach the bad field reports the lack of space first.
                    prop_assert!(got == Err(e) || got == Err(Error::OutOfSpace), "{:?}", got);
                    prop_assert!(vec.is_empty());
                    prop_assert!(out.is_empty());
                }
            }
        }
    }
}
