//! h2spec's `http2/6.5`–`6.9`, RFC 7540's connection-level frames: 6.5
//! SETTINGS (6.5.2 defined parameters, 6.5.3 synchronization), 6.7 PING,
//! 6.8 GOAWAY, 6.9 WINDOW_UPDATE (6.9.1 the flow-control window, 6.9.2
//! the initial window size). `cN_M` is `http2/N/M` (`c6_9_2_3` is
//! `http2/6.9.2/3`). Over h2c, and over TLS for a few.

use super::client::{Conn, Verdict, ENABLE_PUSH, FLOW_CONTROL_ERROR, FRAME_SIZE_ERROR};
use super::client::{
    Frame, DATA, GOAWAY, INITIAL_WINDOW_SIZE, MAX_FRAME_SIZE, PROTOCOL_ERROR, RST_STREAM,
};
use super::server_data_length;

const H2SPEC: [u8; 8] = *b"h2spec\0\0";

/// h2spec skips a flow-control case when `GET` of the path brings fewer
/// than `min` octets; this server's brings more, so a skip fails here.
async fn needs_data(c: &Conn, min: usize) -> Verdict {
    match server_data_length(c).await {
        Some(len) if len >= min => Ok(()),
        len => Err(format!("h2spec would skip: GET brought {len:?} octets")),
    }
}

/// SETTINGS with `settings`, and the server's ACK of them.
async fn settle(c: &mut Conn, settings: &[(u16, u32)]) -> Verdict {
    c.write_settings(settings).await;
    c.verify_settings_frame_with_ack().await
}

/// The common GET on stream 1, whole.
async fn get(c: &mut Conn) {
    c.request(1, "GET", true).await;
}

/// 6.5/1: SETTINGS with ACK and a payload.
pub async fn c6_5_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.send(b"\x00\x00\x01\x04\x01\x00\x00\x00\x00").await;
    c.send(b"\x00").await;
    c.verify_connection_error(&[FRAME_SIZE_ERROR]).await
}

/// 6.5/2: SETTINGS on stream 1.
pub async fn c6_5_2(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.send(b"\x00\x00\x06\x04\x00\x00\x00\x00\x01").await;
    c.send(b"\x00\x03\x00\x00\x00\x64").await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 6.5/3: SETTINGS of 3 octets.
pub async fn c6_5_3(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.send(b"\x00\x00\x03\x04\x00\x00\x00\x00\x00").await;
    c.send(b"\x00\x03\x00").await;
    c.verify_stream_error(&[PROTOCOL_ERROR, FRAME_SIZE_ERROR])
        .await
}

/// 6.5.2/*: SETTINGS with one bad value: a connection error `code`.
async fn bad_setting(mut c: Conn, setting: (u16, u32), code: u32) -> Verdict {
    c.handshake().await?;
    c.write_settings(&[setting]).await;
    c.verify_connection_error(&[code]).await
}

/// 6.5.2/1: SETTINGS_ENABLE_PUSH 2.
pub async fn c6_5_2_1(c: Conn) -> Verdict {
    bad_setting(c, (ENABLE_PUSH, 2), PROTOCOL_ERROR).await
}

/// 6.5.2/2: SETTINGS_INITIAL_WINDOW_SIZE 2^31.
pub async fn c6_5_2_2(c: Conn) -> Verdict {
    bad_setting(c, (INITIAL_WINDOW_SIZE, 1 << 31), FLOW_CONTROL_ERROR).await
}

/// 6.5.2/3: SETTINGS_MAX_FRAME_SIZE 16,383.
pub async fn c6_5_2_3(c: Conn) -> Verdict {
    bad_setting(c, (MAX_FRAME_SIZE, 16_383), PROTOCOL_ERROR).await
}

/// 6.5.2/4: SETTINGS_MAX_FRAME_SIZE 2^24.
pub async fn c6_5_2_4(c: Conn) -> Verdict {
    bad_setting(c, (MAX_FRAME_SIZE, 1 << 24), PROTOCOL_ERROR).await
}

/// 6.5.2/5: an unknown setting is ignored.
pub async fn c6_5_2_5(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.write_settings(&[(0xff, 1)]).await;
    c.write_ping(false, [0; 8]).await;
    c.verify_ping_frame_with_ack([0; 8]).await
}

/// 6.5.3/1: of two values of SETTINGS_INITIAL_WINDOW_SIZE the last
/// counts (1: the first DATA has one octet).
pub async fn c6_5_3_1(mut c: Conn) -> Verdict {
    needs_data(&c, 1).await?;
    c.handshake().await?;
    settle(
        &mut c,
        &[(INITIAL_WINDOW_SIZE, 100), (INITIAL_WINDOW_SIZE, 1)],
    )
    .await?;
    get(&mut c).await;
    c.verify_one_octet_data().await
}

/// 6.5.3/2: SETTINGS is acknowledged.
pub async fn c6_5_3_2(mut c: Conn) -> Verdict {
    c.handshake().await?;
    settle(&mut c, &[(ENABLE_PUSH, 0)]).await
}

/// 6.7/1: PING.
pub async fn c6_7_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.write_ping(false, H2SPEC).await;
    c.verify_ping_frame_with_ack(H2SPEC).await
}

/// 6.7/2: a PING with ACK is not answered (the next PING is).
pub async fn c6_7_2(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.write_ping(true, *b"invalid\0").await;
    c.write_ping(false, H2SPEC).await;
    c.verify_ping_frame_with_ack(H2SPEC).await
}

/// 6.7/3: PING on stream 1.
pub async fn c6_7_3(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.send(b"\x00\x00\x08\x06\x00\x00\x00\x00\x01").await;
    c.send(&[0; 8]).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 6.7/4: PING of 6 octets.
pub async fn c6_7_4(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.send(b"\x00\x00\x06\x06\x00\x00\x00\x00\x00").await;
    c.send(&[0; 6]).await;
    c.verify_connection_error(&[FRAME_SIZE_ERROR]).await
}

/// 6.8/1: GOAWAY on stream 1.
pub async fn c6_8_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.send(b"\x00\x00\x08\x07\x00\x00\x00\x00\x01").await;
    c.send(&[0; 8]).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 6.9/1: WINDOW_UPDATE of 0 for the connection.
pub async fn c6_9_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.write_window_update(0, 0).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

/// 6.9/2: WINDOW_UPDATE of 0 for a stream.
pub async fn c6_9_2(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.request(1, "GET", false).await;
    c.write_window_update(1, 0).await;
    c.verify_stream_error(&[PROTOCOL_ERROR]).await
}

/// 6.9/3: WINDOW_UPDATE of 3 octets.
pub async fn c6_9_3(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.send(b"\x00\x00\x03\x08\x00\x00\x00\x00\x00").await;
    c.send(b"\x00\x00\x01").await;
    c.verify_connection_error(&[FRAME_SIZE_ERROR]).await
}

/// 6.9.1/1: an initial window of 1: the first DATA has one octet.
pub async fn c6_9_1_1(mut c: Conn) -> Verdict {
    needs_data(&c, 1).await?;
    c.handshake().await?;
    settle(&mut c, &[(INITIAL_WINDOW_SIZE, 1)]).await?;
    get(&mut c).await;
    c.verify_one_octet_data().await
}

/// 6.9.1/2: the connection's window above 2^31 − 1: the first GOAWAY
/// says FLOW_CONTROL_ERROR.
pub async fn c6_9_1_2(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.write_window_update(0, (1 << 31) - 1).await;
    c.write_window_update(0, (1 << 31) - 1).await;
    let expected = "GOAWAY (FLOW_CONTROL_ERROR)";
    let wanted = |f: &Frame| f.error_code() == Some(FLOW_CONTROL_ERROR);
    c.verify_first(GOAWAY, expected, wanted).await
}

/// 6.9.1/3: a stream's window above 2^31 − 1: the first RST_STREAM is
/// the stream's, FLOW_CONTROL_ERROR.
pub async fn c6_9_1_3(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.request(1, "GET", false).await;
    c.write_window_update(1, (1 << 31) - 1).await;
    c.write_window_update(1, (1 << 31) - 1).await;
    let expected = "RST_STREAM (stream_id:1, FLOW_CONTROL_ERROR)";
    let wanted = |f: &Frame| f.stream == 1 && f.error_code() == Some(FLOW_CONTROL_ERROR);
    c.verify_first(RST_STREAM, expected, wanted).await
}

/// 6.9.2/1: SETTINGS_INITIAL_WINDOW_SIZE raised from 0 to 1 after the
/// request: one octet of DATA goes.
pub async fn c6_9_2_1(mut c: Conn) -> Verdict {
    needs_data(&c, 1).await?;
    c.handshake().await?;
    settle(&mut c, &[(INITIAL_WINDOW_SIZE, 0)]).await?;
    get(&mut c).await;
    c.write_settings(&[(INITIAL_WINDOW_SIZE, 1)]).await;
    c.verify_one_octet_data().await
}

/// 6.9.2/2: a window made negative by SETTINGS (3 used, then 2), then
/// given 2: one octet of DATA goes.
pub async fn c6_9_2_2(mut c: Conn) -> Verdict {
    needs_data(&c, 5).await?;
    c.handshake().await?;
    settle(&mut c, &[(INITIAL_WINDOW_SIZE, 3)]).await?;
    get(&mut c).await;
    c.verify_event_type(DATA).await?;
    settle(&mut c, &[(INITIAL_WINDOW_SIZE, 2)]).await?;
    c.write_window_update(1, 2).await;
    c.verify_one_octet_data().await
}

/// 6.9.2/3: SETTINGS_INITIAL_WINDOW_SIZE 2^31 (written raw).
pub async fn c6_9_2_3(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.send(b"\x00\x00\x06\x04\x00\x00\x00\x00\x00").await;
    c.send(b"\x00\x04\x80\x00\x00\x00").await;
    c.verify_connection_error(&[FLOW_CONTROL_ERROR]).await
}

mod h2c {
    cases!(H2c: c6_5_1, c6_5_2, c6_5_3, c6_5_2_1, c6_5_2_2, c6_5_2_3, c6_5_2_4, c6_5_2_5,
        c6_5_3_1, c6_5_3_2, c6_7_1, c6_7_2, c6_7_3, c6_7_4, c6_8_1, c6_9_1, c6_9_2, c6_9_3,
        c6_9_1_1, c6_9_1_2, c6_9_1_3, c6_9_2_1, c6_9_2_2, c6_9_2_3);
}

mod tls {
    cases!(Tls: c6_5_3_1, c6_7_4, c6_9_1_2, c6_9_1_3, c6_9_2_2);
}
