//! Emptied field maps kept by each thread. A response's map, once its
//! head is written, holds the fields of a later request served on the
//! same thread, whichever its connection: a request costs no map
//! allocation, and a connection that waits for its next request holds
//! none.

use std::cell::Cell;

use http::HeaderMap;

use crate::stream::pool;

/// Largest capacity of a map kept: a response with hundreds of fields
/// does not pin its map.
const MAX_CAPACITY: usize = 64;

thread_local! {
    static SPARE: [Cell<Option<HeaderMap>>; pool::KEPT] =
        const { [const { Cell::new(None) }; pool::KEPT] };
}

/// An empty map with room for `fields` fields: a kept one, or a new one.
pub(super) fn take(fields: usize) -> HeaderMap {
    let kept = SPARE
        .try_with(|slots| pool::take(slots, 0, HeaderMap::capacity))
        .ok()
        .flatten();
    match kept {
        Some(mut map) => {
            map.reserve(fields);
            map
        }
        None => HeaderMap::with_capacity(fields),
    }
}

/// Keeps `map`, emptied, for a later request (unless it grew unusually
/// large or the thread keeps enough).
pub(super) fn give(mut map: HeaderMap) {
    if map.capacity() == 0 || map.capacity() > MAX_CAPACITY {
        return;
    }
    map.clear();
    let _ = SPARE.try_with(|slots| pool::give(slots, map));
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::header::{CONTENT_TYPE, HOST};

    #[test]
    fn a_given_map_comes_back_empty_with_its_room() {
        // Whatever earlier tests on this thread left.
        while SPARE
            .with(|slots| pool::take(slots, 0, HeaderMap::capacity))
            .is_some()
        {}
        let mut map = HeaderMap::with_capacity(8);
        map.insert(HOST, "a".parse().unwrap());
        let room = map.capacity();
        give(map);
        let again = take(1);
        assert!(again.is_empty());
        assert_eq!(again.capacity(), room);
        // Nothing kept: a new map.
        assert_eq!(take(0).capacity(), 0);
    }

    #[test]
    fn a_large_map_is_not_kept() {
        let mut map = HeaderMap::with_capacity(MAX_CAPACITY * 4);
        map.insert(CONTENT_TYPE, "text/plain".parse().unwrap());
        give(map);
        assert!(SPARE.with(|slots| {
            slots.iter().all(|slot| {
                let kept = slot.take();
                let small = kept.as_ref().is_none_or(|m| m.capacity() <= MAX_CAPACITY);
                slot.set(kept);
                small
            })
        }));
    }
}
