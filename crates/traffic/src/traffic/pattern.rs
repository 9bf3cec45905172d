//! What a request asked for, as a page of the site rather than one user's
//! URL: the numbers and tokens in its path and the values of its query are
//! folded (`/mod/forum/view.php?id=12` → `/mod/forum/view.php?id=*`), so
//! that one user's ids and no secret a query carried reach a model.

/// Extensions of files a browser fetches for a page (not pages).
const STATIC: &[&str] = &[
    "css", "js", "mjs", "map", "png", "jpg", "jpeg", "gif", "svg", "ico", "webp", "avif", "woff",
    "woff2", "ttf", "otf", "eot", "mp4", "webm", "mp3", "pdf",
];

/// The request's target with its ids and query values folded to `*`.
pub fn fold(target: &[u8]) -> String {
    let target = String::from_utf8_lossy(target);
    let target = target.split('#').next().unwrap_or_default();
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (target, None),
    };
    let mut folded = String::with_capacity(target.len());
    for (i, segment) in path.split('/').enumerate() {
        if i > 0 {
            folded.push('/');
        }
        folded.push_str(if varies(segment) { "*" } else { segment });
    }
    if let Some(query) = query {
        folded.push('?');
        for (i, pair) in query.split('&').enumerate() {
            if i > 0 {
                folded.push('&');
            }
            match pair.split_once('=') {
                Some((key, _)) => {
                    folded.push_str(key);
                    folded.push_str("=*");
                }
                // A bare number or token: a cache buster (`?1795767748`).
                None => folded.push_str(if varies(pair) { "*" } else { pair }),
            }
        }
    }
    folded
}

/// A path segment that differs between users or items: a number, a
/// token (long, with both letters and digits), or an e-mail address.
fn varies(segment: &str) -> bool {
    if is_address(segment) {
        return true;
    }
    let stem = segment.split('.').next().unwrap_or(segment);
    if !stem.is_empty() && stem.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    stem.len() >= 16
        && stem.bytes().any(|b| b.is_ascii_digit())
        && stem.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Whether a path segment holds an e-mail address (`@`, or `%40` as a
/// URL writes it).
pub fn is_address(segment: &str) -> bool {
    segment.contains('@')
        || segment
            .as_bytes()
            .windows(3)
            .any(|w| w[0] == b'%' && w[1] == b'4' && w[2] == b'0')
}

/// Whether the request is for a page's resource (style sheet, script,
/// image, font, media) by its path's extension, not a page.
pub fn is_static(target: &[u8]) -> bool {
    let end = target
        .iter()
        .position(|&b| b == b'?' || b == b'#')
        .unwrap_or(target.len());
    let path = &target[..end];
    let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    let Some(dot) = name.iter().rposition(|&b| b == b'.') else {
        return false;
    };
    let extension = &name[dot + 1..];
    STATIC
        .iter()
        .any(|s| s.as_bytes().eq_ignore_ascii_case(extension))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_tokens_and_query_values_are_folded() {
        assert_eq!(
            fold(b"/mod/forum/view.php?id=12&sesskey=Ab3dE9"),
            "/mod/forum/view.php?id=*&sesskey=*"
        );
        assert_eq!(fold(b"/user/42/profile"), "/user/*/profile");
        assert_eq!(
            fold(b"/files/5f2c9a1b7e3d4c6a8b0d/photo.jpg"),
            "/files/*/photo.jpg"
        );
        assert_eq!(fold(b"/doku.php?id=start&do"), "/doku.php?id=*&do");
        assert_eq!(
            fold(b"/lib/exe/taskrunner.php?id=wiki%3Asyntax&1795767751"),
            "/lib/exe/taskrunner.php?id=*&*"
        );
        assert_eq!(fold(b"/course/view.php#section-2"), "/course/view.php");
        assert_eq!(fold(b"/"), "/");
        assert_eq!(fold(b"/2026/11/hello-world/"), "/*/*/hello-world/");
        assert_eq!(fold(b"/theme/boost/style.css"), "/theme/boost/style.css");
        assert_eq!(fold(b"/user/alice@example.com/profile"), "/user/*/profile");
        assert_eq!(fold(b"/u/bob%40example.org"), "/u/*");
    }

    #[test]
    fn resources_are_told_from_pages_by_extension() {
        for resource in [
            &b"/theme/a.CSS"[..],
            b"/lib/x.js?ver=3",
            b"/pix/i.png",
            b"/f.woff2",
        ] {
            assert!(is_static(resource), "{}", String::from_utf8_lossy(resource));
        }
        for page in [
            &b"/"[..],
            b"/course/view.php?id=2",
            b"/doku.php",
            b"/css/",
            b"/a.php?f=x.css",
        ] {
            assert!(!is_static(page), "{}", String::from_utf8_lossy(page));
        }
    }
}
