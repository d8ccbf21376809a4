//! A counting global allocator, scoped to the measuring thread: the
//! allocation tests of `ringstream` count what one piece of code on one
//! thread allocates, whatever other threads do. It also keeps each
//! thread's net bytes allocated ([`live_bytes`]), for tests of what a
//! connection keeps while it waits.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// A global allocator that counts the allocator calls (alloc,
/// alloc_zeroed, realloc) of the thread that measures. Install it in a
/// test binary with `#[global_allocator] static A: Counting = Counting;`.
pub struct Counting;

thread_local! {
    static MEASURING: Cell<bool> = const { Cell::new(false) };
    static CALLS: Cell<usize> = const { Cell::new(0) };
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

/// Adds `delta` to this thread's net bytes allocated.
fn add_live(delta: isize) {
    let _ = LIVE.try_with(|live| live.set(live.get().wrapping_add(delta)));
}

fn signed(n: usize) -> isize {
    isize::try_from(n).unwrap_or(isize::MAX)
}

fn count_call() {
    // `try_with`: thread-local storage may be gone while a thread exits.
    let _ = MEASURING.try_with(|m| {
        if m.get() {
            let _ = CALLS.try_with(|c| c.set(c.get() + 1));
        }
    });
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees carry over; the counting touches
// only const-initialised thread-locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_call();
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            add_live(signed(layout.size()));
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_call();
        // SAFETY: forwarded unchanged.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            add_live(signed(layout.size()));
        }
        ptr
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_call();
        // SAFETY: forwarded unchanged; `ptr` came from this allocator,
        // which is `System`.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            add_live(signed(new_size).wrapping_sub(signed(layout.size())));
        }
        new
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add_live(signed(layout.size()).wrapping_neg());
        // SAFETY: forwarded unchanged; `ptr` came from `System`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// The bytes this thread has allocated less those it has freed, since
/// it started: the difference between two readings is what the thread's
/// code between them kept (memory allocated on one thread and freed on
/// another counts on each where it happened).
pub fn live_bytes() -> isize {
    LIVE.try_with(Cell::get).unwrap_or(0)
}

/// Runs `f` and returns its result with the number of allocator calls
/// it made on this thread.
pub fn allocations<T>(f: impl FnOnce() -> T) -> (T, usize) {
    start();
    let out = f();
    (out, stop())
}

/// Starts counting this thread's allocator calls, from zero.
pub fn start() {
    CALLS.with(|c| c.set(0));
    MEASURING.with(|m| m.set(true));
}

/// Stops counting; the calls counted since [`start`].
pub fn stop() -> usize {
    MEASURING.with(|m| m.set(false));
    CALLS.with(Cell::get)
}

/// Sets this thread's count back to zero without starting to count (a
/// caller that counts in pieces, with [`Measured`], reads it with
/// [`calls`]).
pub fn reset() {
    CALLS.with(|c| c.set(0));
}

/// The allocator calls counted on this thread since [`start`] or
/// [`reset`].
pub fn calls() -> usize {
    CALLS.with(Cell::get)
}

/// Counts this thread's allocator calls until dropped, adding to the
/// count (each poll of a future under test, say).
pub struct Measured(bool);

impl Measured {
    pub fn new() -> Measured {
        Measured(MEASURING.with(|m| m.replace(true)))
    }
}

impl Default for Measured {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Measured {
    fn drop(&mut self) {
        MEASURING.with(|m| m.set(self.0));
    }
}

/// Stops counting until dropped (what a service allocates is its own).
pub struct Uncounted(bool);

impl Uncounted {
    pub fn new() -> Uncounted {
        Uncounted(MEASURING.with(|m| m.replace(false)))
    }
}

impl Default for Uncounted {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Uncounted {
    fn drop(&mut self) {
        MEASURING.with(|m| m.set(self.0));
    }
}
