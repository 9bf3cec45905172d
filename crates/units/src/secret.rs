//! Secrets kept out of what headroom writes down: a bundle's command
//! lines, scenario copies and a server's recorded settings.

/// `text` with the password of every `scheme://user:password@` in it
/// replaced by `***`: command lines and scenario copies kept in a bundle
/// must not carry credentials.
pub fn redact_credentials(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let end = after
            .find(|c: char| {
                c == '/' || c == '?' || c == '#' || c.is_whitespace() || "'\"<>".contains(c)
            })
            .unwrap_or(after.len());
        let authority = &after[..end];
        match authority.rfind('@').and_then(|at_sign| {
            let userinfo = &authority[..at_sign];
            userinfo.find(':').map(|colon| (colon, at_sign))
        }) {
            Some((colon, at_sign)) => {
                out.push_str(&authority[..=colon]);
                out.push_str("***");
                out.push_str(&authority[at_sign..]);
            }
            None => out.push_str(authority),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}
