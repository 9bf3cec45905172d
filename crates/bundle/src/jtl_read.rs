//! Reading JMeter results files (JTL): CSV with or without its header line
//! (any subset of the columns JMeter's saveservice writes, when the header
//! names them) and XML (`<testResults>` of `httpSample` and `sample`
//! elements, a transaction controller's parent sample holding its
//! children). Every error names the file and the line.

use crate::{invalid, read_error, BundleError};
use std::path::Path;

/// One sample as JMeter wrote it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JtlSample {
    /// Start, epoch milliseconds (JMeter's default timestamp).
    pub timestamp_ms: i64,
    pub elapsed_ms: u64,
    pub label: String,
    /// The response code as written (a number, or JMeter's "Non HTTP
    /// response code: java.net...").
    pub response_code: String,
    pub response_message: String,
    pub thread_name: String,
    pub success: bool,
    pub failure_message: String,
    pub bytes: u64,
    pub sent_bytes: u64,
    pub all_threads: u32,
    pub url: String,
    pub latency_ms: u64,
    pub connect_ms: u64,
    /// A transaction controller's parent sample (its time is its children's).
    pub transaction: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JtlFormat {
    Csv,
    Xml,
}

impl JtlFormat {
    pub fn name(self) -> &'static str {
        match self {
            JtlFormat::Csv => "csv",
            JtlFormat::Xml => "xml",
        }
    }
}

/// JMeter's default CSV columns, the order of a file without a header.
const DEFAULT_COLUMNS: [&str; 17] = [
    "timeStamp",
    "elapsed",
    "label",
    "responseCode",
    "responseMessage",
    "threadName",
    "dataType",
    "success",
    "failureMessage",
    "bytes",
    "sentBytes",
    "grpThreads",
    "allThreads",
    "URL",
    "Latency",
    "IdleTime",
    "Connect",
];

/// What JMeter writes as a transaction controller's response message.
const TRANSACTION_MESSAGE: &str = "Number of samples in transaction";

/// A JTL file read: its samples, and what the reader had to assume.
#[derive(Debug)]
pub struct JtlFile {
    pub format: JtlFormat,
    pub samples: Vec<JtlSample>,
    /// Said to the user (e.g. the text encoding that was guessed).
    pub warnings: Vec<String>,
}

/// Reads a JTL file, CSV or XML (told apart by its first character).
pub fn read(path: &Path) -> Result<JtlFile, BundleError> {
    let bytes = std::fs::read(path).map_err(read_error(path))?;
    let (text, warning) = decode(&bytes).map_err(|why| invalid(path, why))?;
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        return Err(invalid(path, "the file is empty: no sample to read"));
    }
    let mut warnings: Vec<String> = warning.into_iter().collect();
    let (format, samples) = if trimmed.starts_with('<') {
        let (samples, torn) = read_xml(path, trimmed)?;
        warnings.extend(torn);
        (JtlFormat::Xml, samples)
    } else {
        (JtlFormat::Csv, read_csv(path, trimmed)?)
    };
    if samples.is_empty() {
        return Err(invalid(path, "no sample in the file"));
    }
    Ok(JtlFile {
        format,
        samples,
        warnings,
    })
}

/// The file's text. JMeter writes its results in the platform's encoding
/// unless told otherwise (windows-1252 on a Western Windows), and an XML
/// file says which in its declaration. XML: the declared encoding (UTF-8,
/// ISO-8859-1 or windows-1252; UTF-8 when it names none). CSV: UTF-8 when
/// the bytes are valid UTF-8, else windows-1252, with a warning. Never a
/// lossy decoding: two labels that differ in the file stay two labels.
fn decode(bytes: &[u8]) -> Result<(String, Option<String>), String> {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err("the file is UTF-16: headroom reads UTF-8, ISO-8859-1 and windows-1252 (convert it, e.g. iconv -f UTF-16 -t UTF-8)".into());
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace());
    let is_xml = start.is_some_and(|i| bytes[i] == b'<');
    // A run killed while writing can cut its last character in two: the
    // bytes before it are the file's UTF-8 (the torn line is left out by
    // the reader), not a sign of another encoding.
    let bytes = match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => &bytes[..e.valid_up_to()],
        _ => bytes,
    };
    if is_xml {
        let declared = xml_encoding(bytes).unwrap_or_else(|| "utf-8".into());
        return match declared.to_ascii_lowercase().as_str() {
            "utf-8" | "utf8" | "us-ascii" | "ascii" => match std::str::from_utf8(bytes) {
                Ok(text) => Ok((text.to_string(), None)),
                Err(e) => Err(format!(
                    "line {}: a byte that is not UTF-8, which the file's XML declaration names (save it as UTF-8, or declare its encoding)",
                    line_of(bytes, e.valid_up_to())
                )),
            },
            "iso-8859-1" | "iso8859-1" | "iso_8859-1" | "latin1" | "latin-1" | "l1" => {
                Ok((bytes.iter().map(|&b| char::from(b)).collect(), None))
            }
            "windows-1252" | "cp1252" | "x-cp1252" => Ok((windows_1252(bytes), None)),
            _ => Err(format!(
                "the XML declares the encoding '{declared}': headroom reads UTF-8, ISO-8859-1 and windows-1252 (convert it, e.g. iconv -f {declared} -t UTF-8, and change the declaration)"
            )),
        };
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok((text.to_string(), None)),
        Err(e) => Ok((
            windows_1252(bytes),
            Some(format!(
                "the file is not UTF-8 (line {} is the first that is not): read as windows-1252, JMeter's encoding on a Western Windows. If labels look wrong, convert it to UTF-8 (iconv -f ENCODING -t UTF-8) and import it again",
                line_of(bytes, e.valid_up_to())
            )),
        )),
    }
}

/// The 1-based line holding byte `at`.
fn line_of(bytes: &[u8], at: usize) -> usize {
    1 + bytes[..at].iter().filter(|&&b| b == b'\n').count()
}

/// The `encoding` of an XML declaration at the start of `bytes`.
fn xml_encoding(bytes: &[u8]) -> Option<String> {
    let text = bytes.trim_ascii_start();
    let end = text.windows(2).take(200).position(|w| w == b"?>")?;
    let declaration =
        std::str::from_utf8(text.strip_prefix(b"<?xml")?.get(..end.checked_sub(5)?)?).ok()?;
    let after = &declaration[declaration.find("encoding")? + "encoding".len()..];
    let after = after.trim_start().strip_prefix('=')?.trim_start();
    let quote = after.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let value = &after[1..];
    Some(value[..value.find(quote)?].trim().to_string())
}

/// windows-1252 text: Latin-1, with printable characters in 0x80-0x9F
/// (the five bytes it leaves undefined kept as their code points, as the
/// WHATWG Encoding Standard does, so no two bytes read the same).
fn windows_1252(bytes: &[u8]) -> String {
    const HIGH: [char; 32] = [
        '\u{20AC}', '\u{81}', '\u{201A}', '\u{192}', '\u{201E}', '\u{2026}', '\u{2020}',
        '\u{2021}', '\u{2C6}', '\u{2030}', '\u{160}', '\u{2039}', '\u{152}', '\u{8D}', '\u{17D}',
        '\u{8F}', '\u{90}', '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}', '\u{2022}', '\u{2013}',
        '\u{2014}', '\u{2DC}', '\u{2122}', '\u{161}', '\u{203A}', '\u{153}', '\u{9D}', '\u{17E}',
        '\u{178}',
    ];
    bytes
        .iter()
        .map(|&b| match b {
            0x80..=0x9F => HIGH[usize::from(b - 0x80)],
            _ => char::from(b),
        })
        .collect()
}

fn read_csv(path: &Path, text: &str) -> Result<Vec<JtlSample>, BundleError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(csv_delimiter(text))
        .from_reader(text.as_bytes());
    let mut records = reader.records();
    let first = match records.next() {
        Some(Ok(r)) => r,
        Some(Err(e)) => return Err(invalid(path, format!("line 1: {e}"))),
        None => return Ok(Vec::new()),
    };
    let has_header = first
        .iter()
        .any(|f| matches!(f, "timeStamp" | "elapsed" | "label"));
    let columns = csv_columns(path, &first, has_header)?;
    let mut samples = Vec::new();
    let mut parse = |line: usize, record: &csv::StringRecord| -> Result<(), BundleError> {
        samples.push(csv_sample(path, &columns, line, record)?);
        plausible(samples.last().expect("just pushed"))
            .map_err(|why| invalid(path, format!("line {line}: {why}")))
    };
    if !has_header {
        parse(1, &first)?;
    }
    for (i, record) in records.enumerate() {
        let line = i + 2;
        let record = record.map_err(|e| invalid(path, format!("line {line}: {e}")))?;
        if record.len() == 1 && record.get(0).is_some_and(|f| f.trim().is_empty()) {
            continue;
        }
        if record.len() < columns.len() {
            // The last line of a run that was killed while writing.
            if i + 2 == text.lines().count() {
                break;
            }
            return Err(invalid(
                path,
                format!(
                    "line {line}: {} fields where the header has {}",
                    record.len(),
                    columns.len()
                ),
            ));
        }
        parse(line, &record)?;
    }
    Ok(samples)
}

/// The delimiter of a CSV JTL. JMeter's default is ','
/// (jmeter.save.saveservice.default_delimiter); a header line with tabs
/// (or ';', '|') and no comma names another.
fn csv_delimiter(text: &str) -> u8 {
    let first_line = text.lines().next().unwrap_or("");
    [b',', b'\t', b';', b'|']
        .into_iter()
        .find(|d| first_line.as_bytes().contains(d))
        .unwrap_or(b',')
}

/// The columns of a CSV JTL: its header's (`first`, when `has_header`),
/// else JMeter's default columns; refused without the columns headroom
/// needs.
fn csv_columns(
    path: &Path,
    first: &csv::StringRecord,
    has_header: bool,
) -> Result<Vec<String>, BundleError> {
    let columns: Vec<String> = if has_header {
        first.iter().map(str::to_string).collect()
    } else if first.len() == DEFAULT_COLUMNS.len() {
        DEFAULT_COLUMNS.iter().map(|c| c.to_string()).collect()
    } else {
        return Err(invalid(
            path,
            format!(
                "line 1 is not a header and has {} columns: a JTL without its header line must have JMeter's 17 default columns (timeStamp,elapsed,label,...). Add the header line (JMeter writes it unless jmeter.save.saveservice.print_field_names=false)",
                first.len()
            ),
        ));
    };
    for required in ["timeStamp", "elapsed", "label"] {
        if !columns.iter().any(|c| c == required) {
            return Err(invalid(
                path,
                format!("the header has no '{required}' column: headroom needs timeStamp, elapsed and label"),
            ));
        }
    }
    Ok(columns)
}

/// The sample of the CSV JTL's `line`, its fields found by `columns`.
fn csv_sample(
    path: &Path,
    columns: &[String],
    line: usize,
    record: &csv::StringRecord,
) -> Result<JtlSample, BundleError> {
    let at = |name: &str| columns.iter().position(|c| c == name);
    let get = |name: &str| at(name).and_then(|i| record.get(i)).unwrap_or("");
    let number = |name: &str| -> Result<u64, BundleError> {
        let v = get(name).trim();
        if v.is_empty() {
            return Ok(0);
        }
        v.parse::<u64>().map_err(|_| {
            invalid(
                path,
                format!("line {line}: {name} '{v}' is not a whole number of 0 or more"),
            )
        })
    };
    let stamp = get("timeStamp").trim();
    let timestamp_ms = parse_timestamp(stamp).ok_or_else(|| {
        invalid(
            path,
            format!("line {line}: timeStamp '{stamp}' is neither epoch milliseconds nor a date such as 2026/11/23 10:00:00.000"),
        )
    })?;
    let message = get("responseMessage").to_string();
    let success = match get("success").trim() {
        "" => !get("responseCode").starts_with(['4', '5']),
        s if s.eq_ignore_ascii_case("true") => true,
        s if s.eq_ignore_ascii_case("false") => false,
        other => {
            return Err(invalid(
                path,
                format!("line {line}: success '{other}' is neither true nor false"),
            ))
        }
    };
    Ok(JtlSample {
        timestamp_ms,
        elapsed_ms: number("elapsed")?,
        label: get("label").to_string(),
        response_code: get("responseCode").to_string(),
        transaction: message.starts_with(TRANSACTION_MESSAGE),
        response_message: message,
        thread_name: get("threadName").to_string(),
        success,
        failure_message: get("failureMessage").to_string(),
        bytes: number("bytes")?,
        sent_bytes: number("sentBytes")?,
        all_threads: number("allThreads")?.min(u32::MAX as u64) as u32,
        url: get("URL").to_string(),
        latency_ms: number("Latency")?,
        connect_ms: number("Connect")?,
    })
}

/// Epoch milliseconds, or JMeter's `yyyy/MM/dd HH:mm:ss.SSS` (and with `-`
/// separators), read as UTC.
fn parse_timestamp(text: &str) -> Option<i64> {
    if let Ok(ms) = text.parse::<i64>() {
        return Some(ms);
    }
    let normal = text.replace('/', "-").replacen(' ', "T", 1);
    let with_zone = if normal.ends_with('Z') {
        normal
    } else {
        format!("{normal}Z")
    };
    let time = humantime::parse_rfc3339_weak(with_zone.trim_end_matches('Z')).ok()?;
    Some(time.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis() as i64)
}

/// The XML format: each `httpSample` or `sample` element's attributes; an
/// element with samples inside it is a transaction controller's parent. A
/// last line cut short (JMeter stopped while writing) is left out, and the
/// warning returned says so; damage before it is an error naming its line.
fn read_xml(path: &Path, text: &str) -> Result<(Vec<JtlSample>, Option<String>), BundleError> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    let mut samples: Vec<JtlSample> = Vec::new();
    // Indexes in `samples` of the sample elements open around this point.
    let mut open: Vec<usize> = Vec::new();
    let mut seen_root = false;
    let (mut counted_to, mut line_at) = (0usize, 1usize);
    loop {
        let position = (reader.buffer_position() as usize).min(text.len());
        line_at += text.as_bytes()[counted_to.min(position)..position]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        counted_to = counted_to.max(position);
        let line = || line_at;
        let event = match reader.read_event() {
            Ok(event) => event,
            // Cut short: the error is in the last line, which stops
            // inside a tag or its text (a whole line ends with '>').
            Err(_)
                if seen_root
                    && !text[position..].trim_end().contains('\n')
                    && !text.trim_end().ends_with('>') =>
            {
                let torn = format!(
                    "line {}: the last line is incomplete (a run stopped while writing): read the {} samples before it",
                    line(),
                    samples.len()
                );
                return Ok((samples, Some(torn)));
            }
            Err(e) => {
                return Err(invalid(
                    path,
                    format!("line {}: not well-formed XML ({e})", line()),
                ))
            }
        };
        let (element, opens) = match &event {
            Event::Start(e) => (Some(e), true),
            Event::Empty(e) => (Some(e), false),
            _ => (None, false),
        };
        if let Some(e) = element {
            let qname = e.name();
            let name: &str = qname.into_inner();
            match name {
                "httpSample" | "sample" => {
                    if !seen_root {
                        return Err(invalid(
                            path,
                            "a sample outside <testResults>: not a JMeter XML JTL",
                        ));
                    }
                    let sample = xml_sample(path, line(), e)?;
                    if let Some(&parent) = open.last() {
                        samples[parent].transaction = true;
                    }
                    samples.push(sample);
                    if opens {
                        open.push(samples.len() - 1);
                    }
                }
                "testResults" => seen_root = true,
                other if !seen_root => {
                    return Err(invalid(
                        path,
                        format!(
                            "line {}: the root element is <{}>, not <testResults>: not a JMeter XML JTL",
                            line(),
                            other
                        ),
                    ))
                }
                _ => {}
            }
            continue;
        }
        match event {
            Event::End(e) => {
                let qname = e.name();
                let name: &str = qname.into_inner();
                if matches!(name, "httpSample" | "sample") {
                    open.pop();
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !seen_root {
        return Err(invalid(
            path,
            "no <testResults> element: not a JMeter XML JTL",
        ));
    }
    Ok((samples, None))
}

fn xml_sample(
    path: &Path,
    line: usize,
    e: &quick_xml::events::BytesStart,
) -> Result<JtlSample, BundleError> {
    let mut s = JtlSample {
        success: true,
        ..JtlSample::default()
    };
    let mut has_ts = false;
    for attribute in e.attributes() {
        let attribute = attribute
            .map_err(|err| invalid(path, format!("line {line}: bad attribute ({err})")))?;
        let value = attribute
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map_err(|err| invalid(path, format!("line {line}: bad attribute value ({err})")))?
            .to_string();
        let number = |name: &str| -> Result<u64, BundleError> {
            value.trim().parse::<u64>().map_err(|_| {
                invalid(
                    path,
                    format!("line {line}: {name}=\"{value}\" is not a whole number"),
                )
            })
        };
        let key: &str = attribute.key.into_inner();
        match key {
            "t" => s.elapsed_ms = number("t")?,
            "lt" => s.latency_ms = number("lt")?,
            "ct" => s.connect_ms = number("ct")?,
            "ts" => {
                s.timestamp_ms = value.trim().parse::<i64>().map_err(|_| {
                    invalid(
                        path,
                        format!("line {line}: ts=\"{value}\" is not epoch milliseconds"),
                    )
                })?;
                has_ts = true;
            }
            "s" => s.success = value.trim() == "true",
            "lb" => s.label = value,
            "rc" => s.response_code = value,
            "rm" => s.response_message = value,
            "tn" => s.thread_name = value,
            "by" => s.bytes = number("by")?,
            "sby" => s.sent_bytes = number("sby")?,
            "na" => s.all_threads = number("na")?.min(u32::MAX as u64) as u32,
            _ => {}
        }
    }
    if !has_ts {
        return Err(invalid(
            path,
            format!("line {line}: a sample without ts (its start time)"),
        ));
    }
    s.transaction = s.response_message.starts_with(TRANSACTION_MESSAGE);
    plausible(&s).map_err(|why| invalid(path, format!("line {line}: {why}")))?;
    Ok(s)
}

/// Earliest and latest start a sample may have: 1990-01-01 and 2200-01-01.
const TIMESTAMP_RANGE_MS: std::ops::RangeInclusive<i64> = 631_152_000_000..=7_258_118_400_000;
/// Longest time a sample (or its latency, its connect) may take: a day.
pub const LONGEST_SAMPLE_MS: u64 = 86_400_000;

/// A sample's times as a test can have them, or why not.
fn plausible(s: &JtlSample) -> Result<(), String> {
    if !TIMESTAMP_RANGE_MS.contains(&s.timestamp_ms) {
        return Err(format!(
            "the start time {} ms is not a date between 1990 and 2200 (epoch milliseconds)",
            s.timestamp_ms
        ));
    }
    for (what, ms) in [
        ("elapsed", s.elapsed_ms),
        ("latency", s.latency_ms),
        ("connect", s.connect_ms),
    ] {
        if ms > LONGEST_SAMPLE_MS {
            return Err(format!(
                "{what} {ms} ms is more than a day: not a sample's time"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, text: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("headroom-jtl-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// A UTF-8 file whose last line was cut inside a character (JMeter
    /// killed while writing) is still UTF-8: its labels are not read as
    /// windows-1252 ("CafÃ©"), and the torn line is left out.
    #[test]
    fn a_character_cut_by_a_torn_last_line_keeps_the_file_utf8() {
        let dir = std::env::temp_dir().join(format!("headroom-jtl-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("torn-utf8.jtl");
        let mut bytes = "timeStamp,elapsed,label,responseCode,success,bytes\n1700000000000,10,Café,200,true,512\n1700000000200,1000,Caf"
            .as_bytes()
            .to_vec();
        bytes.push(0xC3);
        std::fs::write(&path, &bytes).unwrap();
        let read = read(&path).unwrap();
        assert_eq!(read.samples.len(), 1);
        assert_eq!(read.samples[0].label, "Café");
        assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    }

    /// An XML JTL cut in its last line (JMeter stopped while writing) is
    /// read up to it, and said; cut earlier, it is an error naming the line.
    #[test]
    fn a_torn_xml_jtl_is_read_up_to_its_last_line() {
        let head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testResults version=\"1.2\">\n\
            <httpSample t=\"10\" lt=\"5\" ts=\"1700000000000\" s=\"true\" lb=\"a\" rc=\"200\" by=\"5\"/>\n\
            <httpSample t=\"20\" lt=\"5\" ts=\"1700000000100\" s=\"true\" lb=\"a\" rc=\"200\" by=\"5\"/>\n";
        let torn = file(
            "torn.xml.jtl",
            &format!("{head}<httpSample t=\"30\" lt=\"5\" ts=\"17"),
        );
        let read = read(&torn).unwrap();
        assert_eq!(read.samples.len(), 2);
        assert_eq!(read.warnings.len(), 1, "{:?}", read.warnings);
        assert!(
            read.warnings[0].starts_with("line 5: the last line is incomplete"),
            "{:?}",
            read.warnings
        );
        let damaged = file(
            "damaged.xml.jtl",
            &format!("{head}<httpSample t=\"30\" lt=\"5\n<httpSample/>\n</testResults>\n"),
        );
        let e = super::read(&damaged).unwrap_err().to_string();
        assert!(e.contains("not well-formed XML"), "{e}");
    }

    #[test]
    fn csv_with_and_without_header() {
        let with = file(
            "a.jtl",
            "timeStamp,elapsed,label,responseCode,success,bytes\n1700000000000,120,home,200,true,512\n1700000000100,80,\"log, in\",500,false,10\n",
        );
        let JtlFile {
            format, samples: s, ..
        } = read(&with).unwrap();
        assert_eq!(format, JtlFormat::Csv);
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[1].label.as_str(), s[1].success, s[1].elapsed_ms),
            ("log, in", false, 80)
        );
        let without = file(
            "b.jtl",
            "1700000000000,120,home,200,OK,Thread Group 1-1,text,true,,512,100,1,1,http://x/,30,0,5\n",
        );
        let s = read(&without).unwrap().samples;
        assert_eq!(
            (s[0].latency_ms, s[0].connect_ms, s[0].sent_bytes),
            (30, 5, 100)
        );
        let dated = file(
            "c.jtl",
            "timeStamp,elapsed,label\n2023/11/14 22:13:20.000,5,x\n",
        );
        assert_eq!(
            read(&dated).unwrap().samples[0].timestamp_ms,
            1_700_000_000_000
        );
    }

    #[test]
    fn other_delimiters() {
        let tabs = file(
            "t.jtl",
            "timeStamp\telapsed\tlabel\n1700000000000\t12\ta, b\n",
        );
        let s = read(&tabs).unwrap().samples;
        assert_eq!((s[0].label.as_str(), s[0].elapsed_ms), ("a, b", 12));
    }

    #[test]
    fn xml_with_a_transaction() {
        let xml = file(
            "t.xml",
            r#"<?xml version="1.0" encoding="UTF-8"?>
<testResults version="1.2">
<sample t="300" lt="0" ts="1700000000000" s="true" lb="journey" rc="200" rm="Number of samples in transaction : 2, number of failing samples : 0" tn="TG 1-1" by="900" na="1">
  <httpSample t="100" lt="40" ct="3" ts="1700000000000" s="true" lb="home" rc="200" rm="OK" tn="TG 1-1" by="400" sby="90" na="1"/>
  <httpSample t="200" lt="50" ts="1700000000100" s="false" lb="login &amp; go" rc="500" rm="Error" tn="TG 1-1" by="500" na="1"><responseData>x</responseData></httpSample>
</sample>
</testResults>"#,
        );
        let JtlFile {
            format, samples: s, ..
        } = read(&xml).unwrap();
        assert_eq!(format, JtlFormat::Xml);
        assert_eq!(s.len(), 3);
        assert!(s[0].transaction && !s[1].transaction && !s[2].transaction);
        assert_eq!(s[2].label, "login & go");
        assert!(!s[2].success);
        assert_eq!((s[1].connect_ms, s[1].sent_bytes), (3, 90));
    }

    #[test]
    fn bad_files_name_the_line() {
        let cases = [
            ("", "empty"),
            ("timeStamp,label\n1,x\n", "no 'elapsed' column"),
            ("1,2,3\n", "line 1 is not a header"),
            (
                "timeStamp,elapsed,label\nyesterday,1,x\n",
                "line 2: timeStamp 'yesterday'",
            ),
            ("timeStamp,elapsed,label\n1,-5,x\n", "line 2: elapsed '-5'"),
            (
                "timeStamp,elapsed,label\n1700000000000,5,x\n1,5,x\n",
                "line 3: the start time 1 ms is not a date between 1990 and 2200",
            ),
            (
                "timeStamp,elapsed,label\n1700000000000,99999999999,x\n",
                "line 2: elapsed 99999999999 ms is more than a day",
            ),
            (
                "<testResults><httpSample ts=\"1700000000000\" t=\"1\" lt=\"86400001\"/></testResults>",
                "latency 86400001 ms is more than a day",
            ),
            (
                "timeStamp,elapsed,label,success\n1,5,x,maybe\n",
                "line 2: success 'maybe'",
            ),
            (
                "<testResults><httpSample t=\"1\" lb=\"x\"/></testResults>",
                "without ts",
            ),
            (
                "<testResults><httpSample t=\"x\" ts=\"1\"/></testResults>",
                "t=\"x\" is not a whole number",
            ),
            ("<html></html>", "not <testResults>"),
            (
                "<testResults><httpSample ts=\"1700000000000\" t=\"1\"></testResults>",
                "not well-formed",
            ),
        ];
        for (i, (text, expected)) in cases.iter().enumerate() {
            let path = file(&format!("bad{i}.jtl"), text);
            let e = read(&path).unwrap_err().to_string();
            assert!(e.contains(expected), "{text:?}: {e}");
        }
    }
}
