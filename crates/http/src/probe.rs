//! One GET of the target, timed from connecting to the response's head: how
//! a capacity search sees whether the server has finished the work a level
//! left behind (requests still queued when the level's users stopped)
//! before the next level starts. Any status is an answer; only its time
//! counts.

use crate::conn::Connector;
use crate::target::Target;
use headroom_bundle::sample::ErrorKind;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The most of a response's head that is read.
const MOST: usize = 64 * 1024;

/// Sends `GET` of the target's path on a new connection (`Connection:
/// close`) and reads the response's head; returns how long that took, or
/// why it failed within `timeout`.
pub async fn time_get(
    connector: &Connector,
    target: &Target,
    timeout: Duration,
) -> Result<Duration, ErrorKind> {
    let started = Instant::now();
    let exchange = async {
        let (mut conn, _) = connector.connect(&connector.user_tls()).await?;
        let mut request = format!(
            "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: headroom (capacity probe)\r\nAccept: */*\r\nConnection: close\r\n",
            target.path_and_query,
            target.authority()
        );
        if let Some(auth) = &target.authorization {
            request.push_str(&format!("Authorization: {auth}\r\n"));
        }
        request.push_str("\r\n");
        conn.write_all(request.as_bytes())
            .await
            .map_err(|_| ErrorKind::Reset)?;
        // Until the response's head has arrived: the server has done the
        // request's work by then, and a server that keeps the connection
        // open despite `Connection: close` is not waited for.
        let mut head = Vec::with_capacity(4 * 1024);
        let mut chunk = [0u8; 4 * 1024];
        loop {
            let n = conn.read(&mut chunk).await.map_err(|_| ErrorKind::Reset)?;
            head.extend_from_slice(&chunk[..n]);
            let ended = head.windows(4).any(|w| w == b"\r\n\r\n");
            if n == 0 || ended || head.len() >= MOST {
                break;
            }
        }
        if head.starts_with(b"HTTP/1.") {
            Ok(started.elapsed())
        } else if head.is_empty() {
            Err(ErrorKind::Reset)
        } else {
            Err(ErrorKind::Protocol)
        }
    };
    match tokio::time::timeout(timeout, exchange).await {
        Ok(result) => result,
        Err(_) => Err(ErrorKind::Timeout),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    /// A server that answers after 150 ms (and keeps the connection open
    /// for 3 s) is timed at 150 ms or more, not 3 s; one that says
    /// something other than HTTP is a protocol error; a closed port is
    /// refused; one that never answers times out.
    #[tokio::test]
    async fn a_probe_times_the_answer_to_its_head() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let mut n = 0;
            while let Ok((mut socket, _)) = listener.accept().await {
                n += 1;
                tokio::spawn(async move {
                    let mut buf = [0u8; 1024];
                    let _ = socket.read(&mut buf).await;
                    let reply: &[u8] = match n {
                        1 => {
                            tokio::time::sleep(Duration::from_millis(150)).await;
                            b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nno"
                        }
                        2 => b"SSH-2.0-OpenSSH\r\n",
                        _ => {
                            tokio::time::sleep(Duration::from_secs(5)).await;
                            b""
                        }
                    };
                    let _ = socket.write_all(reply).await;
                    if n == 1 {
                        tokio::time::sleep(Duration::from_secs(3)).await;
                    }
                });
            }
        });
        let target = Target::parse(&format!("http://127.0.0.1:{port}/x")).unwrap();
        let connector = Connector::resolve(&target, false, Default::default())
            .await
            .unwrap();
        let wait = Duration::from_secs(1);
        let took = time_get(&connector, &target, wait).await.unwrap();
        assert!(
            took >= Duration::from_millis(150) && took < Duration::from_secs(1),
            "{took:?}"
        );
        assert_eq!(
            time_get(&connector, &target, wait).await,
            Err(ErrorKind::Protocol)
        );
        assert_eq!(
            time_get(&connector, &target, Duration::from_millis(200)).await,
            Err(ErrorKind::Timeout)
        );
        let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let closed_port = closed.local_addr().unwrap().port();
        drop(closed);
        let gone = Target::parse(&format!("http://127.0.0.1:{closed_port}/")).unwrap();
        let connector = Connector::resolve(&gone, false, Default::default())
            .await
            .unwrap();
        assert_eq!(
            time_get(&connector, &gone, wait).await,
            Err(ErrorKind::Refused)
        );
    }
}
