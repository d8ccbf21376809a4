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
