//! A failed TLS handshake with Debian's nginx said as it is: a self-signed
//! or expired certificate, or a TLS version headroom does not speak, is not
//! taken for a server speaking plain HTTP (nginx answers a plain request
//! sent to its TLS port with a 400 of its own); a plain HTTP port given as
//! https:// still is.

use crate::support::php_site::{nginx, Daemon};
use crate::support::{free_port, light, program, requires, run, temp_dir};
use std::path::Path;

/// nginx with four servers on 127.0.0.1: a self-signed certificate (with
/// HTTP/2 by ALPN), an expired one, TLS 1.0 only, and plain HTTP.
struct Site {
    _nginx: Daemon,
    self_signed: u16,
    expired: u16,
    tls1: u16,
    plain: u16,
}

/// A certificate for 127.0.0.1 valid from `from` to `to` (years), signed by
/// its own key, written as `name`.pem and `name`.key in `dir`.
fn certificate(dir: &Path, name: &str, from: i32, to: i32) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    params.not_before = rcgen::date_time_ymd(from, 1, 1);
    params.not_after = rcgen::date_time_ymd(to, 1, 1);
    let cert = params.self_signed(&key).unwrap();
    std::fs::write(dir.join(format!("{name}.pem")), cert.pem()).unwrap();
    std::fs::write(dir.join(format!("{name}.key")), key.serialize_pem()).unwrap();
}

fn start(dir: &Path) -> Site {
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    certificate(dir, "self-signed", 2020, 4000);
    certificate(dir, "expired", 2020, 2021);
    let (self_signed, expired, tls1, plain) = (free_port(), free_port(), free_port(), free_port());
    let d = dir.display();
    let files = |name: &str| {
        format!("ssl_certificate {d}/{name}.pem;\n    ssl_certificate_key {d}/{name}.key;")
    };
    std::fs::write(
        dir.join("nginx.conf"),
        format!(
            "user root;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections 64; }}\n\
             http {{\n  client_body_temp_path {d}/tmp;\n  access_log {d}/access.log;\n  root {d};\n\
             server {{\n    listen 127.0.0.1:{self_signed} ssl http2;\n    {}\n  }}\n\
             server {{\n    listen 127.0.0.1:{expired} ssl;\n    {}\n  }}\n\
             server {{\n    listen 127.0.0.1:{tls1} ssl;\n    ssl_protocols TLSv1;\n    \
             ssl_ciphers DEFAULT:@SECLEVEL=0;\n    {}\n  }}\n\
             server {{\n    listen 127.0.0.1:{plain};\n  }}\n}}\n",
            files("self-signed"),
            files("expired"),
            files("self-signed"),
        ),
    )
    .unwrap();
    // nginx opens every listening socket before it serves any.
    Site {
        _nginx: nginx(&dir.join("nginx.conf"), plain),
        self_signed,
        expired,
        tls1,
        plain,
    }
}

/// `load https://127.0.0.1:PORT/`'s refusal (extra arguments after it).
fn refusal(port: u16, extra: &[&str]) -> String {
    let url = format!("https://127.0.0.1:{port}/");
    let mut args = vec!["load", url.as_str(), "-n", "1"];
    args.extend_from_slice(extra);
    let output = run(&args);
    let said = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(3), "{said}");
    said
}

#[test]
fn nginx_tls_failures_are_named_not_taken_for_plain_http() {
    requires!(program("nginx", "nginx"));
    let _guard = light();
    let dir = temp_dir("tls-errors");
    let site = start(&dir);
    let said = refusal(site.self_signed, &[]);
    assert!(
        said.contains("not signed by an authority this machine trusts")
            && !said.contains("plain HTTP"),
        "{said}"
    );
    let said = refusal(site.self_signed, &["--http", "2"]);
    assert!(
        said.contains("not signed by an authority") && !said.contains("plain HTTP"),
        "{said}"
    );
    let said = refusal(site.expired, &[]);
    assert!(
        said.contains("the server's certificate expired on 2021-01-01")
            && !said.contains("plain HTTP"),
        "{said}"
    );
    // TLS 1.0 only (OpenSSL 3 still serves it at security level 0): the
    // server ends the handshake, as it does for a client without TLS 1.0.
    let said = refusal(site.tls1, &["--insecure"]);
    assert!(
        said.contains("the server ended the handshake (protocol version)")
            && !said.contains("plain HTTP"),
        "{said}"
    );
    // A plain HTTP port given as https:// is still said to be one.
    let said = refusal(site.plain, &[]);
    assert!(
        said.contains("answered in plain HTTP, not TLS: use http://"),
        "{said}"
    );
    drop(site);
    std::fs::remove_dir_all(&dir).unwrap();
}
