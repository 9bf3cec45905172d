//! `headroom bench`'s options as given ([`BenchOptions`], which the CLI
//! fills from its flags) and the work they ask for: the benchmarks chosen
//! ([`chosen`]), every benchmark's options ([`BenchOptions::suite`]) and
//! the bundle's directory checked ([`check_out`]).

use crate::compression::CompressionOptions;
use crate::cpu::CpuOptions;
use crate::crypto::CryptoOptions;
use crate::fileio::FileioOptions;
use crate::memory::MemoryOptions;
use crate::network::NetworkOptions;
use crate::reads::ReadsOptions;
use crate::stack::StackOptions;
use crate::storage::StorageOptions;
use crate::suite::Suite;
use crate::thermal::ThermalOptions;
use crate::{cores, BENCHMARKS};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The benchmarks' settings as `headroom bench`'s flags give them.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    pub repetitions: u32,
    /// `--threads` [default: the host's cores].
    pub threads: Option<u32>,
    pub cpu_time: Duration,
    pub max_prime: u64,
    pub compression_dictionary: Option<u32>,
    pub compression_passes: Option<u32>,
    /// `--rsa-bits` as given (4096 when it is no number).
    pub rsa_bits: String,
    pub crypto_time: u32,
    pub elements: Option<u64>,
    pub path: PathBuf,
    pub file_size: u64,
    pub dd_blocks: u64,
    pub commits: u32,
    pub queue_depth: u32,
    pub device: Option<PathBuf>,
    pub reads_size: u64,
    pub fileio_files: u64,
    pub fileio_size: u64,
    pub fileio_blocks: Vec<u64>,
    pub fileio_time: Duration,
    /// The agent's HOST:PORT (`--agent`), if one was given.
    pub agent: Option<String>,
    pub agent_token: Option<String>,
    pub link_capacity: Option<f64>,
    pub net_time: Duration,
    pub round_trips: u32,
    pub idle: Option<Duration>,
    pub stress: Option<Duration>,
    pub cool: Option<Duration>,
    pub settle: Duration,
    pub db: Option<String>,
    pub target: Option<String>,
}

/// The benchmarks named (`all`, or none named: every one whose program is
/// here), in the order they run, and whether all run; `say` hears of each
/// left out.
pub fn chosen(named: &[String], say: &mut dyn FnMut(String)) -> (bool, Vec<&'static str>) {
    let all = named.is_empty() || named.iter().any(|b| b == "all");
    let chosen = BENCHMARKS
        .iter()
        .copied()
        .filter(|b| all || named.iter().any(|x| x == b))
        .filter(|b| !all || installed(b, say))
        .collect();
    (all, chosen)
}

/// Whether the program a benchmark runs is here; when every benchmark
/// runs, one whose program is missing is left out with a word (named
/// alone, it fails and says what to install).
fn installed(benchmark: &str, say: &mut dyn FnMut(String)) -> bool {
    match Suite::program(benchmark).map(|p| (p, p.find())) {
        Some((p, Err(_))) => {
            say(format!(
                "headroom: {benchmark} left out: it runs {}, which is not installed (apt-get install {})",
                p.names[0], p.package
            ));
            false
        }
        _ => true,
    }
}

/// An existing --out must not hold another bench or run.
pub fn check_out(out: &Path) -> Result<(), String> {
    if !out.exists() {
        return std::fs::create_dir_all(out)
            .map_err(|e| format!("cannot create {}: {e}", out.display()));
    }
    if !out.is_dir() {
        return Err(format!(
            "{} is a file: give --out a directory",
            out.display()
        ));
    }
    let used = std::fs::read_dir(out)
        .map_err(|e| format!("cannot read {}: {e}", out.display()))?
        .next()
        .is_some();
    if used {
        return Err(format!(
            "{} is not empty: choose another --out (a bench never overwrites results)",
            out.display()
        ));
    }
    Ok(())
}

impl BenchOptions {
    fn threads(&self) -> usize {
        self.threads.map_or_else(cores, |t| t as usize)
    }

    /// Thermal durations: stressberry's, shortened when every benchmark runs.
    fn thermal_times(&self, all: bool) -> (f64, f64, f64, f64) {
        let pick = |given: Option<Duration>, short: f64, full: f64| {
            given.map_or(if all { short } else { full }, |d| d.as_secs_f64())
        };
        (
            pick(self.idle, 20.0, 150.0),
            pick(self.stress, 60.0, 300.0),
            pick(self.cool, 20.0, 150.0),
            if all {
                self.settle.as_secs_f64().min(60.0)
            } else {
                self.settle.as_secs_f64()
            },
        )
    }

    /// Every benchmark's options from the flags.
    pub fn suite(&self, all: bool) -> Suite {
        let repetitions = self.repetitions;
        let (idle, stress, cool, settle) = self.thermal_times(all);
        Suite {
            cpu: CpuOptions {
                max_prime: self.max_prime,
                seconds: self.cpu_time.as_secs_f64(),
                threads: self.threads(),
                repetitions,
            },
            compression: CompressionOptions {
                threads: self.threads(),
                dictionary: self.compression_dictionary,
                passes: self.compression_passes,
                repetitions,
            },
            crypto: CryptoOptions {
                threads: self.threads(),
                rsa_bits: self.rsa_bits.parse().unwrap_or(4096),
                seconds: self.crypto_time,
                repetitions,
            },
            memory: MemoryOptions {
                elements: self.elements.map(|e| e as usize),
                iterations: 10,
                threads: self.threads(),
                repetitions,
            },
            storage: StorageOptions {
                path: self.path.clone(),
                dd_blocks: self.dd_blocks,
                file_mib: self.file_size,
                commits: self.commits,
                depth: self.queue_depth as usize,
                repetitions,
            },
            reads: ReadsOptions {
                device: self.device.clone(),
                path: self.path.clone(),
                file_mib: self.reads_size,
                repetitions,
            },
            fileio: FileioOptions {
                path: self.path.clone(),
                files: self.fileio_files,
                total_mib: self.fileio_size,
                blocks_kib: self.fileio_blocks.clone(),
                seconds: self.fileio_time.as_secs_f64(),
                repetitions,
            },
            network: NetworkOptions {
                agent: self.agent.clone(),
                token: self.agent_token.clone(),
                seconds: self.net_time.as_secs_f64(),
                payloads: crate::network::PAYLOADS.to_vec(),
                round_trips: self.round_trips as usize,
                link_mbit: self.link_capacity,
                repetitions,
            },
            thermal: ThermalOptions {
                settle,
                idle_before: idle,
                stress,
                idle_after: cool,
                interval: 2.0,
                threads: self.threads(),
                max_prime: self.max_prime,
            },
            stack: StackOptions {
                db: self.db.clone(),
                target: self.target.clone(),
                dir: self.path.clone(),
                repetitions,
            },
        }
    }
}
