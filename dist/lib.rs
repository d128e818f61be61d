//! Packaging metadata only (see Cargo.toml): nothing to build.
