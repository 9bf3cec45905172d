//! The agent's network benchmark endpoints (served only with
//! `headroom agent --bench-endpoints`, under the agent's token rules):
//!
//! | request | the agent |
//! |---|---|
//! | `GET /bench/hello` | answers 200: the endpoints are on |
//! | `POST /bench/sink`, then raw bytes until the client half-closes | counts them and answers `{"bytes":N,"seconds":S}`, timed from the first byte to the last |
//! | `GET /bench/source?seconds=S` | sends raw bytes for S seconds (at most 60), then closes |
//! | `GET /bench/echo`, then frames of a 4-byte big-endian length and that many bytes | sends each frame's bytes back; a zero length ends it |
//!
//! Every exchange ends within [`LONGEST`]; a frame is at most [`MAX_FRAME`].

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

/// The longest exchange the agent serves.
pub const LONGEST: Duration = Duration::from_secs(130);
/// The largest echo frame.
pub const MAX_FRAME: usize = 1 << 20;
const CHUNK: usize = 128 * 1024;

/// Serves one benchmark request whose header ended before `rest` (bytes
/// of the body already read).
pub fn serve(
    mut stream: TcpStream,
    route: &str,
    query: &str,
    rest: &[u8],
    enabled: bool,
) -> io::Result<()> {
    if !enabled {
        return reply(
            &mut stream,
            404,
            "{\"error\":\"this agent does not serve the network benchmark: start it with `headroom agent --bench-endpoints`\"}",
        );
    }
    let started = Instant::now();
    match route {
        "/bench/hello" => reply(&mut stream, 200, "{\"endpoints\":true}"),
        "/bench/sink" => {
            let mut bytes = rest.len() as u64;
            let mut first: Option<Instant> = (!rest.is_empty()).then(Instant::now);
            let mut last = first.unwrap_or_else(Instant::now);
            let mut buf = vec![0u8; CHUNK];
            loop {
                if started.elapsed() > LONGEST {
                    break;
                }
                match stream.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let now = Instant::now();
                        first.get_or_insert(now);
                        last = now;
                        bytes += n as u64;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            let seconds = first.map_or(0.0, |f| last.duration_since(f).as_secs_f64());
            reply(
                &mut stream,
                200,
                &format!("{{\"bytes\":{bytes},\"seconds\":{seconds}}}"),
            )
        }
        "/bench/source" => {
            let asked = query
                .split('&')
                .find_map(|p| p.strip_prefix("seconds="))
                .map(|v| {
                    v.parse::<f64>()
                        .ok()
                        .filter(|s| s.is_finite() && *s > 0.0 && *s <= 60.0)
                });
            let seconds = match asked {
                None => 10.0,
                Some(Some(s)) => s,
                Some(None) => {
                    return reply(
                        &mut stream,
                        400,
                        "{\"error\":\"seconds must be a number above 0 and at most 60\"}",
                    )
                }
            };
            stream.set_write_timeout(Some(Duration::from_secs(10)))?;
            stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
            )?;
            let chunk = vec![0x6eu8; CHUNK];
            let until = Instant::now() + Duration::from_secs_f64(seconds);
            while Instant::now() < until {
                stream.write_all(&chunk)?;
            }
            stream.shutdown(Shutdown::Write)
        }
        "/bench/echo" => {
            stream.set_nodelay(true)?;
            stream.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")?;
            let mut pending = rest.to_vec();
            let mut frame = vec![0u8; MAX_FRAME];
            while started.elapsed() < LONGEST {
                let mut length = [0u8; 4];
                take(&mut stream, &mut pending, &mut length)?;
                let n = u32::from_be_bytes(length) as usize;
                if n == 0 || n > MAX_FRAME {
                    break;
                }
                take(&mut stream, &mut pending, &mut frame[..n])?;
                stream.write_all(&frame[..n])?;
            }
            Ok(())
        }
        _ => reply(
            &mut stream,
            404,
            "{\"error\":\"try /bench/hello, /bench/sink, /bench/source?seconds=S or /bench/echo\"}",
        ),
    }
}

/// Fills `out` from the bytes already read, then from the stream.
fn take(stream: &mut TcpStream, pending: &mut Vec<u8>, out: &mut [u8]) -> io::Result<()> {
    let from_pending = pending.len().min(out.len());
    out[..from_pending].copy_from_slice(&pending[..from_pending]);
    pending.drain(..from_pending);
    stream.read_exact(&mut out[from_pending..])
}

fn reply(stream: &mut TcpStream, status: u16, body: &str) -> io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        _ => "Not Found",
    };
    write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}
