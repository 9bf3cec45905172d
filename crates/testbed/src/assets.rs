//! The site's theme files, served as Moodle serves them: a style sheet, two
//! JavaScript bundles, an icon font, a logo and a favicon, at Moodle's
//! paths with the theme's revision in the URL, cached by browsers for 90
//! days (`Cache-Control: public, max-age=7776000, immutable`) with an ETag
//! and Last-Modified, and a 304 for a matching conditional request. Like
//! Moodle's `styles.php` and `javascript.php` they take a worker but no
//! session and no database work, so a first visit and a repeat visit load
//! the server differently, as on a real site.
//!
//! The bodies are generated once (deterministic text and bytes of Moodle's
//! sizes, scaled down: 120 KB of CSS, 150 KB and 60 KB of JavaScript, a
//! 76 KB font), not real Moodle files.

use axum::extract::Path;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use std::sync::OnceLock;

/// The theme's revision: in every asset URL, as Moodle's `themerev`.
pub const REVISION: &str = "1732000000";
/// How long browsers may keep an asset (Moodle's 90 days).
const MAX_AGE_S: u64 = 90 * 24 * 3600;
/// When the theme was last built (the revision as a time).
const MODIFIED: u64 = 1_732_000_000;

/// One of the theme's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asset {
    Styles,
    Polyfill,
    RequireJs,
    Font,
    Logo,
    Favicon,
}

impl Asset {
    pub const ALL: [Asset; 6] = [
        Asset::Styles,
        Asset::Polyfill,
        Asset::RequireJs,
        Asset::Font,
        Asset::Logo,
        Asset::Favicon,
    ];

    /// Its path on the site.
    pub fn path(self) -> String {
        let r = REVISION;
        match self {
            Asset::Styles => format!("/theme/styles.php/boost/{r}/all"),
            Asset::Polyfill => {
                format!("/lib/javascript.php/{r}/lib/babel-polyfill/polyfill.min.js")
            }
            Asset::RequireJs => format!("/lib/javascript.php/{r}/lib/requirejs/require.min.js"),
            Asset::Font => format!("/theme/font.php/boost/core/{r}/fontawesome-webfont.woff2"),
            Asset::Logo => format!("/theme/image.php/boost/core/{r}/logo"),
            Asset::Favicon => format!("/theme/image.php/boost/theme/{r}/favicon"),
        }
    }

    fn content_type(self) -> &'static str {
        match self {
            Asset::Styles => "text/css; charset=utf-8",
            Asset::Polyfill | Asset::RequireJs => "application/javascript; charset=utf-8",
            Asset::Font => "font/woff2",
            Asset::Logo => "image/svg+xml",
            Asset::Favicon => "image/vnd.microsoft.icon",
        }
    }

    /// Its body, made once.
    pub fn body(self) -> &'static [u8] {
        static BODIES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
        let bodies = BODIES.get_or_init(|| {
            Asset::ALL
                .iter()
                .map(|a| match a {
                    Asset::Styles => styles(120 * 1024).into_bytes(),
                    Asset::Polyfill => script("polyfill", 150 * 1024).into_bytes(),
                    Asset::RequireJs => script("require", 60 * 1024).into_bytes(),
                    Asset::Font => font(76 * 1024),
                    Asset::Logo => LOGO.as_bytes().to_vec(),
                    Asset::Favicon => favicon(),
                })
                .collect()
        });
        let index = Asset::ALL.iter().position(|a| *a == self).unwrap_or(0);
        &bodies[index]
    }

    fn etag(self) -> String {
        format!("\"{}-{:x}\"", REVISION, self.body().len())
    }
}

/// Answers a request for `asset`: the file, or a 304 when the browser's
/// copy is current.
pub fn respond(asset: Asset, request: &HeaderMap) -> Response {
    let etag = asset.etag();
    let modified =
        httpdate::fmt_http_date(std::time::UNIX_EPOCH + std::time::Duration::from_secs(MODIFIED));
    let cache_control = format!("public, max-age={MAX_AGE_S}, immutable");
    let expires = httpdate::fmt_http_date(
        std::time::SystemTime::now() + std::time::Duration::from_secs(MAX_AGE_S),
    );
    let mut response = if is_current(request, &etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut r = asset.body().into_response();
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(asset.content_type()),
        );
        r
    };
    let headers = response.headers_mut();
    for (name, value) in [
        (header::ETAG, etag),
        (header::LAST_MODIFIED, modified),
        (header::CACHE_CONTROL, cache_control),
        (header::EXPIRES, expires),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    }
    response
}

/// Whether the browser's copy is current: its If-None-Match names the ETag
/// (or `*`), or, without If-None-Match, its If-Modified-Since is not
/// before the theme was built (RFC 9110 13.2.2).
fn is_current(request: &HeaderMap, etag: &str) -> bool {
    if let Some(tags) = request.get(header::IF_NONE_MATCH) {
        let tags = tags.to_str().unwrap_or("");
        return tags.split(',').any(|t| {
            let t = t.trim();
            t == "*" || t.trim_start_matches("W/") == etag
        });
    }
    request
        .get(header::IF_MODIFIED_SINCE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| httpdate::parse_http_date(v).ok())
        .and_then(|since| since.duration_since(std::time::UNIX_EPOCH).ok())
        .is_some_and(|since| since.as_secs() >= MODIFIED)
}

/// `/theme/styles.php/{theme}/{rev}/{sheet}`: every revision gets the
/// current file (Moodle serves the current theme for an old revision).
pub async fn styles_php(headers: HeaderMap) -> Response {
    respond(Asset::Styles, &headers)
}

/// `/lib/javascript.php/{rev}/{*file}`.
pub async fn javascript_php(
    Path((_rev, file)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    match file.as_str() {
        "lib/babel-polyfill/polyfill.min.js" => respond(Asset::Polyfill, &headers),
        "lib/requirejs/require.min.js" => respond(Asset::RequireJs, &headers),
        _ => not_found(),
    }
}

/// `/theme/font.php/{theme}/{component}/{rev}/{font}`.
pub async fn font_php(
    Path((_theme, _component, _rev, font)): Path<(String, String, String, String)>,
    headers: HeaderMap,
) -> Response {
    match font.as_str() {
        "fontawesome-webfont.woff2" => respond(Asset::Font, &headers),
        _ => not_found(),
    }
}

/// `/theme/image.php/{theme}/{component}/{rev}/{image}`.
pub async fn image_php(
    Path((_theme, _component, _rev, image)): Path<(String, String, String, String)>,
    headers: HeaderMap,
) -> Response {
    match image.as_str() {
        "logo" => respond(Asset::Logo, &headers),
        "favicon" => respond(Asset::Favicon, &headers),
        _ => not_found(),
    }
}

fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "Not found").into_response()
}

/// The style sheet: the page's rules (the icon font, the logo as the
/// header's background) and filler rules to Moodle's size. The font has
/// one source: its bytes are not a real font, and a browser that cannot
/// read a source tries the next (a real font would end the list there).
fn styles(size: usize) -> String {
    let r = REVISION;
    let mut css = format!(
        "@font-face{{font-family:FontAwesome;font-display:block;\
         src:url(/theme/font.php/boost/core/{r}/fontawesome-webfont.woff2) format(\"woff2\")}}\n\
         .fa{{font-family:FontAwesome;font-style:normal}}\n\
         .navbar-brand{{display:inline-block;width:24px;height:24px;\
         background:url(/theme/image.php/boost/core/{r}/logo) no-repeat}}\n"
    );
    let mut i = 0u32;
    while css.len() < size {
        css.push_str(&format!(
            ".region-{i} .block-{k}{{margin:{m}px {n}px;padding:.{k}rem;color:#{c:06x}}}\n",
            k = i % 9,
            m = i % 17,
            n = i % 13,
            c = (i.wrapping_mul(2_654_435_761)) & 0xff_ffff,
        ));
        i += 1;
    }
    css
}

fn script(name: &str, size: usize) -> String {
    let mut js = format!("/* {name} ({REVISION}) */\n(function(){{\"use strict\";var M={{}};\n");
    let mut i = 0u32;
    while js.len() < size {
        js.push_str(&format!(
            "M.f{i}=function(a,b){{return a*{k}+b-{j};}};\n",
            k = i % 31,
            j = i % 7
        ));
        i += 1;
    }
    js.push_str("window.M=M;})();\n");
    js
}

/// Bytes that stand for a WOFF2 font: its signature, then noise (a font
/// does not compress, and browsers only count what arrived).
fn font(size: usize) -> Vec<u8> {
    let mut bytes = b"wOF2".to_vec();
    let mut x: u32 = 0x9E37_79B9;
    while bytes.len() < size {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        bytes.push((x & 0xff) as u8);
    }
    bytes
}

const LOGO: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"24\" height=\"24\" \
viewBox=\"0 0 24 24\"><rect width=\"24\" height=\"24\" rx=\"4\" fill=\"#f98012\"/>\
<path d=\"M5 18V9l7-4 7 4v9h-3v-7l-4-2-4 2v7z\" fill=\"#fff\"/></svg>\n";

/// A 16×16 icon (ICO holding a 32-bit bitmap), orange like Moodle's.
fn favicon() -> Vec<u8> {
    let pixels = 16 * 16 * 4;
    let mask = 16 * 4;
    let image = 40 + pixels + mask;
    let mut ico = Vec::with_capacity(22 + image);
    ico.extend_from_slice(&[0, 0, 1, 0, 1, 0]); // reserved, icon, one image
    ico.extend_from_slice(&[16, 16, 0, 0, 1, 0, 32, 0]); // 16×16, 32 bits
    ico.extend_from_slice(&(image as u32).to_le_bytes());
    ico.extend_from_slice(&22u32.to_le_bytes());
    // BITMAPINFOHEADER: height doubled (image and mask).
    ico.extend_from_slice(&40u32.to_le_bytes());
    ico.extend_from_slice(&16i32.to_le_bytes());
    ico.extend_from_slice(&32i32.to_le_bytes());
    ico.extend_from_slice(&1u16.to_le_bytes());
    ico.extend_from_slice(&32u16.to_le_bytes());
    ico.extend_from_slice(&[0; 24]);
    for _ in 0..16 * 16 {
        ico.extend_from_slice(&[0x12, 0x80, 0xf9, 0xff]); // BGRA
    }
    ico.extend_from_slice(&vec![0; mask]);
    ico
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_asset_has_its_size_and_kind() {
        assert!(Asset::Styles.body().len() >= 120 * 1024);
        assert!(Asset::Polyfill.body().len() >= 150 * 1024);
        assert!(Asset::RequireJs.body().len() >= 60 * 1024);
        assert_eq!(&Asset::Font.body()[..4], b"wOF2");
        assert_eq!(Asset::Favicon.body().len(), 22 + 40 + 1024 + 64);
        assert!(std::str::from_utf8(Asset::Styles.body())
            .unwrap()
            .contains(&Asset::Font.path()));
    }

    #[test]
    fn conditional_requests_get_304() {
        let mut request = HeaderMap::new();
        let full = respond(Asset::Styles, &request);
        assert_eq!(full.status(), StatusCode::OK);
        let etag = full.headers()[header::ETAG].to_str().unwrap().to_string();
        assert_eq!(
            full.headers()[header::CACHE_CONTROL],
            "public, max-age=7776000, immutable"
        );
        request.insert(header::IF_NONE_MATCH, HeaderValue::from_str(&etag).unwrap());
        assert_eq!(
            respond(Asset::Styles, &request).status(),
            StatusCode::NOT_MODIFIED
        );
        // Another file's tag: the whole file.
        request.insert(header::IF_NONE_MATCH, HeaderValue::from_static("\"x\""));
        assert_eq!(respond(Asset::Styles, &request).status(), StatusCode::OK);
        // If-Modified-Since is read only without If-None-Match.
        let mut request = HeaderMap::new();
        let since = full.headers()[header::LAST_MODIFIED].clone();
        request.insert(header::IF_MODIFIED_SINCE, since);
        assert_eq!(
            respond(Asset::Logo, &request).status(),
            StatusCode::NOT_MODIFIED
        );
        request.insert(
            header::IF_MODIFIED_SINCE,
            HeaderValue::from_static("Mon, 01 Jan 2024 00:00:00 GMT"),
        );
        assert_eq!(respond(Asset::Logo, &request).status(), StatusCode::OK);
    }
}
