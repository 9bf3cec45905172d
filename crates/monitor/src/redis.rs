//! Redis's own counters (its `INFO`): clients against maxclients,
//! connections it rejected, clients blocked in a waiting command, and
//! the CPU time of its main thread, which runs every command one at a
//! time. Spoken in Redis's protocol over one kept connection, with the
//! password of a `redis://:PASSWORD@HOST:PORT` credentials line when it
//! has one.

use std::collections::BTreeMap;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// A kept connection to a Redis.
pub struct RedisConnection {
    stream: BufReader<TcpStream>,
}

/// Why Redis could not be read.
#[derive(Debug)]
pub enum RedisError {
    Io(std::io::Error),
    /// Redis answered an error ("NOAUTH Authentication required.").
    Refused(String),
    Protocol,
}

impl std::fmt::Display for RedisError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RedisError::Io(e) => write!(f, "{e}"),
            RedisError::Refused(e) if e.starts_with("NOAUTH") => write!(
                f,
                "{e} (name it with its password in --credentials: redis://:PASSWORD@HOST:PORT)"
            ),
            RedisError::Refused(e) => write!(f, "{e}"),
            RedisError::Protocol => write!(f, "it did not answer in Redis's protocol"),
        }
    }
}

impl From<std::io::Error> for RedisError {
    fn from(e: std::io::Error) -> Self {
        RedisError::Io(e)
    }
}

/// The address and password of a `redis://[USER:PASSWORD@]HOST:PORT[/DB]` URL.
pub fn url_parts(url: &str) -> Option<(String, Option<(String, String)>)> {
    let rest = url
        .strip_prefix("redis://")
        .or_else(|| url.strip_prefix("valkey://"))?;
    let (user, host) = match rest.rsplit_once('@') {
        Some((user, host)) => (Some(user), host),
        None => (None, rest),
    };
    let host = host.split(['/', '?']).next().unwrap_or("");
    if host.is_empty() {
        return None;
    }
    let host = if host.contains(':') {
        host.to_string()
    } else {
        format!("{host}:6379")
    };
    let login = user.map(|u| match u.split_once(':') {
        Some((name, password)) => (name.to_string(), password.to_string()),
        None => (String::new(), u.to_string()),
    });
    Some((host, login))
}

impl RedisConnection {
    /// Connects to `address`, and logs in with `login` (user, password;
    /// an empty user is Redis's default one).
    pub async fn connect(
        address: &str,
        login: Option<&(String, String)>,
    ) -> Result<RedisConnection, RedisError> {
        let stream = TcpStream::connect(address).await?;
        let mut connection = RedisConnection {
            stream: BufReader::new(stream),
        };
        if let Some((user, password)) = login {
            let mut words = vec!["AUTH"];
            if !user.is_empty() {
                words.push(user);
            }
            words.push(password);
            connection.command(&words).await?;
        }
        Ok(connection)
    }

    /// Sends one command; its reply as text (a status or a bulk string).
    async fn command(&mut self, words: &[&str]) -> Result<String, RedisError> {
        let mut request = format!("*{}\r\n", words.len());
        for word in words {
            request.push_str(&format!("${}\r\n{word}\r\n", word.len()));
        }
        self.stream.get_mut().write_all(request.as_bytes()).await?;
        let mut line = String::new();
        if self.stream.read_line(&mut line).await? == 0 {
            return Err(RedisError::Protocol);
        }
        let line = line.trim_end();
        match line.as_bytes().first() {
            Some(b'+') | Some(b':') => Ok(line[1..].to_string()),
            Some(b'-') => Err(RedisError::Refused(line[1..].to_string())),
            Some(b'$') => {
                let length: usize = line[1..].parse().map_err(|_| RedisError::Protocol)?;
                // INFO is a few kilobytes; anything far larger is not Redis.
                if length > 1 << 20 {
                    return Err(RedisError::Protocol);
                }
                let mut body = vec![0; length + 2];
                self.stream.read_exact(&mut body).await?;
                body.truncate(length);
                String::from_utf8(body).map_err(|_| RedisError::Protocol)
            }
            _ => Err(RedisError::Protocol),
        }
    }

    /// INFO's fields (of `section`, or the default ones).
    pub async fn info(
        &mut self,
        section: Option<&str>,
    ) -> Result<BTreeMap<String, String>, RedisError> {
        let reply = match section {
            Some(section) => self.command(&["INFO", section]).await?,
            None => self.command(&["INFO"]).await?,
        };
        Ok(parse_info(&reply))
    }
}

/// `name:value` lines of an INFO reply; `#` section headers skipped.
pub fn parse_info(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(':'))
        .map(|(name, value)| (name.to_string(), value.trim().to_string()))
        .collect()
}

/// Microseconds of CPU its main thread used (the whole process's on a
/// Redis before 6.2, which does not say).
pub fn main_thread_cpu_us(info: &BTreeMap<String, String>) -> Option<u64> {
    let seconds = |name: &str| info.get(name)?.parse::<f64>().ok();
    let used = match (
        seconds("used_cpu_sys_main_thread"),
        seconds("used_cpu_user_main_thread"),
    ) {
        (Some(sys), Some(user)) => sys + user,
        _ => seconds("used_cpu_sys")? + seconds("used_cpu_user")?,
    };
    Some((used * 1e6) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_gives_the_address_and_the_login() {
        assert_eq!(
            url_parts("redis://:s3cret@127.0.0.1:6380/0"),
            Some((
                "127.0.0.1:6380".into(),
                Some((String::new(), "s3cret".into()))
            ))
        );
        assert_eq!(
            url_parts("redis://app:pw@cache"),
            Some(("cache:6379".into(), Some(("app".into(), "pw".into()))))
        );
        assert_eq!(
            url_parts("redis://127.0.0.1:6379"),
            Some(("127.0.0.1:6379".into(), None))
        );
        assert_eq!(url_parts("redis://"), None);
        assert_eq!(url_parts("mysql://x@y/"), None);
    }

    #[test]
    fn info_gives_its_fields_and_the_main_threads_cpu() {
        let info = parse_info("# Clients\r\nconnected_clients:3\r\nmaxclients:10000\r\n\r\n# CPU\r\nused_cpu_sys:1.5\r\nused_cpu_user:2.0\r\nused_cpu_sys_main_thread:1.25\r\nused_cpu_user_main_thread:1.75\r\n");
        assert_eq!(info["connected_clients"], "3");
        assert_eq!(main_thread_cpu_us(&info), Some(3_000_000));
        let old = parse_info("used_cpu_sys:1.5\nused_cpu_user:2.0\n");
        assert_eq!(main_thread_cpu_us(&old), Some(3_500_000));
    }
}
