//! A server of known capacity: WORKERS workers, each request holds one for
//! HOLD_MS milliseconds and waits for a free one first (php-fpm's
//! pm.max_children). The capacity tests' queueing model, as a process.
//! Usage: pool-server PORT WORKERS HOLD_MS

use headroom_testbed::scripted::{Reply, ScriptedServer};
use std::net::SocketAddr;
use std::time::Duration;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut next = |default: u64| {
        args.next()
            .and_then(|a| a.parse::<u64>().ok())
            .unwrap_or(default)
    };
    let (port, workers, hold) = (next(8092) as u16, next(4) as usize, next(100));
    let hold = Duration::from_millis(hold);
    let _server = ScriptedServer::bind(
        SocketAddr::from(([127, 0, 0, 1], port)),
        Some(workers),
        move |_| Reply {
            delay: hold,
            body: 2,
            ..Reply::default()
        },
    )
    .expect("bind the port");
    loop {
        std::thread::park();
    }
}
