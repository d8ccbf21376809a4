//! The WebSocket codec through the public API: the examples of RFC 6455
//! §5.7, every protocol violation with its close code, UTF-8 split across
//! fragments, the handshake, and property tests that encode random messages
//! and decode them back whatever the fragmentation, masking and input
//! splits. Every wire vector is fed whole, one byte at a time, and split at
//! every offset, and must decode the same way.

use proptest::prelude::*;
use ringstream_core::ws::{
    accept, accept_key, apply_mask, check_key, check_version, message_head, CloseCode,
    ClosePayload, ControlFrame, Decoder, Error, Event, FrameHeader, Limits, MessageKind, OpCode,
    Role, Utf8Validator, MAX_CONTROL_FRAME_LEN,
};

// ---------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------

/// What a connection makes of the events: whole messages and control
/// frames, in the order they complete.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Message {
        kind: MessageKind,
        compressed: bool,
        data: Vec<u8>,
    },
    Ping(Vec<u8>),
    Pong(Vec<u8>),
    Close(Option<(u16, String)>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    items: Vec<Item>,
    /// Ok while no violation was found, else the first error.
    result: Result<(), Error>,
    /// Bytes fed but not consumed (part of a head or of a control frame);
    /// empty after an error.
    pending: Vec<u8>,
    /// A data message had started and not ended.
    in_message: bool,
}

/// Feeds `wire` to `decoder` in the pieces cut at `cuts` (ascending) the
/// way a connection would: append to a buffer, decode until there is no
/// event, drop what was consumed. Checks the invariants of every result.
fn run(decoder: &Decoder, wire: &[u8], cuts: &[usize]) -> Outcome {
    run_with(decoder, wire, cuts, false)
}

/// An outcome as the fast path must reproduce it: a violation inside a
/// one-frame message is found before the message is said to start, so
/// `in_message` only counts when there was none.
fn fast_view(mut outcome: Outcome) -> Outcome {
    if outcome.result.is_err() {
        outcome.in_message = false;
    }
    outcome
}

/// [`run`], trying [`Decoder::decode_whole`] first between messages when
/// `fast` (as the async socket does): the outcome must be the same.
fn run_with(decoder: &Decoder, wire: &[u8], cuts: &[usize], fast: bool) -> Outcome {
    let mut decoder = decoder.clone();
    let mut buf: Vec<u8> = Vec::new();
    let mut items = Vec::new();
    let mut current: Option<(MessageKind, bool, Option<u64>, Vec<u8>)> = None;
    let mut start = 0;
    for &cut in cuts.iter().chain([wire.len()].iter()) {
        buf.extend_from_slice(&wire[start..cut]);
        start = cut;
        loop {
            if fast && current.is_none() {
                // An error here sticks: `decode` below reports it.
                if let Ok(Some(whole)) = decoder.decode_whole(&mut buf) {
                    assert!(whole.payload.start <= whole.payload.end);
                    assert!(whole.payload.end == whole.consumed && whole.consumed <= buf.len());
                    assert!(!decoder.in_message());
                    let data = buf[whole.payload].to_vec();
                    if whole.kind == MessageKind::Text {
                        assert!(std::str::from_utf8(&data).is_ok());
                    }
                    items.push(Item::Message {
                        kind: whole.kind,
                        compressed: false,
                        data,
                    });
                    buf.drain(..whole.consumed);
                    continue;
                }
            }
            let decoded = match decoder.decode(&mut buf) {
                Ok(decoded) => decoded,
                Err(e) => {
                    assert_eq!(
                        decoder.decode(&mut buf),
                        Err(e),
                        "a failed decoder stays failed"
                    );
                    assert_eq!(decoder.error(), Some(e));
                    assert_eq!(decoder.finish_eof(), Err(e));
                    return Outcome {
                        items,
                        result: Err(e),
                        pending: Vec::new(),
                        in_message: current.is_some(),
                    };
                }
            };
            assert!(decoded.consumed <= buf.len());
            let consumed = decoded.consumed;
            let within = |r: &std::ops::Range<usize>| {
                assert!(
                    r.start <= r.end && r.end <= consumed,
                    "{r:?} within {consumed}"
                );
            };
            let Some(event) = decoded.event else {
                buf.drain(..decoded.consumed);
                break;
            };
            match event {
                Event::MessageStart {
                    kind,
                    compressed,
                    len,
                } => {
                    assert!(current.is_none(), "a message starts inside another");
                    assert!(decoder.in_message());
                    current = Some((kind, compressed, len, Vec::new()));
                }
                Event::Data(r) => {
                    within(&r);
                    assert!(!r.is_empty(), "empty data event");
                    let message = current.as_mut().expect("data outside a message");
                    message.3.extend_from_slice(&buf[r]);
                }
                Event::MessageEnd => {
                    let (kind, compressed, len, data) =
                        current.take().expect("end outside a message");
                    if let Some(len) = len {
                        assert_eq!(len, data.len() as u64);
                    }
                    if kind == MessageKind::Text && !compressed {
                        assert!(std::str::from_utf8(&data).is_ok());
                    }
                    items.push(Item::Message {
                        kind,
                        compressed,
                        data,
                    });
                }
                Event::Ping(r) => {
                    within(&r);
                    assert!(r.len() <= 125);
                    items.push(Item::Ping(buf[r].to_vec()));
                }
                Event::Pong(r) => {
                    within(&r);
                    assert!(r.len() <= 125);
                    items.push(Item::Pong(buf[r].to_vec()));
                }
                Event::Close { code, reason } => {
                    within(&reason);
                    assert!(decoder.is_closed());
                    if code.is_none() {
                        assert!(reason.is_empty());
                    }
                    let reason = String::from_utf8(buf[reason].to_vec()).expect("utf-8 reason");
                    items.push(Item::Close(code.map(|c| (c.as_u16(), reason))));
                    current = None;
                }
            }
            buf.drain(..decoded.consumed);
        }
    }
    Outcome {
        items,
        result: Ok(()),
        pending: buf,
        in_message: current.is_some(),
    }
}

/// Decodes `wire` whole, one byte at a time, and split at every offset;
/// all must agree. Returns the outcome.
fn every_split(decoder: &Decoder, wire: &[u8]) -> Outcome {
    let whole = run(decoder, wire, &[]);
    let bytewise: Vec<usize> = (1..wire.len()).collect();
    assert_eq!(run(decoder, wire, &bytewise), whole, "byte at a time");
    for cut in 1..wire.len() {
        assert_eq!(run(decoder, wire, &[cut]), whole, "split at {cut}");
    }
    whole
}

/// Like [`every_split`], for long wires: whole, byte at a time, and cut
/// into pieces of a few sizes.
fn some_splits(decoder: &Decoder, wire: &[u8]) -> Outcome {
    let whole = run(decoder, wire, &[]);
    for step in [1, 3, 7, 100, 4096] {
        let cuts: Vec<usize> = (step..wire.len()).step_by(step).collect();
        assert_eq!(run(decoder, wire, &cuts), whole, "pieces of {step}");
    }
    for cut in [1, 2, 3, 4, 5, 9, 10, 13, 14, 15] {
        if cut < wire.len() {
            assert_eq!(run(decoder, wire, &[cut]), whole, "split at {cut}");
        }
    }
    whole
}

/// The masking key of the examples of RFC 6455 §5.7.
const KEY: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

/// A frame built byte by byte (so any first byte can be sent): `b0` is
/// FIN, RSV and the opcode; the length takes its shortest form; with a
/// key, the mask bit is set and the payload masked.
fn raw(b0: u8, payload: &[u8], key: Option<[u8; 4]>) -> Vec<u8> {
    let mask_bit = if key.is_some() { 0x80 } else { 0 };
    let mut out = vec![b0];
    match payload.len() {
        n @ 0..=125 => out.push(mask_bit | n as u8),
        n @ 126..=0xFFFF => {
            out.push(mask_bit | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(mask_bit | 127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    let start = match key {
        Some(key) => {
            out.extend_from_slice(&key);
            out.len()
        }
        None => out.len(),
    };
    out.extend_from_slice(payload);
    if let Some(key) = key {
        apply_mask(&mut out[start..], key, 0);
    }
    out
}

/// A client's frame, masked with [`KEY`].
fn masked(b0: u8, payload: &[u8]) -> Vec<u8> {
    raw(b0, payload, Some(KEY))
}

fn concat(frames: &[Vec<u8>]) -> Vec<u8> {
    frames.concat()
}

fn text(data: &str) -> Item {
    Item::Message {
        kind: MessageKind::Text,
        compressed: false,
        data: data.as_bytes().to_vec(),
    }
}

fn binary(data: &[u8]) -> Item {
    Item::Message {
        kind: MessageKind::Binary,
        compressed: false,
        data: data.to_vec(),
    }
}

/// Asserts that `wire`, at every split, fails with `error` and close code
/// `code`, having completed `items` first.
fn fails(decoder: &Decoder, wire: &[u8], error: Error, code: u16, items: &[Item]) {
    let outcome = every_split(decoder, wire);
    assert_eq!(outcome.result, Err(error), "{wire:x?}");
    assert_eq!(error.close_code().as_u16(), code);
    assert_eq!(outcome.items, items);
}

// ---------------------------------------------------------------------------
// RFC 6455 §5.7 examples
// ---------------------------------------------------------------------------

#[test]
fn rfc_single_frame_unmasked_text() {
    let wire = [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f];
    let outcome = every_split(&Decoder::client(), &wire);
    assert_eq!(outcome.items, [text("Hello")]);
    assert_eq!(outcome.result, Ok(()));
    assert_eq!(message_head(MessageKind::Text, 5).as_bytes(), &wire[..2]);
}

#[test]
fn rfc_single_frame_masked_text() {
    let wire = [
        0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58,
    ];
    assert_eq!(masked(0x81, b"Hello"), wire);
    let outcome = every_split(&Decoder::server(), &wire);
    assert_eq!(outcome.items, [text("Hello")]);
    assert_eq!(outcome.result, Ok(()));
}

#[test]
fn rfc_fragmented_unmasked_text() {
    let wire = [0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f];
    let outcome = every_split(&Decoder::client(), &wire);
    assert_eq!(outcome.items, [text("Hello")]);
    assert_eq!(outcome.result, Ok(()));
    let first = FrameHeader::new(OpCode::Text, 3).with_fin(false).encode();
    let last = FrameHeader::new(OpCode::Continuation, 2).encode();
    assert_eq!(first.as_bytes(), &wire[..2]);
    assert_eq!(last.as_bytes(), &wire[5..7]);
}

#[test]
fn rfc_unmasked_ping_and_masked_pong() {
    let ping = [0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f];
    let outcome = every_split(&Decoder::client(), &ping);
    assert_eq!(outcome.items, [Item::Ping(b"Hello".to_vec())]);
    assert_eq!(ControlFrame::ping(b"Hello").unwrap().as_bytes(), ping);

    let pong = [
        0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58,
    ];
    let outcome = every_split(&Decoder::server(), &pong);
    assert_eq!(outcome.items, [Item::Pong(b"Hello".to_vec())]);
    assert_eq!(outcome.result, Ok(()));
}

#[test]
fn rfc_256_bytes_binary_in_one_unmasked_frame() {
    let payload: Vec<u8> = (0..=255).collect();
    let mut wire = vec![0x82, 0x7e, 0x01, 0x00];
    wire.extend_from_slice(&payload);
    assert_eq!(
        message_head(MessageKind::Binary, 256).as_bytes(),
        &wire[..4]
    );
    let outcome = every_split(&Decoder::client(), &wire);
    assert_eq!(outcome.items, [binary(&payload)]);

    let outcome = every_split(&Decoder::server(), &masked(0x82, &payload));
    assert_eq!(outcome.items, [binary(&payload)]);
}

#[test]
fn rfc_64_kib_binary_in_one_unmasked_frame() {
    let payload: Vec<u8> = (0..65536u32).map(|i| (i * 7 % 251) as u8).collect();
    let mut wire = vec![0x82, 0x7f, 0, 0, 0, 0, 0, 1, 0, 0];
    wire.extend_from_slice(&payload);
    assert_eq!(
        message_head(MessageKind::Binary, 65536).as_bytes(),
        &wire[..10]
    );
    let outcome = some_splits(&Decoder::client(), &wire);
    assert_eq!(outcome.items, [binary(&payload)]);

    let outcome = some_splits(&Decoder::server(), &masked(0x82, &payload));
    assert_eq!(outcome.items, [binary(&payload)]);
}

#[test]
fn an_unfragmented_frame_is_handed_out_as_one_range() {
    let payload = vec![0xabu8; 1000];
    let mut wire = masked(0x82, &payload);
    let mut decoder = Decoder::server();
    let start = decoder.decode(&mut wire).unwrap();
    assert_eq!(start.consumed, 8);
    assert_eq!(
        start.event,
        Some(Event::MessageStart {
            kind: MessageKind::Binary,
            compressed: false,
            len: Some(1000),
        })
    );
    let data = decoder.decode(&mut wire[8..]).unwrap();
    assert_eq!(
        (data.consumed, data.event),
        (1000, Some(Event::Data(0..1000)))
    );
    assert_eq!(&wire[8..], &payload[..]);
    let end = decoder.decode(&mut []).unwrap();
    assert_eq!((end.consumed, end.event), (0, Some(Event::MessageEnd)));
    assert_eq!(decoder.decode(&mut []).unwrap().event, None);
}

#[test]
fn payload_is_handed_out_as_it_arrives() {
    // A 16 MiB frame announced, 3 bytes arrived: they are handed out now.
    let mut head = FrameHeader::new(OpCode::Binary, 16 << 20)
        .with_mask(KEY)
        .encode()
        .as_bytes()
        .to_vec();
    head.extend_from_slice(b"abc");
    apply_mask(&mut head[14..], KEY, 0);
    let mut decoder = Decoder::server();
    let start = decoder.decode(&mut head).unwrap();
    assert_eq!(start.consumed, 14);
    let data = decoder.decode(&mut head[14..]).unwrap();
    assert_eq!(data.event, Some(Event::Data(0..3)));
    assert_eq!(&head[14..], b"abc");
    assert!(decoder.in_message());
}

// ---------------------------------------------------------------------------
// Control frames between fragments, and the close handshake
// ---------------------------------------------------------------------------

#[test]
fn control_frames_may_come_between_fragments() {
    let wire = concat(&[
        masked(0x01, b"Hel"),
        masked(0x89, b"are you there?"),
        masked(0x00, b""),
        masked(0x8a, b""),
        masked(0x80, b"lo"),
        masked(0x82, b"\x00\x01"),
    ]);
    let outcome = every_split(&Decoder::server(), &wire);
    assert_eq!(
        outcome.items,
        [
            Item::Ping(b"are you there?".to_vec()),
            Item::Pong(Vec::new()),
            text("Hello"),
            binary(b"\x00\x01"),
        ]
    );
    assert_eq!(outcome.result, Ok(()));
}

#[test]
fn close_with_code_and_reason() {
    let payload = ClosePayload::new(CloseCode::GOING_AWAY, "server restart: ünïcode").unwrap();
    let wire = masked(0x88, payload.as_bytes());
    let outcome = every_split(&Decoder::server(), &wire);
    assert_eq!(
        outcome.items,
        [Item::Close(Some((1001, "server restart: ünïcode".into())))]
    );
    assert_eq!(outcome.result, Ok(()));
}

#[test]
fn close_without_payload() {
    let outcome = every_split(&Decoder::server(), &masked(0x88, b""));
    assert_eq!(outcome.items, [Item::Close(None)]);
    let mut decoder = Decoder::server();
    decoder.decode(&mut masked(0x88, b"")).unwrap();
    assert!(decoder.is_closed());
    assert_eq!(decoder.decode(&mut []).unwrap().event, None);
    assert_eq!(decoder.finish_eof(), Ok(()));
}

#[test]
fn close_may_cut_a_fragmented_message_short() {
    let wire = concat(&[masked(0x01, b"half a mess"), masked(0x88, b"\x03\xe8")]);
    let outcome = every_split(&Decoder::server(), &wire);
    assert_eq!(outcome.items, [Item::Close(Some((1000, String::new())))]);
    assert!(!outcome.in_message);
    let mut decoder = Decoder::server();
    let mut wire = wire;
    let mut input = &mut wire[..];
    while let Ok(decoded) = decoder.decode(input) {
        if decoded.event.is_none() {
            break;
        }
        input = &mut input[decoded.consumed..];
    }
    assert!(decoder.is_closed());
    assert!(!decoder.in_message());
}

#[test]
fn every_valid_close_code_is_accepted() {
    for code in [
        1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000,
        4999,
    ] {
        let mut payload = u16::to_be_bytes(code).to_vec();
        payload.extend_from_slice(b"why");
        let outcome = run(&Decoder::server(), &masked(0x88, &payload), &[]);
        assert_eq!(
            outcome.items,
            [Item::Close(Some((code, "why".into())))],
            "{code}"
        );
    }
}

#[test]
fn the_writer_side_round_trips_through_a_client_decoder() {
    let close = ClosePayload::new(CloseCode::POLICY_VIOLATION, "no").unwrap();
    let wire = concat(&[
        message_head(MessageKind::Text, 2).as_bytes().to_vec(),
        b"hi".to_vec(),
        ControlFrame::ping(b"p").unwrap().as_bytes().to_vec(),
        ControlFrame::pong(b"").unwrap().as_bytes().to_vec(),
        FrameHeader::new(OpCode::Binary, 1)
            .with_fin(false)
            .encode()
            .as_bytes()
            .to_vec(),
        b"x".to_vec(),
        FrameHeader::new(OpCode::Continuation, 1)
            .encode()
            .as_bytes()
            .to_vec(),
        b"y".to_vec(),
        ControlFrame::close(&close).as_bytes().to_vec(),
    ]);
    let outcome = every_split(&Decoder::client(), &wire);
    assert_eq!(
        outcome.items,
        [
            text("hi"),
            Item::Ping(b"p".to_vec()),
            Item::Pong(Vec::new()),
            binary(b"xy"),
            Item::Close(Some((1008, "no".into()))),
        ]
    );
    assert_eq!(outcome.result, Ok(()));
}

// ---------------------------------------------------------------------------
// Violations and their close codes
// ---------------------------------------------------------------------------

#[test]
fn unmasked_client_frames_fail_with_1002() {
    fails(
        &Decoder::server(),
        &raw(0x81, b"hi", None),
        Error::UnmaskedFrame,
        1002,
        &[],
    );
    fails(
        &Decoder::server(),
        &raw(0x89, b"", None),
        Error::UnmaskedFrame,
        1002,
        &[],
    );
    // After a good message.
    let wire = concat(&[masked(0x82, b"ok"), raw(0x82, b"no", None)]);
    fails(
        &Decoder::server(),
        &wire,
        Error::UnmaskedFrame,
        1002,
        &[binary(b"ok")],
    );
}

#[test]
fn masked_server_frames_fail_with_1002() {
    fails(
        &Decoder::client(),
        &masked(0x81, b"hi"),
        Error::MaskedFrame,
        1002,
        &[],
    );
}

#[test]
fn reserved_bits_without_an_extension_fail_with_1002() {
    for rsv in [0x40, 0x20, 0x10, 0x70] {
        fails(
            &Decoder::server(),
            &masked(0x81 | rsv, b"x"),
            Error::ReservedBits,
            1002,
            &[],
        );
        fails(
            &Decoder::server(),
            &masked(0x89 | rsv, b""),
            Error::ReservedBits,
            1002,
            &[],
        );
    }
}

#[test]
fn rsv1_with_permessage_deflate_marks_the_first_frame_only() {
    let deflate = Decoder::server().with_rsv1(true);
    // Compressed text is not validated here: the inflating layer does it.
    let wire = concat(&[masked(0x41, b"\xff\x00"), masked(0x80, b"\xfe")]);
    let outcome = every_split(&deflate, &wire);
    assert_eq!(
        outcome.items,
        [Item::Message {
            kind: MessageKind::Text,
            compressed: true,
            data: b"\xff\x00\xfe".to_vec(),
        }]
    );
    // RSV1 on a continuation, on a control frame; RSV2 and RSV3 anywhere.
    let wire = concat(&[masked(0x01, b"a"), masked(0xc0, b"b")]);
    fails(&deflate, &wire, Error::ReservedBits, 1002, &[]);
    fails(&deflate, &masked(0xc9, b""), Error::ReservedBits, 1002, &[]);
    fails(&deflate, &masked(0xa1, b""), Error::ReservedBits, 1002, &[]);
    fails(&deflate, &masked(0x92, b""), Error::ReservedBits, 1002, &[]);
}

#[test]
fn reserved_opcodes_fail_with_1002() {
    for opcode in (0x3..=0x7).chain(0xb..=0xf) {
        fails(
            &Decoder::server(),
            &masked(0x80 | opcode, b""),
            Error::UnknownOpcode,
            1002,
            &[],
        );
        // Reported on the first byte, before the rest of the head.
        let mut decoder = Decoder::server();
        assert_eq!(
            decoder.decode(&mut [0x80 | opcode]),
            Err(Error::UnknownOpcode)
        );
    }
}

#[test]
fn control_frames_over_125_bytes_fail_with_1002() {
    for opcode in [0x88, 0x89, 0x8a] {
        fails(
            &Decoder::server(),
            &masked(opcode, &[b'x'; 126]),
            Error::ControlFrameTooLong,
            1002,
            &[],
        );
        fails(
            &Decoder::server(),
            &masked(opcode, &[b'x'; 200]),
            Error::ControlFrameTooLong,
            1002,
            &[],
        );
        // 125 is allowed, and the whole frame fits the minimum buffer.
        let mut payload = vec![b'0'; 125];
        payload[..2].copy_from_slice(&1000u16.to_be_bytes());
        let wire = masked(opcode, &payload);
        assert_eq!(wire.len(), MAX_CONTROL_FRAME_LEN);
        assert_eq!(every_split(&Decoder::server(), &wire).result, Ok(()));
    }
}

#[test]
fn fragmented_control_frames_fail_with_1002() {
    for opcode in [0x08, 0x09, 0x0a] {
        fails(
            &Decoder::server(),
            &masked(opcode, b""),
            Error::FragmentedControlFrame,
            1002,
            &[],
        );
    }
    let wire = concat(&[masked(0x01, b"a"), masked(0x09, b"")]);
    fails(
        &Decoder::server(),
        &wire,
        Error::FragmentedControlFrame,
        1002,
        &[],
    );
}

#[test]
fn continuation_without_a_message_fails_with_1002() {
    fails(
        &Decoder::server(),
        &masked(0x80, b"x"),
        Error::UnexpectedContinuation,
        1002,
        &[],
    );
    fails(
        &Decoder::server(),
        &masked(0x00, b""),
        Error::UnexpectedContinuation,
        1002,
        &[],
    );
    let wire = concat(&[masked(0x81, b"done"), masked(0x80, b"more")]);
    fails(
        &Decoder::server(),
        &wire,
        Error::UnexpectedContinuation,
        1002,
        &[text("done")],
    );
}

#[test]
fn a_new_data_frame_inside_a_message_fails_with_1002() {
    for opcode in [0x81, 0x82, 0x01, 0x02] {
        let wire = concat(&[masked(0x01, b"a"), masked(opcode, b"b")]);
        fails(
            &Decoder::server(),
            &wire,
            Error::ExpectedContinuation,
            1002,
            &[],
        );
    }
}

#[test]
fn lengths_not_in_their_shortest_form_fail_with_1002() {
    let mut sixteen = vec![0x82, 0xfe, 0x00, 0x05];
    sixteen.extend_from_slice(&KEY);
    sixteen.extend_from_slice(b"hello");
    fails(
        &Decoder::server(),
        &sixteen,
        Error::InvalidPayloadLength,
        1002,
        &[],
    );
    let mut sixty_four = vec![0x82, 0xff, 0, 0, 0, 0, 0, 0, 0x01, 0x00];
    sixty_four.extend_from_slice(&KEY);
    fails(
        &Decoder::server(),
        &sixty_four,
        Error::InvalidPayloadLength,
        1002,
        &[],
    );
    let top_bit = [0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0];
    fails(
        &Decoder::server(),
        &top_bit,
        Error::InvalidPayloadLength,
        1002,
        &[],
    );
}

#[test]
fn invalid_utf8_fails_with_1007() {
    for bad in [
        &b"\xff"[..],
        b"\xc0\xaf",
        b"\xed\xa0\x80",
        b"\xf4\x90\x80\x80",
        b"abc\xe2\x28\xa1",
        b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80edited",
    ] {
        fails(
            &Decoder::server(),
            &masked(0x81, bad),
            Error::InvalidUtf8,
            1007,
            &[],
        );
    }
    // Binary is not checked.
    assert_eq!(
        every_split(&Decoder::server(), &masked(0x82, b"\xff")).items,
        [binary(b"\xff")]
    );
}

#[test]
fn an_incomplete_code_point_at_the_end_fails_with_1007() {
    fails(
        &Decoder::server(),
        &masked(0x81, b"ok\xf0\x9f\x98"),
        Error::InvalidUtf8,
        1007,
        &[],
    );
    let wire = concat(&[masked(0x01, b"ok\xf0\x9f"), masked(0x80, b"\x98")]);
    fails(&Decoder::server(), &wire, Error::InvalidUtf8, 1007, &[]);
    // Even when the last fragment is empty.
    let wire = concat(&[masked(0x01, b"ok\xe2\x82"), masked(0x80, b"")]);
    fails(&Decoder::server(), &wire, Error::InvalidUtf8, 1007, &[]);
}

#[test]
fn invalid_utf8_fails_fast_before_the_message_ends() {
    // The first fragment is already hopeless: the error comes before the
    // rest of the message has arrived.
    let mut first = masked(0x01, b"fine so far \xe0\x80");
    let mut decoder = Decoder::server();
    let mut input = &mut first[..];
    let error = loop {
        match decoder.decode(input) {
            Ok(d) => {
                assert!(d.event.is_some(), "ran out of input before failing");
                input = &mut input[d.consumed..];
            }
            Err(e) => break e,
        }
    };
    assert_eq!(error, Error::InvalidUtf8);

    // Across a fragment boundary: E0 ends one fragment, 80 starts the next.
    let wire = concat(&[
        masked(0x01, b"x\xe0"),
        masked(0x00, b"\x80"),
        masked(0x80, b"never reached"),
    ]);
    let cut = wire.len() - 15;
    let outcome = run(&Decoder::server(), &wire[..cut], &[]);
    assert_eq!(outcome.result, Err(Error::InvalidUtf8));
}

#[test]
fn invalid_close_reasons_fail_with_1007() {
    fails(
        &Decoder::server(),
        &masked(0x88, b"\x03\xe8\xff"),
        Error::InvalidCloseReason,
        1007,
        &[],
    );
    fails(
        &Decoder::server(),
        &masked(0x88, b"\x03\xe8ok\xe2\x82"),
        Error::InvalidCloseReason,
        1007,
        &[],
    );
}

#[test]
fn truncated_close_payloads_fail_with_1002() {
    fails(
        &Decoder::server(),
        &masked(0x88, b"\x03"),
        Error::InvalidClosePayload,
        1002,
        &[],
    );
}

#[test]
fn invalid_close_codes_fail_with_1002() {
    for code in [
        0u16, 1, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535,
    ] {
        let wire = masked(0x88, &code.to_be_bytes());
        fails(
            &Decoder::server(),
            &wire,
            Error::InvalidCloseCode,
            1002,
            &[],
        );
    }
}

#[test]
fn anything_after_close_fails_with_1002() {
    let close = masked(0x88, b"\x03\xe8");
    let closed = [Item::Close(Some((1000, String::new())))];
    let wire = concat(&[close.clone(), b"garbage".to_vec()]);
    fails(
        &Decoder::server(),
        &wire,
        Error::FrameAfterClose,
        1002,
        &closed,
    );
    let wire = concat(&[close.clone(), masked(0x81, b"late")]);
    fails(
        &Decoder::server(),
        &wire,
        Error::FrameAfterClose,
        1002,
        &closed,
    );
    let wire = concat(&[close.clone(), close]);
    fails(
        &Decoder::server(),
        &wire,
        Error::FrameAfterClose,
        1002,
        &closed,
    );
}

#[test]
fn oversized_messages_fail_with_1009_before_their_payload_arrives() {
    let limits = Limits {
        max_message_len: 10,
        max_frame_len: 8,
    };
    let decoder = Decoder::new(Role::Server, limits);
    // At the limits: fine. Control frames do not count.
    let wire = concat(&[
        masked(0x01, b"12345678"),
        masked(0x89, b"ping payload"),
        masked(0x80, b"90"),
    ]);
    assert_eq!(
        every_split(&decoder, &wire).items,
        [Item::Ping(b"ping payload".to_vec()), text("1234567890")]
    );
    // One byte over the message limit, in the second fragment.
    let wire = concat(&[masked(0x01, b"12345678"), masked(0x80, b"901")]);
    fails(&decoder, &wire, Error::MessageTooLarge, 1009, &[]);
    // One byte over the frame limit.
    fails(
        &decoder,
        &masked(0x82, b"123456789"),
        Error::FrameTooLarge,
        1009,
        &[],
    );
    // Reported from the head alone.
    let head = FrameHeader::new(OpCode::Binary, 1 << 40)
        .with_mask(KEY)
        .encode();
    let mut head = head.as_bytes().to_vec();
    assert_eq!(
        Decoder::server().decode(&mut head),
        Err(Error::FrameTooLarge)
    );
    let big = Decoder::new(
        Role::Server,
        Limits {
            max_message_len: 100,
            max_frame_len: usize::MAX,
        },
    );
    assert_eq!(big.clone().decode(&mut head), Err(Error::MessageTooLarge));
}

#[test]
fn the_default_limits_are_16_mib() {
    assert_eq!(Limits::DEFAULT.max_message_len, 16 * 1024 * 1024);
    assert_eq!(Limits::DEFAULT.max_frame_len, 16 * 1024 * 1024);
    let at_limit = FrameHeader::new(OpCode::Binary, 16 << 20)
        .with_mask(KEY)
        .encode();
    let mut at_limit = at_limit.as_bytes().to_vec();
    assert!(Decoder::server().decode(&mut at_limit).is_ok());
    let over = FrameHeader::new(OpCode::Binary, (16 << 20) + 1)
        .with_mask(KEY)
        .encode();
    let mut over = over.as_bytes().to_vec();
    assert_eq!(
        Decoder::server().decode(&mut over),
        Err(Error::FrameTooLarge)
    );
}

#[test]
fn a_failed_decoder_stays_failed() {
    let mut decoder = Decoder::server();
    let mut bad = masked(0x83, b"");
    assert_eq!(decoder.decode(&mut bad), Err(Error::UnknownOpcode));
    let mut good = masked(0x81, b"fine");
    assert_eq!(decoder.decode(&mut good), Err(Error::UnknownOpcode));
    assert_eq!(decoder.decode(&mut []), Err(Error::UnknownOpcode));
    assert_eq!(decoder.finish_eof(), Err(Error::UnknownOpcode));
    assert!(!decoder.is_closed());
}

#[test]
fn eof_before_close_is_1006() {
    let mut decoder = Decoder::server();
    let mut wire = masked(0x81, b"hello");
    decoder.decode(&mut wire[..4]).unwrap();
    let error = decoder.finish_eof().unwrap_err();
    assert_eq!(error, Error::UnexpectedEof);
    assert_eq!(error.close_code(), CloseCode::ABNORMAL);
    assert!(!error.close_code().is_valid_on_wire());
}

// ---------------------------------------------------------------------------
// UTF-8 across fragment boundaries
// ---------------------------------------------------------------------------

#[test]
fn utf8_split_across_fragments_at_every_byte() {
    let s = "aé€𝄞 ok 漢字 \u{10ffff}";
    let bytes = s.as_bytes();
    for i in 0..=bytes.len() {
        let wire = concat(&[masked(0x01, &bytes[..i]), masked(0x80, &bytes[i..])]);
        let outcome = run(&Decoder::server(), &wire, &[]);
        assert_eq!(outcome.items, [text(s)], "fragments cut at {i}");
        for j in i..=bytes.len() {
            let wire = concat(&[
                masked(0x01, &bytes[..i]),
                masked(0x89, b"between"),
                masked(0x00, &bytes[i..j]),
                masked(0x80, &bytes[j..]),
            ]);
            let outcome = run(&Decoder::server(), &wire, &[]);
            assert_eq!(
                outcome.items,
                [Item::Ping(b"between".to_vec()), text(s)],
                "fragments cut at {i} and {j}"
            );
        }
    }
    // One fragment per byte, then split at every offset as well.
    let mut frames: Vec<Vec<u8>> = Vec::new();
    for (n, b) in bytes.iter().enumerate() {
        let first = n == 0;
        let last = n + 1 == bytes.len();
        let b0 = u8::from(last) << 7 | if first { 0x1 } else { 0x0 };
        frames.push(masked(b0, &[*b]));
    }
    assert_eq!(
        every_split(&Decoder::server(), &concat(&frames)).items,
        [text(s)]
    );
}

#[test]
fn invalid_utf8_is_found_at_every_fragmentation() {
    for bad in [
        &b"ok \xe2\x82\x28 tail"[..],
        b"\xf0\x9f\x98\x41",
        b"x\xed\xbf\xbf",
    ] {
        for i in 0..=bad.len() {
            let wire = concat(&[masked(0x01, &bad[..i]), masked(0x80, &bad[i..])]);
            let outcome = run(&Decoder::server(), &wire, &[]);
            assert_eq!(
                outcome.result,
                Err(Error::InvalidUtf8),
                "{bad:x?} cut at {i}"
            );
            assert!(outcome.items.is_empty());
        }
    }
}

#[test]
fn the_validator_agrees_with_from_utf8_at_every_split() {
    let samples: [&[u8]; 5] = [
        "ünïcödé 𝄞".as_bytes(),
        b"\xe2\x28\xa1",
        b"abc\xf0\x9f",
        b"\xc3",
        b"",
    ];
    for bytes in samples {
        let expected = std::str::from_utf8(bytes).is_ok();
        for i in 0..=bytes.len() {
            let mut v = Utf8Validator::new();
            let result = v
                .feed(&bytes[..i])
                .and_then(|()| v.feed(&bytes[i..]))
                .and_then(|()| v.finish());
            assert_eq!(result.is_ok(), expected, "{bytes:x?} at {i}");
        }
    }
}

// ---------------------------------------------------------------------------
// Handshake
// ---------------------------------------------------------------------------

#[test]
fn rfc_accept_value() {
    assert_eq!(
        accept_key(b"dGhlIHNhbXBsZSBub25jZQ==").as_str(),
        "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    );
    assert_eq!(check_key(b"dGhlIHNhbXBsZSBub25jZQ=="), Ok(()));
}

#[test]
fn upgrade_requests_are_checked_field_by_field() {
    const KEY_B64: &[u8] = b"dGhlIHNhbXBsZSBub25jZQ==";
    let good: Vec<(&str, &[u8])> = vec![
        ("Host", b"example.com"),
        ("UPGRADE", b"WebSocket"),
        ("Connection", b"Upgrade"),
        ("sec-websocket-key", KEY_B64),
        ("Sec-WebSocket-Version", b" 13 "),
    ];
    assert_eq!(
        accept(good.clone()).unwrap().as_str(),
        "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    );

    let without = |name: &str| -> Vec<(&str, &[u8])> {
        good.iter()
            .copied()
            .filter(|(n, _)| !n.eq_ignore_ascii_case(name))
            .collect()
    };
    let with = |extra: (&'static str, &'static [u8])| -> Vec<(&str, &[u8])> {
        let mut fields = good.clone();
        fields.push(extra);
        fields
    };
    let refused = |fields: Vec<(&str, &[u8])>| accept(fields).map(|_| ()).unwrap_err();

    assert_eq!(refused(without("upgrade")), Error::NotWebSocket);
    assert_eq!(Error::NotWebSocket.status(), 426);
    let mut h2c = without("upgrade");
    h2c.push(("Upgrade", b"h2c"));
    assert_eq!(refused(h2c), Error::NotWebSocket);

    assert_eq!(
        refused(without("sec-websocket-version")),
        Error::UnsupportedVersion
    );
    assert_eq!(
        refused(with(("Sec-WebSocket-Version", b"13"))),
        Error::UnsupportedVersion
    );
    let mut eight = without("sec-websocket-version");
    eight.push(("Sec-WebSocket-Version", b"8"));
    assert_eq!(refused(eight), Error::UnsupportedVersion);
    assert_eq!(Error::UnsupportedVersion.status(), 426);

    assert_eq!(refused(without("sec-websocket-key")), Error::InvalidKey);
    assert_eq!(
        refused(with(("Sec-WebSocket-Key", KEY_B64))),
        Error::InvalidKey
    );
    let mut short = without("sec-websocket-key");
    short.push(("Sec-WebSocket-Key", b"c2hvcnQ="));
    assert_eq!(refused(short), Error::InvalidKey);
    assert_eq!(Error::InvalidKey.status(), 400);

    assert_eq!(check_version(b"13"), Ok(()));
    assert_eq!(check_version(b"13, 8"), Err(Error::UnsupportedVersion));
}

// ---------------------------------------------------------------------------
// Property tests
// ---------------------------------------------------------------------------

/// One thing a peer sends: a data message cut into fragments, with control
/// frames between them, or a lone control frame.
#[derive(Debug, Clone)]
enum Send {
    Message {
        kind: MessageKind,
        data: Vec<u8>,
        /// Fragment ends, as fractions of the data (sorted on use).
        cuts: Vec<prop::sample::Index>,
        /// Control frames after the fragment of the given index.
        controls: Vec<(prop::sample::Index, bool, Vec<u8>)>,
    },
    Ping(Vec<u8>),
    Pong(Vec<u8>),
}

fn control_payload() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..=125)
}

fn send() -> impl Strategy<Value = Send> {
    let message = (
        prop_oneof![
            "\\PC{0,80}".prop_map(|s| (MessageKind::Text, s.into_bytes())),
            prop::collection::vec(any::<u8>(), 0..400).prop_map(|b| (MessageKind::Binary, b)),
        ],
        prop::collection::vec(any::<prop::sample::Index>(), 0..5),
        prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                any::<bool>(),
                control_payload(),
            ),
            0..3,
        ),
    )
        .prop_map(|((kind, data), cuts, controls)| Send::Message {
            kind,
            data,
            cuts,
            controls,
        });
    prop_oneof![
        4 => message,
        1 => control_payload().prop_map(Send::Ping),
        1 => control_payload().prop_map(Send::Pong),
    ]
}

/// Frames one frame for `role`'s peer: masked with a key drawn from `keys`
/// when a server is to read it.
fn frame(
    role: Role,
    header: FrameHeader,
    payload: &[u8],
    keys: &mut impl Iterator<Item = [u8; 4]>,
) -> Vec<u8> {
    let header = match role {
        Role::Server => header.with_mask(keys.next().unwrap_or(KEY)),
        Role::Client => header,
    };
    let mut out = header.encode().as_bytes().to_vec();
    let start = out.len();
    out.extend_from_slice(payload);
    if let Some(key) = header.mask {
        apply_mask(&mut out[start..], key, 0);
    }
    out
}

/// The wire for `sends` (and a final close) and the items a decoder for
/// `role` must make of it.
fn encode(
    role: Role,
    sends: &[Send],
    close: &Option<(u16, String)>,
    keys: &[[u8; 4]],
) -> (Vec<u8>, Vec<Item>) {
    let mut keys = keys.iter().copied().cycle();
    let mut wire = Vec::new();
    let mut items = Vec::new();
    for send in sends {
        match send {
            Send::Ping(p) => {
                wire.extend(frame(
                    role,
                    FrameHeader::new(OpCode::Ping, p.len() as u64),
                    p,
                    &mut keys,
                ));
                items.push(Item::Ping(p.clone()));
            }
            Send::Pong(p) => {
                wire.extend(frame(
                    role,
                    FrameHeader::new(OpCode::Pong, p.len() as u64),
                    p,
                    &mut keys,
                ));
                items.push(Item::Pong(p.clone()));
            }
            Send::Message {
                kind,
                data,
                cuts,
                controls,
            } => {
                let mut ends: Vec<usize> = cuts.iter().map(|i| i.index(data.len() + 1)).collect();
                ends.push(data.len());
                ends.sort_unstable();
                let mut start = 0;
                for (n, &end) in ends.iter().enumerate() {
                    let opcode = if n == 0 {
                        kind.opcode()
                    } else {
                        OpCode::Continuation
                    };
                    let fin = n + 1 == ends.len();
                    let header = FrameHeader::new(opcode, (end - start) as u64).with_fin(fin);
                    wire.extend(frame(role, header, &data[start..end], &mut keys));
                    start = end;
                    if fin {
                        break;
                    }
                    for (at, ping, payload) in controls {
                        if at.index(ends.len()) == n {
                            let opcode = if *ping { OpCode::Ping } else { OpCode::Pong };
                            let header = FrameHeader::new(opcode, payload.len() as u64);
                            wire.extend(frame(role, header, payload, &mut keys));
                            items.push(if *ping {
                                Item::Ping(payload.clone())
                            } else {
                                Item::Pong(payload.clone())
                            });
                        }
                    }
                }
                items.push(Item::Message {
                    kind: *kind,
                    compressed: false,
                    data: data.clone(),
                });
            }
        }
    }
    if let Some((code, reason)) = close {
        let payload = ClosePayload::new(CloseCode(*code), reason).expect("valid close");
        let header = FrameHeader::new(OpCode::Close, payload.len() as u64);
        wire.extend(frame(role, header, payload.as_bytes(), &mut keys));
        items.push(Item::Close(Some((*code, reason.clone()))));
    }
    (wire, items)
}

fn close() -> impl Strategy<Value = Option<(u16, String)>> {
    prop::option::of((
        prop_oneof![1000u16..=1003, 1007u16..=1014, 3000u16..=4999],
        "\\PC{0,30}",
    ))
}

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![Just(Role::Server), Just(Role::Client)]
}

/// Cut positions within `len` from arbitrary indices.
fn cuts_in(len: usize, picks: &[prop::sample::Index]) -> Vec<usize> {
    let mut cuts: Vec<usize> = picks.iter().map(|i| i.index(len + 1)).collect();
    cuts.sort_unstable();
    cuts
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random messages, randomly fragmented and masked, with control frames
    /// between fragments, come back unchanged however the input is split.
    #[test]
    fn messages_round_trip_through_any_fragmentation_and_split(
        role in role(),
        sends in prop::collection::vec(send(), 0..6),
        close in close(),
        keys in prop::collection::vec(any::<[u8; 4]>(), 1..8),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let (wire, items) = encode(role, &sends, &close, &keys);
        let decoder = Decoder::new(role, Limits::DEFAULT);
        let whole = run(&decoder, &wire, &[]);
        prop_assert_eq!(&whole.items, &items);
        prop_assert_eq!(whole.result, Ok(()));
        prop_assert!(whole.pending.is_empty());
        prop_assert!(!whole.in_message);
        let split = run(&decoder, &wire, &cuts_in(wire.len(), &picks));
        prop_assert_eq!(&split, &whole);
        prop_assert_eq!(fast_view(run_with(&decoder, &wire, &[], true)), fast_view(whole.clone()));
        let cuts = cuts_in(wire.len(), &picks);
        prop_assert_eq!(fast_view(run_with(&decoder, &wire, &cuts, true)), fast_view(whole.clone()));
    }

    /// Small streams are also split at every offset.
    #[test]
    fn small_streams_decode_the_same_at_every_split(
        role in role(),
        sends in prop::collection::vec(send(), 0..3),
        close in close(),
        keys in prop::collection::vec(any::<[u8; 4]>(), 1..4),
    ) {
        let (wire, items) = encode(role, &sends, &close, &keys);
        prop_assume!(wire.len() <= 400);
        let outcome = every_split(&Decoder::new(role, Limits::DEFAULT), &wire);
        prop_assert_eq!(outcome.items, items);
    }

    /// A valid stream with a few bytes changed: whatever the decoder makes
    /// of it (often a violation), it makes the same of it at any split.
    #[test]
    fn corrupted_streams_decode_the_same_at_any_split(
        role in role(),
        rsv1 in any::<bool>(),
        sends in prop::collection::vec(send(), 1..4),
        close in close(),
        keys in prop::collection::vec(any::<[u8; 4]>(), 1..4),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
        max_message_len in 0usize..600,
    ) {
        let (mut wire, _) = encode(role, &sends, &close, &keys);
        for (at, xor) in &flips {
            let at = at.index(wire.len());
            wire[at] ^= xor;
        }
        let limits = Limits { max_message_len, max_frame_len: max_message_len / 2 + 10 };
        let decoder = Decoder::new(role, limits).with_rsv1(rsv1);
        let whole = run(&decoder, &wire, &[]);
        let split = run(&decoder, &wire, &cuts_in(wire.len(), &picks));
        prop_assert_eq!(&split, &whole);
        let bytewise: Vec<usize> = (1..wire.len()).collect();
        prop_assert_eq!(&run(&decoder, &wire, &bytewise), &whole);
        prop_assert_eq!(fast_view(run_with(&decoder, &wire, &[], true)), fast_view(whole.clone()));
        let cuts = cuts_in(wire.len(), &picks);
        prop_assert_eq!(fast_view(run_with(&decoder, &wire, &cuts, true)), fast_view(whole.clone()));
        if let Err(e) = whole.result {
            prop_assert!([1002, 1007, 1009].contains(&e.close_code().as_u16()));
        }
    }

    /// Arbitrary bytes never panic the decoder and decode the same at any
    /// split.
    #[test]
    fn arbitrary_bytes_decode_the_same_at_any_split(
        role in role(),
        wire in prop::collection::vec(any::<u8>(), 0..300),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let decoder = Decoder::new(role, Limits { max_message_len: 200, max_frame_len: 100 });
        let whole = run(&decoder, &wire, &[]);
        prop_assert_eq!(&run(&decoder, &wire, &cuts_in(wire.len(), &picks)), &whole);
        prop_assert_eq!(fast_view(run_with(&decoder, &wire, &[], true)), fast_view(whole.clone()));
    }

    /// Masking in pieces at any offsets equals masking whole.
    #[test]
    fn masking_in_pieces_equals_masking_whole(
        data in prop::collection::vec(any::<u8>(), 0..200),
        key in any::<[u8; 4]>(),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let mut whole = data.clone();
        apply_mask(&mut whole, key, 0);
        let mut pieces = data.clone();
        let mut start = 0;
        for end in cuts_in(data.len(), &picks).into_iter().chain([data.len()]) {
            apply_mask(&mut pieces[start..end], key, start);
            start = end;
        }
        prop_assert_eq!(&pieces, &whole);
        let reference: Vec<u8> = data.iter().enumerate().map(|(i, b)| b ^ key[i % 4]).collect();
        prop_assert_eq!(&whole, &reference);
    }
}
