//! h2spec's `generic/*`: a server accepts every ordinary frame and
//! request (1 Starting HTTP/2, 2 Streams and Multiplexing, 3 Frame
//! Definitions, 4 HTTP Message Exchanges, 5 HPACK). `cN_M` is case M of
//! section N (`c3_10_2` is `generic/3.10/2`). Over h2c, on `/refuse`, and
//! over TLS.

use super::client::{field, Conn, Verdict, CANCEL, DATA, NO_ERROR, PREFACE, SETTINGS};
use super::client::{ACK, ENABLE_PUSH, HEADER_TABLE_SIZE, INITIAL_WINDOW_SIZE};
use super::client::{DEFAULT_FRAME_SIZE, DEFAULT_WINDOW_SIZE};
use super::client::{MAX_CONCURRENT_STREAMS, MAX_FRAME_SIZE, MAX_HEADER_LIST_SIZE};

const H2SPEC: [u8; 8] = *b"h2spec\0\0";

/// The handshake, then the common GET on stream 1, whole.
async fn get(c: &mut Conn) -> Verdict {
    c.handshake().await?;
    c.request(1, "GET", true).await;
    Ok(())
}

/// The handshake, then a POST head on stream 1 (its body to follow).
async fn post(c: &mut Conn) -> Verdict {
    c.handshake().await?;
    c.request(1, "POST", false).await;
    Ok(())
}

/// 1/1: the client preface; the server's first frame is its SETTINGS.
pub async fn c1_1(mut c: Conn) -> Verdict {
    c.send(PREFACE).await;
    c.write_settings(&[(INITIAL_WINDOW_SIZE, DEFAULT_WINDOW_SIZE)])
        .await;
    match c.wait_event().await {
        super::client::Event::Frame(f) if f.kind == SETTINGS && !f.has(ACK) => Ok(()),
        other => Err(format!("expected SETTINGS (flags:0x00); got {other:?}")),
    }
}

/// 2/1: PRIORITY on an idle stream is accepted.
pub async fn c2_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.write_priority(1, 0, false, 255).await;
    c.write_ping(false, [0; 8]).await;
    c.verify_ping_frame_with_ack([0; 8]).await
}

/// 2/2 and 2/3: WINDOW_UPDATE (after a PRIORITY for 2/3) on a
/// half-closed (remote) stream, its response held by a window of 0.
async fn half_closed_window_update(mut c: Conn, priority: bool) -> Verdict {
    c.handshake().await?;
    c.write_settings(&[(INITIAL_WINDOW_SIZE, 0)]).await;
    c.request(1, "GET", true).await;
    if priority {
        c.write_priority(1, 0, false, 255).await;
    }
    c.write_window_update(1, 1).await;
    c.verify_event_type(DATA).await
}

pub async fn c2_2(c: Conn) -> Verdict {
    half_closed_window_update(c, false).await
}

pub async fn c2_3(c: Conn) -> Verdict {
    half_closed_window_update(c, true).await
}

/// 2/4: RST_STREAM on a half-closed (remote) stream.
pub async fn c2_4(mut c: Conn) -> Verdict {
    get(&mut c).await?;
    c.write_rst_stream(1, CANCEL).await;
    c.write_ping(false, [0; 8]).await;
    c.verify_ping_frame_or_connection_close([0; 8]).await
}

/// 2/5: PRIORITY on a closed stream.
pub async fn c2_5(mut c: Conn) -> Verdict {
    get(&mut c).await?;
    c.verify_stream_close().await?;
    c.write_priority(1, 0, false, 255).await;
    c.write_ping(false, [0; 8]).await;
    c.verify_ping_frame_with_ack([0; 8]).await
}

/// 3.1/1: a POST with one DATA frame.
pub async fn c3_1_1(mut c: Conn) -> Verdict {
    post(&mut c).await?;
    c.write_data(1, true, b"test").await;
    c.verify_headers_frame(1).await
}

/// 3.1/2: a POST with two DATA frames.
pub async fn c3_1_2(mut c: Conn) -> Verdict {
    post(&mut c).await?;
    c.write_data(1, false, b"test").await;
    c.write_data(1, true, b"test").await;
    c.verify_headers_frame(1).await
}

/// 3.1/3: a POST with a padded DATA frame.
pub async fn c3_1_3(mut c: Conn) -> Verdict {
    post(&mut c).await?;
    c.write_data_padded(1, true, b"test", &[0; 5]).await;
    c.verify_headers_frame(1).await
}

/// 3.2/1: a HEADERS frame.
pub async fn c3_2_1(mut c: Conn) -> Verdict {
    get(&mut c).await?;
    c.verify_headers_frame(1).await
}

/// 3.2/2 and 3.2/3: a HEADERS frame with padding, or a priority.
async fn headers_with(mut c: Conn, priority: Option<(u32, bool, u8)>, pad: u8) -> Verdict {
    c.handshake().await?;
    let block = c.encode(&c.common_headers());
    c.write_headers_with(1, &block, priority, pad).await;
    c.verify_headers_frame(1).await
}

pub async fn c3_2_2(c: Conn) -> Verdict {
    headers_with(c, None, 8).await
}

pub async fn c3_2_3(c: Conn) -> Verdict {
    headers_with(c, Some((0, false, 255)), 0).await
}

/// 3.3/*: a PRIORITY frame for `stream`, then the GET on stream 1.
async fn priority_then_get(
    mut c: Conn,
    stream: u32,
    (dependency, exclusive, weight): (u32, bool, u8),
) -> Verdict {
    c.handshake().await?;
    c.write_priority(stream, dependency, exclusive, weight)
        .await;
    c.request(1, "GET", true).await;
    c.verify_headers_frame(1).await
}

/// 3.3/1: weight 1 (0 on the wire).
pub async fn c3_3_1(c: Conn) -> Verdict {
    priority_then_get(c, 1, (0, false, 0)).await
}

/// 3.3/2: weight 256.
pub async fn c3_3_2(c: Conn) -> Verdict {
    priority_then_get(c, 1, (0, false, 255)).await
}

/// 3.3/3: stream 3 depending on stream 1.
pub async fn c3_3_3(c: Conn) -> Verdict {
    priority_then_get(c, 3, (1, false, 0)).await
}

/// 3.3/4: exclusive.
pub async fn c3_3_4(c: Conn) -> Verdict {
    priority_then_get(c, 1, (0, true, 0)).await
}

/// 3.3/5: PRIORITY for idle stream 3, then HEADERS on lower stream 1.
pub async fn c3_3_5(c: Conn) -> Verdict {
    priority_then_get(c, 3, (0, false, 255)).await
}

/// 3.4/1: RST_STREAM on an open stream.
pub async fn c3_4_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.request(1, "GET", false).await;
    c.write_rst_stream(1, CANCEL).await;
    c.write_ping(false, [0; 8]).await;
    c.verify_ping_frame_or_connection_close([0; 8]).await
}

/// 3.5/1: SETTINGS with every defined parameter.
pub async fn c3_5_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.write_settings(&[
        (HEADER_TABLE_SIZE, 4096),
        (ENABLE_PUSH, 1),
        (MAX_CONCURRENT_STREAMS, 100),
        (INITIAL_WINDOW_SIZE, DEFAULT_WINDOW_SIZE),
        (MAX_FRAME_SIZE, DEFAULT_FRAME_SIZE as u32),
        (MAX_HEADER_LIST_SIZE, 100),
    ])
    .await;
    c.verify_settings_frame_with_ack().await
}

/// 3.7/1: PING.
pub async fn c3_7_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.write_ping(false, H2SPEC).await;
    c.verify_ping_frame_with_ack(H2SPEC).await
}

/// 3.8/1: GOAWAY from the client.
pub async fn c3_8_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.write_goaway(0, NO_ERROR, b"h2spec").await;
    c.write_ping(false, H2SPEC).await;
    c.verify_ping_frame_or_connection_close(H2SPEC).await
}

/// 3.9/1: WINDOW_UPDATE for the connection.
pub async fn c3_9_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.write_window_update(0, 1).await;
    c.write_ping(false, [0; 8]).await;
    c.verify_ping_frame_with_ack([0; 8]).await
}

/// 3.9/2: WINDOW_UPDATE for stream 1.
pub async fn c3_9_2(mut c: Conn) -> Verdict {
    get(&mut c).await?;
    c.write_window_update(1, 1).await;
    c.verify_headers_frame(1).await
}

/// 3.10/*: the GET's block cut at `cuts`, the pieces after the first in
/// CONTINUATION frames.
async fn continued(mut c: Conn, cuts: &[usize]) -> Verdict {
    c.handshake().await?;
    let block = c.encode(&c.common_headers());
    c.write_headers(1, true, false, &block[..cuts[0]]).await;
    for (i, &from) in cuts.iter().enumerate() {
        let to = cuts.get(i + 1).copied().unwrap_or(block.len());
        c.write_continuation(1, to == block.len(), &block[from..to])
            .await;
    }
    c.verify_headers_frame(1).await
}

/// 3.10/1: one CONTINUATION.
pub async fn c3_10_1(c: Conn) -> Verdict {
    continued(c, &[5]).await
}

/// 3.10/2: two CONTINUATION frames.
pub async fn c3_10_2(c: Conn) -> Verdict {
    continued(c, &[5, 10]).await
}

/// 4/1: GET.
pub async fn c4_1(c: Conn) -> Verdict {
    c3_2_1(c).await
}

/// 4/2: HEAD.
pub async fn c4_2(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.request(1, "HEAD", true).await;
    c.verify_headers_frame(1).await
}

/// 4/3: POST.
pub async fn c4_3(c: Conn) -> Verdict {
    c3_1_1(c).await
}

/// 4/4: POST with trailers.
pub async fn c4_4(mut c: Conn) -> Verdict {
    c.handshake().await?;
    let mut headers = c.common_headers();
    headers[0].1 = "POST".into();
    headers.push(field("trailer", "x-test"));
    let block = c.encode(&headers);
    c.write_headers(1, false, true, &block).await;
    c.write_data(1, false, b"test").await;
    let trailers = c.encode(&[field("x-test", "ok")]);
    c.write_headers(1, true, true, &trailers).await;
    c.verify_headers_frame(1).await
}

/// 5/*: the GET's block with `before` in front and `after` behind.
async fn hpack(mut c: Conn, before: &[u8], after: &[u8]) -> Verdict {
    c.handshake().await?;
    let mut block = before.to_vec();
    block.extend(c.encode(&c.common_headers()));
    block.extend_from_slice(after);
    c.write_headers(1, true, true, &block).await;
    c.verify_headers_frame(1).await
}

/// `user-agent: h2spec` and `x-test: h2spec` in the representations of
/// 5/2 to 5/13, as h2spec writes them (its descriptions of 5/2 and 5/3
/// are swapped).
const USER_AGENT: &[u8] = b"\x0auser-agent\x06h2spec";
const USER_AGENT_HUFFMAN: &[u8] = b"\x87\xb5\x05\xb1\x61\xcc\x5a\x93\x84\x9c\x48\xac\xa4";
const X_TEST: &[u8] = b"\x06x-test\x06h2spec";
const X_TEST_HUFFMAN: &[u8] = b"\x85\xf2\xb2\x4a\x84\xff\x84\x9c\x48\xac\xa4";

/// A representation: `first` (0x40 incremental indexing, 0x00 without
/// indexing, 0x10 never indexed), then a name and value.
async fn literal(c: Conn, first: u8, rest: &[u8]) -> Verdict {
    let mut rep = vec![first];
    rep.extend_from_slice(rest);
    hpack(c, &[], &rep).await
}

/// 5/1: an indexed field (static index 58, `user-agent`).
pub async fn c5_1(c: Conn) -> Verdict {
    hpack(c, &[], b"\xba").await
}

pub async fn c5_2(c: Conn) -> Verdict {
    literal(c, 0x40, USER_AGENT_HUFFMAN).await
}

pub async fn c5_3(c: Conn) -> Verdict {
    literal(c, 0x40, USER_AGENT).await
}

pub async fn c5_4(c: Conn) -> Verdict {
    literal(c, 0x40, X_TEST).await
}

pub async fn c5_5(c: Conn) -> Verdict {
    literal(c, 0x40, X_TEST_HUFFMAN).await
}

pub async fn c5_6(c: Conn) -> Verdict {
    literal(c, 0x00, USER_AGENT).await
}

pub async fn c5_7(c: Conn) -> Verdict {
    literal(c, 0x00, USER_AGENT_HUFFMAN).await
}

pub async fn c5_8(c: Conn) -> Verdict {
    literal(c, 0x00, X_TEST).await
}

pub async fn c5_9(c: Conn) -> Verdict {
    literal(c, 0x00, X_TEST_HUFFMAN).await
}

pub async fn c5_10(c: Conn) -> Verdict {
    literal(c, 0x10, USER_AGENT).await
}

pub async fn c5_11(c: Conn) -> Verdict {
    literal(c, 0x10, USER_AGENT_HUFFMAN).await
}

/// 5/12 and 5/13 (h2spec sends the same Huffman-coded bytes for both).
pub async fn c5_12(c: Conn) -> Verdict {
    literal(c, 0x10, X_TEST_HUFFMAN).await
}

pub async fn c5_13(c: Conn) -> Verdict {
    literal(c, 0x10, X_TEST_HUFFMAN).await
}

/// 5/14: a dynamic table size update (to 128).
pub async fn c5_14(c: Conn) -> Verdict {
    hpack(c, b"\x3f\x61", &[]).await
}

/// 5/15: two dynamic table size updates (128, then 4,096).
pub async fn c5_15(c: Conn) -> Verdict {
    hpack(c, b"\x3f\x61\x3f\xe1\x1f", &[]).await
}

mod h2c {
    cases!(H2c: c1_1, c2_1, c2_2, c2_3, c2_4, c2_5, c3_1_1, c3_1_2, c3_1_3, c3_2_1, c3_2_2,
        c3_2_3, c3_3_1, c3_3_2, c3_3_3, c3_3_4, c3_3_5, c3_4_1, c3_5_1, c3_7_1, c3_8_1, c3_9_1,
        c3_9_2, c3_10_1, c3_10_2, c4_1, c4_2, c4_3, c4_4, c5_1, c5_2, c5_3, c5_4, c5_5, c5_6,
        c5_7, c5_8, c5_9, c5_10, c5_11, c5_12, c5_13, c5_14, c5_15);
}

/// The cases that send a request body, on `/refuse`.
mod refuse {
    cases!(Refuse: c3_1_1, c3_1_2, c3_1_3, c4_3, c4_4);
}

mod tls {
    cases!(Tls: c1_1, c2_1, c2_2, c2_3, c2_4, c2_5, c3_1_1, c3_1_2, c3_1_3, c3_2_1, c3_2_2,
        c3_2_3, c3_3_1, c3_3_2, c3_3_3, c3_3_4, c3_3_5, c3_4_1, c3_5_1, c3_7_1, c3_8_1, c3_9_1,
        c3_9_2, c3_10_1, c3_10_2, c4_1, c4_2, c4_3, c4_4, c5_1, c5_2, c5_3, c5_4, c5_5, c5_6,
        c5_7, c5_8, c5_9, c5_10, c5_11, c5_12, c5_13, c5_14, c5_15);
}
