//! h2spec's `hpack/*` (RFC 7541): a header block HPACK cannot decode is a
//! connection error of type COMPRESSION_ERROR. `c2_3_3_1` is
//! `hpack/2.3.3/1`. Over h2c and TLS.

use super::client::{Conn, Verdict, COMPRESSION_ERROR, HEADER_TABLE_SIZE};
use crate::common::hpack_int;

/// The GET's block with `before` in front and `after` behind, on stream
/// 1: a connection error COMPRESSION_ERROR.
async fn refused(mut c: Conn, before: &[u8], after: &[u8]) -> Verdict {
    c.handshake().await?;
    let mut block = before.to_vec();
    block.extend(c.encode(&c.common_headers()));
    block.extend_from_slice(after);
    c.write_headers(1, true, true, &block).await;
    c.verify_connection_error(&[COMPRESSION_ERROR]).await
}

/// 2.3.3/1: an indexed field with an index past both tables (70).
pub async fn c2_3_3_1(c: Conn) -> Verdict {
    refused(c, &[], b"\xc6").await
}

/// 2.3.3/2: a literal field whose name's index is past both tables.
pub async fn c2_3_3_2(c: Conn) -> Verdict {
    refused(c, &[], b"\x7f\x07\x00").await
}

/// 4.2/1: a dynamic table size update at the end of the block.
pub async fn c4_2_1(c: Conn) -> Verdict {
    refused(c, &[], b"\x21").await
}

/// 5.2/1: Huffman-coded with padding longer than 7 bits.
pub async fn c5_2_1(c: Conn) -> Verdict {
    refused(c, &[], b"\x00\x85\xf2\xb2\x4a\x84\xff\x84\x49\x50\x9f\xff").await
}

/// 5.2/2: Huffman-coded, padded with zeros.
pub async fn c5_2_2(c: Conn) -> Verdict {
    refused(c, &[], b"\x00\x85\xf2\xb2\x4a\x84\xff\x83\x49\x50\x90").await
}

/// 5.2/3: Huffman-coded, with the EOS symbol.
pub async fn c5_2_3(c: Conn) -> Verdict {
    let rep = b"\x00\x85\xf2\xb2\x4a\x84\xff\x87\x49\x51\xff\xff\xff\xfa\x7f";
    refused(c, &[], rep).await
}

/// 6.1/1: an indexed field with index 0.
pub async fn c6_1_1(c: Conn) -> Verdict {
    refused(c, &[], b"\x80").await
}

/// 6.3/1: a dynamic table size update above SETTINGS_HEADER_TABLE_SIZE
/// (the server's, or 4,096).
pub async fn c6_3_1(mut c: Conn) -> Verdict {
    c.handshake().await?;
    let max = c.settings.get(&HEADER_TABLE_SIZE).copied().unwrap_or(4096);
    let mut block = Vec::new();
    hpack_int(&mut block, 0x20, 5, max as usize + 1);
    block.extend(c.encode(&c.common_headers()));
    c.write_headers(1, true, true, &block).await;
    c.verify_connection_error(&[COMPRESSION_ERROR]).await
}

mod h2c {
    cases!(H2c: c2_3_3_1, c2_3_3_2, c4_2_1, c5_2_1, c5_2_2, c5_2_3, c6_1_1, c6_3_1);
}

mod tls {
    cases!(Tls: c2_3_3_1, c2_3_3_2, c4_2_1, c5_2_1, c5_2_2, c5_2_3, c6_1_1, c6_3_1);
}
