//! Body bytes written straight into the connection's own transmit space
//! (see the parent module's "In place").

use core::fmt;
use core::future::poll_fn;
use core::ops::Range;
use core::task::Poll;

use embassy_time::with_timeout;
use embedded_io_async::{Read, Write};
use ringstream_core::h1::Encoder;
use ringstream_core::h1::CRLF;

use super::{Error, FillError, Filled, Open, Output, Responder, State, MIN_IN_PLACE};
use crate::in_place::PollInPlace;

impl<IO: Read + Write> Responder<'_, IO> {
    /// Sends the chunk open in place, if there is one.
    pub(super) async fn seal_in_place(&mut self) -> Result<(), Error<IO::Error>> {
        match (self.in_place, self.open) {
            (Some(poll), Some(_)) => self.fill_in_place(poll, Output::Seal).await.map(drop),
            _ => Ok(()),
        }
    }

    /// Writes `output` into the free space the connection lends, after
    /// what the transmit buffer holds ready to send (the head, a chunk
    /// that overflowed before; copied there, so that all of it leaves in
    /// one piece), within the write deadline. The overflow of a `write!` is
    /// left in the transmit buffer as body bytes waiting to be framed.
    pub(super) async fn fill_in_place(
        &mut self,
        poll: PollInPlace<IO>,
        mut output: Output<'_, '_>,
    ) -> Result<Filled, Error<IO::Error>> {
        // Body bytes waiting in the transmit buffer are framed first: then
        // everything there is ready to send.
        if self.fill > self.data_start {
            self.seal()?;
        }
        let Responder {
            io,
            config,
            tx,
            out_start,
            committed,
            gap,
            state,
            open,
            copied,
            ..
        } = self;
        let State::Body { encoder, .. } = state else {
            return Err(Error::Misuse);
        };
        let ready = *out_start..*committed;
        let mut outcome = None;
        let mut fill = |free: &mut [u8]| {
            let (send, filled) = fill_free(
                free,
                open,
                encoder,
                &mut output,
                tx,
                ready.clone(),
                *gap,
                copied,
            );
            outcome = Some(filled);
            send
        };
        // Most of the time there is room at once: no deadline to set up.
        let lent = match poll_fn(|cx| Poll::Ready(poll(&mut **io, cx, &mut fill))).await {
            Poll::Ready(lent) => lent,
            Poll::Pending => {
                match with_timeout(
                    config.io_timeout,
                    poll_fn(|cx| poll(&mut **io, cx, &mut fill)),
                )
                .await
                {
                    Ok(lent) => lent,
                    Err(_) => return Err(Error::TimedOut),
                }
            }
        };
        if let Err(e) = lent {
            return Err(Error::Io(e));
        }
        let filled = match outcome {
            Some(Ok(filled)) => filled,
            Some(Err(FillError::Response(e))) => return Err(Error::Response(e)),
            Some(Err(FillError::Format)) => return Err(Error::Format),
            Some(Err(FillError::Lost)) | None => {
                return Err(Error::Response(ringstream_core::Error::OutOfSpace))
            }
        };
        if filled.too_small {
            return Ok(filled);
        }
        // What was ready went out with the body bytes.
        self.out_start = 0;
        self.committed = 0;
        self.data_start = self.gap;
        self.fill = self.gap + filled.spilled;
        Ok(filled)
    }
}

/// Writes `output` into `free`, the connection's free transmit space:
/// first the bytes `tx[ready]` (a head, framing) when no chunk is open,
/// then the bytes of the open chunk (moved to their place if the space
/// moved; the ready bytes before it among them), then `output`, whose overflow (of a `write!`) goes into
/// `tx[gap..]`. Returns how many bytes of `free` to send now: the ready
/// bytes, and the body bytes once they can be framed — at once on a body of
/// known length, when the space is full or `output` is [`Output::Seal`] on
/// a chunked one (a chunk stays open, unsent, across writes until then).
#[allow(clippy::too_many_arguments)]
fn fill_free(
    free: &mut [u8],
    open: &mut Option<Open>,
    encoder: &mut Encoder,
    output: &mut Output<'_, '_>,
    tx: &mut [u8],
    ready: Range<usize>,
    gap: usize,
    copied: &mut usize,
) -> (usize, Result<Filled, FillError>) {
    let (mut len, lead, prefix, cap) = match open.take() {
        Some(kept) => {
            // The kept bytes are where they were written; at the start of
            // the space unless it moved (a ring that emptied starts over).
            let at = free.as_ptr() as usize;
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
            (kept.len, kept.lead, kept.prefix, kept.cap)
        }
        None => {
            let lead = ready.len();
            let prefix = encoder.padded_prefix_len(free.len().saturating_sub(lead));
            if free.len() < lead + prefix + MIN_IN_PLACE + CRLF.len() {
                let filled = Filled {
                    too_small: true,
                    ..Filled::default()
                };
                return (0, Ok(filled));
            }
            if let (Some(dst), Some(src)) = (free.get_mut(..lead), tx.get(ready)) {
                dst.copy_from_slice(src);
                *copied += lead;
            }
            // No more data than the size line reserved can count.
            let countable = match prefix.checked_sub(CRLF.len()) {
                Some(digits) if digits > 0 => 1u64
                    .checked_shl(4 * digits as u32)
                    .map_or(usize::MAX, |n| usize::try_from(n - 1).unwrap_or(usize::MAX)),
                _ => usize::MAX,
            };
            (
                lead + prefix,
                lead,
                prefix,
                (lead + prefix).saturating_add(countable),
            )
        }
    };
    let at = free.as_ptr() as usize;
    // Room for data: up to the CRLF that ends a chunk.
    let limit = (free.len() - CRLF.len()).min(cap);
    let mut filled = Filled::default();
    let full = match output {
        Output::Fmt(args) => {
            let spill_end = tx.len() - CRLF.len();
            let mut out = Overflow {
                first: free.get_mut(len..limit).unwrap_or_default(),
                first_len: 0,
                second: tx.get_mut(gap..spill_end).unwrap_or_default(),
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
        // A chunk goes on across writes until it is sent (and with it
        // what was ready before it).
        *open = Some(Open {
            at,
            len,
            lead,
            prefix,
            cap,
        });
        return (0, Ok(filled));
    }
    let data = len - lead - prefix;
    let frame = match encoder.encode_padded(data, prefix) {
        Ok(frame) => frame,
        Err(e) => return (0, Err(FillError::Response(e))),
    };
    if data == 0 {
        // Nothing but the reserved line after the ready bytes: dropped.
        return (lead, Ok(filled));
    }
    let suffix = frame.suffix();
    let end = len + suffix.len();
    if end > free.len() || frame.prefix().len() != prefix {
        return (0, Err(FillError::Lost));
    }
    if let Some(p) = free.get_mut(lead..lead + prefix) {
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
    #[inline]
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let bytes = s.as_bytes();
        let end = self.first_len + bytes.len();
        if let Some(dst) = self.first.get_mut(self.first_len..end) {
            // The usual case: it fits where the socket will send it from.
            dst.copy_from_slice(bytes);
            self.first_len = end;
            return Ok(());
        }
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
