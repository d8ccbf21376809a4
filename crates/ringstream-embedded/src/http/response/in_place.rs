//! Body bytes written straight into the connection's own transmit space
//! (see the parent module's "In place").

use core::fmt;
use core::future::poll_fn;

use embassy_time::with_timeout;
use embedded_io_async::{Read, Write};
use ringstream_core::h1::Encoder;
use ringstream_core::h1::CRLF;

use super::{Error, FillError, Filled, Open, Output, Responder, State, MIN_IN_PLACE};
use crate::in_place::PollInPlace;

impl<IO: Read + Write> Responder<'_, IO> {
    /// Sends what the transmit buffer holds, so that body bytes may be
    /// written in place after it. (While a chunk is open in place, it is
    /// empty.)
    pub(super) async fn flush_buffered(&mut self) -> Result<(), Error<IO::Error>> {
        if self.committed > self.out_start || self.fill > self.data_start {
            self.flush_body().await?;
        }
        Ok(())
    }

    /// Sends the chunk open in place, if there is one.
    pub(super) async fn seal_in_place(&mut self) -> Result<(), Error<IO::Error>> {
        match (self.in_place, self.open) {
            (Some(poll), Some(_)) => self.fill_in_place(poll, Output::Seal).await.map(drop),
            _ => Ok(()),
        }
    }

    /// Writes `output` into the free space the connection lends, within
    /// the write deadline. The transmit buffer is empty (see
    /// [`flush_buffered`](Self::flush_buffered)); the overflow of a
    /// `write!` is left in it as body bytes waiting to be framed.
    pub(super) async fn fill_in_place(
        &mut self,
        poll: PollInPlace<IO>,
        mut output: Output<'_, '_>,
    ) -> Result<Filled, Error<IO::Error>> {
        let Responder {
            io,
            config,
            tx,
            gap,
            state,
            open,
            copied,
            ..
        } = self;
        let State::Body { encoder, .. } = state else {
            return Err(Error::Misuse);
        };
        let spill_end = tx.len() - CRLF.len();
        let spill = tx.get_mut(*gap..spill_end).unwrap_or_default();
        let mut outcome = None;
        let mut fill = |free: &mut [u8]| {
            let (send, filled) = fill_free(free, open, encoder, &mut output, spill, copied);
            outcome = Some(filled);
            send
        };
        let lent = with_timeout(
            config.io_timeout,
            poll_fn(|cx| poll(&mut **io, cx, &mut fill)),
        )
        .await;
        match lent {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(Error::Io(e)),
            Err(_) => return Err(Error::TimedOut),
        }
        let filled = match outcome {
            Some(Ok(filled)) => filled,
            Some(Err(FillError::Response(e))) => return Err(Error::Response(e)),
            Some(Err(FillError::Format)) => return Err(Error::Format),
            Some(Err(FillError::Lost)) | None => {
                return Err(Error::Response(ringstream_core::Error::OutOfSpace))
            }
        };
        if filled.spilled > 0 {
            self.fill = self.data_start + filled.spilled;
        }
        Ok(filled)
    }
}

/// Writes `output` into `free`, the connection's free transmit space,
/// after the bytes of the open chunk (moved to its start if the space
/// moved), and the overflow of a `write!` into `spill`. Returns how many
/// bytes of `free` to send now: none while a chunk stays open (on a chunked
/// body, until the space is full or `output` is [`Output::Seal`]), else
/// the chunk with its size line and CRLF, or the bytes of a body of known
/// length.
fn fill_free(
    free: &mut [u8],
    open: &mut Option<Open>,
    encoder: &mut Encoder,
    output: &mut Output<'_, '_>,
    spill: &mut [u8],
    copied: &mut usize,
) -> (usize, Result<Filled, FillError>) {
    let at = free.as_ptr() as usize;
    let (mut len, prefix) = match open.take() {
        Some(kept) => {
            // The kept bytes are where they were written; at the start of
            // the space unless it moved (a ring that emptied starts over).
            let Some(offset) = kept
                .at
                .checked_sub(at)
                .filter(|o| o + kept.len + CRLF.len() <= free.len())
            else {
                return (0, Err(FillError::Lost));
            };
            if offset > 0 {
                free.copy_within(offset..offset + kept.len, 0);
                *copied += kept.len;
            }
            (kept.len, kept.prefix)
        }
        None => {
            let prefix = encoder.padded_prefix_len(free.len());
            if free.len() < prefix + MIN_IN_PLACE + CRLF.len() {
                let filled = Filled {
                    too_small: true,
                    ..Filled::default()
                };
                return (0, Ok(filled));
            }
            (prefix, prefix)
        }
    };
    // Room for data: up to the CRLF that ends a chunk, and no more than
    // the size line reserved can count.
    let countable = match prefix.checked_sub(CRLF.len()) {
        Some(digits) if digits > 0 => 1u64
            .checked_shl(4 * digits as u32)
            .map_or(usize::MAX, |n| usize::try_from(n - 1).unwrap_or(usize::MAX)),
        _ => usize::MAX,
    };
    let limit = (free.len() - CRLF.len()).min(prefix.saturating_add(countable));
    let mut filled = Filled::default();
    let full = match output {
        Output::Fmt(args) => {
            let room = free.get_mut(len..limit).unwrap_or_default();
            let mut out = Overflow {
                first: room,
                first_len: 0,
                second: spill,
                second_len: 0,
            };
            if fmt::write(&mut out, *args).is_err() {
                return (0, Err(FillError::Format));
            }
            len += out.first_len;
            filled.spilled = out.second_len;
            filled.spilled > 0
        }
        Output::Bytes(data) => {
            let n = data.len().min(limit - len);
            if let (Some(dst), Some(src)) = (free.get_mut(len..len + n), data.get(..n)) {
                dst.copy_from_slice(src);
            }
            *copied += n;
            len += n;
            filled.taken = n;
            len == limit
        }
        Output::Seal => true,
    };
    if prefix > 0 && !full {
        // A chunk goes on across writes until it is sent.
        *open = Some(Open { at, len, prefix });
        return (0, Ok(filled));
    }
    let data = len - prefix;
    let frame = match encoder.encode_padded(data, prefix) {
        Ok(frame) => frame,
        Err(e) => return (0, Err(FillError::Response(e))),
    };
    if data == 0 {
        // Nothing but the reserved line: dropped.
        return (0, Ok(filled));
    }
    let suffix = frame.suffix();
    let end = len + suffix.len();
    if end > free.len() || frame.prefix().len() != prefix {
        return (0, Err(FillError::Lost));
    }
    if let Some(p) = free.get_mut(..prefix) {
        p.copy_from_slice(frame.prefix());
    }
    if let Some(s) = free.get_mut(len..end) {
        s.copy_from_slice(suffix);
    }
    (end, Ok(filled))
}

/// A `fmt::Write` into two slices, the second taking what the first has
/// no room for.
struct Overflow<'a, 'b> {
    first: &'a mut [u8],
    first_len: usize,
    second: &'b mut [u8],
    second_len: usize,
}

impl fmt::Write for Overflow<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let bytes = s.as_bytes();
        let n = bytes.len().min(self.first.len() - self.first_len);
        let (now, rest) = bytes.split_at(n);
        if let Some(dst) = self.first.get_mut(self.first_len..self.first_len + n) {
            dst.copy_from_slice(now);
        }
        self.first_len += n;
        let dst = self
            .second
            .get_mut(self.second_len..self.second_len + rest.len())
            .ok_or(fmt::Error)?;
        dst.copy_from_slice(rest);
        self.second_len += rest.len();
        Ok(())
    }
}
