//! Ctrl-C and SIGTERM: the first stops the run cleanly (the bundle is
//! flushed and marked interrupted); a second one exits at once.

use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::oneshot;

/// Returns a receiver that fires on the first SIGINT or SIGTERM. Must be
/// called inside a tokio runtime.
pub fn interrupt_on_signal() -> oneshot::Receiver<()> {
    let (first, receiver) = oneshot::channel();
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return receiver;
    };
    tokio::spawn(async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        let _ = first.send(());
        eprintln!("\nheadroom: stopping (press Ctrl-C again to quit at once)");
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        eprintln!("headroom: quit; the bundle holds the data up to the last full second");
        std::process::exit(130);
    });
    receiver
}
