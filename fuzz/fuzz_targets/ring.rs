//! Drives a `RingBuffer` through an arbitrary sequence of operations (every
//! public way to write, read, view, grow, shrink and rebuild it, through its
//! own methods and through the `bytes`, `std::io` and `fmt` traits) and
//! applies each one to a `VecDeque<u8>` model as well. After every
//! operation the two must hold the same bytes, every returned value must be
//! the model's, and the capacity must follow the growth policy: fixed for a
//! bounded ring; for an unbounded one unchanged unless a write needed more
//! room, then at least doubled, and changed by `shrink_to` only as
//! documented.
#![no_main]

use std::collections::VecDeque;
use std::io::IoSlice;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use ringstream_core::RingBuffer;

/// Capacity, in bytes, of the first allocation of an unbounded ring (the
/// ring's own `MIN_GROWTH`): growth never goes beyond
/// `max(2 * capacity, needed, MIN_GROWTH)`.
const MIN_GROWTH: usize = 64;

/// Most bytes the model holds, so that comparing the whole contents after
/// every operation stays cheap; operations that would store more are
/// skipped.
const MAX_LEN: usize = 1 << 16;

/// How the ring is made.
#[derive(Arbitrary, Debug)]
enum Start {
    New,
    Default,
    WithCapacity(u8),
    Bounded(u8),
    BoundedLarge(u16),
    FromSlice(Size),
    /// `From<Vec<u8>>` of a vector holding `len` bytes with room for
    /// `spare` more.
    FromVec {
        len: Size,
        spare: u8,
    },
}

/// A byte count: mostly around the first allocation size, sometimes up to
/// 4 KiB.
#[derive(Arbitrary, Debug, Clone, Copy)]
struct Size(u16);

impl Size {
    fn get(self) -> usize {
        let n = usize::from(self.0);
        if n < 0xc000 {
            n % 72
        } else {
            n % 4096
        }
    }
}

/// One operation. Counts that must not exceed the stored length (for the
/// panicking forms) are taken modulo `len() + 1`.
#[derive(Arbitrary, Debug)]
enum Op {
    Write(Size),
    TryWriteContiguous(Size),
    FmtWriteStr(Size),
    /// `write!(ring, "{a}-{b}")`: three pieces.
    WriteFmt(Size, Size),
    IoWrite(Size),
    IoWriteAll(Size),
    Extend(Size),
    ExtendRef(Size),
    PutSlice(Size),
    PutU8,
    PutU32,
    /// `spare_mut`, fill `fill` bytes of it, `commit` some of them.
    SpareCommit {
        fill: u16,
        commit: u16,
    },
    /// `BufMut::chunk_mut`, fill, `advance_mut`.
    ChunkMutAdvance {
        fill: u16,
        commit: u16,
    },
    Read(u16),
    Peek(u16),
    IoRead(u16),
    ReadToEnd,
    ReadUntil(u8),
    Consume(u16),
    TryConsume(u16),
    Advance(u16),
    BufReadConsume(u16),
    CopyToSlice(u16),
    CopyToBytes(u16),
    GetU8,
    GetU32,
    ChunksVectored(u8),
    Clear,
    Reserve(u16),
    ShrinkTo(u16),
    MakeContiguous,
    /// Continue with a clone.
    Clone,
    /// `into_vec`, then `From<Vec<u8>>`.
    IntoVecAndBack,
    Debug,
}

#[derive(Arbitrary, Debug)]
struct Input {
    start: Start,
    ops: Vec<Op>,
}

/// The ring, its model and what the checks need to remember.
struct Harness {
    ring: RingBuffer,
    model: VecDeque<u8>,
    /// Source of the bytes written: a counter modulo 251, so consecutive
    /// bytes differ and the pattern never lines up with a power-of-two
    /// capacity.
    next: u8,
}

impl Harness {
    fn fresh(&mut self, n: usize) -> Vec<u8> {
        (0..n)
            .map(|_| {
                let b = self.next;
                self.next = if b == 250 { 0 } else { b + 1 };
                b
            })
            .collect()
    }

    fn len(&self) -> usize {
        self.model.len()
    }

    /// Whether `n` more bytes stay within `MAX_LEN`.
    fn may_add(&self, n: usize) -> bool {
        self.len() + n <= MAX_LEN
    }

    fn fresh_str(&mut self, n: usize) -> String {
        // Printable ASCII, so each byte is one `char`.
        self.fresh(n)
            .into_iter()
            .map(|b| char::from(b'!' + b % 94))
            .collect()
    }

    /// Removes `n` bytes from the front of the model and returns them.
    fn take_front(&mut self, n: usize) -> Vec<u8> {
        self.model.drain(..n).collect()
    }

    /// Applies `op` to the ring and the model and checks what it returned.
    /// Returns how many bytes of room the operation needed (so the caller
    /// can check growth), or `None` if it was skipped.
    fn apply(&mut self, op: &Op) -> Option<usize> {
        let len = self.len();
        let room = self.ring.room();
        let bounded = self.ring.is_bounded();
        let mut need = 0;
        match *op {
            Op::Write(n) => {
                let src = self.fresh(n.get());
                if !self.may_add(src.len()) {
                    return None;
                }
                let stored = self.ring.write(&src);
                let expect = if bounded {
                    src.len().min(room)
                } else {
                    src.len()
                };
                assert_eq!(stored, expect, "write");
                self.model.extend(&src[..stored]);
                need = src.len();
            }
            Op::TryWriteContiguous(n) => {
                let src = self.fresh(n.get());
                let wrapped = !self.ring.as_slices().1.is_empty();
                let done = self.ring.try_write_contiguous(&src);
                if done {
                    assert!(src.len() <= room, "contiguous write beyond the room");
                    assert!(!wrapped, "contiguous write after wrapped data");
                    self.model.extend(&src);
                }
            }
            Op::FmtWriteStr(n) => {
                let s = self.fresh_str(n.get());
                if !self.may_add(s.len()) {
                    return None;
                }
                let result = std::fmt::Write::write_str(&mut self.ring, &s);
                if bounded && s.len() > room {
                    assert!(result.is_err(), "write_str beyond a bound");
                } else {
                    assert!(result.is_ok(), "write_str");
                    self.model.extend(s.as_bytes());
                }
                need = s.len();
            }
            Op::WriteFmt(a, b) => {
                let (a, b) = (self.fresh_str(a.get()), self.fresh_str(b.get()));
                if !self.may_add(a.len() + b.len() + 1) {
                    return None;
                }
                let result = write!(self.ring, "{a}-{b}");
                // Each piece is stored whole or, on a bounded ring without
                // room for it, not at all, and then formatting stops.
                let mut left = room;
                let mut ok = true;
                for piece in [a.as_str(), "-", b.as_str()] {
                    if bounded && piece.len() > left {
                        ok = false;
                        break;
                    }
                    left = left.saturating_sub(piece.len());
                    self.model.extend(piece.as_bytes());
                }
                assert_eq!(result.is_ok(), ok, "write_fmt");
                // Each piece may grow the ring: at least doubling it.
                let total = a.len() + b.len() + 1;
                let (cap, new_cap) = (len + room, self.ring.capacity());
                if bounded || total <= room {
                    assert_eq!(new_cap, cap, "write_fmt changed the capacity");
                } else {
                    assert!(
                        new_cap >= (2 * cap).max(len + total),
                        "write_fmt grew to {new_cap}"
                    );
                }
                return Some(usize::MAX);
            }
            Op::IoWrite(n) => {
                let src = self.fresh(n.get());
                if !self.may_add(src.len()) {
                    return None;
                }
                let stored = std::io::Write::write(&mut self.ring, &src).unwrap();
                let expect = if bounded {
                    src.len().min(room)
                } else {
                    src.len()
                };
                assert_eq!(stored, expect, "io::Write::write");
                self.model.extend(&src[..stored]);
                std::io::Write::flush(&mut self.ring).unwrap();
                need = src.len();
            }
            Op::IoWriteAll(n) => {
                let src = self.fresh(n.get());
                if !self.may_add(src.len()) {
                    return None;
                }
                let result = std::io::Write::write_all(&mut self.ring, &src);
                if bounded && src.len() > room {
                    let err = result.unwrap_err();
                    assert_eq!(err.kind(), std::io::ErrorKind::WriteZero);
                    self.model.extend(&src[..room]);
                } else {
                    result.unwrap();
                    self.model.extend(&src);
                }
                need = src.len();
            }
            Op::Extend(n) | Op::ExtendRef(n) => {
                let src = self.fresh(n.get());
                // A bounded ring panics when the bytes do not fit.
                if !self.may_add(src.len()) || (bounded && src.len() > room) {
                    return None;
                }
                if matches!(op, Op::Extend(_)) {
                    self.ring.extend(src.iter().copied());
                } else {
                    self.ring.extend(src.iter());
                }
                self.model.extend(&src);
                need = src.len();
            }
            Op::PutSlice(n) => {
                let src = self.fresh(n.get());
                if !self.may_add(src.len()) || (bounded && src.len() > room) {
                    return None;
                }
                bytes::BufMut::put_slice(&mut self.ring, &src);
                self.model.extend(&src);
                need = src.len();
            }
            Op::PutU8 => {
                if !self.may_add(1) || (bounded && room == 0) {
                    return None;
                }
                let b = self.fresh(1)[0];
                bytes::BufMut::put_u8(&mut self.ring, b);
                self.model.push_back(b);
                need = 1;
            }
            Op::PutU32 => {
                if !self.may_add(4) || (bounded && room < 4) {
                    return None;
                }
                let src = self.fresh(4);
                let v = u32::from_be_bytes(src[..].try_into().unwrap());
                bytes::BufMut::put_u32(&mut self.ring, v);
                self.model.extend(&src);
                need = 4;
            }
            Op::SpareCommit { fill, commit } => {
                let wrapped_end = self.wrapped_end();
                let spare_len = self.ring.spare_mut().len();
                self.check_spare(spare_len, wrapped_end, room);
                let fill = (usize::from(fill) % (spare_len + 1)).min(MAX_LEN - len);
                let commit = usize::from(commit) % (fill + 1);
                let src = self.fresh(fill);
                let spare = self.ring.spare_mut();
                assert_eq!(spare.len(), spare_len, "spare_mut changed");
                if let (Some(end), false) = (wrapped_end, spare.is_empty()) {
                    assert_eq!(spare.as_ptr() as usize, end, "spare run after the data");
                }
                spare[..fill].copy_from_slice(&src);
                self.ring.commit(commit);
                self.model.extend(&src[..commit]);
            }
            Op::ChunkMutAdvance { fill, commit } => {
                if !bounded && room == 0 && !self.may_add(1) {
                    return None;
                }
                let wrapped_end = self.wrapped_end();
                let chunk = bytes::BufMut::chunk_mut(&mut self.ring);
                let chunk_len = chunk.len();
                if bounded || room > 0 {
                    // No growth: the same run as `spare_mut`.
                    self.check_spare(chunk_len, wrapped_end, room);
                } else {
                    // A full unbounded ring grows for it.
                    assert!(chunk_len > 0, "chunk_mut of a grown ring is empty");
                    need = 1;
                }
                let fill = (usize::from(fill) % (chunk_len + 1)).min(MAX_LEN - len);
                let commit = usize::from(commit) % (fill + 1);
                let src = self.fresh(fill);
                let chunk = bytes::BufMut::chunk_mut(&mut self.ring);
                assert_eq!(chunk.len(), chunk_len, "chunk_mut changed");
                chunk[..fill].copy_from_slice(&src);
                // SAFETY: the first `commit <= fill` bytes of the run were
                // just written.
                unsafe { bytes::BufMut::advance_mut(&mut self.ring, commit) };
                self.model.extend(&src[..commit]);
            }
            Op::Read(n) | Op::Peek(n) | Op::IoRead(n) => {
                let n = usize::from(n) % (len + 2);
                let mut dst = vec![0xee; n];
                let got = match op {
                    Op::Read(_) => self.ring.read(&mut dst),
                    Op::Peek(_) => self.ring.peek(&mut dst),
                    _ => std::io::Read::read(&mut self.ring, &mut dst).unwrap(),
                };
                let expect = n.min(len);
                assert_eq!(got, expect, "read count");
                assert!(dst[got..].iter().all(|&b| b == 0xee), "read past its count");
                let front: Vec<u8> = if matches!(op, Op::Peek(_)) {
                    self.model.iter().take(got).copied().collect()
                } else {
                    self.take_front(got)
                };
                assert_eq!(dst[..got], front[..], "read bytes");
            }
            Op::ReadToEnd => {
                let mut out = Vec::new();
                let n = std::io::Read::read_to_end(&mut self.ring, &mut out).unwrap();
                assert_eq!(n, len);
                assert_eq!(out, self.take_front(len), "read_to_end");
            }
            Op::ReadUntil(byte) => {
                let mut out = Vec::new();
                let n = std::io::BufRead::read_until(&mut self.ring, byte, &mut out).unwrap();
                let expect = self
                    .model
                    .iter()
                    .position(|&b| b == byte)
                    .map_or(len, |i| i + 1);
                assert_eq!(n, expect, "read_until count");
                assert_eq!(out, self.take_front(expect), "read_until bytes");
            }
            Op::Consume(n) | Op::Advance(n) | Op::BufReadConsume(n) => {
                let n = usize::from(n) % (len + 1);
                match op {
                    Op::Consume(_) => self.ring.consume(n),
                    Op::Advance(_) => bytes::Buf::advance(&mut self.ring, n),
                    _ => std::io::BufRead::consume(&mut self.ring, n),
                }
                self.take_front(n);
            }
            Op::TryConsume(n) => {
                let n = usize::from(n) % (len + 3);
                match self.ring.try_consume(n) {
                    Ok(()) => {
                        assert!(n <= len, "consumed more than stored");
                        self.take_front(n);
                    }
                    Err(err) => {
                        assert!(n > len, "try_consume refused {n} of {len}");
                        assert_eq!((err.requested(), err.available()), (n, len));
                        assert_eq!(
                            err.to_string(),
                            format!("cannot consume {n} bytes from a ring holding {len}")
                        );
                    }
                }
            }
            Op::CopyToSlice(n) => {
                let n = usize::from(n) % (len + 1);
                let mut dst = vec![0; n];
                bytes::Buf::copy_to_slice(&mut self.ring, &mut dst);
                assert_eq!(dst, self.take_front(n), "copy_to_slice");
            }
            Op::CopyToBytes(n) => {
                let n = usize::from(n) % (len + 1);
                let got = bytes::Buf::copy_to_bytes(&mut self.ring, n);
                assert_eq!(got[..], self.take_front(n)[..], "copy_to_bytes");
            }
            Op::GetU8 => {
                if len == 0 {
                    return None;
                }
                let got = bytes::Buf::get_u8(&mut self.ring);
                assert_eq!(got, self.model.pop_front().unwrap(), "get_u8");
            }
            Op::GetU32 => {
                if len < 4 {
                    return None;
                }
                let got = bytes::Buf::get_u32(&mut self.ring);
                let front = self.take_front(4);
                assert_eq!(got, u32::from_be_bytes(front[..].try_into().unwrap()));
            }
            Op::ChunksVectored(slots) => {
                let slots = usize::from(slots % 4);
                let mut dst = [IoSlice::new(&[]); 3];
                let n = bytes::Buf::chunks_vectored(&self.ring, &mut dst[..slots]);
                let (a, b) = self.ring.as_slices();
                let runs: Vec<&[u8]> = [a, b].into_iter().filter(|r| !r.is_empty()).collect();
                assert_eq!(n, runs.len().min(slots), "chunks_vectored count");
                for (slice, run) in dst[..n].iter().zip(&runs) {
                    assert_eq!(&slice[..], *run, "chunks_vectored run");
                }
            }
            Op::Clear => {
                self.ring.clear();
                self.model.clear();
            }
            Op::Reserve(additional) => {
                let additional = usize::from(additional);
                if !self.may_add(additional) {
                    return None;
                }
                self.ring.reserve(additional);
                if !bounded {
                    assert!(
                        self.ring.room() >= additional,
                        "reserve left too little room"
                    );
                }
                need = additional;
            }
            Op::ShrinkTo(min) => {
                let min = usize::from(min);
                let cap = self.ring.capacity();
                self.ring.shrink_to(min);
                let expect = if bounded { cap } else { cap.min(len.max(min)) };
                assert_eq!(self.ring.capacity(), expect, "shrink_to");
                if expect < cap {
                    assert!(self.ring.as_slices().1.is_empty(), "shrink_to kept a wrap");
                }
                // Already checked; tell the caller not to expect `cap`.
                return Some(usize::MAX);
            }
            Op::MakeContiguous => {
                let run = self.ring.make_contiguous();
                assert!(run.iter().eq(self.model.iter()), "make_contiguous");
                if let Some(first) = run.first_mut() {
                    *first ^= 0xff;
                    self.model[0] ^= 0xff;
                }
                assert!(self.ring.as_slices().1.is_empty(), "still wrapped");
            }
            Op::Clone => {
                let copy = self.ring.clone();
                let (a, b) = self.ring.as_slices();
                let (ca, cb) = copy.as_slices();
                assert_eq!((a, b), (ca, cb), "clone has another layout");
                assert_eq!(copy.capacity(), self.ring.capacity(), "clone capacity");
                assert_eq!(copy.is_bounded(), bounded, "clone bound");
                self.ring = copy;
            }
            Op::IntoVecAndBack => {
                let cap = self.ring.capacity();
                let ring = std::mem::take(&mut self.ring);
                assert_eq!(self.ring.capacity(), 0, "Default is not empty");
                let v = ring.into_vec();
                assert!(v.iter().eq(self.model.iter()), "into_vec");
                assert!(v.capacity() >= cap, "into_vec lost capacity");
                let vcap = v.capacity();
                self.ring = RingBuffer::from(v);
                assert_eq!(self.ring.capacity(), vcap, "From<Vec> capacity");
                assert!(!self.ring.is_bounded());
                return Some(usize::MAX);
            }
            Op::Debug => {
                let text = format!("{:?}", self.ring);
                assert!(text.contains(&format!("len: {len},")), "{text}");
            }
        }
        Some(need)
    }

    /// Where the second run ends, if the data wraps: the free bytes are
    /// then the one gap between it and the first run.
    fn wrapped_end(&self) -> Option<usize> {
        let (_, b) = self.ring.as_slices();
        (!b.is_empty()).then(|| b.as_ptr() as usize + b.len())
    }

    /// A writable run (without growth) is empty exactly when there is no
    /// room, never larger than the room, and all of it when the data wraps.
    fn check_spare(&self, spare: usize, wrapped_end: Option<usize>, room: usize) {
        assert_eq!(spare == 0, room == 0, "spare run {spare} with room {room}");
        assert!(spare <= room, "spare run {spare} beyond room {room}");
        if wrapped_end.is_some() {
            assert_eq!(spare, room, "the gap of wrapped data is the room");
        }
    }

    /// Length, contents and the read-only views agree with the model.
    fn check(&mut self) {
        let len = self.len();
        assert_eq!(self.ring.len(), len, "len");
        assert_eq!(self.ring.is_empty(), len == 0, "is_empty");
        assert!(len <= self.ring.capacity(), "len beyond capacity");
        assert_eq!(self.ring.room(), self.ring.capacity() - len, "room");
        let (a, b) = self.ring.as_slices();
        assert_eq!(a.len() + b.len(), len, "runs");
        assert!(!a.is_empty() || b.is_empty(), "second run without a first");
        assert!(a.iter().chain(b).eq(self.model.iter()), "contents");
        assert_eq!(bytes::Buf::remaining(&self.ring), len, "remaining");
        assert_eq!(bytes::Buf::chunk(&self.ring), a, "chunk");
        let remaining_mut = if self.ring.is_bounded() {
            self.ring.room()
        } else {
            isize::MAX as usize - len
        };
        assert_eq!(bytes::BufMut::remaining_mut(&self.ring), remaining_mut);
        let first = a.to_vec();
        let filled = std::io::BufRead::fill_buf(&mut self.ring).unwrap();
        assert_eq!(filled, first, "fill_buf");
    }
}

fuzz_target!(|input: Input| {
    let mut h = Harness {
        ring: RingBuffer::new(),
        model: VecDeque::new(),
        next: 0,
    };
    let (ring, model) = match input.start {
        Start::New => (RingBuffer::new(), Vec::new()),
        Start::Default => (RingBuffer::default(), Vec::new()),
        Start::WithCapacity(cap) => (RingBuffer::with_capacity(cap.into()), Vec::new()),
        Start::Bounded(cap) => (RingBuffer::bounded(cap.into()), Vec::new()),
        Start::BoundedLarge(cap) => (RingBuffer::bounded(cap.into()), Vec::new()),
        Start::FromSlice(n) => {
            let bytes = h.fresh(n.get());
            (RingBuffer::from(&bytes[..]), bytes)
        }
        Start::FromVec { len, spare } => {
            let bytes = h.fresh(len.get());
            let mut v = Vec::with_capacity(bytes.len() + usize::from(spare));
            v.extend_from_slice(&bytes);
            (RingBuffer::from(v), bytes)
        }
    };
    let initial_cap = ring.capacity();
    match input.start {
        Start::New | Start::Default => assert_eq!(initial_cap, 0),
        Start::WithCapacity(cap) | Start::Bounded(cap) => assert_eq!(initial_cap, cap.into()),
        Start::BoundedLarge(cap) => assert_eq!(initial_cap, cap.into()),
        Start::FromSlice(_) => assert_eq!(initial_cap, model.len()),
        Start::FromVec { .. } => assert!(initial_cap >= model.len()),
    }
    let bounded = matches!(input.start, Start::Bounded(_) | Start::BoundedLarge(_));
    assert_eq!(ring.is_bounded(), bounded);
    h.ring = ring;
    h.model = model.into();
    h.check();
    for op in &input.ops {
        let cap = h.ring.capacity();
        let len = h.len();
        let room = h.ring.room();
        let bounded = h.ring.is_bounded();
        let Some(need) = h.apply(op) else {
            h.check();
            assert_eq!(
                h.ring.capacity(),
                cap,
                "a skipped operation changed the capacity"
            );
            continue;
        };
        h.check();
        let new_cap = h.ring.capacity();
        if need == usize::MAX {
            // The operation checked the capacity itself.
        } else if bounded || need <= room {
            assert_eq!(new_cap, cap, "capacity changed without need by {op:?}");
        } else {
            let needed = len + need;
            assert!(new_cap >= needed, "{op:?} grew to {new_cap} < {needed}");
            assert!(
                new_cap >= 2 * cap,
                "{op:?} grew {cap} to {new_cap}: not doubled"
            );
            let most = (2 * cap).max(needed).max(MIN_GROWTH);
            assert!(new_cap <= most, "{op:?} grew {cap} to {new_cap} > {most}");
        }
    }
});
