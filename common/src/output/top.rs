//! The top tools' screen (biotop, filetop): each interval cleared (on a
//! terminal, without -C) or after a blank line, the time and load average,
//! then the table's header, as BCC prints them.

use std::io::{self, IsTerminal, Write};

use crate::output::Out;

pub struct Screen {
    clear: bool,
    json: bool,
}

impl Screen {
    /// `noclear`: -C; in JSON nothing but the rows is printed.
    pub fn new(noclear: bool, json: bool) -> Screen {
        Screen {
            clear: !noclear && !json && io::stdout().is_terminal(),
            json,
        }
    }

    /// Starts an interval's table.
    pub fn begin(&self, out: &mut Out, time: &str, header: &str) -> io::Result<()> {
        if self.json {
            return Ok(());
        }
        self.start(out, time, true)?;
        writeln!(out, "{header}")
    }

    /// Starts an interval's screen: cleared or a blank line, then (when
    /// `summary`) the time and load average, for a tool that prints its
    /// tables itself (tcptop's two).
    pub fn start(&self, out: &mut Out, time: &str, summary: bool) -> io::Result<()> {
        if self.json {
            return Ok(());
        }
        if self.clear {
            out.write_all(b"\x1b[H\x1b[2J")?;
        } else {
            out.write_all(b"\n")?;
        }
        if summary {
            let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
            writeln!(out, "{time:<8} loadavg: {}\n", loadavg.trim_end())?;
        }
        Ok(())
    }
}
