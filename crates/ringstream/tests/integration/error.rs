//! `ringstream::Error`: the conversions to and from `io::Error` and the
//! core's error keep the kind and the cause, so a body that implements
//! `AsyncRead` can use `?` and a caller can still see what went wrong.

use std::error::Error as _;
use std::io;

use ringstream::error::Timeout;
use ringstream::ringstream_core;
use ringstream::Error;

#[test]
fn an_io_error_is_wrapped_unchanged() {
    let err = Error::from(io::Error::new(io::ErrorKind::ConnectionReset, "reset"));
    assert!(matches!(&err, Error::Io(e) if e.kind() == io::ErrorKind::ConnectionReset));
    assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
    let back = io::Error::from(err);
    assert_eq!(back.kind(), io::ErrorKind::ConnectionReset);
    assert_eq!(back.to_string(), "reset");
}

#[test]
fn an_os_error_keeps_its_code_through_a_round_trip() {
    let err = Error::from(io::Error::from_raw_os_error(104));
    let back = io::Error::from(err);
    assert_eq!(back.raw_os_error(), Some(104));
}

#[test]
fn a_core_error_becomes_a_protocol_error() {
    let err = Error::from(ringstream_core::Error::InvalidChunkSize);
    assert!(matches!(
        err,
        Error::Protocol(ringstream_core::Error::InvalidChunkSize)
    ));
    assert_eq!(err.status(), Some(400));
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
}

#[test]
fn the_core_s_unexpected_eof_is_an_io_error_of_that_kind() {
    let err = Error::from(ringstream_core::Error::UnexpectedEof);
    assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    let Error::Io(io) = &err else {
        panic!("{err:?}");
    };
    let inner = io.get_ref().expect("the core error inside");
    assert!(inner.is::<ringstream_core::Error>());
}

#[test]
fn into_io_error_keeps_the_kind_and_the_source() {
    let io = io::Error::from(Error::from(ringstream_core::Error::InvalidChunkSize));
    assert_eq!(io.kind(), io::ErrorKind::InvalidData);
    let inner = io.get_ref().expect("a custom error");
    assert!(inner.is::<Error>());
    let source = io.source().expect("the core error as the source");
    assert_eq!(
        source.downcast_ref::<ringstream_core::Error>(),
        Some(&ringstream_core::Error::InvalidChunkSize)
    );
}

#[test]
fn every_variant_maps_to_its_kind() {
    let cases = [
        (
            Error::TimedOut(Timeout::RequestBodyRead),
            io::ErrorKind::TimedOut,
        ),
        (Error::Closed, io::ErrorKind::NotConnected),
        (Error::User("handler failed".into()), io::ErrorKind::Other),
        (
            Error::NotBuffered {
                requested: 4,
                buffered: 1,
            },
            io::ErrorKind::InvalidInput,
        ),
    ];
    for (err, kind) in cases {
        assert_eq!(err.kind(), kind, "{err}");
        let message = err.to_string();
        let io = io::Error::from(err);
        assert_eq!(io.kind(), kind);
        assert_eq!(io.to_string(), message);
    }
}

#[test]
fn a_round_trip_through_io_error_gives_the_original_back() {
    let io = io::Error::from(Error::TimedOut(Timeout::ResponseWrite));
    let err = Error::from(io);
    assert!(matches!(err, Error::TimedOut(Timeout::ResponseWrite)));
    assert!(err.is_timeout());

    let io = io::Error::from(Error::from(ringstream_core::Error::InvalidChunkSize));
    assert!(matches!(
        Error::from(io),
        Error::Protocol(ringstream_core::Error::InvalidChunkSize)
    ));

    let io = io::Error::from(Error::User("boom".into()));
    match Error::from(io) {
        Error::User(e) => assert_eq!(e.to_string(), "boom"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_user_error_is_reachable_as_the_source() {
    let err = Error::User(Box::new(io::Error::other("disk full")));
    assert_eq!(
        err.source().map(|e| e.to_string()).as_deref(),
        Some("disk full")
    );
    let io = io::Error::from(err);
    assert_eq!(
        io.source().map(|e| e.to_string()).as_deref(),
        Some("disk full")
    );
}

/// A body that implements `AsyncRead` on top of ringstream can use `?` on
/// both error types.
#[test]
fn question_mark_works_both_ways() {
    fn as_io() -> io::Result<()> {
        Err(Error::Closed)?
    }
    fn as_ringstream() -> Result<(), Error> {
        Err(io::Error::from(io::ErrorKind::BrokenPipe))?
    }
    fn from_core() -> Result<(), Error> {
        Err(ringstream_core::Error::InvalidChunkSize)?
    }
    assert_eq!(as_io().unwrap_err().kind(), io::ErrorKind::NotConnected);
    assert_eq!(
        as_ringstream().unwrap_err().kind(),
        io::ErrorKind::BrokenPipe
    );
    assert_eq!(from_core().unwrap_err().status(), Some(400));
}
