//! multipart/form-data bodies (a form with `enctype="multipart/form-data"`,
//! as MediaWiki's edit form is): read into parts so that their values are
//! correlated like a urlencoded form's, and written back as the recorded
//! body with the parts' values as template text.

/// One part: its header lines as recorded, its field name, its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub head: String,
    pub name: Option<String>,
    /// A file's part (`filename=`): sent as recorded, never correlated.
    pub file: bool,
    pub value: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Multipart {
    pub boundary: String,
    /// The line ending the recording used ("\r\n", or "\n" from some tools).
    pub newline: String,
    pub parts: Vec<Part>,
}

/// The boundary of a `multipart/form-data; boundary=...` content type.
pub fn boundary(content_type: &str) -> Option<String> {
    let (kind, params) = content_type.split_once(';')?;
    if !kind.trim().eq_ignore_ascii_case("multipart/form-data") {
        return None;
    }
    params.split(';').find_map(|p| {
        let (n, v) = p.split_once('=')?;
        n.trim()
            .eq_ignore_ascii_case("boundary")
            .then(|| v.trim().trim_matches('"').to_string())
            .filter(|b| !b.is_empty())
    })
}

/// A parameter of a Content-Disposition line (`name="wpTextbox1"`).
fn disposition_param(line: &str, param: &str) -> Option<String> {
    line.split(';').skip(1).find_map(|p| {
        let (n, v) = p.split_once('=')?;
        n.trim()
            .eq_ignore_ascii_case(param)
            .then(|| v.trim().trim_matches('"').to_string())
    })
}

/// Reads a multipart body; None when it is not one (then it is sent as
/// recorded).
pub fn parse(content_type: &str, text: &str) -> Option<Multipart> {
    let boundary = boundary(content_type)?;
    let delim = format!("--{boundary}");
    let rest = text.strip_prefix(&delim)?;
    let newline = if rest.starts_with("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let separator = format!("{newline}{delim}");
    let mut rest = rest;
    let mut parts = Vec::new();
    loop {
        if rest.starts_with("--") {
            break;
        }
        rest = rest.strip_prefix(newline)?;
        let end = rest.find(&separator)?;
        let part = &rest[..end];
        rest = &rest[end + separator.len()..];
        let blank = format!("{newline}{newline}");
        let (head, value) = match part.find(&blank) {
            Some(i) => (&part[..i], &part[i + blank.len()..]),
            // A part without a body: its headers end the text.
            None => (part.strip_suffix(newline).unwrap_or(part), ""),
        };
        let disposition = head
            .split(newline)
            .find(|l| l.to_ascii_lowercase().starts_with("content-disposition:"))
            .unwrap_or("");
        parts.push(Part {
            head: head.to_string(),
            name: disposition_param(disposition, "name"),
            file: disposition_param(disposition, "filename").is_some(),
            value: value.to_string(),
        });
    }
    Some(Multipart {
        boundary,
        newline: newline.to_string(),
        parts,
    })
}

impl Multipart {
    /// The body as sent: each part's head and value between boundaries.
    pub fn render(&self) -> String {
        let nl = &self.newline;
        let mut out = String::new();
        for p in &self.parts {
            out.push_str(&format!(
                "--{}{nl}{}{nl}{nl}{}{nl}",
                self.boundary, p.head, p.value
            ));
        }
        out.push_str(&format!("--{}--{nl}", self.boundary));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_browsers_multipart_body_is_read_and_written_back_unchanged() {
        let ct = "multipart/form-data; boundary=----WebKitFormBoundaryX3";
        let body = "------WebKitFormBoundaryX3\r\nContent-Disposition: form-data; name=\"wpTextbox1\"\r\n\r\nline one\r\nline two\r\n------WebKitFormBoundaryX3\r\nContent-Disposition: form-data; name=\"wpEditToken\"\r\n\r\nabc123+\\\r\n------WebKitFormBoundaryX3\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nfile\r\n------WebKitFormBoundaryX3--\r\n";
        let m = parse(ct, body).unwrap();
        assert_eq!(m.parts.len(), 3);
        assert_eq!(m.parts[0].name.as_deref(), Some("wpTextbox1"));
        assert_eq!(m.parts[0].value, "line one\r\nline two");
        assert_eq!(m.parts[1].value, "abc123+\\");
        assert!(m.parts[2].file && !m.parts[1].file);
        assert_eq!(m.render(), body);
        assert_eq!(parse("text/plain", body), None);
        assert_eq!(parse(ct, "not multipart"), None);
        assert_eq!(
            boundary("multipart/form-data; boundary=\"q r\"").as_deref(),
            Some("q r")
        );
    }
}
