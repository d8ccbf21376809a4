//! Plaintext sealed into TLS records behind what a connection's outgoing
//! buffer holds.

use std::cell::RefCell;
use std::io::{self, IoSlice};

use rustls::server::ServerConnectionData;
use rustls::unbuffered::{EncryptError, InsufficientSizeError, WriteTraffic};

use super::record::{make_room, RECORD_OVERHEAD};

/// The most bytes of small slices gathered into one record.
const GATHERED: usize = 4096;

/// The most plaintext one TLS record carries (RFC 8446 §5.1).
const MAX_PLAINTEXT: usize = 16 * 1024;

thread_local! {
    /// Where small slices are gathered, one per thread and kept: a fresh
    /// zeroed array on every call cost more than the record it saves
    /// (4 KiB set to zero per response).
    static GATHER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Encrypts up to `max` bytes of `bufs` behind what `outgoing`
/// holds: a record per large slice (and per 16 KiB of one), and small
/// slices in a row (a response head, a chunk's size line and its CRLF)
/// gathered into one record, which costs a copy of a few bytes instead of
/// a record's header, tag and seal each. The gathered record also takes
/// the start of the large slice after it, up to what leaves the rest of
/// that slice in whole 16 KiB records, when it has room for it.
pub(super) fn encrypt(
    traffic: &mut WriteTraffic<'_, ServerConnectionData>,
    bufs: &[IoSlice<'_>],
    max: usize,
    outgoing: &mut Vec<u8>,
    encoded: &mut usize,
) -> io::Result<usize> {
    GATHER.with(|gather| {
        // Not reentrant: the one borrow of this thread's buffer.
        let mut gathered = gather.borrow_mut();
        gathered.clear();
        let mut taken = 0;
        for buf in bufs {
            let n = buf.len().min(max - taken);
            if n == 0 {
                if taken == max {
                    break;
                }
                continue;
            }
            let data = buf.get(..n).unwrap_or_default();
            taken += n;
            if gathered.len() + n <= GATHERED {
                gathered.extend_from_slice(data);
                continue;
            }
            let mut data = data;
            if !gathered.is_empty() {
                // The gathered bytes take the start of the large slice
                // with them when that leaves its rest in whole records:
                // a response head and a 40 KiB body go out in three
                // records, not four.
                let odd = data.len() % MAX_PLAINTEXT;
                if odd > 0 && gathered.len() + odd <= MAX_PLAINTEXT {
                    let (odd, rest) = data.split_at(odd);
                    gathered.extend_from_slice(odd);
                    data = rest;
                }
                seal(traffic, &gathered, outgoing, encoded)?;
                gathered.clear();
            }
            if !data.is_empty() {
                seal(traffic, data, outgoing, encoded)?;
            }
        }
        if !gathered.is_empty() {
            seal(traffic, &gathered, outgoing, encoded)?;
        }
        Ok(taken)
    })
}

/// Encrypts `data` (a record per 16 KiB) behind what `outgoing` holds.
fn seal(
    traffic: &mut WriteTraffic<'_, ServerConnectionData>,
    data: &[u8],
    outgoing: &mut Vec<u8>,
    encoded: &mut usize,
) -> io::Result<()> {
    let records = data.len().div_ceil(MAX_PLAINTEXT);
    make_room(outgoing, *encoded, data.len() + records * RECORD_OVERHEAD);
    loop {
        let room = outgoing.get_mut(*encoded..).unwrap_or_default();
        match traffic.encrypt(data, room) {
            Ok(written) => {
                *encoded += written;
                return Ok(());
            }
            Err(EncryptError::InsufficientSize(InsufficientSizeError { required_size })) => {
                make_room(outgoing, *encoded, required_size);
            }
            Err(e) => return Err(io::Error::other(e)),
        }
    }
}
