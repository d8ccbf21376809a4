//! The request field names a thread has seen lately, kept to be handed out
//! again.
//!
//! `http::HeaderName::from_bytes` copies every name that is not one of
//! http's standard ones into an allocation of its own: a browser's
//! `sec-fetch-mode` or an API client's `x-request-id` cost an allocation per
//! request each. A name kept here is cloned instead, which costs a
//! reference count. The table is small and bounded: [`SLOTS`] names of at
//! most [`MAX_NAME_LEN`] bytes per thread, placed in a set of two by a
//! hash of their spelling, a newcomer taking the place of the older of the
//! set. A client spells a name the same way every time, so the spelling
//! finds it: a name of up to 16 bytes by comparing three words, a longer
//! one by comparing it whole.

use std::cell::RefCell;

use http::header::{HeaderName, InvalidHeaderName};

/// Names kept per thread: [`WAYS`] in each of 2 to the power [`SET_BITS`]
/// sets.
const SLOTS: usize = WAYS << SET_BITS;

/// Names kept in each set: two names that land in one set are both kept.
const WAYS: usize = 2;

const SET_BITS: u32 = 5;

/// The longest name kept, in bytes: a longer one is made anew each time.
const MAX_NAME_LEN: usize = 64;

thread_local! {
    static NAMES: RefCell<[Option<Kept>; SLOTS]> =
        const { RefCell::new([const { None }; SLOTS]) };
}

/// A kept name and the spelling it was made from, as [`Key`].
struct Kept {
    key: Key,
    name: HeaderName,
}

/// A name's bytes as its length and its first and last eight bytes (four,
/// or all of them, for a shorter name): the whole name when it is at most
/// 16 bytes long, a quick first test when it is longer.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key {
    len: usize,
    first: u64,
    last: u64,
}

impl Key {
    fn of(bytes: &[u8]) -> Key {
        let word = |at: usize| {
            bytes
                .get(at..at + 8)
                .and_then(|b| <[u8; 8]>::try_from(b).ok())
                .map_or(0, u64::from_le_bytes)
        };
        let half = |at: usize| {
            bytes
                .get(at..at + 4)
                .and_then(|b| <[u8; 4]>::try_from(b).ok())
                .map_or(0, |b| u64::from(u32::from_le_bytes(b)))
        };
        let len = bytes.len();
        let (first, last) = match len {
            8.. => (word(0), word(len - 8)),
            4.. => (half(0), half(len - 4)),
            _ => (bytes.iter().fold(0, |h, &b| h << 8 | u64::from(b)), 0),
        };
        Key { len, first, last }
    }

    /// The set of the name: its key multiplied to spread it into the top
    /// bits.
    fn set(&self) -> usize {
        let mixed = (self.first ^ self.last.rotate_left(29) ^ self.len as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (mixed >> (64 - SET_BITS)) as usize
    }
}

/// The field name `bytes`, a kept one when the thread has seen it spelt so
/// before.
///
/// # Errors
///
/// When `bytes` is not a valid field name, as `HeaderName::from_bytes`.
pub(super) fn header_name(bytes: &[u8]) -> Result<HeaderName, InvalidHeaderName> {
    if bytes.len() > MAX_NAME_LEN {
        return HeaderName::from_bytes(bytes);
    }
    let key = Key::of(bytes);
    let set = key.set();
    let kept = NAMES.try_with(|names| {
        let mut names = names.try_borrow_mut().ok()?;
        let ways = names.get_mut(set * WAYS..set * WAYS + WAYS)?;
        let seen = ways.iter().flatten().find(|kept| {
            // A longer name is compared whole (kept names are lowercase,
            // the field's may be in any case).
            kept.key == key
                && (key.len <= 16 || kept.name.as_str().as_bytes().eq_ignore_ascii_case(bytes))
        });
        if let Some(kept) = seen {
            return Some(Ok(kept.name.clone()));
        }
        let made = HeaderName::from_bytes(bytes);
        if let Ok(name) = &made {
            // The newcomer goes first; the older of the set is let go.
            ways.rotate_right(1);
            if let Some(first) = ways.first_mut() {
                *first = Some(Kept {
                    key,
                    name: name.clone(),
                });
            }
        }
        Some(made)
    });
    match kept {
        Ok(Some(made)) => made,
        // The thread is exiting, or a name is being made further up.
        _ => HeaderName::from_bytes(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_seen_before_is_the_kept_one() {
        let ptr = |n: &HeaderName| n.as_str().as_ptr();
        for spelling in [
            &b"X-Request-Id"[..],
            b"x-sixteen-bytes1",
            b"X-A-Name-Longer-Than-Sixteen",
        ] {
            let first = header_name(spelling).unwrap();
            let again = header_name(spelling).unwrap();
            assert_eq!(first.as_str().as_bytes(), spelling.to_ascii_lowercase());
            // The same bytes, shared: the second was cloned, not made anew.
            assert_eq!(ptr(&again), ptr(&first));
            // Another spelling is the same name.
            let other = header_name(&spelling.to_ascii_uppercase()).unwrap();
            assert_eq!(other, first);
        }
    }

    #[test]
    fn names_alike_in_their_ends_are_told_apart() {
        // Longer than 16 bytes, the same first and last eight.
        let a = header_name(b"x-aaaaaa-one-bbbbbbbb").unwrap();
        let b = header_name(b"x-aaaaaa-two-bbbbbbbb").unwrap();
        assert_eq!(a.as_str(), "x-aaaaaa-one-bbbbbbbb");
        assert_eq!(b.as_str(), "x-aaaaaa-two-bbbbbbbb");
        assert_eq!(header_name(b"x-aaaaaa-one-bbbbbbbb").unwrap(), a);
    }

    #[test]
    fn standard_names_and_long_names_come_out_right() {
        assert_eq!(header_name(b"Host").unwrap(), http::header::HOST);
        assert_eq!(header_name(b"host").unwrap(), http::header::HOST);
        let long = "x-".to_owned() + &"a".repeat(MAX_NAME_LEN);
        assert_eq!(header_name(long.as_bytes()).unwrap().as_str(), long);
    }

    #[test]
    fn names_that_share_a_set_stay_right_and_two_are_kept() {
        // Three names in one set: the first two are both kept, a third
        // takes the place of the older.
        let names: Vec<String> = (0..SLOTS * 8).map(|i| format!("x-field-{i}")).collect();
        let set = Key::of(names[0].as_bytes()).set();
        let same: Vec<&String> = names
            .iter()
            .filter(|n| Key::of(n.as_bytes()).set() == set)
            .take(3)
            .collect();
        assert_eq!(same.len(), 3, "three names in one set among many");
        let (a, b, c) = (same[0], same[1], same[2]);
        let first_a = header_name(a.as_bytes()).unwrap();
        let first_b = header_name(b.as_bytes()).unwrap();
        let ptr = |n: &HeaderName| n.as_str().as_ptr();
        assert_eq!(ptr(&header_name(a.as_bytes()).unwrap()), ptr(&first_a));
        assert_eq!(ptr(&header_name(b.as_bytes()).unwrap()), ptr(&first_b));
        for name in [c, a, b, c] {
            assert_eq!(header_name(name.as_bytes()).unwrap().as_str(), name);
        }
    }

    #[test]
    fn an_invalid_name_is_refused_and_not_kept() {
        assert!(header_name(b"bad name").is_err());
        assert!(header_name(b"").is_err());
        assert!(header_name(b"bad name").is_err());
    }
}
