//! HTTP-dates (RFC 9110 §5.6.7): the IMF-fixdate a server sends in `Date`
//! and `Last-Modified`, formatted without a clock (the caller gives the
//! seconds since the Unix epoch), and the three forms a recipient must
//! accept in `If-Modified-Since`, `If-Unmodified-Since` and `If-Range`,
//! parsed back into seconds.

// ---------------------------------------------------------------------------
// Date
// ---------------------------------------------------------------------------

/// Length of an IMF-fixdate in bytes.
pub const HTTP_DATE_LEN: usize = 29;

/// The largest instant an IMF-fixdate can show, in seconds since the Unix
/// epoch: 9999-12-31 23:59:59 UTC.
pub const MAX_HTTP_DATE_SECS: u64 = 253_402_300_799;

/// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7).
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::encode::HttpDate;
///
/// let date = HttpDate::from_unix_secs(784_111_777);
/// assert_eq!(date.as_str(), "Sun, 06 Nov 1994 08:49:37 GMT");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct HttpDate {
    buf: [u8; HTTP_DATE_LEN],
}

impl HttpDate {
    /// Formats `unix_secs` (seconds since 1970-01-01T00:00:00Z). Instants
    /// after year 9999 are shown as [`MAX_HTTP_DATE_SECS`], since the format
    /// has four year digits.
    pub const fn from_unix_secs(unix_secs: u64) -> HttpDate {
        const DAYS: [&[u8; 3]; 7] = [b"Sun", b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat"];
        const MONTHS: [&[u8; 3]; 12] = [
            b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
            b"Dec",
        ];
        let secs = if unix_secs > MAX_HTTP_DATE_SECS {
            MAX_HTTP_DATE_SECS
        } else {
            unix_secs
        };
        let days = secs / 86_400;
        let rem = secs % 86_400;
        let (hour, minute, second) = (rem / 3600, rem % 3600 / 60, rem % 60);
        // 1970-01-01 was a Thursday.
        let weekday = ((days + 4) % 7) as usize;

        // Civil-from-days (proleptic Gregorian calendar), with eras of 400
        // years starting on March 1st so leap days fall at the end.
        let z = days + 719_468;
        let era = z / 146_097;
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };

        let mut buf = *b"Thu, 01 Jan 1970 00:00:00 GMT";
        let name = DAYS[weekday];
        buf[0] = name[0];
        buf[1] = name[1];
        buf[2] = name[2];
        buf[5] = b'0' + (day / 10) as u8;
        buf[6] = b'0' + (day % 10) as u8;
        let name = MONTHS[(month - 1) as usize];
        buf[8] = name[0];
        buf[9] = name[1];
        buf[10] = name[2];
        buf[12] = b'0' + (year / 1000 % 10) as u8;
        buf[13] = b'0' + (year / 100 % 10) as u8;
        buf[14] = b'0' + (year / 10 % 10) as u8;
        buf[15] = b'0' + (year % 10) as u8;
        buf[17] = b'0' + (hour / 10) as u8;
        buf[18] = b'0' + (hour % 10) as u8;
        buf[20] = b'0' + (minute / 10) as u8;
        buf[21] = b'0' + (minute % 10) as u8;
        buf[23] = b'0' + (second / 10) as u8;
        buf[24] = b'0' + (second % 10) as u8;
        HttpDate { buf }
    }

    /// The formatted bytes.
    pub const fn as_bytes(&self) -> &[u8; HTTP_DATE_LEN] {
        &self.buf
    }

    /// The formatted date as text.
    pub fn as_str(&self) -> &str {
        // Every byte written is ASCII.
        core::str::from_utf8(&self.buf).unwrap_or("")
    }
}

impl core::fmt::Debug for HttpDate {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("HttpDate").field(&self.as_str()).finish()
    }
}

impl core::fmt::Display for HttpDate {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `Date` value of the current second, formatted once per second.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::encode::DateCache;
///
/// let mut cache = DateCache::new();
/// assert_eq!(cache.update(0), b"Thu, 01 Jan 1970 00:00:00 GMT");
/// assert_eq!(cache.update(86_400 + 1), b"Fri, 02 Jan 1970 00:00:01 GMT");
/// ```
#[derive(Debug, Clone)]
pub struct DateCache {
    secs: u64,
    date: HttpDate,
}

impl DateCache {
    /// A cache holding the Unix epoch.
    pub const fn new() -> DateCache {
        DateCache {
            secs: 0,
            date: HttpDate::from_unix_secs(0),
        }
    }

    /// The date for `unix_secs`, re-formatted only when the second changed.
    pub fn update(&mut self, unix_secs: u64) -> &[u8; HTTP_DATE_LEN] {
        if unix_secs != self.secs {
            self.secs = unix_secs;
            self.date = HttpDate::from_unix_secs(unix_secs);
        }
        self.date.as_bytes()
    }

    /// The date last formatted.
    pub const fn get(&self) -> &[u8; HTTP_DATE_LEN] {
        self.date.as_bytes()
    }
}

impl Default for DateCache {
    fn default() -> Self {
        DateCache::new()
    }
}

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

/// Parses an HTTP-date in any of its three forms into Unix seconds.
///
/// RFC 9110 §5.6.7 requires a recipient to accept all three:
///
/// - IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`;
/// - the obsolete RFC 850 form: `Sunday, 06-Nov-94 08:49:37 GMT` (a
///   two-digit year below 70 is read as 20xx, otherwise 19xx);
/// - the obsolete asctime form: `Sun Nov  6 08:49:37 1994`.
///
/// The day name is checked for spelling but not against the date. Returns
/// `None` for anything else, including impossible dates such as 31 April.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::{parse_http_date, HttpDate};
///
/// assert_eq!(parse_http_date(b"Sun, 06 Nov 1994 08:49:37 GMT"), Some(784_111_777));
/// assert_eq!(parse_http_date(b"Sun Nov  6 08:49:37 1994"), Some(784_111_777));
/// assert_eq!(parse_http_date(b"yesterday"), None);
/// let formatted = HttpDate::from_unix_secs(1_700_000_000);
/// assert_eq!(parse_http_date(formatted.as_bytes()), Some(1_700_000_000));
/// ```
pub fn parse_http_date(value: &[u8]) -> Option<i64> {
    let value = value.trim_ascii();
    parse_imf_fixdate(value)
        .or_else(|| parse_rfc850(value))
        .or_else(|| parse_asctime(value))
}

const SHORT_DAYS: [&[u8]; 7] = [b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat", b"Sun"];
const LONG_DAYS: [&[u8]; 7] = [
    b"Monday",
    b"Tuesday",
    b"Wednesday",
    b"Thursday",
    b"Friday",
    b"Saturday",
    b"Sunday",
];
const MONTHS: [&[u8]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// `Sun, 06 Nov 1994 08:49:37 GMT`
fn parse_imf_fixdate(s: &[u8]) -> Option<i64> {
    if s.len() != 29 {
        return None;
    }
    if !SHORT_DAYS.contains(&s.get(0..3)?)
        || s.get(3..5)? != b", "
        || s.get(7)? != &b' '
        || s.get(11)? != &b' '
        || s.get(16)? != &b' '
        || s.get(25..)? != b" GMT"
    {
        return None;
    }
    let day = digits(s.get(5..7)?)?;
    let month = month(s.get(8..11)?)?;
    let year = digits(s.get(12..16)?)?;
    let (h, m, sec) = time_of_day(s.get(17..25)?)?;
    to_unix(year, month, day, h, m, sec)
}

/// `Sunday, 06-Nov-94 08:49:37 GMT`
fn parse_rfc850(s: &[u8]) -> Option<i64> {
    let comma = s.iter().position(|&b| b == b',')?;
    if !LONG_DAYS.contains(&s.get(..comma)?) {
        return None;
    }
    let rest = s.get(comma + 1..)?;
    // " 06-Nov-94 08:49:37 GMT"
    if rest.len() != 23
        || rest.first()? != &b' '
        || rest.get(3)? != &b'-'
        || rest.get(7)? != &b'-'
        || rest.get(10)? != &b' '
        || rest.get(19..)? != b" GMT"
    {
        return None;
    }
    let day = digits(rest.get(1..3)?)?;
    let month = month(rest.get(4..7)?)?;
    let yy = digits(rest.get(8..10)?)?;
    let year = if yy < 70 { 2000 + yy } else { 1900 + yy };
    let (h, m, sec) = time_of_day(rest.get(11..19)?)?;
    to_unix(year, month, day, h, m, sec)
}

/// `Sun Nov  6 08:49:37 1994`
fn parse_asctime(s: &[u8]) -> Option<i64> {
    if s.len() != 24
        || !SHORT_DAYS.contains(&s.get(0..3)?)
        || s.get(3)? != &b' '
        || s.get(7)? != &b' '
        || s.get(10)? != &b' '
        || s.get(19)? != &b' '
    {
        return None;
    }
    let month = month(s.get(4..7)?)?;
    let day = match s.get(8..10)? {
        [b' ', d] => digits(&[*d])?,
        two => digits(two)?,
    };
    let (h, m, sec) = time_of_day(s.get(11..19)?)?;
    let year = digits(s.get(20..24)?)?;
    to_unix(year, month, day, h, m, sec)
}

fn digits(s: &[u8]) -> Option<u32> {
    if s.is_empty() {
        return None;
    }
    s.iter().try_fold(0u32, |acc, &b| {
        let d = u32::from(b.checked_sub(b'0').filter(|d| *d <= 9)?);
        acc.checked_mul(10)?.checked_add(d)
    })
}

fn month(s: &[u8]) -> Option<u32> {
    let index = MONTHS.iter().position(|m| *m == s)?;
    u32::try_from(index).ok()?.checked_add(1)
}

/// `08:49:37`
fn time_of_day(s: &[u8]) -> Option<(u32, u32, u32)> {
    if s.len() != 8 || s.get(2)? != &b':' || s.get(5)? != &b':' {
        return None;
    }
    let h = digits(s.get(0..2)?)?;
    let m = digits(s.get(3..5)?)?;
    let sec = digits(s.get(6..8)?)?;
    // 60 allows a leap second.
    (h < 24 && m < 60 && sec <= 60).then_some((h, m, sec))
}

fn to_unix(year: u32, month: u32, day: u32, h: u32, m: u32, s: u32) -> Option<i64> {
    if day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let days = days_from_civil(i64::from(year), i64::from(month), i64::from(day));
    Some(days * 86_400 + i64::from(h) * 3600 + i64::from(m) * 60 + i64::from(s))
}

fn is_leap(year: u32) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (the classic
/// era-based algorithm; exact for every year a four-digit field can hold).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use alloc::string::String;

    use super::parse_http_date;
    use super::HttpDate;

    // RFC 9110 §5.6.7: the three forms of the same instant.
    #[test]
    fn three_formats_agree() {
        let expected = Some(784_111_777);
        assert_eq!(parse_http_date(b"Sun, 06 Nov 1994 08:49:37 GMT"), expected);
        assert_eq!(parse_http_date(b"Sunday, 06-Nov-94 08:49:37 GMT"), expected);
        assert_eq!(parse_http_date(b"Sun Nov  6 08:49:37 1994"), expected);
    }

    #[test]
    fn round_trips_the_core_formatter() {
        for secs in [
            0u64,
            951_782_400,
            1_700_000_000,
            4_102_444_799,
            253_402_300_799,
        ] {
            let date = HttpDate::from_unix_secs(secs);
            assert_eq!(
                parse_http_date(date.as_str().as_bytes()),
                i64::try_from(secs).ok()
            );
        }
    }

    #[test]
    fn rejects_malformed_dates() {
        for bad in [
            &b""[..],
            b"Sun, 06 Nov 1994 08:49:37 UTC",
            b"Sun, 31 Apr 1994 08:49:37 GMT",
            b"Sun, 29 Feb 1900 08:49:37 GMT",
            b"Sun, 06 Nov 1994 24:00:00 GMT",
            b"Sun, 06 Foo 1994 08:49:37 GMT",
            b"Xyz, 06 Nov 1994 08:49:37 GMT",
            b"Sun, 0x Nov 1994 08:49:37 GMT",
            b"1994-11-06T08:49:37Z",
            b"Sun, 06 Nov 1994 08:49:37 GMT garbage",
        ] {
            assert_eq!(
                parse_http_date(bad),
                None,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn two_digit_years_pivot_at_70() {
        assert_eq!(
            parse_http_date(b"Thursday, 01-Jan-70 00:00:00 GMT"),
            Some(0)
        );
        assert_eq!(
            parse_http_date(b"Saturday, 01-Jan-00 00:00:00 GMT"),
            Some(946_684_800)
        );
    }

    #[test]
    fn dates_before_the_epoch_are_negative() {
        assert_eq!(parse_http_date(b"Wed, 31 Dec 1969 23:59:59 GMT"), Some(-1));
    }
}
