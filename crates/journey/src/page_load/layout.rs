//! Where a `loading=lazy` image sits on the page, estimated without a
//! layout engine: Chromium fetches such an image at once when its top is
//! within [`LAZY_REACH`] of the top of the page (a 1,280 × 720 window and
//! the 1,250 px Chromium loads ahead of it on a fast connection), and
//! leaves the others until the user scrolls near them.
//!
//! The estimate lays the page out as Chromium's own style sheet would
//! with none of the page's: blocks one under another with their default
//! margins (collapsing), text in lines of the default fonts' height,
//! images at the size their `width` and `height` give (none given: no
//! size until they load, as in the browser when it decides). A page's
//! style sheets (wider fonts, columns, hidden parts) move things; the
//! estimate does not read them. Measured in Chromium on pages of text,
//! headings with lists, and sized images: an image at 1,936 px was
//! fetched, one at 2,256 px was not.

use scraper::{ElementRef, Html, Node};
use std::collections::HashSet;

/// How far down the page a lazy image is fetched at once: the window's
/// 720 px and Chromium's 1,250 px margin.
pub const LAZY_REACH: f32 = 720.0 + 1250.0;
/// The window's width, less the body's 8 px margins.
const CONTENT_WIDTH: f32 = 1280.0 - 16.0;
/// The default font's size, and a character's mean width in it (Times
/// New Roman in Chromium: 0.39-0.42 em in English text).
const FONT: f32 = 16.0;
const CHAR_EM: f32 = 0.41;
/// A line's height for a font size ("normal" line height, whole pixels:
/// 18 px at 16 px).
fn line_height(font: f32) -> f32 {
    (font * 1.15).floor()
}
/// A table row's cell padding and border spacing.
const ROW_EXTRA: f32 = 4.0;
/// Below an inline image, the line's room for descenders.
const DESCENT: f32 = 4.0;

/// The lazy images (by node) whose top is estimated within
/// [`LAZY_REACH`] of the page's top.
pub fn lazy_images_near_top(document: &Html) -> HashSet<ego_tree::NodeId> {
    lazy_tops(document)
        .into_iter()
        .filter(|(_, top)| *top < LAZY_REACH)
        .map(|(id, _)| id)
        .collect()
}

/// Each lazy image's estimated top, px from the page's top.
fn lazy_tops(document: &Html) -> Vec<(ego_tree::NodeId, f32)> {
    let mut flow = Flow {
        y: 0.0,
        pending: 8.0,
        run: Run::default(),
        lazy: Vec::new(),
    };
    let root = document.root_element();
    let body = root
        .children()
        .filter_map(ElementRef::wrap)
        .find(|e| e.value().name() == "body")
        .unwrap_or(root);
    flow.children(body, CONTENT_WIDTH, FONT);
    flow.lazy
}

/// The page laid out so far.
struct Flow {
    /// The bottom of the last content placed.
    y: f32,
    /// The margin waiting under it (collapsing with the next).
    pending: f32,
    /// The inline content of the block being filled.
    run: Run,
    /// The lazy images met, with their tops.
    lazy: Vec<(ego_tree::NodeId, f32)>,
}

/// Inline content: its text's width so far on its lines, and its rows.
#[derive(Default)]
struct Run {
    /// Heights of the lines ended.
    height: f32,
    /// The current line: its width used and its height.
    width: f32,
    line: f32,
}

/// How an element takes part in the layout.
enum Display {
    None,
    Block { margin: f32, font: f32, indent: f32 },
    Inline,
}

fn display(element: &ElementRef, font: f32, nested_list: bool) -> Display {
    let value = element.value();
    if value.attr("hidden").is_some() {
        return Display::None;
    }
    let block = |margin_em: f32, font: f32| Display::Block {
        margin: margin_em * font,
        font,
        indent: 0.0,
    };
    match value.name() {
        "head" | "script" | "style" | "template" | "noscript" | "title" | "meta" | "link"
        | "source" | "track" | "param" | "datalist" | "area" | "base" | "dialog" => Display::None,
        "input"
            if value
                .attr("type")
                .is_some_and(|t| t.eq_ignore_ascii_case("hidden")) =>
        {
            Display::None
        }
        "p" | "dl" => block(1.0, font),
        "h1" => block(0.67, 2.0 * FONT),
        "h2" => block(0.83, 1.5 * FONT),
        "h3" => block(1.0, 1.17 * FONT),
        "h4" => block(1.33, FONT),
        "h5" => block(1.67, 0.83 * FONT),
        "h6" => block(2.33, 0.67 * FONT),
        "ul" | "ol" | "menu" => Display::Block {
            margin: if nested_list { 0.0 } else { font },
            font,
            indent: 40.0,
        },
        "blockquote" | "figure" => Display::Block {
            margin: font,
            font,
            indent: 80.0,
        },
        "dd" => Display::Block {
            margin: 0.0,
            font,
            indent: 40.0,
        },
        "pre" => block(1.0, 13.0),
        "hr" => block(0.5, font),
        "address" | "article" | "aside" | "body" | "center" | "details" | "div" | "dt"
        | "fieldset" | "figcaption" | "footer" | "form" | "header" | "hgroup" | "legend" | "li"
        | "main" | "nav" | "section" | "summary" | "table" | "caption" | "thead" | "tbody"
        | "tfoot" | "tr" | "search" => block(0.0, font),
        _ => Display::Inline,
    }
}

/// A length of an inline style's declaration `name` (`height: 216px`),
/// in px, where the window alone decides it: px, em (of the default
/// font), vw, vh, and `max()`, `min()` of those (WordPress sizes its
/// featured images `height:max(15vw, 30vh)`). None for `auto`, a
/// percentage, or anything else.
fn style_length(style: &str, name: &str) -> Option<f32> {
    let value = style.split(';').find_map(|declaration| {
        let (property, value) = declaration.split_once(':')?;
        property
            .trim()
            .eq_ignore_ascii_case(name)
            .then(|| value.trim().trim_end_matches("!important").trim())
    })?;
    length(value).filter(|v| v.is_finite() && *v >= 0.0)
}

fn length(value: &str) -> Option<f32> {
    let value = value.trim().to_ascii_lowercase();
    for (function, pick) in [
        ("max(", f32::max as fn(f32, f32) -> f32),
        ("min(", f32::min),
    ] {
        if let Some(inner) = value
            .strip_prefix(function)
            .and_then(|v| v.strip_suffix(')'))
        {
            return inner
                .split(',')
                .map(length)
                .collect::<Option<Vec<f32>>>()?
                .into_iter()
                .reduce(pick);
        }
    }
    let unit = |suffix: &str, scale: f32| {
        value
            .strip_suffix(suffix)
            .and_then(|n| n.trim().parse::<f32>().ok())
            .map(|n| n * scale)
    };
    unit("px", 1.0)
        .or_else(|| unit("vw", 12.8))
        .or_else(|| unit("vh", 7.2))
        .or_else(|| unit("rem", FONT))
        .or_else(|| unit("em", FONT))
        .or_else(|| (value == "0").then_some(0.0))
}

impl Flow {
    /// Lays out `parent`'s children in a block `width` wide.
    fn children(&mut self, parent: ElementRef, width: f32, font: f32) {
        let nested = matches!(parent.value().name(), "li" | "ul" | "ol" | "menu");
        for child in parent.children() {
            match child.value() {
                Node::Text(text) => self.text(text, width, font),
                Node::Element(_) => {
                    let Some(element) = ElementRef::wrap(child) else {
                        continue;
                    };
                    match display(&element, font, nested) {
                        Display::None => {}
                        Display::Block {
                            margin,
                            font,
                            indent,
                        } => {
                            self.end_run();
                            self.pending = self.pending.max(margin);
                            if element.value().name() == "hr" {
                                self.place(2.0);
                            }
                            self.children(element, (width - indent).max(1.0), font);
                            if element.value().name() == "tr" {
                                self.run.line += ROW_EXTRA;
                            }
                            self.end_run();
                            self.pending = self.pending.max(margin);
                        }
                        Display::Inline => self.inline(element, width, font),
                    }
                }
                _ => {}
            }
        }
    }

    /// An inline element: a replaced one is a box of its size, a line
    /// break ends the line, others hold text and boxes.
    fn inline(&mut self, element: ElementRef, width: f32, font: f32) {
        let value = element.value();
        let size = |w: f32, h: f32| {
            let attr = |name: &str| {
                value
                    .attr(name)
                    .and_then(|v| v.trim().trim_end_matches("px").parse::<f32>().ok())
                    .filter(|v| v.is_finite() && *v >= 0.0)
            };
            // The element's own style="" wins over its attributes.
            let styled = |name: &str| value.attr("style").and_then(|s| style_length(s, name));
            (
                styled("width").or(attr("width")).unwrap_or(w),
                styled("height").or(attr("height")).unwrap_or(h),
            )
        };
        match value.name() {
            "img" => {
                let (w, h) = size(0.0, 0.0);
                let top = self.box_top(w, h, width);
                let lazy = value
                    .attr("loading")
                    .is_some_and(|l| l.eq_ignore_ascii_case("lazy"));
                if lazy {
                    self.lazy.push((element.id(), top));
                }
                self.inline_box(w, h + DESCENT, width);
            }
            "iframe" | "video" | "canvas" | "object" | "embed" | "svg" => {
                let (w, h) = size(300.0, 150.0);
                self.inline_box(w, h + DESCENT, width);
            }
            "input" | "button" | "select" => self.inline_box(150.0, 21.0, width),
            "textarea" => self.inline_box(180.0, 36.0, width),
            "br" => {
                let line = self.run.line.max(line_height(font));
                self.run.height += line;
                self.run.width = 0.0;
                self.run.line = 0.0;
            }
            _ => self.children(element, width, font),
        }
    }

    /// Text, its white space collapsed, in lines of the font.
    fn text(&mut self, text: &str, width: f32, font: f32) {
        let chars = text
            .split_whitespace()
            .map(|w| w.chars().count() + 1)
            .sum::<usize>();
        if chars == 0 {
            return;
        }
        let line = line_height(font);
        let mut left = chars as f32 * CHAR_EM * font;
        self.run.line = self.run.line.max(line);
        while self.run.width + left > width {
            left -= width - self.run.width;
            self.run.height += self.run.line;
            self.run.width = 0.0;
            self.run.line = line;
        }
        self.run.width += left;
    }

    /// Where the top of a box `w` × `h` would be on the page: on the
    /// line so far its bottom sits on the line's baseline (under a taller
    /// image before it on the line, it starts lower).
    fn box_top(&self, w: f32, h: f32, width: f32) -> f32 {
        let wraps = self.run.width > 0.0 && self.run.width + w > width;
        let line_top = self.y + self.pending + self.run.height;
        if wraps {
            line_top + self.run.line
        } else {
            line_top + (self.run.line - DESCENT - h).max(0.0)
        }
    }

    fn inline_box(&mut self, w: f32, h: f32, width: f32) {
        if self.run.width > 0.0 && self.run.width + w > width {
            self.run.height += self.run.line;
            self.run.width = 0.0;
            self.run.line = 0.0;
        }
        self.run.width += w;
        self.run.line = self.run.line.max(h);
    }

    /// Ends the block's inline content: its lines are placed.
    fn end_run(&mut self) {
        let height = self.run.height + self.run.line;
        self.run = Run::default();
        if height > 0.0 {
            self.place(height);
        }
    }

    /// Content `height` tall under what is placed, after the margin.
    fn place(&mut self, height: f32) {
        self.y += self.pending + height;
        self.pending = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The estimated top of the page's lazy image.
    fn top(body: &str) -> f32 {
        let html = format!("<!doctype html><html><body>{body}<img loading=lazy src=/x.png width=100 height=100></body></html>");
        lazy_tops(&Html::parse_document(&html))[0].1
    }

    fn fetched(body: &str) -> bool {
        top(body) < LAZY_REACH
    }

    #[test]
    fn estimated_tops_are_chromiums_on_pages_without_style() {
        let images = |n: usize| -> String {
            (0..n)
                .map(|i| format!("<p><img src=/{i}.png width=600 height=300></p>"))
                .collect()
        };
        let sections = |n: usize| -> String {
            let p = paragraphs(1, 40);
            (0..n)
                .map(|i| format!("<h2>Lesson {i}</h2>{p}<ul><li>one</li><li>two</li></ul>"))
                .collect()
        };
        for (name, body, measured) in [
            ("text5", paragraphs(5, 60), 366.0),
            ("text30", paragraphs(30, 60), 2116.0),
            ("imgs3", images(3), 976.0),
            ("imgs6", images(6), 1936.0),
            ("mixed4", format!("<h1>Title</h1>{}", sections(4)), 695.2),
            ("mixed12", format!("<h1>Title</h1>{}", sections(12)), 1933.7),
            ("text45", paragraphs(45, 60), 3166.0),
            ("mixed16", format!("<h1>Title</h1>{}", sections(16)), 2553.0),
            (
                "long",
                format!(
                    "<p>{}</p>",
                    vec!["a lesson about the volcanoes of Iceland and their eruptions"; 40]
                        .join(" ")
                ),
                266.0,
            ),
            ("br", format!("<p>{}</p>", "line<br>".repeat(30)), 572.0),
            (
                "table",
                format!(
                    "<table>{}</table>",
                    "<tr><td>cell one</td><td>cell two</td></tr>".repeat(40)
                ),
                890.0,
            ),
            (
                "div",
                (0..60).map(|i| format!("<div>item {i}</div>")).collect(),
                1088.0,
            ),
        ] {
            // Measured in Chromium (Debian's, 1,280 × 720), as
            // getBoundingClientRect().top of the lazy image.
            let estimated = top(&body);
            assert!(
                (estimated - measured).abs() <= 3.0,
                "{name}: estimated {estimated}, Chromium {measured}"
            );
        }
    }

    fn paragraphs(n: usize, words: usize) -> String {
        let text = vec!["volcano erupts"; words / 2].join(" ");
        (0..n).map(|_| format!("<p>{text}</p>")).collect()
    }

    #[test]
    fn an_inline_styles_size_is_the_images_size() {
        assert_eq!(
            style_length("height:max(15vw, 30vh);object-fit:cover", "height"),
            Some(216.0)
        );
        assert_eq!(
            style_length("width: 2em; height: min(100px,5vh)", "height"),
            Some(36.0)
        );
        assert_eq!(style_length("width: 2em", "width"), Some(32.0));
        assert_eq!(style_length("height: auto", "height"), None);
        assert_eq!(style_length("height: 50%", "height"), None);
        assert_eq!(style_length("max-height: 9px", "height"), None);
        // A featured image 1,200 × 675 shown 216 px tall: the next one
        // after it is higher up the page than its attributes say.
        let image = |lazy: &str| {
            format!("<p><img {lazy} width=1200 height=675 style=\"height:max(15vw, 30vh)\"></p>")
        };
        let page = format!("{}{}", image(""), image("loading=lazy"));
        let document = Html::parse_document(&page);
        let tops = lazy_tops(&document);
        assert_eq!(tops[0].1, 16.0 + 220.0 + 16.0);
    }

    #[test]
    fn a_lazy_image_near_the_top_is_fetched_and_one_further_down_is_not() {
        // Chromium fetched the image at 1,936 px (six paragraphs holding a
        // 600 × 300 image each), not the one at 2,256 px (seven), nor the
        // one after 30 paragraphs of three lines (2,116 px).
        let images = |n: usize| -> String {
            (0..n)
                .map(|i| format!("<p><img src=/{i}.png width=600 height=300></p>"))
                .collect()
        };
        assert!(fetched(&images(6)));
        assert!(!fetched(&images(7)));
        assert!(fetched(&paragraphs(25, 60)));
        assert!(!fetched(&paragraphs(30, 60)));
        // What is not shown takes no room.
        let hidden = format!(
            "<div hidden>{}</div><script>{}</script><template>{}</template>",
            images(20),
            "x ".repeat(9000),
            images(20)
        );
        assert!(fetched(&hidden));
    }
}
