//! Placeholder replaced by the ring buffer.
/// Growable circular byte buffer.
pub struct RingBuffer;
