//! `events.csv`: the timestamped happenings of a run (a fault injected: a
//! command run at a moment of the run), one row each, appended as each
//! ends, so a run that dies keeps the events before it.

use crate::reader::{columns, finite, open_csv, whole_records};
use crate::{io_error, BundleError, EVENTS};
use std::io::Write;
use std::path::Path;

/// The columns of `events.csv`, in order.
pub const COLUMNS: [&str; 7] = [
    "offset_s",
    "kind",
    "name",
    "command",
    "exit_code",
    "took_s",
    "output",
];

/// One event of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Seconds from the run's start to the event (the command's start).
    pub offset_s: f64,
    /// `fault` for a command run at a planned moment.
    pub kind: String,
    /// What the user called it (the planned moment and command by default).
    pub name: String,
    pub command: String,
    /// The command's exit code; `None` when it was stopped or could not start.
    pub exit_code: Option<i32>,
    /// How long the command ran, seconds.
    pub took_s: f64,
    /// The end of the command's output (stdout and stderr), or why it did not run to its end.
    pub output: String,
}

impl Event {
    /// The command ran to its end with exit code 0.
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0)
    }
}

/// Appends `event` to the bundle's `events.csv`, writing the header first
/// when the file is new.
pub fn append(dir: &Path, event: &Event) -> Result<(), BundleError> {
    let path = dir.join(EVENTS);
    let fresh = !path.exists();
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(io_error(dir))?;
    let mut text = csv::Writer::from_writer(Vec::new());
    let failed = |e: csv::Error| BundleError::Io {
        path: path.clone(),
        source: std::io::Error::other(e),
    };
    if fresh {
        text.write_record(COLUMNS).map_err(failed)?;
    }
    text.write_record([
        format!("{:.3}", event.offset_s),
        event.kind.clone(),
        event.name.clone(),
        event.command.clone(),
        event.exit_code.map(|c| c.to_string()).unwrap_or_default(),
        format!("{:.3}", event.took_s),
        event.output.clone(),
    ])
    .map_err(failed)?;
    let bytes = text.into_inner().map_err(|e| BundleError::Io {
        path: path.clone(),
        source: std::io::Error::other(e.to_string()),
    })?;
    let mut file = file;
    file.write_all(&bytes).map_err(io_error(dir))
}

/// The events of the bundle at `dir`, in file order; none when the run had
/// no `events.csv`.
pub fn read(dir: &Path) -> Result<Vec<Event>, BundleError> {
    let path = dir.join(EVENTS);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let (mut reader, headers) = open_csv(&path)?;
    let at = columns(&path, &headers, &COLUMNS)?;
    let mut events = Vec::new();
    for (line, record) in whole_records(&path, &mut reader)? {
        let field = |i: usize| record.get(at[i]).unwrap_or_default();
        let exit_code = match field(4) {
            "" => None,
            text => Some(crate::reader::number(&path, line, COLUMNS[4], text)?),
        };
        events.push(Event {
            offset_s: finite(&path, line, COLUMNS[0], field(0))?,
            kind: field(1).to_string(),
            name: field(2).to_string(),
            command: field(3).to_string(),
            exit_code,
            took_s: finite(&path, line, COLUMNS[5], field(5))?,
            output: field(6).to_string(),
        });
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_appended_and_read_back_with_their_output() {
        let dir = std::env::temp_dir().join(format!("headroom-events-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let first = Event {
            offset_s: 3.012,
            kind: "fault".into(),
            name: "restart the store".into(),
            command: "systemctl restart redis, then \"wait\"".into(),
            exit_code: Some(0),
            took_s: 0.25,
            output: "line one\nline, two\n".into(),
        };
        let second = Event {
            offset_s: 5.5,
            exit_code: None,
            output: "stopped at the end of the run".into(),
            ..first.clone()
        };
        append(&dir, &first).unwrap();
        append(&dir, &second).unwrap();
        assert_eq!(read(&dir).unwrap(), vec![first, second]);
        let text = std::fs::read_to_string(dir.join(EVENTS)).unwrap();
        assert!(text.starts_with("offset_s,kind,name,command,exit_code,took_s,output\n"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_bundle_without_events_has_none() {
        assert!(read(Path::new("/nonexistent-headroom-bundle"))
            .unwrap()
            .is_empty());
    }
}
