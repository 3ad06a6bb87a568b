use super::*;
use crate::frame::read::{read_csv_block, CsvOptions};
use arrow_schema::{DataType, Field, TimeUnit};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

fn file(dir: &tempfile::TempDir, name: &str, text: &[u8]) -> PathBuf {
    let p = dir.path().join(name);
    File::create(&p).unwrap().write_all(text).unwrap();
    p
}

fn schema(cols: &[(&str, DataType)]) -> Arc<Schema> {
    Arc::new(Schema::new(cols.iter().map(|(n, t)| Field::new(*n, t.clone(), true)).collect::<Vec<_>>()))
}

#[test]
fn records_skip_quoted_newlines_and_blank_lines() {
    let mut s = RecordScan::new(b'"');
    let text = b"a,b\r\n\"x\ny\",1\n\n2,3\n";
    assert_eq!(s.scan(text, Some(2)), Some(14));
    assert_eq!((s.records, s.lines), (2, 4));
    let mut all = RecordScan::new(b'"');
    assert_eq!(all.scan(text, None), None);
    assert_eq!((all.records, all.lines), (3, 5));
}

#[test]
fn a_bad_value_names_the_row_and_line_of_the_file_and_the_column_whatever_the_block() {
    let d = tempfile::tempdir().unwrap();
    // A quoted newline in row 2 makes rows and lines differ; the bad value is row 5, line 8 (a blank line before it).
    let text = b"id,note,x\n1,a,1\n2,\"two\nlines\",2\n3,c,3\n\n4,d,4\n5,e,oops\n6,f,6\n";
    let p = file(&d, "bad.csv", text);
    let s = schema(&[("id", DataType::Int64), ("note", DataType::Utf8), ("x", DataType::Int64)]);
    let opts = CsvOptions::default();
    let cut = text.windows(2).position(|w| w == b"\n4").unwrap() as u64 + 1;
    for (start, end) in [(0, None), (cut, None)] {
        let m = read_csv_block(&p, start, end, false, &s, &opts).unwrap_err().to_string();
        assert!(m.contains("bad.csv: row 5 (line 8), column \"x\": \"oops\" is not a valid int64"), "block at {start}: {m}");
    }
    // Without a header, the rows are the lines that hold values.
    let headless = file(&d, "headless.csv", b"1,a,1\n2,b,zz\n");
    let m = read_csv_block(&headless, 0, None, false, &s, &CsvOptions { header: false, ..Default::default() }).unwrap_err().to_string();
    assert!(m.contains("row 2 (line 2), column \"x\""), "{m}");
}

#[test]
fn timestamps_field_counts_and_bad_utf8_are_told_by_row_too() {
    let d = tempfile::tempdir().unwrap();
    let opts = CsvOptions::default();
    let ts = schema(&[("id", DataType::Int64), ("at", DataType::Timestamp(TimeUnit::Millisecond, None))]);
    let p = file(&d, "ts.csv", b"id,at\n1,2024-01-02T03:04:05\n2,noon\n");
    let m = read_csv_block(&p, 0, None, false, &ts, &opts).unwrap_err().to_string();
    assert!(m.contains("row 2 (line 3), column \"at\": not a valid timestamp[ms]"), "{m}");
    let two = schema(&[("id", DataType::Int64), ("v", DataType::Utf8)]);
    let p = file(&d, "fields.csv", b"id,v\n1,a\n2,b,c\n");
    let m = read_csv_block(&p, 0, None, false, &two, &opts).unwrap_err().to_string();
    assert!(m.contains("row 2 (line 3) has ") && m.contains("fields where the header has 2"), "{m}");
    let p = file(&d, "latin.csv", b"id,v\n1,a\n2,caf\xe9\n");
    let m = read_csv_block(&p, 0, None, false, &two, &opts).unwrap_err().to_string();
    assert!(m.contains("row 2 (line 3), column \"v\": bytes that are not valid UTF-8; if the file is Latin-1"), "{m}");
}
