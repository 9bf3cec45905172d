//! Serving the site on a TCP listener until a shutdown signal.

use crate::pages;
use crate::site::Site;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;

/// Binds the address; a port in use is a clear error.
pub async fn bind(listen: &str) -> io::Result<TcpListener> {
    TcpListener::bind(listen).await.map_err(|e| {
        let hint = if e.kind() == io::ErrorKind::AddrInUse {
            " (another program listens there: pick another --listen port)"
        } else {
            ""
        };
        io::Error::new(e.kind(), format!("cannot listen on {listen}: {e}{hint}"))
    })
}

/// Serves until `shutdown` completes; requests in progress are finished.
pub async fn serve(
    site: Arc<Site>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, pages::router(site))
        .with_graceful_shutdown(shutdown)
        .await
}

/// The address a listener got (for `--listen 127.0.0.1:0`).
pub fn local_addr(listener: &TcpListener) -> io::Result<SocketAddr> {
    listener.local_addr()
}
