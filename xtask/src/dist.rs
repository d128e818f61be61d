//! `cargo xtask dist`.

use anyhow::Result;

pub fn main(_args: &[String]) -> Result<()> {
    anyhow::bail!("dist: not written yet")
}
