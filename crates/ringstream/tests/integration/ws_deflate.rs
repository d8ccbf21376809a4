//! permessage-deflate on the wire, without a socket: the handshake's
//! negotiation, compressed frames (RSV1 on the first frame only) through
//! the core's decoder into an `Inflater`, and the close codes a connection
//! fails with — 1009 for a zip bomb, 1007 for bad DEFLATE data or bad
//! UTF-8 inside a compressed text message.
#![cfg(feature = "deflate")]

use bytes::Bytes;
use ringstream::ws::{Deflater, Inflater, Role};
use ringstream_core::ws::{
    apply_mask, CloseCode, Decoder, DeflateConfig, DeflateParams, Error, Event, FrameHeader,
    Limits, MessageKind, OpCode, Utf8Validator,
};

/// What a connection's receiving side does with permessage-deflate: the
/// decoder allows RSV1; a compressed message's payload goes through the
/// inflater, and a compressed text message through a UTF-8 check.
struct Receiver {
    decoder: Decoder,
    inflater: Inflater,
    /// The message in progress: its kind, whether compressed, its data so
    /// far (uncompressed messages), and the UTF-8 state with the inflated
    /// bytes checked so far (compressed text).
    message: Option<(MessageKind, bool, Vec<u8>)>,
    utf8: Utf8Validator,
    checked: usize,
}

impl Receiver {
    fn new(params: &DeflateParams, role: Role, limits: Limits) -> Receiver {
        Receiver {
            decoder: Decoder::new(role, limits).with_rsv1(true),
            inflater: Inflater::new(params, role, limits.max_message_len),
            message: None,
            utf8: Utf8Validator::new(),
            checked: 0,
        }
    }

    /// Decodes all of `wire` into messages, or the error the connection is
    /// failed with.
    fn receive(&mut self, wire: &mut [u8]) -> Result<Vec<(MessageKind, Bytes)>, Error> {
        let mut messages = Vec::new();
        let mut input = wire;
        loop {
            let decoded = self.decoder.decode(input)?;
            let Some(event) = decoded.event else { break };
            match event {
                Event::MessageStart {
                    kind, compressed, ..
                } => {
                    self.message = Some((kind, compressed, Vec::new()));
                    self.checked = 0;
                }
                Event::Data(range) => {
                    let piece = &input[range];
                    match &mut self.message {
                        Some((kind, true, _)) => {
                            self.inflater.push(piece)?;
                            if *kind == MessageKind::Text {
                                let inflated = self.inflater.inflated();
                                self.utf8.feed(&inflated[self.checked..])?;
                                self.checked = inflated.len();
                            }
                        }
                        Some((_, false, data)) => data.extend_from_slice(piece),
                        None => unreachable!("data outside a message"),
                    }
                }
                Event::MessageEnd => match self.message.take() {
                    Some((kind, true, _)) => {
                        let data = self.inflater.finish()?;
                        if kind == MessageKind::Text {
                            self.utf8.feed(&data[self.checked..])?;
                            self.utf8.finish()?;
                        }
                        messages.push((kind, data));
                    }
                    Some((kind, false, data)) => messages.push((kind, Bytes::from(data))),
                    None => unreachable!("end outside a message"),
                },
                _ => {}
            }
            input = &mut input[decoded.consumed..];
        }
        Ok(messages)
    }
}

/// A client's frames: each piece of `fragments` in its own masked frame,
/// RSV1 on the first when `compressed`.
fn client_frames(kind: MessageKind, compressed: bool, fragments: &[&[u8]]) -> Vec<u8> {
    let mut wire = Vec::new();
    for (i, fragment) in fragments.iter().enumerate() {
        let opcode = if i == 0 {
            kind.opcode()
        } else {
            OpCode::Continuation
        };
        let key = [0x37, 0xfa, 0x21, i as u8];
        let head = FrameHeader::new(opcode, fragment.len() as u64)
            .with_fin(i + 1 == fragments.len())
            .with_rsv1(compressed && i == 0)
            .with_mask(key);
        wire.extend_from_slice(head.encode().as_ref());
        let mut payload = fragment.to_vec();
        apply_mask(&mut payload, key, 0);
        wire.extend_from_slice(&payload);
    }
    wire
}

/// The server's frame for one compressed message: unmasked, RSV1 set.
fn server_frame(kind: MessageKind, compressed: &[u8]) -> Vec<u8> {
    let head = FrameHeader::new(kind.opcode(), compressed.len() as u64).with_rsv1(true);
    [head.encode().as_ref(), compressed].concat()
}

fn negotiated(offer: &str) -> DeflateParams {
    DeflateConfig::DEFAULT
        .negotiate([offer.as_bytes()])
        .expect("offer accepted")
}

#[test]
fn a_browser_offer_is_answered_and_both_directions_round_trip() {
    // What browsers send, and the server's answer for its 101 response.
    let params = negotiated("permessage-deflate; client_max_window_bits");
    assert_eq!(
        params.to_header().as_str(),
        "permessage-deflate; server_no_context_takeover"
    );
    let limits = Limits {
        max_message_len: 1 << 20,
        max_frame_len: 1 << 20,
    };

    // Server to client.
    let mut deflater = Deflater::new(&params, Role::Server);
    let mut client = Receiver::new(&params, Role::Client, limits);
    let mut wire = Vec::new();
    let texts: Vec<String> = (0..50)
        .map(|i| format!("{{\"seq\":{i},\"msg\":\"héllo wörld\"}}"))
        .collect();
    for text in &texts {
        wire.extend(server_frame(
            MessageKind::Text,
            &deflater.compress(text.as_bytes()),
        ));
    }
    // An uncompressed message between them is fine (RSV1 clear).
    wire.extend(FrameHeader::new(OpCode::Binary, 3).encode().as_ref());
    wire.extend_from_slice(b"raw");
    let got = client.receive(&mut wire).unwrap();
    assert_eq!(got.len(), 51);
    for (text, (kind, data)) in texts.iter().zip(&got) {
        assert_eq!((*kind, &data[..]), (MessageKind::Text, text.as_bytes()));
    }
    assert_eq!(got[50], (MessageKind::Binary, Bytes::from_static(b"raw")));

    // Client to server, with context takeover, in fragments: RSV1 on the
    // first frame only.
    let mut deflater = Deflater::new(&params, Role::Client);
    assert!(!deflater.no_context_takeover());
    let mut server = Receiver::new(&params, Role::Server, limits);
    let payload: Vec<u8> = (0..200_000u32)
        .map(|i| (i % 251) as u8 ^ (i / 1000) as u8)
        .collect();
    for _ in 0..3 {
        let compressed = deflater.compress(&payload);
        let third = compressed.len() / 3;
        let fragments = [
            &compressed[..third],
            &compressed[third..third],
            &compressed[third..],
        ];
        let mut wire = client_frames(MessageKind::Binary, true, &fragments);
        let got = server.receive(&mut wire).unwrap();
        assert_eq!(
            got,
            vec![(MessageKind::Binary, Bytes::from(payload.clone()))]
        );
    }
}

#[test]
fn a_zip_bomb_fails_with_1009() {
    let params = negotiated("permessage-deflate");
    let limits = Limits {
        max_message_len: 1 << 20,
        max_frame_len: 1 << 20,
    };
    // 10 MiB of zeros: about 10 KiB on the wire, well under the frame and
    // message limits the decoder checks.
    let bomb = Deflater::new(&params, Role::Client).compress(&vec![0u8; 10 << 20]);
    assert!(bomb.len() < 20 << 10);
    let mut wire = client_frames(MessageKind::Binary, true, &[&bomb]);
    let mut server = Receiver::new(&params, Role::Server, limits);
    let error = server.receive(&mut wire).unwrap_err();
    assert_eq!(error, Error::MessageTooLarge);
    assert_eq!(error.close_code(), CloseCode::MESSAGE_TOO_BIG);
}

#[test]
fn bad_deflate_data_and_bad_compressed_text_fail_with_1007() {
    let params = negotiated("permessage-deflate");
    let limits = Limits::DEFAULT;

    let mut wire = client_frames(MessageKind::Binary, true, &[&[0xff, 0xff, 0xff]]);
    let error = Receiver::new(&params, Role::Server, limits)
        .receive(&mut wire)
        .unwrap_err();
    assert_eq!(error, Error::InvalidCompressedData);
    assert_eq!(error.close_code(), CloseCode::INVALID_PAYLOAD);

    // Valid DEFLATE, not valid UTF-8: the decoder does not look inside a
    // compressed message, the receiver must.
    let compressed = Deflater::new(&params, Role::Client).compress(b"caf\xc3");
    let mut wire = client_frames(MessageKind::Text, true, &[&compressed]);
    let error = Receiver::new(&params, Role::Server, limits)
        .receive(&mut wire)
        .unwrap_err();
    assert_eq!(error, Error::InvalidUtf8);
    assert_eq!(error.close_code(), CloseCode::INVALID_PAYLOAD);

    // RSV1 without the extension is a protocol error (1002).
    let mut wire = client_frames(MessageKind::Binary, true, &[&compressed]);
    let error = Decoder::server().decode(&mut wire).unwrap_err();
    assert_eq!(error, Error::ReservedBits);
    assert_eq!(error.close_code(), CloseCode::PROTOCOL_ERROR);
}
