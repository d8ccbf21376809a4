//! Feeds arbitrary bytes to the WebSocket decoder, whole and in arbitrary
//! split sizes, and checks it never panics, never reports ranges outside
//! what it consumed, fails only with close codes 1002, 1007 and 1009, and
//! decodes the same way whatever the splits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ringstream_core::ws::{Decoder, Error, Event, Limits, MessageKind, Role};

#[derive(Debug, PartialEq)]
enum Item {
    Message(MessageKind, bool, Vec<u8>),
    Ping(Vec<u8>),
    Pong(Vec<u8>),
    Close(Option<u16>, Vec<u8>),
}

#[derive(Debug, PartialEq)]
struct Outcome {
    items: Vec<Item>,
    result: Result<(), Error>,
    /// Bytes fed but not consumed; empty after an error.
    pending: Vec<u8>,
}

/// Decodes `wire` fed in pieces whose sizes cycle through `splits`; with
/// `fast`, tries `decode_whole` first between messages.
fn run(decoder: &Decoder, wire: &[u8], splits: &[u8], fast: bool) -> Outcome {
    let mut decoder = decoder.clone();
    let mut buf: Vec<u8> = Vec::new();
    let mut items = Vec::new();
    let mut current: Option<(MessageKind, bool, Option<u64>, Vec<u8>)> = None;
    let mut offset = 0usize;
    let mut i = 0usize;
    while offset < wire.len() {
        let size = splits
            .get(i % splits.len().max(1))
            .map_or(wire.len(), |&s| usize::from(s).max(1));
        i += 1;
        let end = offset.saturating_add(size).min(wire.len());
        buf.extend_from_slice(&wire[offset..end]);
        offset = end;
        loop {
            if fast && current.is_none() {
                // An error here sticks: `decode` below reports it.
                if let Ok(Some(whole)) = decoder.decode_whole(&mut buf) {
                    assert!(whole.payload.end == whole.consumed && whole.consumed <= buf.len());
                    let data = buf[whole.payload].to_vec();
                    if whole.kind == MessageKind::Text {
                        assert!(std::str::from_utf8(&data).is_ok());
                    }
                    items.push(Item::Message(whole.kind, false, data));
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
                    assert!([1002, 1007, 1009].contains(&e.close_code().as_u16()), "{e}");
                    return Outcome {
                        items,
                        result: Err(e),
                        pending: Vec::new(),
                    };
                }
            };
            let consumed = decoded.consumed;
            assert!(consumed <= buf.len());
            let Some(event) = decoded.event else {
                buf.drain(..consumed);
                break;
            };
            let slice = |r: std::ops::Range<usize>| {
                assert!(
                    r.start <= r.end && r.end <= consumed,
                    "{r:?} within {consumed}"
                );
                buf[r].to_vec()
            };
            match event {
                Event::MessageStart {
                    kind,
                    compressed,
                    len,
                } => {
                    assert!(current.is_none());
                    current = Some((kind, compressed, len, Vec::new()));
                }
                Event::Data(r) => {
                    assert!(!r.is_empty());
                    let data = slice(r);
                    current.as_mut().expect("data in a message").3.extend(data);
                }
                Event::MessageEnd => {
                    let (kind, compressed, len, data) = current.take().expect("end of a message");
                    if let Some(len) = len {
                        assert_eq!(len, data.len() as u64);
                    }
                    if kind == MessageKind::Text && !compressed {
                        assert!(std::str::from_utf8(&data).is_ok());
                    }
                    items.push(Item::Message(kind, compressed, data));
                }
                Event::Ping(r) => items.push(Item::Ping(slice(r))),
                Event::Pong(r) => items.push(Item::Pong(slice(r))),
                Event::Close { code, reason } => {
                    let reason = slice(reason);
                    assert!(std::str::from_utf8(&reason).is_ok());
                    assert!(code.is_none_or(|c| c.is_valid_on_wire()));
                    assert!(decoder.is_closed());
                    current = None;
                    items.push(Item::Close(code.map(|c| c.as_u16()), reason));
                }
            }
            buf.drain(..consumed);
        }
    }
    Outcome {
        items,
        result: Ok(()),
        pending: buf,
    }
}

fuzz_target!(|input: &[u8]| {
    // The first byte picks the role, permessage-deflate's RSV1 and small or
    // default limits, and how many of the following bytes are split sizes.
    let Some((&config, rest)) = input.split_first() else {
        return;
    };
    let role = if config & 1 == 0 {
        Role::Server
    } else {
        Role::Client
    };
    let limits = if config & 4 == 0 {
        Limits {
            max_message_len: 300,
            max_frame_len: 200,
        }
    } else {
        Limits::DEFAULT
    };
    let decoder = Decoder::new(role, limits).with_rsv1(config & 2 != 0);
    let n = usize::from(config >> 4).min(rest.len());
    let (splits, wire) = rest.split_at(n);
    let whole = run(&decoder, wire, &[], false);
    let pieces = run(&decoder, wire, splits, false);
    assert_eq!(pieces, whole);
    let bytewise = run(&decoder, wire, &[1], false);
    assert_eq!(bytewise, whole);
    // The socket's fast path for one-frame messages changes nothing.
    assert_eq!(run(&decoder, wire, &[], true), whole);
    assert_eq!(run(&decoder, wire, splits, true), whole);
});
