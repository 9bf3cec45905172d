//! A memcached client for the text protocol (get, set, add, delete): a few
//! pooled connections; a connection that fails is dropped and the next
//! call opens a new one, so a restarted memcached is picked up again.

use std::io;
use std::sync::Mutex;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const TIMEOUT: Duration = Duration::from_secs(2);
const IDLE: usize = 16;

pub struct Memcached {
    addr: String,
    idle: Mutex<Vec<BufReader<TcpStream>>>,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Stored {
    Stored,
    NotStored,
}

fn protocol(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

impl Memcached {
    /// Connects once to check that the server answers.
    pub async fn connect(addr: &str) -> io::Result<Memcached> {
        let client = Memcached {
            addr: addr.to_string(),
            idle: Mutex::new(Vec::new()),
        };
        let conn = client.open().await?;
        client.give_back(conn);
        Ok(client)
    }

    pub fn addr(&self) -> &str {
        &self.addr
    }

    async fn open(&self) -> io::Result<BufReader<TcpStream>> {
        let stream = tokio::time::timeout(TIMEOUT, TcpStream::connect(&self.addr))
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "connect timed out"))??;
        stream.set_nodelay(true)?;
        Ok(BufReader::new(stream))
    }

    fn take(&self) -> Option<BufReader<TcpStream>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop()
    }

    fn give_back(&self, conn: BufReader<TcpStream>) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < IDLE {
            idle.push(conn);
        }
    }

    /// Sends `request` and reads the answer with `read`; the connection is
    /// reused only when the exchange completed.
    async fn exchange<T>(
        &self,
        request: &[u8],
        read: impl AsyncFnOnce(&mut BufReader<TcpStream>) -> io::Result<T>,
    ) -> io::Result<T> {
        let mut conn = match self.take() {
            Some(conn) => conn,
            None => self.open().await?,
        };
        let result = tokio::time::timeout(TIMEOUT, async {
            conn.get_mut().write_all(request).await?;
            read(&mut conn).await
        })
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "memcached did not answer"))?;
        if result.is_ok() {
            self.give_back(conn);
        }
        result
    }

    pub async fn get(&self, key: &str) -> io::Result<Option<Vec<u8>>> {
        let request = format!("get {key}\r\n");
        self.exchange(request.as_bytes(), async |conn| {
            let mut line = String::new();
            let mut value = None;
            loop {
                line.clear();
                if conn.read_line(&mut line).await? == 0 {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                let head = line.trim_end();
                if head == "END" {
                    return Ok(value);
                }
                let mut parts = head.split(' ');
                match (parts.next(), parts.next(), parts.next(), parts.next()) {
                    (Some("VALUE"), Some(_), Some(_), Some(len)) => {
                        let len: usize = len
                            .parse()
                            .map_err(|_| protocol(format!("bad length in '{head}'")))?;
                        let mut data = vec![0; len + 2];
                        conn.read_exact(&mut data).await?;
                        data.truncate(len);
                        value = Some(data);
                    }
                    _ => return Err(protocol(format!("unexpected answer '{head}'"))),
                }
            }
        })
        .await
    }

    async fn store(&self, verb: &str, key: &str, value: &[u8], ttl_s: u32) -> io::Result<Stored> {
        let mut request = format!("{verb} {key} 0 {ttl_s} {}\r\n", value.len()).into_bytes();
        request.extend_from_slice(value);
        request.extend_from_slice(b"\r\n");
        self.exchange(&request, async |conn| {
            let mut line = String::new();
            conn.read_line(&mut line).await?;
            match line.trim_end() {
                "STORED" => Ok(Stored::Stored),
                "NOT_STORED" => Ok(Stored::NotStored),
                other => Err(protocol(format!("unexpected answer '{other}'"))),
            }
        })
        .await
    }

    pub async fn set(&self, key: &str, value: &[u8], ttl_s: u32) -> io::Result<()> {
        self.store("set", key, value, ttl_s).await.map(|_| ())
    }

    /// Stores only if the key is absent: memcached's atomic lock primitive.
    pub async fn add(&self, key: &str, value: &[u8], ttl_s: u32) -> io::Result<Stored> {
        self.store("add", key, value, ttl_s).await
    }

    pub async fn delete(&self, key: &str) -> io::Result<()> {
        let request = format!("delete {key}\r\n");
        self.exchange(request.as_bytes(), async |conn| {
            let mut line = String::new();
            conn.read_line(&mut line).await?;
            match line.trim_end() {
                "DELETED" | "NOT_FOUND" => Ok(()),
                other => Err(protocol(format!("unexpected answer '{other}'"))),
            }
        })
        .await
    }
}
