//! h2spec's `http2/7` and `http2/8*`: 7 error codes, 8.1 the
//! request/response exchange (8.1.2 header fields, 8.1.2.1 pseudo-header
//! fields, 8.1.2.2 connection-specific fields, 8.1.2.3 request
//! pseudo-header fields, 8.1.2.6 malformed requests), 8.2 server push.
//! `cN_M` is `http2/N/M` (`c8_1_2_3_7` is `http2/8.1.2.3/7`). Over h2c,
//! on `/refuse` (the cases with a request body), and over TLS for a few.

use super::client::{field, Conn, Fields, Verdict, PROTOCOL_ERROR};

const H2SPEC: [u8; 8] = *b"h2spec\0\0";

/// A request head of `fields` on stream 1, whole: a stream error
/// PROTOCOL_ERROR.
async fn malformed(mut c: Conn, fields: impl FnOnce(Fields) -> Fields) -> Verdict {
    c.handshake().await?;
    let headers = fields(c.common_headers());
    let block = c.encode(&headers);
    c.write_headers(1, true, true, &block).await;
    c.verify_stream_error(&[PROTOCOL_ERROR]).await
}

/// The common head with `extra` fields behind it.
fn with<'a>(extra: &'a [(&'a str, &'a str)]) -> impl FnOnce(Fields) -> Fields + 'a {
    move |mut headers| {
        headers.extend(extra.iter().map(|(n, v)| field(n, v)));
        headers
    }
}

/// A POST on stream 1 with `extra` fields, then DATA "test" (without
/// END_STREAM).
async fn post_with_data(c: &mut Conn, extra: &[(&str, &str)]) -> Verdict {
    c.handshake().await?;
    let mut headers = c.common_headers();
    headers[0].1 = "POST".into();
    headers.extend(extra.iter().map(|(n, v)| field(n, v)));
    let block = c.encode(&headers);
    c.write_headers(1, false, true, &block).await;
    c.write_data(1, false, b"test").await;
    Ok(())
}

/// 7/1: GOAWAY with an unknown error code.
pub async fn c7_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.write_goaway(0, 0xff, &[]).await;
    c.write_ping(false, H2SPEC).await;
    c.verify_ping_frame_or_connection_close(H2SPEC).await
}

/// 7/2: RST_STREAM with an unknown error code.
pub async fn c7_2(mut c: Conn) -> Verdict {
    c.handshake().await?;
    c.request(1, "POST", false).await;
    c.write_rst_stream(1, 0xff).await;
    c.write_ping(false, [0; 8]).await;
    c.verify_ping_frame_or_connection_close([0; 8]).await
}

/// 8.1/1 and 8.1.2.1/3: a second HEADERS without END_STREAM (the
/// trailers `trailers`).
async fn trailers_without_end_stream(mut c: Conn, trailers: &[(&str, &str)]) -> Verdict {
    post_with_data(&mut c, &[]).await?;
    let fields: Fields = trailers.iter().map(|(n, v)| field(n, v)).collect();
    let block = c.encode(&fields);
    c.write_headers(1, false, true, &block).await;
    c.verify_stream_error(&[PROTOCOL_ERROR]).await
}

pub async fn c8_1_1(c: Conn) -> Verdict {
    trailers_without_end_stream(c, &[("x-test", "ok")]).await
}

/// 8.1.2/1: a field name in upper case.
pub async fn c8_1_2_1(c: Conn) -> Verdict {
    malformed(c, with(&[("X-TEST", "ok")])).await
}

/// 8.1.2.1/1: an unknown pseudo-header field.
pub async fn c8_1_2_1_1(c: Conn) -> Verdict {
    malformed(c, with(&[(":test", "ok")])).await
}

/// 8.1.2.1/2: a response pseudo-header field in a request.
pub async fn c8_1_2_1_2(c: Conn) -> Verdict {
    malformed(c, with(&[(":status", "200")])).await
}

/// 8.1.2.1/3: a pseudo-header field in trailers.
pub async fn c8_1_2_1_3(c: Conn) -> Verdict {
    trailers_without_end_stream(c, &[(":method", "POST")]).await
}

/// 8.1.2.1/4: a pseudo-header field after a regular one.
pub async fn c8_1_2_1_4(c: Conn) -> Verdict {
    malformed(c, |common| {
        let mut headers = vec![field("x-test", "ok")];
        headers.extend(common);
        headers
    })
    .await
}

/// 8.1.2.2/1: a connection-specific field.
pub async fn c8_1_2_2_1(c: Conn) -> Verdict {
    malformed(c, with(&[("connection", "keep-alive")])).await
}

/// 8.1.2.2/2: TE other than "trailers".
pub async fn c8_1_2_2_2(c: Conn) -> Verdict {
    malformed(
        c,
        with(&[("trailers", "test"), ("te", "trailers, deflate")]),
    )
    .await
}

/// 8.1.2.3/1: an empty `:path`.
pub async fn c8_1_2_3_1(c: Conn) -> Verdict {
    malformed(c, |mut headers| {
        headers[2].1.clear();
        headers
    })
    .await
}

/// 8.1.2.3/2 to 4: the common head without its field `at` (`:method`,
/// `:scheme`, `:path`).
async fn without(c: Conn, at: usize) -> Verdict {
    malformed(c, |mut headers| {
        headers.remove(at);
        headers
    })
    .await
}

pub async fn c8_1_2_3_2(c: Conn) -> Verdict {
    without(c, 0).await
}

pub async fn c8_1_2_3_3(c: Conn) -> Verdict {
    without(c, 1).await
}

pub async fn c8_1_2_3_4(c: Conn) -> Verdict {
    without(c, 2).await
}

/// 8.1.2.3/5 to 7: the common head with its field `at` twice.
async fn twice(c: Conn, at: usize) -> Verdict {
    malformed(c, |mut headers| {
        headers.push(headers[at].clone());
        headers
    })
    .await
}

pub async fn c8_1_2_3_5(c: Conn) -> Verdict {
    twice(c, 0).await
}

pub async fn c8_1_2_3_6(c: Conn) -> Verdict {
    twice(c, 1).await
}

pub async fn c8_1_2_3_7(c: Conn) -> Verdict {
    twice(c, 2).await
}

/// 8.1.2.6/1: `content-length: 1` and 4 octets of DATA.
pub async fn c8_1_2_6_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    let mut headers = c.common_headers();
    headers[0].1 = "POST".into();
    headers.push(field("content-length", "1"));
    let block = c.encode(&headers);
    c.write_headers(1, false, true, &block).await;
    c.write_data(1, true, b"test").await;
    c.verify_stream_error(&[PROTOCOL_ERROR]).await
}

/// 8.1.2.6/2: `content-length: 1` and two DATA frames of 4 octets.
pub async fn c8_1_2_6_2(mut c: Conn) -> Verdict {
    post_with_data(&mut c, &[("content-length", "1")]).await?;
    c.write_data(1, true, b"test").await;
    c.verify_stream_error(&[PROTOCOL_ERROR]).await
}

/// 8.2/1: PUSH_PROMISE from the client.
pub async fn c8_2_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    let block = c.encode(&c.common_headers());
    c.write_push_promise(1, 3, &block).await;
    c.verify_connection_error(&[PROTOCOL_ERROR]).await
}

mod h2c {
    cases!(H2c: c7_1, c7_2, c8_1_1, c8_1_2_1, c8_1_2_1_1, c8_1_2_1_2, c8_1_2_1_3, c8_1_2_1_4,
        c8_1_2_2_1, c8_1_2_2_2, c8_1_2_3_1, c8_1_2_3_2, c8_1_2_3_3, c8_1_2_3_4, c8_1_2_3_5,
        c8_1_2_3_6, c8_1_2_3_7, c8_1_2_6_1, c8_1_2_6_2, c8_2_1);
}

/// The cases that send a request body, on `/refuse`.
mod refuse {
    cases!(Refuse: c7_2, c8_1_1, c8_1_2_1_3, c8_1_2_6_1, c8_1_2_6_2);
}

mod tls {
    cases!(Tls: c8_1_1, c8_1_2_1_1, c8_1_2_3_1, c8_1_2_6_2, c8_2_1);
}
