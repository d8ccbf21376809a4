//! Emptied field maps and field-span lists kept by each thread. A
//! response's map, once its head is written, holds the fields of a later
//! request served on the same thread, whichever its connection, and the
//! list a head's fields were noted in serves the next head parsed: a
//! request allocates neither, and a connection that waits for its next
//! request holds neither.

use std::cell::Cell;

use http::HeaderMap;

use crate::stream::pool;

/// Where a piece of the request head lies within the head bytes: its
/// offset and length.
pub(super) type Span = (usize, usize);

/// Where a head's fields are, by name and value, in its bytes.
type FieldSpans = Vec<(Span, Span)>;

/// Largest list of field spans kept (in fields).
const MAX_FIELD_SPANS: usize = 128;

/// Largest capacity of a map kept: a response with hundreds of fields
/// does not pin its map.
const MAX_CAPACITY: usize = 64;

thread_local! {
    static SPARE: [Cell<Option<HeaderMap>>; pool::KEPT] =
        const { [const { Cell::new(None) }; pool::KEPT] };
    /// How many maps `SPARE` holds: a request finds the pool empty (its
    /// responses had no fields) with one load.
    static SPARE_HELD: Cell<usize> = const { Cell::new(0) };
    /// One list: a head's fields are noted and read with no await between,
    /// so a thread has at most one in use.
    static FIELDS: Cell<FieldSpans> = const { Cell::new(Vec::new()) };
}

/// An empty list for a head's field spans: the kept one, or a new one.
#[inline]
pub(super) fn take_fields() -> FieldSpans {
    FIELDS.try_with(Cell::take).unwrap_or_default()
}

/// Keeps `spans`, emptied, for a later head (unless it grew unusually
/// large).
#[inline]
pub(super) fn give_fields(mut spans: FieldSpans) {
    if spans.capacity() == 0 || spans.capacity() > MAX_FIELD_SPANS {
        return;
    }
    spans.clear();
    let _ = FIELDS.try_with(|kept| kept.set(spans));
}

/// Gives the empty `map` room for `fields` fields: a kept map takes its
/// place, or it makes room itself.
#[inline]
pub(super) fn make_room(map: &mut HeaderMap, fields: usize) {
    // Inlined: with no map kept (the responses had no fields), one load.
    if SPARE_HELD.try_with(Cell::get).unwrap_or(0) != 0 {
        take_kept(map);
    }
    map.reserve(fields);
}

/// Puts a kept map, if there is one, in the place of `map`.
#[inline(never)]
fn take_kept(map: &mut HeaderMap) {
    let kept = SPARE
        .try_with(|slots| pool::take(slots, 0, HeaderMap::capacity))
        .ok()
        .flatten();
    if let Some(kept) = kept {
        SPARE_HELD.with(|held| held.set(held.get().saturating_sub(1)));
        *map = kept;
    }
}

/// Takes `map`, emptied, to keep for a later request (unless it has no
/// room, grew unusually large, or the thread keeps enough); a map left
/// where it is is dropped with its response.
#[inline]
pub(super) fn give(map: &mut HeaderMap) {
    // Inlined, so that a response with no field (no map allocated) costs
    // this check alone.
    if map.capacity() == 0 || map.capacity() > MAX_CAPACITY {
        return;
    }
    keep(map);
}

/// [`give`] for a map worth keeping.
#[inline(never)]
fn keep(map: &mut HeaderMap) {
    let mut map = std::mem::take(map);
    map.clear();
    if let Ok(true) = SPARE.try_with(|slots| pool::give(slots, map)) {
        SPARE_HELD.with(|held| held.set(held.get() + 1));
    }
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
        SPARE_HELD.with(|held| held.set(0));
        let mut map = HeaderMap::with_capacity(8);
        map.insert(HOST, "a".parse().unwrap());
        let room = map.capacity();
        give(&mut map);
        let mut again = HeaderMap::new();
        make_room(&mut again, 1);
        assert!(again.is_empty());
        assert_eq!(again.capacity(), room);
        // Nothing kept: the map makes room itself.
        let mut new = HeaderMap::new();
        make_room(&mut new, 0);
        assert_eq!(new.capacity(), 0);
        make_room(&mut new, 3);
        assert!(new.capacity() >= 3);
    }

    #[test]
    fn a_span_list_comes_back_empty_with_its_room_unless_it_is_large() {
        FIELDS.with(Cell::take);
        let mut spans = take_fields();
        assert_eq!(spans.capacity(), 0, "nothing kept yet");
        spans.push(((0, 4), (6, 3)));
        let room = spans.capacity();
        give_fields(spans);
        let again = take_fields();
        assert!(again.is_empty());
        assert_eq!(again.capacity(), room);
        give_fields(Vec::with_capacity(MAX_FIELD_SPANS * 2));
        assert_eq!(take_fields().capacity(), 0, "a large list is freed");
    }

    #[test]
    fn a_large_map_is_not_kept() {
        let mut map = HeaderMap::with_capacity(MAX_CAPACITY * 4);
        map.insert(CONTENT_TYPE, "text/plain".parse().unwrap());
        give(&mut map);
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
