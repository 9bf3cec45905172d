use super::*;

fn page() -> Url {
    Url::parse("http://lms.example:8080/course/view.php?id=2").unwrap()
}

fn in_html(html: &str, page: &Url, hosts: &Hosts) -> Found {
    // As a page load parses it, its nesting bounded.
    let document = crate::page_load::nesting::parse(html);
    let mut style = PageStyle::default();
    let mut found = in_document(&document, page, hosts, &mut style);
    let shown = style.finish(&document, page, hosts);
    found.resources.extend(shown.resources);
    found
}

/// A style sheet applied to a page where its selectors find elements.
fn in_css(css: &str, sheet: &Url, page: &Url, hosts: &Hosts) -> Found {
    let rules = SheetRules::parse(css, sheet);
    let html = "<html><body class=hero><p class='dot again box'>text</p></body></html>";
    let document = Html::parse_document(html);
    let mut style = PageStyle::default();
    let mut found = style.add_sheet(Some(sheet), rules, page, hosts);
    found
        .resources
        .extend(style.finish(&document, page, hosts).resources);
    found
}

fn urls(found: &Found) -> Vec<(String, ResourceKind)> {
    found
        .resources
        .iter()
        .map(|r| (r.url.as_str().to_string(), r.kind))
        .collect()
}

#[test]
fn a_pages_style_sheets_scripts_images_and_icons_in_document_order() {
    let html = r#"<!doctype html><html><head>
        <link rel="stylesheet" href="/theme/styles.php/boost/1700000000/all">
        <link rel="alternate stylesheet" href="/alt.css">
        <link rel="stylesheet" href="/off.css" disabled>
        <link rel="shortcut icon" href="/theme/image.php/boost/theme/1/favicon">
        <link rel="preload" href="/fonts/a.woff2" as="font" crossorigin>
        <link rel="preload" href="/no-as.bin">
        <link rel="canonical" href="/course/view.php?id=2">
        <script src="/lib/javascript.php/1700000000/lib/requirejs.js"></script>
        <script type="module" src="mod.js"></script>
        <script nomodule src="legacy.js"></script>
        <script type="text/template" src="/tpl.html"></script>
        <script>var x = '<img src="/in-a-script.png">';</script>
        </head><body>
        <!-- <img src="/in-a-comment.png"> -->
        <img src="pix/a.png" alt="">
        <img src="pix/a.png" alt="twice">
        <img src="/tall.png" width="600" height="2400" alt="">
        <img src="/far-below.png" loading="lazy" alt="">
        <img src="data:image/png;base64,AAAA">
        <input type="image" src="/go.png"><input type="text" src="/not.png">
        <video poster="/poster.jpg"><source src="/v.webm"><source src="/v.mp4"></video>
        <a href="/other-page.php">a link is not fetched</a>
        </body></html>"#;
    let found = in_html(html, &page(), &Hosts::default());
    let base = "http://lms.example:8080";
    assert_eq!(
        urls(&found),
        vec![
            (
                format!("{base}/theme/styles.php/boost/1700000000/all"),
                ResourceKind::Stylesheet
            ),
            (
                format!("{base}/theme/image.php/boost/theme/1/favicon"),
                ResourceKind::Icon
            ),
            (format!("{base}/fonts/a.woff2"), ResourceKind::Font),
            (
                format!("{base}/lib/javascript.php/1700000000/lib/requirejs.js"),
                ResourceKind::Script
            ),
            (format!("{base}/course/mod.js"), ResourceKind::Script),
            (format!("{base}/course/pix/a.png"), ResourceKind::Image),
            (format!("{base}/tall.png"), ResourceKind::Image),
            (format!("{base}/go.png"), ResourceKind::Image),
            (format!("{base}/poster.jpg"), ResourceKind::Image),
            (format!("{base}/v.webm"), ResourceKind::Media),
        ]
    );
    assert!(found.other_hosts.is_empty());
}

#[test]
fn the_base_element_and_fragments() {
    let html = r#"<html><head><base href="https://lms.example:8080/static/">
        <link rel=stylesheet href="a.css#x"></head>
        <body><img src="a.css"></body></html>"#;
    let page = Url::parse("https://lms.example:8080/index.php").unwrap();
    let found = in_html(html, &page, &Hosts::default());
    assert_eq!(
        urls(&found),
        vec![(
            "https://lms.example:8080/static/a.css".to_string(),
            ResourceKind::Stylesheet
        )]
    );
}

#[test]
fn other_hosts_are_left_out_unless_named() {
    let html = r#"<link rel=stylesheet href="https://cdn.example/x.css">
        <script src="//fonts.example:8443/f.js"></script>
        <img src="http://lms.example:9090/other-port.png">"#;
    let found = in_html(html, &page(), &Hosts::default());
    assert!(found.resources.is_empty());
    assert_eq!(found.other_hosts.len(), 3);
    let named = Hosts::new(["CDN.example".to_string(), "fonts.example:8443".to_string()]);
    let found = in_html(html, &page(), &named);
    assert_eq!(
        urls(&found),
        vec![
            (
                "https://cdn.example/x.css".to_string(),
                ResourceKind::Stylesheet
            ),
            (
                "http://fonts.example:8443/f.js".to_string(),
                ResourceKind::Script
            ),
        ]
    );
    assert_eq!(
        found.other_hosts,
        vec![Url::parse("http://lms.example:9090/other-port.png").unwrap()]
    );
}

#[test]
fn srcset_takes_the_one_pixel_candidate() {
    assert_eq!(
        image_source(Some("b.png 2x, a.png 1x"), Some("c.png")).as_deref(),
        Some("a.png")
    );
    // No 1x: src stands for it.
    assert_eq!(
        image_source(Some("b.png 2x, d.png 3x"), Some("c.png")).as_deref(),
        Some("c.png")
    );
    // No src: the smallest density of at least one pixel.
    assert_eq!(
        image_source(Some("d.png 3x, b.png 1.5x"), None).as_deref(),
        Some("b.png")
    );
    // Width descriptors depend on the layout: src.
    assert_eq!(
        image_source(Some("s.png 480w, l.png 960w"), Some("c.png")).as_deref(),
        Some("c.png")
    );
    assert_eq!(image_source(None, Some("  ")), None);
    assert_eq!(image_source(Some("a.png"), None).as_deref(), Some("a.png"));
}

/// A `data:` candidate keeps its commas (they split it into candidates
/// such as `base64` and `iVBOR 1x`); commas end a URL only at its end.
#[test]
fn srcset_is_split_as_the_html_standard_says() {
    assert_eq!(
        image_source(
            Some("data:image/png;base64,iVBORw0KGgo= 1x, big.png 2x"),
            Some("c.png")
        )
        .as_deref(),
        Some("data:image/png;base64,iVBORw0KGgo=")
    );
    assert_eq!(
        image_source(
            Some("data:image/gif;base64,R0lGOD 2x, a.png 1x"),
            Some("c.png")
        )
        .as_deref(),
        Some("a.png")
    );
    assert_eq!(
        srcset_candidates("a.png, b.png 2x ,, c.png 3x (junk, more), d.png,"),
        [
            ("a.png", None),
            ("b.png", Some("2x")),
            ("c.png", Some("3x")),
            ("d.png", None)
        ]
    );
    // A comma inside a URL is the URL's (the standard's rule).
    assert_eq!(
        srcset_candidates("a.png,b.png 2x"),
        [("a.png,b.png", Some("2x"))]
    );
    // The page: the 1x candidate after a data: one is fetched (the data:
    // URL's first part was taken for a 1x candidate).
    let html = r#"<img srcset="data:image/png;base64,AAAA 2x, /one.png 1x">"#;
    let found = in_html(html, &page(), &Hosts::default());
    let paths: Vec<&str> = found.resources.iter().map(|r| r.url.path()).collect();
    assert_eq!(paths, ["/one.png"]);
}

/// Chromium fetches a `<picture>`'s first source of a type it decodes
/// (WebP, AVIF) whose media applies, not the `<img>` fallback.
#[test]
fn a_picture_fetches_its_first_source_chromium_decodes() {
    let html = r#"<picture>
        <source type="image/jxl" srcset="/hero.jxl">
        <source type="image/avif" media="(max-width: 600px)" srcset="/hero-small.avif">
        <source type="image/webp; codecs=vp8" srcset="/hero.webp 1x, /hero@2.webp 2x">
        <source type="image/avif" srcset="/hero.avif">
        <img src="/hero.jpg" alt="">
    </picture>
    <picture><source srcset="/wide.png 800w"><img src="/plain.png"></picture>
    <picture><img src="/only.png"></picture>
    <div><source type="image/webp" srcset="/stray.webp"><img src="/alone.png"></div>
    <p><img src="/tall.png" width="600" height="2400"></p>
    <picture><source srcset="/lazy.webp"><img loading="lazy" src="/lazy.png"></picture>"#;
    let found = in_html(html, &page(), &Hosts::default());
    let paths: Vec<&str> = found.resources.iter().map(|r| r.url.path()).collect();
    assert_eq!(
        paths,
        [
            "/hero.webp",
            "/plain.png",
            "/only.png",
            "/alone.png",
            "/tall.png"
        ]
    );
}

#[test]
fn css_imports_fonts_and_images() {
    let css = r#"
        /* url(/commented.png) */
        @import url("base.css") screen;
        @IMPORT 'print.css' print;
        @font-face { font-family: "Mysrc"; src: local("X"),
            url(/fonts/f.eot?#iefix) format("embedded-opentype"),
            url('/fonts/f.woff2') format('woff2'), url(/fonts/f.woff) format("woff"); }
        @font-face { font-family: Plain; src: url(plain.ttf); }
        @font-face { font-family: Unused; src: url(unused.ttf); }
        .hero { background: #fff url( "../pix/hero.jpg" ) no-repeat; font-family: Mysrc, serif }
        .dot { background-image: url(data:image/png;base64,AAAA); font: bold 12px/1.5 "Plain", serif }
        .again { background: url(../pix/hero.jpg); }
        .nowhere { background: url(/unused.png) }
        .hero:hover, a:focus { background: url(/hover.png) }
        .dot::before { content: url(/before.png) }
        @media print { .hero { background: url(/print.png) } }
        @media screen and (max-width: 600px) { .hero { background: url(/phone.png) } }
        @media (min-width: 1000px) { .hero { background: url(/wide.png) } }
        p { cursor: url(/cursor.png), auto }
    "#;
    let sheet = Url::parse("http://lms.example:8080/theme/css/all.css").unwrap();
    let found = in_css(css, &sheet, &page(), &Hosts::default());
    let base = "http://lms.example:8080";
    assert_eq!(
        urls(&found),
        vec![
            (
                format!("{base}/theme/css/base.css"),
                ResourceKind::Stylesheet
            ),
            (
                format!("{base}/theme/css/print.css"),
                ResourceKind::Stylesheet
            ),
            // The body (.hero): the wide screen's rule comes later and wins;
            // the paragraph (.again), its ::before.
            (format!("{base}/wide.png"), ResourceKind::Image),
            (format!("{base}/theme/pix/hero.jpg"), ResourceKind::Image),
            (format!("{base}/before.png"), ResourceKind::Image),
            (format!("{base}/fonts/f.woff2"), ResourceKind::Font),
            (format!("{base}/theme/css/plain.ttf"), ResourceKind::Font),
        ]
    );
}

#[test]
fn style_elements_and_attributes_are_read_as_css() {
    let html = r#"<style>@import "/a.css"; body { background: url(/bg.png) }</style>
        <div style="background-image:url('/inline.png')"></div>"#;
    let found = in_html(html, &page(), &Hosts::default());
    let names: Vec<String> = found
        .resources
        .iter()
        .map(|r| r.url.path().to_string())
        .collect();
    assert_eq!(names, ["/a.css", "/inline.png", "/bg.png"]);
}

#[test]
fn malformed_html_and_css_give_what_can_be_read() {
    let html = "<link rel=stylesheet href=/a.css><img src=/b.png <script src=/c.js>\u{0}<<<>>>";
    let found = in_html(html, &page(), &Hosts::default());
    assert!(found.resources.iter().any(|r| r.url.path() == "/a.css"));
    for css in [
        "@import",
        "@import url(",
        "url(",
        "@font-face { src: url(",
        "/* never closed",
        "@font-face",
        "}}}{{{ url() url('') ",
        "é url(/é.png) ü",
    ] {
        let found = in_css(css, &page(), &page(), &Hosts::default());
        assert!(found.resources.len() <= 1, "{css}: {found:?}");
    }
}

#[test]
fn thousands_of_resources_are_each_read_once() {
    let mut html = String::from("<html><body>");
    for i in 0..5000 {
        html.push_str(&format!("<img src=\"/pix/{}.png\">", i % 2500));
    }
    let found = in_html(&html, &page(), &Hosts::default());
    assert_eq!(found.resources.len(), 2500);
}

#[test]
fn the_cascade_decides_which_image_an_element_shows() {
    // DokuWiki's file links: a general icon, then one per file type.
    let css = "a.mediafile { background: url(/file.svg) no-repeat }\n\
               a.mf_php { background-image: url(/php.svg) }\n\
               #main a.special { background: url(/id.svg) }\n\
               a.special { background: url(/loses.svg) !important }\n\
               a.plain { background: url(/plain.svg) } a.plain { background: none }\n\
               li::before { background: url(/nobox.png) }\n\
               li.x::after { content: ''; background: url(/box.png) }\n\
               .hidden-state:hover { background: url(/hover.png) }";
    let html = "<div id=main><a class='mediafile mf_php'>f</a><a class=special>s</a>\
                <a class=plain>p</a><ul><li class=x>i</li></ul></div>";
    let page = page();
    let sheet = page.join("/all.css").unwrap();
    let document = Html::parse_document(html);
    let mut style = PageStyle::default();
    style.add_sheet(
        Some(&sheet),
        SheetRules::parse(css, &sheet),
        &page,
        &Hosts::default(),
    );
    let shown = style.finish(&document, &page, &Hosts::default());
    let paths: Vec<&str> = shown.resources.iter().map(|r| r.url.path()).collect();
    assert_eq!(paths, ["/php.svg", "/loses.svg", "/box.png"]);
}

#[test]
fn what_is_not_drawn_shows_no_image() {
    // Vector's empty "More" menu: hidden, its arrow not fetched.
    let css = ".emptyPortlet { display: none }\n\
               .menu .arrow::after { content: ''; background: url(/arrow.svg) }\n\
               .shown { background: url(/shown.png) }\n\
               .back { display: none } .back.again { display: block }\n\
               .icon { background: url(/icon.png) }\n\
               .inline { background: url(/inline.png) }\n\
               .forced { display: none !important }\n\
               .f { background: url(/forced.png) }\n\
               .h { background: url(/h.png) }";
    let html = "<nav class='menu emptyPortlet'><h3 class=arrow>More</h3></nav>\
                <p class=shown>s</p>\
                <div class='back again'><i class=icon></i></div>\
                <div style='display:none'><i class=inline></i></div>\
                <div class=forced style='display:block'><b class=f>f</b></div>\
                <div hidden><b class=h>h</b></div>";
    let page = page();
    let sheet = page.join("/all.css").unwrap();
    let document = Html::parse_document(html);
    let mut style = PageStyle::default();
    style.add_sheet(
        Some(&sheet),
        SheetRules::parse(css, &sheet),
        &page,
        &Hosts::default(),
    );
    let shown = style.finish(&document, &page, &Hosts::default());
    let paths: Vec<&str> = shown.resources.iter().map(|r| r.url.path()).collect();
    // The paragraph's image, and the icon shown again by a more specific
    // rule; nothing under the hidden ones.
    assert_eq!(paths, ["/shown.png", "/icon.png"]);
}

#[test]
fn a_later_sheet_overrides_an_earlier_one_by_document_order() {
    let page = page();
    let first = page.join("/first.css").unwrap();
    let second = page.join("/second.css").unwrap();
    let html = "<link rel=stylesheet href=/first.css><link rel=stylesheet href=/second.css>\
                <p class=x>t</p>";
    let document = Html::parse_document(html);
    let mut style = PageStyle::default();
    in_document(&document, &page, &Hosts::default(), &mut style);
    // The second sheet arrives first: its place is still after the first.
    let hosts = Hosts::default();
    style.add_sheet(
        Some(&second),
        SheetRules::parse(".x { background: url(/2.png) }", &second),
        &page,
        &hosts,
    );
    style.add_sheet(
        Some(&first),
        SheetRules::parse(".x { background: url(/1.png) }", &first),
        &page,
        &hosts,
    );
    let shown = style.finish(&document, &page, &hosts);
    let paths: Vec<&str> = shown.resources.iter().map(|r| r.url.path()).collect();
    assert_eq!(paths, ["/2.png"]);
}

#[test]
fn pages_share_a_kept_sheets_rules() {
    let page = page();
    let sheet = page.join("/all.css").unwrap();
    let kept = std::rc::Rc::new(SheetRules::parse(".x { background: url(/x.png) }", &sheet));
    let hosts = Hosts::default();
    let document = Html::parse_document("<link rel=stylesheet href=/all.css><p class=x>t</p>");
    let mut pages = Vec::new();
    for _ in 0..2 {
        let mut style = PageStyle::default();
        in_document(&document, &page, &hosts, &mut style);
        style.add_sheet(Some(&sheet), std::rc::Rc::clone(&kept), &page, &hosts);
        let shown = style.finish(&document, &page, &hosts);
        assert_eq!(
            urls(&shown),
            [(
                "http://lms.example:8080/x.png".to_string(),
                ResourceKind::Image
            )]
        );
        pages.push(style);
    }
    assert_eq!(
        std::rc::Rc::strong_count(&kept),
        3,
        "one copy, three holders"
    );
}

/// A page that names an icon (on any host, `shortcut icon` too) has it;
/// one that names none gets its origin's `/favicon.ico` after it loads.
#[test]
fn a_page_without_an_icon_gets_its_origins_favicon() {
    let named = [
        r#"<link rel="icon" href="/i.png">"#,
        r#"<link rel="SHORTCUT ICON" href="//cdn.example/i.ico">"#,
    ];
    for head in named {
        let html = format!("<html><head>{head}</head><body></body></html>");
        assert!(
            in_html(&html, &page(), &Hosts::default()).names_icon,
            "{head}"
        );
    }
    let none = [
        "<html><head></head><body><img src=/favicon.png></body></html>",
        r#"<html><head><link rel="apple-touch-icon" href="/t.png"></head></html>"#,
        r#"<html><head><link rel="icon"></head></html>"#,
    ];
    for html in none {
        assert!(
            !in_html(html, &page(), &Hosts::default()).names_icon,
            "{html}"
        );
    }
    let icon = default_icon(&page()).unwrap();
    assert_eq!(icon.url.as_str(), "http://lms.example:8080/favicon.ico");
    assert_eq!(icon.kind, ResourceKind::Icon);
    assert!(default_icon(&Url::parse("file:///tmp/a.html").unwrap()).is_none());
}

#[test]
fn a_lazy_image_near_the_top_is_fetched_as_chromium_fetches_it() {
    let html = r#"<h1>Lessons</h1><p><img src="/hero.jpg" width="1024" height="683"></p>
    <p><img loading="lazy" src="/near.jpg" width="1024" height="683"></p>
    <p><img loading="lazy" src="/far.jpg" width="1024" height="683"></p>"#;
    let found = in_html(html, &page(), &Hosts::default());
    let paths: Vec<&str> = found.resources.iter().map(|r| r.url.path()).collect();
    // The second image's top is about 800 px down, the third's about 1,500
    // px... within Chromium's 1,970 px both; a fourth below them is not.
    assert_eq!(paths, ["/hero.jpg", "/near.jpg", "/far.jpg"]);
    let below = format!("{html}<p><img loading=lazy src=/below.jpg width=1024 height=683></p>");
    let found = in_html(&below, &page(), &Hosts::default());
    assert!(!found.resources.iter().any(|r| r.url.path() == "/below.jpg"));
}
