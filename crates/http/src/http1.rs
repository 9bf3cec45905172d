//! The HTTP/1.1 response side: head parsing (httparse) and body framing
//! (Content-Length, chunked, until close), incremental so a response may be
//! split across any number of reads. Nothing here allocates, except a head
//! with more headers than [`STACK_HEADERS`], which is parsed on the heap.

use headroom_bundle::server_timing::ServerTiming;

/// A response that is not valid HTTP/1.x.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolError {
    Head,
    Status,
    /// The server answered with HTTP/2 frames (an h2c-only port).
    Http2Frames,
    HeadTooLarge,
    ContentLength,
    Chunked,
    Truncated,
}

impl std::fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.reason())
    }
}

impl std::error::Error for ProtocolError {}

/// How the body of a response ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body (HEAD, 1xx, 204, 304).
    Empty,
    Length(u64),
    Chunked,
    /// HTTP/1.0 style: the body ends when the server closes.
    UntilClose,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseHead {
    pub status: u16,
    /// Bytes of the status line and headers, including the blank line.
    pub head_len: usize,
    pub framing: Framing,
    /// False when the server will close the connection after this response.
    pub keep_alive: bool,
    /// Its Server-Timing metrics.
    pub server_timing: ServerTiming,
}

/// Headers parsed without allocating; a head with more is parsed again
/// with room for every line it has (browsers set no count limit, only a
/// size limit, which [`crate::client`] applies).
pub const STACK_HEADERS: usize = 128;

impl ProtocolError {
    /// The reason as static text, kept beside a sample's error kind.
    pub fn reason(self) -> &'static str {
        match self {
            ProtocolError::Head => "malformed response head",
            ProtocolError::Status => "status code outside 100-599",
            ProtocolError::Http2Frames => {
                "the server answered in HTTP/2 frames: it speaks HTTP/2 without TLS (h2c) on this port; use --http 2 (or http: 2 in the scenario)"
            }
            ProtocolError::HeadTooLarge => {
                "response head larger than 1 MiB (browsers accept 256 KiB)"
            }
            ProtocolError::ContentLength => "invalid Content-Length",
            ProtocolError::Chunked => "malformed chunked encoding",
            ProtocolError::Truncated => "connection closed before the body was complete",
        }
    }
}

/// Parses a complete or partial response head and hands it to `read`:
/// `Ok(None)` when more bytes are needed.
/// An HTTP/2 response's head, as [`crate::http2`] writes it (`HTTP/2 200`
/// and its header lines), is read the same way.
pub fn with_response<R>(
    buf: &[u8],
    read: impl FnOnce(&httparse::Response<'_, '_>, usize) -> R,
) -> Result<Option<R>, ProtocolError> {
    if buf.starts_with(b"HTTP/2 ") {
        return with_h2_response(buf, read);
    }
    let mut headers = [httparse::EMPTY_HEADER; STACK_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    match response.parse(buf) {
        Ok(httparse::Status::Complete(n)) => return Ok(Some(read(&response, n))),
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {}
        Err(_) if http2_frames(buf) => return Err(ProtocolError::Http2Frames),
        Err(_) => return Err(ProtocolError::Head),
    }
    let lines = memchr::memchr_iter(b'\n', buf).count();
    let mut headers = vec![httparse::EMPTY_HEADER; lines];
    let mut response = httparse::Response::new(&mut headers);
    match response.parse(buf) {
        Ok(httparse::Status::Complete(n)) => Ok(Some(read(&response, n))),
        Ok(httparse::Status::Partial) => Ok(None),
        Err(_) => Err(ProtocolError::Head),
    }
}

/// Whether bytes that are no HTTP/1.1 response begin as an HTTP/2 server
/// begins a connection: a SETTINGS or GOAWAY frame on stream 0.
fn http2_frames(buf: &[u8]) -> bool {
    buf.len() >= 9 && matches!(buf[3], 0x4 | 0x7) && buf[5..9] == [0, 0, 0, 0]
}

/// `HTTP/2 200\r\n` and header lines: the status line read here, the
/// lines by httparse.
fn with_h2_response<R>(
    buf: &[u8],
    read: impl FnOnce(&httparse::Response<'_, '_>, usize) -> R,
) -> Result<Option<R>, ProtocolError> {
    let Some(line_end) = memchr::memchr(b'\n', buf).map(|i| i + 1) else {
        return Ok(None);
    };
    let code = std::str::from_utf8(&buf[7..line_end])
        .ok()
        .and_then(|t| t.trim().parse::<u16>().ok())
        .ok_or(ProtocolError::Status)?;
    let lines = memchr::memchr_iter(b'\n', buf).count();
    let mut headers = vec![httparse::EMPTY_HEADER; lines.max(1)];
    let (used, count) = match httparse::parse_headers(&buf[line_end..], &mut headers) {
        Ok(httparse::Status::Complete((n, parsed))) => (n, parsed.len()),
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(ProtocolError::Head),
    };
    let response = httparse::Response {
        version: Some(1),
        code: Some(code),
        reason: Some(""),
        headers: &mut headers[..count],
    };
    Ok(Some(read(&response, line_end + used)))
}

/// Parses a response head from the start of `buf`; `Ok(None)` when more bytes are needed.
pub fn parse_head(
    buf: &[u8],
    request_was_head: bool,
) -> Result<Option<ResponseHead>, ProtocolError> {
    match with_response(buf, |response, head_len| {
        read_head(response, head_len, request_was_head)
    })? {
        Some(head) => head.map(Some),
        None => Ok(None),
    }
}

fn read_head(
    response: &httparse::Response<'_, '_>,
    head_len: usize,
    request_was_head: bool,
) -> Result<ResponseHead, ProtocolError> {
    let status = response.code.ok_or(ProtocolError::Head)?;
    if !(100..=599).contains(&status) {
        return Err(ProtocolError::Status);
    }
    let http10 = response.version == Some(0);
    let mut keep_alive = !http10;
    let mut content_length: Option<u64> = None;
    let mut chunked = false;
    let mut server_timing = ServerTiming::default();
    for header in response.headers.iter() {
        let name = header.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            let value = parse_decimal(header.value).ok_or(ProtocolError::ContentLength)?;
            if content_length.is_some_and(|previous| previous != value) {
                return Err(ProtocolError::ContentLength);
            }
            content_length = Some(value);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            chunked = last_token_is(header.value, b"chunked");
        } else if name.eq_ignore_ascii_case(b"server-timing") {
            server_timing.add_header(header.value);
        } else if name.eq_ignore_ascii_case(b"connection") {
            if contains_token(header.value, b"close") {
                keep_alive = false;
            } else if contains_token(header.value, b"keep-alive") {
                keep_alive = true;
            }
        }
    }
    let framing =
        if request_was_head || (100..200).contains(&status) || status == 204 || status == 304 {
            Framing::Empty
        } else if chunked {
            Framing::Chunked
        } else if let Some(length) = content_length {
            Framing::Length(length)
        } else {
            keep_alive = false;
            Framing::UntilClose
        };
    Ok(ResponseHead {
        status,
        head_len,
        framing,
        keep_alive,
        server_timing,
    })
}

fn parse_decimal(value: &[u8]) -> Option<u64> {
    let trimmed = value.trim_ascii();
    if trimmed.is_empty() || trimmed.len() > 19 {
        return None;
    }
    trimmed.iter().try_fold(0u64, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + (b - b'0') as u64)
    })
}

fn tokens(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value.split(|&b| b == b',').map(|t| t.trim_ascii())
}

fn contains_token(value: &[u8], token: &[u8]) -> bool {
    tokens(value).any(|t| t.eq_ignore_ascii_case(token))
}

fn last_token_is(value: &[u8], token: &[u8]) -> bool {
    tokens(value)
        .last()
        .is_some_and(|t| t.eq_ignore_ascii_case(token))
}

/// Tracks where a body ends, fed with the bytes that follow the head.
#[derive(Debug, Clone)]
pub struct BodyReader {
    kind: BodyKind,
}

#[derive(Debug, Clone)]
enum BodyKind {
    Empty,
    Length { remaining: u64 },
    Chunked(ChunkedDecoder),
    UntilClose,
}

impl BodyReader {
    pub fn new(framing: Framing) -> BodyReader {
        let kind = match framing {
            Framing::Empty | Framing::Length(0) => BodyKind::Empty,
            Framing::Length(n) => BodyKind::Length { remaining: n },
            Framing::Chunked => BodyKind::Chunked(ChunkedDecoder::default()),
            Framing::UntilClose => BodyKind::UntilClose,
        };
        BodyReader { kind }
    }

    /// Consumes body bytes from `input`, passing the payload (de-chunked) to
    /// `payload`. Returns how many input bytes belong to this body and
    /// whether the body is complete; bytes past the end are left alone.
    pub fn feed(
        &mut self,
        input: &[u8],
        payload: &mut impl FnMut(&[u8]),
    ) -> Result<(usize, bool), ProtocolError> {
        match &mut self.kind {
            BodyKind::Empty => Ok((0, true)),
            BodyKind::Length { remaining } => {
                let take = (*remaining).min(input.len() as u64) as usize;
                payload(&input[..take]);
                *remaining -= take as u64;
                Ok((take, *remaining == 0))
            }
            BodyKind::Chunked(decoder) => decoder.feed(input, payload),
            BodyKind::UntilClose => {
                payload(input);
                Ok((input.len(), false))
            }
        }
    }

    /// The server closed the connection: complete for a read-until-close
    /// body, truncated for the others.
    pub fn at_close(&self) -> Result<(), ProtocolError> {
        match self.kind {
            BodyKind::UntilClose | BodyKind::Empty => Ok(()),
            _ => Err(ProtocolError::Truncated),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum ChunkState {
    #[default]
    Size,
    SizeExtension,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    TrailerLineStart,
    TrailerLine,
    TrailerEndLf,
    Done,
}

/// Incremental decoder of `Transfer-Encoding: chunked`.
#[derive(Debug, Clone, Default)]
pub struct ChunkedDecoder {
    state: ChunkState,
    size: u64,
    digits: u8,
}

impl ChunkedDecoder {
    pub fn feed(
        &mut self,
        input: &[u8],
        payload: &mut impl FnMut(&[u8]),
    ) -> Result<(usize, bool), ProtocolError> {
        if self.state == ChunkState::Done {
            return Ok((0, true));
        }
        let mut at = 0;
        while at < input.len() {
            if self.state == ChunkState::Data {
                let take = self.size.min((input.len() - at) as u64) as usize;
                payload(&input[at..at + take]);
                at += take;
                self.size -= take as u64;
                if self.size == 0 {
                    self.state = ChunkState::DataCr;
                }
                continue;
            }
            let byte = input[at];
            at += 1;
            self.state = match self.state {
                ChunkState::Size => match byte {
                    b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => {
                        let digit = (byte as char).to_digit(16).unwrap_or(0) as u64;
                        self.digits += 1;
                        if self.digits > 15 {
                            return Err(ProtocolError::Chunked);
                        }
                        self.size = self.size * 16 + digit;
                        ChunkState::Size
                    }
                    b';' | b' ' | b'\t' if self.digits > 0 => ChunkState::SizeExtension,
                    b'\r' if self.digits > 0 => ChunkState::SizeLf,
                    b'\n' if self.digits > 0 => self.after_size(),
                    _ => return Err(ProtocolError::Chunked),
                },
                ChunkState::SizeExtension => match byte {
                    b'\n' => self.after_size(),
                    _ => ChunkState::SizeExtension,
                },
                ChunkState::SizeLf => match byte {
                    b'\n' => self.after_size(),
                    _ => return Err(ProtocolError::Chunked),
                },
                ChunkState::DataCr => match byte {
                    b'\r' => ChunkState::DataLf,
                    b'\n' => ChunkState::Size,
                    _ => return Err(ProtocolError::Chunked),
                },
                ChunkState::DataLf => match byte {
                    b'\n' => ChunkState::Size,
                    _ => return Err(ProtocolError::Chunked),
                },
                ChunkState::TrailerLineStart => match byte {
                    b'\r' => ChunkState::TrailerEndLf,
                    b'\n' => ChunkState::Done,
                    _ => ChunkState::TrailerLine,
                },
                ChunkState::TrailerLine => match byte {
                    b'\n' => ChunkState::TrailerLineStart,
                    _ => ChunkState::TrailerLine,
                },
                ChunkState::TrailerEndLf => match byte {
                    b'\n' => ChunkState::Done,
                    _ => return Err(ProtocolError::Chunked),
                },
                // Data is consumed in bulk above and Done returns early.
                ChunkState::Data | ChunkState::Done => return Ok((at - 1, true)),
            };
            if self.state == ChunkState::Done {
                return Ok((at, true));
            }
        }
        Ok((at, self.state == ChunkState::Done))
    }

    fn after_size(&mut self) -> ChunkState {
        self.digits = 0;
        if self.size == 0 {
            ChunkState::TrailerLineStart
        } else {
            ChunkState::Data
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn head_with_length_and_keepalive() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        let head = parse_head(raw, false).unwrap().unwrap();
        assert_eq!(head.status, 200);
        assert_eq!(head.head_len, raw.len() - 5);
        assert_eq!(head.framing, Framing::Length(5));
        assert!(head.keep_alive);
        assert_eq!(parse_head(&raw[..10], false).unwrap(), None);
    }

    #[test]
    fn connection_rules() {
        let close = parse_head(
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            false,
        )
        .unwrap()
        .unwrap();
        assert!(!close.keep_alive);
        let http10 = parse_head(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false)
            .unwrap()
            .unwrap();
        assert!(!http10.keep_alive);
        let until_close = parse_head(b"HTTP/1.1 200 OK\r\n\r\n", false)
            .unwrap()
            .unwrap();
        assert_eq!(until_close.framing, Framing::UntilClose);
        assert!(!until_close.keep_alive);
        let no_body = parse_head(
            b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
            false,
        )
        .unwrap()
        .unwrap();
        assert_eq!(no_body.framing, Framing::Empty);
        let head = parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", true)
            .unwrap()
            .unwrap();
        assert_eq!(head.framing, Framing::Empty);
    }

    #[test]
    fn statuses_outside_the_range_and_many_headers() {
        for raw in [
            &b"HTTP/1.1 999 Odd\r\nContent-Length: 0\r\n\r\n"[..],
            b"HTTP/1.1 099 Odd\r\nContent-Length: 0\r\n\r\n",
            b"HTTP/1.1 600 Odd\r\nContent-Length: 0\r\n\r\n",
        ] {
            assert_eq!(parse_head(raw, false), Err(ProtocolError::Status));
        }
        let mut many = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..1000 {
            many.extend_from_slice(format!("X-H{i}: {i}\r\n").as_bytes());
        }
        many.extend_from_slice(b"Content-Length: 2\r\n\r\nok");
        let head = parse_head(&many, false).unwrap().unwrap();
        assert_eq!(head.framing, Framing::Length(2));
        assert_eq!(head.head_len, many.len() - 2);
        let count = with_response(&many, |r, _| r.headers.len()).unwrap();
        assert_eq!(count, Some(1001));
    }

    #[test]
    fn http2_frames_where_a_head_was_expected_are_named() {
        // nginx's first frame on an h2c port: SETTINGS (3 settings), then
        // a WINDOW_UPDATE.
        let mut settings = vec![0, 0, 18, 4, 0, 0, 0, 0, 0];
        settings.extend_from_slice(&[0, 3, 0, 0, 0, 128, 0, 4, 0, 0, 255, 255, 0, 5, 0, 0, 64, 0]);
        settings.extend_from_slice(&[0, 0, 4, 8, 0, 0, 0, 0, 0, 127, 255, 0, 0]);
        assert_eq!(
            parse_head(&settings, false),
            Err(ProtocolError::Http2Frames)
        );
        // A GOAWAY alone too; a frame on a stream is no server's greeting.
        let goaway = [0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
        assert_eq!(parse_head(&goaway, false), Err(ProtocolError::Http2Frames));
        let data = [0, 0, 1, 0, 1, 0, 0, 0, 1, b'x'];
        assert_eq!(parse_head(&data, false), Err(ProtocolError::Head));
    }

    #[test]
    fn bad_heads() {
        assert_eq!(
            parse_head(b"SSH-2.0-OpenSSH\r\n\r\n", false),
            Err(ProtocolError::Head)
        );
        assert_eq!(
            parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", false),
            Err(ProtocolError::ContentLength)
        );
        assert_eq!(
            parse_head(
                b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                false
            ),
            Err(ProtocolError::ContentLength)
        );
    }

    fn decode_in_pieces(encoded: &[u8], cuts: &[usize]) -> Result<(Vec<u8>, usize), ProtocolError> {
        let mut decoder = ChunkedDecoder::default();
        let mut out = Vec::new();
        let mut at = 0;
        let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (encoded.len() + 1)).collect();
        bounds.push(encoded.len());
        bounds.sort_unstable();
        for end in bounds {
            if end < at {
                continue;
            }
            let (used, done) =
                decoder.feed(&encoded[at..end], &mut |d| out.extend_from_slice(d))?;
            at += used;
            if done {
                return Ok((out, at));
            }
        }
        Err(ProtocolError::Truncated)
    }

    #[test]
    fn chunked_with_extensions_and_trailers() {
        let encoded = b"5;name=x\r\nhello\r\n6\r\n world\r\n0\r\nExpires: never\r\n\r\nNEXT";
        let (body, used) = decode_in_pieces(encoded, &[]).unwrap();
        assert_eq!(body, b"hello world");
        assert_eq!(&encoded[used..], b"NEXT");
    }

    #[test]
    fn chunked_after_the_end_consumes_nothing() {
        let mut decoder = ChunkedDecoder::default();
        assert_eq!(decoder.feed(b"0\r\n\r\n", &mut |_| {}), Ok((5, true)));
        assert_eq!(decoder.feed(b"more", &mut |_| {}), Ok((0, true)));
    }

    #[test]
    fn chunked_rejects_garbage() {
        assert!(decode_in_pieces(b"zz\r\n", &[]).is_err());
        assert!(decode_in_pieces(b"5\r\nhelloXX", &[]).is_err());
        assert!(decode_in_pieces(b"\r\n", &[]).is_err());
        assert!(decode_in_pieces(b"ffffffffffffffffff\r\n", &[]).is_err());
    }

    proptest! {
        #[test]
        fn chunked_roundtrip_across_any_split(chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 1..40), 0..8),
                                              cuts in proptest::collection::vec(any::<usize>(), 0..6)) {
            let mut encoded = Vec::new();
            let mut expected = Vec::new();
            for chunk in &chunks {
                encoded.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                encoded.extend_from_slice(chunk);
                encoded.extend_from_slice(b"\r\n");
                expected.extend_from_slice(chunk);
            }
            encoded.extend_from_slice(b"0\r\n\r\n");
            let (body, used) = decode_in_pieces(&encoded, &cuts).unwrap();
            prop_assert_eq!(body, expected);
            prop_assert_eq!(used, encoded.len());
        }

        #[test]
        fn head_parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = parse_head(&bytes, false);
            let mut decoder = ChunkedDecoder::default();
            let _ = decoder.feed(&bytes, &mut |_| {});
        }
    }
}
