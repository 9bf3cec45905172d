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

use crate::aio::AlignedBuf;
use crate::storage::{check_path, open_direct, Scratch};
use crate::{check, io_error, measure, settings, BenchError, BenchResult, Measure, Series};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
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

/// Requests of `block` bytes in sequence over `files` of `file_bytes`
/// each for `seconds`: (requests, seconds they took).
pub fn sequential(
    files: &[File],
    file_bytes: u64,
    block: usize,
    mode: Mode,
    seconds: f64,
    stop: &AtomicBool,
) -> Result<(u64, f64), BenchError> {
    let mut buf = AlignedBuf::random(block, 0x5eed_f11e);
    let (mut file, mut offset, mut requests) = (0usize, 0u64, 0u64);
    let started = Instant::now();
    while started.elapsed().as_secs_f64() < seconds {
        let f = &files[file];
        match mode {
            Mode::Read => {
                f.read_exact_at(buf.as_mut_slice(), offset)
                    .map_err(io_error("sequential read"))?;
            }
            Mode::Write => {
                f.write_all_at(buf.as_mut_slice(), offset)
                    .map_err(io_error("sequential write"))?;
            }
        }
        requests += 1;
        if mode == Mode::Write && requests % FSYNC_EVERY == 0 {
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
        if requests % 256 == 0 {
            check(stop)?;
        }
    }
    if mode == Mode::Write {
        for f in files {
            f.sync_all().map_err(io_error("fsync"))?;
        }
    }
    Ok((requests, started.elapsed().as_secs_f64()))
}

pub fn run(o: &FileioOptions, stop: &AtomicBool) -> Result<BenchResult, BenchError> {
    let files = o.files.max(1);
    let file_bytes = (o.total_mib << 20) / files;
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
    check_path(&o.path, o.total_mib * (1 << 20) + 64_000_000)?;
    // prepare: the files written whole, then synced.
    let mut scratch = Scratch::default();
    let mut open = Vec::new();
    let mut chunk = AlignedBuf::random(1 << 20, 7);
    for i in 0..files {
        let path = scratch.file(&o.path, &format!("fileio-{i}"));
        let f = open_direct(&path, true)?;
        let mut written = 0;
        while written < file_bytes {
            let n = (file_bytes - written).min(1 << 20) as usize;
            // O_DIRECT wants whole blocks: the last chunk rounded down.
            let n = n - n % 4096;
            if n == 0 {
                break;
            }
            f.write_all_at(&chunk.as_mut_slice()[..n], written)
                .map_err(io_error(format!("cannot write {}", path.display())))?;
            written += n as u64;
        }
        f.sync_all().map_err(io_error("fsync"))?;
        open.push(f);
        check(stop)?;
    }
    let mut measures: Vec<(Mode, u64, Measure)> = Vec::new();
    for mode in [Mode::Read, Mode::Write] {
        for &kib in &o.blocks_kib {
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
    for _ in 0..o.repetitions.max(1) {
        for (mode, kib, m) in &mut measures {
            let block = (*kib << 10) as usize;
            let (requests, secs) = sequential(&open, file_bytes, block, *mode, o.seconds, stop)?;
            m.values
                .push(requests as f64 * block as f64 / (1u64 << 20) as f64 / secs.max(1e-9));
        }
    }
    drop(open);
    drop(scratch);
    let curve = |mode: Mode, name: &str| Series {
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
    };
    let series = if o.blocks_kib.len() > 1 {
        vec![
            curve(Mode::Read, "sequential read"),
            curve(Mode::Write, "sequential write"),
        ]
    } else {
        Vec::new()
    };
    Ok(BenchResult {
        benchmark: "fileio".into(),
        method: format!(
            "sysbench fileio's seqrd and seqwr as 002 ran them (--file-extra-flags=direct, one thread): \
             {files} files of {} MiB written first, then for {} s per block size each request the next \
             block of the current file with O_DIRECT, file after file; every {FSYNC_EVERY} writes and at the end \
             every file is fsynced; MiB/s (2^20 bytes)",
            file_bytes >> 20,
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
