//! `headroom scenario from-har` on recordings shaped like the ones that
//! went wrong (a MediaWiki login and edit in Chromium): a value the user
//! typed stays literal however a later page shows it, a token in a
//! multipart body is correlated like one in a form, a secret is written
//! neither in the scenario nor on the terminal, and a long recording
//! imports in time and memory that grow with its length, not its square.

use crate::support;

use crate::support::{minutes, requires, run, temp_dir, text};
use serde_json::{json, Value};
use std::path::Path;

/// A HAR entry: `post` is (mimeType, text); `body` the response's HTML,
/// JSON or script; `cookie` a Set-Cookie header.
struct E<'a> {
    at_ms: u64,
    method: &'a str,
    url: String,
    post: Option<(&'a str, String)>,
    status: u16,
    mime: &'a str,
    body: String,
    location: Option<&'a str>,
    cookie: Option<String>,
}

fn entry(e: E<'_>) -> Value {
    let t = 1_795_000_000_000u64 + e.at_ms;
    let started = humantime::format_rfc3339_millis(
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(t),
    )
    .to_string();
    let mut headers = vec![json!({"name": "Content-Type", "value": e.mime})];
    if let Some(l) = e.location {
        headers.push(json!({"name": "Location", "value": l}));
    }
    if let Some(c) = &e.cookie {
        headers.push(json!({"name": "Set-Cookie", "value": c}));
    }
    let mut request = json!({"method": e.method, "url": e.url, "headers": []});
    if let Some((mime, text)) = e.post {
        request["postData"] = json!({"mimeType": mime, "text": text});
        request["headers"] = json!([{"name": "Content-Type", "value": mime}]);
    }
    json!({
        "startedDateTime": started, "time": 20,
        "request": request,
        "response": {"status": e.status, "headers": headers,
                     "content": {"mimeType": e.mime, "text": e.body}},
    })
}

fn get<'a>(at_ms: u64, url: &str, mime: &'a str, body: String) -> E<'a> {
    E {
        at_ms,
        method: "GET",
        url: url.to_string(),
        post: None,
        status: 200,
        mime,
        body,
        location: None,
        cookie: None,
    }
}

fn post<'a>(at_ms: u64, url: &str, mime: &'a str, text: String) -> E<'a> {
    E {
        at_ms,
        method: "POST",
        url: url.to_string(),
        post: Some((mime, text)),
        status: 200,
        mime: "text/html; charset=UTF-8",
        body: "<html><body>saved</body></html>".into(),
        location: None,
        cookie: None,
    }
}

const BOUNDARY: &str = "----WebKitFormBoundaryq7Rk2LmN8pX4";

fn multipart(fields: &[(&str, &str)]) -> String {
    let mut body = String::new();
    for (name, value) in fields {
        body.push_str(&format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        ));
    }
    body.push_str(&format!("--{BOUNDARY}--\r\n"));
    body
}

fn edit_page(title: &str, token: &str, start: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><title>Editing {title} - Wiki</title></head><body>\
         <h1 id=\"firstHeading\">Editing <span>{title}</span></h1>\
         <p>See <a href=\"/index.php?title=Help:Editing\">Editing help</a> for help.</p>\
         <form id=\"editform\" method=\"post\" action=\"/index.php?title={title}&amp;action=submit\" enctype=\"multipart/form-data\">\
         <input type=\"hidden\" value=\"{start}\" name=\"wpStarttime\">\
         <input type=\"hidden\" value=\"{token}\" name=\"wpEditToken\">\
         <textarea name=\"wpTextbox1\"></textarea>\
         <input type=\"submit\" name=\"wpSave\" value=\"Save changes\"></form>\
         <div>Editing {title} now</div></body></html>"
    )
}

fn har(entries: Vec<Value>) -> String {
    json!({"log": {"version": "1.2", "entries": entries}}).to_string()
}

const EDIT_MIME: &str = "multipart/form-data; boundary=----WebKitFormBoundaryq7Rk2LmN8pX4";

/// Login (a password form), then an edit of a page whose title was typed
/// in the URL; the edit form is multipart, its token a hidden input.
fn wiki_recording() -> String {
    let login_page = "<html><head><title>Log in - Wiki</title></head><body>\
        <form method=\"post\" action=\"/index.php?title=Special:UserLogin\">\
        <input name=\"wpName\" type=\"text\"><input name=\"wpPassword\" type=\"password\">\
        <input type=\"hidden\" name=\"wpLoginToken\" value=\"6f1c0e9a2b7d4e58a3c9+\\\">\
        <button name=\"wpLoginAttempt\">Log in</button></form></body></html>";
    let title = "Headroom:Sandbox2026";
    har(vec![
        entry(get(
            0,
            "http://wiki.test/index.php?title=Special:UserLogin",
            "text/html; charset=UTF-8",
            login_page.into(),
        )),
        entry(post(
            1500,
            "http://wiki.test/index.php?title=Special:UserLogin",
            "application/x-www-form-urlencoded",
            "wpName=Alice&wpPassword=Tr0ub4dor%26x&wpLoginToken=6f1c0e9a2b7d4e58a3c9%2B%5C&wpLoginAttempt=Log+in".into(),
        )),
        entry(get(
            3000,
            &format!("http://wiki.test/index.php?title={title}&action=edit"),
            "text/html; charset=UTF-8",
            edit_page(title, "d41d8cd98f00b204e9800998ecf8427e+\\", "20261126053000"),
        )),
        entry(post(
            6000,
            &format!("http://wiki.test/index.php?title={title}&action=submit"),
            EDIT_MIME,
            multipart(&[
                ("wpStarttime", "20261126053000"),
                ("wpEditToken", "d41d8cd98f00b204e9800998ecf8427e+\\"),
                ("wpTextbox1", "Hello from a browser.\r\nSecond line."),
                ("wpSave", "Save changes"),
            ]),
        )),
        // The password again, under other names: a form that asks for it
        // to confirm, and a JSON call; an API key typed into a header.
        entry(post(
            7000,
            "http://wiki.test/index.php?title=Special:ChangeEmail",
            "application/x-www-form-urlencoded",
            "wpNewEmail=alice%40example.org&confirm=Tr0ub4dor%26x".into(),
        )),
        entry(post(
            7500,
            "http://wiki.test/api.php",
            "application/json",
            r#"{"action": "reauth", "secret": "Tr0ub4dor&x", "note": "key Tr0ub4dor&x"}"#.into(),
        )),
        entry(E {
            post: Some((
                "application/x-www-form-urlencoded",
                "x=1&x=2&check=Tr0ub4dor%26x".into(),
            )),
            ..post(8000, "http://wiki.test/api.php?action=check", "", String::new())
        }),
        entry(post(
            8500,
            "http://wiki.test/api.php?api_key=AKx9f8e7d6c5b4",
            "application/x-www-form-urlencoded",
            "action=purge".into(),
        )),
    ])
}

fn import(dir: &Path, har_text: &str) -> (String, String) {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("rec.har");
    std::fs::write(&path, har_text).unwrap();
    let out_file = dir.join("rec.yaml");
    let out = run(&[
        "scenario",
        "from-har",
        path.to_str().unwrap(),
        "-o",
        out_file.to_str().unwrap(),
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    (std::fs::read_to_string(&out_file).unwrap(), said)
}

#[test]
fn a_typed_title_stays_literal_and_a_multipart_token_is_correlated() {
    let dir = temp_dir("har-wiki");
    let (yaml, said) = import(&dir, &wiki_recording());
    // The title was typed in the URL before any page showed it: a
    // constant, sent as recorded, never read from a page's text.
    assert!(
        yaml.contains("\"title\": \"Headroom:Sandbox2026\""),
        "the typed title is literal:\n{yaml}"
    );
    assert!(!yaml.contains("regex:"), "no free-text pattern:\n{yaml}");
    assert!(!said.contains("correlated: title"), "{said}");
    // The edit token inside the multipart body comes from the edit page's
    // hidden input, as does the start time (a named hidden input).
    assert!(
        said.contains(
            "correlated: wpedittoken from step 03 (input[name=\"wpEditToken\"]), sent by step 04"
        ),
        "{said}"
    );
    assert!(
        yaml.contains("css: \"input[name=\\\"wpEditToken\\\"]@value\""),
        "{yaml}"
    );
    assert!(
        yaml.contains("name=\\\"wpEditToken\\\"\\r\\n\\r\\n${wpedittoken}\\r\\n"),
        "the token's part holds the variable:\n{yaml}"
    );
    assert!(
        !yaml.contains("d41d8cd98f00b204e9800998ecf8427e"),
        "the recorded token is not replayed:\n{yaml}"
    );
    assert!(
        yaml.contains("\"Content-Type\": \"multipart/form-data; boundary=----WebKitFormBoundaryq7Rk2LmN8pX4\""),
        "{yaml}"
    );
    // The typed text and the login token (a hidden input) as before.
    assert!(
        yaml.contains("Hello from a browser.\\r\\nSecond line."),
        "{yaml}"
    );
    assert!(
        yaml.contains("\"wpLoginToken\": \"${wplogintoken}\""),
        "{yaml}"
    );
    let check = run(&["scenario", "check", dir.join("rec.yaml").to_str().unwrap()]);
    assert!(check.status.success(), "{}", text(&check));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// MediaWiki's edit page as Chromium recorded it when the page was made
/// across a second's turn: the form's token and the script's differ (the
/// token holds the time), and the editor's script sends its own, written
/// in the page only inside a JSON string (`"csrfToken":"...+\\"`).
#[test]
fn a_token_only_a_scripts_json_string_holds_is_correlated_and_decoded() {
    let dir = temp_dir("har-json-token");
    let page = edit_page("Sandbox", "aa11bb22cc33dd44ee55ff66aa77bb88+\\", "20261126053000")
        .replace(
            "</head>",
            "<script>RLCONF={\"wgUserName\":\"Alice\"};RLSTATE={};\
             mw.loader.impl(function(){return[\"user.options@1\",function(){\
             mw.user.tokens.set({\"patrolToken\":\"+\\\\\",\"csrfToken\":\"0f9e8d7c6b5a49382716+\\\\\",\"watchToken\":\"+\\\\\"});}];});</script></head>",
        );
    let recording = har(vec![
        entry(get(
            0,
            "http://wiki.test/index.php?title=Sandbox&action=edit",
            "text/html; charset=UTF-8",
            page,
        )),
        entry(post(
            2000,
            "http://wiki.test/api.php",
            "application/x-www-form-urlencoded",
            "action=stashedit&format=json&title=Sandbox&text=Hi&token=0f9e8d7c6b5a49382716%2B%5C"
                .into(),
        )),
    ]);
    let (yaml, said) = import(&dir, &recording);
    assert!(
        said.contains(
            "correlated: token from step 01 (a JSON string in the page's script), sent by step 02"
        ),
        "{said}"
    );
    assert!(yaml.contains("decode: json"), "{yaml}");
    assert!(yaml.contains("\"token\": \"${token}\""), "{yaml}");
    assert!(!yaml.contains("0f9e8d7c6b5a49382716"), "{yaml}");
    assert!(
        !said.contains("secret"),
        "not a secret the user supplies:\n{said}"
    );
    let check = run(&["scenario", "check", dir.join("rec.yaml").to_str().unwrap()]);
    assert!(check.status.success(), "{}", text(&check));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn secrets_are_data_columns_wherever_they_are_sent_and_never_printed() {
    let dir = temp_dir("har-secrets");
    let (yaml, said) = import(&dir, &wiki_recording());
    for secret in ["Tr0ub4dor", "AKx9f8e7d6c5b4"] {
        assert!(!yaml.contains(secret), "{secret} in the scenario:\n{yaml}");
        assert!(!said.contains(secret), "{secret} printed:\n{said}");
    }
    // The login's password under other names, in a JSON body, inside a
    // longer value and in a body sent as recorded: the same column.
    assert!(yaml.contains("\"wpPassword\": \"${password}\""), "{yaml}");
    assert!(yaml.contains("\"confirm\": \"${password}\""), "{yaml}");
    assert!(yaml.contains("\"secret\": \"${password}\""), "{yaml}");
    assert!(yaml.contains("\"note\": \"key ${password}\""), "{yaml}");
    assert!(yaml.contains("check=${password}"), "{yaml}");
    // A key typed in a URL: a column of its own, the user's to fill in.
    assert!(yaml.contains("\"api_key\": \"${api_key}\""), "{yaml}");
    assert!(
        said.contains("secret: api_key (field api_key, step 08) → data columns of"),
        "{said}"
    );
    let csv = std::fs::read_to_string(dir.join("rec-users.csv")).unwrap();
    assert_eq!(
        csv,
        "username,password,api_key\nAlice,Tr0ub4dor&x,AKx9f8e7d6c5b4\n"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(dir.join("rec-users.csv"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "only its owner reads the secrets");
    }
    // Your accounts' file must hold the secret's column too.
    std::fs::write(dir.join("mine.csv"), "username,password\nBob,pw-bob-1\n").unwrap();
    let out = support::headroom()
        .current_dir(&dir)
        .args([
            "scenario", "from-har", "rec.har", "--data", "mine.csv", "-o", "x.yaml",
        ])
        .output()
        .unwrap();
    let refused = text(&out);
    assert_eq!(out.status.code(), Some(2), "{refused}");
    assert!(
        refused.contains("--data mine.csv: its header has no column api_key (the value sent in field api_key by step 08, a secret): add that column"),
        "{refused}"
    );
    // Printed to stdout (no -o): the same.
    let out = support::headroom()
        .current_dir(&dir)
        .args(["scenario", "from-har", "rec.har", "--data", "rec-users.csv"])
        .output()
        .unwrap();
    let all = text(&out);
    assert!(!all.contains("Tr0ub4dor"), "{all}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A long recording shaped like a wiki session (as bench/har generates
/// it): a login, then cycles of an editor page
/// (hidden token and start time), its stylesheet, script and image, an API
/// call sending the token and answering a hash in JSON, the multipart save
/// sending token and hash and redirected to the page, the page (a meta
/// token), and a JSON call sending the meta token in a header. Every cycle
/// has new tokens. `entries` is rounded to whole cycles of 9.
fn long_recording(entries: usize) -> String {
    let filler: String = (0..12)
        .map(|i| format!("<p class=\"para{i}\">Paragraph {i} of the article, with a link to <a href=\"/index.php?title=Topic_{i}\">topic {i}</a> and some text.</p>"))
        .collect();
    let mut list = vec![
        entry(get(
            0,
            "http://wiki.test/index.php?title=Special:UserLogin",
            "text/html",
            "<form><input name=\"wpName\" type=\"text\"><input name=\"wpPassword\" type=\"password\"></form>".into(),
        )),
        entry(post(
            500,
            "http://wiki.test/index.php?title=Special:UserLogin",
            "application/x-www-form-urlencoded",
            "wpName=Alice&wpPassword=Pw-alice-1".into(),
        )),
    ];
    let mut at = 1000;
    for i in 0..entries.saturating_sub(2) / 9 {
        let token = format!("{:032x}+\\", (i as u128 + 1) * 0x9E37_79B9_7F4A_7C15);
        let start = format!("2026112605{:06}", i % 1_000_000);
        let hash = format!("h{:039x}", (i as u128 + 7) * 0xC2B2_AE3D_27D4_EB4F);
        let meta = format!("m{:023x}", (i as u128 + 3) * 0x1656_67B1_9E37_79F9);
        let title = format!("Page_{i}");
        let mut page = edit_page(&title, &token, &start);
        page.push_str(&filler);
        let mut e = Vec::new();
        e.push(get(
            at,
            &format!("http://wiki.test/index.php?title={title}&action=edit"),
            "text/html; charset=UTF-8",
            page,
        ));
        e.push(get(
            at + 50,
            &format!("http://wiki.test/skins/main.css?v={i}"),
            "text/css",
            ".a{color:red}".repeat(40),
        ));
        e.push(get(
            at + 60,
            &format!("http://wiki.test/skins/main.js?v={i}"),
            "application/javascript",
            "var a=1;".repeat(60),
        ));
        e.push(get(
            at + 70,
            &format!("http://wiki.test/images/logo{i}.png"),
            "image/png",
            "iVBORw0KGgo".repeat(30),
        ));
        let mut api = post(
            at + 900,
            "http://wiki.test/api.php",
            "application/x-www-form-urlencoded",
            format!(
                "action=stashedit&title={title}&text=Text+{i}&token={}",
                url_encode(&token)
            ),
        );
        api.mime = "application/json";
        api.body = format!("{{\"stashedit\":{{\"status\":\"stashed\",\"texthash\":\"{hash}\"}}}}");
        e.push(api);
        let mut save = post(
            at + 1500,
            &format!("http://wiki.test/index.php?title={title}&action=submit"),
            EDIT_MIME,
            multipart(&[
                ("wpStarttime", &start),
                ("wpEditToken", &token),
                ("stashedtexthash", &hash),
                ("wpTextbox1", &format!("Text {i}")),
            ]),
        );
        save.status = 302;
        save.location = Some("/index.php/Page");
        save.body = String::new();
        e.push(save);
        e.push(get(
            at + 1520,
            "http://wiki.test/index.php/Page",
            "text/html; charset=UTF-8",
            format!("<html><head><meta name=\"csrf-token\" content=\"{meta}\"><title>{title} - Wiki</title></head><body>{filler}</body></html>"),
        ));
        let mut call = get(
            at + 2500,
            &format!("http://wiki.test/api.php?action=query&page={i}"),
            "application/json",
            format!("{{\"query\":{{\"n\":{i}}}}}"),
        );
        call.method = "GET";
        let mut call = entry(call);
        call["request"]["headers"] = json!([{"name": "X-CSRF-Token", "value": meta}]);
        call["_resourceType"] = json!("fetch");
        list.extend(e.into_iter().map(entry));
        list.push(call);
        list.push(entry(get(
            at + 2600,
            &format!("http://cdn.test/font{i}.woff2"),
            "font/woff2",
            "d09GMgABAAAAA".repeat(20),
        )));
        at += 3000;
    }
    har(list)
}

fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Imports `path`, returning the importer's CPU seconds (user + system,
/// of that process alone: other tests' processes do not count) and its
/// peak memory in MiB.
fn import_cost(path: &Path, out: &Path) -> (f64, f64) {
    // Waited for below with wait4, which gives this child's own usage.
    #[allow(clippy::zombie_processes)]
    let child = support::headroom()
        .args(["scenario", "from-har"])
        .arg(path)
        .arg("-o")
        .arg(out)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(out.with_extension("err")).unwrap())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for the child this test spawned (it is not waited elsewhere).
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "import failed ({status}): {}",
        std::fs::read_to_string(out.with_extension("err")).unwrap_or_default()
    );
    // The next import writes its accounts' file again.
    let csv = out.with_file_name(format!(
        "{}-users.csv",
        out.file_stem().unwrap().to_string_lossy()
    ));
    std::fs::remove_file(csv).ok();
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (
        secs(usage.ru_utime) + secs(usage.ru_stime),
        usage.ru_maxrss as f64 / 1024.0,
    )
}

#[test]
#[ignore = "quiet: needs the cores to itself; scripts/test runs these one at a time"]
fn a_long_recording_imports_in_time_and_memory_that_grow_linearly() {
    requires!(minutes());
    let _serial = support::serial();
    let dir = temp_dir("har-long");
    std::fs::create_dir_all(&dir).unwrap();
    let mut costs = Vec::new();
    for n in [2_500, 10_000] {
        let path = dir.join(format!("long{n}.har"));
        std::fs::write(&path, long_recording(n)).unwrap();
        let mib = std::fs::metadata(&path).unwrap().len() as f64 / (1 << 20) as f64;
        // The cheaper of two runs: a run slowed by a busy machine is not
        // taken for the importer's cost.
        let out = dir.join(format!("long{n}.yaml"));
        let (a, ram) = import_cost(&path, &out);
        let (b, _) = import_cost(&path, &out);
        costs.push((n, a.min(b), ram, mib));
        if n == 10_000 {
            let yaml = std::fs::read_to_string(&out).unwrap();
            // Every cycle's tokens correlated: the token, start time and
            // hash in the multipart save, the meta token in the header.
            let saves = yaml
                .matches("name=\\\"wpEditToken\\\"\\r\\n\\r\\n${token}")
                .count();
            assert_eq!(saves, (n - 2) / 9, "every save sends its page's token");
            assert!(
                !yaml.contains("+\\\\\\r\\n"),
                "no recorded token is replayed"
            );
            assert_eq!(yaml.matches("\"X-CSRF-Token\": \"${").count(), (n - 2) / 9);
        }
    }
    let (n1, t1, m1, f1) = costs[0];
    let (n4, t4, m4, f4) = costs[1];
    let said = format!(
        "{n1} entries ({f1:.1} MiB): {t1:.2} s CPU, {m1:.0} MiB peak; {n4} entries ({f4:.1} MiB): {t4:.2} s CPU, {m4:.0} MiB peak"
    );
    eprintln!("{said}");
    // Four times the entries: about four times the work when it is linear,
    // sixteen when quadratic.
    assert!(
        t4 / t1 < 7.0,
        "CPU time grew {:.1}× for 4× the entries: {said}",
        t4 / t1
    );
    // Memory: the recording held once, with its pages' index (not their
    // parsed documents): it grows with the recording too.
    assert!(
        m4 / m1 < 6.0,
        "peak memory grew {:.1}× for 4× the entries: {said}",
        m4 / m1
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
