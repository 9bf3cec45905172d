//! The ARM binaries (`scripts/release`, run by scripts/test with
//! `--profile qemu-test` beside the tests' first pass) under
//! qemu-user-static: version,
//! doctor, the agent serving samples and /metrics, a short load, a short
//! CPU benchmark. Then the container image built FROM scratch around one of
//! them, and the systemd unit in deploy/.

use crate::support::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const TARGETS: [(&str, &str); 2] = [
    ("aarch64-unknown-linux-musl", "qemu-aarch64-static"),
    ("armv7-unknown-linux-gnueabihf", "qemu-arm-static"),
];

/// qemu runs the 32-bit binary with Debian's ARM glibc (libc6-armhf-cross),
/// as a Pi runs it with its own.
const ARM_GLIBC: &str = "/usr/arm-linux-gnueabihf";

fn qemu(qemu: &str) -> Command {
    let mut command = Command::new(qemu);
    command.env("QEMU_LD_PREFIX", ARM_GLIBC);
    command
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn binary(target: &str) -> PathBuf {
    let path = repo().join("dist").join(format!("headroom-{target}"));
    assert!(
        path.exists(),
        "{} is missing: scripts/test builds it with `scripts/release --profile qemu-test {target}`",
        path.display()
    );
    path
}

fn emulated(qemu: &str, target: &str, args: &[&str]) -> Output {
    self::qemu(qemu)
        .arg(binary(target))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{qemu} (Debian's qemu-user-static): {e}"))
}

/// Under scripts/test, which builds the ARM binaries beside the suite
/// and writes the build's exit status to `$HEADROOM_ARM_BUILT` when it
/// ends: waits for it (up to 20 minutes), and fails when the build did.
/// Run by hand, the binaries in dist/ are taken as they are.
fn wait_for_the_arm_builds() {
    let Some(status) = std::env::var_os("HEADROOM_ARM_BUILT") else {
        return;
    };
    let status = PathBuf::from(status);
    let log = status.with_file_name("arm-builds.log");
    let waited = std::time::Instant::now();
    while !status.exists() {
        assert!(
            waited.elapsed() < std::time::Duration::from_secs(20 * 60),
            "the ARM builds did not end in 20 minutes: {}",
            log.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let code = std::fs::read_to_string(&status).unwrap_or_default();
    assert_eq!(
        code.trim(),
        "0",
        "the ARM builds failed (scripts/release --profile qemu-test): {}",
        log.display()
    );
}

fn get(port: u16, path: &str) -> String {
    http_get(port, path, None).1
}

#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn arm_binaries_run_under_qemu() {
    wait_for_the_arm_builds();
    requires!(
        program("qemu-aarch64-static", "qemu-user-static"),
        program("qemu-arm-static", "qemu-user-static"),
        program(
            "/usr/arm-linux-gnueabihf/lib/ld-linux-armhf.so.3",
            "libc6-armhf-cross"
        ),
        program(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../dist/headroom-aarch64-unknown-linux-musl"
            ),
            "scripts/release --profile qemu-test aarch64-unknown-linux-musl"
        ),
        program(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../dist/headroom-armv7-unknown-linux-gnueabihf"
            ),
            "scripts/release --profile qemu-test armv7-unknown-linux-gnueabihf"
        ),
    );
    // Quiet: scripts/test builds the ARM binaries beside its passes, at
    // the idle priority; this test waited for them.
    let _guard = serial();
    let server = TestServer::start(|_| Reply::default());
    for (target, qemu) in TARGETS {
        let path = binary(target);
        let header = std::fs::read(&path).unwrap();
        // ELF, for the machine named.
        assert_eq!(&header[..4], b"\x7fELF", "{target}");
        let machine = u16::from_le_bytes([header[18], header[19]]);
        assert_eq!(
            machine,
            if target.starts_with("aarch64") {
                183
            } else {
                40
            },
            "{target}: e_machine"
        );
        let size = header.len() as f64 / 1e6;

        let version = emulated(qemu, target, &["--version"]);
        assert!(
            String::from_utf8_lossy(&version.stdout).starts_with("headroom "),
            "{target}: {}",
            text(&version)
        );
        let doctor = emulated(qemu, target, &["doctor"]);
        assert!(doctor.status.success(), "{target}: {}", text(&doctor));
        assert!(text(&doctor).contains("memory"), "{}", text(&doctor));

        // The agent: listening, samples after a second or two, /metrics.
        let port = free_port();
        let started = Instant::now();
        let mut agent = self::qemu(qemu)
            .arg(&path)
            .args(["agent", "--listen", &format!("127.0.0.1:{port}")])
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for_port(port, &mut agent, "the emulated agent");
        let listening = started.elapsed();
        std::thread::sleep(Duration::from_millis(2500));
        let samples: serde_json::Value =
            serde_json::from_str(&get(port, "/samples?since=0")).unwrap();
        let _ = agent.kill();
        let _ = agent.wait();
        assert!(
            !samples["samples"].as_array().unwrap().is_empty(),
            "{target}: {samples}"
        );
        assert!(
            samples["samples"][0]["resources"]["memory_used_pct"]
                .as_f64()
                .unwrap()
                > 0.0,
            "{samples}"
        );

        // A short load.
        let out = emulated(
            qemu,
            target,
            &[
                "load",
                &server.url("/"),
                "-c",
                "2",
                "-d",
                "2s",
                "--json",
                "--out",
                temp_dir(&format!("qemu-{target}")).to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "{target}: {}", text(&out));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            json["total"]["count"].as_u64().unwrap() > 10,
            "{}",
            json["total"]
        );
        assert_eq!(json["total"]["errors"], 0);

        // A short CPU benchmark (sysbench's prime test).
        let bench = emulated(
            qemu,
            target,
            &[
                "bench",
                "cpu",
                "--cpu-time",
                "1s",
                "--repetitions",
                "1",
                "--max-prime",
                "2000",
                "--json",
                "--out",
                temp_dir(&format!("qemu-bench-{target}")).to_str().unwrap(),
            ],
        );
        assert!(bench.status.success(), "{target}: {}", text(&bench));
        eprintln!(
            "{target}: {size:.1} MB; the emulated agent listened after {} ms; {} requests in 2 s",
            listening.as_millis(),
            json["total"]["count"]
        );
    }
}

/// The image FROM scratch holds the static binary alone, runs it as
/// nobody, with the agent as its entry point. Starting it needs a host
/// that lets podman set resource limits; where it cannot (this sandbox),
/// the binary taken out of the image runs instead, and the test says so.
#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn the_container_image_holds_the_static_agent() {
    wait_for_the_arm_builds();
    requires!(
        program("podman", "podman"),
        program("qemu-aarch64-static", "qemu-user-static"),
        program(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../dist/headroom-aarch64-unknown-linux-musl"
            ),
            "scripts/release --profile qemu-test aarch64-unknown-linux-musl"
        ),
    );
    // Quiet: scripts/test builds the ARM binaries beside its passes, at
    // the idle priority; this test waited for them.
    let _guard = serial();
    let (target, qemu) = TARGETS[0];
    binary(target);
    let tag = "localhost/headroom-agent-test:latest";
    let build = Command::new("podman")
        .current_dir(repo())
        .args([
            "build",
            "-q",
            "--arch",
            "arm64",
            "-f",
            "deploy/Containerfile",
            "--build-arg",
            &format!("TARGET={target}"),
            "-t",
            tag,
            ".",
        ])
        .output()
        .unwrap();
    assert!(build.status.success(), "podman build: {}", text(&build));
    let inspect = Command::new("podman")
        .args(["image", "inspect", tag])
        .output()
        .unwrap();
    let inspect: serde_json::Value = serde_json::from_slice(&inspect.stdout).unwrap();
    let config = &inspect[0]["Config"];
    assert_eq!(config["User"], "65534:65534");
    assert_eq!(
        config["Entrypoint"],
        serde_json::json!([
            "/headroom",
            "agent",
            "--proc",
            "/host/proc",
            "--sys",
            "/host/sys"
        ])
    );
    assert_eq!(inspect[0]["Architecture"], "arm64");
    // One layer: the binary, byte for byte.
    let dir = temp_dir("image");
    std::fs::create_dir_all(&dir).unwrap();
    let archive = dir.join("image.tar");
    let save = Command::new("podman")
        .args(["save", "--format", "docker-archive", "-o"])
        .arg(&archive)
        .arg(tag)
        .output()
        .unwrap();
    assert!(save.status.success(), "podman save: {}", text(&save));
    let untar = Command::new("tar")
        .arg("-xf")
        .arg(&archive)
        .arg("-C")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(untar.status.success());
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let layers = manifest[0]["Layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1, "{manifest}");
    let list = Command::new("tar")
        .arg("-tf")
        .arg(dir.join(layers[0].as_str().unwrap()))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&list.stdout).trim(), "headroom");
    let extract = Command::new("tar")
        .arg("-xf")
        .arg(dir.join(layers[0].as_str().unwrap()))
        .arg("-C")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(extract.status.success());
    assert_eq!(
        std::fs::read(dir.join("headroom")).unwrap(),
        std::fs::read(binary(target)).unwrap()
    );

    // Started as the README says, with the host's /proc and /sys.
    let port = free_port();
    let run = Command::new("podman")
        .args([
            "run",
            "-d",
            "--rm",
            "--arch",
            "arm64",
            "--read-only",
            "--network",
            "host",
            "--pid",
            "host",
            "-v",
            "/proc:/host/proc:ro",
            "-v",
            "/sys:/host/sys:ro",
            tag,
            "--listen",
        ])
        .arg(format!("127.0.0.1:{port}"))
        .output()
        .unwrap();
    if run.status.success() {
        let id = String::from_utf8_lossy(&run.stdout).trim().to_string();
        std::thread::sleep(Duration::from_secs(3));
        let samples = get(port, "/samples?since=0");
        let _ = Command::new("podman").args(["rm", "-f", &id]).output();
        assert!(samples.contains("memory_used_pct"), "{samples}");
    } else {
        eprintln!(
            "podman cannot start containers on this machine ({}): running the image's binary as its entry point would",
            String::from_utf8_lossy(&run.stderr).trim()
        );
        let mut agent = Command::new(qemu)
            .arg(dir.join("headroom"))
            .args(["agent", "--proc", "/proc", "--sys", "/sys", "--listen"])
            .arg(format!("127.0.0.1:{port}"))
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for_port(port, &mut agent, "the image's agent");
        std::thread::sleep(Duration::from_millis(2500));
        let samples = get(port, "/samples?since=0");
        let _ = agent.kill();
        let _ = agent.wait();
        assert!(samples.contains("memory_used_pct"), "{samples}");
    }
    let _ = Command::new("podman").args(["rmi", "-f", tag]).output();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// systemd reads the shipped unit without a complaint (its binary put
/// where the unit expects it, in a copy).
#[test]
fn the_systemd_unit_is_valid() {
    requires!(program("systemd-analyze", "systemd"));
    let dir = temp_dir("unit");
    std::fs::create_dir_all(&dir).unwrap();
    let unit = std::fs::read_to_string(repo().join("deploy/headroom-agent.service")).unwrap();
    for hardening in [
        "DynamicUser=yes",
        "ProtectSystem=strict",
        "NoNewPrivileges=yes",
    ] {
        assert!(unit.contains(hardening), "{hardening}");
    }
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_headroom"));
    let copy = dir.join("headroom-agent.service");
    std::fs::write(
        &copy,
        unit.replace("/usr/local/bin/headroom", exe.to_str().unwrap()),
    )
    .unwrap();
    let verify = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&copy)
        .output()
        .expect("systemd-analyze (Debian's systemd package)");
    assert!(
        verify.status.success() && verify.stderr.is_empty(),
        "{}",
        text(&verify)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
