//! Links with esp-hal's `linkall.x`, whatever directory cargo is run from.

fn main() {
    println!("cargo:rustc-link-arg=-Tlinkall.x");
    println!("cargo:rerun-if-changed=build.rs");
}
