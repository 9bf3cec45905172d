//! Random 4 KiB direct I/O at a queue depth, as fio's `libaio` engine does
//! it: the kernel's native asynchronous I/O (io_setup, io_submit,
//! io_getevents) called directly, keeping `depth` requests in flight.
//! Where the kernel refuses native AIO (a container's seccomp filter, a
//! full aio-max-nr), `depth` threads each doing one synchronous request at
//! a time keep the same number in flight.

use headroom_units::rng::Rng;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub const BLOCK: usize = 4096;

/// A buffer aligned for O_DIRECT: `len` bytes at the start of whole
/// pages of their own.
pub struct AlignedBuf {
    ptr: *mut u8,
    /// The bytes a request moves: a 1 KiB block is a 1 KiB request,
    /// however many bytes the allocation holds.
    len: usize,
    layout: Layout,
}

// The buffer is plain memory owned by one value.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    pub fn new(len: usize) -> AlignedBuf {
        let size = len.max(1).next_multiple_of(BLOCK);
        let layout = Layout::from_size_align(size, BLOCK).expect("valid layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, len, layout }
    }

    /// A buffer of pseudo-random bytes from `seed`: data a compressing or
    /// deduplicating device cannot shrink, as fio writes by default. A
    /// constant byte let such a disk (or a virtual disk's host) write less
    /// than it was given, and the figure was not the device's.
    pub fn random(len: usize, seed: u64) -> AlignedBuf {
        let mut buf = AlignedBuf::new(len);
        fill_random(buf.as_mut_slice(), seed);
        buf
    }

    /// The buffer's `len` bytes (not the rest of its last page).
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for layout.size() >= len bytes for self's
        // lifetime.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in new().
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// The kernel's `struct iocb` (little- and big-endian layouts differ only in
/// the order of the key and flags words, both zero here).
#[repr(C)]
#[derive(Default)]
struct Iocb {
    data: u64,
    key: u32,
    rw_flags: u32,
    opcode: u16,
    reqprio: i16,
    fildes: u32,
    buf: u64,
    nbytes: u64,
    offset: i64,
    reserved2: u64,
    flags: u32,
    resfd: u32,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Read,
    Write,
}

/// How the requests were kept in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AioEngine {
    NativeAio,
    Threads,
}

/// Does one 4 KiB request at each block offset of `blocks` (in that order
/// of submission) with `depth` in flight; returns the engine used and the
/// time from the first submission to the last completion (as fio times a
/// job: without setting up and tearing down the context).
pub fn random_io(
    fd: RawFd,
    blocks: &[u64],
    direction: Direction,
    depth: usize,
) -> io::Result<(AioEngine, Duration)> {
    match native(fd, blocks, direction, depth) {
        Ok(took) => Ok((AioEngine::NativeAio, took)),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::ENOSYS | libc::EAGAIN | libc::EPERM)
            ) =>
        {
            threads(fd, blocks, direction, depth).map(|took| (AioEngine::Threads, took))
        }
        Err(e) => Err(e),
    }
}

fn native(fd: RawFd, blocks: &[u64], direction: Direction, depth: usize) -> io::Result<Duration> {
    let depth = depth.clamp(1, 1024).min(blocks.len().max(1));
    let buffers: Vec<AlignedBuf> = (0..depth)
        .map(|i| AlignedBuf::random(BLOCK, i as u64))
        .collect();
    let mut iocbs: Vec<Iocb> = (0..depth).map(|_| Iocb::default()).collect();
    // Declared after the buffers and requests so that it is dropped first:
    // io_destroy waits for requests in flight before their memory goes.
    let context = Context::setup(depth)?;
    let opcode = match direction {
        Direction::Read => IOCB_CMD_PREAD,
        Direction::Write => IOCB_CMD_PWRITE,
    };
    let mut next = 0usize;
    let mut done = 0usize;
    let mut free: Vec<usize> = (0..depth).collect();
    let mut events = vec![IoEvent::default(); depth];
    let started = Instant::now();
    while done < blocks.len() {
        // Fill every free slot, one request per io_submit as fio does by
        // default (iodepth_batch_submit=1): a large batch takes the kernel
        // long enough that completions pile up and the queue drains in
        // bursts instead of staying full.
        while let (Some(slot), true) = (free.last().copied(), next < blocks.len()) {
            iocbs[slot] = Iocb {
                data: slot as u64,
                opcode,
                fildes: fd as u32,
                buf: buffers[slot].as_ptr() as u64,
                nbytes: BLOCK as u64,
                offset: (blocks[next] * BLOCK as u64) as i64,
                ..Iocb::default()
            };
            let n = context.submit(&mut iocbs[slot]);
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                // Requests already submitted finish before io_destroy returns.
                return Err(e);
            }
            if n == 1 {
                free.pop();
                next += 1;
            }
        }
        // One completion at a time, then its slot refilled at once, as fio's
        // loop goes: reaping many at once lets the queue drain while they
        // are resubmitted one by one, and the device sees less than `depth`.
        let n = context.reap_one(&mut events);
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        for event in &events[..n as usize] {
            event.moved_a_block()?;
            free.push(event.data as usize);
            done += 1;
        }
    }
    Ok(started.elapsed())
}

/// A kernel AIO context, destroyed when dropped.
struct Context(u64);

impl Context {
    /// Sets up a context for `depth` requests in flight.
    fn setup(depth: usize) -> io::Result<Context> {
        let mut ctx: u64 = 0;
        // SAFETY: io_setup writes the context id to ctx.
        if unsafe {
            libc::syscall(
                libc::SYS_io_setup,
                depth as libc::c_long,
                &mut ctx as *mut u64,
            )
        } < 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(Context(ctx))
    }

    /// Submits one request: io_submit's result (1 when submitted, below
    /// 0 on an error, in errno). The iocb and its buffer must live until
    /// its event is reaped.
    #[inline]
    fn submit(&self, iocb: &mut Iocb) -> libc::c_long {
        let mut one = [iocb as *mut Iocb];
        // SAFETY: the iocb and its buffer live until its event is reaped.
        unsafe {
            libc::syscall(
                libc::SYS_io_submit,
                self.0,
                1 as libc::c_long,
                one.as_mut_ptr(),
            )
        }
    }

    /// Waits for one completion into `events`: io_getevents's result
    /// (the events reaped, below 0 on an error, in errno).
    #[inline]
    fn reap_one(&self, events: &mut [IoEvent]) -> libc::c_long {
        // SAFETY: events has room for one entry at least.
        unsafe {
            libc::syscall(
                libc::SYS_io_getevents,
                self.0,
                1 as libc::c_long,
                1 as libc::c_long,
                events.as_mut_ptr(),
                std::ptr::null_mut::<libc::timespec>(),
            )
        }
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: the context was set up and no request is in flight once dropped
        // (io_destroy waits for outstanding requests).
        unsafe { libc::syscall(libc::SYS_io_destroy, self.0) };
    }
}

impl IoEvent {
    /// Its request's error, or that it moved less than a block.
    #[inline]
    fn moved_a_block(&self) -> io::Result<()> {
        if self.res < 0 {
            return Err(io::Error::from_raw_os_error((-self.res) as i32));
        }
        if self.res as usize != BLOCK {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("a 4 KiB request moved {} bytes", self.res),
            ));
        }
        Ok(())
    }
}

fn threads(fd: RawFd, blocks: &[u64], direction: Direction, depth: usize) -> io::Result<Duration> {
    let next = AtomicUsize::new(0);
    let started = Instant::now();
    let failed: std::sync::Mutex<Option<io::Error>> = std::sync::Mutex::new(None);
    std::thread::scope(|scope| {
        for thread in 0..depth.clamp(1, 256) {
            let next = &next;
            let failed = &failed;
            scope.spawn(move || {
                let buf = AlignedBuf::random(BLOCK, thread as u64);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&block) = blocks.get(i) else { break };
                    let offset = (block * BLOCK as u64) as libc::off_t;
                    // SAFETY: buf is valid for BLOCK bytes.
                    let n = unsafe {
                        match direction {
                            Direction::Read => libc::pread(fd, buf.as_ptr().cast(), BLOCK, offset),
                            Direction::Write => {
                                libc::pwrite(fd, buf.as_ptr().cast(), BLOCK, offset)
                            }
                        }
                    };
                    if n != BLOCK as isize {
                        let e = if n < 0 {
                            io::Error::last_os_error()
                        } else {
                            io::Error::new(io::ErrorKind::UnexpectedEof, "short request")
                        };
                        *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                        next.store(blocks.len(), Ordering::Relaxed);
                        break;
                    }
                }
            });
        }
    });
    let took = started.elapsed();
    match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(took),
    }
}

/// Fills `bytes` with pseudo-random bytes from `seed` (SplitMix64).
pub fn fill_random(bytes: &mut [u8], seed: u64) {
    let mut rng = Rng::new(seed, 0xb10c);
    for word in bytes.chunks_mut(8) {
        let r = rng.next_u64().to_le_bytes();
        word.copy_from_slice(&r[..word.len()]);
    }
}

/// The block numbers 0..count in a shuffled order (each once, as fio's
/// random map does), from a fixed seed so every run does the same.
pub fn shuffled(count: u64, seed: u64) -> Vec<u64> {
    let mut blocks: Vec<u64> = (0..count).collect();
    let mut state = seed | 1;
    for i in (1..blocks.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        blocks.swap(i, (state % (i as u64 + 1)) as usize);
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// Finding 4 of adversary-3: a 1 KiB buffer was a 4 KiB slice, so a
    /// 1 KiB block was a 4 KiB request.
    #[test]
    fn a_buffer_is_as_long_as_asked_and_page_aligned() {
        for len in [512, 1024, 3072, 4096, 8192, 1 << 20] {
            let mut buf = AlignedBuf::random(len, 1);
            assert_eq!(buf.as_mut_slice().len(), len);
            assert_eq!(buf.as_ptr() as usize % BLOCK, 0, "{len}");
        }
    }

    /// Deflate at its best level keeps at least 99% of the bytes (a
    /// compressing device works block by block: each block is asked).
    fn incompressible(bytes: &[u8]) -> bool {
        use std::io::Write;
        let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(bytes).unwrap();
        let packed = z.finish().unwrap().len();
        packed as f64 >= 0.99 * bytes.len() as f64
    }

    #[test]
    fn written_data_does_not_compress() {
        let mut bytes = vec![0u8; 1 << 16];
        fill_random(&mut bytes, 1);
        assert!(incompressible(&bytes));
        assert!(!incompressible(&vec![0x5au8; 1 << 16]));
        let mut other = vec![0u8; 1 << 16];
        fill_random(&mut other, 2);
        assert_ne!(bytes, other, "each seed its own data");
    }

    #[test]
    fn shuffled_blocks_are_each_block_once() {
        let mut b = shuffled(1000, 7);
        assert_ne!(b, (0..1000).collect::<Vec<_>>());
        b.sort();
        assert_eq!(b, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn both_engines_write_and_read_every_block() {
        let path = std::env::temp_dir().join(format!("headroom-aio-{}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        file.set_len(256 * BLOCK as u64).unwrap();
        let fd = file.as_raw_fd();
        let blocks = shuffled(256, 3);
        let (engine, _) = random_io(fd, &blocks, Direction::Write, 64).unwrap();
        assert_eq!(
            engine,
            AioEngine::NativeAio,
            "this kernel offers native AIO"
        );
        let written = std::fs::read(&path).unwrap();
        assert!(
            written.chunks(BLOCK).all(|b| b.iter().any(|x| *x != 0)),
            "every block was written"
        );
        assert!(written.chunks(BLOCK).all(incompressible));
        random_io(fd, &blocks, Direction::Read, 64).unwrap();
        std::fs::write(&path, vec![0u8; 256 * BLOCK]).unwrap();
        threads(fd, &blocks, Direction::Write, 8).unwrap();
        let written = std::fs::read(&path).unwrap();
        assert!(written.chunks(BLOCK).all(|b| b.iter().any(|x| *x != 0)));
        assert!(written.chunks(BLOCK).all(incompressible));
        // Past the end: a short read is an error, not a figure.
        let beyond = [1000u64];
        assert!(random_io(fd, &beyond, Direction::Read, 1).is_err());
        let _ = std::fs::remove_file(&path);
    }
}
