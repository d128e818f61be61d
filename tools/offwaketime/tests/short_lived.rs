//! offwaketime over everything (-f -U) while processes sleep 100 ms each
//! on a busy machine: their blocked time is named down to the function.
//! A test binary of its own: cargo runs the binaries one after another, so
//! nothing else of the tool's runs beside these (their spinners keep both
//! CPUs busy).

testkit::short_lived_tests!(env!("CARGO_BIN_EXE_offwaketime"), "sleep", ["-f", "-U"]);
