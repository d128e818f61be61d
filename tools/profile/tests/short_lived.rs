//! profile as it is run on a build machine (all processes, -f): processes
//! living 100 ms on a busy machine are named as perf names them.
//! A test binary of its own: cargo runs the binaries one after another, so
//! nothing else of the tool's runs beside these (their spinners keep both
//! CPUs busy).

testkit::short_lived_tests!(env!("CARGO_BIN_EXE_profile"), "spin", ["-F", "99", "-f"]);
