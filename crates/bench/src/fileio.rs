//! Sequential file I/O at block sizes, as 002 measured a microSD card with
//! `sysbench fileio`: `--file-extra-flags=direct --file-test-mode=seqrd`
//! (and `seqwr`), one thread, `--file-block-size` from 1 KiB to 2 MiB,
//! `--time=20` each, over 32 files of 2 GiB in all.
//!
//! As sysbench does it: the files are written first (prepare); each
//! request reads (or writes) the next block of the current file with
//! O_DIRECT, going on to the next file at a file's end and back to the
//! first after the last; every 100 writes (sysbench's `--file-fsync-freq`)
//! and at the end every file is fsynced, as sysbench does; the
//! figure is MiB (2^20 bytes) a second over the time the requests took.
//! A write run is sysbench's "sequential write (creation)": its files
//! start empty and each write extends one (until a file is whole, then
//! the next; after the last, the first is written over); a read run after
//! it finds its files whole again, extended as sysbench's prepare does.

use crate::aio::AlignedBuf;
use crate::storage::{check_path, open_direct, Scratch};
use crate::{check, io_error, measure, settings, BenchError, BenchResult, Measure, Series};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// sysbench's `--file-fsync-freq`: an fsync every this many writes.
pub const FSYNC_EVERY: u64 = 100;

/// 002's block sizes, KiB.
pub const BLOCKS_002_KIB: [u64; 10] = [1, 2, 8, 32, 64, 128, 256, 512, 1024, 2048];

#[derive(Debug, Clone)]
pub struct FileioOptions {
    /// A directory on the device to measure.
    pub path: PathBuf,
    /// sysbench's `--file-num` (002: 32).
    pub files: u64,
    /// sysbench's `--file-total-size` in MiB (002: 2048).
    pub total_mib: u64,
    /// sysbench's `--file-block-size`s, in KiB (002: 1 to 2048).
    pub blocks_kib: Vec<u64>,
    /// sysbench's `--time` per block size and mode (002: 20 s).
    pub seconds: f64,
    pub repetitions: u32,
}

/// Sequential reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Read,
    Write,
}

/// `1 KiB`, `64 KiB`, `2 MiB`.
pub fn block_name(kib: u64) -> String {
    if kib >= 1024 && kib.is_multiple_of(1024) {
        format!("{} MiB", kib / 1024)
    } else {
        format!("{kib} KiB")
    }
}

/// What one block size's run moved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moved {
    pub requests: u64,
    /// The bytes the requests read or wrote: `block` each.
    pub bytes: u64,
    pub seconds: f64,
}

impl Moved {
    /// MiB (2^20 bytes) a second.
    pub fn mib_per_second(&self) -> f64 {
        self.bytes as f64 / (1u64 << 20) as f64 / self.seconds.max(1e-9)
    }
}

/// Requests of `block` bytes in sequence over `files` of `file_bytes`
/// each for `seconds`.
pub fn sequential(
    files: &[File],
    file_bytes: u64,
    block: usize,
    mode: Mode,
    seconds: f64,
    stop: &AtomicBool,
) -> Result<Moved, BenchError> {
    let mut buf = AlignedBuf::random(block, 0x5eed_f11e);
    let (mut file, mut offset) = (0usize, 0u64);
    let mut moved = Moved {
        requests: 0,
        bytes: 0,
        seconds: 0.0,
    };
    let started = Instant::now();
    while started.elapsed().as_secs_f64() < seconds {
        let f = &files[file];
        let request = buf.as_mut_slice();
        let done = match mode {
            Mode::Read => f.read_exact_at(request, offset),
            Mode::Write => f.write_all_at(request, offset),
        };
        done.map_err(|e| request_refused(e, mode, request.len(), offset))?;
        moved.requests += 1;
        moved.bytes += request.len() as u64;
        if mode == Mode::Write && moved.requests.is_multiple_of(FSYNC_EVERY) {
            // sysbench syncs every file then, not only the one written.
            for f in files {
                f.sync_all().map_err(io_error("fsync"))?;
            }
        }
        offset += block as u64;
        if offset + block as u64 > file_bytes {
            file = (file + 1) % files.len();
            offset = 0;
        }
        if moved.requests.is_multiple_of(256) {
            check(stop)?;
        }
    }
    if mode == Mode::Write {
        for f in files {
            f.sync_all().map_err(io_error("fsync"))?;
        }
    }
    moved.seconds = started.elapsed().as_secs_f64();
    Ok(moved)
}

/// A failed request said with its size: a direct request the filesystem
/// calls invalid is one that is not whole logical blocks of its device.
fn request_refused(e: std::io::Error, mode: Mode, bytes: usize, offset: u64) -> BenchError {
    let what = match mode {
        Mode::Read => "sequential read",
        Mode::Write => "sequential write",
    };
    if e.raw_os_error() == Some(libc::EINVAL) {
        return BenchError::Refused(format!(
            "{what}: the filesystem refused a direct (O_DIRECT) request of {bytes} bytes at offset \
             {offset}: requests must be whole logical blocks of the device, which are larger here; \
             give larger --fileio-blocks (e.g. 4k)"
        ));
    }
    BenchError::Io {
        what: format!("{what} of {bytes} bytes at offset {offset}"),
        source: e,
    }
}

/// The logical block size of the device holding `dir` (the least a direct
/// request can be), from /sys/dev/block; `None` when the directory is on
/// no block device of its own (btrfs, overlay, a network file system).
pub fn logical_block_size(dir: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir).ok()?.dev();
    let sys = PathBuf::from(format!(
        "/sys/dev/block/{}:{}",
        libc::major(dev),
        libc::minor(dev)
    ));
    // A partition's queue is its disk's.
    [sys.join("queue"), sys.join("../queue")]
        .iter()
        .find_map(|queue| {
            std::fs::read_to_string(queue.join("logical_block_size"))
                .ok()?
                .trim()
                .parse()
                .ok()
        })
}

/// Why direct requests of `kib` KiB cannot be made on a device of
/// `logical`-byte blocks; `None` when they can.
pub fn block_refused(kib: u64, logical: u64, dir: &Path) -> Option<String> {
    let bytes = kib << 10;
    if bytes.is_multiple_of(logical) {
        return None;
    }
    let how = if bytes < logical {
        "smaller than"
    } else {
        "not a whole number of"
    };
    Some(format!(
        "a block of {} ({bytes} bytes) is {how} the logical block size of the device holding {} \
         ({logical} bytes): a direct (O_DIRECT) request must be whole logical blocks. Give \
         --fileio-blocks multiples of {} KiB",
        block_name(kib),
        dir.display(),
        (logical >> 10).max(1)
    ))
}

pub fn run(o: &FileioOptions, stop: &AtomicBool) -> Result<BenchResult, BenchError> {
    let files = o.files.max(1);
    // Whole 4 KiB pages, as the files are written.
    let file_bytes = (o.total_mib << 20) / files / 4096 * 4096;
    check_options(o, files, file_bytes)?;
    // prepare: the files written whole, then synced.
    let mut scratch = Scratch::default();
    let open = write_files(o, &mut scratch, files, file_bytes, stop)?;
    let mut measures = block_measures(&o.blocks_kib);
    for _ in 0..o.repetitions.max(1) {
        for (mode, kib, m) in &mut measures {
            let block = (*kib << 10) as usize;
            match mode {
                // seqwr creates its files: they start empty.
                Mode::Write => empty_files(&open, &o.path)?,
                Mode::Read => fill_files(&open, &o.path, file_bytes, stop)?,
            }
            let moved = sequential(&open, file_bytes, block, *mode, o.seconds, stop)?;
            m.values.push(moved.mib_per_second());
        }
    }
    drop(open);
    drop(scratch);
    let series = if o.blocks_kib.len() > 1 {
        vec![
            block_curve(&measures, Mode::Read, "sequential read"),
            block_curve(&measures, Mode::Write, "sequential write"),
        ]
    } else {
        Vec::new()
    };
    Ok(BenchResult {
        benchmark: "fileio".into(),
        method: format!(
            "sysbench fileio's seqrd and seqwr as 002 ran them (--file-extra-flags=direct, one thread): \
             {files} files of {} written first, then for {} s per block size each request the next \
             block of the current file with O_DIRECT, file after file; every {FSYNC_EVERY} writes and at the end \
             every file is fsynced; a write run creates its files (they start empty, as in sysbench's seqwr); \
             MiB/s (2^20 bytes)",
            block_name(file_bytes >> 10),
            o.seconds
        ),
        settings: settings([
            ("files", files.to_string()),
            ("total_mib", o.total_mib.to_string()),
            (
                "blocks_kib",
                o.blocks_kib
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            ("seconds", o.seconds.to_string()),
            ("path", o.path.display().to_string()),
            ("repetitions", o.repetitions.to_string()),
        ]),
        measures: measures.into_iter().map(|(_, _, m)| m).collect(),
        series,
        notes: Vec::new(),
    })
}

/// Refuses block sizes the files or the device cannot take, and a
/// directory without room for the files.
fn check_options(o: &FileioOptions, files: u64, file_bytes: u64) -> Result<(), BenchError> {
    let largest = o.blocks_kib.iter().copied().max().unwrap_or(4) << 10;
    if o.blocks_kib.is_empty() || o.blocks_kib.contains(&0) {
        return Err(BenchError::Refused(
            "fileio needs block sizes of 1 KiB or more (e.g. --fileio-blocks 4k,64k,1m)".into(),
        ));
    }
    if file_bytes < largest {
        return Err(BenchError::Refused(format!(
            "each of the {files} files would hold {} KiB, less than the largest block ({} KiB): \
             give a larger --fileio-size or fewer, smaller blocks",
            file_bytes >> 10,
            largest >> 10
        )));
    }
    if let Some(logical) = logical_block_size(&o.path) {
        if let Some(why) = o
            .blocks_kib
            .iter()
            .find_map(|&kib| block_refused(kib, logical, &o.path))
        {
            return Err(BenchError::Refused(why));
        }
    }
    check_path(&o.path, o.total_mib * (1 << 20) + 64_000_000)
}

/// Writes the `files` files of `file_bytes` whole with O_DIRECT, each
/// synced, and returns them open.
fn write_files(
    o: &FileioOptions,
    scratch: &mut Scratch,
    files: u64,
    file_bytes: u64,
    stop: &AtomicBool,
) -> Result<Vec<File>, BenchError> {
    let mut open = Vec::new();
    for i in 0..files {
        let path = scratch.file(&o.path, &format!("fileio-{i}"));
        open.push(open_direct(&path, true)?);
    }
    fill_files(&open, &o.path, file_bytes, stop)?;
    Ok(open)
}

/// Writes each file from its end (whole pages: a write run leaves each
/// file a whole number of blocks) up to `file_bytes`, each synced.
fn fill_files(
    open: &[File],
    dir: &Path,
    file_bytes: u64,
    stop: &AtomicBool,
) -> Result<(), BenchError> {
    let mut chunk = AlignedBuf::random(1 << 20, 7);
    for f in open {
        let mut written = f.metadata().map_err(io_error("fstat"))?.len() / 4096 * 4096;
        if written >= file_bytes {
            continue;
        }
        while written < file_bytes {
            // Whole pages, as O_DIRECT wants: file_bytes is.
            let n = (file_bytes - written).min(1 << 20) as usize;
            f.write_all_at(&chunk.as_mut_slice()[..n], written)
                .map_err(io_error(format!(
                    "cannot write the test files in {}",
                    dir.display()
                )))?;
            written += n as u64;
        }
        f.sync_all().map_err(io_error("fsync"))?;
        check(stop)?;
    }
    Ok(())
}

/// Empties each file, its blocks given back, as sysbench's seqwr removes
/// and creates its files before it writes them.
fn empty_files(open: &[File], dir: &Path) -> Result<(), BenchError> {
    for f in open {
        f.set_len(0).map_err(io_error(format!(
            "cannot empty the test files in {}",
            dir.display()
        )))?;
        f.sync_all().map_err(io_error("fsync"))?;
    }
    Ok(())
}

/// The figures to measure, each mode at each block size (KiB), none
/// measured yet.
fn block_measures(blocks_kib: &[u64]) -> Vec<(Mode, u64, Measure)> {
    let mut measures: Vec<(Mode, u64, Measure)> = Vec::new();
    for mode in [Mode::Read, Mode::Write] {
        for &kib in blocks_kib {
            let (key, name) = match mode {
                Mode::Read => ("seqrd", "sequential read"),
                Mode::Write => ("seqwr", "sequential write"),
            };
            measures.push((
                mode,
                kib,
                measure(
                    &format!("{key}_{kib}k"),
                    format!("{name}, {} blocks (O_DIRECT)", block_name(kib)),
                    "MiB/s",
                    true,
                ),
            ));
        }
    }
    measures
}

/// The mean MiB/s of `mode` against the block size.
fn block_curve(measures: &[(Mode, u64, Measure)], mode: Mode, name: &str) -> Series {
    Series {
        name: name.into(),
        x_label: "block size (KiB)".into(),
        y_label: "MiB/s".into(),
        points: measures
            .iter()
            .filter(|(m, _, _)| *m == mode)
            .filter_map(|(_, kib, m)| {
                let s = headroom_analysis::experiment::Summary::of(&m.values)?;
                Some((*kib as f64, s.mean))
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_sizes_read_as_002_wrote_them() {
        assert_eq!(block_name(1), "1 KiB");
        assert_eq!(block_name(512), "512 KiB");
        assert_eq!(block_name(2048), "2 MiB");
        assert_eq!(block_name(1536), "1536 KiB");
    }

    /// Finding 4 of adversary-3: a 3 KiB block was a 4 KiB request 3 KiB
    /// after the last (and 1 KiB ones read past a file's end).
    #[test]
    fn each_request_is_one_block_of_its_size() {
        let dir =
            std::env::temp_dir().join(format!("headroom-fileio-requests-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file_bytes = 4 * 3072;
        let files: Vec<File> = (0..2)
            .map(|i| {
                let f = File::options()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(dir.join(format!("f{i}")))
                    .unwrap();
                f.set_len(file_bytes).unwrap();
                f
            })
            .collect();
        let stop = AtomicBool::new(false);
        for mode in [Mode::Read, Mode::Write] {
            let moved = sequential(&files, file_bytes, 3072, mode, 0.2, &stop).unwrap();
            // Past both files' ends at least once.
            assert!(moved.requests >= 8, "{mode:?}: {moved:?}");
            assert_eq!(moved.bytes, moved.requests * 3072, "{mode:?}");
            for f in &files {
                assert_eq!(f.metadata().unwrap().len(), file_bytes, "{mode:?}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn blocks_that_are_not_whole_logical_blocks_are_refused_naming_both() {
        let dir = Path::new("/srv/disk");
        assert_eq!(block_refused(1, 512, dir), None);
        assert_eq!(block_refused(3, 512, dir), None);
        assert_eq!(block_refused(8, 4096, dir), None);
        let why = block_refused(1, 4096, dir).unwrap();
        assert!(
            why.contains("a block of 1 KiB (1024 bytes) is smaller than the logical block size")
                && why.contains("/srv/disk (4096 bytes)")
                && why.contains("multiples of 4 KiB"),
            "{why}"
        );
        let why = block_refused(6, 4096, dir).unwrap();
        assert!(why.contains("is not a whole number of"), "{why}");
    }

    /// 1 KiB and 3 KiB blocks run with O_DIRECT, and files under a MiB
    /// are said in KiB (finding 20: "8 files of 0 MiB").
    #[test]
    fn blocks_under_4_kib_run_and_small_files_are_said_in_kib() {
        let dir = std::env::temp_dir().join(format!("headroom-fileio-1k-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let o = FileioOptions {
            path: dir.clone(),
            files: 8,
            total_mib: 1,
            blocks_kib: vec![1, 3],
            seconds: 0.05,
            repetitions: 1,
        };
        match run(&o, &AtomicBool::new(false)) {
            Ok(r) => {
                assert!(
                    r.method.contains("8 files of 128 KiB written first"),
                    "{}",
                    r.method
                );
                assert!(
                    r.measures.iter().all(|m| m.values[0] > 0.0),
                    "{:?}",
                    r.measures
                );
            }
            Err(BenchError::Refused(why)) if why.contains("tmpfs") || why.contains("O_DIRECT") => {}
            Err(e) => panic!("{e}"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn requests_go_file_after_file_and_writes_sync() {
        let dir = std::env::temp_dir().join(format!("headroom-fileio-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let stop = AtomicBool::new(false);
        let o = FileioOptions {
            path: dir.clone(),
            files: 2,
            total_mib: 2,
            blocks_kib: vec![4, 1024],
            seconds: 0.05,
            repetitions: 2,
        };
        match run(&o, &stop) {
            Ok(r) => {
                assert_eq!(r.measures.len(), 4);
                assert_eq!(r.measures[0].key, "seqrd_4k");
                assert_eq!(
                    r.measures[3].name,
                    "sequential write, 1 MiB blocks (O_DIRECT)"
                );
                assert!(r
                    .measures
                    .iter()
                    .all(|m| m.values.len() == 2 && m.values.iter().all(|v| *v > 0.0)));
                assert_eq!(r.series.len(), 2);
                assert_eq!(r.series[0].points.len(), 2);
            }
            // A temp directory on tmpfs cannot do O_DIRECT: refused, said.
            Err(BenchError::Refused(why)) => {
                assert!(why.contains("tmpfs") || why.contains("O_DIRECT"), "{why}")
            }
            Err(e) => panic!("{e}"),
        }
        // Files left: none.
        let left = std::fs::read_dir(&dir).unwrap().count();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(left, 0);
        // A block larger than a file is refused before anything is written.
        let too_big = FileioOptions {
            blocks_kib: vec![2048],
            ..o.clone()
        };
        assert!(matches!(run(&too_big, &stop), Err(BenchError::Refused(_))));
        let none = FileioOptions {
            blocks_kib: vec![],
            ..o
        };
        assert!(matches!(run(&none, &stop), Err(BenchError::Refused(_))));
    }
}
