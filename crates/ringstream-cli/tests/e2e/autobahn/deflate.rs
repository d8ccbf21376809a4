//! The client's side of permessage-deflate (RFC 7692) for the Autobahn
//! sections 12 and 13, written on `miniz_oxide` alone.
//!
//! - [`Negotiated::check`] reads the server's `Sec-WebSocket-Extensions`
//!   and checks it answers one of the offers as §7.1 allows.
//! - The client compresses with its negotiated window and context
//!   takeover: it keeps its LZ77 window between messages unless the
//!   response says `client_no_context_takeover` (so a server that wrongly
//!   forgets the client's context fails to inflate), and compresses without
//!   back-references at all when the server limits `client_max_window_bits`.
//! - The client inflates the server's messages through a ring buffer of
//!   exactly 2^`server_max_window_bits` bytes, so a back-reference beyond
//!   the negotiated window fails (miniz_oxide refuses a distance longer
//!   than the buffer); with `server_no_context_takeover` it starts afresh
//!   for each message, so one that refers into an earlier message decodes
//!   to the wrong bytes.

use miniz_oxide::deflate::core::{
    create_comp_flags_from_zip_params, CompressionStrategy, CompressorOxide,
};
use miniz_oxide::inflate::core::{decompress, inflate_flags, DecompressorOxide};
use miniz_oxide::inflate::TINFLStatus;
use miniz_oxide::{MZFlush, MZStatus};

/// The last four bytes of a sync flush, stripped from each compressed
/// message and put back before inflating it (RFC 7692 §7.2.1, §7.2.2).
const TAIL: [u8; 4] = [0x00, 0x00, 0xff, 0xff];

/// The parameters of one offer or response element.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Params {
    pub server_no_context_takeover: bool,
    pub client_no_context_takeover: bool,
    pub server_max_window_bits: Option<u8>,
    /// `Some(None)`: the parameter without a value (allowed in an offer).
    pub client_max_window_bits: Option<Option<u8>>,
}

impl Params {
    /// Parses one `permessage-deflate; …` element.
    pub fn parse(element: &str) -> Result<Params, String> {
        let mut parts = element.split(';').map(str::trim);
        if parts.next() != Some("permessage-deflate") {
            return Err(format!("not permessage-deflate: {element:?}"));
        }
        let mut params = Params::default();
        let mut seen = Vec::new();
        for part in parts {
            let (name, value) = match part.split_once('=') {
                Some((n, v)) => (n.trim(), Some(v.trim().trim_matches('"'))),
                None => (part, None),
            };
            if seen.contains(&name) {
                return Err(format!("{name} twice in {element:?}"));
            }
            seen.push(name);
            let bits = |value: Option<&str>| -> Result<u8, String> {
                let value = value.ok_or_else(|| format!("{name} without a value"))?;
                match value.parse::<u8>() {
                    Ok(n @ 8..=15) if !value.starts_with('0') => Ok(n),
                    _ => Err(format!("{name}={value} is not a window size")),
                }
            };
            match (name, value) {
                ("server_no_context_takeover", None) => params.server_no_context_takeover = true,
                ("client_no_context_takeover", None) => params.client_no_context_takeover = true,
                ("server_max_window_bits", v) => params.server_max_window_bits = Some(bits(v)?),
                ("client_max_window_bits", None) => params.client_max_window_bits = Some(None),
                ("client_max_window_bits", v) => {
                    params.client_max_window_bits = Some(Some(bits(v)?))
                }
                _ => return Err(format!("unexpected parameter {part:?} in {element:?}")),
            }
        }
        Ok(params)
    }
}

/// What both ends follow once the server has answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    pub server_no_context_takeover: bool,
    pub client_no_context_takeover: bool,
    pub server_window_bits: u8,
    pub client_window_bits: u8,
}

impl Negotiated {
    /// The agreement of `response`, checked against the `offer` (a
    /// comma-separated list of elements): the response must be one valid
    /// answer to one of them (RFC 7692 §7.1).
    pub fn check(offer: &str, response: &str) -> Result<Negotiated, String> {
        if response.contains(',') {
            return Err(format!("more than one extension accepted: {response:?}"));
        }
        let answer = Params::parse(response)?;
        if answer.client_max_window_bits == Some(None) {
            return Err(format!(
                "client_max_window_bits without a value: {response:?}"
            ));
        }
        let answers = |offered: &Params| {
            (!offered.server_no_context_takeover || answer.server_no_context_takeover)
                && match (
                    offered.server_max_window_bits,
                    answer.server_max_window_bits,
                ) {
                    (Some(_), None) => false,
                    (Some(max), Some(bits)) => bits <= max,
                    (None, _) => true,
                }
                && match (
                    offered.client_max_window_bits,
                    answer.client_max_window_bits,
                ) {
                    (None, Some(_)) => false,
                    (Some(Some(max)), Some(Some(bits))) => bits <= max,
                    _ => true,
                }
        };
        let offers = offer
            .split(',')
            .map(|element| Params::parse(element.trim()))
            .collect::<Result<Vec<_>, _>>()?;
        if !offers.iter().any(answers) {
            return Err(format!(
                "the response {response:?} answers none of the offers {offer:?}"
            ));
        }
        Ok(Negotiated {
            server_no_context_takeover: answer.server_no_context_takeover,
            client_no_context_takeover: answer.client_no_context_takeover,
            server_window_bits: answer.server_max_window_bits.unwrap_or(15),
            client_window_bits: answer.client_max_window_bits.flatten().unwrap_or(15),
        })
    }
}

/// The client's compressor and decompressor for one connection.
pub struct PerMessageDeflate {
    pub negotiated: Negotiated,
    compressor: Box<CompressorOxide>,
    decompressor: Box<DecompressorOxide>,
    /// The server's window: exactly 2^`server_window_bits` bytes.
    ring: Vec<u8>,
    pos: usize,
    /// The server's stream ended (a block with BFINAL): the next message
    /// starts a new one.
    ended: bool,
}

impl PerMessageDeflate {
    pub fn new(negotiated: Negotiated) -> PerMessageDeflate {
        // With a window below 2^15 the compressor must not refer back
        // further: Huffman coding alone refers back nowhere.
        let strategy = if negotiated.client_window_bits < 15 {
            CompressionStrategy::HuffmanOnly
        } else {
            CompressionStrategy::Default
        };
        // Level 1, the fastest: the server's side is what is tested, and
        // a debug build compresses slowly.
        let flags = create_comp_flags_from_zip_params(1, -15, strategy as i32);
        PerMessageDeflate {
            negotiated,
            compressor: Box::new(CompressorOxide::new(flags)),
            decompressor: Box::new(DecompressorOxide::new()),
            ring: vec![0; 1 << negotiated.server_window_bits],
            pos: 0,
            ended: false,
        }
    }

    /// Compresses one message payload (RFC 7692 §7.2.1).
    pub fn compress(&mut self, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![0u8; payload.len() + 64];
        let mut input = payload;
        let mut written = 0;
        loop {
            let step = miniz_oxide::deflate::stream::deflate(
                &mut self.compressor,
                input,
                &mut out[written..],
                MZFlush::Sync,
            );
            input = &input[step.bytes_consumed..];
            written += step.bytes_written;
            assert!(
                matches!(step.status, Ok(MZStatus::Ok)),
                "deflate: {:?}",
                step.status
            );
            if input.is_empty() && written < out.len() {
                break;
            }
            out.resize(out.len() * 2, 0);
        }
        out.truncate(written);
        assert!(out.ends_with(&TAIL), "a sync flush ends with 00 00 ff ff");
        out.truncate(out.len() - TAIL.len());
        if self.negotiated.client_no_context_takeover {
            self.compressor.reset();
        }
        out
    }

    /// Inflates one compressed message from the server (RFC 7692 §7.2.2).
    pub fn decompress(&mut self, data: &[u8]) -> Result<Vec<u8>, String> {
        if self.negotiated.server_no_context_takeover || self.ended {
            self.decompressor.init();
            self.ring.fill(0);
            self.pos = 0;
            self.ended = false;
        }
        let mut input = data.to_vec();
        input.extend_from_slice(&TAIL);
        let mask = self.ring.len() - 1;
        let mut used = 0;
        let mut out = Vec::new();
        loop {
            let (status, consumed, written) = decompress(
                &mut self.decompressor,
                &input[used..],
                &mut self.ring,
                self.pos,
                inflate_flags::TINFL_FLAG_HAS_MORE_INPUT,
            );
            out.extend_from_slice(&self.ring[self.pos..self.pos + written]);
            self.pos = (self.pos + written) & mask;
            used += consumed;
            match status {
                TINFLStatus::Done => {
                    self.ended = true;
                    return Ok(out);
                }
                TINFLStatus::NeedsMoreInput if used == input.len() => return Ok(out),
                TINFLStatus::HasMoreOutput | TINFLStatus::NeedsMoreInput
                    if consumed + written > 0 => {}
                other => {
                    return Err(format!(
                        "the server's compressed message does not inflate with a window of \
                         2^{} bytes{}: {other:?} after {} of {} bytes",
                        self.negotiated.server_window_bits,
                        if self.negotiated.server_no_context_takeover {
                            " and no context"
                        } else {
                            ""
                        },
                        used,
                        data.len()
                    ))
                }
            }
        }
    }
}

#[test]
fn the_client_side_round_trips() {
    let offer = "permessage-deflate; client_max_window_bits";
    for response in [
        "permessage-deflate",
        "permessage-deflate; client_no_context_takeover; server_no_context_takeover",
        "permessage-deflate; server_max_window_bits=9; client_max_window_bits=10",
    ] {
        let negotiated = Negotiated::check(offer, response).unwrap();
        // The client's compressor against a decompressor with the
        // client's window (the roles swapped).
        let mut client = PerMessageDeflate::new(negotiated);
        let mut server = PerMessageDeflate::new(Negotiated {
            server_window_bits: negotiated.client_window_bits,
            server_no_context_takeover: negotiated.client_no_context_takeover,
            ..negotiated
        });
        for message in [&b"Hello"[..], b"", b"Hello Hello Hello Hello", &[7u8; 3000]] {
            let compressed = client.compress(message);
            assert_eq!(
                server.decompress(&compressed).unwrap(),
                message,
                "{response}"
            );
        }
    }
    // A back-reference beyond the window fails; one into the previous
    // message decodes wrong without context takeover.
    let full = Negotiated::check(offer, "permessage-deflate").unwrap();
    let block: Vec<u8> = (0..1000u32).map(|i| (i * 7919 % 251) as u8).collect();
    let mut sender = PerMessageDeflate::new(full);
    let far = sender.compress(&[&block[..], &block[..]].concat());
    let mut small = PerMessageDeflate::new(Negotiated {
        server_window_bits: 9,
        ..full
    });
    assert!(small.decompress(&far).is_err());
    let mut sender = PerMessageDeflate::new(full);
    let first = sender.compress(&block);
    let second = sender.compress(&block);
    let mut fresh = PerMessageDeflate::new(Negotiated {
        server_no_context_takeover: true,
        ..full
    });
    assert_eq!(fresh.decompress(&first).unwrap(), block);
    assert_ne!(fresh.decompress(&second).ok(), Some(block.clone()));
    // RFC 7692 §7.2.3.1 and a response that answers no offer.
    let negotiated = Negotiated::check(offer, "permessage-deflate").unwrap();
    let mut client = PerMessageDeflate::new(negotiated);
    let hello = [0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00];
    assert_eq!(client.decompress(&hello).unwrap(), b"Hello");
    assert!(Negotiated::check(offer, "permessage-deflate; server_max_window_bits=16").is_err());
    assert!(Negotiated::check(
        "permessage-deflate",
        "permessage-deflate; client_max_window_bits=9"
    )
    .is_err());
    assert!(Negotiated::check(
        "permessage-deflate; server_no_context_takeover",
        "permessage-deflate"
    )
    .is_err());
}
