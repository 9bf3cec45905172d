//! A worker-local timer with microsecond precision for the schedule (open
//! model arrivals and throughput-cap slots). tokio's timer rounds deadlines
//! up to whole milliseconds, which would add 0–1 ms to every scheduled
//! request's response time; a Linux timerfd wakes within tens of µs.
//!
//! The timer belongs to one worker thread: waiting VUs sit in a heap of
//! (deadline, waker) reserved up front, and one driver task arms the timerfd
//! for the earliest deadline and wakes whoever is due.

use std::cell::{Cell, RefCell};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::future::Future;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};
use tokio::io::unix::AsyncFd;

struct Entry {
    deadline: Instant,
    sequence: u64,
    waker: Waker,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.deadline, self.sequence) == (other.deadline, other.sequence)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.deadline, self.sequence).cmp(&(other.deadline, other.sequence))
    }
}

pub struct PreciseTimer {
    fd: AsyncFd<OwnedFd>,
    waiting: RefCell<BinaryHeap<Reverse<Entry>>>,
    armed_for: Cell<Option<Instant>>,
    sequence: Cell<u64>,
}

impl PreciseTimer {
    /// A timer for the calling worker thread; `capacity` is the most VUs
    /// expected to wait at once (the heap grows beyond it if needed).
    /// Must be called inside a tokio runtime.
    pub fn new(capacity: usize) -> io::Result<Rc<PreciseTimer>> {
        // SAFETY: timerfd_create returns a new descriptor or -1.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a descriptor we just created and own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: an OwnedFd keeps its descriptor open and unchanged for as
        // long as the AsyncFd owns it.
        // A timerfd is only ever readable.
        let fd = unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
            .map_err(io::Error::from)?;
        Ok(Rc::new(PreciseTimer {
            fd,
            waiting: RefCell::new(BinaryHeap::with_capacity(capacity)),
            armed_for: Cell::new(None),
            sequence: Cell::new(0),
        }))
    }

    /// Waits until `deadline` (returns at once when it has passed).
    pub fn sleep_until(self: &Rc<Self>, deadline: Instant) -> PreciseSleep {
        PreciseSleep {
            timer: self.clone(),
            deadline,
            registered: false,
        }
    }

    fn register(&self, deadline: Instant, waker: Waker) {
        let sequence = self.sequence.get();
        self.sequence.set(sequence + 1);
        self.waiting.borrow_mut().push(Reverse(Entry {
            deadline,
            sequence,
            waker,
        }));
        if self.armed_for.get().is_none_or(|armed| deadline < armed) {
            self.arm(deadline);
        }
    }

    fn arm(&self, deadline: Instant) {
        let wait = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_nanos(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: wait.as_secs() as _,
                tv_nsec: wait.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: the descriptor is ours and `spec` is a valid itimerspec.
        unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        self.armed_for.set(Some(deadline));
    }

    /// Runs for the worker's lifetime: wakes due sleepers and re-arms.
    pub async fn drive(self: Rc<Self>) {
        let mut expirations = [0u8; 8];
        loop {
            let Ok(mut guard) = self.fd.readable().await else {
                return;
            };
            // SAFETY: reading 8 bytes into our buffer from our descriptor.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), expirations.as_mut_ptr().cast(), 8) };
            if n < 0 {
                guard.clear_ready();
                if io::Error::last_os_error().kind() != io::ErrorKind::WouldBlock {
                    return;
                }
                continue;
            }
            self.armed_for.set(None);
            let now = Instant::now();
            let mut waiting = self.waiting.borrow_mut();
            while waiting.peek().is_some_and(|Reverse(e)| e.deadline <= now) {
                if let Some(Reverse(entry)) = waiting.pop() {
                    entry.waker.wake();
                }
            }
            let next = waiting.peek().map(|Reverse(e)| e.deadline);
            drop(waiting);
            if let Some(next) = next {
                self.arm(next);
            }
        }
    }
}

pub struct PreciseSleep {
    timer: Rc<PreciseTimer>,
    deadline: Instant,
    registered: bool,
}

impl Future for PreciseSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.deadline {
            return Poll::Ready(());
        }
        if !self.registered {
            self.registered = true;
            self.timer.register(self.deadline, cx.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wakes_in_deadline_order_never_early() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        local.block_on(&runtime, async {
            let timer = PreciseTimer::new(16).unwrap();
            tokio::task::spawn_local(timer.clone().drive());
            let start = Instant::now();
            let order = Rc::new(RefCell::new(Vec::new()));
            let mut tasks = Vec::new();
            for (i, micros) in [(0, 3_300u64), (1, 1_700), (2, 2_500)] {
                let timer = timer.clone();
                let order = order.clone();
                tasks.push(tokio::task::spawn_local(async move {
                    let deadline = start + Duration::from_micros(micros);
                    timer.sleep_until(deadline).await;
                    assert!(Instant::now() >= deadline, "woke early");
                    order.borrow_mut().push(i);
                }));
            }
            for task in tasks {
                task.await.unwrap();
            }
            // Lateness is measured by bench/footprint, not here: machines are noisy.
            assert_eq!(*order.borrow(), vec![1, 2, 0]);
            let past = start - Duration::from_millis(1);
            timer.sleep_until(past).await;
        });
    }
}
