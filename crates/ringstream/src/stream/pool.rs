//! Idle blocks kept by each thread: a stream that goes idle gives its read
//! block and write buffer back here instead of freeing them, and the next
//! stream on the thread to read or write takes one instead of allocating.
//!
//! A connection that waits between messages then costs neither a `malloc`
//! and `free` of a block per message nor, for a read block that hands
//! off `Bytes`, the reference count's allocation that the block's first
//! split makes. The pool is small and bounded: [`KEPT`] blocks of each
//! kind of at most [`MAX_CAPACITY`] bytes per thread, whatever the number
//! of connections, and an idle connection still holds no block.

use std::cell::Cell;

use bytes::BytesMut;

/// Blocks of each kind a thread keeps at most. A thread serves one
/// connection at a time, so a few cover the connections that wake in a
/// row; a block handed back when the pool is full is freed.
pub(crate) const KEPT: usize = 4;

/// The largest block kept (a larger one, grown for a large message, is
/// freed when it is given back).
pub(crate) const MAX_CAPACITY: usize = 64 * 1024;

thread_local! {
    // Cells rather than a `RefCell<Vec<_>>`: a take or a give is a few
    // moves, with no borrow flag and no allocation of its own.
    static READ: [Cell<Option<BytesMut>>; KEPT] = const { [const { Cell::new(None) }; KEPT] };
    static WRITE: [Cell<Option<Vec<u8>>>; KEPT] = const { [const { Cell::new(None) }; KEPT] };
    static FILLED: [Cell<Option<Vec<u8>>>; KEPT] = const { [const { Cell::new(None) }; KEPT] };
}

/// The first block in `slots` with a capacity of at least `min`.
pub(crate) fn take<B>(
    slots: &[Cell<Option<B>>],
    min: usize,
    capacity: fn(&B) -> usize,
) -> Option<B> {
    for slot in slots {
        if let Some(block) = slot.take() {
            if capacity(&block) >= min {
                return Some(block);
            }
            slot.set(Some(block));
        }
    }
    None
}

/// Puts `block` in the first free slot (`true`), or drops it when there
/// is none (`false`).
pub(crate) fn give<B>(slots: &[Cell<Option<B>>], block: B) -> bool {
    let mut block = Some(block);
    for slot in slots {
        // Swaps `block` into an empty slot; a full one gives its block
        // back to be put back at once.
        block = slot.replace(block);
        if block.is_none() {
            return true;
        }
        block = slot.replace(block);
    }
    false
}

/// A read block of at least `min` bytes from the pool, if it has one.
#[inline]
pub(crate) fn take_read(min: usize) -> Option<BytesMut> {
    READ.try_with(|slots| take(slots, min, BytesMut::capacity))
        .ok()
        .flatten()
}

/// Gives an empty read block back. It is kept when the pool has room,
/// nothing else refers to it (every `Bytes` split off it has been
/// dropped), and its whole allocation is at least `min` and at most
/// [`MAX_CAPACITY`] bytes; else it is freed here.
pub(crate) fn give_read(mut block: BytesMut, min: usize) {
    debug_assert!(block.is_empty());
    // Reclaims the whole allocation when this is its only owner.
    if !block.try_reclaim(min) || block.capacity() > MAX_CAPACITY {
        return;
    }
    let _ = READ.try_with(|slots| give(slots, block));
}

/// A write buffer with room for at least `min` bytes from the pool, if it
/// has one.
#[inline]
pub(crate) fn take_write(min: usize) -> Option<Vec<u8>> {
    WRITE
        .try_with(|slots| take(slots, min, Vec::capacity))
        .ok()
        .flatten()
}

/// Gives a write buffer back (its contents are discarded). It is kept
/// when the pool has room and it is at most [`MAX_CAPACITY`] bytes.
#[inline]
pub(crate) fn give_write(mut buffer: Vec<u8>) {
    if buffer.capacity() == 0 || buffer.capacity() > MAX_CAPACITY {
        return;
    }
    buffer.clear();
    let _ = WRITE.try_with(|slots| give(slots, buffer));
}

/// A buffer of at least `min` initialised bytes (its length) from the
/// pool, if it has one: for code that lends `&mut [u8]` to be written
/// into (TLS records), which then needs no zeroing. Its bytes are what the
/// last user left.
#[cfg_attr(not(feature = "tls"), allow(dead_code))]
pub(crate) fn take_filled(min: usize) -> Option<Vec<u8>> {
    FILLED
        .try_with(|slots| take(slots, min, Vec::len))
        .ok()
        .flatten()
}

/// Gives a buffer taken with [`take_filled`] (or one as long as its
/// initialised bytes) back. It is kept when the pool has room and it is
/// at most [`MAX_CAPACITY`] bytes long.
#[cfg_attr(not(feature = "tls"), allow(dead_code))]
pub(crate) fn give_filled(buffer: Vec<u8>) {
    if buffer.is_empty() || buffer.len() > MAX_CAPACITY {
        return;
    }
    let _ = FILLED.try_with(|slots| give(slots, buffer));
}

/// The number of read and write blocks this thread's pool holds.
#[cfg(test)]
pub(crate) fn held() -> (usize, usize) {
    fn count<B>(slots: &[Cell<Option<B>>]) -> usize {
        slots
            .iter()
            .filter(|slot| {
                let block = slot.take();
                let full = block.is_some();
                slot.set(block);
                full
            })
            .count()
    }
    (READ.with(|s| count(s)), WRITE.with(|s| count(s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain() {
        while take_read(0).is_some() {}
        while take_write(0).is_some() {}
    }

    #[test]
    fn a_read_block_comes_back_whole_once_its_chunks_are_dropped() {
        drain();
        let mut block = BytesMut::with_capacity(1024);
        block.extend_from_slice(&[7; 300]);
        let chunk = block.split_to(300).freeze();
        // Still shared with `chunk`: freed rather than kept.
        give_read(block.split(), 1024);
        assert_eq!(held().0, 0);

        let mut block = BytesMut::with_capacity(1024);
        block.extend_from_slice(&[7; 300]);
        let other = block.split_to(300).freeze();
        drop(other);
        give_read(block, 1024);
        assert_eq!(held().0, 1);
        let again = take_read(1024).expect("the block is kept");
        assert!(again.capacity() >= 1024);
        assert!(again.is_empty());
        assert_eq!(chunk.len(), 300);
    }

    #[test]
    fn the_pool_is_bounded_and_keeps_no_large_block() {
        drain();
        for _ in 0..KEPT + 3 {
            give_read(BytesMut::with_capacity(4096), 4096);
            give_write(Vec::with_capacity(4096));
        }
        assert_eq!(held(), (KEPT, KEPT));
        drain();
        give_read(BytesMut::with_capacity(MAX_CAPACITY + 1), 1);
        give_write(Vec::with_capacity(MAX_CAPACITY + 1));
        assert_eq!(held(), (0, 0));
    }

    #[test]
    fn a_block_smaller_than_asked_for_stays_in_the_pool() {
        drain();
        give_read(BytesMut::with_capacity(1024), 1024);
        give_write(Vec::with_capacity(1024));
        assert!(take_read(4096).is_none());
        assert!(take_write(4096).is_none());
        assert_eq!(held(), (1, 1));
        let mut buffer = take_write(512).expect("large enough");
        assert!(buffer.is_empty());
        buffer.push(1);
        give_write(buffer);
        assert!(take_write(1).expect("kept").is_empty());
    }
}
