//! h2spec's checks (`spec/verifier.go`), with its acceptance rules: each
//! reads events until one passes or the connection ends (closed, timed
//! out, failed), and fails then unless the end itself passes.
//!
//! - a connection error passes on a GOAWAY with one of the codes, or on
//!   the connection's close (a GOAWAY with another code is read past: a
//!   close after it still passes);
//! - a stream error passes as well on a RST_STREAM with one of the codes
//!   (on any stream);
//! - a stream close passes on DATA or HEADERS with END_STREAM, or a
//!   RST_STREAM with NO_ERROR (on any stream);
//! - the frame checks pass on the first frame of their type, if it is the
//!   one wanted.

use super::client::{Conn, Event, Frame, GOAWAY, HEADERS, NO_ERROR, PING, RST_STREAM, SETTINGS};
use super::client::{ACK, DATA, END_STREAM};

use super::client::Verdict;

/// What was read last, for the failure's message (h2spec's "actual").
fn describe(event: &Option<Event>) -> String {
    match event {
        Some(event) => format!("{event:?}"),
        None => "nothing".into(),
    }
}

/// h2spec keeps the first timeout, and any other event, as "actual".
fn note(actual: &mut Option<Event>, event: Event) {
    if !matches!(event, Event::Timeout) || actual.is_none() {
        *actual = Some(event);
    }
}

fn failure(expected: &str, actual: &Option<Event>) -> Verdict {
    Err(format!("expected {expected}; got {}", describe(actual)))
}

impl Conn {
    /// h2spec's `VerifyConnectionClose`.
    pub async fn verify_connection_close(&mut self) -> Verdict {
        let mut actual = None;
        while !self.closed {
            match self.wait_event().await {
                Event::Closed => return Ok(()),
                event => note(&mut actual, event),
            }
        }
        failure("connection closed", &actual)
    }

    /// h2spec's `VerifyConnectionError`: GOAWAY with one of `codes`, or
    /// the connection closed.
    pub async fn verify_connection_error(&mut self, codes: &[u32]) -> Verdict {
        self.verify_error(codes, false).await
    }

    /// h2spec's `VerifyStreamError`: RST_STREAM or GOAWAY with one of
    /// `codes`, or the connection closed.
    pub async fn verify_stream_error(&mut self, codes: &[u32]) -> Verdict {
        self.verify_error(codes, true).await
    }

    async fn verify_error(&mut self, codes: &[u32], stream: bool) -> Verdict {
        let mut actual = None;
        while !self.closed {
            let event = self.wait_event().await;
            let passed = match &event {
                Event::Closed => true,
                Event::Frame(f) if f.kind == GOAWAY || (stream && f.kind == RST_STREAM) => {
                    f.error_code().is_some_and(|c| codes.contains(&c))
                }
                _ => false,
            };
            if passed {
                return Ok(());
            }
            note(&mut actual, event);
        }
        let frames = if stream {
            "GOAWAY or RST_STREAM"
        } else {
            "GOAWAY"
        };
        failure(
            &format!("{frames} with error code in {codes:?}, or connection closed"),
            &actual,
        )
    }

    /// h2spec's `VerifyStreamClose`: a stream ended by the server.
    pub async fn verify_stream_close(&mut self) -> Verdict {
        let mut actual = None;
        while !self.closed {
            let event = self.wait_event().await;
            let passed = match &event {
                Event::Frame(f) if f.kind == DATA || f.kind == HEADERS => f.has(END_STREAM),
                Event::Frame(f) if f.kind == RST_STREAM => f.error_code() == Some(NO_ERROR),
                _ => false,
            };
            if passed {
                return Ok(());
            }
            note(&mut actual, event);
        }
        failure("stream closed", &actual)
    }

    /// The first frame of type `kind`, checked by `wanted`.
    pub async fn verify_first(
        &mut self,
        kind: u8,
        expected: &str,
        wanted: impl Fn(&Frame) -> bool,
    ) -> Verdict {
        match self.wait_event_by_type(kind).await {
            (Some(Event::Frame(frame)), true) if wanted(&frame) => Ok(()),
            (actual, _) => failure(expected, &actual),
        }
    }

    /// h2spec's `VerifyHeadersFrame`.
    pub async fn verify_headers_frame(&mut self, stream: u32) -> Verdict {
        let expected = format!("HEADERS frame (stream_id:{stream})");
        self.verify_first(HEADERS, &expected, |f| f.stream == stream)
            .await
    }

    /// h2spec's `VerifySettingsFrameWithAck`.
    pub async fn verify_settings_frame_with_ack(&mut self) -> Verdict {
        self.verify_first(SETTINGS, "SETTINGS frame with ACK", |f| f.has(ACK))
            .await
    }

    /// h2spec's `VerifyPingFrameWithAck`.
    pub async fn verify_ping_frame_with_ack(&mut self, data: [u8; 8]) -> Verdict {
        let expected = format!("PING frame with ACK and data {data:?}");
        self.verify_first(PING, &expected, |f| f.has(ACK) && f.payload == data)
            .await
    }

    /// h2spec's `VerifyPingFrameOrConnectionClose`.
    pub async fn verify_ping_frame_or_connection_close(&mut self, data: [u8; 8]) -> Verdict {
        let mut actual = None;
        while !self.closed {
            let event = self.wait_event().await;
            let passed = match &event {
                Event::Closed => true,
                Event::Frame(f) if f.kind == PING => f.has(ACK) && f.payload == data,
                _ => false,
            };
            if passed {
                return Ok(());
            }
            note(&mut actual, event);
        }
        failure("PING frame with ACK, or connection closed", &actual)
    }

    /// h2spec's `VerifyEventType`: a frame of type `kind` comes.
    pub async fn verify_event_type(&mut self, kind: u8) -> Verdict {
        self.verify_first(kind, &format!("a frame of type {kind}"), |_| true)
            .await
    }

    /// The first DATA frame has one octet (the flow-control cases of
    /// 6.5.3, 6.9.1 and 6.9.2).
    pub async fn verify_one_octet_data(&mut self) -> Verdict {
        self.verify_first(DATA, "DATA frame (length:1)", |f| f.payload.len() == 1)
            .await
    }
}
