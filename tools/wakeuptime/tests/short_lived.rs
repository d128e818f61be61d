//! wakeuptime over everything (-f -U) while processes living 100 ms each
//! wake a reader of theirs from a known function, on a busy machine: the
//! reader's blocked time is charged to the waker's stack, named down to it.
//! A test binary of its own: cargo runs the binaries one after another, so
//! nothing else of the tool's runs beside these (their spinners keep both
//! CPUs busy).

testkit::short_lived_tests!(env!("CARGO_BIN_EXE_wakeuptime"), "wake", ["-f", "-U"]);
