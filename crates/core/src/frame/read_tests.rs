use super::*;
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use std::io::Write;

fn file(dir: &tempfile::TempDir, name: &str, text: &[u8]) -> PathBuf {
    let p = dir.path().join(name);
    File::create(&p).unwrap().write_all(text).unwrap();
    p
}

fn rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(|b| b.num_rows()).sum()
}

#[test]
fn infers_types_unified_across_files_with_bom_crlf_quotes_and_nulls() {
    let d = tempfile::tempdir().unwrap();
    let a = file(&d, "a.csv", b"\xEF\xBB\xBFk,v,w\r\n\"x, y\",1,\r\nb,2,\r\n");
    let b = file(&d, "b.csv", b"k,v,w\nc,2.5,NA\n");
    let opts = CsvOptions { null_values: vec!["".into(), "NA".into()], ..Default::default() };
    let s = infer_csv_schema(&[a.clone(), b], &opts, 1 << 20).unwrap();
    let types: Vec<_> = s.fields().iter().map(|f| (f.name().as_str(), f.data_type().clone())).collect();
    assert_eq!(types, vec![("k", DataType::Utf8), ("v", DataType::Float64), ("w", DataType::Utf8)]);
    let out = read_csv_block(&a, 0, None, false, &s, &opts).unwrap();
    assert_eq!(out[0].column(0).as_string::<i32>().value(0), "x, y");
    assert_eq!(out[0].column(1).as_primitive::<Float64Type>().values().to_vec(), vec![1.0, 2.0]);
    assert_eq!(out[0].column(2).null_count(), 2);
}

#[test]
fn only_empty_files_are_an_error_naming_the_empty_file() {
    let d = tempfile::tempdir().unwrap();
    let empty = file(&d, "empty.csv", b"");
    let e = infer_csv_schema(&[empty.clone()], &CsvOptions::default(), 1 << 20).unwrap_err();
    assert_eq!(e.code(), "ERR_SPILLWAY_READ");
    let m = e.to_string();
    assert!(m.contains(&empty.display().to_string()) && m.contains("the file is empty") && m.contains("schema"), "{m}");
    let also = file(&d, "also.csv", b"\xEF\xBB\xBF");
    let m = infer_csv_schema(&[empty.clone(), also], &CsvOptions::default(), 1 << 20).unwrap_err().to_string();
    assert!(m.contains("empty.csv") && m.contains("1 other(s)") && m.contains("all empty"), "{m}");
    // An empty file beside one with columns reads as no rows, as before.
    let full = file(&d, "full.csv", b"k,v\n1,2\n");
    assert_eq!(infer_csv_schema(&[empty, full], &CsvOptions::default(), 1 << 20).unwrap().fields().len(), 2);
}

#[test]
fn numbers_with_leading_zeros_stay_text_as_duckdb_keeps_them() {
    let d = tempfile::tempdir().unwrap();
    let a = file(&d, "zips.csv", b"zip,n,x,f,neg\n01234,0,0.5,1.5,-1\n98765,10,00.5,2,-007\n");
    let s = infer_csv_schema(&[a.clone()], &CsvOptions::default(), 1 << 20).unwrap();
    let types: Vec<_> = s.fields().iter().map(|f| (f.name().as_str(), f.data_type().clone())).collect();
    assert_eq!(types, vec![("zip", DataType::Utf8), ("n", DataType::Int64), ("x", DataType::Utf8), ("f", DataType::Float64), ("neg", DataType::Utf8)]);
    let out = read_csv_block(&a, 0, None, false, &s, &CsvOptions::default()).unwrap();
    assert_eq!(out[0].column(0).as_string::<i32>().value(0), "01234");
    assert_eq!(out[0].column(4).as_string::<i32>().value(1), "-007");
}

#[test]
fn files_with_other_columns_are_an_error_naming_both() {
    let d = tempfile::tempdir().unwrap();
    let a = file(&d, "a.csv", b"k,v\n1,2\n");
    let b = file(&d, "b.csv", b"k,u\n1,2\n");
    let e = infer_csv_schema(&[a, b], &CsvOptions::default(), 1 << 20).unwrap_err();
    assert_eq!(e.code(), "ERR_SPILLWAY_READ");
    let m = e.to_string();
    assert!(m.contains("b.csv") && m.contains("[k, u]") && m.contains("a.csv") && m.contains("[k, v]"), "{m}");
}

#[test]
fn blocks_own_the_lines_that_begin_in_them_whatever_the_cut() {
    let d = tempfile::tempdir().unwrap();
    let mut text = b"id,name\n".to_vec();
    for i in 0..500 {
        text.extend_from_slice(format!("{i},n{}\r\n", i * 7).as_bytes());
    }
    let p = file(&d, "big.csv", &text);
    let opts = CsvOptions::default();
    let s = infer_csv_schema(&[p.clone()], &opts, 256).unwrap();
    assert_eq!(s.field(0).data_type(), &DataType::Int64);
    for block in [1u64, 7, 13, 100, 4096, 1 << 20] {
        let mut ids = Vec::new();
        let mut start = 0;
        while start < text.len() as u64 {
            let end = (start + block).min(text.len() as u64);
            for b in read_csv_block(&p, start, Some(end), false, &s, &opts).unwrap() {
                ids.extend(b.column(0).as_primitive::<Int64Type>().values().iter().copied());
            }
            start = end;
        }
        assert_eq!(ids, (0..500).collect::<Vec<i64>>(), "block size {block}");
    }
    assert_eq!(rows(&read_csv_block(&p, 3, Some(5), false, &s, &opts).unwrap()), 0);
}

#[test]
fn a_value_that_does_not_fit_names_file_and_column() {
    let d = tempfile::tempdir().unwrap();
    let p = file(&d, "bad.csv", b"id,x\n1,2\n2,oops\n");
    let s = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true), Field::new("x", DataType::Int64, true)]));
    let e = read_csv_block(&p, 0, None, false, &s, &CsvOptions::default()).unwrap_err();
    assert_eq!(e.code(), "ERR_SPILLWAY_READ");
    let m = e.to_string();
    assert!(m.contains("bad.csv") && m.contains("\"x\"") && m.contains("oops"), "{m}");
}

#[test]
fn options_are_checked() {
    let bad = CsvOptions { delimiter: ";;".into(), ..Default::default() };
    let e = infer_csv_schema(&[PathBuf::from("/nonexistent")], &bad, 10).unwrap_err();
    assert_eq!(e.code(), "ERR_SPILLWAY_INVALID_ARGUMENT");
}

#[test]
fn compressed_files_are_read_whole_a_piece_at_a_time_with_their_header_once() {
    use crate::codec::stream::{encode_stream, StreamFormat};
    let d = tempfile::tempdir().unwrap();
    // More than one piece of content: the header is read once, every row after it.
    let n = 1_000_000u64;
    let text: String = std::iter::once("\u{feff}k,v\n".to_string()).chain((0..n).map(|i| format!("k{},{i}\n", i % 7))).collect();
    assert!(text.len() > super::super::read_compressed::PIECE);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(text.as_bytes()).unwrap();
    let files = [
        file(&d, "t.csv.gz", &gz.finish().unwrap()),
        file(&d, "t.csv.zst", &encode_stream(StreamFormat::Zstd, text.as_bytes(), None).unwrap()),
        file(&d, "t.csv.lz4", &encode_stream(StreamFormat::Lz4, text.as_bytes(), None).unwrap()),
    ];
    for p in &files {
        let s = infer_csv_schema(std::slice::from_ref(p), &CsvOptions::default(), 1 << 16).unwrap();
        assert_eq!(s.field(0).name(), "k", "{p:?}: the BOM is dropped");
        assert_eq!(s.field(1).data_type(), &DataType::Int64);
        // The block's end is ignored: a compressed file is one partition.
        let out = read_csv_block(p, 0, Some(10), false, &s, &CsvOptions::default()).unwrap();
        assert_eq!(rows(&out) as u64, n, "{p:?}");
        let sum: i64 = out.iter().map(|b| b.column(1).as_primitive::<Int64Type>().values().iter().sum::<i64>()).sum();
        assert_eq!(sum as u64, n * (n - 1) / 2);
    }
    let bad = file(&d, "bad.csv.zst", b"not zstd");
    let e = read_csv_block(&bad, 0, None, false, &Arc::new(Schema::new(vec![Field::new("k", DataType::Utf8, true)])), &CsvOptions::default()).unwrap_err();
    assert_eq!(e.code(), "ERR_SPILLWAY_READ");
    assert!(e.to_string().contains("bad.csv.zst: not valid zstd"), "{e}");
}

#[test]
fn latin1_reads_exactly_across_block_boundaries_and_compressed() {
    let d = tempfile::tempdir().unwrap();
    // é is 0xE9 in Latin-1: one byte in the file, two in the batches.
    let text: Vec<u8> = [&b"id,name\n"[..], &(0..200).flat_map(|i| format!("{i},caf").into_bytes().into_iter().chain([0xE9, b'\n'])).collect::<Vec<u8>>()].concat();
    let p = file(&d, "l.csv", &text);
    let opts = CsvOptions { encoding: Encoding::Latin1, ..Default::default() };
    let s = infer_csv_schema(&[p.clone()], &opts, 1 << 20).unwrap();
    let mut names = Vec::new();
    // Blocks cut mid-line, one of them between 'f' and its 0xE9.
    let cut = text.iter().position(|&b| b == 0xE9).unwrap() as u64 + 100;
    for (start, end) in [(0, Some(cut)), (cut, Some(cut + 301)), (cut + 301, None)] {
        for b in read_csv_block(&p, start, end, false, &s, &opts).unwrap() {
            names.extend(b.column(1).as_string::<i32>().iter().map(|v| v.unwrap().to_string()));
        }
    }
    assert_eq!(names.len(), 200);
    assert!(names.iter().all(|n| n == "caf\u{e9}"), "{names:?}");
    let gz = d.path().join("l.csv.gz");
    let mut w = flate2::write::GzEncoder::new(File::create(&gz).unwrap(), flate2::Compression::fast());
    w.write_all(&text).unwrap();
    w.finish().unwrap();
    assert_eq!(rows(&read_csv_block(&gz, 0, None, false, &s, &opts).unwrap()), 200);
    // Without the option, the sample's first 0xE9 is an error naming its line and column.
    let e = infer_csv_schema(&[p], &CsvOptions::default(), 1 << 20).unwrap_err().to_string();
    assert!(e.contains("line 2, column 2 \"name\"") && e.contains("encoding: 'latin1'"), "{e}");
}
