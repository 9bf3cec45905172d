//! The rest between lesson levels. A lesson level has no warm-up: its
//! login burst is what is judged. A level that broke leaves work queued in
//! the server (its users stopped, their requests did not), and a server
//! held to a small share of a CPU can take tens of seconds to finish it;
//! the next level's burst would land on that backlog and break where a
//! fresh lesson would not (on the testbed at 4% of a core, 160 students
//! after an overloaded level had their login's median at 53 ms against
//! 14 ms on a rested server). So before every lesson level but the first
//! the search probes the target, one GET at a time, until two probes in a
//! row answer about as fast as the idle server did before the search.

use headroom_bundle::capacity::LevelRest;
use headroom_http::conn::Connector;
use headroom_http::probe::time_get;
use headroom_http::target::Target;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Probes of the idle server before the first level; their median is its
/// idle time.
const IDLE_PROBES: usize = 5;
/// Between probes while resting.
const EVERY: Duration = Duration::from_secs(1);
/// The longest an idle probe may take before the search gives up resting
/// (a server that slow before the first level is not idle).
const IDLE_WAIT: Duration = Duration::from_secs(10);
/// The longest rest before a level starts anyway (and says so).
pub const LIMIT: Duration = Duration::from_secs(120);
/// Probes in a row that must be quiet.
const QUIET_IN_A_ROW: u32 = 2;

/// What to probe: the search's target (a scenario's base URL).
#[derive(Debug, Clone)]
pub struct RestTarget {
    pub target: Target,
    /// Accept any TLS certificate (`--insecure`).
    pub insecure: bool,
}

/// The target and its idle time.
pub struct Rest {
    connector: Connector,
    target: Target,
    idle: Duration,
    /// Probes sent to time the idle server, before the first level.
    pub idle_probes: u32,
}

impl Rest {
    /// Times the idle server before the first level; `None` when the
    /// target cannot be probed (the first level then says why).
    pub async fn measure(of: &RestTarget) -> Option<Rest> {
        let connector = Connector::resolve(&of.target, of.insecure, Default::default())
            .await
            .ok()?;
        let mut times = Vec::with_capacity(IDLE_PROBES);
        for _ in 0..IDLE_PROBES {
            times.push(time_get(&connector, &of.target, IDLE_WAIT).await.ok()?);
        }
        times.sort_unstable();
        Some(Rest {
            connector,
            target: of.target.clone(),
            idle: times[times.len() / 2],
            idle_probes: IDLE_PROBES as u32,
        })
    }

    /// A probe at most this long is quiet: three times the idle time plus
    /// 100 ms (a server held to a CPU share may wait out its period).
    pub fn quiet_within(&self) -> Duration {
        quiet_within(self.idle)
    }

    /// Probes until two in a row are quiet, at most [`LIMIT`], or until
    /// `stop` turns true.
    pub async fn wait(&self, stop: &watch::Receiver<bool>) -> LevelRest {
        let started = Instant::now();
        let mut stop = stop.clone();
        let mut quiet = 0;
        let mut last = None;
        let mut probes = 0;
        while started.elapsed() < LIMIT && !*stop.borrow() {
            probes += 1;
            let probe = time_get(&self.connector, &self.target, LIMIT - started.elapsed()).await;
            last = probe.ok();
            match last {
                Some(t) if t <= self.quiet_within() => quiet += 1,
                _ => quiet = 0,
            }
            if quiet >= QUIET_IN_A_ROW {
                break;
            }
            tokio::select! {
                _ = tokio::time::sleep(EVERY) => {}
                _ = stop.wait_for(|v| *v) => break,
            }
        }
        LevelRest {
            waited_s: started.elapsed().as_secs_f64(),
            idle_ms: self.idle.as_secs_f64() * 1000.0,
            probe_ms: last.map(|t| t.as_secs_f64() * 1000.0),
            quiet: quiet >= QUIET_IN_A_ROW,
            probes,
        }
    }
}

fn quiet_within(idle: Duration) -> Duration {
    idle.saturating_mul(3)
        .saturating_add(Duration::from_millis(100))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// A server busy for its first seconds (each answer 400 ms) and then
    /// idle again (1 ms): the rest lasts until two quiet probes in a row,
    /// and says how long it waited and what the last probe took.
    #[tokio::test]
    async fn the_rest_lasts_until_the_server_answers_as_when_idle() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let slow_until = Arc::new(AtomicU64::new(0));
        let busy = slow_until.clone();
        let epoch = Instant::now();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let busy = busy.clone();
                tokio::spawn(async move {
                    let mut buf = [0u8; 1024];
                    let _ = socket.read(&mut buf).await;
                    let now = epoch.elapsed().as_millis() as u64;
                    if now < busy.load(Ordering::Relaxed) {
                        tokio::time::sleep(Duration::from_millis(400)).await;
                    }
                    let _ = socket
                        .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                        .await;
                });
            }
        });
        let target = RestTarget {
            target: Target::parse(&format!("http://127.0.0.1:{port}/")).unwrap(),
            insecure: false,
        };
        let rest = Rest::measure(&target).await.expect("an idle server");
        assert!(rest.idle < Duration::from_millis(100), "{:?}", rest.idle);
        assert!(rest.quiet_within() < Duration::from_millis(400));
        let (_tx, stop) = watch::channel(false);
        // Idle: two quiet probes, one second apart.
        let idle = rest.wait(&stop).await;
        assert!(idle.quiet && idle.waited_s < 1.5, "{idle:?}");
        // Busy for the next 2.5 s.
        slow_until.store(epoch.elapsed().as_millis() as u64 + 2500, Ordering::Relaxed);
        let busy = rest.wait(&stop).await;
        assert!(busy.quiet, "{busy:?}");
        assert!(busy.waited_s >= 2.5 && busy.waited_s < 6.0, "{busy:?}");
        assert!(
            busy.describe().starts_with("rested "),
            "{}",
            busy.describe()
        );
        // Told to stop, it stops at once and says the server was busy.
        slow_until.store(
            epoch.elapsed().as_millis() as u64 + 60_000,
            Ordering::Relaxed,
        );
        let (tx, stop) = watch::channel(false);
        tx.send(true).unwrap();
        let stopped = rest.wait(&stop).await;
        assert!(!stopped.quiet && stopped.waited_s < 1.0, "{stopped:?}");
    }

    #[test]
    fn quiet_is_three_times_idle_and_100_ms() {
        assert_eq!(
            quiet_within(Duration::from_millis(4)),
            Duration::from_millis(112)
        );
    }
}
