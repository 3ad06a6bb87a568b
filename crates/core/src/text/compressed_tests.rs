use super::*;
use crate::codec::stream::{encode_stream, StreamFormat};
use std::io::{Cursor, Write};

fn packed(format: FileFormat, text: &[u8]) -> Vec<u8> {
    match format {
        FileFormat::Gzip => {
            let mut w = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            w.write_all(text).unwrap();
            w.finish().unwrap()
        }
        FileFormat::Zstd => encode_stream(StreamFormat::Zstd, text, None).unwrap(),
        FileFormat::Lz4 => encode_stream(StreamFormat::Lz4, text, None).unwrap(),
    }
}

const FORMATS: [FileFormat; 3] = [FileFormat::Gzip, FileFormat::Zstd, FileFormat::Lz4];

fn blocks_of(format: FileFormat, file: Vec<u8>, delim: &[u8], unit: usize, target: usize) -> Result<Vec<LineBlock>> {
    let mut lines = CompressedLines::new(Path::new("/data/t.txt.x"), format, Cursor::new(file), delim, unit).unwrap();
    let mut out = Vec::new();
    while let Some(b) = lines.next_block(target)? {
        out.push(b);
    }
    Ok(out)
}

/// Blocks join back into the content, each starts where the last ended, and each but the last ends on a delimiter.
fn check(format: FileFormat, text: &[u8], delim: &[u8], target: usize) -> Vec<LineBlock> {
    let blocks = blocks_of(format, packed(format, text), delim, 1, target).unwrap();
    let mut at = 0;
    for (i, b) in blocks.iter().enumerate() {
        assert_eq!(b.offset, at as u64, "{format:?} block {i} offset");
        assert!(!b.bytes.is_empty(), "{format:?} block {i} is empty");
        if i + 1 < blocks.len() {
            assert!(b.bytes.ends_with(delim), "{format:?} target {target}: block {i} ends inside a line: {:?}", String::from_utf8_lossy(&b.bytes));
        }
        at += b.bytes.len();
    }
    assert_eq!(blocks.iter().flat_map(|b| b.bytes.clone()).collect::<Vec<u8>>(), text, "{format:?} target {target}");
    blocks
}

#[test]
fn lines_stay_whole_across_blocks_whatever_the_target() {
    let text: Vec<u8> = (0..20_000u32).flat_map(|i| format!("line {i} {}\n", "x".repeat((i % 37) as usize)).into_bytes()).collect();
    for f in FORMATS {
        for target in [1, 7, 1000, 100_000, 1 << 20, 1 << 24] {
            let blocks = check(f, &text, b"\n", target);
            if target >= 100_000 && target < text.len() {
                assert!(blocks.len() > 1, "{f:?} streams in several blocks at {target}");
            }
        }
    }
}

#[test]
fn crlf_last_line_without_delimiter_and_long_lines() {
    for f in FORMATS {
        // "\r\n" as the delimiter is never cut between its two bytes; "\n" leaves the "\r" with its line.
        let crlf = b"one\r\ntwo\r\n\r\nthree\r\nlast without";
        for target in 1..crlf.len() + 2 {
            check(f, crlf, b"\r\n", target);
            check(f, crlf, b"\n", target);
        }
        let blocks = check(f, crlf, b"\r\n", 4);
        assert_eq!(blocks.last().unwrap().bytes, b"last without");
        // A line much longer than the target is one block, not cut.
        let long = [vec![b'a'; 300_000], b"\nb\n".to_vec()].concat();
        let blocks = check(f, &long, b"\n", 1000);
        assert!(blocks[0].bytes.len() >= 300_001 && blocks[0].bytes.ends_with(b"\n"), "{f:?}");
    }
}

#[test]
fn empty_content_has_no_blocks() {
    for f in FORMATS {
        assert!(blocks_of(f, packed(f, b""), b"\n", 1, 100).unwrap().is_empty(), "{f:?}");
        assert_eq!(blocks_of(f, packed(f, b"\n"), b"\n", 1, 100).unwrap()[0].bytes, b"\n");
    }
}

#[test]
fn members_and_frames_one_after_another_are_one_file() {
    for f in FORMATS {
        let file = [packed(f, b"a\nb"), packed(f, b""), packed(f, b"\nc\n")].concat();
        let blocks = blocks_of(f, file, b"\n", 1, 1).unwrap();
        let all: Vec<u8> = blocks.iter().flat_map(|b| b.bytes.clone()).collect();
        assert_eq!(all, b"a\nb\nc\n", "{f:?}");
    }
}

#[test]
fn utf16_delimiters_count_only_on_a_code_unit() {
    // U+0A41 then U+0100 hold the bytes 0x0a 0x00 at an odd offset: not a "\n".
    let text: Vec<u8> = format!("x\n{}\nend", "\u{0A41}\u{0100}".repeat(100_000)).encode_utf16().flat_map(u16::to_le_bytes).collect();
    let nl = [0x0a, 0x00];
    for f in FORMATS {
        let blocks = blocks_of(f, packed(f, &text), &nl, 2, 1).unwrap();
        assert_eq!(blocks[0].bytes.len(), 4, "{f:?}: the first block is the one line before the odd 0x0a 0x00s");
        assert!(blocks.iter().all(|b| b.offset % 2 == 0), "{f:?}");
        assert_eq!(blocks.iter().flat_map(|b| b.bytes.clone()).collect::<Vec<u8>>(), text, "{f:?}");
    }
}

#[test]
fn corrupt_input_is_a_coded_error_naming_the_file() {
    for f in FORMATS {
        let e = match CompressedLines::new(Path::new("/data/bad.txt"), f, Cursor::new(b"definitely not compressed at all".to_vec()), b"\n", 1) {
            Ok(mut lines) => lines.next_block(100).unwrap_err(),
            Err(e) => panic!("{f:?} refused at open: {e}"),
        };
        assert_eq!(e.code(), "ERR_SPILLWAY_READ", "{f:?}");
        assert!(e.to_string().starts_with(&format!("reading /data/bad.txt: not valid {} after byte 0", f.name())), "{e}");
        // Cut short: the lines before the cut come out, then the error.
        let text: Vec<u8> = (0..200_000u32).flat_map(|i| format!("{i}\n").into_bytes()).collect();
        let whole = packed(f, &text);
        let cut = whole[..whole.len() * 3 / 4].to_vec();
        let mut lines = CompressedLines::new(Path::new("/data/cut.txt"), f, Cursor::new(cut), b"\n", 1).unwrap();
        let mut got = 0;
        let e = loop {
            match lines.next_block(4096) {
                Ok(Some(b)) => got += b.bytes.len(),
                Ok(None) => panic!("{f:?}: a truncated file read to its end"),
                Err(e) => break e,
            }
        };
        assert_eq!(e.code(), "ERR_SPILLWAY_READ", "{f:?}");
        assert!(e.to_string().contains("/data/cut.txt"), "{e}");
        assert!(got < text.len(), "{f:?}");
    }
}

#[test]
fn a_planned_file_that_changed_is_a_fault() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.txt.zst");
    std::fs::write(&p, packed(FileFormat::Zstd, b"a\nb\n")).unwrap();
    let md = std::fs::metadata(&p).unwrap();
    let st = super::super::files::found(&md);
    let plan = PlannedFile { path: p.clone(), size: st.size, mtime_ms: st.mtime_ms, ctime_ms: None, ino: None };
    let mut lines = CompressedLines::open(&plan, FileFormat::Zstd, b"\n", 1).ok().unwrap();
    assert_eq!(lines.next_block(1 << 20).unwrap().unwrap().bytes, b"a\nb\n");
    let moved = PlannedFile { size: st.size + 1, ..plan };
    assert!(matches!(CompressedLines::open(&moved, FileFormat::Zstd, b"\n", 1), Err(FileFault::Changed(_))));
    assert_eq!(FileFormat::of_path(Path::new("/x/A.TXT.ZST")), Some(FileFormat::Zstd));
    assert_eq!(FileFormat::of_path(Path::new("/x/a.txt")), None);
    assert_eq!(FileFormat::parse("brotli").unwrap_err().code(), "ERR_SPILLWAY_INVALID_ARGUMENT");
}
