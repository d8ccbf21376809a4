//! The shared wire-test helpers.
#![allow(unused_imports)]

pub use ringstream_testkit::*;

/// The whole body of an HTTP/2 response, its window given back as it is
/// read.
#[cfg(feature = "http2")]
#[allow(dead_code)] // The axum tests share this file and speak HTTP/1.1.
pub async fn h2_body(mut body: h2::RecvStream) -> Vec<u8> {
    let mut all = Vec::new();
    while let Some(data) = body.data().await {
        let data = data.unwrap();
        let _ = body.flow_control().release_capacity(data.len());
        all.extend_from_slice(&data);
    }
    all
}

/// An HTTP/2 frame: its 9-byte header, then `payload` (RFC 9113 §4.1).
#[cfg(feature = "http2")]
#[allow(dead_code)]
pub fn h2_frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len();
    let mut frame = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    frame.extend_from_slice(&stream.to_be_bytes());
    frame.extend_from_slice(payload);
    frame
}

/// An HPACK integer with an `n`-bit prefix whose other bits are `first`
/// (RFC 7541 §5.1).
#[cfg(feature = "http2")]
#[allow(dead_code)]
pub fn hpack_int(out: &mut Vec<u8>, first: u8, n: u32, mut value: usize) {
    let max = (1usize << n) - 1;
    if value < max {
        out.push(first | value as u8);
        return;
    }
    out.push(first | max as u8);
    value -= max;
    while value >= 128 {
        out.push((value % 128) as u8 | 0x80);
        value /= 128;
    }
    out.push(value as u8);
}

/// A header block of literal fields without indexing, no Huffman coding,
/// as written.
#[cfg(feature = "http2")]
#[allow(dead_code)]
pub fn literal_block<N: AsRef<str>, V: AsRef<str>>(fields: &[(N, V)]) -> Vec<u8> {
    let mut block = Vec::new();
    for (name, value) in fields {
        let (name, value) = (name.as_ref(), value.as_ref());
        block.push(0x00);
        hpack_int(&mut block, 0, 7, name.len());
        block.extend_from_slice(name.as_bytes());
        hpack_int(&mut block, 0, 7, value.len());
        block.extend_from_slice(value.as_bytes());
    }
    block
}
