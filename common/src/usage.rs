//! Usage errors: what the user asked for is wrong (exit status 2), found by
//! any part of a tool after argument parsing.

/// A problem with what the user asked for, found after argument parsing
/// (a missing process, an empty disk name): exit status 2, like clap's.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Exit status 2 for a usage error, with one line on stderr.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    UsageError(message.into()).into()
}
