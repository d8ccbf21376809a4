//! The shared wire-test helpers.
#![allow(unused_imports)]

pub use ringstream_testkit::*;
