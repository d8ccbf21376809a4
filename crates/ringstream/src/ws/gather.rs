//! A message on its way in: [`Incoming`], its data gathered from its
//! frames without a copy when it came in one piece ([`Gathered`]).

use bytes::{Bytes, BytesMut};
use ringstream_core::ws::MessageKind;

/// A message on its way in.
#[derive(Debug)]
pub(super) struct Incoming {
    pub(super) kind: MessageKind,
    pub(super) data: Gathered,
    /// The message is compressed: its pieces go to the inflater.
    pub(super) compressed: bool,
}

/// The data of a message so far: one piece (not copied) or several
/// (gathered).
#[derive(Debug)]
pub(super) enum Gathered {
    Empty,
    One(Bytes),
    Many(BytesMut),
}

impl Gathered {
    pub(super) fn push(&mut self, piece: Bytes) {
        *self = match std::mem::replace(self, Gathered::Empty) {
            Gathered::Empty => Gathered::One(piece),
            Gathered::One(first) => {
                let mut many = BytesMut::with_capacity(first.len() + piece.len());
                many.extend_from_slice(&first);
                many.extend_from_slice(&piece);
                Gathered::Many(many)
            }
            Gathered::Many(mut many) => {
                many.extend_from_slice(&piece);
                Gathered::Many(many)
            }
        };
    }

    pub(super) fn into_bytes(self) -> Bytes {
        match self {
            Gathered::Empty => Bytes::new(),
            Gathered::One(one) => one,
            Gathered::Many(many) => many.freeze(),
        }
    }
}
