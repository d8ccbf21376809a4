//! h2spec's `http2/5*`, RFC 7540's streams: 5.1 stream states, 5.1.1
//! stream identifiers, 5.1.2 stream concurrency, 5.3.1 stream
//! dependencies, 5.4.1 connection error handling, 5.5 extending HTTP/2.
//! `cN_M` is `http2/N/M` (`c5_1_1_2` is `http2/5.1.1/2`). Over h2c, and
//! over TLS for a few.

use super::client::{Conn, Verdict, CANCEL, GOAWAY, MAX_CONCURRENT_STREAMS, PROTOCOL_ERROR};
use super::client::{INITIAL_WINDOW_SIZE, REFUSED_STREAM, STREAM_CLOSED};

/// The common GET's head on `stream`.
async fn get(c: &mut Conn, stream: u32, end_stream: bool) {
    let block = c.encode(&c.common_headers());
    c.write_headers(stream, end_stream, true, &block).await;
}

/// A CONTINUATION of one of h2spec's dummy fields on stream 1.
async fn dummy_continuation(c: &mut Conn) {
    let block = c.encode(&c.dummy_headers(1));
    c.write_continuation(1, true, &block).await;
}

/// 5.1/1: DATA on an idle stream.
pub async fn c5_1_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.write_data(1, true, b"test").await;
    c.verify_stream_error(&[PROTOCOL_ERROR, STREAM_CLOSED])
        .await
}

/// 5.1/2: RST_STREAM on an idle stream.
pub async fn c5_1_2(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.write_rst_stream(1, CANCEL).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 5.1/3: WINDOW_UPDATE on an idle stream.
pub async fn c5_1_3(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.write_window_update(1, 100).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 5.1/4: CONTINUATION on an idle stream.
pub async fn c5_1_4(mut c: Conn) -> Verdict {
    c.handshake().await?;
    let block = c.encode(&c.common_headers());
    c.write_continuation(1, true, &block).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 5.1/5: DATA on a half-closed (remote) stream.
pub async fn c5_1_5(mut c: Conn) -> Verdict {
    c.handshake().await?;
    get(&mut c, 1, true).await;
    c.write_data(1, true, b"test").await;
    c.verify_stream_error(&[STREAM_CLOSED]).await
}

/// 5.1/6: HEADERS on a half-closed (remote) stream.
pub async fn c5_1_6(mut c: Conn) -> Verdict {
    c.handshake().await?;
    get(&mut c, 1, true).await;
    get(&mut c, 1, true).await;
    c.verify_stream_error(&[STREAM_CLOSED]).await
}

/// 5.1/7: CONTINUATION on a half-closed (remote) stream.
pub async fn c5_1_7(mut c: Conn) -> Verdict {
    c.handshake().await?;
    get(&mut c, 1, true).await;
    let block = c.encode(&c.common_headers());
    c.write_continuation(1, true, &block).await;
    c.verify_stream_error(&[STREAM_CLOSED, PROTOCOL_ERROR])
        .await
}

/// 5.1/8: DATA after the client's RST_STREAM.
pub async fn c5_1_8(mut c: Conn) -> Verdict {
    c.handshake().await?;
    get(&mut c, 1, false).await;
    c.write_rst_stream(1, CANCEL).await;
    c.write_data(1, true, b"test").await;
    c.verify_stream_error(&[STREAM_CLOSED]).await
}

/// 5.1/9: HEADERS after the client's RST_STREAM.
pub async fn c5_1_9(mut c: Conn) -> Verdict {
    c.handshake().await?;
    get(&mut c, 1, false).await;
    c.write_rst_stream(1, CANCEL).await;
    get(&mut c, 1, true).await;
    c.verify_stream_error(&[STREAM_CLOSED]).await
}

/// 5.1/10: CONTINUATION after the client's RST_STREAM.
pub async fn c5_1_10(mut c: Conn) -> Verdict {
    c.handshake().await?;
    get(&mut c, 1, false).await;
    c.write_rst_stream(1, CANCEL).await;
    dummy_continuation(&mut c).await;
    c.verify_stream_error(&[STREAM_CLOSED, PROTOCOL_ERROR])
        .await
}

/// 5.1/11: DATA on a closed stream.
pub async fn c5_1_11(mut c: Conn) -> Verdict {
    c.handshake().await?;
    get(&mut c, 1, true).await;
    c.verify_stream_close().await?;
    c.write_data(1, true, b"test").await;
    c.verify_stream_error(&[STREAM_CLOSED]).await
}

/// 5.1/12: HEADERS on a closed stream.
pub async fn c5_1_12(mut c: Conn) -> Verdict {
    c.handshake().await?;
    get(&mut c, 1, true).await;
    c.verify_stream_close().await?;
    get(&mut c, 1, true).await;
    c.verify_connection_error(&[STREAM_CLOSED]).await
}

/// 5.1/13: CONTINUATION on a closed stream.
pub async fn c5_1_13(mut c: Conn) -> Verdict {
    c.handshake().await?;
    get(&mut c, 1, true).await;
    c.verify_stream_close().await?;
    dummy_continuation(&mut c).await;
    c.verify_connection_error(&[STREAM_CLOSED, PROTOCOL_ERROR])
        .await
}

/// 5.1.1/1: an even stream identifier from the client.
pub async fn c5_1_1_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    get(&mut c, 2, true).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 5.1.1/2: a stream identifier below one used before.
pub async fn c5_1_1_2(mut c: Conn) -> Verdict {
    c.handshake().await?;
    get(&mut c, 5, true).await;
    get(&mut c, 3, true).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 5.1.2/1: one stream more than SETTINGS_MAX_CONCURRENT_STREAMS, the
/// responses held open by a window of 0. (h2spec skips the case when the
/// server sets no limit; this server sets one, so its absence fails.)
pub async fn c5_1_2_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    let Some(&max) = c.settings.get(&MAX_CONCURRENT_STREAMS) else {
        return Err("the server sent no SETTINGS_MAX_CONCURRENT_STREAMS".into());
    };
    c.write_settings(&[(INITIAL_WINDOW_SIZE, 0)]).await;
    for i in 0..=max {
        get(&mut c, 1 + 2 * i, true).await;
    }
    c.verify_stream_error(&[PROTOCOL_ERROR, REFUSED_STREAM])
        .await
}

/// 5.3.1/1: HEADERS of a stream that depends on itself.
pub async fn c5_3_1_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    let block = c.encode(&c.common_headers());
    c.write_headers_with(1, &block, Some((1, false, 255)), 0)
        .await;
    c.verify_stream_error(&[PROTOCOL_ERROR]).await
}

/// 5.3.1/2: PRIORITY of a stream that depends on itself.
pub async fn c5_3_1_2(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.write_priority(1, 1, false, 255).await;
    c.verify_stream_error(&[PROTOCOL_ERROR]).await
}

/// An invalid PING (on stream 3).
async fn invalid_ping(c: &mut Conn) -> Verdict {
    c.handshake().await?;
    c.send(b"\x00\x00\x08\x06\x00\x00\x00\x00\x03").await;
    c.send(&[0; 8]).await;
    Ok(())
}

/// 5.4.1/1: a connection error closes the connection.
pub async fn c5_4_1_1(mut c: Conn) -> Verdict {
    invalid_ping(&mut c).await?;
    c.verify_connection_close().await
}

/// 5.4.1/2 (one of h2spec's `--strict` cases): and sends GOAWAY first.
pub async fn c5_4_1_2(mut c: Conn) -> Verdict {
    invalid_ping(&mut c).await?;
    c.verify_event_type(GOAWAY).await
}

/// 5.5/1: an unknown extension frame is ignored.
pub async fn c5_5_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.send(b"\x00\x00\x08\x16\x00\x00\x00\x00\x00").await;
    c.send(&[0; 8]).await;
    c.write_ping(false, [0; 8]).await;
    c.verify_ping_frame_with_ack([0; 8]).await
}

/// 5.5/2: an unknown extension frame inside a header block.
pub async fn c5_5_2(mut c: Conn) -> Verdict {
    c.handshake().await?;
    let block = c.encode(&c.common_headers());
    c.write_headers(1, true, false, &block).await;
    c.send(b"\x00\x00\x08\x16\x00\x00\x00\x00\x00").await;
    c.send(&[0; 8]).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

mod h2c {
    cases!(H2c: c5_1_1, c5_1_2, c5_1_3, c5_1_4, c5_1_5, c5_1_6, c5_1_7, c5_1_8, c5_1_9,
        c5_1_10, c5_1_11, c5_1_12, c5_1_13, c5_1_1_1, c5_1_1_2, c5_1_2_1, c5_3_1_1, c5_3_1_2,
        c5_4_1_1, c5_4_1_2, c5_5_1, c5_5_2);
}

mod tls {
    cases!(Tls: c5_1_5, c5_1_12, c5_1_2_1, c5_4_1_1, c5_5_2);
}
