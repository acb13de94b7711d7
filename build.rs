//! Records in the binary a digest of the sources it was built from, so that
//! `shforge generate` and `shforge check`, run inside a shforge source tree,
//! can refuse to work from stale templates (see src/provenance.rs).

#[path = "src/source_digest.rs"]
mod source_digest;

fn main() {
    let root =
        std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    for dir in source_digest::DIRS {
        println!("cargo:rerun-if-changed={dir}");
    }
    let digest = source_digest::digest(&root).expect("the source tree is readable");
    println!("cargo:rustc-env=SHFORGE_SOURCE_DIGEST={digest}");
}
