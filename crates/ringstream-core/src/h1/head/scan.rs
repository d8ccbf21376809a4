//! The end-of-head scan: what it carries from call to call ([`Scan`]),
//! and the general scan of one line, complete or not, valid or not.

use super::field::Field;
use super::line::{ascii_str, field_line, find_line_end, method_bytes, request_line, RequestLine};
use super::target::TargetForm;
use crate::h1::syntax::trim_ows;
use crate::h1::version::Version;
use crate::{Error, Limits};

/// How far the end-of-head scan has got, carried from call to call.
#[derive(Debug, Clone, Copy)]
pub(super) struct Scan {
    /// Next byte to examine.
    pub(super) pos: usize,
    /// Start of the line being scanned.
    pub(super) line_start: usize,
    /// Method and target of the validated request line, as (start, end)
    /// offsets, and where the field lines start.
    pub(super) method: (usize, usize),
    pub(super) target: (usize, usize),
    pub(super) fields_start: usize,
    /// The request line has been seen and validated.
    pub(super) request_line_done: bool,
    /// Offset of the first SP of the request line, once seen.
    first_sp: Option<usize>,
    /// The SP ending the request-target has been seen.
    target_done: bool,
    /// Field lines seen so far.
    pub(super) field_lines: usize,
    /// Version of the validated request line.
    pub(super) version: Version,
    /// Target form of the validated request line.
    pub(super) form: TargetForm,
    /// The final answer once known: the head length, or the error.
    pub(super) outcome: Option<Result<usize, Error>>,
}

impl Scan {
    pub(super) const START: Scan = Scan {
        pos: 0,
        line_start: 0,
        method: (0, 0),
        target: (0, 0),
        fields_start: 0,
        request_line_done: false,
        first_sp: None,
        target_done: false,
        field_lines: 0,
        version: Version::Http11,
        form: TargetForm::Origin,
        outcome: None,
    };

    /// Takes the request line validated at `line_start`, whose field lines
    /// start at `fields_start`.
    pub(super) fn set_request_line(
        &mut self,
        rl: &RequestLine,
        line_start: usize,
        fields_start: usize,
    ) {
        self.version = rl.version;
        self.form = rl.form;
        self.method = (line_start, line_start + rl.method_len);
        self.target = (self.method.1 + 1, self.method.1 + 1 + rl.target_len);
        self.fields_start = fields_start;
        self.request_line_done = true;
    }
}

/// Where the general scan of a line got to.
pub(super) enum Line {
    /// The line was whole and valid; the next starts here.
    Next(usize),
    /// The line was the empty one ending the head, of this length.
    Head(usize),
    /// No line end yet (or only past the size limit): wait here for more.
    Wait(usize),
}

/// The general scan of the line at `buf[s.line_start..]`, from `i` on:
/// any line, whether complete or not, valid or not, in the request line
/// or the fields. Kept out of line: the usual lines, complete on arrival,
/// are taken by [`whole_request_line`] and [`whole_field_line`].
///
/// [`whole_request_line`]: super::whole::whole_request_line
/// [`whole_field_line`]: super::whole::whole_field_line
#[inline(never)]
pub(super) fn general_line<'b>(
    s: &mut Scan,
    buf: &'b [u8],
    mut i: usize,
    limit: usize,
    cap: usize,
    fields: &mut [Field<'b>],
    limits: &Limits,
) -> Result<Line, Error> {
    // Only line ends matter until a line is whole, except in the request
    // line, where a bad method or an overlong target is caught as soon as
    // its bytes arrive.
    let rest = buf.get(i..limit).unwrap_or_default();
    let end = find_line_end(rest).map_or(limit, |off| i + off);
    if !s.request_line_done && !ends_in_crlf(buf, end, limit) {
        // The request line is not complete (or not well ended): check
        // what has arrived. A complete line is checked whole below, by the
        // same rules in the same order.
        track_request_line(s, buf, i, end, limits)?;
    }
    i = end;
    if i >= limit {
        return Ok(Line::Wait(i));
    }
    match buf.get(i) {
        Some(b'\r') => match buf.get(i + 1) {
            None => return Ok(Line::Wait(i)),
            // An LF past the size limit: the head is too large.
            Some(b'\n') if i + 1 >= limit => return Ok(Line::Wait(i)),
            Some(b'\n') => i += 1,
            Some(_) => return Err(Error::BareCr),
        },
        Some(b'\n') => return Err(Error::MalformedHead),
        _ => return Ok(Line::Wait(i)),
    }
    // buf[i] is the LF of a CRLF; the line is buf[line_start..i - 1].
    let line = buf.get(s.line_start..i - 1).unwrap_or_default();
    i += 1;
    if !s.request_line_done {
        if !line.is_empty() {
            let rl = request_line(line, limits)?;
            s.set_request_line(&rl, s.line_start, i);
        }
    } else if line.is_empty() {
        return Ok(Line::Head(i));
    } else {
        let colon = field_line(line, s.field_lines == 0)?;
        let index = s.field_lines;
        s.field_lines += 1;
        if s.field_lines > cap {
            return Err(Error::TooManyFields);
        }
        if let Some(slot) = fields.get_mut(index) {
            *slot = Field {
                name: ascii_str(line.get(..colon))?,
                value: trim_ows(line.get(colon + 1..).unwrap_or_default()),
            };
        }
    }
    Ok(Line::Next(i))
}

/// Whether `buf[end..]` starts with CRLF within the first `limit` bytes.
fn ends_in_crlf(buf: &[u8], end: usize, limit: usize) -> bool {
    end + 1 < limit && buf.get(end..end + 2) == Some(b"\r\n")
}

/// Checks the request-line bytes `buf[from..to]` (no CR or LF among them)
/// as they arrive: each method byte, the target length as it grows.
fn track_request_line(
    s: &mut Scan,
    buf: &[u8],
    from: usize,
    to: usize,
    limits: &Limits,
) -> Result<(), Error> {
    let mut k = from;
    let first_sp = match s.first_sp {
        Some(sp) => sp,
        None => {
            let seg = buf.get(from..to).unwrap_or_default();
            let sp = seg.iter().position(|&b| b == b' ');
            method_bytes(
                seg.get(..sp.unwrap_or(seg.len())).unwrap_or_default(),
                from.saturating_sub(s.line_start),
                limits.max_method_len,
            )?;
            let Some(off) = sp else {
                return Ok(());
            };
            let sp = from + off;
            if sp == s.line_start {
                return Err(Error::InvalidMethod);
            }
            s.first_sp = Some(sp);
            k = sp + 1;
            sp
        }
    };
    if !s.target_done {
        let seg = buf.get(k..to).unwrap_or_default();
        let target_end = match seg.iter().position(|&b| b == b' ') {
            Some(off) => {
                s.target_done = true;
                k + off
            }
            None => to,
        };
        if target_end - first_sp - 1 > limits.max_target_len {
            return Err(Error::TargetTooLong);
        }
    }
    Ok(())
}
