//! When a tool reports and ends: the lifecycle's loop and every kind read
//! the same [`Schedule`], and each report says [`When`] it is.

use std::time::Duration;

/// When the loop reports and ends, besides signals, a closed stdout and the
/// end of a started command.
#[derive(Debug, Clone, Copy, Default)]
pub struct Schedule {
    /// Report every interval.
    pub interval: Option<Duration>,
    /// End after this many interval reports.
    pub count: Option<u64>,
    /// End (with a final report) after this long.
    pub duration: Option<Duration>,
}

impl Schedule {
    /// One report at the end, after `secs` seconds where given (an event
    /// tool's `-d`), else at Ctrl-C.
    pub fn lasting(secs: Option<u64>) -> Schedule {
        Schedule {
            duration: secs.map(Duration::from_secs),
            ..Schedule::default()
        }
    }
}

impl From<&crate::cli::IntervalCount> for Schedule {
    /// `[interval] [count]`: a report every interval, `count` times.
    fn from(i: &crate::cli::IntervalCount) -> Schedule {
        Schedule {
            interval: i.interval.map(Duration::from_secs),
            count: i.count,
            duration: None,
        }
    }
}

impl From<&crate::cli::EveryInterval> for Schedule {
    /// A report every interval (one second by default), `count` times.
    fn from(i: &crate::cli::EveryInterval) -> Schedule {
        Schedule {
            interval: Some(Duration::from_secs(i.interval)),
            count: i.count,
            duration: None,
        }
    }
}

/// Why a report is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// An interval has passed; tracing goes on.
    Interval,
    /// Tracing has ended and the programs are detached: the last report.
    End,
}
