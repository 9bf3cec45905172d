use super::*;
use std::io::{Read, Write};
use std::net::TcpListener;

fn reading(sent_ms: f64, remote_ms: f64, received_ms: f64) -> Reading {
    Reading {
        sent_ms,
        remote_ms,
        received_ms,
    }
}

#[test]
fn the_remote_time_is_taken_at_the_exchanges_midpoint() {
    let r = reading(1000.0, 6010.0, 1020.0);
    assert_eq!(r.offset_ms(), 5000.0);
    assert_eq!(r.round_trip_ms(), 20.0);
    let record = r.record("agent a".into(), 1.0);
    assert_eq!(record.offset_ms, 5000.0);
    assert_eq!(record.uncertainty_ms, 10.5);
    assert_eq!(r.record("Date".into(), 0.0).uncertainty_ms, 10.0);
}

#[test]
fn the_shortest_exchange_wins() {
    let slow = reading(0.0, 100.0, 40.0);
    let quick = reading(100.0, 203.0, 104.0);
    let slower = reading(200.0, 250.0, 300.0);
    assert_eq!(best([slow, quick, slower]), Some(quick));
    assert_eq!(best([]), None);
}

#[test]
fn http_dates_are_read() {
    assert_eq!(http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(784111777));
    assert_eq!(http_date("Mon, 23 Nov 2026 10:00:00 GMT"), Some(1795428000));
    assert_eq!(http_date("yesterday"), None);
    assert_eq!(
        date_header(b"HTTP/1.1 200 OK\r\ndate: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n"),
        Some(784111777)
    );
}

/// An agent on 127.0.0.1 whose clock is `ahead_ms` ahead of ours, for
/// `answers` requests.
fn fake_agent(ahead_ms: u64, answers: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let authority = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(answers) {
            let mut stream = stream.unwrap();
            let mut request = Vec::new();
            let mut buffer = [0u8; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buffer[..n]),
                }
            }
            let now = now_ms() as u64 + ahead_ms;
            let body = format!(r#"{{"host":"fake","now_ms":{now},"samples":[]}}"#);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    authority
}

#[test]
fn an_agents_clock_is_measured_against_ours() {
    let authority = fake_agent(5000, AGENT_TRIES);
    let reading = agent_reading(&authority, None).unwrap();
    // The agent answers in whole milliseconds within the exchange.
    let offset = reading.offset_ms();
    assert!(
        (offset - 5000.0).abs() <= reading.round_trip_ms() / 2.0 + 1.0,
        "{reading:?}"
    );
    assert!(reading.round_trip_ms() < 1000.0, "{reading:?}");
}

#[test]
fn an_agent_that_does_not_answer_says_why() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let authority = listener.local_addr().unwrap().to_string();
    drop(listener);
    let why = agent_reading(&authority, None).unwrap_err();
    assert!(why.contains("refused"), "{why}");
}
