use super::*;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

/// A server answering every request with a small 200 on kept-alive
/// connections (each in its own thread); its port.
fn serve_small_files() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut writer = stream;
                let mut line = String::new();
                loop {
                    line.clear();
                    match reader.read_line(&mut line) {
                        Ok(0) | Err(_) => return,
                        Ok(_) if line == "\r\n" => {
                            let answer = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\
                                          Cache-Control: max-age=60\r\n\r\nfile";
                            if writer.write_all(answer.as_bytes()).is_err() {
                                return;
                            }
                        }
                        Ok(_) => {}
                    }
                }
            });
        }
    });
    port
}

/// `users` users (on one thread) each loading `html` once; their state
/// after.
fn load_pages(html: &str, users: usize) -> Vec<(PageState, PageOutcome)> {
    load_pages_with(html, users, &[])
}

/// [`load_pages`] with the step's `also_loads:`.
fn load_pages_with(
    html: &str,
    users: usize,
    also_loads: &[String],
) -> Vec<(PageState, PageOutcome)> {
    let port = serve_small_files();
    let dir = std::env::temp_dir().join(format!("headroom-page-{port}"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("page.yaml");
    let yaml = format!(
        "defaults:\n  base_url: http://127.0.0.1:{port}\n  page_loads: true\n\
         steps:\n  - label: page\n    path: /\n"
    );
    std::fs::write(&file, yaml).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(async {
        let scenario = crate::scenario::parse_file(&file, None).unwrap();
        let mut connectors = Vec::new();
        for origin in &scenario.origins {
            connectors.push(Arc::new(
                headroom_http::preflight::connect(
                    origin,
                    false,
                    Default::default(),
                    std::time::Duration::from_secs(5),
                )
                .await
                .unwrap(),
            ));
        }
        let record = |_: &Sample| {};
        let ctx = Context {
            scenario: &scenario,
            connectors: &connectors,
            record: &record,
        };
        let page = Page {
            url: Url::parse(&format!("http://127.0.0.1:{port}/")).unwrap(),
            html,
            label: 0,
            vu: 0,
            also_loads,
        };
        let mut users_after = Vec::new();
        for _ in 0..users {
            let mut state = PageState::new(scenario.origins.len());
            let mut main: Vec<Option<HttpClient>> = scenario.origins.iter().map(|_| None).collect();
            let mut jar = CookieJar::default();
            let outcome = load(&ctx, &page, "", &mut state, &mut main, &mut jar).await;
            users_after.push((state, outcome));
        }
        users_after
    });
    std::fs::remove_dir_all(&dir).unwrap();
    result
}

#[test]
fn a_reading_user_keeps_its_connections_but_not_their_buffers() {
    let html: String = (0..12).map(|i| format!("<img src=/{i}.png>")).collect();
    let (state, outcome) = load_pages(&html, 1).pop().unwrap();
    // The images and, the page naming no icon, /favicon.ico.
    assert_eq!((outcome.requests, outcome.left_out), (13, 0));
    let clients: Vec<&HttpClient> = state.slots.iter().flatten().flatten().collect();
    assert!(
        clients.len() > 1,
        "the resources came over several connections"
    );
    let held: Vec<usize> = clients.iter().map(|c| c.buffer_bytes()).collect();
    assert!(held.iter().all(|&b| b == 0), "read buffers held: {held:?}");
}

#[test]
fn also_loads_adds_what_the_html_does_not_name_once() {
    let html = "<script src=/app.js></script><link rel=icon href=/i.png>";
    let also: Vec<String> = ["/app.js", "/api/news.json", "/favicon.ico", "/emoji.png"]
        .map(String::from)
        .to_vec();
    let (_, outcome) = load_pages_with(html, 1, &also).pop().unwrap();
    // app.js and the icon named, then the feed and the image added; app.js
    // is named already, and /favicon.ico is the browser's own to ask for
    // (not when the page names an icon).
    assert_eq!((outcome.requests, outcome.left_out), (4, 0));
    let (_, plain) = load_pages(html, 1).pop().unwrap();
    assert_eq!(plain.requests, 2);
}

#[test]
fn users_of_a_thread_share_a_style_sheets_rules() {
    let html = "<link rel=stylesheet href=/theme.css><link rel=icon href=/i.png><p>text</p>";
    let users = load_pages(html, 2);
    let rules: Vec<&Rc<SheetRules>> = users
        .iter()
        .map(|(state, outcome)| {
            assert_eq!(outcome.requests, 2);
            let url = state.sheet_rules.keys().next().unwrap();
            assert!(url.ends_with("/theme.css"), "{url}");
            &state.sheet_rules[url]
        })
        .collect();
    assert!(Rc::ptr_eq(rules[0], rules[1]), "one copy for both users");
}

#[test]
fn resources_name_their_page_as_a_browser_does() {
    let referer = |page: &str, resource: &str| {
        let mut out = Vec::new();
        write_referer(
            &mut out,
            &Url::parse(page).unwrap(),
            &Url::parse(resource).unwrap(),
        );
        String::from_utf8(out).unwrap()
    };
    assert_eq!(
        referer("http://a:8080/doku.php?id=x#top", "http://a:8080/lib/x.css"),
        "Referer: http://a:8080/doku.php?id=x\r\n"
    );
    assert_eq!(
        referer("https://a/page?q=1", "https://cdn.b/x.js"),
        "Referer: https://a/\r\n"
    );
    assert_eq!(referer("https://a/page", "http://a/x.png"), "");
    assert_eq!(
        referer("http://a/page", "https://a/x.png"),
        "Referer: http://a/\r\n"
    );
}
