use super::*;

fn base() -> Url {
    Url::parse("http://site.example/css/all.css").unwrap()
}

#[test]
fn rules_faces_and_imports() {
    let rules = SheetRules::parse(
        "@charset \"utf-8\";\n@import url(a.css);\n\
         @font-face{font-family:'Icons';src:url(i.woff2) format('woff2')}\n\
         h1, .x > p { color: red; background: url('h.png'), url(\"g.png\") }\n\
         @supports (display:grid) { .g { list-style: url(l.png) } }\n\
         .f { font-family: \"Open Sans\", sans-serif }\n\
         .plain { color: blue }\n\
         .semi { background: url(data:image/png;base64,AA==) }",
        &base(),
    );
    let u = |p: &str| base().join(p).unwrap();
    assert_eq!(rules.imports, vec![u("a.css")]);
    assert_eq!(rules.faces, vec![("icons".to_string(), u("i.woff2"))]);
    // `.plain` names no image; `.semi`'s data: image is not fetched, but
    // its declaration still hides earlier ones.
    assert_eq!(rules.rules.len(), 4, "{rules:?}");
    assert!(rules.rules[3].images[0].images.is_empty());
    let selectors: Vec<&str> = rules.rules[0]
        .selectors
        .iter()
        .map(|s| s.element.as_str())
        .collect();
    assert_eq!(selectors, ["h1", ".x > p"]);
    assert_eq!(
        rules.rules[0].images[0].images,
        vec![u("h.png"), u("g.png")]
    );
    assert_eq!(rules.rules[1].images[0].images, vec![u("l.png")]);
    assert_eq!(rules.rules[1].images[0].property, ImageProperty::ListStyle);
    assert_eq!(rules.rules[2].family.as_deref(), Some("open sans"));
}

#[test]
fn media_queries_for_a_wide_screen() {
    for (query, applies) in [
        ("", true),
        ("screen", true),
        ("all and (min-width: 768px)", true),
        ("print", false),
        ("screen and (max-width: 767px)", false),
        ("(max-width: 100em)", true),
        ("print, (min-width: 1300px)", false),
        ("print, (min-width: 1200px)", true),
        ("not print", true),
        ("(prefers-reduced-motion: reduce)", true),
    ] {
        assert_eq!(media_applies(query), applies, "{query}");
    }
}

#[test]
fn font_shorthands_and_lists() {
    let mut rule = StyleRule::default();
    read_declarations(
        &mut rule,
        "font: italic bold 14px/1.2 \"Open Sans\", serif",
        &base(),
    );
    assert_eq!(rule.family.as_deref(), Some("open sans"));
    read_declarations(&mut rule, "font-family: Roboto !important", &base());
    assert_eq!(rule.family.as_deref(), Some("roboto"));
    read_declarations(&mut rule, "font: inherit", &base());
    assert_eq!(rule.family.as_deref(), Some("roboto"), "no family in it");
}

#[test]
fn broken_css_reads_what_it_can_and_never_loops() {
    for css in [
        "",
        "}",
        "{",
        "@media screen {",
        "a { background: url(",
        "a { background: url('x.png) }",
        "@font-face { src: url(",
        "@import",
        "\"unclosed { }",
        "a{}b{}}}}{{{c{background:url(ok.png)}",
        "@media print { a { b: c } } d { background: url(d.png) }",
    ] {
        let _ = SheetRules::parse(css, &base());
    }
    let rules = SheetRules::parse(
        "@media print { a { b: c } } d { background: url(d.png) }",
        &base(),
    );
    assert_eq!(rules.rules.len(), 1);
}

#[test]
fn specificity_counts_ids_classes_and_types() {
    for (selector, expected) in [
        ("*", 0),
        ("li", 1),
        ("ul li", 2),
        ("ul ol+li", 3),
        ("h1 + *[rel=up]", 101),
        ("ul ol li.red", 103),
        ("li.red.level", 201),
        ("#x34y", 10_000),
        ("#s12:not(FOO)", 10_000),
        ("a.mediafile.mf_php", 201),
        ("div:nth-child(2n+1) > p", 102),
    ] {
        assert_eq!(specificity(selector), expected, "{selector}");
    }
}

#[test]
fn pseudo_elements_and_later_states() {
    let rules = SheetRules::parse(
        "a.x::before, p:after { content: ''; background: url(b.png) }\n\
         a:hover, a:focus-visible { background: url(h.png) }\n\
         a:hovered-not-a-state { background: url(n.png) }",
        &base(),
    );
    let s = &rules.rules[0].selectors;
    assert_eq!(
        (s[0].element.as_str(), s[0].pseudo.as_deref()),
        ("a.x", Some("before"))
    );
    assert_eq!(
        (s[1].element.as_str(), s[1].pseudo.as_deref()),
        ("p", Some("after"))
    );
    assert!(rules.rules[0].sets_content);
    assert!(rules.rules[1].selectors.iter().all(|s| s.later_state));
    assert!(!rules.rules[2].selectors[0].later_state);
}

#[test]
fn important_and_none() {
    let rules = SheetRules::parse(
        ".a { background: url(a.png) !important } .b { background: none } .c { background-color: red }",
        &base(),
    );
    assert!(rules.rules[0].images[0].important);
    assert!(
        rules.rules[1].images[0].images.is_empty(),
        "none still wins"
    );
    assert_eq!(rules.rules.len(), 2, "a colour alone names no image");
}

#[test]
fn selectors_are_compiled_when_the_sheet_is_read() {
    let rules = SheetRules::parse(
        ".a > p::before { content: ''; background: url(a.png) }\n\
         a:hover { background: url(h.png) }\n\
         p:unknown-pseudo { background: url(u.png) }",
        &base(),
    );
    let html = scraper::Html::parse_fragment("<div class=a><p>t</p></div>");
    let p = html
        .root_element()
        .descendants()
        .filter_map(scraper::ElementRef::wrap)
        .find(|e| e.value().name() == "p")
        .unwrap();
    let compiled = rules.rules[0].selectors[0].selector.as_ref();
    assert!(compiled.is_some_and(|s| s.matches(&p)), "{compiled:?}");
    assert_eq!(rules.rules[1].selectors[0].selector, None, "a later state");
    assert_eq!(rules.rules[2].selectors[0].selector, None, "not readable");
}

#[test]
fn a_selectors_last_compound_names_the_class_it_requires() {
    let cases = [
        ("ul li.item:hover", Some("item")),
        (".block-10 .icon-10", Some("icon-10")),
        ("a.x.y", Some("x")),
        ("div#main.box > a", None),
        ("p:not(.hidden)", None),
        ("a[href$='.pdf']", None),
        (".a\\:b", None),
        (":is(.a, .b) .c", Some("c")),
        ("nav > .brand", Some("brand")),
    ];
    for (selector, class) in cases {
        assert_eq!(required_class(selector).as_deref(), class, "{selector}");
    }
}
