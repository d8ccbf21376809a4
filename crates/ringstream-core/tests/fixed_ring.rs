//! Integration tests for `FixedRing`, the ring over caller storage,
//! through its public API: arrays and borrowed slices, every wrap-around
//! edge, the `WriteBuf` and `fmt::Write` views, a response head written
//! into a transmit ring, and a `VecDeque<u8>` model test.

use std::collections::VecDeque;

use proptest::prelude::*;
use ringstream_core::h1::{write_response_head, ResponseFraming, ResponseHead};
use ringstream_core::ring::{ConsumeError, FixedRing};
use ringstream_core::{Error, OutOfSpace, SliceBuf, WriteBuf};

fn contents<S: AsRef<[u8]> + AsMut<[u8]>>(r: &FixedRing<S>) -> Vec<u8> {
    let (a, b) = r.as_slices();
    let mut v = a.to_vec();
    v.extend_from_slice(b);
    v
}

/// A full ring of capacity 8 whose data wraps: the first run "456789" sits
/// at offsets 2..8, the second run "ab" at 0..2.
fn wrapped() -> FixedRing<[u8; 8]> {
    let mut r = FixedRing::new([0u8; 8]);
    assert_eq!(r.write(b"xx4567"), 6);
    r.consume(2);
    assert_eq!(r.write(b"89ab"), 4);
    assert_eq!(r.as_slices(), (&b"456789"[..], &b"ab"[..]));
    r
}

// ---- construction -------------------------------------------------------

#[test]
fn new_is_empty_whatever_the_storage_holds() {
    let r = FixedRing::new(*b"leftover");
    assert_eq!(r.capacity(), 8);
    assert_eq!(r.room(), 8);
    assert!(r.is_empty() && !r.is_full());
    assert_eq!(r.as_slices(), (&b""[..], &b""[..]));
}

#[test]
fn works_over_a_borrowed_slice_and_gives_it_back() {
    let mut storage = [0u8; 5];
    let mut r = FixedRing::new(&mut storage[..]);
    assert_eq!(r.write(b"hello world"), 5);
    assert!(r.is_full());
    r.consume(5);
    assert_eq!(r.write(b"HEL"), 3);
    let storage = r.into_inner();
    assert_eq!(storage, b"HELlo");
}

#[test]
fn works_in_a_static() {
    static RING: std::sync::Mutex<FixedRing<[u8; 16]>> =
        std::sync::Mutex::new(FixedRing::new([0; 16]));
    let mut r = RING.lock().unwrap();
    r.write(b"static");
    assert_eq!(contents(&r), b"static");
}

#[test]
fn debug_shows_shape_not_contents() {
    let mut r = FixedRing::new([0u8; 8]);
    r.write(b"secret");
    let s = format!("{r:?}");
    assert!(s.contains("len: 6") && s.contains("capacity: 8"), "{s}");
    assert!(!s.contains("secret"));
}

#[test]
fn clone_of_an_array_ring_is_independent() {
    let mut a = wrapped();
    let b = a.clone();
    a.consume(3);
    assert_eq!(contents(&b), b"456789ab");
    assert_eq!(contents(&a), b"789ab");
}

// ---- write / read / peek / consume -------------------------------------

#[test]
fn write_takes_what_fits_and_read_drains_across_the_wrap() {
    let mut r = wrapped();
    assert_eq!(r.write(b"c"), 0);
    let mut out = [0u8; 7];
    assert_eq!(r.peek(&mut out), 7);
    assert_eq!(&out, b"456789a");
    assert_eq!(r.read(&mut out), 7);
    assert_eq!(&out, b"456789a");
    assert_eq!(contents(&r), b"b");
    assert_eq!(r.read(&mut out), 1);
    assert!(r.is_empty());
    // Drained: back at offset 0, one run again.
    assert_eq!(r.write(b"12345678"), 8);
    assert_eq!(r.as_slices(), (&b"12345678"[..], &b""[..]));
}

#[test]
fn try_consume_past_len_is_an_error_and_changes_nothing() {
    let mut r = wrapped();
    let e: ConsumeError = r.try_consume(9).unwrap_err();
    assert_eq!((e.requested(), e.available()), (9, 8));
    assert_eq!(
        e.to_string(),
        "cannot consume 9 bytes from a ring holding 8"
    );
    assert_eq!(r.len(), 8);
    r.try_consume(8).unwrap();
    assert!(r.is_empty());
}

#[test]
#[should_panic(expected = "cannot consume 2 bytes from a ring holding 1")]
fn consume_past_len_panics() {
    let mut r = FixedRing::new([0u8; 4]);
    r.write(b"a");
    r.consume(2);
}

#[test]
fn truncate_and_clear() {
    let mut r = wrapped();
    r.truncate(7);
    assert_eq!(contents(&r), b"456789a");
    r.truncate(3);
    assert_eq!(r.as_slices(), (&b"456"[..], &b""[..]));
    r.truncate(10);
    assert_eq!(r.len(), 3);
    r.clear();
    assert!(r.is_empty());
    assert_eq!(r.spare_mut().len(), 8);
}

#[test]
fn capacity_zero() {
    let mut r = FixedRing::new([0u8; 0]);
    assert!(r.is_empty() && r.is_full());
    assert_eq!(r.write(b"x"), 0);
    assert_eq!(r.put(b"x"), Err(OutOfSpace));
    assert_eq!(r.put(b""), Ok(()));
    assert_eq!(r.spare_slices_mut(), (&mut [][..], &mut [][..]));
    assert_eq!(r.make_contiguous(), b"");
}

// ---- spare / commit / make_contiguous ------------------------------------

#[test]
fn spare_runs_and_commit_unwrapped_then_wrapped() {
    let mut r = FixedRing::new([0u8; 8]);
    r.write(b"abcdef");
    r.consume(4); // "ef" at 4..6: free are 6..8, then 0..4
    let (first, second) = r.spare_slices_mut();
    assert_eq!((first.len(), second.len()), (2, 4));
    first.copy_from_slice(b"gh");
    second[..3].copy_from_slice(b"ijk");
    r.commit(2);
    assert_eq!(r.spare_mut().len(), 4);
    r.commit(3);
    assert_eq!(r.as_slices(), (&b"efgh"[..], &b"ijk"[..]));
    // Wrapped: one free run, between the tail and the head.
    let (first, second) = r.spare_slices_mut();
    assert_eq!((first.len(), second.len()), (1, 0));
    r.commit(1);
    assert!(r.is_full());
    assert!(r.spare_mut().is_empty());
}

#[test]
#[should_panic(expected = "cannot commit 3 bytes: only 2 spare bytes follow the data")]
fn commit_past_the_spare_run_panics() {
    let mut r = FixedRing::new([0u8; 4]);
    r.write(b"ab");
    r.commit(3);
}

#[test]
fn make_contiguous_and_mutable_runs() {
    let mut r = wrapped();
    r.as_mut_slices().1.make_ascii_uppercase();
    assert_eq!(contents(&r), b"456789AB");
    assert_eq!(r.make_contiguous(), b"456789AB");
    assert_eq!(r.as_slices(), (&b"456789AB"[..], &b""[..]));
    r.consume(8);
    assert_eq!(r.make_contiguous(), b"");
}

// ---- WriteBuf, fmt::Write, std::io ----------------------------------------

#[test]
fn put_is_all_or_nothing_across_the_wrap() {
    let mut r = FixedRing::new([0u8; 8]);
    r.write(b"abcdef");
    r.consume(5);
    let mark = r.mark();
    r.put(b"ghijklm").unwrap(); // 6..8, then 0..5
    assert_eq!(r.as_slices(), (&b"fgh"[..], &b"ijklm"[..]));
    assert_eq!(r.put(b"n"), Err(OutOfSpace));
    r.rewind(mark);
    assert_eq!(contents(&r), b"f");
}

#[test]
fn fmt_write_stores_whole_pieces() {
    let mut r = FixedRing::new([0u8; 8]);
    let (a, b) = std::hint::black_box(("abc", "def"));
    write!(r, "{a}{b}").unwrap();
    let n = std::hint::black_box(123);
    assert!(write!(r, "{n}").is_err());
    assert_eq!(contents(&r), b"abcdef");
}

#[cfg(feature = "std")]
#[test]
fn io_read_write_bufread() {
    use std::io::{BufRead, Read, Write};
    let mut r = FixedRing::new([0u8; 4]);
    assert_eq!(Write::write(&mut r, b"abcdef").unwrap(), 4);
    assert_eq!(
        r.write_all(b"x").unwrap_err().kind(),
        std::io::ErrorKind::WriteZero
    );
    assert_eq!(r.fill_buf().unwrap(), b"abcd");
    BufRead::consume(&mut r, 1);
    let mut out = Vec::new();
    r.read_to_end(&mut out).unwrap();
    assert_eq!(out, b"bcd");
    r.flush().unwrap();
}

/// A server without a heap writes its response head into the transmit
/// ring behind the bytes still waiting there, across the wrap; a head that
/// does not fit leaves the ring as it was.
#[test]
fn a_response_head_lands_in_a_transmit_ring() {
    let head = ResponseHead::new(200).date(b"Sun, 06 Nov 1994 08:49:37 GMT");
    let fields = [(&b"content-type"[..], &b"text/plain"[..])];
    let framing = ResponseFraming::Length(5);
    let mut storage = [0u8; 256];
    let mut expected = SliceBuf::new(&mut storage);
    write_response_head(&mut expected, &head, fields, framing, false).unwrap();
    let expected = expected.written();

    assert_eq!(expected.len(), 101);
    let mut tx = FixedRing::new([0u8; 128]);
    tx.write(&[b'.'; 120]);
    tx.consume(90); // 30 bytes still to send, at 90..120: 98 free
    let full = write_response_head(&mut tx, &head, fields, framing, false);
    assert_eq!(full, Err(Error::OutOfSpace));
    assert_eq!(contents(&tx), [b'.'; 30]);

    tx.consume(30); // sent; the ring restarts at offset 0
    tx.write(&[b'.'; 100]);
    tx.consume(95);
    write_response_head(&mut tx, &head, fields, framing, false).unwrap();
    let (a, b) = tx.as_slices();
    assert!(!b.is_empty(), "the head wraps");
    let mut sent = a.to_vec();
    sent.extend_from_slice(b);
    assert_eq!(&sent[..5], b".....");
    assert_eq!(&sent[5..], expected);
}

// ---- model test ----------------------------------------------------------

#[derive(Debug, Clone)]
enum Op {
    Write(Vec<u8>),
    Put(Vec<u8>),
    Read(usize),
    Peek(usize),
    Consume(usize),
    Truncate(usize),
    MakeContiguous,
    Clear,
    SpareCommit(usize, u8),
    SpareBoth(usize, u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => proptest::collection::vec(any::<u8>(), 0..40).prop_map(Op::Write),
        2 => proptest::collection::vec(any::<u8>(), 0..40).prop_map(Op::Put),
        3 => (0usize..40).prop_map(Op::Read),
        1 => (0usize..40).prop_map(Op::Peek),
        2 => (0usize..40).prop_map(Op::Consume),
        1 => (0usize..40).prop_map(Op::Truncate),
        1 => Just(Op::MakeContiguous),
        1 => Just(Op::Clear),
        2 => ((0usize..40), any::<u8>()).prop_map(|(n, b)| Op::SpareCommit(n, b)),
        2 => ((0usize..40), any::<u8>()).prop_map(|(n, b)| Op::SpareBoth(n, b)),
    ]
}

fn run_model<S: AsRef<[u8]> + AsMut<[u8]>>(
    mut r: FixedRing<S>,
    ops: Vec<Op>,
) -> Result<(), TestCaseError> {
    let cap = r.capacity();
    let mut m: VecDeque<u8> = VecDeque::new();
    for op in ops {
        match op {
            Op::Write(data) => {
                let expect = data.len().min(cap - m.len());
                prop_assert_eq!(r.write(&data), expect);
                m.extend(&data[..expect]);
            }
            Op::Put(data) => {
                if data.len() <= cap - m.len() {
                    prop_assert_eq!(r.put(&data), Ok(()));
                    m.extend(&data);
                } else {
                    prop_assert_eq!(r.put(&data), Err(OutOfSpace));
                }
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
            Op::Truncate(n) => {
                r.truncate(n);
                m.truncate(n);
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
                prop_assert_eq!(spare.is_empty(), m.len() == cap);
                let n = n.min(spare.len());
                spare[..n].fill(byte);
                r.commit(n);
                m.extend(std::iter::repeat_n(byte, n));
            }
            Op::SpareBoth(n, byte) => {
                // A vectored read of up to `n` bytes into both free runs.
                let (first, second) = r.spare_slices_mut();
                prop_assert_eq!(first.len() + second.len(), cap - m.len());
                let a = n.min(first.len());
                let b = (n - a).min(second.len());
                first[..a].fill(byte);
                second[..b].fill(byte.wrapping_add(1));
                r.commit(a);
                r.commit(b);
                m.extend(std::iter::repeat_n(byte, a));
                m.extend(std::iter::repeat_n(byte.wrapping_add(1), b));
            }
        }
        prop_assert_eq!(contents(&r), m.iter().copied().collect::<Vec<_>>());
        prop_assert_eq!(r.len(), m.len());
        prop_assert_eq!(r.is_empty(), m.is_empty());
        prop_assert_eq!(r.is_full(), m.len() == cap);
        prop_assert_eq!(r.room(), cap - m.len());
        prop_assert_eq!(r.capacity(), cap);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn array_ring_matches_vecdeque(ops in proptest::collection::vec(op(), 0..64)) {
        run_model(FixedRing::new([0u8; 13]), ops)?;
    }

    #[test]
    fn slice_ring_matches_vecdeque(
        cap in 0usize..32,
        ops in proptest::collection::vec(op(), 0..64),
    ) {
        let mut storage = vec![0xa5u8; cap];
        run_model(FixedRing::new(&mut storage[..]), ops)?;
    }
}
