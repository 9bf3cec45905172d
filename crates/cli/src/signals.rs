//! Ctrl-C, SIGTERM and SIGHUP: the first stops the run cleanly (the bundle
//! is flushed and marked interrupted); a second one exits at once. Signals
//! are watched on a thread of their own, so they work whatever the run's
//! threads are doing (waiting on a stalled agent, writing a full disk).

use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::oneshot;

/// Returns a receiver that fires on the first SIGINT, SIGTERM or SIGHUP.
pub fn interrupt_on_signal() -> oneshot::Receiver<()> {
    let (first, receiver) = oneshot::channel();
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
    else {
        return receiver;
    };
    // Registered before returning, so a signal that comes at once is caught.
    let registered = {
        let _context = runtime.enter();
        [
            SignalKind::interrupt(),
            SignalKind::terminate(),
            SignalKind::hangup(),
        ]
        .into_iter()
        .map(signal)
        .collect::<Result<Vec<Signal>, _>>()
    };
    let Ok(mut signals) = registered else {
        return receiver;
    };
    let watcher = move || {
        runtime.block_on(async move {
            any(&mut signals).await;
            let _ = first.send(());
            eprintln!("\nheadroom: stopping (press Ctrl-C again to quit at once)");
            any(&mut signals).await;
            eprintln!("headroom: quit; the bundle holds the data up to the last full second");
            std::process::exit(130);
        });
    };
    let _ = std::thread::Builder::new()
        .name("headroom-signals".into())
        .spawn(watcher);
    receiver
}

async fn any(signals: &mut [Signal]) {
    let [int, term, hup] = signals else {
        return;
    };
    tokio::select! {
        _ = int.recv() => {}
        _ = term.recv() => {}
        _ = hup.recv() => {}
    }
}
