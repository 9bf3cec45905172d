//! Disk and cached reads as `hdparm -tT` times them, and as `hdparm -tT
//! --direct` does: PiBenchmarks' storage script runs the latter, and 000's
//! Table 5 gives its two figures beside dd, fio and iozone ("HDParm disk
//! read", "cached disk read": 40.92 and 40.55 MB/s for an SD card, since
//! with O_DIRECT the "cached" reads come from the drive's own cache).
//!
//! | figure | `hdparm` | here |
//! |---|---|---|
//! | cached read | `-T`: the device's first 2 MiB read once, then again and again from the page cache for 2 s, the seeks' time taken out | the same, each read at offset 0 with `pread` (no seek to take out) |
//! | disk read | `-t`: the device's cached pages dropped (`BLKFLSBUF`), then 2 MiB reads in sequence from its start through the page cache (with its read-ahead) for 3 s, or to the device's end | the same; on a file instead of a device, its pages dropped with fsync and `POSIX_FADV_DONTNEED` |
//!
//! After each read every 512th byte of the buffer is touched, as hdparm
//! does. With `--direct` every read bypasses the page cache (O_DIRECT, an
//! aligned buffer). Before each figure, as hdparm: everything synced, the
//! cache dropped, a pause of 1 s. The figures are MiB (2^20 bytes) a second, which hdparm
//! prints as "MB/sec".

use crate::aio::AlignedBuf;
use crate::storage::{check_path, Scratch};
use crate::{check, io_error, measure, settings, sleep_unless, BenchError, BenchResult, Measure};
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// hdparm's read size for both figures (`TIMING_BUF_MB`).
pub const BLOCK: usize = 2 << 20;
/// hdparm -T's time.
pub const CACHED_SECONDS: f64 = 2.0;
/// hdparm -t's time.
pub const DISK_SECONDS: f64 = 3.0;
/// `BLKFLSBUF`, `_IO(0x12, 97)`: a block device's buffers written and
/// dropped (`libc::Ioctl`: an unsigned long on glibc, an int on musl).
const BLKFLSBUF: libc::Ioctl = 0x1261;

#[derive(Debug, Clone)]
pub struct ReadsOptions {
    /// A block device to read, as hdparm is given one (read only; needs
    /// root); without one, a file of `file_mib` under `path`.
    pub device: Option<PathBuf>,
    pub path: PathBuf,
    pub file_mib: u64,
    pub repetitions: u32,
}

/// What is read: a block device or a file written for the test, opened
/// through the page cache or with O_DIRECT.
struct Source {
    file: File,
    path: PathBuf,
    device: bool,
    bytes: u64,
}

impl Source {
    fn open(o: &ReadsOptions, scratch: &mut Scratch) -> Result<Source, BenchError> {
        if let Some(dev) = &o.device {
            let file = File::open(dev).map_err(|e| {
                if e.kind() == std::io::ErrorKind::PermissionDenied {
                    BenchError::Refused(format!(
                        "cannot read {}: permission denied. Reading a device as hdparm does needs root \
                         (sudo), or leave --device out to read a file under --path",
                        dev.display()
                    ))
                } else {
                    BenchError::Io {
                        what: format!("cannot open {}", dev.display()),
                        source: e,
                    }
                }
            })?;
            let meta = file
                .metadata()
                .map_err(io_error(format!("cannot read {}", dev.display())))?;
            if !meta.file_type().is_block_device() {
                return Err(BenchError::Refused(format!(
                    "--device {}: not a block device (hdparm times devices such as /dev/sda or \
                     /dev/mmcblk0); to read a file, leave --device out and give --path its directory",
                    dev.display()
                )));
            }
            // A block device's end is its size (as BLKGETSIZE64 gives it).
            let bytes = (&file).seek(SeekFrom::End(0)).map_err(io_error(format!(
                "cannot read the size of {}",
                dev.display()
            )))?;
            return Source::sized(file, true, bytes, dev);
        }
        let bytes = o.file_mib << 20;
        check_path(&o.path, bytes + (64 << 20))?;
        let path = scratch.file(&o.path, "reads");
        crate::storage::lay_out(&path, bytes)?;
        let file =
            File::open(&path).map_err(io_error(format!("cannot open {}", path.display())))?;
        Source::sized(file, false, bytes, &path)
    }

    fn sized(file: File, device: bool, bytes: u64, name: &Path) -> Result<Source, BenchError> {
        if bytes < BLOCK as u64 {
            return Err(BenchError::Refused(format!(
                "{} holds {} KiB, less than hdparm's 2 MiB read",
                name.display(),
                bytes >> 10
            )));
        }
        Ok(Source {
            file,
            path: name.to_path_buf(),
            device,
            bytes,
        })
    }

    /// Its file as hdparm opens it: through the page cache, or with
    /// O_DIRECT (`--direct`).
    fn reader(&self, direct: bool) -> Result<File, BenchError> {
        if !direct {
            return self
                .file
                .try_clone()
                .map_err(io_error(format!("cannot open {}", self.path.display())));
        }
        OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(&self.path)
            .map_err(|e| {
                if e.raw_os_error() == Some(libc::EINVAL) {
                    BenchError::Refused(format!(
                        "{} cannot be read with O_DIRECT (hdparm --direct): give --path a directory on \
                         a disk filesystem (ext4, xfs, btrfs, f2fs), or --device",
                        self.path.display()
                    ))
                } else {
                    BenchError::Io {
                        what: format!("cannot open {} with O_DIRECT", self.path.display()),
                        source: e,
                    }
                }
            })
    }

    /// Everything synced and this source's cached pages dropped, then a
    /// pause of 1 s (hdparm's `sync_and_sleep` and `flush_buffer_cache`).
    fn settle(&self, stop: &AtomicBool) -> Result<(), BenchError> {
        // SAFETY: sync takes no arguments; the descriptor is valid.
        unsafe { libc::sync() };
        let fd = self.file.as_raw_fd();
        if self.device {
            // SAFETY: a valid descriptor of a block device.
            if unsafe { libc::ioctl(fd, BLKFLSBUF, 0) } != 0 {
                return Err(BenchError::Io {
                    what: "cannot drop the device's cached pages (BLKFLSBUF)".into(),
                    source: std::io::Error::last_os_error(),
                });
            }
        } else {
            let _ = self.file.sync_all();
            // SAFETY: a valid descriptor; advice only.
            unsafe { libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED) };
        }
        if sleep_unless(stop, Duration::from_secs(1)) {
            Ok(())
        } else {
            Err(BenchError::Interrupted)
        }
    }
}

/// hdparm -T: the first 2 MiB read once (into the cache, or the drive's
/// with O_DIRECT), then again and again for `seconds`; MiB/s.
fn cached_read(file: &File, seconds: f64, stop: &AtomicBool) -> Result<f64, BenchError> {
    let mut buf = AlignedBuf::new(BLOCK);
    let mut read = || {
        file.read_exact_at(buf.as_mut_slice(), 0)
            .map_err(io_error("cached read"))?;
        touch(buf.as_mut_slice());
        Ok::<_, BenchError>(())
    };
    read()?;
    let started = Instant::now();
    let mut reads = 0u64;
    while started.elapsed().as_secs_f64() < seconds {
        read()?;
        reads += 1;
        if reads.is_multiple_of(64) {
            check(stop)?;
        }
    }
    Ok(mib_per_s(reads * BLOCK as u64, started.elapsed()))
}

/// hdparm -t: 2 MiB reads in sequence from the start for `seconds` or to
/// the end of `bytes`; MiB/s.
fn disk_read(file: &File, bytes: u64, seconds: f64, stop: &AtomicBool) -> Result<f64, BenchError> {
    let mut buf = AlignedBuf::new(BLOCK);
    let whole = bytes / BLOCK as u64;
    let mut offset = 0u64;
    let started = Instant::now();
    while offset / (BLOCK as u64) < whole && started.elapsed().as_secs_f64() < seconds {
        file.read_exact_at(buf.as_mut_slice(), offset)
            .map_err(io_error("disk read"))?;
        touch(buf.as_mut_slice());
        offset += BLOCK as u64;
        check(stop)?;
    }
    Ok(mib_per_s(offset, started.elapsed()))
}

/// As hdparm after each read: every 512th byte of the buffer touched, "to
/// ensure the read fully completed" (part of the figure's cost).
fn touch(buf: &mut [u8]) {
    for i in (0..buf.len()).step_by(512) {
        buf[i] &= 1;
    }
    std::hint::black_box(buf);
}

fn mib_per_s(bytes: u64, took: Duration) -> f64 {
    bytes as f64 / f64::from(1u32 << 20) / took.as_secs_f64().max(1e-9)
}

pub fn run(o: &ReadsOptions, stop: &AtomicBool) -> Result<BenchResult, BenchError> {
    let mut scratch = Scratch::default();
    let source = Source::open(o, &mut scratch)?;
    // hdparm -tT, then hdparm -tT --direct (PiBenchmarks' and 000's).
    let mut measures: Vec<(bool, Measure, Measure)> = [false, true]
        .into_iter()
        .map(|direct| {
            let (key, name, flag) = if direct {
                ("direct_", "O_DIRECT ", " --direct")
            } else {
                ("", "", "")
            };
            (
                direct,
                measure(
                    &format!("{key}cached_read"),
                    format!("{name}cached read (hdparm -T{flag})"),
                    "MiB/s",
                    true,
                ),
                measure(
                    &format!("{key}disk_read"),
                    format!("{name}disk read (hdparm -t{flag})"),
                    "MiB/s",
                    true,
                ),
            )
        })
        .collect();
    for _ in 0..o.repetitions.max(1) {
        for (direct, cached, disk) in &mut measures {
            let file = source.reader(*direct)?;
            source.settle(stop)?;
            cached
                .values
                .push(cached_read(&file, CACHED_SECONDS, stop)?);
            source.settle(stop)?;
            disk.values
                .push(disk_read(&file, source.bytes, DISK_SECONDS, stop)?);
        }
    }
    let what = match &o.device {
        Some(d) => d.display().to_string(),
        None => o.path.display().to_string(),
    };
    let mut s = settings([
        ("block_mib", "2".to_string()),
        ("cached_seconds", CACHED_SECONDS.to_string()),
        ("disk_seconds", DISK_SECONDS.to_string()),
        ("size_mib", (source.bytes >> 20).to_string()),
        ("repetitions", o.repetitions.to_string()),
    ]);
    let mut notes = Vec::new();
    match &o.device {
        Some(d) => {
            s.insert("device".into(), d.display().to_string());
        }
        None => {
            s.insert("path".into(), what.clone());
            if let Some(d) = headroom_monitor::fingerprint::storage_at(&o.path) {
                s.insert("device".into(), d.device);
                s.insert("filesystem".into(), d.filesystem);
            }
            notes.push(format!(
                "read from a file of {} MiB under {what} rather than the device itself: the \
                 filesystem's read-ahead may differ from the device's; give --device (as root) \
                 for hdparm's exact figure",
                o.file_mib
            ));
        }
    }
    drop(source);
    drop(scratch);
    Ok(BenchResult {
        benchmark: "reads".into(),
        method: format!(
            "hdparm -tT's timings of {what}, then hdparm -tT --direct's (PiBenchmarks'): after a sync, \
             the cached pages dropped and 1 s of quiet, the first 2 MiB read again and again for \
             {CACHED_SECONDS} s (-T), then 2 MiB reads in sequence from the start for {DISK_SECONDS} s or \
             to the end (-t), through the page cache, then with O_DIRECT; MiB/s (2^20 bytes; hdparm \
             prints them as MB/sec)"
        ),
        settings: s,
        measures: measures
            .into_iter()
            .flat_map(|(_, cached, disk)| [cached, disk])
            .collect(),
        series: Vec::new(),
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(dir: &Path, mib: u64) -> ReadsOptions {
        ReadsOptions {
            device: None,
            path: dir.to_path_buf(),
            file_mib: mib,
            repetitions: 1,
        }
    }

    #[test]
    fn a_file_is_read_to_its_end_and_removed() {
        let dir = std::env::temp_dir().join(format!("headroom-reads-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let stop = AtomicBool::new(false);
        let mut scratch = Scratch::default();
        let source = Source::open(&options(&dir, 8), &mut scratch).unwrap();
        assert_eq!(source.bytes, 8 << 20);
        // Read to its end well before 3 s: 8 MiB over the time taken.
        for direct in [false, true] {
            let file = source.reader(direct).unwrap();
            assert!(disk_read(&file, source.bytes, 3.0, &stop).unwrap() > 0.0);
            assert!(cached_read(&file, 0.05, &stop).unwrap() > 0.0);
        }
        drop(source);
        drop(scratch);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn what_cannot_be_read_as_hdparm_does_is_refused() {
        let stop = AtomicBool::new(false);
        let mut o = options(Path::new("/tmp"), 1);
        o.device = Some(PathBuf::from("/etc/passwd"));
        let e = run(&o, &stop).unwrap_err().to_string();
        assert!(e.contains("not a block device"), "{e}");
        let dir = std::env::temp_dir().join(format!("headroom-reads-small-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = run(&options(&dir, 1), &stop).unwrap_err().to_string();
        assert!(e.contains("less than hdparm's 2 MiB read"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
