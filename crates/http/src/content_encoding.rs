//! Response bodies sent with a `Content-Encoding` (gzip, deflate, br):
//! decoded for checks and extraction only, so received bytes stay the bytes
//! on the wire. Decoding is bounded: a small compressed body that inflates
//! without end fails instead of filling memory.

use std::io::Read;

/// Largest decoded body kept for checks and extraction.
pub const MAX_DECODED: u64 = 64 * 1024 * 1024;

/// Decodes `body` into `out` when `headers` name a content coding;
/// `Ok(false)` (and `out` untouched) when there is none. The error says
/// why the body could not be read.
pub fn decode(
    headers: &[(&str, &str)],
    body: &[u8],
    out: &mut Vec<u8>,
) -> Result<bool, &'static str> {
    let Some((_, codings)) = headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-encoding"))
    else {
        return Ok(false);
    };
    let mut applied = false;
    let mut input = Vec::new();
    // Codings are listed in the order they were applied: undo the last first.
    for coding in codings.rsplit(',').map(str::trim) {
        if coding.is_empty() || coding.eq_ignore_ascii_case("identity") {
            continue;
        }
        if applied {
            std::mem::swap(&mut input, out);
        }
        let source: &[u8] = if applied { &input } else { body };
        out.clear();
        decode_one(coding, source, out)?;
        applied = true;
    }
    Ok(applied)
}

fn decode_one(coding: &str, source: &[u8], out: &mut Vec<u8>) -> Result<(), &'static str> {
    let read = |reader: &mut dyn Read, out: &mut Vec<u8>, fail: &'static str| {
        let mut limited = reader.take(MAX_DECODED + 1);
        limited.read_to_end(out).map_err(|_| fail)?;
        if out.len() as u64 > MAX_DECODED {
            return Err("decoded body larger than 64 MiB");
        }
        Ok(())
    };
    if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
        read(
            &mut flate2::read::MultiGzDecoder::new(source),
            out,
            "gzip body could not be decoded",
        )
    } else if coding.eq_ignore_ascii_case("deflate") {
        // "deflate" is zlib-wrapped by the standard; some servers send it raw.
        let zlib = read(
            &mut flate2::read::ZlibDecoder::new(source),
            out,
            "deflate body could not be decoded",
        );
        if zlib.is_err() {
            out.clear();
            return read(
                &mut flate2::read::DeflateDecoder::new(source),
                out,
                "deflate body could not be decoded",
            );
        }
        zlib
    } else if coding.eq_ignore_ascii_case("br") {
        read(
            &mut brotli_decompressor::Decompressor::new(source, 4096),
            out,
            "br body could not be decoded",
        )
    } else {
        Err("unknown Content-Encoding (headroom decodes gzip, deflate and br)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn decodes_each_coding_and_their_combination() {
        let text = b"You are logged in as Ann".repeat(10);
        let mut out = Vec::new();
        assert_eq!(decode(&[], &text, &mut out), Ok(false));
        assert!(decode(&[("Content-Encoding", "gzip")], &gzip(&text), &mut out).unwrap());
        assert_eq!(out, text);
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        zlib.write_all(&text).unwrap();
        assert!(decode(
            &[("content-encoding", "deflate")],
            &zlib.finish().unwrap(),
            &mut out
        )
        .unwrap());
        assert_eq!(out, text);
        let mut raw = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        raw.write_all(&text).unwrap();
        assert!(decode(
            &[("Content-Encoding", "deflate")],
            &raw.finish().unwrap(),
            &mut out
        )
        .unwrap());
        assert_eq!(out, text);
        // gzip applied twice: "gzip, gzip".
        assert!(decode(
            &[("Content-Encoding", "gzip, gzip")],
            &gzip(&gzip(&text)),
            &mut out
        )
        .unwrap());
        assert_eq!(out, text);
        assert!(!decode(&[("Content-Encoding", "identity")], &text, &mut out).unwrap());
    }

    #[test]
    fn brotli_from_a_fixed_stream() {
        // "hello hello hello\n" compressed by `brotli -c`.
        let compressed = [
            0x8f, 0x08, 0x80, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x20, 0x68, 0x65, 0x6c, 0x6c, 0x6f,
            0x20, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x0a, 0x03,
        ];
        let mut out = Vec::new();
        assert!(decode(&[("Content-Encoding", "br")], &compressed, &mut out).unwrap());
        assert_eq!(out, b"hello hello hello\n");
    }

    #[test]
    fn garbage_and_bombs_fail_with_a_reason() {
        let mut out = Vec::new();
        assert_eq!(
            decode(
                &[("Content-Encoding", "gzip")],
                b"not gzip at all",
                &mut out
            ),
            Err("gzip body could not be decoded")
        );
        assert!(decode(&[("Content-Encoding", "zstd")], b"x", &mut out)
            .unwrap_err()
            .contains("unknown"));
        let bomb = gzip(&vec![0u8; (MAX_DECODED + 10) as usize]);
        assert!(bomb.len() < 1_000_000);
        assert_eq!(
            decode(&[("Content-Encoding", "gzip")], &bomb, &mut out),
            Err("decoded body larger than 64 MiB")
        );
    }
}
