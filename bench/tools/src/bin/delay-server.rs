//! Answers every request after exactly DELAY_US microseconds (a thread per
//! connection, blocking I/O, so nothing but the sleep sits between reading
//! the request and writing the answer) and measures that time itself.
//! `GET /__stats` answers with the server's own median in microseconds.
//! With SPIN=1 the connection thread polls its socket instead of sleeping
//! in read(), so the server's wake-up latency does not hide outside its own
//! measurement (use one connection per core).
//! Usage: delay-server PORT DELAY_US

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let port: u16 = args.next().and_then(|p| p.parse().ok()).unwrap_or(8091);
    let delay = Duration::from_micros(args.next().and_then(|d| d.parse().ok()).unwrap_or(10_000));
    let listener = TcpListener::bind(("127.0.0.1", port)).unwrap();
    let own_times: Arc<Mutex<Vec<u64>>> = Arc::new(Mutex::new(Vec::new()));
    let spin = std::env::var("SPIN").is_ok_and(|v| v == "1");
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        let own_times = own_times.clone();
        std::thread::spawn(move || {
            let _ = stream.set_nodelay(true);
            let _ = stream.set_nonblocking(spin);
            let mut buf = vec![0u8; 8192];
            let mut filled = 0;
            loop {
                let (head_len, stats) = loop {
                    let mut headers = [httparse::EMPTY_HEADER; 32];
                    let mut request = httparse::Request::new(&mut headers);
                    if let Ok(httparse::Status::Complete(n)) = request.parse(&buf[..filled]) {
                        break (n, request.path == Some("/__stats"));
                    }
                    match stream.read(&mut buf[filled..]) {
                        Ok(0) => return,
                        Ok(n) => filled += n,
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                            std::hint::spin_loop()
                        }
                        Err(_) => return,
                    }
                };
                let received = Instant::now();
                buf.copy_within(head_len..filled, 0);
                filled -= head_len;
                let body = if stats {
                    let mut times = own_times.lock().unwrap().clone();
                    times.sort_unstable();
                    let median = times.get(times.len() / 2).copied().unwrap_or(0);
                    format!("{{\"count\":{},\"median_us\":{median}}}", times.len())
                } else {
                    // Sleep, then top up by spinning: exactly `delay` from reading to writing.
                    std::thread::sleep(delay.saturating_sub(Duration::from_micros(200)));
                    while received.elapsed() < delay {
                        std::hint::spin_loop();
                    }
                    "x".repeat(64)
                };
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                let own = received.elapsed();
                if stream.write_all(response.as_bytes()).is_err() {
                    return;
                }
                if !stats {
                    own_times.lock().unwrap().push(own.as_micros() as u64);
                }
            }
        });
    }
}
