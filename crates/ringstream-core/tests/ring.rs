//! Integration tests for `RingBuffer` through its public API: every method,
//! every wrap-around edge, the trait views, and a `VecDeque<u8>` model test.

// The growable ring needs `alloc`; some of these tests use its `std::io`
// views.
#![cfg(feature = "std")]

use std::collections::VecDeque;
use std::fmt::Write as _;

use proptest::prelude::*;
use ringstream_core::ring::ConsumeError;
use ringstream_core::{OutOfSpace, RingBuffer, WriteBuf};

fn contents(r: &RingBuffer) -> Vec<u8> {
    let (a, b) = r.as_slices();
    let mut v = a.to_vec();
    v.extend_from_slice(b);
    v
}

/// A full bounded ring of capacity 8 whose data wraps: the first run
/// "456789" sits at offsets 2..8, the second run "ab" at 0..2.
fn wrapped_bounded() -> RingBuffer {
    let mut r = RingBuffer::bounded(8);
    assert_eq!(r.write(b"xx4567"), 6);
    r.consume(2);
    assert_eq!(r.write(b"89ab"), 4);
    let (a, b) = r.as_slices();
    assert_eq!(a, b"456789");
    assert_eq!(b, b"ab");
    r
}

/// An unbounded ring of capacity 8 whose data wraps.
fn wrapped_unbounded() -> RingBuffer {
    let mut r = RingBuffer::with_capacity(8);
    r.write(b"xx4567");
    r.consume(2);
    r.write(b"89ab");
    assert_eq!(r.capacity(), 8);
    assert!(!r.as_slices().1.is_empty());
    r
}

// ---- construction -------------------------------------------------------

#[test]
fn new_allocates_nothing_and_is_unbounded() {
    let r = RingBuffer::new();
    assert_eq!(r.capacity(), 0);
    assert_eq!(r.room(), 0);
    assert_eq!(r.len(), 0);
    assert!(r.is_empty());
    assert!(!r.is_bounded());
    assert_eq!(r.as_slices(), (&b""[..], &b""[..]));
    let d = RingBuffer::default();
    assert_eq!(d.capacity(), 0);
}

#[test]
fn with_capacity_and_bounded_report_capacity() {
    let r = RingBuffer::with_capacity(1460);
    assert_eq!(r.capacity(), 1460);
    assert_eq!(r.room(), 1460);
    assert!(!r.is_bounded());
    let b = RingBuffer::bounded(7);
    assert_eq!(b.capacity(), 7);
    assert!(b.is_bounded());
}

#[test]
fn from_slice_and_vec() {
    let r = RingBuffer::from(&b"abc"[..]);
    assert_eq!(contents(&r), b"abc");
    assert!(!r.is_bounded());
    let mut v = Vec::with_capacity(16);
    v.extend_from_slice(b"xyz");
    let r = RingBuffer::from(v);
    assert_eq!(contents(&r), b"xyz");
    assert_eq!(r.capacity(), 16);
}

#[test]
fn debug_shows_shape_not_contents() {
    let r = RingBuffer::from(&b"secret"[..]);
    let s = format!("{r:?}");
    assert!(s.contains("len: 6"), "{s}");
    assert!(!s.contains("secret"));
}

#[test]
fn clone_is_independent() {
    let mut a = wrapped_unbounded();
    let b = a.clone();
    a.consume(3);
    assert_eq!(contents(&b), b"456789ab");
    assert_eq!(contents(&a), b"789ab");
}

// ---- write / read / peek / consume -------------------------------------

#[test]
fn zero_length_write_and_read() {
    let mut r = RingBuffer::new();
    assert_eq!(r.write(b""), 0);
    assert_eq!(r.capacity(), 0, "an empty write must not allocate");
    let mut out = [0u8; 0];
    assert_eq!(r.read(&mut out), 0);
    assert_eq!(r.peek(&mut out), 0);
    r.write(b"abc");
    assert_eq!(r.read(&mut out), 0);
    assert_eq!(r.len(), 3);
}

#[test]
fn read_from_empty_returns_zero() {
    let mut r = RingBuffer::with_capacity(4);
    let mut out = [9u8; 4];
    assert_eq!(r.read(&mut out), 0);
    assert_eq!(out, [9; 4]);
}

#[test]
fn read_and_peek_across_the_wrap() {
    let mut r = wrapped_bounded();
    let mut out = [0u8; 7];
    assert_eq!(r.peek(&mut out), 7);
    assert_eq!(&out, b"456789a");
    assert_eq!(r.len(), 8);
    let mut out = [0u8; 16];
    assert_eq!(r.read(&mut out), 8);
    assert_eq!(&out[..8], b"456789ab");
    assert!(r.is_empty());
}

#[test]
fn read_exactly_the_first_run() {
    let mut r = wrapped_bounded();
    let mut out = [0u8; 6];
    assert_eq!(r.read(&mut out), 6);
    assert_eq!(&out, b"456789");
    assert_eq!(r.as_slices(), (&b"ab"[..], &b""[..]));
}

#[test]
fn write_wraps_around_the_end() {
    let mut r = RingBuffer::bounded(4);
    r.write(b"abc");
    r.consume(2);
    assert_eq!(r.write(b"defg"), 3);
    assert_eq!(r.as_slices(), (&b"cd"[..], &b"ef"[..]));
    assert_eq!(r.room(), 0);
}

#[test]
fn consume_is_checked() {
    let mut r = RingBuffer::from(&b"abc"[..]);
    let e: ConsumeError = r.try_consume(4).unwrap_err();
    assert_eq!((e.requested(), e.available()), (4, 3));
    assert!(e.to_string().contains("4"));
    assert_eq!(r.len(), 3, "a failed try_consume leaves the ring unchanged");
    r.try_consume(0).unwrap();
    r.consume(1);
    assert_eq!(contents(&r), b"bc");
    r.try_consume(2).unwrap();
    assert!(r.is_empty());
}

#[test]
#[should_panic(expected = "cannot consume 4 bytes")]
fn consume_past_len_panics() {
    let mut r = RingBuffer::from(&b"abc"[..]);
    r.consume(4);
}

#[test]
fn consume_across_the_wrap() {
    let mut r = wrapped_bounded();
    r.consume(7);
    assert_eq!(contents(&r), b"b");
    assert_eq!(r.as_slices(), (&b"b"[..], &b""[..]));
}

#[test]
fn clear_keeps_capacity() {
    let mut r = wrapped_bounded();
    r.clear();
    assert!(r.is_empty());
    assert_eq!(r.capacity(), 8);
    assert_eq!(r.write(b"12345678"), 8);
    assert_eq!(r.as_slices().0, b"12345678");
}

// ---- capacity 0 and 1 --------------------------------------------------

#[test]
fn bounded_zero_accepts_nothing() {
    let mut r = RingBuffer::bounded(0);
    assert_eq!(r.write(b"a"), 0);
    assert_eq!(r.capacity(), 0);
    assert!(r.spare_mut().is_empty());
    r.commit(0);
    assert!(r.write_str("").is_ok());
    assert!(r.write_str("x").is_err());
    r.reserve(10);
    assert_eq!(r.capacity(), 0);
    assert!(r.make_contiguous().is_empty());
    assert!(r.into_vec().is_empty());
}

#[test]
fn bounded_one_cycles() {
    let mut r = RingBuffer::bounded(1);
    let mut out = [0u8; 1];
    for byte in 0u8..10 {
        assert_eq!(r.write(&[byte, byte]), 1);
        assert_eq!(r.write(&[byte]), 0);
        assert_eq!(r.read(&mut out), 1);
        assert_eq!(out[0], byte);
    }
}

#[test]
fn unbounded_capacity_zero_and_one_grow() {
    let mut r = RingBuffer::with_capacity(0);
    assert_eq!(r.write(b"a"), 1);
    assert!(r.capacity() >= 1);
    let mut r = RingBuffer::with_capacity(1);
    assert_eq!(r.write(b"a"), 1);
    assert_eq!(r.capacity(), 1);
    assert_eq!(r.write(b"b"), 1);
    assert!(r.capacity() >= 2);
    assert_eq!(contents(&r), b"ab");
}

// ---- growth --------------------------------------------------------------

#[test]
fn growth_while_wrapped_keeps_order() {
    let mut r = wrapped_unbounded();
    r.write(b"cdefgh");
    assert!(r.capacity() >= 16);
    assert_eq!(contents(&r), b"456789abcdefgh");
    let mut out = vec![0u8; 14];
    assert_eq!(r.read(&mut out), 14);
    assert_eq!(out, b"456789abcdefgh");
}

#[test]
fn growth_at_least_doubles() {
    let mut r = RingBuffer::with_capacity(100);
    r.write(&[1; 100]);
    r.write(&[2; 1]);
    assert!(r.capacity() >= 200);
}

/// The OpenDTU metrics body: 40 KiB printed in small pieces into a stream
/// that starts at one segment (1460 bytes). Growing by the shortfall made
/// thousands of reallocations; geometric growth needs a handful.
#[test]
fn body_of_40k_in_20_byte_writes_grows_at_most_six_times() {
    let mut r = RingBuffer::with_capacity(1460);
    let mut growths = 0;
    let mut cap = r.capacity();
    for i in 0..(40_960 / 20) {
        assert_eq!(r.write(&[i as u8; 20]), 20);
        if r.capacity() != cap {
            growths += 1;
            cap = r.capacity();
        }
    }
    assert_eq!(r.len(), 40_960);
    assert!(growths <= 6, "{growths} growths");
}

#[test]
fn reserve_grows_unbounded_only() {
    let mut r = RingBuffer::new();
    r.reserve(0);
    assert_eq!(r.capacity(), 0);
    r.reserve(10);
    assert!(r.room() >= 10);
    let cap = r.capacity();
    r.reserve(cap);
    assert!(r.room() >= cap);

    let mut b = RingBuffer::bounded(3);
    b.reserve(100);
    assert_eq!(b.capacity(), 3);
}

#[test]
fn reserve_while_wrapped_keeps_order() {
    let mut r = wrapped_unbounded();
    r.reserve(100);
    assert!(r.room() >= 100);
    assert_eq!(contents(&r), b"456789ab");
}

#[test]
fn shrink_to_while_wrapped() {
    let mut r = wrapped_unbounded();
    r.write(b"cdefgh"); // grows
    r.consume(8);
    assert_eq!(contents(&r), b"cdefgh");
    r.shrink_to(0);
    assert_eq!(r.capacity(), 6);
    assert_eq!(r.as_slices(), (&b"cdefgh"[..], &b""[..]));

    let mut r = wrapped_unbounded();
    r.shrink_to(4);
    assert_eq!(r.capacity(), 8, "never below len");
    r.consume(5);
    r.shrink_to(4);
    assert_eq!(r.capacity(), 4);
    assert_eq!(contents(&r), b"9ab");
    r.shrink_to(100);
    assert_eq!(r.capacity(), 4, "shrink_to never grows");

    let mut b = wrapped_bounded();
    b.consume(8);
    b.shrink_to(0);
    assert_eq!(b.capacity(), 8, "a bounded ring keeps its capacity");

    let mut e = RingBuffer::with_capacity(10);
    e.shrink_to(0);
    assert_eq!(e.capacity(), 0);
    e.write(b"a");
    assert_eq!(contents(&e), b"a");
}

// ---- spare_mut / commit ------------------------------------------------

#[test]
fn spare_mut_on_empty_is_whole_storage() {
    let mut r = RingBuffer::bounded(5);
    assert_eq!(r.spare_mut().len(), 5);
    let mut n = RingBuffer::new();
    assert!(n.spare_mut().is_empty());
}

#[test]
fn spare_mut_and_commit_unwrapped_then_wrapped() {
    let mut r = RingBuffer::bounded(8);
    r.write(b"abcdef");
    r.consume(3); // data at [3, 6)
    let spare = r.spare_mut();
    assert_eq!(spare.len(), 2); // [6, 8)
    spare.copy_from_slice(b"gh");
    r.commit(2);
    // Tail now at 8 == capacity: the spare run wraps to [0, 3).
    let spare = r.spare_mut();
    assert_eq!(spare.len(), 3);
    spare[..2].copy_from_slice(b"ij");
    r.commit(2);
    assert_eq!(r.as_slices(), (&b"defgh"[..], &b"ij"[..]));
    // Data wrapped: the spare run is between tail and head, [2, 3).
    let spare = r.spare_mut();
    assert_eq!(spare.len(), 1);
    spare[0] = b'k';
    r.commit(1);
    assert!(r.spare_mut().is_empty());
    assert_eq!(contents(&r), b"defghijk");
}

#[test]
#[should_panic(expected = "cannot commit")]
fn commit_past_spare_panics() {
    let mut r = RingBuffer::bounded(8);
    r.write(b"abcdef");
    r.consume(3);
    r.commit(3); // only [6, 8) follows the data
}

#[test]
fn commit_zero_is_noop() {
    let mut r = wrapped_bounded();
    r.commit(0);
    assert_eq!(r.len(), 8);
}

// ---- make_contiguous / into_vec ----------------------------------------

#[test]
fn make_contiguous_while_wrapped() {
    let mut r = wrapped_bounded();
    assert_eq!(r.make_contiguous(), b"456789ab");
    assert_eq!(r.as_slices(), (&b"456789ab"[..], &b""[..]));
    // Still a working ring afterwards.
    r.consume(2);
    assert_eq!(r.write(b"cd"), 2);
    assert_eq!(contents(&r), b"6789abcd");
}

#[test]
fn make_contiguous_unwrapped_and_empty() {
    let mut r = RingBuffer::with_capacity(8);
    assert!(r.make_contiguous().is_empty());
    r.write(b"abc");
    r.consume(1);
    let run = r.make_contiguous();
    run[0] = b'B';
    assert_eq!(contents(&r), b"Bc");
}

#[test]
fn into_vec_unwrapped_reuses_allocation() {
    let mut r = RingBuffer::with_capacity(64);
    write!(r, "hello {}", 42).unwrap();
    let ptr = r.as_slices().0.as_ptr();
    let v = r.into_vec();
    assert_eq!(v, b"hello 42");
    assert_eq!(v.as_ptr(), ptr, "no copy when the data starts at offset 0");
    assert_eq!(v.capacity(), 64);
}

#[test]
fn into_vec_wrapped() {
    let r = wrapped_bounded();
    assert_eq!(r.into_vec(), b"456789ab");
    let r = wrapped_unbounded();
    assert_eq!(r.into_vec(), b"456789ab");
    assert!(RingBuffer::new().into_vec().is_empty());
}

#[test]
fn into_vec_to_bytes() {
    let mut r = RingBuffer::with_capacity(4);
    r.write(b"body");
    let b = bytes::Bytes::from(r.into_vec());
    assert_eq!(b, "body");
}

// ---- fmt::Write ----------------------------------------------------------

#[test]
fn write_macro_works_with_both_traits_in_scope() {
    #[allow(unused_imports)]
    use std::io::Write as _;
    let mut r = RingBuffer::new();
    let key = "a";
    write!(r, "{key}={}", 1).unwrap();
    assert_eq!(contents(&r), b"a=1");
}

#[test]
fn fmt_write_on_full_bounded_ring_errors_and_stores_nothing_of_the_piece() {
    let mut r = RingBuffer::bounded(4);
    assert!(r.write_str("abc").is_ok());
    assert!(r.write_str("de").is_err());
    assert_eq!(contents(&r), b"abc");
    assert!(r.write_str("d").is_ok());
    assert!(write!(r, "x").is_err());
    assert!(r.write_str("").is_ok());
}

// ---- bytes::Buf / BufMut -----------------------------------------------

#[test]
fn buf_walks_both_runs() {
    use bytes::Buf;
    let mut r = wrapped_bounded();
    assert_eq!(r.remaining(), 8);
    assert_eq!(r.chunk(), b"456789");
    let mut slices = [std::io::IoSlice::new(&[]); 4];
    assert_eq!(r.chunks_vectored(&mut slices), 2);
    assert_eq!(&*slices[0], b"456789");
    assert_eq!(&*slices[1], b"ab");
    let mut one = [std::io::IoSlice::new(&[])];
    assert_eq!(r.chunks_vectored(&mut one), 1);
    let mut none: [std::io::IoSlice<'_>; 0] = [];
    assert_eq!(r.chunks_vectored(&mut none), 0);
    r.advance(6);
    assert_eq!(r.chunk(), b"ab");
    let mut out = [0u8; 2];
    r.copy_to_slice(&mut out);
    assert_eq!(&out, b"ab");
    assert!(!r.has_remaining());
    let mut slices = [std::io::IoSlice::new(&[]); 2];
    assert_eq!(r.chunks_vectored(&mut slices), 0);
}

#[test]
fn buf_get_across_the_wrap() {
    use bytes::Buf;
    let mut r = RingBuffer::bounded(6);
    r.write(b"wxyz");
    r.consume(3);
    r.write(&0x0102_0304u32.to_be_bytes());
    assert!(!r.as_slices().1.is_empty());
    assert_eq!(r.get_u8(), b'z');
    assert_eq!(r.get_u32(), 0x0102_0304);
}

#[test]
#[should_panic]
fn buf_advance_past_remaining_panics() {
    use bytes::Buf;
    let mut r = RingBuffer::from(&b"ab"[..]);
    r.advance(3);
}

#[test]
fn bufmut_put_and_chunk_mut() {
    use bytes::BufMut;
    let mut r = RingBuffer::new();
    assert!(r.remaining_mut() > 1 << 30);
    r.put_slice(b"head");
    r.put_u16(0x4142);
    assert_eq!(contents(&r), b"headAB");

    // chunk_mut on a full unbounded ring grows instead of returning empty.
    let mut full = RingBuffer::with_capacity(2);
    full.write(b"xy");
    assert!(full.chunk_mut().len() > 0);
}

#[test]
fn bufmut_advance_mut_edges() {
    use bytes::BufMut;
    let mut r = RingBuffer::bounded(8);
    r.write(b"abcdef");
    r.consume(3);
    assert_eq!(r.remaining_mut(), 5);
    let chunk = r.chunk_mut();
    assert_eq!(chunk.len(), 2);
    chunk.copy_from_slice(b"gh");
    // SAFETY: the two bytes of `chunk_mut` were just written.
    unsafe { r.advance_mut(2) };
    let chunk = r.chunk_mut();
    assert_eq!(chunk.len(), 3);
    chunk.copy_from_slice(b"ijk");
    // SAFETY: the whole chunk was written.
    unsafe { r.advance_mut(3) };
    // SAFETY: zero bytes is always valid.
    unsafe { r.advance_mut(0) };
    assert_eq!(r.remaining_mut(), 0);
    assert_eq!(r.chunk_mut().len(), 0);
    assert_eq!(contents(&r), b"defghijk");
}

#[test]
#[should_panic(expected = "cannot commit")]
fn bufmut_advance_mut_past_chunk_panics() {
    use bytes::BufMut;
    let mut r = RingBuffer::bounded(4);
    // SAFETY: the ring's storage is always initialised; this must panic
    // before marking anything.
    unsafe { r.advance_mut(5) };
}

#[test]
#[should_panic(expected = "cannot put")]
fn bufmut_put_slice_past_bound_panics() {
    use bytes::BufMut;
    let mut r = RingBuffer::bounded(2);
    r.put_slice(b"abc");
}

// ---- std::io -----------------------------------------------------------

#[test]
fn io_read_write_bufread() {
    use std::io::{BufRead, Read, Write};
    let mut r = RingBuffer::bounded(4);
    assert_eq!(Write::write(&mut r, b"abcdef").unwrap(), 4);
    assert_eq!(Write::write(&mut r, b"g").unwrap(), 0);
    let err = r.write_all(b"g").unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::WriteZero);
    r.flush().unwrap();
    assert_eq!(r.fill_buf().unwrap(), b"abcd");
    BufRead::consume(&mut r, 2);
    Write::write(&mut r, b"ef").unwrap();
    assert_eq!(r.fill_buf().unwrap(), b"cd");
    let mut s = String::new();
    r.read_to_string(&mut s).unwrap();
    assert_eq!(s, "cdef");
    let mut out = [0u8; 4];
    assert_eq!(Read::read(&mut r, &mut out).unwrap(), 0);
    assert!(r.fill_buf().unwrap().is_empty());
}

#[test]
fn io_copy_through_unbounded_ring() {
    let mut r = RingBuffer::with_capacity(3);
    let data: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
    std::io::copy(&mut &data[..], &mut r).unwrap();
    let mut out = Vec::new();
    std::io::copy(&mut r, &mut out).unwrap();
    assert_eq!(out, data);
}

#[test]
fn extend_appends() {
    let mut r = RingBuffer::new();
    r.extend(b"abc".iter());
    r.extend([b'd', b'e']);
    assert_eq!(contents(&r), b"abcde");
}

#[test]
#[should_panic(expected = "bounded ring buffer is full")]
fn extend_past_bound_panics() {
    let mut r = RingBuffer::bounded(2);
    r.extend(b"abc".iter());
}

// ---- model test ----------------------------------------------------------

#[derive(Debug, Clone)]
enum Op {
    Write(Vec<u8>),
    Read(usize),
    Peek(usize),
    Consume(usize),
    Reserve(usize),
    ShrinkTo(usize),
    MakeContiguous,
    Clear,
    SpareCommit(usize, u8),
    SpareBoth(usize, u8),
    Put(Vec<u8>),
    Truncate(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => proptest::collection::vec(any::<u8>(), 0..40).prop_map(Op::Write),
        3 => (0usize..40).prop_map(Op::Read),
        1 => (0usize..40).prop_map(Op::Peek),
        2 => (0usize..40).prop_map(Op::Consume),
        1 => (0usize..64).prop_map(Op::Reserve),
        1 => (0usize..64).prop_map(Op::ShrinkTo),
        1 => Just(Op::MakeContiguous),
        1 => Just(Op::Clear),
        2 => ((0usize..40), any::<u8>()).prop_map(|(n, b)| Op::SpareCommit(n, b)),
        2 => ((0usize..40), any::<u8>()).prop_map(|(n, b)| Op::SpareBoth(n, b)),
        2 => proptest::collection::vec(any::<u8>(), 0..40).prop_map(Op::Put),
        1 => (0usize..40).prop_map(Op::Truncate),
    ]
}

fn check(r: &RingBuffer, m: &VecDeque<u8>) -> Result<(), TestCaseError> {
    prop_assert_eq!(contents(r), m.iter().copied().collect::<Vec<_>>());
    prop_assert_eq!(r.len(), m.len());
    prop_assert_eq!(r.is_empty(), m.is_empty());
    prop_assert!(r.len() <= r.capacity());
    prop_assert_eq!(r.room(), r.capacity() - r.len());
    prop_assert_eq!(r.is_full(), r.len() == r.capacity());
    Ok(())
}

fn run_model(mut r: RingBuffer, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let bound = r.is_bounded().then(|| r.capacity());
    let mut m: VecDeque<u8> = VecDeque::new();
    for op in ops {
        match op {
            Op::Write(data) => {
                let expect = match bound {
                    Some(_) => data.len().min(r.room()),
                    None => data.len(),
                };
                prop_assert_eq!(r.write(&data), expect);
                m.extend(&data[..expect]);
            }
            Op::Read(n) => {
                let mut out = vec![0u8; n];
                let got = r.read(&mut out);
                prop_assert_eq!(got, n.min(m.len()));
                let expect: Vec<u8> = m.drain(..got).collect();
                prop_assert_eq!(&out[..got], &expect[..]);
            }
            Op::Peek(n) => {
                let mut out = vec![0u8; n];
                let got = r.peek(&mut out);
                prop_assert_eq!(got, n.min(m.len()));
                let expect: Vec<u8> = m.iter().take(got).copied().collect();
                prop_assert_eq!(&out[..got], &expect[..]);
            }
            Op::Consume(n) => {
                if n <= m.len() {
                    r.consume(n);
                    m.drain(..n);
                } else {
                    prop_assert!(r.try_consume(n).is_err());
                }
            }
            Op::Reserve(n) => {
                r.reserve(n);
                if bound.is_none() {
                    prop_assert!(r.room() >= n);
                }
            }
            Op::ShrinkTo(n) => {
                let before = r.capacity();
                r.shrink_to(n);
                if bound.is_none() {
                    prop_assert_eq!(r.capacity(), before.min(n.max(m.len())));
                }
            }
            Op::MakeContiguous => {
                let run = r.make_contiguous().to_vec();
                prop_assert_eq!(run, m.iter().copied().collect::<Vec<_>>());
                prop_assert!(r.as_slices().1.is_empty());
            }
            Op::Clear => {
                r.clear();
                m.clear();
            }
            Op::SpareCommit(n, byte) => {
                let spare = r.spare_mut();
                prop_assert_eq!(spare.is_empty(), r.room() == 0);
                let spare = r.spare_mut();
                let n = n.min(spare.len());
                spare[..n].fill(byte);
                r.commit(n);
                m.extend(std::iter::repeat_n(byte, n));
            }
            Op::SpareBoth(n, byte) => {
                // A vectored read of up to `n` bytes into both free runs.
                let room = r.room();
                let (first, second) = r.spare_slices_mut();
                prop_assert_eq!(first.len() + second.len(), room);
                let a = n.min(first.len());
                let b = (n - a).min(second.len());
                first[..a].fill(byte);
                second[..b].fill(byte.wrapping_add(1));
                r.commit(a);
                r.commit(b);
                m.extend(std::iter::repeat_n(byte, a));
                m.extend(std::iter::repeat_n(byte.wrapping_add(1), b));
            }
            Op::Put(data) => {
                if bound.is_some() && data.len() > r.room() {
                    prop_assert_eq!(r.put(&data), Err(OutOfSpace));
                } else {
                    prop_assert_eq!(r.put(&data), Ok(()));
                    m.extend(&data);
                }
            }
            Op::Truncate(n) => {
                let mark = r.mark();
                prop_assert_eq!(mark, m.len());
                r.truncate(n);
                m.truncate(n);
            }
        }
        if let Some(cap) = bound {
            prop_assert_eq!(r.capacity(), cap);
        }
        check(&r, &m)?;
    }
    prop_assert_eq!(r.into_vec(), m.into_iter().collect::<Vec<_>>());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn unbounded_matches_vecdeque(
        cap in 0usize..32,
        ops in proptest::collection::vec(op(), 0..64),
    ) {
        run_model(RingBuffer::with_capacity(cap), ops)?;
    }

    #[test]
    fn bounded_matches_vecdeque(
        cap in 0usize..32,
        ops in proptest::collection::vec(op(), 0..64),
    ) {
        run_model(RingBuffer::bounded(cap), ops)?;
    }

    #[test]
    fn new_matches_vecdeque(ops in proptest::collection::vec(op(), 0..64)) {
        run_model(RingBuffer::new(), ops)?;
    }
}
