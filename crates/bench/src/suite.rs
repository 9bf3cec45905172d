//! The bench run's driver: the chosen benchmarks one after the other, each
//! with its options ([`Suite`]), every result (with its noise noted) or
//! failure added to the bench bundle as it comes, until the end or a stop.
//! The caller writes the bundle after each ([`BenchProgress::Updated`]) and
//! says what runs ([`BenchProgress::Starting`]) and what failed.

use crate::compression::CompressionOptions;
use crate::cpu::CpuOptions;
use crate::crypto::CryptoOptions;
use crate::fileio::FileioOptions;
use crate::memory::MemoryOptions;
use crate::network::NetworkOptions;
use crate::reads::ReadsOptions;
use crate::stack::StackOptions;
use crate::storage::StorageOptions;
use crate::thermal::ThermalOptions;
use crate::{BenchError, BenchResult};
use headroom_bundle::bench::{BenchBundle, BenchFailure};
use std::sync::atomic::{AtomicBool, Ordering};

/// Every benchmark's options.
#[derive(Debug, Clone)]
pub struct Suite {
    pub cpu: CpuOptions,
    pub compression: CompressionOptions,
    pub crypto: CryptoOptions,
    pub memory: MemoryOptions,
    pub storage: StorageOptions,
    pub reads: ReadsOptions,
    pub fileio: FileioOptions,
    pub network: NetworkOptions,
    pub thermal: ThermalOptions,
    pub stack: StackOptions,
}

/// What the driver tells its caller as it goes.
pub enum BenchProgress<'a> {
    /// A benchmark starts; about how long it takes.
    Starting { name: &'a str, estimate: String },
    /// A benchmark failed (the failure is in the bundle).
    Failed {
        name: &'a str,
        error: &'a BenchError,
    },
    /// The bundle holds one more result or failure: write it.
    Updated(&'a BenchBundle),
}

impl Suite {
    /// Runs one benchmark (a name of [`crate::BENCHMARKS`]).
    pub fn run_one(&self, name: &str, stop: &AtomicBool) -> Result<BenchResult, BenchError> {
        match name {
            "cpu" => crate::cpu::run(&self.cpu, stop),
            "compression" => crate::compression::run(&self.compression, stop),
            "crypto" => crate::crypto::run(&self.crypto, stop),
            "reads" => crate::reads::run(&self.reads, stop),
            "memory" => crate::memory::run(&self.memory, stop),
            "storage" => crate::storage::run(&self.storage, stop),
            "fileio" => crate::fileio::run(&self.fileio, stop),
            "network" => crate::network::run(&self.network, stop),
            "thermal" => crate::thermal::run(&self.thermal, stop),
            _ => crate::stack::run(&self.stack, stop),
        }
    }

    /// The program a benchmark runs (7-Zip, OpenSSL), if it runs one.
    pub fn program(name: &str) -> Option<&'static crate::external::Program> {
        match name {
            "compression" => Some(&crate::compression::SEVEN_ZIP),
            "crypto" => Some(&crate::crypto::OPENSSL),
            _ => None,
        }
    }

    /// `about 40 s`, `about 9 min`: what a benchmark's options make it take.
    pub fn estimate(&self, name: &str) -> String {
        let seconds = match name {
            "cpu" => 4.0 * self.cpu.seconds * f64::from(self.cpu.repetitions),
            "memory" => 10.0 * f64::from(self.memory.repetitions),
            // 7-Zip's own passes take about 30 s a run on this project's
            // 2-core machine, a pass about 6 s.
            "compression" => {
                let run = self.compression.passes.map_or(30.0, |p| 6.0 * f64::from(p));
                let runs = if self.compression.threads > 1 {
                    2.0
                } else {
                    1.0
                };
                run * runs * f64::from(self.compression.repetitions)
            }
            "crypto" => {
                let runs = if self.crypto.threads > 1 { 5.0 } else { 3.0 };
                runs * f64::from(self.crypto.seconds) * f64::from(self.crypto.repetitions)
            }
            // hdparm's, plain and --direct: 1 s of quiet before each
            // figure, 2 s cached, up to 3 s from the disk.
            "reads" => 14.0 * f64::from(self.reads.repetitions),
            "fileio" => {
                2.0 * self.fileio.blocks_kib.len() as f64
                    * self.fileio.seconds
                    * f64::from(self.fileio.repetitions)
            }
            "network" => (2.0 * self.network.seconds + 2.0) * f64::from(self.network.repetitions),
            "thermal" => self.thermal.idle_before + self.thermal.stress + self.thermal.idle_after,
            _ => return "its time depends on the device".into(),
        };
        if seconds < 120.0 {
            format!("about {seconds:.0} s")
        } else {
            format!("about {:.0} min", seconds / 60.0)
        }
    }

    /// Runs `chosen` in order into `bundle`, whose status ends
    /// `interrupted` (a stop), `failed` (no result) or `complete`.
    pub fn run(
        &self,
        chosen: &[&str],
        bundle: &mut BenchBundle,
        stop: &AtomicBool,
        progress: &mut dyn FnMut(BenchProgress<'_>),
    ) {
        for name in chosen {
            progress(BenchProgress::Starting {
                name,
                estimate: self.estimate(name),
            });
            match self.run_one(name, stop) {
                Ok(mut result) => {
                    crate::note_noise(&mut result);
                    bundle.results.push(result)
                }
                Err(BenchError::Interrupted) => {
                    bundle.status = "interrupted".into();
                    break;
                }
                // A failure while stopping (a read cut by the signal) is the stop.
                Err(_) if stop.load(Ordering::Relaxed) => {
                    bundle.status = "interrupted".into();
                    break;
                }
                Err(error) => {
                    progress(BenchProgress::Failed {
                        name,
                        error: &error,
                    });
                    bundle.failures.push(BenchFailure {
                        benchmark: name.to_string(),
                        error: error.to_string(),
                    });
                }
            }
            progress(BenchProgress::Updated(bundle));
        }
        if bundle.status == "running" {
            bundle.status = if bundle.results.is_empty() {
                "failed"
            } else {
                "complete"
            }
            .into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn suite() -> Suite {
        Suite {
            cpu: CpuOptions {
                max_prime: 100,
                seconds: 10.0,
                threads: 1,
                repetitions: 3,
            },
            compression: CompressionOptions {
                threads: 2,
                dictionary: None,
                passes: None,
                repetitions: 2,
            },
            crypto: CryptoOptions {
                threads: 1,
                rsa_bits: 4096,
                seconds: 3,
                repetitions: 3,
            },
            memory: MemoryOptions {
                elements: Some(1000),
                iterations: 10,
                threads: 1,
                repetitions: 2,
            },
            storage: StorageOptions {
                path: PathBuf::from("."),
                dd_blocks: 1,
                file_mib: 1,
                commits: 1,
                depth: 1,
                repetitions: 1,
            },
            reads: ReadsOptions {
                device: None,
                path: PathBuf::from("."),
                file_mib: 512,
                repetitions: 3,
            },
            fileio: FileioOptions {
                path: PathBuf::from("."),
                files: 2,
                total_mib: 8,
                blocks_kib: vec![4, 1024],
                seconds: 3.0,
                repetitions: 2,
            },
            network: NetworkOptions {
                agent: None,
                token: None,
                seconds: 5.0,
                payloads: vec![64],
                round_trips: 1,
                link_mbit: None,
                repetitions: 3,
            },
            thermal: ThermalOptions {
                settle: 60.0,
                idle_before: 150.0,
                stress: 300.0,
                idle_after: 150.0,
                interval: 2.0,
                threads: 1,
                max_prime: 100,
            },
            stack: StackOptions {
                db: None,
                target: None,
                dir: PathBuf::from("."),
                repetitions: 1,
            },
        }
    }

    fn bundle() -> BenchBundle {
        BenchBundle {
            schema_version: headroom_bundle::SCHEMA_VERSION,
            tool_version: "test".into(),
            command_line: Vec::new(),
            started: "2026-11-26T12:00:00Z".into(),
            ended: None,
            status: "running".into(),
            fingerprint: Default::default(),
            findings: Vec::new(),
            results: Vec::new(),
            failures: Vec::new(),
        }
    }

    #[test]
    fn estimates_follow_the_options() {
        let s = suite();
        assert_eq!(s.estimate("cpu"), "about 2 min");
        assert_eq!(s.estimate("memory"), "about 20 s");
        assert_eq!(s.estimate("network"), "about 36 s");
        assert_eq!(s.estimate("thermal"), "about 10 min");
        // 2 directions × 2 block sizes × 3 s × 2 repetitions.
        assert_eq!(s.estimate("fileio"), "about 24 s");
        assert_eq!(s.estimate("storage"), "its time depends on the device");
        // 7-Zip on one thread and on two, twice.
        assert_eq!(s.estimate("compression"), "about 2 min");
        // RSA and AES, 3 s each, 3 times.
        assert_eq!(s.estimate("crypto"), "about 27 s");
        assert_eq!(s.estimate("reads"), "about 42 s");
    }

    #[test]
    fn a_stop_before_the_first_benchmark_leaves_the_bundle_interrupted() {
        let stop = AtomicBool::new(true);
        let mut b = bundle();
        let mut said = Vec::new();
        suite().run(&["cpu", "memory"], &mut b, &stop, &mut |p| match p {
            BenchProgress::Starting { name, .. } => said.push(format!("starting {name}")),
            BenchProgress::Failed { name, .. } => said.push(format!("failed {name}")),
            BenchProgress::Updated(_) => said.push("updated".into()),
        });
        assert_eq!(b.status, "interrupted");
        assert!(b.results.is_empty() && b.failures.is_empty());
        assert_eq!(said, ["starting cpu"]);
    }
}
