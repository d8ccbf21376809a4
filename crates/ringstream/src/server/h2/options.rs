//! [`Http2Options`]: HTTP/2's own limits, beside the [`Config`](super::super::Config)
//! fields both versions share.

use std::time::Duration;

/// How the server speaks HTTP/2 (feature `http2`, on by default): over TLS
/// when the client offers `h2` by ALPN, and over plain TCP when a
/// connection starts with the HTTP/2 preface (`h2c` with prior
/// knowledge); every other connection speaks HTTP/1.1.
///
/// The limits shared with HTTP/1.1 come from [`Config`](super::super::Config):
/// [`Limits::max_head_len`](ringstream_core::Limits::max_head_len) caps a
/// request's header list (HPACK-decoded), `max_body_len` its body, and the
/// head, idle, body-read and write timeouts apply per stream or per
/// connection as their names say. An HTTP/2 connection counts once under
/// [`max_connections`](super::super::Config::max_connections); its streams
/// count under [`max_concurrent_streams`](Self::max_concurrent_streams).
///
/// Memory per connection is bounded by the windows: a stream's request
/// body buffers at most [`stream_window`](Self::stream_window) bytes the
/// service has not read (the window is given back only as the service
/// reads), all streams together at most
/// [`connection_window`](Self::connection_window); a response body is
/// handed to the connection only as the client's window allows, so a
/// client that stops reading holds at most one window of it.
///
/// # Examples
///
/// ```
/// use ringstream::server::{Config, Http2Options};
///
/// // HTTP/1.1 only.
/// let h1_only = Config { http2: Http2Options { enabled: false, ..Http2Options::default() }, ..Config::default() };
/// assert!(!h1_only.http2.enabled);
/// assert_eq!(Http2Options::default().max_concurrent_streams, 100);
/// ```
#[derive(Debug, Clone)]
pub struct Http2Options {
    /// Speak HTTP/2 at all. Default true (with the `http2` feature; without
    /// it the server speaks HTTP/1.1 whatever this says).
    pub enabled: bool,
    /// Streams a client may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS);
    /// a client that opens more has them refused. Default 100.
    pub max_concurrent_streams: u32,
    /// The flow-control window of each stream's request body, in bytes:
    /// what a client may send ahead of the service's reads. Default 256 KiB.
    pub stream_window: u32,
    /// The flow-control window of the whole connection, in bytes. Default
    /// 1 MiB.
    pub connection_window: u32,
    /// The largest frame payload the server accepts, in bytes (16 KiB to
    /// 16 MiB − 1). Default 16 KiB.
    pub max_frame_size: u32,
    /// Streams reset by the client before the server accepted them that
    /// may be pending at once; more is a rapid-reset flood (CVE-2023-44487),
    /// answered with GOAWAY `ENHANCE_YOUR_CALM`. Default 20.
    pub max_pending_reset_streams: usize,
    /// Streams the server may reset because the client broke a rule,
    /// over the connection's life, before it sends GOAWAY
    /// `ENHANCE_YOUR_CALM`. Default 1,024.
    pub max_error_resets: usize,
    /// Streams the client may reset in a second while their service is
    /// working on them (each reset drops the service's future); more is
    /// a rapid-reset flood, answered with GOAWAY `ENHANCE_YOUR_CALM`.
    /// Default 200.
    pub max_client_resets: u32,
    /// Send a PING after this long without a frame from the client, and
    /// close the connection when it is not answered within the same
    /// time. Default 20 s; `None` turns it off.
    pub keep_alive_interval: Option<Duration>,
}

impl Default for Http2Options {
    fn default() -> Self {
        Http2Options {
            enabled: true,
            max_concurrent_streams: 100,
            stream_window: 256 * 1024,
            connection_window: 1024 * 1024,
            max_frame_size: 16 * 1024,
            max_pending_reset_streams: 20,
            max_error_resets: 1024,
            max_client_resets: 200,
            keep_alive_interval: Some(Duration::from_secs(20)),
        }
    }
}
