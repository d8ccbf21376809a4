//! The request head, as the handler sees it.

use ringstream_core::h1::{BodyFraming, Field, RequestHead, Version};

/// A request head, borrowed from the connection's receive buffer: method,
/// target, path and query, and field lookup by name over the fields the
/// core's parser wrote into the connection's `[Field; FIELDS]`.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::{Field, HeadParser};
/// use ringstream_core::Limits;
/// use ringstream_embedded::http::Request;
///
/// let wire = b"GET /api/data?x=1 HTTP/1.1\r\nHost: device\r\nAccept: */*\r\n\r\n";
/// let mut fields = [Field::EMPTY; 8];
/// let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
/// let request = Request::new(head, &fields);
/// assert_eq!(request.method(), "GET");
/// assert_eq!(request.path(), "/api/data");
/// assert_eq!(request.query(), Some("x=1"));
/// assert_eq!(request.field("accept"), Some(&b"*/*"[..]));
/// # Ok::<(), ringstream_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Request<'r> {
    head: RequestHead<'r>,
    fields: &'r [Field<'r>],
}

impl<'r> Request<'r> {
    /// The view of `head`, whose fields are in `fields` (the storage given
    /// to the parser).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::http::Request;
    /// use ringstream_embedded::ringstream_core::h1::{Field, HeadParser};
    /// use ringstream_embedded::ringstream_core::Limits;
    ///
    /// let wire = b"GET /status HTTP/1.1\r\nHost: device\r\n\r\n";
    /// let mut fields = [Field::EMPTY; 8];
    /// let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
    /// let request = Request::new(head, &fields);
    /// assert_eq!(request.path(), "/status");
    /// # Ok::<(), ringstream_embedded::ringstream_core::Error>(())
    /// ```
    pub fn new(head: RequestHead<'r>, fields: &'r [Field<'r>]) -> Request<'r> {
        Request {
            fields: head.fields(fields),
            head,
        }
    }

    /// The method, case-sensitive (`GET`, `POST`, ...).
    ///
    /// # Examples
    ///
    /// ```
    /// # use ringstream_embedded::ringstream_core::{h1::{Field, HeadParser}, Limits};
    /// use ringstream_embedded::http::Request;
    ///
    /// let wire = b"DELETE /log HTTP/1.1\r\nHost: device\r\n\r\n";
    /// # let mut fields = [Field::EMPTY; 8];
    /// # let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
    /// let request = Request::new(head, &fields);
    /// assert_eq!(request.method(), "DELETE");
    /// # Ok::<(), ringstream_embedded::ringstream_core::Error>(())
    /// ```
    pub fn method(&self) -> &'r str {
        self.head.method
    }

    /// The request-target exactly as sent.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ringstream_embedded::ringstream_core::{h1::{Field, HeadParser}, Limits};
    /// use ringstream_embedded::http::Request;
    ///
    /// let wire = b"GET /search?q=led%20on HTTP/1.1\r\nHost: device\r\n\r\n";
    /// # let mut fields = [Field::EMPTY; 8];
    /// # let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
    /// let request = Request::new(head, &fields);
    /// assert_eq!(request.target(), "/search?q=led%20on");
    /// # Ok::<(), ringstream_embedded::ringstream_core::Error>(())
    /// ```
    pub fn target(&self) -> &'r str {
        self.head.target
    }

    /// The path: the target up to `?` (still percent-encoded); of an
    /// absolute-form target (`http://device/api`), the part after the
    /// authority, as the core's
    /// [`path_and_query`](ringstream_core::h1::RequestHead::path_and_query)
    /// gives it (an empty path is `/`).
    ///
    /// # Examples
    ///
    /// ```
    /// # use ringstream_embedded::ringstream_core::{h1::{Field, HeadParser}, Limits};
    /// use ringstream_embedded::http::Request;
    ///
    /// // A proxy's absolute-form target.
    /// let wire = b"GET http://device/api/led?on=1 HTTP/1.1\r\nHost: device\r\n\r\n";
    /// # let mut fields = [Field::EMPTY; 8];
    /// # let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
    /// let request = Request::new(head, &fields);
    /// assert_eq!(request.path(), "/api/led");
    /// assert_eq!(request.query(), Some("on=1"));
    /// # Ok::<(), ringstream_embedded::ringstream_core::Error>(())
    /// ```
    pub fn path(&self) -> &'r str {
        let target = self.head.path_and_query();
        match target.split_once('?').map_or(target, |(path, _)| path) {
            "" => "/",
            path => path,
        }
    }

    /// The query: the target after the first `?`, if there is one.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ringstream_embedded::ringstream_core::{h1::{Field, HeadParser}, Limits};
    /// use ringstream_embedded::http::Request;
    ///
    /// let wire = b"GET /api/led?on=1&dim=50 HTTP/1.1\r\nHost: device\r\n\r\n";
    /// # let mut fields = [Field::EMPTY; 8];
    /// # let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
    /// let request = Request::new(head, &fields);
    /// assert_eq!(request.query(), Some("on=1&dim=50"));
    /// # Ok::<(), ringstream_embedded::ringstream_core::Error>(())
    /// ```
    pub fn query(&self) -> Option<&'r str> {
        self.head
            .path_and_query()
            .split_once('?')
            .map(|(_, query)| query)
    }

    /// HTTP/1.0 or HTTP/1.1.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ringstream_embedded::ringstream_core::{h1::{Field, HeadParser}, Limits};
    /// use ringstream_embedded::http::Request;
    /// use ringstream_embedded::ringstream_core::h1::Version;
    ///
    /// let wire = b"GET / HTTP/1.0\r\n\r\n";
    /// # let mut fields = [Field::EMPTY; 8];
    /// # let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
    /// let request = Request::new(head, &fields);
    /// assert_eq!(request.version(), Version::Http10);
    /// # Ok::<(), ringstream_embedded::ringstream_core::Error>(())
    /// ```
    pub fn version(&self) -> Version {
        self.head.version
    }

    /// The value of the first field called `name` (compared
    /// case-insensitively).
    ///
    /// # Examples
    ///
    /// ```
    /// # use ringstream_embedded::ringstream_core::{h1::{Field, HeadParser}, Limits};
    /// use ringstream_embedded::http::Request;
    ///
    /// let wire = b"GET / HTTP/1.1\r\nHost: device\r\nX-Token: abc\r\n\r\n";
    /// # let mut fields = [Field::EMPTY; 8];
    /// # let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
    /// let request = Request::new(head, &fields);
    /// assert_eq!(request.field("x-token"), Some(&b"abc"[..]));
    /// assert_eq!(request.field("cookie"), None);
    /// # Ok::<(), ringstream_embedded::ringstream_core::Error>(())
    /// ```
    pub fn field(&self, name: &str) -> Option<&'r [u8]> {
        self.fields
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(name))
            .map(|f| f.value)
    }

    /// Every field, in the order they came.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ringstream_embedded::ringstream_core::{h1::{Field, HeadParser}, Limits};
    /// use ringstream_embedded::http::Request;
    ///
    /// let wire = b"GET / HTTP/1.1\r\nHost: device\r\nAccept: */*\r\n\r\n";
    /// # let mut fields = [Field::EMPTY; 8];
    /// # let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
    /// let request = Request::new(head, &fields);
    /// let names: Vec<&str> = request.fields().iter().map(|field| field.name).collect();
    /// assert_eq!(names, ["Host", "Accept"]);
    /// # Ok::<(), ringstream_embedded::ringstream_core::Error>(())
    /// ```
    pub fn fields(&self) -> &'r [Field<'r>] {
        self.fields
    }

    /// How the request body is delimited, as the core decided it.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ringstream_embedded::ringstream_core::{h1::{Field, HeadParser}, Limits};
    /// use ringstream_embedded::http::Request;
    /// use ringstream_embedded::ringstream_core::h1::BodyFraming;
    ///
    /// let wire = b"POST /log HTTP/1.1\r\nHost: device\r\nTransfer-Encoding: chunked\r\n\r\n";
    /// # let mut fields = [Field::EMPTY; 8];
    /// # let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
    /// let request = Request::new(head, &fields);
    /// assert_eq!(request.body_framing(), BodyFraming::Chunked);
    /// assert_eq!(request.content_length(), None);
    /// # Ok::<(), ringstream_embedded::ringstream_core::Error>(())
    /// ```
    pub fn body_framing(&self) -> BodyFraming {
        self.head.framing
    }

    /// The request body's length, when its framing says it
    /// (`Content-Length`, or `Some(0)` for no body); `None` for chunked.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ringstream_embedded::ringstream_core::{h1::{Field, HeadParser}, Limits};
    /// use ringstream_embedded::http::Request;
    ///
    /// let wire = b"POST /led HTTP/1.1\r\nHost: device\r\nContent-Length: 2\r\n\r\non";
    /// # let mut fields = [Field::EMPTY; 8];
    /// # let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
    /// let request = Request::new(head, &fields);
    /// assert_eq!(request.content_length(), Some(2));
    /// # Ok::<(), ringstream_embedded::ringstream_core::Error>(())
    /// ```
    pub fn content_length(&self) -> Option<u64> {
        self.head.framing.length()
    }

    /// The parsed head, as the core returned it.
    ///
    /// # Examples
    ///
    /// ```
    /// # use ringstream_embedded::ringstream_core::{h1::{Field, HeadParser}, Limits};
    /// use ringstream_embedded::http::Request;
    ///
    /// let wire = b"GET / HTTP/1.1\r\nHost: device\r\n\r\n";
    /// # let mut fields = [Field::EMPTY; 8];
    /// # let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
    /// let request = Request::new(head, &fields);
    /// // What the core decided, beyond what `Request` exposes.
    /// assert!(request.head().keep_alive);
    /// assert_eq!(request.head().head_len, wire.len());
    /// # Ok::<(), ringstream_embedded::ringstream_core::Error>(())
    /// ```
    pub fn head(&self) -> &RequestHead<'r> {
        &self.head
    }
}
