//! HTTP-dates (RFC 9110 §5.6.7): the IMF-fixdate a server sends in `Date`
//! and `Last-Modified`, formatted without a clock (the caller gives the
//! seconds since the Unix epoch) and without allocating.
//!
//! Parsing the dates a client sends (`If-Modified-Since`,
//! `If-Unmodified-Since`, `If-Range`) is left to the std layer, which has
//! the `httpdate` crate for it; the core's rules for those fields
//! ([`negotiate`](super::negotiate)) take the parsed seconds.

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
/// use ringstream_core::h1::date::HttpDate;
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
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::HttpDate;
    ///
    /// let date = HttpDate::from_unix_secs(784_111_777);
    /// assert_eq!(date.as_str(), "Sun, 06 Nov 1994 08:49:37 GMT");
    /// assert_eq!(HttpDate::from_unix_secs(u64::MAX).as_str(), "Fri, 31 Dec 9999 23:59:59 GMT");
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{HttpDate, HTTP_DATE_LEN};
    ///
    /// let date = HttpDate::from_unix_secs(0);
    /// assert_eq!(date.as_bytes().len(), HTTP_DATE_LEN);
    /// assert_eq!(date.as_bytes(), b"Thu, 01 Jan 1970 00:00:00 GMT");
    /// ```
    pub const fn as_bytes(&self) -> &[u8; HTTP_DATE_LEN] {
        &self.buf
    }

    /// The formatted date as text.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::HttpDate;
    ///
    /// assert_eq!(HttpDate::from_unix_secs(0).as_str(), "Thu, 01 Jan 1970 00:00:00 GMT");
    /// ```
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
/// use ringstream_core::h1::date::DateCache;
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
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::DateCache;
    ///
    /// let mut cache = DateCache::new();
    /// assert_eq!(cache.get(), b"Thu, 01 Jan 1970 00:00:00 GMT");
    /// assert_eq!(cache.update(784_111_777), b"Sun, 06 Nov 1994 08:49:37 GMT");
    /// assert_eq!(cache.get(), b"Sun, 06 Nov 1994 08:49:37 GMT");
    /// ```
    pub const fn new() -> DateCache {
        DateCache {
            secs: 0,
            date: HttpDate::from_unix_secs(0),
        }
    }

    /// The date for `unix_secs`, re-formatted only when the second changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::DateCache;
    ///
    /// let mut cache = DateCache::new();
    /// assert_eq!(cache.update(784_111_777), b"Sun, 06 Nov 1994 08:49:37 GMT");
    /// // The same second: the bytes already formatted.
    /// assert_eq!(cache.update(784_111_777), b"Sun, 06 Nov 1994 08:49:37 GMT");
    /// assert_eq!(cache.update(784_111_778), b"Sun, 06 Nov 1994 08:49:38 GMT");
    /// ```
    pub fn update(&mut self, unix_secs: u64) -> &[u8; HTTP_DATE_LEN] {
        if unix_secs != self.secs {
            self.secs = unix_secs;
            self.date = HttpDate::from_unix_secs(unix_secs);
        }
        self.date.as_bytes()
    }

    /// The date last formatted.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::DateCache;
    ///
    /// let mut cache = DateCache::new();
    /// cache.update(784_111_777);
    /// assert_eq!(cache.get(), b"Sun, 06 Nov 1994 08:49:37 GMT");
    /// ```
    pub const fn get(&self) -> &[u8; HTTP_DATE_LEN] {
        self.date.as_bytes()
    }
}

impl Default for DateCache {
    fn default() -> Self {
        DateCache::new()
    }
}
