//! The sizes of TLS records and the buffers they are encrypted and
//! decrypted in, shared by the transport and the sealing of records.

use crate::stream::pool;

/// The largest record a peer may send: 16 KiB of plaintext, its 5-byte
/// header and up to 256 bytes of expansion (RFC 8446 §5.2).
pub(super) const MAX_RECORD: usize = 5 + 16 * 1024 + 256;

/// The size of a new buffer: a whole record of the largest.
pub(super) const BUFFER: usize = MAX_RECORD;

/// A bound on what encryption adds to one record: its header, the tag,
/// the content type byte and padding room.
pub(super) const RECORD_OVERHEAD: usize = 5 + 256;

/// Makes room for `needed` bytes after the first `used` of `buffer`
/// (initialised, for rustls to write into): a buffer from the pool, or a
/// new one of at least [`BUFFER`] bytes, or `buffer` grown.
pub(super) fn make_room(buffer: &mut Vec<u8>, used: usize, needed: usize) {
    let size = used + needed;
    if buffer.len() >= size {
        return;
    }
    if buffer.is_empty() {
        if let Some(pooled) = pool::take_filled(size) {
            *buffer = pooled;
            return;
        }
        buffer.resize(size.max(BUFFER), 0);
        return;
    }
    buffer.resize(size, 0);
}
