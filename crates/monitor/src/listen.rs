//! Listening sockets and their accept queues, as the kernel's sock_diag
//! netlink interface reports them (what `ss -l` shows): for a socket in
//! LISTEN, the connections waiting to be accepted and the backlog they
//! may grow to. TCP over IPv4 and IPv6, and unix stream sockets (php-fpm's
//! usual listen). Each socket is known by its inode, which a process's
//! /proc/[pid]/fd links name as "socket:[inode]".

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io;

/// One listening socket's queue at one look.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListenQueue {
    /// "127.0.0.1:8080", "[::]:80", or a unix socket's path.
    pub address: String,
    /// Connections waiting to be accepted.
    pub queue: u32,
    /// The most that may wait (the listen backlog, capped by somaxconn).
    pub backlog: u32,
    /// Packets the kernel dropped at this socket since it opened (its own
    /// drop count, `ss -m`'s `d`): a TCP listener counts each SYN, or
    /// handshake's last ACK, it dropped with its accept queue full (an ACK
    /// twice). None for a unix socket, whose full queue refuses instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<u64>,
}

const NETLINK_SOCK_DIAG: i32 = 4;
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_DUMP: u16 = 0x300;
const TCP_LISTEN: u32 = 10;
const UDIAG_SHOW_NAME: u32 = 1;
const UDIAG_SHOW_RQLEN: u32 = 0x10;
const UNIX_DIAG_NAME: u16 = 0;
const UNIX_DIAG_RQLEN: u16 = 4;
/// The socket's memory figures, an array of u32 whose ninth is its drops.
const INET_DIAG_SKMEMINFO: u16 = 7;
const SK_MEMINFO_DROPS: usize = 8;
const HEADER: usize = 16;

/// Every listening socket of this network namespace, by inode; an error
/// when netlink is not there (a kernel without sock_diag, a sandbox).
pub fn listening() -> io::Result<BTreeMap<u64, ListenQueue>> {
    let mut found = BTreeMap::new();
    for family in [libc::AF_INET, libc::AF_INET6] {
        let mut request = Vec::with_capacity(56);
        // Ask for each socket's memory figures too (its drop count).
        let extensions = 1u8 << (INET_DIAG_SKMEMINFO - 1);
        request.extend_from_slice(&[family as u8, libc::IPPROTO_TCP as u8, extensions, 0]);
        request.extend_from_slice(&(1u32 << TCP_LISTEN).to_ne_bytes());
        request.extend_from_slice(&[0u8; 48]);
        dump(&request, |payload, attributes| {
            if let Some((inode, queue)) = inet_queue(payload, attributes) {
                found.insert(inode, queue);
            }
        })?;
    }
    let mut request = Vec::with_capacity(24);
    request.extend_from_slice(&[libc::AF_UNIX as u8, 0, 0, 0]);
    request.extend_from_slice(&(1u32 << TCP_LISTEN).to_ne_bytes());
    request.extend_from_slice(&0u32.to_ne_bytes());
    request.extend_from_slice(&(UDIAG_SHOW_NAME | UDIAG_SHOW_RQLEN).to_ne_bytes());
    request.extend_from_slice(&[0u8; 8]);
    dump(&request, |payload, attributes| {
        if let Some((inode, queue)) = unix_queue(payload, attributes) {
            found.insert(inode, queue);
        }
    })?;
    Ok(found)
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// An inet_diag_msg: family, state, timer, retrans, the socket's id (48
/// bytes: ports, addresses, interface, cookie), expires, rqueue, wqueue,
/// uid, inode. For a listener rqueue is the accept queue and wqueue its
/// backlog. Its memory figures attribute carries its drop count.
fn inet_queue(msg: &[u8], attributes: &[(u16, &[u8])]) -> Option<(u64, ListenQueue)> {
    let family = *msg.first()? as i32;
    let port = u16::from_be_bytes(msg.get(4..6)?.try_into().ok()?);
    let address = if family == libc::AF_INET {
        let a: [u8; 4] = msg.get(8..12)?.try_into().ok()?;
        format!("{}:{port}", std::net::Ipv4Addr::from(a))
    } else {
        let a: [u8; 16] = msg.get(8..24)?.try_into().ok()?;
        format!("[{}]:{port}", std::net::Ipv6Addr::from(a))
    };
    let queue = u32_at(msg, 56)?;
    let backlog = u32_at(msg, 60)?;
    let inode = u32_at(msg, 68)?;
    let dropped = attributes
        .iter()
        .find(|(kind, _)| *kind == INET_DIAG_SKMEMINFO)
        .and_then(|(_, figures)| u32_at(figures, 4 * SK_MEMINFO_DROPS))
        .map(u64::from);
    Some((
        u64::from(inode),
        ListenQueue {
            address,
            queue,
            backlog,
            dropped,
        },
    ))
}

/// A unix_diag_msg (family, type, state, pad, inode, cookie) and its
/// attributes: the name, and the queue and backlog.
fn unix_queue(msg: &[u8], attributes: &[(u16, &[u8])]) -> Option<(u64, ListenQueue)> {
    let inode = u32_at(msg, 4)?;
    let rqlen = attributes
        .iter()
        .find(|(kind, _)| *kind == UNIX_DIAG_RQLEN)?
        .1;
    let address = attributes
        .iter()
        .find(|(kind, _)| *kind == UNIX_DIAG_NAME)
        .map(|(_, name)| match name.split_first() {
            // An abstract name starts with a zero byte; `ss` writes it with @.
            Some((0, rest)) => format!("@{}", String::from_utf8_lossy(rest)),
            _ => String::from_utf8_lossy(name)
                .trim_end_matches('\0')
                .to_string(),
        })
        .unwrap_or_else(|| format!("unix socket {inode}"));
    Some((
        u64::from(inode),
        ListenQueue {
            address,
            queue: u32_at(rqlen, 0)?,
            backlog: u32_at(rqlen, 4)?,
            dropped: None,
        },
    ))
}

/// A socket that closes when dropped.
struct Netlink(i32);

impl Drop for Netlink {
    fn drop(&mut self) {
        // SAFETY: closes a descriptor this value owns.
        unsafe { libc::close(self.0) };
    }
}

/// Sends one sock_diag dump request (`request` after the netlink header)
/// and hands each answer's payload, with its attributes after
/// `fixed` bytes, to `each`.
fn dump(request: &[u8], mut each: impl FnMut(&[u8], &[(u16, &[u8])])) -> io::Result<()> {
    // SAFETY: plain socket creation; the descriptor is owned by Netlink.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let socket = Netlink(fd);
    let timeout = libc::timeval {
        tv_sec: 1,
        tv_usec: 0,
    };
    // SAFETY: the option is a timeval of the right size.
    unsafe {
        libc::setsockopt(
            socket.0,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            &timeout as *const libc::timeval as *const libc::c_void,
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    let mut message = Vec::with_capacity(HEADER + request.len());
    message.extend_from_slice(&((HEADER + request.len()) as u32).to_ne_bytes());
    message.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    message.extend_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    message.extend_from_slice(&1u32.to_ne_bytes());
    message.extend_from_slice(&0u32.to_ne_bytes());
    message.extend_from_slice(request);
    // SAFETY: an all-zero sockaddr_nl is valid; it addresses the kernel.
    let mut kernel: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    kernel.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    // SAFETY: sends our buffer to the kernel's address.
    let sent = unsafe {
        libc::sendto(
            socket.0,
            message.as_ptr() as *const libc::c_void,
            message.len(),
            0,
            &kernel as *const libc::sockaddr_nl as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
        )
    };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    let fixed = if request.len() == 24 { 16 } else { 72 };
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        // SAFETY: receives into our buffer, within its length.
        let n = unsafe {
            libc::recv(
                socket.0,
                buffer.as_mut_ptr() as *mut libc::c_void,
                buffer.len(),
                0,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut data = &buffer[..n as usize];
        if data.is_empty() {
            return Ok(());
        }
        while data.len() >= HEADER {
            let length = u32_at(data, 0).unwrap_or(0) as usize;
            let kind = u16::from_ne_bytes([data[4], data[5]]);
            if length < HEADER || length > data.len() {
                return Ok(());
            }
            match kind {
                NLMSG_DONE => return Ok(()),
                NLMSG_ERROR => {
                    let code = u32_at(data, HEADER).unwrap_or(0) as i32;
                    return Err(io::Error::from_raw_os_error(-code));
                }
                _ => {
                    let payload = &data[HEADER..length];
                    let attributes = payload.get(fixed..).map(attributes).unwrap_or_default();
                    each(payload, &attributes);
                }
            }
            data = data.get((length + 3) & !3..).unwrap_or(&[]);
            if data.len() < HEADER {
                break;
            }
        }
    }
}

/// The netlink attributes (length, type, value; each aligned to 4 bytes).
fn attributes(mut bytes: &[u8]) -> Vec<(u16, &[u8])> {
    let mut found = Vec::new();
    while bytes.len() >= 4 {
        let length = u16::from_ne_bytes([bytes[0], bytes[1]]) as usize;
        let kind = u16::from_ne_bytes([bytes[2], bytes[3]]);
        if length < 4 || length > bytes.len() {
            break;
        }
        found.push((kind, &bytes[4..length]));
        bytes = bytes.get((length + 3) & !3..).unwrap_or(&[]);
    }
    found
}

/// The socket inodes a process holds open, from its /proc/[pid]/fd links.
pub fn socket_inodes(process: &std::path::Path) -> Vec<u64> {
    let Ok(fds) = std::fs::read_dir(process.join("fd")) else {
        return Vec::new();
    };
    fds.flatten()
        .filter_map(|fd| {
            let link = std::fs::read_link(fd.path()).ok()?;
            let link = link.to_str()?;
            link.strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::{UnixListener, UnixStream};

    /// A listener with a backlog of 7 and 3 connections not yet accepted:
    /// the kernel reports a queue of 3 of 7, for TCP and for a unix socket.
    #[test]
    fn the_kernel_reports_an_accept_queue_and_its_backlog() {
        // SAFETY: plain socket calls on a descriptor this test owns.
        let (fd, port) = unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
            let mut addr: libc::sockaddr_in = std::mem::zeroed();
            addr.sin_family = libc::AF_INET as libc::sa_family_t;
            addr.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
            assert_eq!(
                libc::bind(
                    fd,
                    &addr as *const libc::sockaddr_in as *const libc::sockaddr,
                    std::mem::size_of::<libc::sockaddr_in>() as u32
                ),
                0
            );
            assert_eq!(libc::listen(fd, 7), 0);
            let mut len = std::mem::size_of::<libc::sockaddr_in>() as u32;
            libc::getsockname(
                fd,
                &mut addr as *mut libc::sockaddr_in as *mut libc::sockaddr,
                &mut len,
            );
            (fd, u16::from_be(addr.sin_port))
        };
        let clients: Vec<_> = (0..3)
            .map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).unwrap())
            .collect();
        let path = std::env::temp_dir().join(format!("headroom-listen-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let unix = UnixListener::bind(&path).unwrap();
        let unix_clients: Vec<_> = (0..2)
            .map(|_| UnixStream::connect(&path).unwrap())
            .collect();
        let found = listening().unwrap();
        let tcp = found
            .values()
            .find(|q| q.address == format!("127.0.0.1:{port}"))
            .unwrap_or_else(|| panic!("{found:?}"));
        assert_eq!((tcp.queue, tcp.backlog), (3, 7));
        let local = found
            .values()
            .find(|q| q.address == path.to_string_lossy())
            .unwrap_or_else(|| panic!("{found:?}"));
        assert_eq!(local.queue, 2);
        assert!(local.backlog >= 2, "{local:?}");
        let mine = socket_inodes(std::path::Path::new("/proc/self"));
        assert!(found
            .iter()
            .any(|(inode, q)| q.address.ends_with(&format!(":{port}")) && mine.contains(inode)));
        drop((clients, unix_clients, unix));
        let _ = std::fs::remove_file(&path);
        // SAFETY: closes the test's own descriptor.
        unsafe { libc::close(fd) };
    }

    /// A listener with a backlog of 1 that accepts nothing: connections
    /// past its full queue are dropped, and its own drop count says so.
    #[test]
    fn the_kernel_counts_what_a_full_accept_queue_dropped() {
        // SAFETY: plain socket calls on descriptors this test owns.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
            let mut addr: libc::sockaddr_in = std::mem::zeroed();
            addr.sin_family = libc::AF_INET as libc::sa_family_t;
            addr.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
            let size = std::mem::size_of::<libc::sockaddr_in>() as u32;
            let at = &mut addr as *mut libc::sockaddr_in as *mut libc::sockaddr;
            assert_eq!(libc::bind(fd, at, size), 0);
            assert_eq!(libc::listen(fd, 1), 0);
            let mut len = size;
            libc::getsockname(fd, at, &mut len);
            let port = u16::from_be(addr.sin_port);
            let before = listening().unwrap();
            let mine = |found: &BTreeMap<u64, ListenQueue>| {
                found
                    .values()
                    .find(|q| q.address == format!("127.0.0.1:{port}"))
                    .cloned()
                    .unwrap_or_else(|| panic!("{found:?}"))
            };
            assert_eq!(mine(&before).dropped, Some(0));
            let clients: Vec<i32> = (0..6)
                .map(|_| {
                    let c = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_NONBLOCK, 0);
                    libc::connect(c, at, size);
                    c
                })
                .collect();
            std::thread::sleep(std::time::Duration::from_millis(100));
            let after = mine(&listening().unwrap());
            assert!(after.queue <= 2, "{after:?}");
            assert!(after.dropped.unwrap() >= 3, "{after:?}");
            for c in clients {
                libc::close(c);
            }
            libc::close(fd);
        }
    }

    #[test]
    fn attributes_stop_at_a_bad_length() {
        let bytes = [8u8, 0, 4, 0, 1, 0, 0, 0, 99, 0, 0, 0];
        let found = attributes(&bytes);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, 4);
        assert!(attributes(&[1, 0]).is_empty());
    }
}
