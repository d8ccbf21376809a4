//! permessage-deflate (RFC 7692) on one connection, as the socket uses it:
//! inflating a compressed message as its pieces arrive (checking a text
//! message's UTF-8 on the inflated bytes) and compressing messages sent.
//! Without the `deflate` feature no offer is accepted and none of this
//! runs.

use bytes::Bytes;
use ringstream_core::ws::{DeflateParams, Error, Role};

#[cfg(feature = "deflate")]
/// Messages shorter than this many bytes are sent uncompressed: the deflate
/// block costs more than it saves.
const MIN_COMPRESSED: usize = 64;

#[cfg(feature = "deflate")]
pub(super) struct Compression {
    deflater: super::Deflater,
    inflater: super::Inflater,
    /// The UTF-8 check of a compressed text message, and how many of its
    /// inflated bytes it has seen.
    utf8: Option<ringstream_core::ws::Utf8Validator>,
    checked: usize,
}

#[cfg(feature = "deflate")]
impl Compression {
    pub(super) fn new(params: &DeflateParams, role: Role, max_message_len: usize) -> Compression {
        Compression {
            deflater: super::Deflater::new(params, role),
            inflater: super::Inflater::new(params, role, max_message_len),
            utf8: None,
            checked: 0,
        }
    }

    /// A compressed message begins.
    pub(super) fn start(&mut self, text: bool) {
        self.utf8 = text.then(ringstream_core::ws::Utf8Validator::new);
        self.checked = 0;
    }

    /// Inflates one piece of the message.
    pub(super) fn push(&mut self, piece: &[u8]) -> Result<(), Error> {
        self.inflater.push(piece)?;
        if let Some(utf8) = &mut self.utf8 {
            let inflated = self.inflater.inflated();
            utf8.feed(inflated.get(self.checked..).unwrap_or_default())?;
            self.checked = inflated.len();
        }
        Ok(())
    }

    /// The whole inflated message.
    pub(super) fn finish(&mut self) -> Result<Bytes, Error> {
        let data = self.inflater.finish()?;
        if let Some(mut utf8) = self.utf8.take() {
            utf8.feed(data.get(self.checked..).unwrap_or_default())?;
            utf8.finish()?;
        }
        Ok(data)
    }

    /// The payload to send for `data`, and whether it is compressed.
    pub(super) fn compress(&mut self, data: Bytes) -> (Bytes, bool) {
        if data.len() < MIN_COMPRESSED {
            return (data, false);
        }
        (self.deflater.compress(&data), true)
    }
}

/// Without the `deflate` feature: never made (no offer is accepted).
#[cfg(not(feature = "deflate"))]
pub(super) enum Compression {}

#[cfg(not(feature = "deflate"))]
impl Compression {
    pub(super) fn new(_: &DeflateParams, _: Role, _: usize) -> Option<Compression> {
        None
    }

    pub(super) fn start(&mut self, _: bool) {
        match *self {}
    }

    pub(super) fn push(&mut self, _: &[u8]) -> Result<(), Error> {
        match *self {}
    }

    pub(super) fn finish(&mut self) -> Result<Bytes, Error> {
        match *self {}
    }

    pub(super) fn compress(&mut self, _: Bytes) -> (Bytes, bool) {
        match *self {}
    }
}

/// Whether this build can compress (the `deflate` feature).
pub(super) const AVAILABLE: bool = cfg!(feature = "deflate");

/// The connection's compression for negotiated `params`.
pub(super) fn for_params(
    params: Option<&DeflateParams>,
    role: Role,
    max_message_len: usize,
) -> Option<Box<Compression>> {
    #[cfg(feature = "deflate")]
    {
        params.map(|p| Box::new(Compression::new(p, role, max_message_len)))
    }
    #[cfg(not(feature = "deflate"))]
    {
        params.and_then(|p| Compression::new(p, role, max_message_len).map(Box::new))
    }
}
