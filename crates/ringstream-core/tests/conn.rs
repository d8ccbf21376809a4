//! The connection rules of one exchange (`Exchange`) and the response body
//! `Encoder`: keep-alive (RFC 9112 §9.3), `100 Continue` (RFC 9110
//! §10.1.1), draining, upgrade (RFC 9110 §7.8) and response framing
//! (RFC 9112 §6.3).

// Writes the heads into `Vec<u8>`, which needs `alloc`.
#![cfg(feature = "alloc")]

use ringstream_core::h1::{
    BodyState, Decoder, Encoder, Exchange, Field, HeadParser, Next, ResponseFraming, ResponseHead,
    CONTINUE,
};
use ringstream_core::{Error, Limits};

const DATE: &[u8] = b"Sun, 06 Nov 1994 08:49:37 GMT";

fn exchange(wire: &[u8]) -> Exchange {
    let mut fields = [Field::EMPTY; 16];
    let head = HeadParser::new(Limits::DEFAULT)
        .parse(wire, &mut fields)
        .expect("valid head")
        .expect("complete head");
    Exchange::new(&head)
}

/// Writes a head for `exchange` and returns it as text with the encoder.
fn head_of(
    exchange: &mut Exchange,
    status: u16,
    fields: &[(&[u8], &[u8])],
    length: Option<u64>,
) -> (String, Encoder) {
    let mut out = Vec::new();
    let head = ResponseHead::new(status).date(DATE);
    let encoder = exchange
        .write_head(&mut out, &head, fields.iter().copied(), length)
        .expect("valid response head");
    (String::from_utf8(out).unwrap(), encoder)
}

#[test]
fn http11_keeps_alive_unless_either_side_says_close() {
    let mut e = exchange(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    let (head, _) = head_of(&mut e, 200, &[], Some(2));
    assert!(!head.contains("connection"), "{head}");
    assert_eq!(e.after_response(true, 0), Next::KeepAlive);

    let mut e = exchange(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    let (head, _) = head_of(&mut e, 200, &[], Some(2));
    assert!(head.ends_with("connection: close\r\n\r\n"), "{head}");
    assert_eq!(e.after_response(true, 0), Next::Close);

    // The service's own `Connection: close` (in any case, in a list) is
    // honoured and not copied twice.
    let mut e = exchange(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    let fields: &[(&[u8], &[u8])] = &[(b"Connection", b"foo, CLOSE")];
    let (head, _) = head_of(&mut e, 200, fields, Some(2));
    assert_eq!(head.matches("onnection").count(), 1, "{head}");
    assert!(head.ends_with("connection: close\r\n\r\n"), "{head}");
    assert_eq!(e.after_response(true, 0), Next::Close);
}

#[test]
fn http10_keeps_alive_only_when_asked_and_says_so() {
    let mut e = exchange(b"GET / HTTP/1.0\r\n\r\n");
    let (head, _) = head_of(&mut e, 200, &[], Some(2));
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(head.ends_with("connection: close\r\n\r\n"), "{head}");
    assert_eq!(e.after_response(true, 0), Next::Close);

    let mut e = exchange(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    let (head, _) = head_of(&mut e, 200, &[], Some(2));
    assert!(head.ends_with("connection: keep-alive\r\n\r\n"), "{head}");
    assert_eq!(e.after_response(true, 0), Next::KeepAlive);

    // Without a length an HTTP/1.0 body ends with the connection.
    let mut e = exchange(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    let (head, encoder) = head_of(&mut e, 200, &[], None);
    assert!(encoder.is_close_delimited());
    assert!(head.ends_with("connection: close\r\n\r\n"), "{head}");
    assert_eq!(e.after_response(true, 0), Next::Close);
}

#[test]
fn framing_fields_are_owned_by_the_writer() {
    // A service's Content-Length frames the body when the body has no
    // length of its own; its Transfer-Encoding is never copied.
    let mut e = exchange(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    let fields: &[(&[u8], &[u8])] = &[
        (b"content-length", b"7"),
        (b"transfer-encoding", b"gzip"),
        (b"x-a", b"1"),
    ];
    let (head, mut encoder) = head_of(&mut e, 200, fields, None);
    assert_eq!(
        head,
        "HTTP/1.1 200 OK\r\ndate: Sun, 06 Nov 1994 08:49:37 GMT\r\nx-a: 1\r\n\
         content-length: 7\r\n\r\n"
    );
    assert_eq!(encoder.encode(8), Err(Error::BodyOverflow));

    // The first Content-Length counts; a later one does not override it.
    let mut e = exchange(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    let twice: &[(&[u8], &[u8])] = &[(b"content-length", b"3"), (b"Content-Length", b"9")];
    let (head, _) = head_of(&mut e, 200, twice, None);
    assert!(head.ends_with("content-length: 3\r\n\r\n"), "{head}");
    assert_eq!(head.matches("ontent-").count(), 1, "{head}");

    // No length at all: chunked on HTTP/1.1.
    let mut e = exchange(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    let (head, _) = head_of(&mut e, 200, &[(b"content-length", b"x")], None);
    assert!(
        head.ends_with("transfer-encoding: chunked\r\n\r\n"),
        "{head}"
    );
}

#[test]
fn head_204_and_304_send_no_body() {
    let mut e = exchange(b"HEAD / HTTP/1.1\r\nHost: a\r\n\r\n");
    let (head, mut encoder) = head_of(&mut e, 200, &[], Some(40));
    assert!(head.ends_with("content-length: 40\r\n\r\n"), "{head}");
    assert!(!encoder.sends_body());
    assert_eq!(encoder.encode(1), Err(Error::BodyOverflow));
    assert_eq!(e.after_response(true, 0), Next::KeepAlive);

    let mut e = exchange(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    let (head, encoder) = head_of(&mut e, 204, &[], Some(40));
    assert!(!head.contains("content-length"), "{head}");
    assert!(!encoder.sends_body());

    let mut e = exchange(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    let (head, encoder) = head_of(&mut e, 304, &[], Some(40));
    assert!(!head.contains("content-length"), "{head}");
    assert!(!encoder.sends_body());
}

/// The `Content-Length` of a head without a body: what `head_of` wrote, or
/// `None`; and no `transfer-encoding` ever.
fn advertised(
    wire: &[u8],
    status: u16,
    fields: &[(&[u8], &[u8])],
    body: Option<u64>,
) -> Option<String> {
    let mut e = exchange(wire);
    let (head, encoder) = head_of(&mut e, status, fields, body);
    assert!(!encoder.sends_body(), "{head}");
    assert!(!head.contains("transfer-encoding"), "{head}");
    assert!(head.matches("content-length").count() <= 1, "{head}");
    assert_eq!(e.after_response(true, 0), Next::KeepAlive, "{head}");
    head.split("\r\n")
        .find_map(|line| line.strip_prefix("content-length: "))
        .map(str::to_owned)
}

/// RFC 9110 §9.3.2 and §8.6: a `HEAD` response's `Content-Length` is the
/// one `GET` would send, or none. A framework that answers `HEAD` with its
/// `GET` handler sets the `GET` length as a field and empties the body:
/// the field is kept, the empty body's size never replaces it, and where
/// `GET` would be chunked (no field, a body of unknown size) none is made
/// up.
#[test]
fn head_advertises_what_get_would_send() {
    const HEAD: &[u8] = b"HEAD /a HTTP/1.1\r\nHost: a\r\n\r\n";
    let cl13: &[(&[u8], &[u8])] = &[(b"content-length", b"13")];
    let cl0: &[(&[u8], &[u8])] = &[(b"Content-Length", b"0")];
    let chunked: &[(&[u8], &[u8])] = &[(b"transfer-encoding", b"chunked")];
    // The handler's field over an emptied body (axum's HEAD).
    assert_eq!(advertised(HEAD, 200, cl13, Some(0)).as_deref(), Some("13"));
    // The handler's field over a body of unknown size.
    assert_eq!(advertised(HEAD, 200, cl13, None).as_deref(), Some("13"));
    // The handler's field is the handler's word, even beside a body.
    assert_eq!(advertised(HEAD, 200, cl13, Some(20)).as_deref(), Some("13"));
    // A `GET` of an empty representation: its field `0` is true.
    assert_eq!(advertised(HEAD, 200, cl0, Some(0)).as_deref(), Some("0"));
    // A service that returned the whole `GET` body: its size.
    assert_eq!(advertised(HEAD, 200, &[], Some(40)).as_deref(), Some("40"));
    // An empty body without a field: nothing is made up.
    assert_eq!(advertised(HEAD, 200, &[], Some(0)), None);
    // `GET` would be chunked: neither a length nor `transfer-encoding`.
    assert_eq!(advertised(HEAD, 200, &[], None), None);
    assert_eq!(advertised(HEAD, 200, chunked, None), None);
    assert_eq!(advertised(HEAD, 200, chunked, Some(0)), None);
    // The same rules for other statuses with a body on `GET`.
    assert_eq!(advertised(HEAD, 404, cl13, Some(0)).as_deref(), Some("13"));
    assert_eq!(advertised(HEAD, 206, &[], Some(0)), None);
    // HTTP/1.0 alike (kept alive when asked).
    let head10 = b"HEAD /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
    assert_eq!(
        advertised(head10, 200, cl13, Some(0)).as_deref(),
        Some("13")
    );
    assert_eq!(advertised(head10, 200, &[], None), None);
}

/// RFC 9110 §15.4.5 and §8.6: a `304` may carry the `Content-Length` a
/// `200` would have had, and nothing else. Its own (empty) body's size is
/// not that, nor is a field `0`, which is what a framework writes for the
/// empty body of the `304` itself.
#[test]
fn not_modified_advertises_only_a_representation_length() {
    const GET: &[u8] = b"GET /a HTTP/1.1\r\nHost: a\r\nIf-None-Match: \"x\"\r\n\r\n";
    let cl13: &[(&[u8], &[u8])] = &[(b"content-length", b"13")];
    let cl0: &[(&[u8], &[u8])] = &[(b"content-length", b"0")];
    assert_eq!(advertised(GET, 304, &[], Some(0)), None);
    assert_eq!(advertised(GET, 304, &[], None), None);
    assert_eq!(advertised(GET, 304, &[], Some(40)), None);
    assert_eq!(advertised(GET, 304, cl0, Some(0)), None);
    assert_eq!(advertised(GET, 304, cl13, Some(0)).as_deref(), Some("13"));
    assert_eq!(advertised(GET, 304, cl13, None).as_deref(), Some("13"));
    // A `HEAD` answered `304` follows the `304` rule.
    let head = b"HEAD /a HTTP/1.1\r\nHost: a\r\n\r\n";
    assert_eq!(advertised(head, 304, cl0, Some(0)), None);
    assert_eq!(advertised(head, 304, cl13, Some(0)).as_deref(), Some("13"));
}

#[test]
fn continue_is_sent_once_when_the_body_is_first_wanted() {
    let wire = b"PUT / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n";
    let mut e = exchange(wire);
    assert_eq!(e.body_wanted(), Some(CONTINUE));
    assert_eq!(e.body_wanted(), None);
    assert_eq!(e.continue_before_head(BodyState::Complete, 0), None);
    head_of(&mut e, 200, &[], Some(0));
    assert_eq!(e.after_response(true, 0), Next::KeepAlive);

    // No `100 Continue` for a request without a body, or on HTTP/1.0.
    let mut e = exchange(b"GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n");
    assert_eq!(e.body_wanted(), None);
    let mut e = exchange(b"PUT / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n");
    assert_eq!(e.body_wanted(), None);
}

#[test]
fn an_uninvited_body_closes_the_connection_unless_the_service_holds_it() {
    let wire = b"PUT / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n";
    // The service answered without reading and dropped the body: the
    // client was never invited, so the connection closes, and says so.
    let mut e = exchange(wire);
    let dropped = BodyState::Unread {
        held: false,
        remaining: Some(3),
    };
    assert_eq!(e.continue_before_head(dropped, 1 << 20), None);
    let (head, _) = head_of(&mut e, 413, &[], Some(0));
    assert!(head.ends_with("connection: close\r\n\r\n"), "{head}");
    assert_eq!(e.after_response(false, 1 << 20), Next::Close);

    // The service still holds the body (it streams it back): invite the
    // client before the final head.
    let mut e = exchange(wire);
    let held = BodyState::Unread {
        held: true,
        remaining: Some(3),
    };
    assert_eq!(e.continue_before_head(held, 1 << 20), Some(CONTINUE));
    head_of(&mut e, 200, &[], None);
    assert_eq!(
        e.after_response(false, 1 << 20),
        Next::Drain { limit: 1 << 20 }
    );
}

#[test]
fn an_unread_body_is_drained_within_the_limit_or_closes() {
    let wire = b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n";
    let unread = BodyState::Unread {
        held: false,
        remaining: Some(100),
    };
    let mut e = exchange(wire);
    assert_eq!(e.continue_before_head(unread, 100), None);
    let (head, _) = head_of(&mut e, 200, &[], Some(0));
    assert!(!head.contains("connection"), "{head}");
    assert_eq!(e.after_response(false, 100), Next::Drain { limit: 100 });

    let mut e = exchange(wire);
    e.continue_before_head(unread, 99);
    let (head, _) = head_of(&mut e, 200, &[], Some(0));
    assert!(head.ends_with("connection: close\r\n\r\n"), "{head}");
    assert_eq!(e.after_response(false, 99), Next::Close);
}

#[test]
fn a_closing_server_says_close() {
    let mut e = exchange(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    e.close();
    let (head, _) = head_of(&mut e, 200, &[], Some(0));
    assert!(head.ends_with("connection: close\r\n\r\n"), "{head}");
    assert_eq!(e.after_response(true, 0), Next::Close);
}

#[test]
fn upgrade_needs_both_fields_on_http11() {
    let e = exchange(
        b"GET /ws HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n",
    );
    assert!(e.is_upgrade());
    let e = exchange(b"GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n\r\n");
    assert!(!e.is_upgrade());
    let e = exchange(b"GET /ws HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\n\r\n");
    assert!(!e.is_upgrade());
    let e = exchange(b"GET /ws HTTP/1.0\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n");
    assert!(!e.is_upgrade());
}

#[test]
fn the_decoder_follows_the_request_framing() {
    let e = exchange(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    assert!(e.decoder(Limits::DEFAULT).is_finished());
    let e = exchange(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\n");
    let mut decoder: Decoder = e.decoder(Limits::DEFAULT);
    assert_eq!(decoder.remaining_hint(), Some(4));
    assert_eq!(decoder.decode(b"abcdef").unwrap().data, 0..4);
    assert!(decoder.is_finished());
}

#[test]
fn a_refused_head_leaves_the_buffer_and_the_exchange_as_they_were() {
    let mut e = exchange(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    let before = e;
    let mut out = b"kept".to_vec();
    let head = ResponseHead::new(200);
    let bad: &[(&[u8], &[u8])] = &[(b"x", b"a\r\nb")];
    let refused = e.write_head(&mut out, &head, bad.iter().copied(), Some(0));
    assert_eq!(refused, Err(Error::InvalidFieldValue));
    assert_eq!(out, b"kept");
    assert_eq!(e, before);
}

#[test]
fn encoder_frames_every_framing() {
    let mut wire = Vec::new();
    let mut chunked = Encoder::new(ResponseFraming::Chunked);
    for piece in [&b"hello"[..], b"", &[b'x'; 300][..]] {
        let frame = chunked.encode(piece.len()).unwrap();
        wire.extend_from_slice(frame.prefix());
        wire.extend_from_slice(piece);
        wire.extend_from_slice(frame.suffix());
    }
    chunked
        .finish([("x-sum", &b"7"[..])], &mut wire)
        .expect("valid trailer");
    let mut expected = b"5\r\nhello\r\n12c\r\n".to_vec();
    expected.extend_from_slice(&[b'x'; 300]);
    expected.extend_from_slice(b"\r\n0\r\nx-sum: 7\r\n\r\n");
    assert_eq!(wire, expected);

    // The decoder reads back what the encoder framed.
    let mut decoder = Decoder::chunked(Limits::DEFAULT);
    let mut body = Vec::new();
    let mut at = 0;
    while !decoder.is_finished() {
        let step = decoder.decode(&wire[at..]).unwrap();
        body.extend_from_slice(&wire[at..][step.data.clone()]);
        at += step.consumed;
    }
    assert_eq!(body.len(), 305);

    let mut trailer = Vec::new();
    let refused =
        Encoder::new(ResponseFraming::Chunked).finish([("host", &b"a"[..])], &mut trailer);
    assert_eq!(refused, Err(Error::ForbiddenTrailer));
    assert!(trailer.is_empty());

    let mut length = Encoder::new(ResponseFraming::Length(3));
    assert_eq!(length.encode(2).unwrap().len(), 0);
    assert_eq!(length.finish([], &mut wire), Err(Error::BodyUnderflow));
    length.encode(1).unwrap();
    assert_eq!(length.encode(1), Err(Error::BodyOverflow));
    assert_eq!(length.finish([], &mut wire), Ok(()));

    let mut close = Encoder::new(ResponseFraming::CloseDelimited);
    assert!(close.is_close_delimited() && close.sends_body());
    assert_eq!(close.encode(1 << 20).unwrap().len(), 0);
}

/// RFC 9110 §7.8: a `101` that switches protocols carries `Connection:
/// upgrade` along with `Upgrade` (a WebSocket client fails the handshake
/// without it, RFC 6455 §4.1), and after it the connection no longer
/// carries HTTP requests.
#[test]
fn switching_protocols_keeps_connection_upgrade_and_ends_http() {
    let mut e = exchange(
        b"GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
    );
    assert!(e.is_upgrade());
    let fields: &[(&[u8], &[u8])] = &[(b"upgrade", b"websocket"), (b"connection", b"Upgrade")];
    let (head, encoder) = head_of(&mut e, 101, fields, None);
    assert_eq!(
        head,
        "HTTP/1.1 101 Switching Protocols\r\ndate: Sun, 06 Nov 1994 08:49:37 GMT\r\n\
         upgrade: websocket\r\nconnection: upgrade\r\n\r\n"
    );
    assert!(!encoder.sends_body());
    assert_eq!(e.after_response(true, 0), Next::Close);

    // The plain head writer keeps the option too.
    let mut out = Vec::new();
    ringstream_core::h1::write_response_head(
        &mut out,
        &ResponseHead::new(101),
        fields.iter().copied(),
        ResponseFraming::NoBody {
            content_length: None,
        },
        false,
    )
    .unwrap();
    assert!(
        out.ends_with(b"upgrade: websocket\r\nconnection: upgrade\r\n\r\n"),
        "{}",
        String::from_utf8_lossy(&out)
    );
}

/// RFC 9110 §7.8: a response that sends `Upgrade` (a `426 Upgrade
/// Required`) lists the `upgrade` connection option, beside the server's
/// own `close`.
#[test]
fn a_426_keeps_its_upgrade_connection_option() {
    let fields: &[(&[u8], &[u8])] = &[(b"upgrade", b"websocket"), (b"connection", b"upgrade")];
    let mut e = exchange(b"GET /ws HTTP/1.1\r\nHost: a\r\n\r\n");
    let (head, _) = head_of(&mut e, 426, fields, Some(0));
    assert!(head.contains("\r\nconnection: upgrade\r\n"), "{head}");
    assert!(head.contains("\r\nupgrade: websocket\r\n"), "{head}");

    let mut e = exchange(b"GET /ws HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    let (head, _) = head_of(&mut e, 426, fields, Some(0));
    assert!(
        head.contains("\r\nconnection: close, upgrade\r\n"),
        "{head}"
    );

    let mut e = exchange(b"GET /ws HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    let (head, _) = head_of(&mut e, 426, fields, Some(0));
    assert!(
        head.contains("\r\nconnection: keep-alive, upgrade\r\n"),
        "{head}"
    );
}

/// A server without a heap writes the head into its fixed transmit buffer:
/// a head that does not fit is `OutOfSpace` and changes neither the buffer
/// nor the exchange, so the server can send what the buffer holds and
/// write the head again; the head that fits is the `Vec` path's.
#[test]
fn exchange_writes_its_head_into_a_fixed_buffer() {
    use ringstream_core::{SliceBuf, WriteBuf};

    let wire = b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
    let fields: &[(&[u8], &[u8])] = &[(b"content-type", b"text/plain")];
    let mut on_heap = exchange(wire);
    let (expected, _) = head_of(&mut on_heap, 200, fields, Some(5));

    let mut e = exchange(wire);
    let before = e;
    let head = ResponseHead::new(200).date(DATE);
    let mut tx = [0u8; 128];
    let mut out = SliceBuf::new(&mut tx);
    // The interim bytes of an earlier write still wait in the buffer.
    out.put(&[b'.'; 60]).unwrap();
    let full = e.write_head(&mut out, &head, fields.iter().copied(), Some(5));
    assert_eq!(full, Err(Error::OutOfSpace));
    assert_eq!(out.written(), &[b'.'; 60][..]);
    assert_eq!(e, before, "a refused head leaves the exchange unchanged");

    // Sent: the buffer is empty again, and the head fits.
    out.clear();
    let encoder = e
        .write_head(&mut out, &head, fields.iter().copied(), Some(5))
        .unwrap();
    assert_eq!(out.written(), expected.as_bytes());
    assert!(expected.ends_with("connection: keep-alive\r\n\r\n"));
    assert!(encoder.sends_body());
    assert_eq!(e.after_response(true, 0), Next::KeepAlive);
    assert_eq!(e, on_heap);
}
