use super::*;
use crate::frame::read::{infer_csv_schema, read_csv_block};
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use std::io::Write;
use std::path::PathBuf;

fn file(dir: &tempfile::TempDir, name: &str, text: &[u8]) -> PathBuf {
    let p = dir.path().join(name);
    File::create(&p).unwrap().write_all(text).unwrap();
    p
}

fn ends(text: &[u8]) -> Vec<u64> {
    let mut out = Vec::new();
    Cutter::new(b'"', b',').scan(text, |at| {
        out.push(at);
        true
    });
    out
}

#[test]
fn records_end_at_newlines_outside_quotes_by_csv_cores_rules() {
    // A quote inside an unquoted field is text; "" inside a quoted one is a quote; CRLF inside quotes is data.
    assert_eq!(ends(b"a,5'10\",x\nb\n"), vec![10, 12]);
    assert_eq!(ends(b"\"x\r\ny\",1\r\n2,3\n"), vec![10, 14]);
    assert_eq!(ends(b"\"a\"\"b\nc\",1\n\"\",2\n"), vec![11, 16]);
    // Text after a closing quote is plain again: the newline ends the record.
    assert_eq!(ends(b"\"a\"b\nc\n"), vec![5, 7]);
    let mut c = Cutter::new(b'"', b',');
    c.scan(b"1,\"open\nstill", |_| true);
    assert!(c.in_quote() && c.quoted_newline);
}

/// id,text,v rows whose text spans 0..3 lines (CRLF in some), an empty quoted value, a quoted header, a BOM, no final newline.
fn quoted_csv(n: i64) -> (Vec<u8>, Vec<String>) {
    let mut text = b"\xEF\xBB\xBF\"id\",\"te,xt\",v\r\n".to_vec();
    let mut values = Vec::new();
    for i in 0..n {
        let mut v = String::new();
        for k in 0..i % 4 {
            v.push_str(if k % 2 == 0 { "line one\n" } else { "say \"hi\",\r\n" });
        }
        v.push_str(&format!("row{i}"));
        if i % 7 == 3 {
            v.clear();
        }
        text.extend_from_slice(format!("{i},\"{}\",{}", v.replace('"', "\"\""), i * 2).as_bytes());
        if i + 1 < n {
            text.extend_from_slice(b"\n");
        }
        values.push(v);
    }
    (text, values)
}

fn ids_and_texts(batches: &[RecordBatch]) -> Vec<(i64, String)> {
    let mut out = Vec::new();
    for b in batches {
        let ids = b.column(0).as_primitive::<Int64Type>();
        let texts = b.column(1).as_string::<i32>();
        for r in 0..b.num_rows() {
            out.push((ids.value(r), if texts.is_null(r) { String::new() } else { texts.value(r).to_string() }));
        }
    }
    out
}

#[test]
fn the_schema_sample_is_cut_at_a_record_end_not_inside_a_quoted_value() {
    let d = tempfile::tempdir().unwrap();
    let (text, _) = quoted_csv(40);
    let p = file(&d, "q.csv", &text);
    let opts = CsvOptions::default();
    for bytes in 30..text.len() {
        let s = infer_csv_schema(&[p.clone()], &opts, bytes).unwrap_or_else(|e| panic!("sample of {bytes}: {e}"));
        assert_eq!(s.field(0).name(), "id");
        assert_eq!(s.field(1).name(), "te,xt");
        assert_eq!(s.field(0).data_type(), &DataType::Int64, "sample of {bytes}");
    }
}

/// 30 quoted rows in a file, its options, inferred schema and the (id, text) each row must read as.
fn quoted_fixture() -> (tempfile::TempDir, Vec<u8>, PathBuf, CsvOptions, arrow_schema::SchemaRef, Vec<(i64, String)>) {
    let d = tempfile::tempdir().unwrap();
    let (text, values) = quoted_csv(30);
    let p = file(&d, "q.csv", &text);
    let opts = CsvOptions::default();
    let s = infer_csv_schema(&[p.clone()], &opts, 1 << 20).unwrap();
    let want = values.into_iter().enumerate().map(|(i, v)| (i as i64, v)).collect();
    (d, text, p, opts, s, want)
}

#[test]
fn quote_aware_blocks_hold_every_record_once_at_every_blocksize() {
    let (_d, text, p, opts, s, want) = quoted_fixture();
    assert_eq!(ids_and_texts(&read_csv_block(&p, 0, None, false, &s, &opts).unwrap()), want);
    // The sample shows a value spanning lines, so the planner scans: no force needed.
    assert!(csv_block_starts(&p, &opts, 16, 1 << 20, false).unwrap().is_some());
    for blocksize in 1..=text.len() as u64 {
        let starts = csv_block_starts(&p, &opts, blocksize, 1 << 20, false).unwrap().unwrap_or_else(|| vec![0]);
        let mut got = Vec::new();
        for (k, &start) in starts.iter().enumerate() {
            let end = starts.get(k + 1).copied();
            got.extend(ids_and_texts(&read_csv_block(&p, start, end, true, &s, &opts).unwrap()));
        }
        assert_eq!(got, want, "blocksize {blocksize}, starts {starts:?}");
    }
}

#[test]
fn a_file_planned_at_line_ends_never_reads_wrong_rows_it_fails_naming_the_line() {
    let (_d, text, p, opts, s, want) = quoted_fixture();
    let mut failed = 0;
    for blocksize in 1..=text.len() as u64 {
        let mut got = Vec::new();
        let mut err = None;
        for start in (0..text.len() as u64).step_by(blocksize as usize) {
            match read_csv_block(&p, start, Some((start + blocksize).min(text.len() as u64)), false, &s, &opts) {
                Ok(b) => got.extend(ids_and_texts(&b)),
                Err(e) => {
                    err = Some(e);
                    break;
                }
            }
        }
        match err {
            None => assert_eq!(got, want, "blocksize {blocksize}"),
            Some(e) => {
                failed += 1;
                assert_eq!(e.code(), "ERR_SPILLWAY_READ");
                let m = e.to_string();
                assert!(m.contains("q.csv") && m.contains("quotedNewlines: true"), "blocksize {blocksize}: {m}");
            }
        }
    }
    assert!(failed > 0);
    // The line named is the one where the cut record starts.
    let cut = text.windows(9).position(|w| w == b"line one\n").unwrap() as u64 + 3;
    let m = read_csv_block(&p, 0, Some(cut), false, &s, &opts).unwrap_err().to_string();
    let line = 1 + text[..cut as usize].iter().filter(|&&b| b == b'\n').count();
    assert!(m.contains(&format!("line {line} opens a quoted value")), "{m}");
}

#[test]
fn a_compressed_file_joins_a_record_that_runs_past_a_piece() {
    let d = tempfile::tempdir().unwrap();
    let mut text = b"id,note\n".to_vec();
    let mut n = 0i64;
    // Past one piece (8 MiB), a value with a line break in every record.
    while text.len() < (9 << 20) {
        text.extend_from_slice(format!("{n},\"a\nb{n}\"\n").as_bytes());
        n += 1;
    }
    let p = d.path().join("q.csv.gz");
    let mut gz = flate2::write::GzEncoder::new(File::create(&p).unwrap(), flate2::Compression::fast());
    gz.write_all(&text).unwrap();
    gz.finish().unwrap();
    let opts = CsvOptions::default();
    let s = infer_csv_schema(&[p.clone()], &opts, 1000).unwrap();
    let out = read_csv_block(&p, 0, None, false, &s, &opts).unwrap();
    let got = ids_and_texts(&out);
    assert_eq!(got.len() as i64, n);
    assert!(got.iter().enumerate().all(|(i, (id, t))| *id == i as i64 && *t == format!("a\nb{i}")));
}
