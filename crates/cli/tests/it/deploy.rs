//! The launch recipes of deploy/, run for real: the sbatch script on a
//! Slurm cluster on this machine (scripts/slurm-local), the Ansible
//! playbook over local-connection hosts, and the Kubernetes manifests
//! checked against the API's schemas (no cluster here).

use crate::support::site::{journey, serve, sqlite_dataset};
use crate::support::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn must(command: &mut Command, what: &str) -> String {
    let output = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{what} failed:\n{out}");
    out
}

/// The merged bundle of `shards` shards: complete (starvation aside, on
/// two cores beside the server), and the sum of its shards.
fn check_merged(out: &Path, shards: usize, users: u64) {
    let merged = out.join("merged");
    let m = manifest(&merged);
    assert_eq!(m["merged"]["shards"].as_array().unwrap().len(), shards);
    for reason in m["merged"]["partial"].as_array().unwrap() {
        assert!(reason.as_str().unwrap().contains("starved"), "{reason}");
    }
    let sum: u64 = (0..shards)
        .map(|i| {
            let shard = manifest(&out.join(format!("shard-{i}")));
            assert_eq!(shard["shard"]["index"], i as u64);
            assert_eq!(shard["status"], "complete");
            shard["summary"]["total"]["count"].as_u64().unwrap()
        })
        .sum();
    let total = m["summary"]["total"]["count"].as_u64().unwrap();
    assert!(total > 0);
    assert_eq!(total, sum);
    assert_eq!(m["profile"]["users"], users);
    let errors = m["summary"]["total"]["errors"].as_u64().unwrap();
    assert_eq!(errors, 0, "the journey failed: {}", m["summary"]["total"]);
}

#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn slurm_runs_the_shards_against_the_testbed_and_merges() {
    requires!(
        root(),
        program("sbatch", "slurm-wlm"),
        program("scontrol", "slurm-wlm"),
        program("munged", "munge"),
    );
    let _serial = serial();
    must(
        Command::new(repo().join("scripts/slurm-local")).env("HEADROOM_SLURM_CPUS", "8"),
        "scripts/slurm-local",
    );
    let (dir, db) = sqlite_dataset("slurm", "s");
    let site = serve(&db, &[]);
    let scenario = journey(&db, site.port, &dir);
    let out = dir.join("out");
    let exports = format!(
        "ALL,HEADROOM={},SCENARIO={},TARGET=http://127.0.0.1:{}/,USERS=8,DURATION=5s,OUT={},START_DELAY=4,HEADROOM_ARGS=--ramp-up 1s",
        env!("CARGO_BIN_EXE_headroom"),
        scenario.display(),
        site.port,
        out.display()
    );
    let submitted = must(
        Command::new("sbatch")
            .arg("--parsable")
            .arg("--ntasks=4")
            .arg(format!("--chdir={}", dir.display()))
            .arg(format!("--output={}", dir.join("slurm.out").display()))
            .arg(format!("--export={exports}"))
            .arg(repo().join("deploy/headroom-shards.sbatch"))
            .env_remove("HEADROOM_SHARD"),
        "sbatch",
    );
    let job = submitted.trim().split(';').next().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(120);
    let state = loop {
        let shown = must(
            Command::new("scontrol").args(["show", "job", "-o", &job]),
            "scontrol",
        );
        let state = shown
            .split_whitespace()
            .find_map(|f| f.strip_prefix("JobState="))
            .unwrap_or("")
            .to_string();
        if !["PENDING", "RUNNING", "CONFIGURING", "COMPLETING", ""].contains(&state.as_str()) {
            break shown;
        }
        assert!(Instant::now() < deadline, "job {job} still {state}");
        std::thread::sleep(Duration::from_millis(500));
    };
    let log = std::fs::read_to_string(dir.join("slurm.out")).unwrap_or_default();
    assert!(
        state.contains("JobState=COMPLETED") && state.contains("ExitCode=0:0"),
        "{state}\n{log}"
    );
    check_merged(&out, 4, 8);
}

#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn ansible_runs_the_shards_on_its_hosts_and_merges() {
    requires!(program("ansible-playbook", "ansible-core"));
    let _serial = serial();
    let (dir, db) = sqlite_dataset("ansible", "s");
    let site = serve(&db, &[]);
    let scenario = journey(&db, site.port, &dir);
    let out = dir.join("out");
    let data: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .map(|p| p.display().to_string())
        .collect();
    let files = serde_json::to_string(&data).unwrap();
    let output = must(
        Command::new("ansible-playbook")
            .arg("-i")
            .arg(repo().join("deploy/hosts.ini"))
            .arg(repo().join("deploy/headroom-shards.yml"))
            .args([
                "-e",
                &format!("headroom_binary={}", env!("CARGO_BIN_EXE_headroom")),
            ])
            .args(["-e", &format!("scenario={}", scenario.display())])
            .args(["-e", &format!("{{\"scenario_files\": {files}}}")])
            .args(["-e", &format!("target=http://127.0.0.1:{}/", site.port)])
            .args([
                "-e",
                "users=8",
                "-e",
                "duration=5s",
                "-e",
                "start_delay_s=5",
            ])
            .args(["-e", r#"{"headroom_args": ["--ramp-up", "1s"]}"#])
            .args(["-e", &format!("local_out={}", out.display())])
            .env("ANSIBLE_NOCOLOR", "1")
            .env_remove("HEADROOM_SHARD"),
        "ansible-playbook",
    );
    assert!(output.contains("failed=0"), "{output}");
    check_merged(&out, 4, 8);
}

#[test]
fn kubernetes_manifests_pass_the_api_schemas_and_bad_ones_do_not() {
    requires!(program("python3", "python3"));
    let _guard = light();
    let validate = repo().join("scripts/k8s-validate");
    must(&mut Command::new(&validate), "scripts/k8s-validate");
    let dir = temp_dir("k8s");
    std::fs::create_dir_all(&dir).unwrap();
    let job = std::fs::read_to_string(repo().join("deploy/headroom-job.yaml")).unwrap();
    let bad = dir.join("bad-job.yaml");
    std::fs::write(
        &bad,
        job.replace("completionMode: Indexed", "completionMode: Indexd"),
    )
    .unwrap();
    let output = Command::new(&validate).arg(&bad).output().unwrap();
    assert!(!output.status.success());
    assert!(text(&output).contains("Indexd"), "{}", text(&output));
    std::fs::write(
        &bad,
        job.replace("readOnlyRootFilesystem", "readOnlyRootFilesytem"),
    )
    .unwrap();
    let output = Command::new(&validate).arg(&bad).output().unwrap();
    assert!(!output.status.success());
    assert!(
        text(&output).contains("readOnlyRootFilesytem"),
        "{}",
        text(&output)
    );
}
