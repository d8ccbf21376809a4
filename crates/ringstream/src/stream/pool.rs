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

use std::cell::RefCell;

use bytes::BytesMut;

/// Blocks of each kind a thread keeps at most. A thread serves one
/// connection at a time, so a few cover the connections that wake in a
/// row; a block handed back when the pool is full is freed.
pub(crate) const KEPT: usize = 4;

/// The largest block kept (a larger one, grown for a large message, is
/// freed when it is given back).
pub(crate) const MAX_CAPACITY: usize = 64 * 1024;

struct Pool {
    read: Vec<BytesMut>,
    write: Vec<Vec<u8>>,
}

thread_local! {
    static POOL: RefCell<Pool> = const {
        RefCell::new(Pool {
            read: Vec::new(),
            write: Vec::new(),
        })
    };
}

/// A read block of at least `min` bytes from the pool, if it has one.
pub(crate) fn take_read(min: usize) -> Option<BytesMut> {
    POOL.try_with(|pool| {
        let mut pool = pool.try_borrow_mut().ok()?;
        let at = pool.read.iter().rposition(|b| b.capacity() >= min)?;
        Some(pool.read.swap_remove(at))
    })
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
    let _ = POOL.try_with(|pool| {
        if let Ok(mut pool) = pool.try_borrow_mut() {
            if pool.read.len() < KEPT {
                pool.read.push(block);
            }
        }
    });
}

/// A write buffer with room for at least `min` bytes from the pool, if it
/// has one.
pub(crate) fn take_write(min: usize) -> Option<Vec<u8>> {
    POOL.try_with(|pool| {
        let mut pool = pool.try_borrow_mut().ok()?;
        let at = pool.write.iter().rposition(|b| b.capacity() >= min)?;
        Some(pool.write.swap_remove(at))
    })
    .ok()
    .flatten()
}

/// Gives a write buffer back (its contents are discarded). It is kept
/// when the pool has room and it is at most [`MAX_CAPACITY`] bytes.
pub(crate) fn give_write(mut buffer: Vec<u8>) {
    if buffer.capacity() == 0 || buffer.capacity() > MAX_CAPACITY {
        return;
    }
    buffer.clear();
    let _ = POOL.try_with(|pool| {
        if let Ok(mut pool) = pool.try_borrow_mut() {
            if pool.write.len() < KEPT {
                pool.write.push(buffer);
            }
        }
    });
}

/// The number of read and write blocks this thread's pool holds.
#[cfg(test)]
pub(crate) fn held() -> (usize, usize) {
    POOL.with(|pool| {
        let pool = pool.borrow();
        (pool.read.len(), pool.write.len())
    })
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
