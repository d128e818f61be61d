//! `cargo xtask bench`: filled in below.

use anyhow::Result;

pub fn main(_args: &[String]) -> Result<()> {
    anyhow::bail!("bench: not written yet")
}
