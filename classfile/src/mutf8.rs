//! Java "modified UTF-8" (JVMS 4.4.7): NUL is `C0 80` and supplementary characters are surrogate
//! pairs of 3-byte sequences. Names are almost always ASCII, so the fast path is a plain UTF-8 check.

/// Decodes modified UTF-8; invalid or unpaired sequences become U+FFFD (names are only used for
/// policy matching and reports, the class bytes themselves are copied, never re-encoded).
pub(crate) fn decode(bytes: &[u8]) -> String {
    if bytes.iter().all(|&b| b != 0 && b < 0x80) {
        // ASCII: identical in both encodings.
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let mut units: Vec<u16> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b0 = bytes[i] as u32;
        let continuation = |k: usize| {
            bytes
                .get(i + k)
                .map(|&b| b as u32)
                .filter(|b| b & 0xC0 == 0x80)
        };
        if b0 < 0x80 {
            units.push(b0 as u16);
            i += 1;
        } else if b0 & 0xE0 == 0xC0 {
            match continuation(1) {
                Some(b1) => {
                    units.push((((b0 & 0x1F) << 6) | (b1 & 0x3F)) as u16);
                    i += 2;
                }
                None => {
                    units.push(0xFFFD);
                    i += 1;
                }
            }
        } else if b0 & 0xF0 == 0xE0 {
            match (continuation(1), continuation(2)) {
                (Some(b1), Some(b2)) => {
                    units.push((((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F)) as u16);
                    i += 3;
                }
                _ => {
                    units.push(0xFFFD);
                    i += 1;
                }
            }
        } else {
            units.push(0xFFFD);
            i += 1;
        }
    }
    String::from_utf16_lossy(&units)
}

/// Encodes a Rust string as modified UTF-8.
pub(crate) fn encode(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for unit in text.encode_utf16() {
        let u = unit as u32;
        if u != 0 && u < 0x80 {
            out.push(u as u8);
        } else if u < 0x800 {
            out.push((0xC0 | (u >> 6)) as u8);
            out.push((0x80 | (u & 0x3F)) as u8);
        } else {
            out.push((0xE0 | (u >> 12)) as u8);
            out.push((0x80 | ((u >> 6) & 0x3F)) as u8);
            out.push((0x80 | (u & 0x3F)) as u8);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_nul_bmp_and_supplementary() {
        for s in [
            "plain",
            "nul\0in",
            "é and ü",
            "€uro",
            "emoji 😀 here",
            "$nativeacct$",
        ] {
            assert_eq!(decode(&encode(s)), s);
        }
        assert_eq!(encode("\0"), vec![0xC0, 0x80]);
        assert_eq!(encode("😀").len(), 6);
    }

    #[test]
    fn garbage_decodes_without_panicking() {
        assert_eq!(decode(&[0xFF, b'a']), "\u{FFFD}a");
        assert_eq!(decode(&[0xE2, 0x82]), "\u{FFFD}\u{FFFD}");
    }
}
