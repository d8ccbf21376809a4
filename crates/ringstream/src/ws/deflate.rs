//! permessage-deflate (RFC 7692): [`Deflater`] compresses the messages an
//! end sends, [`Inflater`] inflates the ones it receives, under a limit on
//! the inflated size. Behind the `deflate` feature.
//!
//! The negotiation is the core's ([`ringstream_core::ws::DeflateConfig`]);
//! its result, [`DeflateParams`], and the end's [`Role`] set up both
//! halves. DEFLATE itself comes from `miniz_oxide`, a pure-Rust port of
//! miniz (the default backend of `flate2`), used directly: permessage-deflate
//! needs raw DEFLATE streams with sync and full flushes, which it offers
//! with no other dependency than `adler2`.
//!
//! # Memory
//!
//! A compressor is large (about 310 KiB with its hash chains), an inflater
//! about 42 KiB. A connection keeps its own compressor only when it must
//! keep its LZ77 window between messages (no `server_no_context_takeover`
//! for a server); otherwise every connection of a thread uses one shared
//! compressor, which forgets each message once it is compressed. An
//! inflater whose peer compresses each message on its own is dropped at the
//! end of each message, so an idle connection holds none.
//!
//! # Window sizes
//!
//! Inflating always keeps a 32 KiB window, which reads data compressed with
//! any window. Compressing with a window below 2^15 bytes (a peer's
//! `server_max_window_bits` of 8 to 14) uses only matches at distance 1 —
//! runs of one byte — plus Huffman coding: every back-reference then lies
//! within any window, however small, at some cost in ratio. (miniz_oxide's
//! own smaller-window modes are not used: they bound the hash table, not
//! the match distance.)
//!
//! # Examples
//!
//! A server's message, inflated by a client:
//!
//! ```
//! use ringstream::ws::{Deflater, Inflater, Role};
//! use ringstream_core::ws::DeflateConfig;
//!
//! let offer: [&[u8]; 1] = [b"permessage-deflate; client_max_window_bits"];
//! let params = DeflateConfig::DEFAULT.negotiate(offer).unwrap();
//!
//! let mut deflater = Deflater::new(&params, Role::Server);
//! let mut inflater = Inflater::new(&params, Role::Client, 1 << 20);
//! let text = "a message, a message, a message".repeat(10);
//! let compressed = deflater.compress(text.as_bytes());
//! assert!(compressed.len() < 40);
//! inflater.push(&compressed)?;
//! assert_eq!(inflater.finish()?, text.as_bytes());
//! # Ok::<(), ringstream_core::ws::Error>(())
//! ```

use std::cell::RefCell;
use std::fmt;

use bytes::Bytes;
use miniz_oxide::deflate::core::{
    create_comp_flags_from_zip_params, CompressionStrategy, CompressorOxide,
};
use miniz_oxide::inflate::stream::InflateState;
use miniz_oxide::{DataFormat, MZError, MZFlush, MZStatus};
use ringstream_core::ws::{DeflateParams, Error, Role, MAX_WINDOW_BITS};

/// The four bytes a sync flush ends with (the `LEN` and `NLEN` of an empty
/// stored block): stripped from every compressed message, and appended to
/// it before it is inflated (RFC 7692 §7.2.1, §7.2.2).
pub const DEFLATE_TAIL: [u8; 4] = [0x00, 0x00, 0xff, 0xff];

/// The compression level of a new [`Deflater`]: 6, zlib's default balance
/// of speed and ratio.
pub const DEFAULT_LEVEL: u8 = 6;

/// The first allocation for a message's output is at least this many
/// bytes (or the limit, when lower).
const MIN_GROWTH: usize = 256;

/// Compresses the messages one end of a connection sends (RFC 7692 §7.2.1):
/// raw DEFLATE, ended by a sync flush whose last four bytes
/// ([`DEFLATE_TAIL`]) are stripped. Send the result in a frame with RSV1
/// set on its first frame.
///
/// With context takeover the compressor keeps its window from one message
/// to the next, so a message may refer back to earlier ones. Without it
/// (the negotiated `*_no_context_takeover` of this end), each message is
/// compressed on its own, with a compressor shared by the thread.
///
/// # Examples
///
/// The example of RFC 7692 §7.2.3.2: the same text sent twice, the second
/// time as a back-reference into the first.
///
/// ```
/// use ringstream::ws::{Deflater, Role};
/// use ringstream_core::ws::DeflateParams;
///
/// let mut deflater = Deflater::new(&DeflateParams::new(), Role::Server);
/// assert_eq!(&deflater.compress(b"Hello")[..], [0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00]);
/// assert_eq!(deflater.compress(b"Hello").len(), 5);
/// ```
pub struct Deflater {
    /// The compressor's flags: level, strategy, raw DEFLATE.
    flags: u32,
    level: u8,
    window_bits: u8,
    no_context_takeover: bool,
    /// The connection's own compressor, with context takeover; created by
    /// the first message.
    own: Option<Box<CompressorOxide>>,
}

impl fmt::Debug for Deflater {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Deflater")
            .field("level", &self.level)
            .field("window_bits", &self.window_bits)
            .field("no_context_takeover", &self.no_context_takeover)
            .finish_non_exhaustive()
    }
}

/// The compressor every [`Deflater`] without context takeover on this
/// thread uses, with its flags. It is left clean (all flushed, its window
/// forgotten) after each message.
struct Shared {
    flags: u32,
    compressor: Box<CompressorOxide>,
    /// The last message ran to its end.
    clean: bool,
}

thread_local! {
    static SHARED: RefCell<Option<Shared>> = const { RefCell::new(None) };
}

impl Deflater {
    /// The compressor for the messages the end in `role` sends, as
    /// `params` (the negotiated response) says, at [`DEFAULT_LEVEL`].
    pub fn new(params: &DeflateParams, role: Role) -> Deflater {
        let window_bits = params.send_window_bits(role);
        Deflater {
            flags: flags(DEFAULT_LEVEL, window_bits),
            level: DEFAULT_LEVEL,
            window_bits,
            no_context_takeover: params.send_no_context_takeover(role),
            own: None,
        }
    }

    /// The same compressor at `level`: 0 stores without compression, 1 is
    /// the fastest, 9 the smallest output (10 is accepted, as slower still).
    /// Set it before the first message.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ws::{Deflater, Role};
    /// use ringstream_core::ws::DeflateParams;
    ///
    /// let params = DeflateParams::new();
    /// let data = vec![b'x'; 10_000];
    /// let fast = Deflater::new(&params, Role::Server).with_level(1).compress(&data);
    /// let stored = Deflater::new(&params, Role::Server).with_level(0).compress(&data);
    /// assert!(fast.len() < 100);
    /// assert!(stored.len() > 10_000);
    /// ```
    #[must_use]
    pub fn with_level(mut self, level: u8) -> Deflater {
        self.level = level.min(10);
        self.flags = flags(self.level, self.window_bits);
        self.own = None;
        self
    }

    /// The compression level.
    pub fn level(&self) -> u8 {
        self.level
    }

    /// The largest LZ77 window the compressed data refers back into, as a
    /// base-2 logarithm (8..=15).
    pub fn window_bits(&self) -> u8 {
        self.window_bits
    }

    /// Whether each message is compressed on its own.
    pub fn no_context_takeover(&self) -> bool {
        self.no_context_takeover
    }

    /// Compresses one whole message payload. An empty payload compresses
    /// to one byte, `0x00` (RFC 7692 §7.2.3.6).
    ///
    /// A compressed message may be larger than the payload (data that does
    /// not compress grows by a few bytes per 64 KiB); sending it
    /// uncompressed instead, with RSV1 clear, is always allowed.
    pub fn compress(&mut self, payload: &[u8]) -> Bytes {
        if !self.no_context_takeover {
            let flags = self.flags;
            let compressor = self.own.get_or_insert_with(|| new_compressor(flags));
            return Bytes::from(compress(compressor, payload, MZFlush::Sync));
        }
        SHARED.with(|shared| match shared.try_borrow_mut() {
            Ok(mut slot) => {
                let shared = match slot.take() {
                    Some(shared) if shared.flags == self.flags => slot.insert(shared),
                    _ => slot.insert(Shared {
                        flags: self.flags,
                        compressor: new_compressor(self.flags),
                        clean: true,
                    }),
                };
                if !shared.clean {
                    shared.compressor.reset();
                }
                shared.clean = false;
                // A full flush forgets the window: the next message, from
                // whichever connection, starts afresh.
                let out = compress(&mut shared.compressor, payload, MZFlush::Full);
                shared.clean = true;
                Bytes::from(out)
            }
            // Not reached (compressing calls nothing that compresses), but
            // a compressor of its own is always correct.
            Err(_) => Bytes::from(compress(
                &mut new_compressor(self.flags),
                payload,
                MZFlush::Full,
            )),
        })
    }
}

/// The compressor flags for `level` and a window of `window_bits`.
fn flags(level: u8, window_bits: u8) -> u32 {
    let level = level.min(10);
    if window_bits >= MAX_WINDOW_BITS || level == 0 {
        create_comp_flags_from_zip_params(
            level.into(),
            -i32::from(MAX_WINDOW_BITS),
            CompressionStrategy::Default as i32,
        )
    } else {
        // Runs of one byte only: distance 1 fits any window. At level 2 or
        // more, as level 1 takes a path that matches across the whole
        // 32 KiB window.
        create_comp_flags_from_zip_params(
            level.max(2).into(),
            -i32::from(MAX_WINDOW_BITS),
            CompressionStrategy::RLE as i32,
        )
    }
}

fn new_compressor(flags: u32) -> Box<CompressorOxide> {
    Box::new(CompressorOxide::new(flags))
}

/// Runs `payload` through `compressor` and flushes with `flush` (sync or
/// full), without the flush's last four bytes.
fn compress(compressor: &mut CompressorOxide, payload: &[u8], flush: MZFlush) -> Vec<u8> {
    let mut input = payload;
    let mut out = vec![0; payload.len() / 4 + 64];
    let mut written = 0;
    loop {
        if written == out.len() {
            let more = out.len().max(input.len() / 4 + 64);
            out.resize(out.len() + more, 0);
        }
        let step =
            miniz_oxide::deflate::stream::deflate(compressor, input, &mut out[written..], flush);
        input = &input[step.bytes_consumed..];
        written += step.bytes_written;
        // Done once all input is taken and the flush did not fill the
        // output: it has been written whole.
        if step.status.is_err() || (input.is_empty() && written < out.len()) {
            debug_assert!(step.status.is_ok(), "{:?}", step.status);
            break;
        }
    }
    out.truncate(written);
    debug_assert!(out.ends_with(&DEFLATE_TAIL));
    if out.ends_with(&DEFLATE_TAIL) {
        out.truncate(out.len() - DEFLATE_TAIL.len());
    }
    out
}

/// Inflates the messages one end of a connection receives (RFC 7692
/// §7.2.2), fed in pieces as their frames arrive, under a limit on the
/// inflated size of a message.
///
/// For each message with RSV1 set: [`push`](Self::push) every piece of its
/// payload, then [`finish`](Self::finish), which appends [`DEFLATE_TAIL`]
/// and returns the message. An inflated size over the limit is
/// [`Error::MessageTooLarge`] (close code 1009) as soon as the piece that
/// crosses it is pushed; the output never grows past the limit plus one
/// byte, so a small message that inflates to gigabytes costs no more
/// memory than the limit. Data that is not DEFLATE is
/// [`Error::InvalidCompressedData`] (1007). After an error the inflater
/// stays failed, as the connection does.
///
/// A text message must then be checked as UTF-8, which the frame decoder
/// does not do for a compressed message: feed
/// [`Utf8Validator`](ringstream_core::ws::Utf8Validator) the bytes each
/// push adds ([`inflated`](Self::inflated)), or the whole message.
///
/// # Examples
///
/// The examples of RFC 7692 §7.2.3.1 and §7.2.3.2: "Hello", then "Hello"
/// again as a back-reference into the first message.
///
/// ```
/// use ringstream::ws::{Inflater, Role};
/// use ringstream_core::ws::{DeflateParams, Error};
///
/// let mut inflater = Inflater::new(&DeflateParams::new(), Role::Client, 1024);
/// inflater.push(&[0xf2, 0x48, 0xcd])?;
/// inflater.push(&[0xc9, 0xc9, 0x07, 0x00])?;
/// assert_eq!(inflater.finish()?, "Hello");
/// inflater.push(&[0xf2, 0x00, 0x11, 0x00, 0x01, 0x00])?;
/// assert_eq!(inflater.finish()?, "Hello");
///
/// // Not DEFLATE: a block type that does not exist.
/// let mut inflater = Inflater::new(&DeflateParams::new(), Role::Client, 1024);
/// assert_eq!(inflater.push(&[0xff, 0xff]), Err(Error::InvalidCompressedData));
/// # Ok::<(), Error>(())
/// ```
pub struct Inflater {
    max_message_len: usize,
    /// The peer compresses each message on its own: the state is dropped
    /// after each message.
    no_context_takeover: bool,
    /// Created by the first piece of a message.
    state: Option<Box<InflateState>>,
    /// The message's output: `len` bytes written, the rest zeroed room.
    out: Vec<u8>,
    len: usize,
    /// The DEFLATE stream ended (a block with BFINAL) in this message:
    /// what follows in it is ignored, and the next message starts a new
    /// stream.
    ended: bool,
    error: Option<Error>,
}

impl fmt::Debug for Inflater {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inflater")
            .field("max_message_len", &self.max_message_len)
            .field("no_context_takeover", &self.no_context_takeover)
            .field("inflated", &self.len)
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

impl Inflater {
    /// The inflater for the messages the end in `role` receives, as
    /// `params` (the negotiated response) says, with messages of at most
    /// `max_message_len` bytes once inflated (a connection passes its
    /// [`Limits::max_message_len`](ringstream_core::ws::Limits)).
    pub fn new(params: &DeflateParams, role: Role, max_message_len: usize) -> Inflater {
        Inflater {
            max_message_len,
            no_context_takeover: params.recv_no_context_takeover(role),
            state: None,
            out: Vec::new(),
            len: 0,
            ended: false,
            error: None,
        }
    }

    /// The largest inflated message taken.
    pub fn max_message_len(&self) -> usize {
        self.max_message_len
    }

    /// Whether each message is inflated on its own (the peer's
    /// `*_no_context_takeover`).
    pub fn no_context_takeover(&self) -> bool {
        self.no_context_takeover
    }

    /// Inflates the next piece of the current message's payload, and
    /// returns how many bytes it added to [`inflated`](Self::inflated).
    ///
    /// # Errors
    ///
    /// [`Error::MessageTooLarge`] once the message inflates past the limit,
    /// [`Error::InvalidCompressedData`] for data that is not DEFLATE, or
    /// the error the inflater failed with before.
    pub fn push(&mut self, compressed: &[u8]) -> Result<usize, Error> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let before = self.len;
        match self.inflate(compressed) {
            Ok(()) => Ok(self.len - before),
            Err(e) => {
                self.error = Some(e);
                self.state = None;
                self.out = Vec::new();
                self.len = 0;
                Err(e)
            }
        }
    }

    /// The current message, inflated so far.
    pub fn inflated(&self) -> &[u8] {
        &self.out[..self.len]
    }

    /// Ends the current message: inflates [`DEFLATE_TAIL`] and returns the
    /// whole message, without a copy. The inflater is then ready for the
    /// next message.
    ///
    /// # Errors
    ///
    /// As [`push`](Self::push).
    pub fn finish(&mut self) -> Result<Bytes, Error> {
        self.push(&DEFLATE_TAIL)?;
        let mut out = std::mem::take(&mut self.out);
        out.truncate(std::mem::take(&mut self.len));
        if self.no_context_takeover {
            self.state = None;
        } else if std::mem::take(&mut self.ended) {
            if let Some(state) = &mut self.state {
                state.reset(DataFormat::Raw);
            }
        }
        self.ended = false;
        Ok(Bytes::from(out))
    }

    fn inflate(&mut self, mut input: &[u8]) -> Result<(), Error> {
        if self.ended {
            return Ok(());
        }
        let state = self
            .state
            .get_or_insert_with(|| InflateState::new_boxed(DataFormat::Raw));
        loop {
            if self.len == self.out.len() {
                // Room for one byte past the limit, to see it crossed.
                let room = self
                    .max_message_len
                    .saturating_add(1)
                    .saturating_sub(self.len);
                let more = self
                    .len
                    .max(input.len().saturating_mul(4))
                    .max(MIN_GROWTH)
                    .min(room);
                self.out.reserve_exact(more);
                self.out.resize(self.len + more, 0);
            }
            let step = miniz_oxide::inflate::stream::inflate(
                state,
                input,
                &mut self.out[self.len..],
                MZFlush::None,
            );
            input = &input[step.bytes_consumed..];
            self.len += step.bytes_written;
            if self.len > self.max_message_len {
                return Err(Error::MessageTooLarge);
            }
            let room_left = self.len < self.out.len();
            match step.status {
                Ok(MZStatus::StreamEnd) => {
                    self.ended = true;
                    return Ok(());
                }
                Ok(_) if input.is_empty() && room_left => return Ok(()),
                // No progress with room and input left: not reached, but
                // it must not loop.
                Ok(_) if room_left && step.bytes_consumed == 0 && step.bytes_written == 0 => {
                    return Err(Error::InvalidCompressedData)
                }
                Ok(_) => {}
                // Called with no input and nothing pending: it needs more.
                Err(MZError::Buf) if input.is_empty() => return Ok(()),
                Err(_) => return Err(Error::InvalidCompressedData),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringstream_core::ws::{DeflateConfig, Utf8Validator};

    /// A small pseudo-random generator, so that the tests need no crate.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            self.0 >> 33
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        /// Text-like data: words from a small vocabulary, with some noise.
        fn text(&mut self, len: usize) -> Vec<u8> {
            const WORDS: [&str; 8] = [
                "stream ",
                "ring ",
                "buffer ",
                "socket ",
                "frame ",
                "deflate ",
                "héllo ",
                "{\"k\":1} ",
            ];
            let mut out = Vec::with_capacity(len + 16);
            while out.len() < len {
                if self.below(10) == 0 {
                    out.push(b'a' + self.below(26) as u8);
                } else {
                    out.extend_from_slice(WORDS[self.below(WORDS.len())].as_bytes());
                }
            }
            out.truncate(len);
            out
        }

        fn bytes(&mut self, len: usize) -> Vec<u8> {
            (0..len).map(|_| self.next() as u8).collect()
        }
    }

    fn params(server_nct: bool, client_nct: bool) -> DeflateParams {
        DeflateParams {
            server_no_context_takeover: server_nct,
            client_no_context_takeover: client_nct,
            ..DeflateParams::new()
        }
    }

    /// Feeds `compressed` in pieces of the given sizes (cycled) and
    /// finishes.
    fn inflate_in_pieces(
        inflater: &mut Inflater,
        compressed: &[u8],
        sizes: &[usize],
    ) -> Result<Bytes, Error> {
        let mut rest = compressed;
        let mut i = 0;
        while !rest.is_empty() {
            let n = sizes[i % sizes.len()].clamp(1, rest.len());
            inflater.push(&rest[..n])?;
            rest = &rest[n..];
            i += 1;
        }
        inflater.finish()
    }

    #[test]
    fn rfc_7692_examples_inflate() {
        let hello = [0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00];
        let examples: [&[u8]; 4] = [
            // §7.2.3.1, a message compressed on its own.
            &hello,
            // §7.2.3.3, a stored block.
            &[
                0x00, 0x05, 0x00, 0xfa, 0xff, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x00,
            ],
            // §7.2.3.4, a block with BFINAL set: what follows is ignored.
            &[0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x00],
            // §7.2.3.5, two blocks in one message.
            &[
                0xf2, 0x48, 0x05, 0x00, 0x00, 0x00, 0xff, 0xff, 0xca, 0xc9, 0xc9, 0x07, 0x00,
            ],
        ];
        for example in examples {
            for piece in 1..=example.len() {
                let mut inflater = Inflater::new(&params(false, false), Role::Client, 5);
                let got = inflate_in_pieces(&mut inflater, example, &[piece]).unwrap();
                assert_eq!(got, "Hello", "{example:x?} in pieces of {piece}");
                // The next message, in the same context (after BFINAL, a
                // new stream).
                let got = inflate_in_pieces(&mut inflater, &hello, &[piece]).unwrap();
                assert_eq!(got, "Hello");
            }
        }
        // §7.2.3.2: the second message refers back into the first.
        let mut inflater = Inflater::new(&params(false, false), Role::Client, 5);
        assert_eq!(
            inflate_in_pieces(&mut inflater, &hello, &[3]).unwrap(),
            "Hello"
        );
        let shared = [0xf2, 0x00, 0x11, 0x00, 0x01, 0x00];
        assert_eq!(
            inflate_in_pieces(&mut inflater, &shared, &[1]).unwrap(),
            "Hello"
        );
        // §7.2.3.6: an empty message is a single 0x00.
        assert_eq!(inflate_in_pieces(&mut inflater, &[0x00], &[1]).unwrap(), "");
    }

    #[test]
    fn rfc_7692_examples_deflate() {
        let mut deflater = Deflater::new(&params(false, false), Role::Server);
        assert_eq!(
            &deflater.compress(b"Hello")[..],
            [0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00]
        );
        // The second "Hello" is a back-reference; miniz codes it with
        // fixed Huffman codes as the RFC's example does, though not
        // necessarily in the same bits.
        let second = deflater.compress(b"Hello");
        assert_eq!(
            reference_inflate(&second, 15, &mut b"Hello".to_vec()),
            Ok(())
        );
        assert!(second.len() <= 6, "{second:x?}");
        assert_eq!(&deflater.compress(b"")[..], [0x00]);
        // Each on its own: the same bytes every time.
        let mut deflater = Deflater::new(&params(true, false), Role::Server);
        for _ in 0..3 {
            assert_eq!(
                &deflater.compress(b"Hello")[..],
                [0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00]
            );
        }
    }

    #[test]
    fn round_trips_with_and_without_context_takeover() {
        let mut rng = Rng(7);
        let sizes = [0usize, 1, 2, 5, 100, 1000, 4096, 40_000, 100_000, 1 << 20];
        for (server_nct, client_nct) in [(false, false), (true, false), (false, true), (true, true)]
        {
            let params = params(server_nct, client_nct);
            // Server to client and client to server.
            let mut server_tx = Deflater::new(&params, Role::Server);
            let mut client_rx = Inflater::new(&params, Role::Client, 1 << 20);
            let mut client_tx = Deflater::new(&params, Role::Client).with_level(1);
            let mut server_rx = Inflater::new(&params, Role::Server, 1 << 20);
            assert_eq!(server_tx.no_context_takeover(), server_nct);
            assert_eq!(client_rx.no_context_takeover(), server_nct);
            assert_eq!(client_tx.no_context_takeover(), client_nct);
            for round in 0..3 {
                for &size in &sizes {
                    let payload = match round {
                        0 => rng.text(size),
                        1 => rng.bytes(size),
                        _ => vec![b'z'; size],
                    };
                    let pieces = [1 + rng.below(3000), 1 + rng.below(20), 65_536];
                    let compressed = server_tx.compress(&payload);
                    let got = inflate_in_pieces(&mut client_rx, &compressed, &pieces).unwrap();
                    assert!(got == payload, "server->client {size} round {round}");
                    let compressed = client_tx.compress(&payload);
                    let got = inflate_in_pieces(&mut server_rx, &compressed, &pieces).unwrap();
                    assert!(got == payload, "client->server {size} round {round}");
                }
            }
            // Nothing kept between messages when the peer resets.
            assert_eq!(client_rx.state.is_some(), !server_nct);
            assert_eq!(server_rx.state.is_some(), !client_nct);
        }
    }

    #[test]
    fn many_small_messages_share_context() {
        let mut rng = Rng(11);
        let with = params(false, false);
        let without = params(true, true);
        let mut deflater = Deflater::new(&with, Role::Server);
        let mut alone = Deflater::new(&without, Role::Server);
        let mut inflater = Inflater::new(&with, Role::Client, 4096);
        let (mut shared_len, mut alone_len) = (0, 0);
        let mut history = Vec::new();
        let template = br#"{"type":"tick","symbol":"RING","price":"#;
        for i in 0..1000 {
            let mut message = template.to_vec();
            message.extend_from_slice(format!("{}}}", rng.below(100_000)).as_bytes());
            let compressed = deflater.compress(&message);
            shared_len += compressed.len();
            alone_len += alone.compress(&message).len();
            assert_eq!(
                inflate_in_pieces(&mut inflater, &compressed, &[1 + i % 7]).unwrap(),
                message
            );
            // An independent inflater agrees, with the same history.
            assert_eq!(reference_inflate(&compressed, 15, &mut history), Ok(()));
            assert!(history.ends_with(&message));
        }
        // Context takeover pays: later messages are mostly back-references.
        assert!(shared_len * 2 < alone_len, "{shared_len} vs {alone_len}");
    }

    #[test]
    fn messages_without_context_takeover_stand_alone() {
        // Interleaved connections on one thread share one compressor; each
        // message must inflate with no history at all.
        let mut rng = Rng(3);
        let alone = params(true, true);
        let mut a = Deflater::new(&alone, Role::Server);
        let mut b = Deflater::new(&alone, Role::Server).with_level(9);
        let mut c = Deflater::new(&alone, Role::Client);
        for i in 0..200 {
            let len = rng.below(5000);
            let payload = rng.text(len);
            let deflater = match i % 3 {
                0 => &mut a,
                1 => &mut b,
                _ => &mut c,
            };
            let compressed = deflater.compress(&payload);
            let mut history = Vec::new();
            assert_eq!(reference_inflate(&compressed, 15, &mut history), Ok(()));
            assert!(history == payload, "message {i}");
        }
    }

    #[test]
    fn small_server_windows_are_honoured() {
        let mut rng = Rng(5);
        for bits in 8..=15u8 {
            let offer = format!("permessage-deflate; server_max_window_bits={bits}");
            let params = DeflateConfig {
                server_no_context_takeover: false,
                ..DeflateConfig::DEFAULT
            }
            .negotiate([offer.as_bytes()])
            .unwrap();
            for level in [0u8, 1, 6, 9] {
                let mut deflater = Deflater::new(&params, Role::Server).with_level(level);
                assert_eq!(deflater.window_bits(), bits);
                let mut inflater = Inflater::new(&params, Role::Client, 1 << 20);
                let mut history = Vec::new();
                for size in [10, 300, 5000, 70_000] {
                    // Repeats far apart, to tempt long back-references.
                    let chunk = rng.text(size / 3 + 1);
                    let mut payload = chunk.clone();
                    payload.extend_from_slice(&rng.text(size / 3));
                    payload.extend_from_slice(&chunk);
                    let compressed = deflater.compress(&payload);
                    // Every back-reference lies within 2^bits bytes.
                    assert_eq!(
                        reference_inflate(&compressed, bits, &mut history),
                        Ok(()),
                        "window {bits} level {level} size {size}"
                    );
                    assert!(history.ends_with(&payload));
                    assert_eq!(
                        inflate_in_pieces(&mut inflater, &compressed, &[999]).unwrap(),
                        payload
                    );
                }
            }
        }
    }

    #[test]
    fn a_zip_bomb_is_too_large_without_allocating_it() {
        let limit = 1 << 20;
        // 10 MiB of zeros compress to about 10 KiB.
        let bomb = Deflater::new(&params(false, false), Role::Client)
            .with_level(9)
            .compress(&vec![0u8; 10 << 20]);
        assert!(bomb.len() < 20 << 10, "{}", bomb.len());
        for piece in [bomb.len(), 4096, 100, 1] {
            let mut inflater = Inflater::new(&params(false, false), Role::Server, limit);
            let mut largest = 0;
            let mut result = Ok(0);
            for chunk in bomb.chunks(piece) {
                result = inflater.push(chunk);
                largest = largest.max(inflater.out.capacity());
                if result.is_err() {
                    break;
                }
            }
            assert_eq!(result, Err(Error::MessageTooLarge), "pieces of {piece}");
            assert_eq!(Error::MessageTooLarge.close_code().as_u16(), 1009);
            assert!(largest <= limit + 1, "allocated {largest}");
            // The inflater stays failed, and freed what it had.
            assert_eq!(inflater.push(&[0]), Err(Error::MessageTooLarge));
            assert_eq!(inflater.finish(), Err(Error::MessageTooLarge));
            assert_eq!(inflater.out.capacity(), 0);
        }
        // Exactly the limit is taken.
        let exact = Deflater::new(&params(true, true), Role::Client).compress(&vec![7u8; limit]);
        let mut inflater = Inflater::new(&params(true, true), Role::Server, limit);
        assert_eq!(
            inflate_in_pieces(&mut inflater, &exact, &[333])
                .unwrap()
                .len(),
            limit
        );
        let over = Deflater::new(&params(true, true), Role::Client).compress(&vec![7u8; limit + 1]);
        let mut inflater = Inflater::new(&params(true, true), Role::Server, limit);
        assert_eq!(
            inflate_in_pieces(&mut inflater, &over, &[333]),
            Err(Error::MessageTooLarge)
        );
    }

    #[test]
    fn garbage_is_invalid_compressed_data() {
        let mut rng = Rng(9);
        let mut invalid = 0;
        for _ in 0..500 {
            let len = 1 + rng.below(200);
            let junk = rng.bytes(len);
            let mut inflater = Inflater::new(&params(false, false), Role::Server, 1 << 16);
            match inflate_in_pieces(&mut inflater, &junk, &[7]) {
                Ok(_) | Err(Error::MessageTooLarge) => {}
                Err(e) => {
                    assert_eq!(e, Error::InvalidCompressedData);
                    assert_eq!(e.close_code().as_u16(), 1007);
                    invalid += 1;
                }
            }
        }
        assert!(invalid > 100, "{invalid}");
        // A reserved block type.
        let mut inflater = Inflater::new(&params(false, false), Role::Server, 100);
        assert_eq!(inflater.push(&[0x07]), Err(Error::InvalidCompressedData));
        assert_eq!(inflater.finish(), Err(Error::InvalidCompressedData));
    }

    #[test]
    fn compressed_text_is_checked_by_the_caller() {
        let mut deflater = Deflater::new(&params(false, false), Role::Client);
        let mut inflater = Inflater::new(&params(false, false), Role::Server, 1 << 20);
        let text = "price: 10 \u{20ac}, ".repeat(1000);
        let compressed = deflater.compress(text.as_bytes());
        let mut utf8 = Utf8Validator::new();
        let mut checked = 0;
        for piece in compressed.chunks(5) {
            inflater.push(piece).unwrap();
            utf8.feed(&inflater.inflated()[checked..]).unwrap();
            checked = inflater.inflated().len();
        }
        let message = inflater.finish().unwrap();
        utf8.feed(&message[checked..]).unwrap();
        utf8.finish().unwrap();
        assert_eq!(message, text.as_bytes());
        // Invalid UTF-8 inflates fine; the validator refuses it.
        let compressed = deflater.compress(b"ok \xff not text");
        inflater.push(&compressed).unwrap();
        let message = inflater.finish().unwrap();
        assert_eq!(Utf8Validator::new().feed(&message), Err(Error::InvalidUtf8));
    }

    #[test]
    fn the_tail_is_stripped() {
        let mut rng = Rng(1);
        for nct in [false, true] {
            let mut deflater = Deflater::new(&params(nct, nct), Role::Server);
            let mut history = Vec::new();
            for size in [0, 1, 17, 65_535, 65_536, 200_000] {
                let payload = rng.bytes(size);
                let compressed = deflater.compress(&payload);
                // Data that does not compress grows by a few bytes a block.
                assert!(compressed.len() <= size + 5 * (size / 16_000 + 2), "{size}");
                assert!(!compressed.ends_with(&DEFLATE_TAIL));
                if nct {
                    history.clear();
                }
                assert_eq!(reference_inflate(&compressed, 15, &mut history), Ok(()));
                assert!(history.ends_with(&payload));
            }
        }
    }

    // ---- an independent inflater, for the tests -----------------------
    //
    // A plain reading of RFC 1951, sharing no code with miniz_oxide, that
    // checks each back-reference against the window the data may use.

    const LENGTH_BASE: [u16; 29] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
        131, 163, 195, 227, 258,
    ];
    const LENGTH_EXTRA: [u8; 29] = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ];
    const DIST_BASE: [u16; 30] = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
        2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
    ];
    const DIST_EXTRA: [u8; 30] = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12,
        13, 13,
    ];

    struct Huffman {
        count: [u16; 16],
        symbols: Vec<u16>,
    }

    impl Huffman {
        fn new(lengths: &[u8]) -> Huffman {
            let mut count = [0u16; 16];
            for &len in lengths {
                count[usize::from(len)] += 1;
            }
            let mut offsets = [0u16; 16];
            for len in 1..15 {
                offsets[len + 1] = offsets[len] + count[len];
            }
            let mut symbols = vec![0; lengths.len()];
            for (symbol, &len) in lengths.iter().enumerate() {
                if len != 0 {
                    symbols[usize::from(offsets[usize::from(len)])] = symbol as u16;
                    offsets[usize::from(len)] += 1;
                }
            }
            Huffman { count, symbols }
        }
    }

    struct Bits {
        data: Vec<u8>,
        pos: usize,
        buf: u32,
        len: u32,
    }

    impl Bits {
        fn byte(&mut self) -> Result<u8, &'static str> {
            let b = *self.data.get(self.pos).ok_or("out of input")?;
            self.pos += 1;
            Ok(b)
        }

        fn bits(&mut self, n: u32) -> Result<u32, &'static str> {
            while self.len < n {
                self.buf |= u32::from(self.byte()?) << self.len;
                self.len += 8;
            }
            let v = self.buf & ((1u32 << n) - 1);
            self.buf >>= n;
            self.len -= n;
            Ok(v)
        }

        fn decode(&mut self, h: &Huffman) -> Result<u16, &'static str> {
            let (mut code, mut first, mut index) = (0i32, 0i32, 0i32);
            for len in 1..16 {
                code |= self.bits(1)? as i32;
                let count = i32::from(h.count[len]);
                if code - count < first {
                    return Ok(h.symbols[(index + (code - first)) as usize]);
                }
                index += count;
                first += count;
                first <<= 1;
                code <<= 1;
            }
            Err("bad code")
        }
    }

    /// Inflates a message (the tail is appended here), appending to
    /// `history` (the earlier messages, for context takeover); fails on a
    /// back-reference farther than `2^window_bits` or than `history`.
    fn reference_inflate(
        compressed: &[u8],
        window_bits: u8,
        history: &mut Vec<u8>,
    ) -> Result<(), &'static str> {
        let mut bits = Bits {
            data: [compressed, &DEFLATE_TAIL].concat(),
            pos: 0,
            buf: 0,
            len: 0,
        };
        let window = 1usize << window_bits;
        loop {
            let last = bits.bits(1)? == 1;
            match bits.bits(2)? {
                0 => {
                    bits.buf = 0;
                    bits.len = 0;
                    let len = u16::from_le_bytes([bits.byte()?, bits.byte()?]);
                    let nlen = u16::from_le_bytes([bits.byte()?, bits.byte()?]);
                    if len != !nlen {
                        return Err("bad stored length");
                    }
                    for _ in 0..len {
                        history.push(bits.byte()?);
                    }
                }
                kind @ (1 | 2) => {
                    let (lit, dist) = if kind == 1 {
                        let mut lengths = [8u8; 288];
                        lengths[144..256].fill(9);
                        lengths[256..280].fill(7);
                        (Huffman::new(&lengths), Huffman::new(&[5; 30]))
                    } else {
                        let nlen = bits.bits(5)? as usize + 257;
                        let ndist = bits.bits(5)? as usize + 1;
                        let ncode = bits.bits(4)? as usize + 4;
                        const ORDER: [usize; 19] = [
                            16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
                        ];
                        let mut lengths = [0u8; 19];
                        for &i in &ORDER[..ncode] {
                            lengths[i] = bits.bits(3)? as u8;
                        }
                        let code = Huffman::new(&lengths);
                        let mut lengths = Vec::with_capacity(nlen + ndist);
                        while lengths.len() < nlen + ndist {
                            let symbol = bits.decode(&code)?;
                            let (value, repeat) = match symbol {
                                0..=15 => (symbol as u8, 1),
                                16 => (*lengths.last().ok_or("repeat first")?, 3 + bits.bits(2)?),
                                17 => (0, 3 + bits.bits(3)?),
                                _ => (0, 11 + bits.bits(7)?),
                            };
                            lengths.extend(std::iter::repeat_n(value, repeat as usize));
                        }
                        if lengths.len() != nlen + ndist {
                            return Err("too many lengths");
                        }
                        (
                            Huffman::new(&lengths[..nlen]),
                            Huffman::new(&lengths[nlen..]),
                        )
                    };
                    loop {
                        let symbol = usize::from(bits.decode(&lit)?);
                        if symbol < 256 {
                            history.push(symbol as u8);
                            continue;
                        }
                        if symbol == 256 {
                            break;
                        }
                        let i = symbol - 257;
                        let len = usize::from(*LENGTH_BASE.get(i).ok_or("bad length")?)
                            + bits.bits(u32::from(LENGTH_EXTRA[i]))? as usize;
                        let d = usize::from(bits.decode(&dist)?);
                        let distance = usize::from(*DIST_BASE.get(d).ok_or("bad distance")?)
                            + bits.bits(u32::from(DIST_EXTRA[d]))? as usize;
                        if distance > window {
                            return Err("distance beyond the window");
                        }
                        if distance > history.len() {
                            return Err("distance before the start");
                        }
                        for _ in 0..len {
                            history.push(history[history.len() - distance]);
                        }
                    }
                }
                _ => return Err("reserved block type"),
            }
            if last || (bits.pos == bits.data.len() && bits.len == 0) {
                return Ok(());
            }
        }
    }

    #[test]
    fn the_reference_inflater_reads_the_rfc_examples() {
        let mut history = Vec::new();
        let hello: &[u8] = &[0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00];
        assert_eq!(reference_inflate(hello, 15, &mut history), Ok(()));
        let shared: &[u8] = &[0xf2, 0x00, 0x11, 0x00, 0x01, 0x00];
        assert_eq!(reference_inflate(shared, 15, &mut history), Ok(()));
        assert_eq!(history, b"HelloHello");
        // The back-reference is 5 bytes: too far for no history.
        assert!(reference_inflate(shared, 15, &mut Vec::new()).is_err());
    }
}
