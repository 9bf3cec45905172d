//! The testbed site for integration tests: a SQLite dataset, the site
//! served on a free port, processes killed when a test ends.
#![allow(dead_code)]

use super::{free_port, headroom, run, stdout_json, temp_dir, wait_for_port};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

/// A fresh directory with a SQLite testbed dataset of `size` in it.
pub fn sqlite_dataset(name: &str, size: &str) -> (PathBuf, String) {
    let dir = temp_dir(name);
    std::fs::create_dir_all(&dir).unwrap();
    let db = format!("sqlite:{}", dir.join("lms.db").display());
    init(&db, size, &dir.join("files"), "1");
    (dir, db)
}

/// A process killed when the test ends.
pub struct Process {
    pub child: Child,
    pub port: u16,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `headroom testbed init --json`; returns the report.
pub fn init(db: &str, size: &str, data_dir: &Path, seed: &str) -> serde_json::Value {
    let output = run(&[
        "testbed",
        "init",
        "--size",
        size,
        "--db",
        db,
        "--data-dir",
        data_dir.to_str().unwrap(),
        "--seed",
        seed,
        "--force",
        "--json",
    ]);
    assert!(
        output.status.success(),
        "init on {db} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout_json(&output)
}

/// The testbed's own journey for the dataset (`testbed plan`) against the
/// site on `port`, written to `dir`/journey.yaml.
pub fn journey(db: &str, port: u16, dir: &Path) -> PathBuf {
    let output = run(&[
        "testbed",
        "plan",
        "--db",
        db,
        "--base-url",
        &format!("http://127.0.0.1:{port}"),
    ]);
    assert!(
        output.status.success(),
        "plan: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let path = dir.join("journey.yaml");
    std::fs::write(&path, &output.stdout).unwrap();
    path
}

/// `headroom testbed serve` on a free port of 127.0.0.1.
pub fn serve(db: &str, extra: &[&str]) -> Process {
    let port = free_port();
    let mut child = headroom()
        .args(["testbed", "serve", "--db", db, "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .expect("testbed serve starts");
    wait_for_port(port, &mut child, "testbed serve");
    Process { child, port }
}

/// The testbed's own counters (`/_testbed/stats`): logins and forum posts
/// and their distinct users, requests served.
pub fn stats(port: u16) -> serde_json::Value {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "GET /_testbed/stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let body = response.split("\r\n\r\n").nth(1).unwrap_or("");
    serde_json::from_str(body.trim()).unwrap_or_else(|e| panic!("{e}: {response}"))
}
