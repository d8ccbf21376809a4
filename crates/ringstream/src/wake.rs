//! The waker hand-off shared by the crate's channels (request bodies,
//! streaming responses): a task keeps its waker in a slot under the
//! channel's lock, and the other side takes it and wakes it after the lock
//! is released.

use std::task::{Context, Waker};

/// Stores the current task's waker in `slot` unless one that wakes the same
/// task is already there (no clone, no reference count touched then).
pub(crate) fn register(slot: &mut Option<Waker>, cx: &Context<'_>) {
    match slot {
        Some(w) if w.will_wake(cx.waker()) => {}
        _ => *slot = Some(cx.waker().clone()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;

    use super::*;

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn a_waker_of_the_same_task_is_kept_and_another_replaces_it() {
        let first = Arc::new(Count(AtomicUsize::new(0)));
        let second = Arc::new(Count(AtomicUsize::new(0)));
        let first_waker = Waker::from(first.clone());
        let second_waker = Waker::from(second.clone());
        let mut slot = None;
        register(&mut slot, &Context::from_waker(&first_waker));
        register(&mut slot, &Context::from_waker(&first_waker));
        // The slot holds one clone: two references in all.
        assert_eq!(Arc::strong_count(&first), 2 + 1);
        register(&mut slot, &Context::from_waker(&second_waker));
        assert_eq!(Arc::strong_count(&first), 2);
        slot.take().expect("registered").wake();
        assert_eq!(second.0.load(Ordering::Relaxed), 1);
        assert_eq!(first.0.load(Ordering::Relaxed), 0);
    }
}
