//! Strict, sans-IO HTTP/1.1 framing (RFC 9112).
//!
//! - `head`: request-head parsing and validation, deciding the body framing.
//! - `decode`: `LengthDecoder` and `ChunkedDecoder`, stepping over byte slices.
//! - `encode`: the response head writer, `LengthEncoder`, `ChunkedEncoder` and
//!   the response-framing rule.
