//! A CSV file's bytes as the UTF-8 arrow-csv parses: Latin-1 recoded byte by
//! byte as the blocks (or a compressed file's pieces) come in, UTF-8 checked,
//! an invalid byte an error naming the line and column, never replaced.

use std::borrow::Cow;
use std::path::Path;

use super::read::read_err;
use super::read_text::{latin1_to_utf8, Encoding};
use crate::Result;

/// `bytes` (whole lines) as UTF-8, recoded from `encoding`.
pub(crate) fn as_utf8(bytes: &[u8], encoding: Encoding) -> Cow<'_, [u8]> {
    match encoding {
        Encoding::Utf8 => Cow::Borrowed(bytes),
        Encoding::Latin1 => Cow::Owned(latin1_to_utf8(bytes)),
    }
}

/// The sample a schema is inferred from, as UTF-8; with `utf8`, its first
/// invalid byte is an error naming line, column and byte, where inference
/// would have said only that a field is not UTF-8.
pub(crate) fn sample_as_utf8(path: &Path, bytes: Vec<u8>, encoding: Encoding, delimiter: u8, header: bool) -> Result<Vec<u8>> {
    if encoding == Encoding::Latin1 {
        return Ok(latin1_to_utf8(&bytes));
    }
    let Err(e) = std::str::from_utf8(&bytes) else { return Ok(bytes) };
    let bad = e.valid_up_to();
    let line_start = bytes[..bad].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let line = bytes[..bad].iter().filter(|&&b| b == b'\n').count() + 1;
    // Delimiters before the byte give its field (quoted delimiters aside: a hint, not a parse).
    let field = bytes[line_start..bad].iter().filter(|&&b| b == delimiter).count();
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    let name = header.then(|| String::from_utf8_lossy(first).trim_end_matches('\r').split(char::from(delimiter)).nth(field).map(|n| format!(" {:?}", n.trim_matches('"')))).flatten();
    Err(read_err(path, format!("line {line}, column {}{}: byte {bad} (0x{:02X}) is not valid UTF-8; if the file is Latin-1 (ISO-8859-1), read it with {{ encoding: 'latin1' }}, else re-encode it as UTF-8", field + 1, name.unwrap_or_default(), bytes[bad])))
}

/// The message for arrow-csv's "invalid UTF-8" error, at `place` (row, line and column).
pub(crate) fn invalid_utf8(place: &str) -> String {
    format!("{place}: bytes that are not valid UTF-8; if the file is Latin-1 (ISO-8859-1), read it with {{ encoding: 'latin1' }}, else re-encode it as UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_recodes_every_byte_and_utf8_errors_name_line_and_column() {
        assert_eq!(as_utf8(b"a,caf\xE9\n\xFF\n", Encoding::Latin1).as_ref(), "a,caf\u{e9}\n\u{ff}\n".as_bytes());
        let e = sample_as_utf8(Path::new("f.csv"), b"id,name\n1,ok\n2,caf\xE9\n".to_vec(), Encoding::Utf8, b',', true).unwrap_err();
        assert_eq!(e.code(), "ERR_SPILLWAY_READ");
        assert!(e.to_string().contains("reading f.csv: line 3, column 2 \"name\": byte 18 (0xE9) is not valid UTF-8; if the file is Latin-1 (ISO-8859-1), read it with { encoding: 'latin1' }"), "{e}");
        assert_eq!(sample_as_utf8(Path::new("f.csv"), b"a\n\xE9\n".to_vec(), Encoding::Latin1, b',', true).unwrap(), "a\n\u{e9}\n".as_bytes());
    }
}
