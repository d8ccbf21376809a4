//! ringstream-bench
fn main() {}
