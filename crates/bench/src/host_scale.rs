//! Another host as the prediction scales to it
//! ([`headroom_analysis::prediction::HostScale`]): a Raspberry Pi from the
//! published figures ([`crate::reference`]), a host measured with
//! `headroom bench`, or this host with the server limited to a number of
//! CPUs (`cpus=0.5`, as `headroom emulate` runs it). CPU speed is the
//! ratio of a core's share of the all-cores sysbench figure, measured the
//! same way on both sides (a busy server's cores are all busy, and a core
//! beside a busy one does less where they share a cache or a core); the
//! disk's the random-read IOPS' ratio when both hosts were
//! benched, else the disk as measured (and said).

use crate::reference::{host_value, REFERENCES};
use headroom_analysis::prediction::HostScale;
use headroom_bundle::bench::{is_bench, read, BenchBundle};
use std::path::Path;

/// A host to predict for, as the user named it.
#[derive(Debug, Clone, PartialEq)]
pub enum TargetHost {
    /// A Raspberry Pi of the reference table: its name there, its cores.
    Reference { name: &'static str, cores: u32 },
    /// A `headroom bench` bundle of the host.
    Bench(std::path::PathBuf),
    /// This host, the server limited to these CPUs.
    Cpus(f64),
}

impl TargetHost {
    /// `pi4`, `pi5`, `cpus=N` or a bench bundle's directory.
    pub fn parse(text: &str) -> Result<TargetHost, String> {
        match text.to_ascii_lowercase().as_str() {
            "pi4" => {
                return Ok(TargetHost::Reference {
                    name: "Raspberry Pi 4",
                    cores: 4,
                })
            }
            "pi5" => {
                return Ok(TargetHost::Reference {
                    name: "Raspberry Pi 5",
                    cores: 4,
                })
            }
            _ => {}
        }
        if let Some(cpus) = text.strip_prefix("cpus=") {
            return match cpus.parse::<f64>() {
                Ok(n) if n.is_finite() && n > 0.0 => Ok(TargetHost::Cpus(n)),
                _ => Err(format!(
                    "--for {text}: the CPUs must be a number above 0 (cpus=0.5: half of one)"
                )),
            };
        }
        let dir = Path::new(text);
        if is_bench(dir) {
            return Ok(TargetHost::Bench(dir.to_path_buf()));
        }
        Err(format!(
            "--for {text}: not a host headroom knows: give pi4, pi5, cpus=N (this host, the server limited to N CPUs) or the directory of a `headroom bench` run on the host"
        ))
    }
}

/// A host to predict for and, when the user gave them, its disk's
/// operations a second (an SD card's, for a Pi).
#[derive(Debug, Clone, PartialEq)]
pub struct PredictedHost {
    pub host: TargetHost,
    pub disk_iops: Option<f64>,
}

impl PredictedHost {
    /// A host as [`TargetHost::parse`] takes it, optionally followed by
    /// `,iops=N`: `pi4,iops=1500`, `cpus=0.5,iops=200`.
    pub fn parse(text: &str) -> Result<PredictedHost, String> {
        let Some((host, iops)) = text.rsplit_once(',').filter(|_| !Path::new(text).is_dir()) else {
            return Ok(PredictedHost {
                host: TargetHost::parse(text)?,
                disk_iops: None,
            });
        };
        let disk_iops = match iops.strip_prefix("iops=").map(str::parse::<f64>) {
            Some(Ok(n)) if n.is_finite() && n >= 1.0 => n,
            _ => {
                return Err(format!(
                    "--for {text}: after the host, ',iops=N' gives its disk's operations a second (N at least 1, e.g. pi4,iops=1500)"
                ))
            }
        };
        Ok(PredictedHost {
            host: TargetHost::parse(host)?,
            disk_iops: Some(disk_iops),
        })
    }
}

/// The host as the model scales to it, its name, and what the reader must
/// know of the scaling.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaledHost {
    pub name: String,
    pub scale: HostScale,
    pub notes: Vec<String>,
}

/// The measured host as far as the scaling needs it.
pub struct MeasuredHost<'a> {
    /// CPUs the server could use there.
    pub server_cpus: f64,
    pub architecture: &'a str,
    /// `headroom bench` on the measured host (for CPU speed).
    pub bench: Option<&'a BenchBundle>,
}

/// A core's share of the all-cores prime figure (events/s).
fn per_core(bundle: &BenchBundle) -> Option<f64> {
    let reference = REFERENCES
        .iter()
        .find(|r| r.figure == Some(("cpu", "prime_all")))?;
    let threads: f64 = bundle
        .results
        .iter()
        .find(|r| r.benchmark == "cpu")?
        .settings
        .get("threads")?
        .parse()
        .ok()?;
    Some(host_value(bundle, reference)? / threads.max(1.0))
}

/// A reference machine's all-cores prime figure (events/s).
fn reference_all(name: &str) -> f64 {
    REFERENCES
        .iter()
        .find(|r| r.machine.starts_with(name) && r.figure == Some(("cpu", "prime_all")))
        .map(|r| r.value)
        .expect("the reference table has each Pi's all-cores figure")
}

/// The CPUs of this host that do a reference machine's all-cores work:
/// what `headroom emulate --like` gives its command. Its threads run at
/// this host's speed; only their total is the machine's.
pub fn emulated_cpus(target: &TargetHost, here: &BenchBundle) -> Result<f64, String> {
    let TargetHost::Reference { name, .. } = target else {
        return Err("--like takes pi4 or pi5".to_string());
    };
    let core = per_core(here).ok_or_else(here_cpu_missing)?;
    let cpus = reference_all(name) / core;
    let cores = here.fingerprint.cores.max(1) as f64;
    if cpus > cores {
        return Err(format!(
            "a {name} does {:.0} prime events/s on its cores: {cpus:.2} CPUs of this host, which has {cores}; it cannot be emulated here",
            reference_all(name)
        ));
    }
    Ok(cpus)
}

fn here_cpu_missing() -> String {
    "the bench run of this host has no all-cores sysbench prime figure measured the reference way (headroom bench cpu, max_prime 10000)".to_string()
}

fn random_read_iops(bundle: &BenchBundle) -> Option<f64> {
    let m = bundle.measure("storage", "fio_randread")?;
    (!m.values.is_empty()).then(|| m.values.iter().sum::<f64>() / m.values.len() as f64)
}

/// Scales to `target` from the measured host; refuses a host with more
/// CPU than the server had (nothing measured says where its other limits
/// are).
pub fn scale(wanted: &PredictedHost, here: &MeasuredHost<'_>) -> Result<ScaledHost, String> {
    let target = &wanted.host;
    let mut notes = Vec::new();
    let (mut name, mut scale) = match target {
        TargetHost::Cpus(cpus) => (
            format!("this host, the server on {cpus} CPU"),
            HostScale {
                cpu_speed: 1.0,
                cpus: *cpus,
                disk_speed: 1.0,
                disk_iops: None,
            },
        ),
        TargetHost::Reference { name, cores } => {
            reference_host(wanted, here, name, *cores, &mut notes)?
        }
        TargetHost::Bench(dir) => benched_host(wanted, here, dir, &mut notes)?,
    };
    let capacity = scale.cpu_speed * scale.cpus;
    if capacity > here.server_cpus * 1.05 || scale.cpu_speed > 1.05 {
        return Err(format!(
            "{name} has more CPU than the server had when measured ({capacity:.2} CPUs of the measured host's speed against {:.2}{}): its limits lie beyond anything the search reached; search on that host, or give the server here more CPU",
            here.server_cpus,
            if scale.cpu_speed > 1.05 {
                format!(", and each core {:.2}× as fast", scale.cpu_speed)
            } else {
                String::new()
            }
        ));
    }
    if let Some(iops) = wanted.disk_iops {
        notes.push(format!(
            "disk: {iops:.0} operations a second (given): a request's disk operations, as measured here, over them, as one queue"
        ));
        name = format!("{name}, a disk of {iops:.0} IOPS");
        scale.disk_iops = Some(iops);
    }
    Ok(ScaledHost { name, scale, notes })
}

/// The measured host's CPU speed per core, from its bench run.
fn here_per_core(here: &MeasuredHost<'_>) -> Result<f64, String> {
    let bench = here.bench.ok_or_else(|| {
        "the CPU's speed on the measured host is unknown: give --bench-here DIR, a `headroom bench cpu --out DIR` run on it".to_string()
    })?;
    per_core(bench).ok_or_else(here_cpu_missing)
}

/// A reference host (a Raspberry Pi model) of `cores` cores, scaled by
/// the reference table's CPU figure; its disk as measured here.
fn reference_host(
    wanted: &PredictedHost,
    here: &MeasuredHost<'_>,
    name: &str,
    cores: u32,
    notes: &mut Vec<String>,
) -> Result<(String, HostScale), String> {
    let all = reference_all(name);
    let speed = all / f64::from(cores) / here_per_core(here)?;
    notes.push(format!(
        "CPU: {speed:.2}× the measured host's per core, {cores} cores (sysbench prime on all cores: {all:.0} events/s, leoncode.co.uk)"
    ));
    if wanted.disk_iops.is_none() {
        notes.push(
            "disk: as measured here (the reference table has no random IOPS for a Pi's storage; give a `headroom bench` run on the Pi for its own, or its operations a second: pi4,iops=N)"
                .to_string(),
        );
    }
    if here.architecture != "aarch64" {
        notes.push(format!(
            "architecture: the measured host is {}, a Pi aarch64: the CPU ratio of one benchmark is all the model knows of the difference; PHP and databases may differ by more",
            here.architecture
        ));
    }
    Ok((
        name.to_string(),
        HostScale {
            cpu_speed: speed,
            cpus: f64::from(cores),
            disk_speed: 1.0,
            disk_iops: None,
        },
    ))
}

/// A host measured by a bench run in `dir`, scaled by its CPU and (when
/// both runs measured storage) its random reads against this host's.
fn benched_host(
    wanted: &PredictedHost,
    here: &MeasuredHost<'_>,
    dir: &Path,
    notes: &mut Vec<String>,
) -> Result<(String, HostScale), String> {
    let there = read(dir).map_err(|e| e.to_string())?;
    let their = per_core(&there).ok_or_else(|| {
        format!(
            "{}: no all-cores sysbench prime figure measured the reference way (headroom bench cpu)",
            dir.display()
        )
    })?;
    let speed = their / here_per_core(here)?;
    let cores = there.fingerprint.cores.max(1) as f64;
    notes.push(format!(
        "CPU: {speed:.2}× the measured host's per core (sysbench prime on all cores), {cores} cores"
    ));
    let disk_speed = match (
        random_read_iops(&there),
        here.bench.and_then(random_read_iops),
    ) {
        // Given in operations a second: no ratio needed.
        _ if wanted.disk_iops.is_some() => 1.0,
        (Some(their), Some(ours)) if ours > 0.0 => {
            notes.push(format!(
                "disk: {:.2}× the measured host's random reads (fio, 4 KiB, QD 64: {their:.0} against {ours:.0} IOPS)",
                their / ours
            ));
            their / ours
        }
        _ => {
            notes.push(
                "disk: as measured here (both bench runs need `storage` for its ratio)".to_string(),
            );
            1.0
        }
    };
    if there.fingerprint.architecture != here.architecture {
        notes.push(format!(
            "architecture: {} there, {} here: the CPU ratio of one benchmark is all the model knows of the difference",
            there.fingerprint.architecture, here.architecture
        ));
    }
    Ok((
        there.fingerprint.hostname.clone(),
        HostScale {
            cpu_speed: speed,
            cpus: cores,
            disk_speed,
            disk_iops: None,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_named_as_the_user_writes_them() {
        assert_eq!(
            TargetHost::parse("Pi4"),
            Ok(TargetHost::Reference {
                name: "Raspberry Pi 4",
                cores: 4
            })
        );
        assert_eq!(TargetHost::parse("cpus=0.25"), Ok(TargetHost::Cpus(0.25)));
        for bad in ["cpus=0", "cpus=x", "pi3", "/nonexistent"] {
            assert!(TargetHost::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            PredictedHost::parse("cpus=0.5,iops=200"),
            Ok(PredictedHost {
                host: TargetHost::Cpus(0.5),
                disk_iops: Some(200.0)
            })
        );
        assert_eq!(PredictedHost::parse("pi5").map(|t| t.disk_iops), Ok(None));
        for bad in ["pi4,iops=0", "pi4,iops=x", "pi4,sd", "pi3,iops=100"] {
            assert!(PredictedHost::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_disk_given_by_its_operations_a_second_is_named_and_said() {
        let here = MeasuredHost {
            server_cpus: 1.0,
            architecture: "x86_64",
            bench: None,
        };
        let sd = scale(&PredictedHost::parse("cpus=1,iops=1000").unwrap(), &here).unwrap();
        assert_eq!(sd.scale.disk_iops, Some(1000.0));
        assert!(sd.name.ends_with("a disk of 1000 IOPS"), "{}", sd.name);
        assert_eq!(
            sd.notes.iter().filter(|n| n.starts_with("disk:")).count(),
            1
        );
    }

    #[test]
    fn a_host_with_more_cpu_than_the_server_had_is_refused() {
        let here = MeasuredHost {
            server_cpus: 1.0,
            architecture: "x86_64",
            bench: None,
        };
        let half = scale(&PredictedHost::parse("cpus=0.5").unwrap(), &here).unwrap();
        assert_eq!(half.scale.cpus, 0.5);
        let error = scale(&PredictedHost::parse("cpus=2").unwrap(), &here).unwrap_err();
        assert!(error.contains("more CPU than the server had"), "{error}");
        // A Pi needs this host's own CPU figure.
        let error = scale(&PredictedHost::parse("pi4").unwrap(), &here).unwrap_err();
        assert!(error.contains("--bench-here"), "{error}");
    }
}
