//! A counting global allocator wrapping [`System`].
//!
//! Every allocation, reallocation and deallocation in the process is counted
//! with relaxed atomics, and the live heap (bytes currently allocated) and
//! its peak are tracked. A scenario calls [`reset`] before the code it
//! measures and [`snapshot`] after it; counts are process-wide, so measure
//! on one thread with nothing else running.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The allocator; installed with `#[global_allocator]` in `main.rs`.
pub struct CountingAlloc;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static REALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static DEALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static BYTES_ALLOCATED: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static BASELINE: AtomicUsize = AtomicUsize::new(0);

/// Counters since the last [`reset`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Snapshot {
    /// Calls to `alloc` and `alloc_zeroed`.
    pub allocations: usize,
    /// Calls to `realloc`.
    pub reallocations: usize,
    /// Calls to `dealloc`.
    pub deallocations: usize,
    /// Bytes requested by allocations plus the growth requested by
    /// reallocations, in bytes.
    pub bytes_allocated: usize,
    /// Live heap when [`reset`] was called, in bytes.
    pub baseline_heap: usize,
    /// Live heap now, in bytes.
    pub live_heap: usize,
    /// Highest live heap since [`reset`], in bytes.
    pub peak_heap: usize,
}

impl Snapshot {
    /// Peak live heap above the baseline, in bytes: the most memory the
    /// measured code held at once.
    pub fn peak_above_baseline(&self) -> usize {
        self.peak_heap.saturating_sub(self.baseline_heap)
    }

    /// Live heap now minus the baseline, in bytes (negative if the measured
    /// code freed memory allocated before the reset).
    pub fn live_above_baseline(&self) -> i64 {
        self.live_heap as i64 - self.baseline_heap as i64
    }
}

/// Zeroes the counters and makes the current live heap the baseline and
/// the peak.
pub fn reset() {
    ALLOCATIONS.store(0, Relaxed);
    REALLOCATIONS.store(0, Relaxed);
    DEALLOCATIONS.store(0, Relaxed);
    BYTES_ALLOCATED.store(0, Relaxed);
    let live = LIVE.load(Relaxed);
    BASELINE.store(live, Relaxed);
    PEAK.store(live, Relaxed);
}

/// Reads the counters.
pub fn snapshot() -> Snapshot {
    Snapshot {
        allocations: ALLOCATIONS.load(Relaxed),
        reallocations: REALLOCATIONS.load(Relaxed),
        deallocations: DEALLOCATIONS.load(Relaxed),
        bytes_allocated: BYTES_ALLOCATED.load(Relaxed),
        baseline_heap: BASELINE.load(Relaxed),
        live_heap: LIVE.load(Relaxed),
        peak_heap: PEAK.load(Relaxed),
    }
}

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Relaxed) + bytes;
    PEAK.fetch_max(live, Relaxed);
}

fn shrank(bytes: usize) {
    LIVE.fetch_sub(bytes, Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged and returns its result unchanged, so `System`'s guarantees hold;
// the bookkeeping only touches atomics and never allocates.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as ours: `layout` has non-zero size.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            ALLOCATIONS.fetch_add(1, Relaxed);
            BYTES_ALLOCATED.fetch_add(layout.size(), Relaxed);
            grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as ours: `layout` has non-zero size.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            ALLOCATIONS.fetch_add(1, Relaxed);
            BYTES_ALLOCATED.fetch_add(layout.size(), Relaxed);
            grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller guarantees `ptr` was allocated by this
        // allocator (hence by `System`) with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        DEALLOCATIONS.fetch_add(1, Relaxed);
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `ptr` came from this allocator with
        // `layout` and that `new_size` is valid for its alignment.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            REALLOCATIONS.fetch_add(1, Relaxed);
            let old = layout.size();
            if new_size > old {
                BYTES_ALLOCATED.fetch_add(new_size - old, Relaxed);
                grew(new_size - old);
            } else {
                shrank(old - new_size);
            }
        }
        new
    }
}

/// Serialises tests that call [`reset`], since the counters are global.
#[cfg(test)]
pub static TEST_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_an_allocation_and_its_bytes() {
        // Other test threads may allocate too, so only lower bounds hold.
        let _guard = TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        reset();
        let v = std::hint::black_box(vec![1u8; 4096]);
        let s = snapshot();
        assert!(s.allocations >= 1);
        assert!(s.bytes_allocated >= 4096);
        drop(v);
        assert!(snapshot().deallocations >= 1);
    }

    #[test]
    fn counts_a_reallocation() {
        let _guard = TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let mut v: Vec<u8> = Vec::with_capacity(8);
        reset();
        v.reserve_exact(1 << 16);
        std::hint::black_box(&v);
        assert!(snapshot().reallocations >= 1);
    }
}
