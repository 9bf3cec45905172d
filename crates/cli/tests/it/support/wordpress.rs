//! WordPress (Debian's package, 6.1, on MariaDB), installed and seeded by
//! scripts/wordpress (idempotent: the test runs it, and it only checks once
//! done): the blog "Headroom School" with 12 posts "Lesson N: Topic" (2
//! with a featured image) at /%postname%/, served by nginx and php-fpm on
//! a free port of 127.0.0.1 (the site takes its address from the request,
//! so any port does). Its accounts are student1..student5 (password
//! Hr-wp-pass-N, subscribers); nginx writes `dir`/access.log in the
//! `combined` format.
#![allow(dead_code)]

use super::free_port;
use super::php_site::{nginx, php_fpm, pool, setup_script, Daemon};
use std::path::Path;
use std::process::Command;

/// The running blog, stopped when the test ends (nginx first).
pub struct WordPress {
    pub port: u16,
    _nginx: Daemon,
    _fpm: Daemon,
}

impl WordPress {
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{}", self.port, path)
    }
}

/// Runs scripts/wordpress and serves the blog from `dir` (its nginx and
/// php-fpm files, sockets and logs).
pub fn start(dir: &Path) -> WordPress {
    let ready = setup_script("wordpress");
    assert!(
        ready.lines().any(|l| l == "WORDPRESS_READY=1"),
        "scripts/wordpress did not say WORDPRESS_READY=1:\n{ready}"
    );
    let (fpm, socket) = pool(dir, "", &mut Command::new(php_fpm()));
    let port = free_port();
    // Debian's fastcgi_params pass HTTP_HOST as $host, without the port:
    // WordPress would then redirect every page to port 80. Uploads and the
    // themes are under Debian's WP_CONTENT_DIR, /var/lib/wordpress/wp-content.
    // /favicon.ico goes to WordPress too (its do_favicon redirects).
    std::fs::write(
        dir.join("nginx.conf"),
        format!(
            "user root;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/nginx-error.log;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n  include /etc/nginx/mime.types;\n\
             access_log {d}/access.log combined;\n\
             client_body_temp_path {d}/tmp;\n  fastcgi_temp_path {d}/tmp;\n\
             client_max_body_size 16m;\n\
             server {{\n    listen 127.0.0.1:{port};\n    root /usr/share/wordpress;\n    index index.php;\n\
             location / {{ try_files $uri $uri/ /index.php?$args; }}\n\
             location ^~ /wp-content/ {{\n      alias /var/lib/wordpress/wp-content/;\n\
             location ~ \\.php$ {{ deny all; }}\n    }}\n\
             location ~ \\.php$ {{\n      try_files $uri =404;\n\
             include /etc/nginx/fastcgi_params;\n\
             fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;\n\
             fastcgi_param HTTP_HOST $http_host;\n\
             fastcgi_pass unix:{s};\n    }}\n  }}\n}}\n",
            d = dir.display(),
            s = socket.display()
        ),
    )
    .unwrap();
    WordPress {
        port,
        _nginx: nginx(&dir.join("nginx.conf"), port),
        _fpm: fpm,
    }
}
