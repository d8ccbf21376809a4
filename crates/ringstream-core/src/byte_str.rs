//! `Debug` for short byte strings, as `b"..."` with escapes, without a heap.

use core::fmt;

/// Shows bytes the way `bytes::Bytes` does in `Debug` output: printable
/// ASCII as is, `\n`, `\r`, `\t`, `\\`, `\"` and `\0` escaped, any other
/// byte as `\xNN`.
pub(crate) struct ByteStr<'a>(pub(crate) &'a [u8]);

impl fmt::Debug for ByteStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("b\"")?;
        for &b in self.0 {
            match b {
                b'\n' => f.write_str("\\n")?,
                b'\r' => f.write_str("\\r")?,
                b'\t' => f.write_str("\\t")?,
                b'\\' | b'"' => write!(f, "\\{}", char::from(b))?,
                b'\0' => f.write_str("\\0")?,
                0x20..0x7f => write!(f, "{}", char::from(b))?,
                _ => write!(f, "\\x{b:02x}")?,
            }
        }
        f.write_str("\"")
    }
}

#[cfg(test)]
mod tests {
    use super::ByteStr;
    use alloc::format;

    #[test]
    fn escapes_like_bytes_debug() {
        let shown = format!("{:?}", ByteStr(b"a\r\n\t\\\"\0\x7f\xff z"));
        assert_eq!(shown, r#"b"a\r\n\t\\\"\0\x7f\xff z""#);
    }
}
