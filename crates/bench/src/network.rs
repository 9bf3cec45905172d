//! Network: TCP throughput both ways and the round trip against payload
//! size (100 B … 10 KB, as source 002 measured it), between this machine
//! and a `headroom agent --bench-endpoints` (its endpoints:
//! `headroom_monitor::netbench`). Throughput counts payload bytes over the
//! receiver's time from first to last byte, as iperf3's receiver line
//! does, in Mbit/s (10^6 bits). Without an agent, an agent started in this
//! process on 127.0.0.1 answers: the figure is then this machine's network
//! stack, not a link.

use crate::{check, measure, quantile, settings, BenchError, BenchResult, Measure, Series};
use headroom_monitor::agent::{self, Agent, AgentConfig};
use headroom_monitor::sampler::link_share;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct NetworkOptions {
    /// The agent's `host:port`; `None` for loopback.
    pub agent: Option<String>,
    pub token: Option<String>,
    /// Seconds each direction is measured (iperf3's default is 10).
    pub seconds: f64,
    /// Payload sizes for the round trip, bytes.
    pub payloads: Vec<usize>,
    /// Round trips timed per payload size.
    pub round_trips: usize,
    /// The link's capacity, Mbit/s, for "% of link".
    pub link_mbit: Option<f64>,
    pub repetitions: u32,
}

pub const PAYLOADS: [usize; 6] = [100, 500, 1000, 2000, 5000, 10_000];
const CHUNK: usize = 128 * 1024;
const TIMEOUT: Duration = Duration::from_secs(10);

fn refused(text: String) -> BenchError {
    BenchError::Refused(text)
}

/// Checks that the agent answers and serves the endpoints to this token.
pub fn preflight(authority: &str, token: Option<&str>) -> Result<(), BenchError> {
    match agent::get(authority, "/bench/hello", token) {
        Ok((200, body)) if serde_json::from_slice::<serde_json::Value>(&body)
            .is_ok_and(|v| v["endpoints"] == true) => Ok(()),
        Ok((200, _)) => Err(refused(format!(
            "{authority} answered /bench/hello without saying its endpoints are on: is it a headroom agent \
             started with --bench-endpoints?"
        ))),
        Ok((401, _)) => Err(refused(format!(
            "the agent at {authority} refused the token: pass its --token with --agent-token"
        ))),
        Ok((404, _)) => Err(refused(format!(
            "the agent at {authority} does not serve the network benchmark: restart it with \
             `headroom agent --bench-endpoints` (and a --token when it listens beyond loopback)"
        ))),
        Ok((status, _)) => Err(refused(format!(
            "the agent at {authority} answered {status} to /bench/hello: is it a headroom agent?"
        ))),
        Err(e) if agent::not_an_agent(&e).is_some() => Err(refused(format!(
            "{e}; for the network benchmark, start it with --bench-endpoints"
        ))),
        Err(e) => Err(refused(format!(
            "no agent answers at {authority} ({e}): start `headroom agent --bench-endpoints` there, \
             or check the address"
        ))),
    }
}

/// An error that ends a test because the user stopped the bench.
fn stopped() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::Interrupted, "stopped")
}

fn connect(address: SocketAddr) -> std::io::Result<TcpStream> {
    let stream = TcpStream::connect_timeout(&address, TIMEOUT)?;
    stream.set_read_timeout(Some(TIMEOUT))?;
    stream.set_write_timeout(Some(TIMEOUT))?;
    Ok(stream)
}

/// A connection with `request` sent.
fn open(address: SocketAddr, request: &str) -> std::io::Result<TcpStream> {
    let mut stream = connect(address)?;
    stream.write_all(request.as_bytes())?;
    Ok(stream)
}

fn request(method: &str, path: &str, authority: &str, token: Option<&str>) -> String {
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    format!("{method} {path} HTTP/1.1\r\nHost: {authority}\r\n{auth}Connection: close\r\n\r\n")
}

/// Reads up to the end of an answer's header; returns its status and the
/// bytes after it.
fn read_head(stream: &mut TcpStream) -> std::io::Result<(u16, Vec<u8>)> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the agent closed the connection without answering",
            ));
        }
        raw.extend_from_slice(&buf[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut response = httparse::Response::new(&mut headers);
        match response.parse(&raw) {
            Ok(httparse::Status::Complete(at)) => {
                return Ok((response.code.unwrap_or(0), raw[at..].to_vec()))
            }
            Ok(httparse::Status::Partial) if raw.len() < 64 * 1024 => {}
            _ => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "not an HTTP answer",
                ))
            }
        }
    }
}

/// Client → agent: Mbit/s as the agent received it.
fn upload(
    address: SocketAddr,
    authority: &str,
    token: Option<&str>,
    seconds: f64,
    stop: &AtomicBool,
) -> std::io::Result<f64> {
    let mut stream = open(address, &request("POST", "/bench/sink", authority, token))?;
    let chunk = vec![0x75u8; CHUNK];
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    let mut sent = 0u64;
    while Instant::now() < until {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(stopped());
        }
        stream.write_all(&chunk)?;
        sent += chunk.len() as u64;
    }
    stream.shutdown(Shutdown::Write)?;
    let (status, mut body) = read_head(&mut stream)?;
    // A short JSON answer: at most 64 KiB of it is read.
    (&mut stream).take(64 * 1024).read_to_end(&mut body)?;
    let reply: serde_json::Value = serde_json::from_slice(&body).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("status {status}: {e}"),
        )
    })?;
    let bytes = reply["bytes"].as_f64().unwrap_or(0.0);
    let secs = reply["seconds"].as_f64().unwrap_or(0.0);
    if status != 200 || secs <= 0.0 {
        return Err(std::io::Error::other(format!(
            "the agent answered {status}: {}",
            String::from_utf8_lossy(&body)
        )));
    }
    // The agent counts what arrived: never more than was sent, and not in
    // much less time than it took to send (a clock that lies).
    if bytes > sent as f64 || secs < seconds / 2.0 {
        return Err(std::io::Error::other(format!(
            "the agent reported {bytes} bytes in {secs} s, but this machine sent {sent} bytes over {seconds} s: \
             its answer is not a measurement"
        )));
    }
    Ok(bytes * 8.0 / 1e6 / secs)
}

/// Agent → client: Mbit/s as this machine received it.
fn download(
    address: SocketAddr,
    authority: &str,
    token: Option<&str>,
    seconds: f64,
    stop: &AtomicBool,
) -> std::io::Result<f64> {
    let path = format!("/bench/source?seconds={seconds}");
    let mut stream = open(address, &request("GET", &path, authority, token))?;
    let (status, first) = read_head(&mut stream)?;
    if status != 200 {
        return Err(std::io::Error::other(format!(
            "the agent answered {status}"
        )));
    }
    let started = Instant::now();
    let mut bytes = first.len() as u64;
    let mut last = started;
    let mut buf = vec![0u8; CHUNK];
    // The agent stops after `seconds`; one that goes on is not measured.
    let deadline = started + Duration::from_secs_f64(seconds) + TIMEOUT;
    loop {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(stopped());
        }
        if Instant::now() > deadline {
            return Err(std::io::Error::other(format!(
                "the agent was still sending {} s after the {seconds} s asked for",
                TIMEOUT.as_secs()
            )));
        }
        match stream.read(&mut buf)? {
            0 => break,
            n => {
                bytes += n as u64;
                last = Instant::now();
            }
        }
    }
    let secs = last.duration_since(started).as_secs_f64();
    if secs <= 0.0 {
        return Err(std::io::Error::other("the agent sent nothing"));
    }
    Ok(bytes as f64 * 8.0 / 1e6 / secs)
}

/// Round trips in ms per payload size: `round_trips` each, after 10 unmeasured.
fn echo(
    address: SocketAddr,
    authority: &str,
    token: Option<&str>,
    payloads: &[usize],
    round_trips: usize,
    stop: &AtomicBool,
) -> std::io::Result<Vec<Vec<f64>>> {
    let mut stream = open(address, &request("GET", "/bench/echo", authority, token))?;
    stream.set_nodelay(true)?;
    let (status, _) = read_head(&mut stream)?;
    if status != 200 {
        return Err(std::io::Error::other(format!(
            "the agent answered {status}"
        )));
    }
    let mut all = Vec::new();
    for &size in payloads {
        let mut frame = vec![0x65u8; size + 4];
        frame[..4].copy_from_slice(&(size as u32).to_be_bytes());
        let mut back = vec![0u8; size];
        let mut times = Vec::with_capacity(round_trips);
        for i in 0..round_trips + 10 {
            if i % 100 == 0 && stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(stopped());
            }
            let started = Instant::now();
            stream.write_all(&frame)?;
            stream.read_exact(&mut back)?;
            if back[..] != frame[4..] {
                return Err(std::io::Error::other(format!(
                    "the agent echoed {size} bytes other than those sent: its answers are not round trips"
                )));
            }
            if i >= 10 {
                times.push(started.elapsed().as_secs_f64() * 1000.0);
            }
        }
        times.sort_by(f64::total_cmp);
        all.push(times);
    }
    let _ = stream.write_all(&0u32.to_be_bytes());
    Ok(all)
}

pub fn run(o: &NetworkOptions, stop: &AtomicBool) -> Result<BenchResult, BenchError> {
    // Without an agent, one in this process answers on loopback.
    let local;
    let (authority, token) = match &o.agent {
        Some(a) => (a.clone(), o.token.clone()),
        None => {
            local = Agent::start(AgentConfig {
                listen: "127.0.0.1:0".parse().expect("an address"),
                token: None,
                sampler: Default::default(),
                bench_endpoints: true,
            })
            .map_err(|e| refused(format!("cannot start a local agent: {e}")))?;
            (local.address.to_string(), None)
        }
    };
    preflight(&authority, token.as_deref())?;
    let address = authority
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| refused(format!("{authority} resolves to no address")))?;
    let token = token.as_deref();
    let lost = |what: &str| lost_connection(&authority, what, stop);
    let mut m = NetworkMeasures::new(o);
    for _ in 0..o.repetitions {
        check(stop)?;
        m.up.values
            .push(upload(address, &authority, token, o.seconds, stop).map_err(lost("upload"))?);
        check(stop)?;
        m.down
            .values
            .push(download(address, &authority, token, o.seconds, stop).map_err(lost("download"))?);
        check(stop)?;
        let trips = echo(
            address,
            &authority,
            token,
            &o.payloads,
            o.round_trips.max(1),
            stop,
        )
        .map_err(lost("round-trip"))?;
        for (i, times) in trips.iter().enumerate() {
            m.rtt[i].values.push(quantile(times, 0.5));
            m.rtt99[i].values.push(quantile(times, 0.99));
        }
    }
    let curve = rtt_curve(o, &m.rtt);
    let (notes, shares) = link_shares(o, &m);
    let NetworkMeasures {
        up,
        down,
        rtt,
        rtt99,
        ..
    } = m;
    let mut measures = vec![up, down];
    measures.extend(shares);
    measures.extend(rtt);
    measures.extend(rtt99);
    Ok(BenchResult {
        benchmark: "network".into(),
        method: format!(
            "one TCP connection each way for {} s (payload bytes over the receiver's first-to-last-byte \
             time, Mbit/s), then {} round trips per payload size on one connection with Nagle off \
             (after 10 unmeasured), median and p99",
            o.seconds, o.round_trips
        ),
        settings: network_settings(o),
        measures,
        series: vec![curve],
        notes,
    })
}

/// The error for a test whose connection to the agent failed: stopped,
/// timed out, or broken.
fn lost_connection<'s>(
    authority: &str,
    what: &str,
    stop: &'s AtomicBool,
) -> impl FnOnce(std::io::Error) -> BenchError + 's {
    let authority = authority.to_string();
    let what = what.to_string();
    move |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::Interrupted if stop.load(std::sync::atomic::Ordering::Relaxed) => {
            BenchError::Interrupted
        }
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => refused(format!(
            "the {what} test with the agent at {authority} got no answer within {} s: the agent \
         stalled or the network dropped the connection; nothing of this benchmark is reported",
            TIMEOUT.as_secs()
        )),
        _ => refused(format!(
        "the {what} test with the agent at {authority} failed ({e}): nothing of this benchmark \
         is reported"
    )),
    }
}

/// The benchmark's figures, filled repetition by repetition (the link
/// shares after).
struct NetworkMeasures {
    up: Measure,
    down: Measure,
    up_pct: Measure,
    down_pct: Measure,
    rtt: Vec<Measure>,
    rtt99: Vec<Measure>,
}

impl NetworkMeasures {
    fn new(o: &NetworkOptions) -> NetworkMeasures {
        let up = measure(
            "upload",
            "TCP throughput, this machine → agent",
            "Mbit/s",
            true,
        );
        let down = measure(
            "download",
            "TCP throughput, agent → this machine",
            "Mbit/s",
            true,
        );
        let up_pct = measure("upload_pct", "upload, % of the link", "%", true);
        let down_pct = measure("download_pct", "download, % of the link", "%", true);
        let rtt: Vec<_> = o
            .payloads
            .iter()
            .map(|p| {
                measure(
                    &format!("rtt_{p}"),
                    format!("round trip, {p} B payload, median"),
                    "ms",
                    false,
                )
            })
            .collect();
        let rtt99: Vec<_> = o
            .payloads
            .iter()
            .map(|p| {
                measure(
                    &format!("rtt_{p}_p99"),
                    format!("round trip, {p} B payload, p99"),
                    "ms",
                    false,
                )
            })
            .collect();
        NetworkMeasures {
            up,
            down,
            up_pct,
            down_pct,
            rtt,
            rtt99,
        }
    }
}

/// The median round trip by payload size, averaged over the repetitions.
fn rtt_curve(o: &NetworkOptions, rtt: &[Measure]) -> Series {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    Series {
        name: "round trip, median".into(),
        x_label: "payload (bytes)".into(),
        y_label: "ms".into(),
        points: o
            .payloads
            .iter()
            .zip(rtt)
            .map(|(p, m)| (*p as f64, mean(&m.values)))
            .collect(),
    }
}

/// Throughputs as shares of the link, where its capacity is given and
/// believable; the notes on what is not computed, and why.
fn link_shares(o: &NetworkOptions, m: &NetworkMeasures) -> (Vec<String>, Vec<Measure>) {
    let mut notes = Vec::new();
    if o.agent.is_none() {
        notes.push(
            "no --agent: measured against an agent in this process on 127.0.0.1, so these figures are \
             this machine's network stack and memory, not a link. Run `headroom agent --bench-endpoints` \
             on the server and pass --agent to measure the link"
                .into(),
        );
    } else if o.link_mbit.is_none() {
        notes.push("no --link-capacity: % of the link is not computed".into());
    }
    let mut shares = Vec::new();
    if let Some(link) = o.link_mbit {
        let mut above = Vec::new();
        for (measured, mut pct, direction) in [
            (&m.up, m.up_pct.clone(), "this machine → agent"),
            (&m.down, m.down_pct.clone(), "agent → this machine"),
        ] {
            match share_of_link(&measured.values, link) {
                Ok(values) => {
                    pct.values = values;
                    shares.push(pct);
                }
                Err(most) => above.push((direction, most)),
            }
        }
        if !above.is_empty() {
            notes.push(above_link(&above, link, o.agent.is_none()));
        }
    }
    (notes, shares)
}

fn network_settings(o: &NetworkOptions) -> std::collections::BTreeMap<String, String> {
    settings([
        (
            "agent",
            o.agent
                .clone()
                .unwrap_or_else(|| "loopback (in process)".into()),
        ),
        ("seconds", o.seconds.to_string()),
        (
            "payloads",
            o.payloads
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(","),
        ),
        ("round_trips", o.round_trips.to_string()),
        (
            "link_mbit",
            o.link_mbit.map_or("unknown".into(), |l| l.to_string()),
        ),
        ("repetitions", o.repetitions.to_string()),
    ])
}

/// Each throughput (Mbit/s) as a % of a `link` of that many Mbit/s; the
/// largest throughput when one is above the link (beyond monitoring's
/// tolerance, [`link_share`]): no share is computed from a capacity the
/// figures show is wrong.
pub fn share_of_link(values: &[f64], link: f64) -> Result<Vec<f64>, f64> {
    let most = values.iter().copied().fold(0.0, f64::max);
    values
        .iter()
        .map(|v| link_share(*v, link))
        .collect::<Option<Vec<f64>>>()
        .ok_or(most)
}

/// Why "% of the link" is missing for the directions (and their largest
/// throughput, Mbit/s) measured above the link.
fn above_link(above: &[(&str, f64)], link: f64, loopback: bool) -> String {
    let shown = |mbit: f64| headroom_units::quantity::figure(mbit);
    let measured: Vec<String> = above
        .iter()
        .map(|(direction, most)| format!("{direction} {} Mbit/s", shown(*most)))
        .collect();
    let most = above.iter().map(|(_, m)| *m).fold(0.0, f64::max);
    format!(
        "% of the link not computed: {} measured, up to {}× the --link-capacity of {} Mbit/s, so {}",
        measured.join(" and "),
        shown(most / link),
        shown(link),
        if loopback {
            "the traffic did not cross that link: without --agent it stayed on 127.0.0.1. Run \
             `headroom agent --bench-endpoints` on the machine across the link and pass --agent"
        } else {
            "the capacity is wrong, or the traffic did not cross that link (the agent's address \
             reaches it by another path): give the link's real capacity with --link-capacity"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(agent: Option<String>, token: Option<String>) -> NetworkOptions {
        NetworkOptions {
            agent,
            token,
            seconds: 0.3,
            payloads: vec![100, 10_000],
            round_trips: 20,
            link_mbit: Some(1000.0),
            repetitions: 2,
        }
    }

    fn agent(token: Option<&str>, bench: bool) -> String {
        Agent::start(AgentConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            token: token.map(String::from),
            sampler: Default::default(),
            bench_endpoints: bench,
        })
        .unwrap()
        .address
        .to_string()
    }

    #[test]
    fn loopback_gives_both_directions_and_the_curve() {
        let mut o = options(None, None);
        o.link_mbit = Some(1.0);
        let r = run(&o, &AtomicBool::new(false)).unwrap();
        let up = &r
            .measures
            .iter()
            .find(|m| m.key == "upload")
            .unwrap()
            .values;
        assert_eq!(up.len(), 2);
        assert!(up.iter().all(|v| *v > 10.0), "{up:?}");
        // Loopback is far above the 1 Mbit/s given (the user's case
        // printed 3,480,672% of the link): no share is computed, and the
        // notes say why and what to do.
        assert!(
            !r.measures.iter().any(|m| m.key.ends_with("_pct")),
            "{:?}",
            r.measures
        );
        let note = r
            .notes
            .iter()
            .find(|n| n.starts_with("% of the link not computed"))
            .unwrap_or_else(|| panic!("{:?}", r.notes));
        assert!(
            note.contains("this machine → agent")
                && note.contains("agent → this machine")
                && note.contains("--link-capacity of 1.00 Mbit/s")
                && note.contains("stayed on 127.0.0.1"),
            "{note}"
        );
        assert_eq!(r.series[0].points.len(), 2);
        assert!(r.notes[0].contains("127.0.0.1"), "{:?}", r.notes);
    }

    #[test]
    fn a_token_agent_without_endpoints_or_with_another_token_is_refused() {
        let off = agent(Some("s3cret"), false);
        let e = run(
            &options(Some(off), Some("s3cret".into())),
            &AtomicBool::new(false),
        )
        .unwrap_err();
        assert!(e.to_string().contains("--bench-endpoints"), "{e}");
        let on = agent(Some("s3cret"), true);
        let e = run(
            &options(Some(on.clone()), Some("wrong".into())),
            &AtomicBool::new(false),
        )
        .unwrap_err();
        assert!(e.to_string().contains("refused the token"), "{e}");
        let r = run(
            &options(Some(on), Some("s3cret".into())),
            &AtomicBool::new(false),
        )
        .unwrap();
        // Measured through the agent, not the loopback stand-in; loopback
        // is faster than the 1 Gbit/s given, and the note says so.
        assert!(
            !r.notes.iter().any(|n| n.contains("127.0.0.1")),
            "{:?}",
            r.notes
        );
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("% of the link not computed")
                    && n.contains("the capacity is wrong")),
            "{:?}",
            r.notes
        );
    }

    #[test]
    fn a_share_of_the_link_is_computed_only_up_to_the_link() {
        assert_eq!(share_of_link(&[500.0, 940.0], 1000.0), Ok(vec![50.0, 94.0]));
        // Within the tolerance: a capacity rounded down.
        assert_eq!(share_of_link(&[1040.0], 1000.0), Ok(vec![104.0]));
        assert_eq!(share_of_link(&[900.0, 34_806.72], 1.0), Err(34_806.72));
        assert!(share_of_link(&[1.0], 0.0).is_err());
        let note = above_link(&[("this machine → agent", 34_806.72)], 1.0, true);
        assert!(
            note.contains(
                "this machine → agent 34,807 Mbit/s measured, up to 34,807× the --link-capacity of 1.00 Mbit/s"
            ),
            "{note}"
        );
    }

    #[test]
    fn an_unreachable_agent_is_refused_quickly() {
        let started = Instant::now();
        let e = run(
            &options(Some("127.0.0.1:1".into()), None),
            &AtomicBool::new(false),
        )
        .unwrap_err();
        assert!(e.to_string().contains("no agent answers"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
