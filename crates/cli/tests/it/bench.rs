//! `headroom bench` side by side with the tools people use today, each
//! run alternately with headroom on this machine: sysbench (CPU), fio and
//! dd (storage), iperf3 over a veth pair between network namespaces
//! shaped to 100 Mbit/s (network), mbw (memory); the stack benchmark
//! against real PostgreSQL and MariaDB; the report in Chromium; and bad
//! input refused with nothing partial reported as a result. Reduced
//! versions of bench/host (which runs the full-sized comparison).

use crate::support;

use crate::support::{
    headroom, minutes, paced, program, requires, root, serial, service, temp_dir, text, Reply,
    TestServer,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bench(args: &[&str]) -> Output {
    bench_limited(args, None)
}

/// `headroom bench ARGS`, under the disk limit of `command()` when `limit` is given.
fn bench_limited(args: &[&str], limit: Option<&Path>) -> Output {
    command(env!("CARGO_BIN_EXE_headroom"), limit)
        .arg("bench")
        .args(args)
        .output()
        .expect("headroom runs")
}

/// The bundle's mean of `benchmark`'s figure `key`.
fn mean(bundle: &serde_json::Value, benchmark: &str, key: &str) -> f64 {
    let values = values(bundle, benchmark, key);
    values.iter().sum::<f64>() / values.len() as f64
}

/// Every repetition's value of `benchmark`'s figure `key`.
fn values(bundle: &serde_json::Value, benchmark: &str, key: &str) -> Vec<f64> {
    let result = bundle["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["benchmark"] == benchmark)
        .unwrap_or_else(|| panic!("no {benchmark} in {bundle}"));
    result["measures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["key"] == key)
        .unwrap_or_else(|| panic!("no {key} in {result}"))["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

fn read(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("bench.json")).unwrap()).unwrap()
}

/// The highest of the rounds: contention only ever lowers a throughput.
fn best(v: Vec<f64>) -> f64 {
    v.into_iter().fold(0.0, f64::max)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs a peer tool and returns its standard output.
fn peer(program: &str, args: &[&str]) -> String {
    peer_limited(program, args, None)
}

/// As peer(), under the disk limit of `command()` when `limit` is given.
fn peer_limited(program: &str, args: &[&str], limit: Option<&Path>) -> String {
    let out = command(program, limit)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} is not installed ({e}): scripts/test installs it"));
    assert!(out.status.success(), "{program} failed: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One figure of headroom's beside the peer's, and how close they must be.
struct Figure {
    name: String,
    ours: f64,
    theirs: f64,
    tolerance: f64,
}

fn figure(name: &str, ours: f64, theirs: f64, tolerance: f64) -> Figure {
    Figure {
        name: name.to_string(),
        ours,
        theirs,
        tolerance,
    }
}

/// Measures headroom and its peer side by side, up to `attempts` times,
/// until each figure agrees: within its tolerance in some attempt, or
/// the best of headroom's attempts within it of the best of the peer's.
/// Every figure here is a throughput, and a virtual machine's neighbours
/// only ever lower one, either side by 15-30% for a minute at a time (one
/// CI run saw memory copy at 1.27, random reads at 1.15 and TCP at 0.94
/// of the peers' within three minutes, each within 5% before and after;
/// another saw openssl's RSA signs move 20% between two seconds). An
/// error of headroom's moves its figure on every attempt and its best
/// too, and fails, naming the figure.
fn agrees(attempts: u32, mut measure: impl FnMut() -> Vec<Figure>) {
    // Per figure: (name, best of ours, best of theirs, agreed).
    let mut figures: Vec<(String, f64, f64, bool)> = Vec::new();
    let mut seen = Vec::new();
    for attempt in 1..=attempts {
        for f in measure() {
            let ratio = f.ours / f.theirs;
            println!(
                "attempt {attempt}: {}: headroom {:.1}, peer {:.1}, ratio {ratio:.3} (tolerance ±{:.0}%)",
                f.name,
                f.ours,
                f.theirs,
                f.tolerance * 100.0
            );
            let index = match figures.iter().position(|(name, ..)| name == &f.name) {
                Some(index) => index,
                None => {
                    figures.push((f.name.clone(), 0.0, 0.0, false));
                    figures.len() - 1
                }
            };
            let entry = &mut figures[index];
            entry.1 = entry.1.max(f.ours);
            entry.2 = entry.2.max(f.theirs);
            let within = |r: f64| r.is_finite() && (r - 1.0).abs() <= f.tolerance;
            if within(ratio) || within(entry.1 / entry.2) {
                entry.3 = true;
            } else {
                seen.push(format!(
                    "attempt {attempt}: {}: headroom {:.1} against the peer's {:.1} (ratio {ratio:.3}; best {:.1} against {:.1})",
                    f.name, f.ours, f.theirs, entry.1, entry.2
                ));
            }
        }
        if figures.iter().all(|(.., agreed)| *agreed) {
            return;
        }
    }
    let open: Vec<&str> = figures
        .iter()
        .filter(|(.., agreed)| !agreed)
        .map(|(name, ..)| name.as_str())
        .collect();
    panic!(
        "outside the tolerance on every attempt: {}\n{}",
        open.join(", "),
        seen.join("\n")
    );
}

#[test]
#[should_panic(expected = "attempt 2: x: headroom 2.0 against the peer's 1.0")]
fn a_figure_that_disagrees_on_every_attempt_fails() {
    agrees(2, || vec![figure("x", 2.0, 1.0, 0.1)]);
}

#[test]
fn a_figure_that_agrees_on_a_later_attempt_passes() {
    let mut n = 0;
    agrees(3, || {
        n += 1;
        vec![figure("x", if n < 3 { 2.0 } else { 1.05 }, 1.0, 0.1)]
    });
    assert_eq!(n, 3);
}

/// Each figure on its own: x agrees in attempt 1, y in attempt 2; z
/// never does and fails by name; w's bests agree though no attempt did.
#[test]
fn each_figure_must_agree_in_some_attempt() {
    let mut n = 0;
    agrees(3, || {
        n += 1;
        vec![
            figure("x", if n == 1 { 1.0 } else { 2.0 }, 1.0, 0.1),
            figure("y", if n == 2 { 1.0 } else { 2.0 }, 1.0, 0.1),
        ]
    });
    assert_eq!(n, 2);
    let failed = std::panic::catch_unwind(|| {
        agrees(2, || {
            vec![figure("x", 1.0, 1.0, 0.1), figure("z", 2.0, 1.0, 0.1)]
        })
    })
    .unwrap_err();
    let said = failed.downcast_ref::<String>().unwrap();
    assert!(
        said.starts_with("outside the tolerance on every attempt: z\n"),
        "{said}"
    );
    // The peer slowed in attempt 1, headroom in attempt 2: the bests agree.
    let mut n = 0;
    agrees(3, || {
        n += 1;
        let (ours, theirs) = if n == 1 { (1.0, 0.7) } else { (0.7, 1.02) };
        vec![figure("w", ours, theirs, 0.05)]
    });
    assert_eq!(n, 2);
}

fn sysbench(threads: u32) -> f64 {
    let out = peer(
        "sysbench",
        &[
            "cpu",
            "--cpu-max-prime=10000",
            "--time=2",
            &format!("--threads={threads}"),
            "run",
        ],
    );
    out.lines()
        .find_map(|l| l.trim().strip_prefix("events per second:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no events per second in sysbench's output:\n{out}"))
}

#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn cpu_events_per_second_are_sysbenchs_within_5_percent() {
    requires!(program("sysbench", "sysbench"));
    let _guard = serial();
    let dir = temp_dir("bench-cpu");
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let mut attempt = 0;
    agrees(3, || {
        attempt += 1;
        let (mut ours1, mut oursn, mut theirs1, mut theirsn) = (vec![], vec![], vec![], vec![]);
        for round in 0..1 {
            let out = dir.join(format!("a{attempt}r{round}"));
            let b = bench_once(&out, &["cpu", "--cpu-time", "2s"], None);
            ours1.push(mean(&b, "cpu", "prime_1t"));
            oursn.push(mean(&b, "cpu", "prime_all"));
            theirs1.push(sysbench(1));
            theirsn.push(sysbench(threads));
        }
        // One round an attempt: agrees() compares the best of the attempts
        // too, as sysbench users report throughput (other work on the host
        // only ever lowers a round: a suite once saw sysbench's two threads
        // get one core's worth in two of three rounds). bench/host runs
        // the full-sized comparison.
        vec![
            figure("cpu prime, 1 thread", best(ours1), best(theirs1), 0.05),
            figure(
                &format!("cpu prime, {threads} threads"),
                best(oursn),
                best(theirsn),
                0.05,
            ),
        ]
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `program`, or `program` under `headroom emulate` with the disk that
/// holds `limit` at 10,000 IOPS (see the storage test).
fn command(program: &str, limit: Option<&Path>) -> Command {
    match limit {
        None => Command::new(program),
        Some(dir) => {
            let mut c = Command::new(env!("CARGO_BIN_EXE_headroom"));
            c.args(["emulate", "--iops", "10000", "--disk-dir"])
                .arg(dir)
                .arg("--")
                .arg(program);
            c
        }
    }
}

fn fio(dir: &Path, rw: &str, limit: Option<&Path>) -> f64 {
    let file = dir.join("fio.tmp");
    let out = peer_limited(
        "fio",
        &[
            "--name=peer",
            &format!("--filename={}", file.display()),
            "--ioengine=libaio",
            "--direct=1",
            "--iodepth=64",
            "--bs=4k",
            "--size=80M",
            "--randrepeat=1",
            &format!("--rw={rw}"),
            "--output-format=json",
        ],
        limit,
    );
    // The write job goes over the file the read job laid out, as headroom's
    // does: writing into a new file's unwritten extents is another figure.
    if rw == "randwrite" {
        let _ = std::fs::remove_file(&file);
    }
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let side = if rw == "randread" { "read" } else { "write" };
    j["jobs"][0][side]["iops"].as_f64().unwrap()
}

fn dd(dir: &Path, blocks: u64) -> f64 {
    let file = dir.join("dd.tmp");
    // As headroom does before its dd: earlier writes flushed first.
    let _ = Command::new("sync").arg("-f").arg(dir).status();
    let started = std::time::Instant::now();
    let out = Command::new("dd")
        .args([
            "if=/dev/zero",
            &format!("of={}", file.display()),
            "bs=4k",
            &format!("count={blocks}"),
            "conv=fsync",
        ])
        .output()
        .unwrap();
    let seconds = started.elapsed().as_secs_f64();
    assert!(out.status.success(), "{}", text(&out));
    let _ = std::fs::remove_file(&file);
    // dd's own figure is rounded to 2–3 digits: time the same command instead.
    blocks as f64 * 4096.0 / 1e6 / seconds
}

/// `headroom bench ARGS --repetitions 1 --out OUT`, which must succeed; its bench.json.
fn bench_once(out: &Path, args: &[&str], limit: Option<&Path>) -> serde_json::Value {
    let mut args = args.to_vec();
    args.extend(["--repetitions", "1", "--out", out.to_str().unwrap()]);
    let run = bench_limited(&args, limit);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    read(out)
}

fn storage(scratch: &Path, out: &Path, extra: &[&str], limit: Option<&Path>) -> serde_json::Value {
    let mut args = vec!["storage", "--path", scratch.to_str().unwrap()];
    args.extend(extra);
    bench_once(out, &args, limit)
}

/// `sysbench fileio` as 002 ran it (direct, one thread), in `dir`, over 4
/// files of 32 MiB; its MiB/s.
fn sysbench_fileio(dir: &Path, mode: &str, block: &str, limit: Option<&Path>) -> f64 {
    let out = command("sysbench", limit)
        .current_dir(dir)
        .args([
            "fileio",
            "--file-num=4",
            "--file-total-size=32M",
            "--file-extra-flags=direct",
            &format!("--file-test-mode={mode}"),
            &format!("--file-block-size={block}"),
            "--time=1",
            "run",
        ])
        .output()
        .expect("sysbench runs (scripts/test installs it)");
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{}", text(&out));
    let key = if mode == "seqrd" {
        "read, MiB/s:"
    } else {
        "written, MiB/s:"
    };
    shown
        .lines()
        .find_map(|l| l.trim().strip_prefix(key)?.trim().parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no {key} in sysbench's output:\n{shown}"))
}

/// sysbench's 4 files of 8 MiB in `dir`, whole: a seqwr run creates them
/// anew and may leave them short, and its prepare extends them.
fn sysbench_prepare(dir: &Path) {
    let prepared = Command::new("sysbench")
        .current_dir(dir)
        .args(["fileio", "--file-num=4", "--file-total-size=32M", "prepare"])
        .output()
        .expect("sysbench runs");
    assert!(prepared.status.success(), "{}", text(&prepared));
}

/// One `headroom bench fileio` over sysbench's 4 files (32 MiB in all) in
/// `scratch` at `blocks` (out to `out`), then `sysbench fileio` at each;
/// the sequential reads' and writes' MiB/s of both, per block.
fn fileio_figures(
    out: &Path,
    scratch: &Path,
    blocks: &[&str],
    limit: Option<&Path>,
) -> Vec<Figure> {
    sysbench_prepare(scratch);
    let joined = blocks.join(",");
    let b = bench_once(
        out,
        &[
            "fileio",
            "--path",
            scratch.to_str().unwrap(),
            "--fileio-files",
            "4",
            "--fileio-size",
            "32",
            "--fileio-blocks",
            &joined,
            "--fileio-time",
            "1s",
        ],
        limit,
    );
    let mut figures = Vec::new();
    for (mode, what) in [("seqrd", "read"), ("seqwr", "write")] {
        for block in blocks {
            let ours = mean(&b, "fileio", &format!("{mode}_{block}"));
            let theirs = sysbench_fileio(scratch, mode, block, limit);
            let size = block.trim_end_matches('k');
            let name = format!("sequential {what} {size} KiB MiB/s");
            figures.push(figure(&name, ours, theirs, 0.10));
        }
    }
    figures
}

/// 002's sequential file I/O at block sizes against `sysbench fileio`,
/// alternated, the disk held to 10,000 IOPS as in the storage test (each
/// O_DIRECT request is one I/O: 39 MiB/s at 4 KiB, 156 MiB/s at 16 KiB).
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn sequential_file_io_matches_sysbench_fileio() {
    requires!(program("sysbench", "sysbench"));
    let _guard = serial();
    let dir = temp_dir("bench-fileio");
    let scratch = dir.join("device");
    std::fs::create_dir_all(&scratch).unwrap();
    let probe = command("true", Some(&scratch)).status().unwrap();
    let limit = (probe.code() == Some(0)).then_some(scratch.as_path());
    let mut attempt = 0;
    agrees(3, || {
        attempt += 1;
        // The writes create their files in both (sysbench's seqwr is
        // "sequential write (creation)"): when headroom's overwrote them,
        // sysbench's 4 KiB writes moved 30-33 MiB/s against headroom's 37,
        // and its 16 KiB writes 124-134 against 147-151 in one quiet pass.
        fileio_figures(
            &dir.join(format!("a{attempt}")),
            &scratch,
            &["4k", "16k"],
            limit,
        )
    });
    // headroom's own files are gone; sysbench's remain until its cleanup.
    let left: Vec<String> = std::fs::read_dir(&scratch)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| !n.starts_with("test_file."))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Whether `program` is on the PATH.
fn installed(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The sizes of the pread64 and pwrite64 calls on files in `dir` in an
/// `strace -f -y` log, each of which must have moved its whole size:
/// (reads, writes).
fn request_sizes(log: &str, dir: &Path) -> (Vec<u64>, Vec<u64>) {
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    let dir = format!("<{}/", dir.display());
    for line in log.lines().filter(|l| l.contains(&dir)) {
        let Some(at) = line.find("pread64(").or_else(|| line.find("pwrite64(")) else {
            continue;
        };
        // `pread64(9, "..."..., 1024, 297984) = 1024`
        let Some((call, returned)) = line[at..].rsplit_once(") = ") else {
            continue;
        };
        let arguments: Vec<&str> = call.rsplitn(3, ", ").collect();
        let (Some(size), Ok(returned)) = (
            arguments.get(1).and_then(|a| a.trim().parse::<u64>().ok()),
            returned.trim().parse::<u64>(),
        ) else {
            continue;
        };
        assert_eq!(size, returned, "a short request: {line}");
        if line[at..].starts_with("pread64") {
            reads.push(size);
        } else {
            writes.push(size);
        }
    }
    (reads, writes)
}

/// Finding 4 of adversary-3: a block under 4 KiB was a 4 KiB request
/// (1k and 2k failed with "failed to fill whole buffer", 3k moved 4 KiB
/// requests 3 KiB apart and counted 3). Each request is its block, as
/// strace sees it, and 1 KiB reads and writes agree with `sysbench fileio
/// --file-block-size=1024 --file-extra-flags=direct`, the disk held to
/// 10,000 IOPS as in the fileio test above.
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn blocks_under_4_kib_are_requests_of_their_size() {
    requires!(program("sysbench", "sysbench"));
    let _guard = serial();
    let dir = temp_dir("bench-fileio-small");
    let scratch = dir.join("device");
    std::fs::create_dir_all(&scratch).unwrap();
    let small = |out: &Path| {
        vec![
            "fileio".to_string(),
            "--path".to_string(),
            scratch.to_str().unwrap().to_string(),
            "--fileio-files".to_string(),
            "2".to_string(),
            "--fileio-size".to_string(),
            "8".to_string(),
            "--fileio-blocks".to_string(),
            "1k,3k".to_string(),
            "--fileio-time".to_string(),
            "0.3s".to_string(),
            "--repetitions".to_string(),
            "1".to_string(),
            "--out".to_string(),
            out.to_str().unwrap().to_string(),
        ]
    };
    if installed("strace") {
        let log = dir.join("strace.log");
        let out = Command::new("strace")
            .args(["-f", "-y", "-e", "trace=pread64,pwrite64", "-o"])
            .arg(&log)
            .arg(env!("CARGO_BIN_EXE_headroom"))
            .arg("bench")
            .args(small(&dir.join("traced")))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let (reads, writes) = request_sizes(&std::fs::read_to_string(&log).unwrap(), &scratch);
        // The files are written first in 1 MiB chunks.
        assert!(reads.iter().all(|s| [1024, 3072].contains(s)), "{reads:?}");
        assert!(
            writes.iter().all(|s| [1024, 3072, 1 << 20].contains(s)),
            "{writes:?}"
        );
        for block in [1024, 3072] {
            assert!(reads.contains(&block) && writes.contains(&block), "{block}");
        }
    } else {
        println!("strace is not installed: the requests' sizes were not checked");
        let run = bench(
            &small(&dir.join("plain"))
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        );
        assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    }
    if !installed("sysbench") {
        println!("sysbench is not installed: 1 KiB blocks were not compared with it");
        std::fs::remove_dir_all(&dir).unwrap();
        return;
    }
    let probe = command("true", Some(&scratch)).status().unwrap();
    let limit = (probe.code() == Some(0)).then_some(scratch.as_path());
    let mut attempt = 0;
    agrees(3, || {
        attempt += 1;
        // The writes create their files in both: sysbench's did about
        // 3,000 a second here where headroom's overwriting did the 10,000
        // of the limit.
        fileio_figures(&dir.join(format!("a{attempt}")), &scratch, &["1k"], limit)
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A loop device over a file, detached when dropped.
/// A loop device over a file of its own: detached and the file removed
/// when dropped, a failing test's too (a 2 GiB file in /dev/shm is memory).
struct LoopDevice {
    device: String,
    image: PathBuf,
}

impl LoopDevice {
    fn over(image: &Path) -> LoopDevice {
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(image)
            .output()
            .expect("losetup (util-linux) runs");
        let device = LoopDevice {
            device: String::from_utf8_lossy(&out.stdout).trim().to_string(),
            image: image.to_path_buf(),
        };
        assert!(out.status.success(), "losetup: {}", text(&out));
        device
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        if !self.device.is_empty() {
            let _ = Command::new("losetup").args(["-d", &self.device]).status();
        }
        let _ = std::fs::remove_file(&self.image);
    }
}

/// hdparm's "Timing cached reads: ... = 30718.13 MB/sec" (and the
/// buffered disk reads' line): the MB/sec (hdparm's MB are 2^20 bytes).
fn hdparm_figure(shown: &str, timing: &str) -> f64 {
    shown
        .lines()
        .find(|l| l.contains(timing))
        .and_then(|l| l.rsplit('=').next())
        .and_then(|v| v.trim().trim_end_matches("MB/sec").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {timing} in hdparm's output:\n{shown}"))
}

/// 000's two hdparm rows: headroom's reads of a block device beside
/// `hdparm -tT` and `hdparm -tT --direct` (PiBenchmarks', 000's) of the
/// same device, one after the other. The device is a loop device over
/// 2 GiB in memory (/dev/shm): this VM's disk moved O_DIRECT reads between
/// about 1,200 and 3,100 MiB/s from one run to the next, in hdparm and
/// headroom alike, while a device in memory holds each figure within a
/// few percent (once here: cached 30,808 against 30,410, O_DIRECT cached
/// 8,864 against 8,702, O_DIRECT disk 5,676 against 5,548 MiB/s). Over
/// 1 GiB the O_DIRECT disk read lasted 0.15 s and moved 5,700-7,700 MiB/s
/// in both tools from one run to the next, so each figure is the best of
/// two rounds.
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn disk_and_cached_reads_match_hdparm() {
    requires!(
        root(),
        program("losetup", "mount"),
        program("hdparm", "hdparm"),
    );
    let _guard = serial();
    let dir = temp_dir("bench-reads");
    std::fs::create_dir_all(&dir).unwrap();
    let shm = Path::new("/dev/shm");
    let image = if shm.is_dir() { shm } else { dir.as_path() }
        .join(format!("headroom-reads-{}.img", std::process::id()));
    let made = Command::new("sh")
        .arg("-c")
        .arg(format!("head -c 2G /dev/zero > '{}'", image.display()))
        .status()
        .unwrap();
    assert!(made.success());
    let device = LoopDevice::over(&image);
    let mut attempt = 0;
    // One round of each tool an attempt; agrees() compares the attempts'
    // bests too: a read's speed is only ever lowered by what else the
    // machine does.
    agrees(3, || {
        attempt += 1;
        let out = dir.join(format!("a{attempt}"));
        let ran = bench(&[
            "reads",
            "--device",
            &device.device,
            "--repetitions",
            "1",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(ran.status.code(), Some(0), "{}", text(&ran));
        let b = read(&out);
        let ours = |key: &str| best(values(&b, "reads", key));
        let mut figures = Vec::new();
        for (flags, key, name) in [
            (&["-tT"][..], "", ""),
            (&["-tT", "--direct"][..], "direct_", "O_DIRECT "),
        ] {
            let mut args = flags.to_vec();
            args.push(&device.device);
            let shown: Vec<String> = vec![peer("hdparm", &args)];
            let theirs =
                |timing: &str| best(shown.iter().map(|s| hdparm_figure(s, timing)).collect());
            figures.push(figure(
                &format!("{name}cached read MiB/s"),
                ours(&format!("{key}cached_read")),
                theirs("cached reads"),
                0.10,
            ));
            figures.push(figure(
                &format!("{name}disk read MiB/s"),
                ours(&format!("{key}disk_read")),
                theirs("disk reads"),
                // The loop device over /dev/shm is memory copied by the
                // loop driver: its buffered read moved 227-311 MiB/s in one
                // quiet pass here, both tools alike (best 1.22 of hdparm's),
                // and its O_DIRECT read 2,000-4,300 in another (hdparm's
                // three reads 3,922, 2,034 and 3,193; headroom's best 1.107
                // of hdparm's best). Reading the page cache instead of the
                // device would be tens of times faster.
                0.25,
            ));
        }
        figures
    });
    // Without --device: a file under --path, read the same way, then removed.
    let files = dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    let b = bench_once(
        &dir.join("file"),
        &[
            "reads",
            "--path",
            files.to_str().unwrap(),
            "--reads-size",
            "64",
        ],
        None,
    );
    assert!(mean(&b, "reads", "disk_read") > 0.0);
    assert_eq!(std::fs::read_dir(&files).unwrap().count(), 0);
    // A file given as --device is refused with what to do.
    let refused = bench(&[
        "reads",
        "--device",
        image.to_str().unwrap(),
        "--out",
        dir.join("no").to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(3), "{}", text(&refused));
    assert!(
        text(&refused).contains("not a block device"),
        "{}",
        text(&refused)
    );
    drop(device);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// 002's 7-Zip ratings and `openssl speed` figures are those programs'
/// own, run by headroom: the same commands run beside it give the same
/// figures (one thread; 7-Zip one pass of a 4 MiB dictionary, openssl 1 s;
/// once here: total rating 0.936, decompression 0.989, RSA signs 1.012,
/// AES 1.021 of the programs' own). A clean-clone suite once saw the total
/// rating at 0.837, 0.871 and 0.899 of one 7-Zip run after it, and 1.154
/// then 0.969 when run again alone: 7-Zip now runs on both sides of it.
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn compression_and_crypto_are_7_zips_and_openssls_figures() {
    requires!(program("7zz", "7zip"), program("openssl", "openssl"));
    let _guard = serial();
    let dir = temp_dir("bench-7z-openssl");
    std::fs::create_dir_all(&dir).unwrap();
    let number_before = |shown: &str, prefix: &str, index_from_end: usize| -> f64 {
        let line = shown
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} in:\n{shown}"));
        let n: Vec<f64> = line
            .split_whitespace()
            .filter_map(|w| w.trim_end_matches('k').parse().ok())
            .collect();
        n[n.len() - 1 - index_from_end]
    };
    let mut attempt = 0;
    agrees(3, || {
        attempt += 1;
        let seven_before = peer("7zz", &["b", "1", "-mmt1", "-md22"]);
        let b = bench_once(
            &dir.join(format!("a{attempt}")),
            &[
                "compression",
                "crypto",
                "--threads",
                "1",
                "--compression-passes",
                "1",
                "--compression-dictionary",
                "22",
                "--crypto-time",
                "1s",
            ],
            None,
        );
        // 7-Zip runs before and after headroom's run: its compression half
        // swings by itself (4,471-5,413 MIPS in four runs in a row here,
        // the total rating 4,735-5,203), and the machine's speed can drift
        // across the three runs; headroom's must match the nearer of the
        // two that bracket it. A wrong column misses both by far more
        // than the tolerance (the usage column reads 100, the speed
        // column 58,000 KiB/s).
        let seven = peer("7zz", &["b", "1", "-mmt1", "-md22"]);
        let nearer = |ours: f64, key: &str, index: usize| {
            let before = number_before(&seven_before, key, index);
            let after = number_before(&seven, key, index);
            if (before / ours - 1.0).abs() < (after / ours - 1.0).abs() {
                before
            } else {
                after
            }
        };
        let rsa = peer("openssl", &["speed", "-seconds", "1", "rsa4096"]);
        let aes = peer(
            "openssl",
            &[
                "speed",
                "-seconds",
                "1",
                "-bytes",
                "16384",
                "-evp",
                "aes-128-gcm",
            ],
        );
        let total = mean(&b, "compression", "rating_1t");
        let decompression = mean(&b, "compression", "decompress_1t");
        vec![
            figure(
                "7-Zip total rating MIPS",
                total,
                nearer(total, "Tot:", 0),
                // Its compression half moves by itself over one pass
                // (6,091, 7,096 and 7,097 MIPS in three runs of 7zz here).
                0.10,
            ),
            figure(
                "7-Zip decompression rating MIPS",
                decompression,
                nearer(decompression, "Avr:", 0),
                // 7-Zip's own, as openssl's: one quiet pass here read 0.89,
                // 1.30 and 0.87 of the same command run after it (best
                // 1.06).
                0.10,
            ),
            // openssl's figures are its own program's, run with the same
            // arguments: what can be wrong is an argument or a column, and
            // those miss by multiples (RSA-2048 signs 6x as fast as 4096,
            // the 16-byte column of AES is a tenth of the 16 KiB one, k
            // against MB a thousandth). A CI run saw AES at 0.95, 0.78 and
            // 0.75 of the same command run a second later, a quiet pass
            // here 0.80, 0.69 and 1.12 (best 0.82).
            figure(
                "RSA-4096 signs/s",
                mean(&b, "crypto", "rsa_sign_1t"),
                number_before(&rsa, "rsa 4096 bits", 1),
                0.25,
            ),
            figure(
                "AES-128-GCM MB/s",
                mean(&b, "crypto", "aes_128_gcm"),
                number_before(&aes, "AES-128-GCM", 0) / 1000.0,
                0.25,
            ),
        ]
    });
    // The version beside the figures.
    let b = read(&dir.join(format!("a{attempt}")));
    let results = b["results"].as_array().unwrap();
    assert!(results[0]["settings"]["version"]
        .as_str()
        .unwrap()
        .starts_with("7-Zip"));
    assert!(results[1]["settings"]["version"]
        .as_str()
        .unwrap()
        .starts_with("OpenSSL"));
    // A 7-Zip that is missing is said when named, and left out of "all".
    let bare = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(["bench", "compression", "--out"])
        .arg(dir.join("missing"))
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(bare.status.code(), Some(3), "{}", text(&bare));
    assert!(
        text(&bare).contains("apt-get install 7zip"),
        "{}",
        text(&bare)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn storage_iops_and_the_dd_write_match_fio_and_dd() {
    requires!(program("fio", "fio"));
    let _guard = serial();
    let dir = temp_dir("bench-storage");
    let scratch = dir.join("device");
    std::fs::create_dir_all(&scratch).unwrap();
    // fio's parameters exactly (80 MiB, QD 64), a smaller dd. The IOPS
    // pair runs with the disk limited to 10,000 IOPS (headroom emulate --iops):
    // unlimited, this VM's disk outruns what a core issues, fio's 80 MiB
    // write job lasts about 100 ms, and its figure moved between 53,000 and
    // 220,000 IOPS from run to run while headroom's stayed at 139,000-
    // 163,000 (one CI run had fio at 72,000 and headroom at 150,000 ten
    // rounds in a row). Limited, the disk is the bottleneck, as a Pi's SD
    // card is, and both must count and time requests alike. The kernel's
    // limit lets a job start with up to one 100 ms slice of requests in
    // hand (2,000 at 20,000 IOPS put some read jobs at 1.10-1.15): at
    // 10,000 IOPS a job lasts 2 s and that slice is at most 5% of it.
    let probe = command("true", Some(&scratch)).status().unwrap();
    let limit = (probe.code() == Some(0)).then_some(scratch.as_path());
    if limit.is_none() {
        println!(
            "no block-I/O controller here: fio and headroom compared on the unlimited disk, \
             where fio's random-write figure moves far more than headroom's from run to run"
        );
    }
    let mut attempt = 0;
    agrees(2, || {
        attempt += 1;
        let (mut read_ours, mut write_ours, mut read_fio, mut write_fio) =
            (vec![], vec![], vec![], vec![]);
        // A virtual disk's IOPS move by ±20% run to run: three alternated
        // rounds, their medians (bench/host runs more).
        for round in 0..3 {
            let b = storage(
                &scratch,
                &dir.join(format!("a{attempt}r{round}")),
                &["--dd-blocks", "4096", "--commits", "50"],
                limit,
            );
            read_ours.push(mean(&b, "storage", "fio_randread"));
            write_ours.push(mean(&b, "storage", "fio_randwrite"));
            assert!(mean(&b, "storage", "score") > 0.0);
            assert!(mean(&b, "storage", "commit_p99") >= mean(&b, "storage", "commit_p50"));
            read_fio.push(fio(&scratch, "randread", limit));
            write_fio.push(fio(&scratch, "randwrite", limit));
        }
        vec![
            figure(
                "4 KiB random read IOPS",
                median(read_ours),
                median(read_fio),
                0.15,
            ),
            figure(
                "4 KiB random write IOPS",
                median(write_ours),
                median(write_fio),
                // Unlimited, random writes came out 0.73-2.84 of fio's.
                if limit.is_some() { 0.15 } else { 0.25 },
            ),
        ]
    });
    // dd's figure moves by ±20% run to run on a virtual disk: five
    // alternated 256 MB writes of each, their medians, within 20% (a
    // clean-clone suite read 0.830 and 0.896 of dd's on a day this disk
    // wrote 410-505 MB/s, where docs/bench.md has 1.093 at 900). Writing
    // to the page cache without the fsync would be several times faster.
    let blocks = 65_536u64;
    let mut attempt = 0;
    agrees(2, || {
        attempt += 1;
        let (mut dd_ours, mut dd_peer) = (vec![], vec![]);
        for round in 0..5 {
            if round % 2 == 1 {
                dd_peer.push(dd(&scratch, blocks));
            }
            let b = storage(
                &scratch,
                &dir.join(format!("a{attempt}dd{round}")),
                &[
                    "--dd-blocks",
                    &blocks.to_string(),
                    "--file-size",
                    "1",
                    "--commits",
                    "1",
                ],
                None,
            );
            dd_ours.push(mean(&b, "storage", "dd_write"));
            if round % 2 == 0 {
                dd_peer.push(dd(&scratch, blocks));
            }
        }
        vec![figure(
            "dd write MB/s",
            median(dd_ours),
            median(dd_peer),
            0.20,
        )]
    });
    assert_eq!(
        std::fs::read_dir(&scratch).unwrap().count(),
        0,
        "no file left behind"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

fn mbw_memcpy_best() -> f64 {
    // -t0: memcpy; the best of 10 copies of 128 MiB, MiB/s of one array.
    let out = peer("mbw", &["-q", "-n", "10", "-t0", "128"]);
    out.lines()
        .filter(|l| !l.starts_with("AVG"))
        .filter_map(|l| l.split("Copy:").nth(1))
        .filter_map(|v| {
            v.trim()
                .trim_end_matches("MiB/s")
                .trim()
                .parse::<f64>()
                .ok()
        })
        .fold(0.0, f64::max)
}

#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn stream_copy_is_mbws_memcpy_within_20_percent() {
    requires!(program("mbw", "mbw"));
    let _guard = serial();
    let dir = temp_dir("bench-memory");
    // The storage test before it may leave dirty pages the kernel writes
    // back while memory is measured.
    let _ = Command::new("sync").status();
    let mut attempt = 0;
    // STREAM's copy loop and mbw's memcpy are two programs, and this VM's
    // memory is shared with its host's other guests: a clean-clone suite
    // saw headroom's copy at 0.829, 0.878 and 0.899 of mbw's on three
    // attempts in a row, then 0.931 and 1.029 alone a minute later; on a
    // day the host copied at 7-9 GB/s instead of 19, five attempts read
    // 1.125-1.232 and three alone 1.090-1.335. An error of method is a
    // multiple (bytes counted once or twice, arrays that fit in the cache):
    // 20%, and a later attempt waits 10 s for a dip to pass.
    agrees(5, || {
        attempt += 1;
        if attempt > 1 {
            std::thread::sleep(std::time::Duration::from_secs(10));
        }
        let (mut ours, mut theirs) = (vec![], vec![]);
        for round in 0..1 {
            let out = dir.join(format!("a{attempt}r{round}"));
            let b = bench_once(&out, &["memory"], None);
            // STREAM counts the read and the write (2 × 8 bytes per
            // element); mbw counts the array once, in MiB.
            ours.push(mean(&b, "memory", "copy_1t") / 2.0);
            theirs.push(mbw_memcpy_best() * 1.048576);
        }
        // Bandwidth is compared best against best, as STREAM and mbw each
        // report it: a median let one slow round on this VM's memory (0.885
        // once in five clean runs) fail the comparison.
        vec![figure(
            "memory copy MB/s (one way)",
            best(ours),
            best(theirs),
            0.20,
        )]
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two network namespaces joined by a veth pair, each end shaped to
/// 100 Mbit/s by tc's token bucket; removed when dropped.
struct Link {
    a: String,
    b: String,
}

impl Link {
    fn new() -> Link {
        let id = std::process::id() % 100_000;
        let (a, b) = (format!("hra{id}"), format!("hrb{id}"));
        let ip = |args: &str| {
            let out = Command::new("ip")
                .args(args.split(' '))
                .output()
                .expect("iproute2 is installed");
            assert!(out.status.success(), "ip {args}: {}", text(&out));
        };
        ip(&format!("netns add {a}"));
        ip(&format!("netns add {b}"));
        let link = Link {
            a: a.clone(),
            b: b.clone(),
        };
        ip(&format!("link add v{a} type veth peer name v{b}"));
        ip(&format!("link set v{a} netns {a}"));
        ip(&format!("link set v{b} netns {b}"));
        ip(&format!("-n {a} addr add 10.203.7.1/24 dev v{a}"));
        ip(&format!("-n {b} addr add 10.203.7.2/24 dev v{b}"));
        for (ns, dev) in [(&a, format!("v{a}")), (&b, format!("v{b}"))] {
            ip(&format!("-n {ns} link set {dev} up"));
            ip(&format!("-n {ns} link set lo up"));
            let out = Command::new("ip")
                .args([
                    "netns", "exec", ns, "tc", "qdisc", "add", "dev", &dev, "root", "tbf", "rate",
                    "100mbit", "burst", "32kbit", "latency", "50ms",
                ])
                .output()
                .unwrap();
            assert!(out.status.success(), "tc: {}", text(&out));
        }
        link
    }

    fn exec(&self, ns: &str, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns, program]);
        c
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        for ns in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

fn iperf3(link: &Link, reverse: bool) -> f64 {
    let mut server = link
        .exec(&link.b, "iperf3")
        .args(["-s", "-1", "-B", "10.203.7.2", "-p", "5299"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let mut args = vec!["-c", "10.203.7.2", "-p", "5299", "-t", "3", "-J"];
    if reverse {
        args.push("-R");
    }
    let out = link.exec(&link.a, "iperf3").args(&args).output().unwrap();
    let _ = server.wait();
    assert!(out.status.success(), "iperf3: {}", text(&out));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    j["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap()
        / 1e6
}

/// `headroom bench network` in the link's first namespace against the
/// agent in its second.
fn network_bench(link: &Link, token: &str, args: &[&str]) -> Output {
    link.exec(&link.a, env!("CARGO_BIN_EXE_headroom"))
        .args([
            "bench",
            "network",
            "--agent",
            "http://10.203.7.2:9464",
            "--agent-token",
            token,
        ])
        .args(args)
        .output()
        .unwrap()
}

#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn tcp_throughput_is_iperf3s_within_5_percent_on_a_100_mbit_link() {
    requires!(
        root(),
        program("ip", "iproute2"),
        program("tc", "iproute2"),
        program("iperf3", "iperf3"),
    );
    let _paced = paced();
    let link = Link::new();
    // Stopped when the test ends, failed or not.
    let agent = link
        .exec(&link.b, env!("CARGO_BIN_EXE_headroom"))
        .args([
            "agent",
            "--listen",
            "10.203.7.2:9464",
            "--token",
            "s3cret",
            "--bench-endpoints",
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _agent = support::php_site::Daemon(agent);
    std::thread::sleep(std::time::Duration::from_millis(500));
    let dir = temp_dir("bench-network");
    let mut attempt = 0;
    let mut b = serde_json::Value::Null;
    agrees(3, || {
        attempt += 1;
        let out = dir.join(format!("a{attempt}"));
        let run = network_bench(
            &link,
            "s3cret",
            &[
                "--link-capacity",
                "100Mbit",
                "--net-time",
                "3s",
                "--round-trips",
                "50",
                "--repetitions",
                "1",
                "--out",
                out.to_str().unwrap(),
            ],
        );
        assert_eq!(run.status.code(), Some(0), "{}", text(&run));
        b = read(&out);
        let up = iperf3(&link, false);
        let down = iperf3(&link, true);
        vec![
            figure("TCP upload Mbit/s", mean(&b, "network", "upload"), up, 0.05),
            figure(
                "TCP download Mbit/s",
                mean(&b, "network", "download"),
                down,
                0.05,
            ),
        ]
    });
    // Each share is its throughput of the 100 Mbit/s stated (the link's
    // own speed is iperf3's to judge, above: a busy neighbour of this VM
    // once held both to 86 Mbit/s).
    for (key, figure) in [("upload_pct", "upload"), ("download_pct", "download")] {
        let pct = mean(&b, "network", key);
        let mbit = mean(&b, "network", figure);
        assert!(
            (pct - mbit).abs() < 0.5 && pct <= 100.5,
            "{key} {pct} of {mbit} Mbit/s"
        );
    }
    // The round trip grows with the payload: 10 KB crosses a 100 Mbit/s link twice.
    assert!(mean(&b, "network", "rtt_10000") > 5.0 * mean(&b, "network", "rtt_100"));

    // The same agent refuses another token; an agent without the endpoints says how to start them.
    let wrong = network_bench(
        &link,
        "nope",
        &["--out", dir.join("wrong").to_str().unwrap()],
    );
    assert_eq!(wrong.status.code(), Some(3), "{}", text(&wrong));
    assert!(
        text(&wrong).contains("refused the token"),
        "{}",
        text(&wrong)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What must not produce a figure: each is refused with what to do, the
/// bundle lists the failure and holds no result.
#[test]
#[ignore = "quiet: paced by its timers; scripts/test runs it beside other paced tests only"]
fn bad_input_is_refused_and_nothing_partial_is_reported() {
    let _paced = paced();
    let dir = temp_dir("bench-bad");
    let plain = support::free_port();
    let off = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut agent_off = headroom()
        .args(["agent", "--listen", &format!("127.0.0.1:{off}")])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let tmp = std::env::temp_dir();
    let cases: Vec<(&str, Vec<String>, &str)> = vec![
        (
            "tmpfs",
            vec!["storage".into(), "--path".into(), "/dev/shm".into()],
            "tmpfs",
        ),
        (
            "space",
            vec![
                "storage".into(),
                "--path".into(),
                tmp.display().to_string(),
                "--file-size".into(),
                "65536".into(),
                "--dd-blocks".into(),
                "1000000000".into(),
            ],
            "MB free",
        ),
        (
            "nodir",
            vec!["storage".into(), "--path".into(), "/no/such/dir".into()],
            "not a directory",
        ),
        (
            "agent",
            vec![
                "network".into(),
                "--agent".into(),
                format!("http://127.0.0.1:{plain}"),
            ],
            "no agent answers",
        ),
        (
            "endpoints",
            vec![
                "network".into(),
                "--agent".into(),
                format!("http://127.0.0.1:{off}"),
            ],
            "--bench-endpoints",
        ),
        (
            "db",
            vec![
                "stack".into(),
                "--db".into(),
                "postgres://nobody:x@127.0.0.1:1/none".into(),
            ],
            "--db",
        ),
    ];
    for (name, args, expected) in cases {
        let out = dir.join(name);
        let mut all: Vec<String> = args.clone();
        all.extend([
            "--repetitions".into(),
            "1".into(),
            "--out".into(),
            out.display().to_string(),
        ]);
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let run = bench(&all);
        assert_eq!(run.status.code(), Some(3), "{name}: {}", text(&run));
        assert!(text(&run).contains(expected), "{name}: {}", text(&run));
        let b = read(&out);
        assert_eq!(b["status"], "failed", "{name}");
        assert_eq!(
            b["results"].as_array().unwrap().len(),
            0,
            "{name}: nothing partial"
        );
        assert!(
            b["failures"][0]["error"]
                .as_str()
                .unwrap()
                .contains(expected),
            "{name}"
        );
    }
    let _ = agent_off.kill();
    let _ = agent_off.wait();
    // Usage errors: before anything runs.
    let used = dir.join("tmpfs");
    for (args, expected) in [
        (vec!["cpu", "--out", used.to_str().unwrap()], "not empty"),
        (
            vec!["stack", "--target", "https://example.org/"],
            "plain HTTP",
        ),
        (vec!["disk"], "invalid value 'disk'"),
        (vec!["cpu", "--repetitions", "0"], "repetitions"),
    ] {
        let run = bench(&args);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {}", text(&run));
        assert!(text(&run).contains(expected), "{args:?}: {}", text(&run));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The stack benchmark against real PostgreSQL and MariaDB (scripts/test
/// starts them) and a page server; the report opens in Chromium; two
/// bundles compare.
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn the_stack_runs_on_every_database_and_the_bundles_report_and_compare() {
    requires!(
        service("HEADROOM_TEST_POSTGRES", "PostgreSQL"),
        service("HEADROOM_TEST_MARIADB", "MariaDB"),
        program("chromium", "chromium"),
    );
    let _guard = serial();
    let dir = temp_dir("bench-stack");
    let server = TestServer::start(|_| Reply {
        delay: std::time::Duration::from_millis(30),
        ..Reply::default()
    });
    let target = server.url("/login/index.php");
    let mut bundles = Vec::new();
    let databases: Vec<(String, Option<String>)> = vec![
        ("sqlite".into(), None),
        (
            "postgres".into(),
            std::env::var("HEADROOM_TEST_POSTGRES").ok(),
        ),
        (
            "mariadb".into(),
            std::env::var("HEADROOM_TEST_MARIADB").ok(),
        ),
    ];
    for (name, url) in &databases {
        let out = dir.join(name);
        let mut args = vec!["stack", "--target", &target, "--repetitions", "2", "--path"];
        let tmp = dir.display().to_string();
        args.push(&tmp);
        let out_s = out.display().to_string();
        args.extend(["--out", &out_s]);
        if let Some(url) = url {
            args.extend(["--db", url]);
        } else {
            assert_eq!(
                name, "sqlite",
                "scripts/test sets HEADROOM_TEST_POSTGRES and HEADROOM_TEST_MARIADB"
            );
        }
        let run = bench(&args);
        assert_eq!(run.status.code(), Some(0), "{name}: {}", text(&run));
        let b = read(&out);
        let page = mean(&b, "stack", "page1");
        assert!(
            (0.029..1.0).contains(&page),
            "{name}: the page takes 30 ms: {page}"
        );
        let total = mean(&b, "stack", "total");
        let score = mean(&b, "stack", "score");
        assert!(
            score >= (total * 100.0).floor(),
            "{name}: score {score} for {total} s"
        );
        assert!(text(&run).contains("course inserts"), "{}", text(&run));
        bundles.push(out);
    }
    let report = headroom()
        .args(["report", bundles[0].to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(report.status.code(), Some(0), "{}", text(&report));
    let html = std::fs::read_to_string(bundles[0].join("report.html")).unwrap();
    support::browser::self_contained(&html);
    let dom = support::browser::open_in_chromium(&bundles[0].join("report.html"), &dir);
    for expected in [
        "headroom bench",
        "Moodle",
        "25 course inserts",
        "Published figures",
        "Raspberry Pi 4",
        "Environment",
    ] {
        assert!(dom.contains(expected), "the report lacks '{expected}'");
    }
    let compare = headroom()
        .args([
            "compare",
            bundles[0].to_str().unwrap(),
            bundles[1].to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let shown = text(&compare);
    assert!(matches!(compare.status.code(), Some(0 | 1)), "{shown}");
    assert!(
        shown.contains("500 course reads") && shown.contains("verdict"),
        "{shown}"
    );
    assert!(
        shown.contains("stack db:"),
        "the databases differ, and it says so: {shown}"
    );
    let mixed = headroom()
        .args(["compare", bundles[0].to_str().unwrap(), "/tmp"])
        .output()
        .unwrap();
    assert_eq!(mixed.status.code(), Some(2), "{}", text(&mixed));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn the_thermal_protocol_records_throughput_clock_and_what_it_lacks() {
    requires!(minutes());
    let _guard = serial();
    let dir = temp_dir("bench-thermal");
    let run = bench(&[
        "thermal",
        "--idle",
        "2s",
        "--stress",
        "8s",
        "--cool",
        "2s",
        "--settle",
        "0s",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let b = support::stdout_json(&run);
    let burst = mean(&b, "thermal", "burst");
    let sustained = mean(&b, "thermal", "sustained");
    assert!(burst > 100.0 && sustained > 100.0, "{burst} {sustained}");
    let result = &b["results"][0];
    let has_temperature = result["measures"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["key"] == "max_c");
    let notes = result["notes"].to_string();
    assert!(
        has_temperature || notes.contains("reports no temperature"),
        "{notes}"
    );
    assert!(notes.contains("differ from stressberry"), "{notes}");
    let throughput = result["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "throughput")
        .unwrap();
    assert!(throughput["points"].as_array().unwrap().len() >= 3);
    std::fs::remove_dir_all(&dir).unwrap();
}
