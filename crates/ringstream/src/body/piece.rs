//! [`BodyPiece`]: one step of body data pulled off a source.

use bytes::Bytes;
use http::HeaderMap;

/// One step of body data pulled off a source.
pub(crate) enum BodyPiece {
    Data(Bytes),
    End(Option<HeaderMap>),
}
