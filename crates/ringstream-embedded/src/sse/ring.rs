//! The [`Broadcaster`](super::Broadcaster)'s ring: the last events'
//! encoded bytes, wrapping over `BYTES`, and where each event lies.

/// Where one event lies in the ring.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    /// Absolute byte position of its first byte (`% BYTES` in the ring).
    pub(super) start: u64,
    pub(super) len: usize,
    /// Its id: offset in the event and length.
    pub(super) id: Option<(usize, usize)>,
}

/// The ring, behind one `RefCell`.
pub(super) struct Ring<const SLOTS: usize, const BYTES: usize> {
    pub(super) bytes: [u8; BYTES],
    /// Event `seq` is in `slots[seq % SLOTS]` while `oldest <= seq < next`.
    pub(super) slots: [Slot; SLOTS],
    pub(super) oldest: u64,
    pub(super) next: u64,
    /// Absolute byte position after the newest event.
    pub(super) end: u64,
    pub(super) closed: bool,
    pub(super) dropped_total: u64,
}

impl<const SLOTS: usize, const BYTES: usize> Ring<SLOTS, BYTES> {
    pub(super) fn slot(&self, seq: u64) -> Option<&Slot> {
        self.slots.get(usize::try_from(seq % SLOTS as u64).ok()?)
    }

    /// Byte `at` (absolute) of the ring.
    pub(super) fn byte(&self, at: u64) -> u8 {
        let i = usize::try_from(at % BYTES as u64).unwrap_or(0);
        self.bytes.get(i).copied().unwrap_or(0)
    }

    /// Copies `len` bytes from absolute position `at` into `out`, in at most
    /// two pieces (the ring's two halves).
    pub(super) fn copy_out(&self, at: u64, out: &mut [u8]) {
        let i = usize::try_from(at % BYTES as u64).unwrap_or(0);
        let first = out.len().min(BYTES - i);
        let (a, b) = out.split_at_mut(first);
        a.copy_from_slice(self.bytes.get(i..i + first).unwrap_or_default());
        b.copy_from_slice(self.bytes.get(..b.len()).unwrap_or_default());
    }

    /// Copies `piece` in at absolute position `at`, wrapping.
    pub(super) fn copy_in(&mut self, at: u64, piece: &[u8]) {
        let i = usize::try_from(at % BYTES as u64).unwrap_or(0);
        let first = piece.len().min(BYTES - i);
        let (a, b) = piece.split_at(first);
        if let Some(dst) = self.bytes.get_mut(i..i + first) {
            dst.copy_from_slice(a);
        }
        if let Some(dst) = self.bytes.get_mut(..b.len()) {
            dst.copy_from_slice(b);
        }
    }

    /// The sequence number of the event held with id `id`, newest first.
    pub(super) fn find(&self, id: &[u8]) -> Option<u64> {
        (self.oldest..self.next).rev().find(|&seq| {
            let Some(Slot {
                start,
                id: Some((offset, len)),
                ..
            }) = self.slot(seq).copied()
            else {
                return false;
            };
            len == id.len()
                && id
                    .iter()
                    .enumerate()
                    .all(|(k, &b)| self.byte(start + (offset + k) as u64) == b)
        })
    }
}
