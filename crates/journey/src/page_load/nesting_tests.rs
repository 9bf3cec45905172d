use super::*;
use crate::page_load::resources::{in_document, Hosts, PageStyle};
use url::Url;

/// The deepest node of the document, counted in one walk (a node's parent
/// comes before it).
fn depth(document: &Html) -> usize {
    let mut depths = HashMap::new();
    let mut deepest = 0;
    for node in document.tree.root().descendants() {
        let depth = node.parent().map_or(0, |p| depths[&p.id()] + 1);
        deepest = deepest.max(depth);
        depths.insert(node.id(), depth);
    }
    deepest
}

fn nested(tag: &str, levels: usize, inside: &str) -> String {
    let mut html = String::from("<!doctype html><html><body>");
    html.push_str(&format!("<{tag}>").repeat(levels));
    html.push_str(inside);
    html.push_str(&format!("</{tag}>").repeat(levels));
    html.push_str("<img src=/after.png></body></html>");
    html
}

fn paths(document: &Html) -> Vec<String> {
    let page = Url::parse("http://lms.example/").unwrap();
    let mut style = PageStyle::default();
    let found = in_document(document, &page, &Hosts::default(), &mut style);
    found
        .resources
        .iter()
        .map(|r| r.url.path().to_string())
        .collect()
}

/// 50,000 nested `<div>`s (200,000 took 132 s in the parser, 40,000
/// 2.7 s): the tree is at most about MOST_DEPTH deep (the parser's work
/// per tag grows with it), and the images inside and after are found.
#[test]
fn a_page_nested_50000_deep_is_parsed_at_most_most_depth_deep() {
    let html = nested(
        "div",
        50_000,
        "<img src=/deep.png><span style='background: url(/styled.png)'></span>",
    );
    let document = parse(&html);
    let deepest = depth(&document);
    assert!(deepest <= MOST_DEPTH + 8, "{deepest}");
    assert_eq!(paths(&document), ["/deep.png", "/styled.png", "/after.png"]);
}

/// End tags that the parser ignores do not let the depth grow unseen.
#[test]
fn stray_end_tags_do_not_hide_the_depth() {
    let html = "<span><div></span>".repeat(20_000);
    let deepest = depth(&parse(&html));
    assert!(deepest <= 2 * MOST_DEPTH + 8, "{deepest}");
    let html = "<table><tr><td><div></td>".repeat(5_000);
    let deepest = depth(&parse(&html));
    assert!(deepest <= 4 * MOST_DEPTH + 8, "{deepest}");
}

/// An ordinary page, however long, is parsed as it is: text and tags that
/// look deep but are not (comments, scripts, quoted `>`, unclosed `<p>`
/// and `<li>`, a page just within the limit).
#[test]
fn ordinary_pages_are_parsed_as_they_are() {
    let ordinary = [
        nested("div", MOST_DEPTH - 4, "<img src=/deep.png>"),
        format!(
            "<body><!-- {} --><script>var s = '{}';</script><div title='>>{}'>x</div>",
            "<div>".repeat(2_000),
            "<div>".repeat(2_000),
            "<div>".repeat(2_000)
        ),
        "<ul>".to_string() + &"<li><p>item".repeat(5_000) + "</ul>",
        "<svg>".to_string() + &"<path d='M0 0'/>".repeat(2_000) + "</svg>",
        "<p>".to_string() + &"<a href=/x>link ".repeat(2_000),
        "<textarea>".to_string() + &"<div>".repeat(2_000) + "</TEXTAREA>",
    ];
    for html in &ordinary {
        assert!(
            matches!(bounded(html), Cow::Borrowed(_)),
            "{}",
            &html[..80.min(html.len())]
        );
    }
    assert!(matches!(
        bounded(&nested("div", MOST_DEPTH + 1, "")),
        Cow::Owned(_)
    ));
}

/// Past the limit, an element is closed at once and its own end tag left
/// out: it keeps its attributes, and what it held follows it.
#[test]
fn an_element_past_the_limit_is_closed_at_once() {
    let html = nested("div", MOST_DEPTH + 1, "text");
    let text = bounded(&html);
    let deepest = format!("{}<div></div>text", "<div>".repeat(MOST_DEPTH));
    assert!(text.contains(&deepest));
    assert_eq!(text.matches("</div>").count(), MOST_DEPTH + 1);
}
