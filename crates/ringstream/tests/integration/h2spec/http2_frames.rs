//! h2spec's `http2/*` of RFC 7540's frames: 3.5 the connection preface,
//! 4.1 frame format, 4.2 frame size, 4.3 header compression, 6.1 DATA,
//! 6.2 HEADERS, 6.3 PRIORITY, 6.4 RST_STREAM, 6.10 CONTINUATION. `cN_M`
//! is `http2/N/M` (`c6_10_3` is `http2/6.10/3`). Over h2c, on `/refuse`
//! (the cases with a request body), and over TLS for a few.

use super::client::{field, Conn, Verdict, CANCEL, COMPRESSION_ERROR, FRAME_SIZE_ERROR};
use super::client::{PING, PROTOCOL_ERROR, STREAM_CLOSED};

/// A request head on stream 1, `method` the common one's, with `extra`
/// fields, END_STREAM and END_HEADERS as given.
async fn head(c: &mut Conn, method: &str, end_stream: bool, end_headers: bool) {
    let mut headers = c.common_headers();
    headers[0].1 = method.to_owned();
    let block = c.encode(&headers);
    c.write_headers(1, end_stream, end_headers, &block).await;
}

/// A CONTINUATION of one of h2spec's dummy fields on `stream`.
async fn dummy_continuation(c: &mut Conn, stream: u32, end_headers: bool) {
    let block = c.encode(&c.dummy_headers(1));
    c.write_continuation(stream, end_headers, &block).await;
}

/// 3.5/1: a client connection preface is answered with SETTINGS.
pub async fn c3_5_1(c: Conn) -> Verdict {
    super::generic::c1_1(c).await
}

/// 3.5/2: an invalid connection preface is a connection error.
pub async fn c3_5_2(mut c: Conn) -> Verdict {
    c.send(b"INVALID CONNECTION PREFACE\r\n\r\n").await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 4.1/1: a frame of unknown type is ignored.
pub async fn c4_1_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.send(b"\x00\x00\x08\x16\x00\x00\x00\x00\x00").await;
    c.send(&[0; 8]).await;
    c.write_ping(false, [0; 8]).await;
    c.verify_ping_frame_with_ack([0; 8]).await
}

/// 4.1/2: undefined flags are ignored (a PING is answered).
pub async fn c4_1_2(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.send(b"\x00\x00\x08\x06\x16\x00\x00\x00\x00").await;
    c.send(&[0; 8]).await;
    c.verify_event_type(PING).await
}

/// 4.1/3: the reserved bit of the stream identifier is ignored.
pub async fn c4_1_3(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.send(b"\x00\x00\x08\x06\x16\x80\x00\x00\x00").await;
    c.send(&[0; 8]).await;
    c.verify_event_type(PING).await
}

/// 4.2/1: DATA of SETTINGS_MAX_FRAME_SIZE octets is accepted.
pub async fn c4_2_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    head(&mut c, "POST", false, true).await;
    let data = vec![b'x'; c.max_frame_size()];
    c.write_data(1, true, &data).await;
    c.verify_headers_frame(1).await
}

/// 4.2/2: DATA over SETTINGS_MAX_FRAME_SIZE is a FRAME_SIZE_ERROR.
pub async fn c4_2_2(mut c: Conn) -> Verdict {
    c.handshake().await?;
    head(&mut c, "POST", false, true).await;
    let data = vec![b'x'; c.max_frame_size() + 1];
    c.write_data(1, true, &data).await;
    c.verify_stream_error(&[FRAME_SIZE_ERROR]).await
}

/// 4.2/3: HEADERS over SETTINGS_MAX_FRAME_SIZE is a connection error
/// FRAME_SIZE_ERROR.
pub async fn c4_2_3(mut c: Conn) -> Verdict {
    c.handshake().await?;
    let mut headers = c.common_headers();
    headers.extend(c.dummy_headers(5));
    let block = c.encode(&headers);
    c.write_headers(1, true, true, &block).await;
    c.verify_connection_error(&[FRAME_SIZE_ERROR]).await
}

/// 4.3/1: an undecodable header block is a COMPRESSION_ERROR.
pub async fn c4_3_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.send(b"\x00\x00\x01\x01\x05\x00\x00\x00\x01\x40").await;
    c.verify_connection_error(&[COMPRESSION_ERROR]).await
}

/// 4.3/2 and 6.2/1: PRIORITY inside a header block.
pub async fn c4_3_2(mut c: Conn) -> Verdict {
    c.handshake().await?;
    head(&mut c, "GET", false, false).await;
    c.write_priority(1, 0, false, 255).await;
    dummy_continuation(&mut c, 1, true).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 4.3/3 and 6.2/2: HEADERS of another stream inside a header block.
pub async fn c4_3_3(mut c: Conn) -> Verdict {
    c.handshake().await?;
    head(&mut c, "GET", false, false).await;
    let block = c.encode(&c.common_headers());
    c.write_headers(3, true, true, &block).await;
    dummy_continuation(&mut c, 1, true).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 6.1/1: DATA on stream 0.
pub async fn c6_1_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.write_data(0, true, b"test").await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 6.1/2: DATA on a half-closed (remote) stream is STREAM_CLOSED.
pub async fn c6_1_2(mut c: Conn) -> Verdict {
    c.handshake().await?;
    head(&mut c, "POST", true, true).await;
    c.write_data(1, true, b"test").await;
    c.verify_stream_error(&[STREAM_CLOSED]).await
}

/// 6.1/3: DATA whose padding is longer than its payload.
pub async fn c6_1_3(mut c: Conn) -> Verdict {
    c.handshake().await?;
    let mut headers = c.common_headers();
    headers[0].1 = "POST".into();
    headers.push(field("content-length", "4"));
    let block = c.encode(&headers);
    c.write_headers(1, false, true, &block).await;
    c.send(b"\x00\x00\x05\x00\x09\x00\x00\x00\x01").await;
    c.send(b"\x06\x54\x65\x73\x74").await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 6.2/1.
pub async fn c6_2_1(c: Conn) -> Verdict {
    c4_3_2(c).await
}

/// 6.2/2.
pub async fn c6_2_2(c: Conn) -> Verdict {
    c4_3_3(c).await
}

/// 6.2/3: HEADERS on stream 0.
pub async fn c6_2_3(mut c: Conn) -> Verdict {
    c.handshake().await?;
    let block = c.encode(&c.common_headers());
    c.write_headers(0, true, true, &block).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 6.2/4: HEADERS whose padding is longer than its payload.
pub async fn c6_2_4(mut c: Conn) -> Verdict {
    c.handshake().await?;
    let block = c.encode(&c.common_headers());
    let len = block.len() + 1;
    let mut head = vec![0, (len >> 8) as u8, len as u8, 0x01, 0x0d, 0, 0, 0, 1];
    head.push((block.len() + 2) as u8);
    head.extend_from_slice(&block);
    c.send(&head).await;
    c.verify_stream_error(&[PROTOCOL_ERROR]).await
}

/// 6.3/1: PRIORITY on stream 0.
pub async fn c6_3_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.write_priority(0, 0, false, 255).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 6.3/2: PRIORITY of 4 octets.
pub async fn c6_3_2(mut c: Conn) -> Verdict {
    c.handshake().await?;
    head(&mut c, "GET", true, true).await;
    c.send(b"\x00\x00\x04\x02\x00\x00\x00\x00\x01").await;
    c.send(b"\x80\x00\x00\x01").await;
    c.verify_stream_error(&[FRAME_SIZE_ERROR]).await
}

/// 6.4/1: RST_STREAM on stream 0.
pub async fn c6_4_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.write_rst_stream(0, CANCEL).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 6.4/2: RST_STREAM on an idle stream.
pub async fn c6_4_2(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.write_rst_stream(1, CANCEL).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 6.4/3: RST_STREAM of 3 octets.
pub async fn c6_4_3(mut c: Conn) -> Verdict {
    c.handshake().await?;
    head(&mut c, "GET", true, true).await;
    c.send(b"\x00\x00\x03\x03\x00\x00\x00\x00\x01").await;
    c.send(b"\x00\x00\x00").await;
    c.verify_stream_error(&[FRAME_SIZE_ERROR]).await
}

/// 6.10/1: two CONTINUATION frames after HEADERS are accepted.
pub async fn c6_10_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    head(&mut c, "GET", true, false).await;
    dummy_continuation(&mut c, 1, false).await;
    dummy_continuation(&mut c, 1, true).await;
    c.verify_headers_frame(1).await
}

/// 6.10/2: DATA where a CONTINUATION was due.
pub async fn c6_10_2(mut c: Conn) -> Verdict {
    c.handshake().await?;
    head(&mut c, "POST", false, false).await;
    dummy_continuation(&mut c, 1, false).await;
    c.write_data(1, true, b"test").await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 6.10/3: CONTINUATION on stream 0.
pub async fn c6_10_3(mut c: Conn) -> Verdict {
    c.handshake().await?;
    head(&mut c, "GET", true, false).await;
    dummy_continuation(&mut c, 0, true).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 6.10/4: CONTINUATION after HEADERS with END_HEADERS.
pub async fn c6_10_4(mut c: Conn) -> Verdict {
    c.handshake().await?;
    head(&mut c, "GET", true, true).await;
    dummy_continuation(&mut c, 1, true).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 6.10/5: CONTINUATION after CONTINUATION with END_HEADERS.
pub async fn c6_10_5(mut c: Conn) -> Verdict {
    c.handshake().await?;
    head(&mut c, "GET", true, false).await;
    dummy_continuation(&mut c, 1, true).await;
    dummy_continuation(&mut c, 1, true).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 6.10/6: CONTINUATION after DATA.
pub async fn c6_10_6(mut c: Conn) -> Verdict {
    c.handshake().await?;
    head(&mut c, "POST", false, false).await;
    c.write_data(1, true, b"test").await;
    dummy_continuation(&mut c, 1, false).await;
    dummy_continuation(&mut c, 0, true).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

mod h2c {
    cases!(H2c: c3_5_1,
        c3_5_2, c4_1_1, c4_1_2, c4_1_3, c4_2_1, c4_2_2, c4_2_3, c4_3_1, c4_3_2,
        c4_3_3, c6_1_1, c6_1_2, c6_1_3, c6_2_1, c6_2_2, c6_2_3, c6_2_4, c6_3_1, c6_3_2, c6_4_1,
        c6_4_2, c6_4_3, c6_10_1, c6_10_2, c6_10_3, c6_10_4, c6_10_5, c6_10_6);
}

/// The cases that send a request body, on `/refuse`.
mod refuse {
    cases!(Refuse: c4_2_1, c4_2_2, c6_1_2, c6_1_3, c6_10_2, c6_10_6);
}

mod tls {
    cases!(Tls: c3_5_1, c3_5_2, c4_2_2, c4_2_3, c4_3_1, c6_1_3, c6_2_4, c6_10_6);
}
