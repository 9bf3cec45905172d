//! Faults: shell commands run at planned moments of a run (restart the
//! session store at 30 s, kill a cluster node), each recorded as an event
//! in the bundle's `events.csv` with its exact offset, exit code and the
//! end of its output. Each fault waits on a thread of its own, away from
//! the engine; a fault still running when the run ends is stopped (its
//! process group killed) and recorded as stopped.

use headroom_bundle::events::{append, Event};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Most bytes of a fault's output kept in its event.
const OUTPUT_KEPT: usize = 2000;
/// How often a running fault command is checked for its end.
const POLL: Duration = Duration::from_millis(10);

/// A command to run at a moment of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// From the run's start.
    pub at: Duration,
    pub command: String,
}

impl Fault {
    /// `AT=COMMAND`, e.g. `30s=systemctl restart redis-server`.
    pub fn parse(text: &str) -> Result<Fault, String> {
        let Some((at, command)) = text.split_once('=') else {
            return Err(format!(
                "'{text}': write the moment and the command as AT=COMMAND, e.g. '30s=systemctl restart redis-server'"
            ));
        };
        let at = headroom_units::quantity::parse_duration(at.trim())
            .map_err(|e| format!("'{text}': the moment '{at}' is not a duration ({e})"))?;
        if command.trim().is_empty() {
            return Err(format!("'{text}': the command after '=' is empty"));
        }
        Ok(Fault {
            at,
            command: command.to_string(),
        })
    }

    fn name(&self) -> String {
        format!(
            "at {}: {}",
            humantime::format_duration(self.at),
            self.command
        )
    }
}

/// The faults of a run, waiting for their moments.
pub struct Injector {
    stop: Vec<Sender<()>>,
    threads: Vec<JoinHandle<Option<Event>>>,
}

impl Injector {
    /// Starts waiting for each fault's moment from `run_start`; events go
    /// to the bundle at `dir` as each fault ends.
    pub fn start(faults: &[Fault], run_start: Instant, dir: &Path) -> Injector {
        let written = Arc::new(Mutex::new(()));
        let mut stop = Vec::new();
        let mut threads = Vec::new();
        for (number, fault) in faults.iter().enumerate() {
            let (sender, stopped) = channel::<()>();
            stop.push(sender);
            let fault = fault.clone();
            let dir = dir.to_path_buf();
            let written = Arc::clone(&written);
            threads.push(std::thread::spawn(move || {
                let deadline = run_start + fault.at;
                match stopped.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                    Err(RecvTimeoutError::Timeout) => {}
                    // The run ended before the fault's moment.
                    _ => return None,
                }
                let event = inject(&fault, number, run_start, &dir, &stopped);
                let _guard = written.lock().unwrap_or_else(|p| p.into_inner());
                if let Err(e) = append(&dir, &event) {
                    eprintln!("headroom: cannot record the fault '{}': {e}", event.name);
                }
                Some(event)
            }));
        }
        Injector { stop, threads }
    }

    /// Stops faults still waiting or running; returns the events recorded.
    pub fn finish(self) -> Vec<Event> {
        for sender in &self.stop {
            let _ = sender.send(());
        }
        let mut events: Vec<Event> = self
            .threads
            .into_iter()
            .filter_map(|t| t.join().ok().flatten())
            .collect();
        events.sort_by(|a, b| a.offset_s.total_cmp(&b.offset_s));
        events
    }
}

/// Runs the fault's command in a process group of its own, its output
/// into `fault-N.log` of the bundle, until it ends or the run does.
fn inject(
    fault: &Fault,
    number: usize,
    run_start: Instant,
    dir: &Path,
    stopped: &std::sync::mpsc::Receiver<()>,
) -> Event {
    let log: PathBuf = dir.join(format!("fault-{}.log", number + 1));
    let began = Instant::now();
    let offset_s = began.saturating_duration_since(run_start).as_secs_f64();
    let mut event = Event {
        offset_s,
        kind: "fault".into(),
        name: fault.name(),
        command: fault.command.clone(),
        exit_code: None,
        took_s: 0.0,
        output: String::new(),
    };
    let spawned = std::fs::File::create(&log).and_then(|out| {
        let err = out.try_clone()?;
        Command::new("sh")
            .arg("-c")
            .arg(&fault.command)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .spawn()
    });
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            event.output = format!("could not start the command: {e}");
            return event;
        }
    };
    let mut stopped_early = false;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                event.exit_code = status.code().or(Some(-1));
                break;
            }
            Ok(None) => {}
            Err(e) => {
                event.output = format!("lost track of the command: {e}");
                break;
            }
        }
        if !matches!(stopped.recv_timeout(POLL), Err(RecvTimeoutError::Timeout)) {
            stopped_early = true;
            // The whole group: `sh -c` and what it started.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            break;
        }
    }
    event.took_s = began.elapsed().as_secs_f64();
    let mut output = String::new();
    if let Ok(mut file) = std::fs::File::open(&log) {
        let mut bytes = Vec::new();
        let _ = file.read_to_end(&mut bytes);
        let from = bytes.len().saturating_sub(OUTPUT_KEPT);
        output = String::from_utf8_lossy(&bytes[from..]).into_owned();
    }
    if stopped_early {
        output.push_str("[stopped: still running when the run ended]");
    }
    if event.output.is_empty() {
        event.output = output;
    }
    event
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_specs_parse_and_bad_ones_say_how_to_write_them() {
        assert_eq!(
            Fault::parse("1.5s=echo a=b").unwrap(),
            Fault {
                at: Duration::from_millis(1500),
                command: "echo a=b".into()
            }
        );
        assert!(Fault::parse("echo hi").unwrap_err().contains("AT=COMMAND"));
        assert!(Fault::parse("soon=echo")
            .unwrap_err()
            .contains("not a duration"));
        assert!(Fault::parse("3s= ").unwrap_err().contains("empty"));
    }

    #[test]
    fn faults_run_at_their_moment_and_unfinished_ones_are_stopped() {
        let dir = std::env::temp_dir().join(format!("headroom-fault-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let faults = [
            Fault::parse("200ms=echo restarted; exit 3").unwrap(),
            Fault::parse("300ms=sleep 30").unwrap(),
            Fault::parse("60s=echo never").unwrap(),
        ];
        let start = Instant::now();
        let injector = Injector::start(&faults, start, &dir);
        std::thread::sleep(Duration::from_millis(600));
        let events = injector.finish();
        assert!(start.elapsed() < Duration::from_secs(5), "finish waited");
        assert_eq!(events.len(), 2, "{events:?}");
        assert!((events[0].offset_s - 0.2).abs() < 0.1, "{events:?}");
        assert_eq!(events[0].exit_code, Some(3));
        assert_eq!(events[0].output, "restarted\n");
        assert_eq!(events[1].exit_code, None);
        assert!(events[1].output.contains("stopped"), "{events:?}");
        assert_eq!(headroom_bundle::events::read(&dir).unwrap().len(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
