//! outer → middle → inner, inner sleeping in std, for offcputime's
//! --unwind test of Rust code: built by build.rs as a release build does
//! (optimized, no frame pointers), with the functions kept out of line.

use std::hint::black_box;
use std::io::Write;
use std::time::Duration;

#[inline(never)]
fn rust_inner(n: u64) -> u64 {
    std::thread::sleep(Duration::from_millis(20));
    black_box(n) + 1
}

#[inline(never)]
fn rust_middle(n: u64) -> u64 {
    black_box(rust_inner(n)) * 2
}

#[inline(never)]
fn rust_outer(n: u64) -> u64 {
    black_box(rust_middle(n)) + 3
}

fn main() {
    println!("ready");
    std::io::stdout().flush().unwrap();
    let mut n = 0;
    loop {
        n = rust_outer(black_box(n)) % 1000;
    }
}
